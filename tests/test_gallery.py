"""The gallery scripts in docs/gallery run, save their figures and show what they claim.

Oracles: closed forms and theorems stated in each script's docstring (THEORY
§§3–10): coincidence of the nonholonomic and vakonomic motions for consistent
systems (σ = −p) and their separation otherwise, conservation of energy and of
the Casimir |Π|², the conserved E − ẋ²/4 of the Chetaev counterexample, the
O(t³) coefficient of seed 003, and the turning rate μ = k²Ω/(a²+k²) of the
sphere on a turntable.  The Sphinx build (docs/_ext/gallery.py) runs the same
scripts for the HTML pages; here each one is run as ``python SCRIPT OUTDIR``.
"""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

GALLERY = Path(__file__).resolve().parent.parent / "docs" / "gallery"
SCRIPTS = sorted(p.stem for p in GALLERY.glob("*.py"))


def run(name, tmp_path, capsys):
    argv = sys.argv
    sys.argv = [str(GALLERY / f"{name}.py"), str(tmp_path)]
    try:
        ns = runpy.run_path(str(GALLERY / f"{name}.py"), run_name="__main__")
    finally:
        sys.argv = argv
    capsys.readouterr()
    figures = sorted(p.name for p in tmp_path.glob("*.png"))
    assert figures, f"{name} saved no figure"
    return ns


def test_every_script_has_a_page_and_a_docstring():
    pages = (GALLERY / "index.rst").read_text()
    for name in SCRIPTS:
        assert name in pages, f"docs/gallery/index.rst does not list {name}"
        page = (GALLERY / f"{name}.rst").read_text()
        assert f".. gallery-script:: {name}.py" in page
        assert (GALLERY / f"{name}.py").read_text().lstrip().startswith(('"""', 'r"""'))


def test_particle_motions_separate(tmp_path, capsys):
    ns = run("particle", tmp_path, capsys)
    assert ns["nh"].curvature() == {(2, 0, 1): -1}
    assert [v.holds for v in ns["verdicts"]] == [True, False, False]    # weak with 0; strong with neither 0 nor -p
    assert ns["separation"][-1] > 1.0          # apart by more than 1 at t = 10
    assert ns["residual"] < 1e-12              # both motions keep z_dot = y x_dot
    assert ns["vakonomic"].energy_drift().max() < 1e-8


def test_seed004_class_disk_consistent_knife_edge_not(tmp_path, capsys):
    ns = run("seed004_class", tmp_path, capsys)
    verdicts = ns["verdicts"]
    assert verdicts["vertical disk"].holds is True
    assert verdicts["knife edge"].holds is False and verdicts["nonholonomic particle"].holds is False
    assert ns["disk_gap"].max() < 1e-7
    assert ns["knife_gap"][-1] > 0.5


def test_carriage_a_zero_consistent_a_nonzero_not_special_a_with_minus_p_plus_c(tmp_path, capsys):
    ns = run("carriage", tmp_path, capsys)
    runs, a_star = ns["runs"], ns["a_star"]
    assert runs[(0.0, "sigma = -p")][2].max() < 1e-7
    assert np.ptp(runs[(0.0, "sigma = -p")][0].qdot[3:], axis=1).max() < 1e-10   # a = 0: constant wheel rates
    assert runs[(0.5, "sigma = -p")][2][-1] > 0.1
    assert abs(a_star - ns["formula"]) < 1e-12 and ns["special"] == [a_star]
    assert "iff a = 0" in ns["search"].reason
    assert runs[(a_star, "sigma = -p")][2][-1] > 0.1
    assert runs[(a_star, "sigma = -p + c")][2].max() < 1e-7


def test_rigid_body_euler_equations_and_conserved_quantities(tmp_path, capsys):
    ns = run("rigid_body", tmp_path, capsys)
    assert ns["body"].frame.nonzero_structure() == {(0, 1, 2): 1, (1, 0, 2): -1, (2, 0, 1): 1}
    assert ns["flips"] >= 2                    # the intermediate axis is unstable
    assert ns["energy_drift"].max() < 1e-8
    assert ns["casimir_drift"].max() < 1e-8


def test_chetaev_counterexample_energy_drifts_predicted_quantity_conserved(tmp_path, capsys):
    ns = run("chetaev_counterexample", tmp_path, capsys)
    assert not ns["balance"].conserved
    assert abs(ns["energy_change"]) > 0.05
    assert ns["predicted_drift"] < 1e-8
    assert ns["residual"] < 1e-8


def test_seed003_integrable_agree_nonintegrable_third_order(tmp_path, capsys):
    ns = run("seed003_comparison", tmp_path, capsys)
    assert ns["conformal_cmp"].agree_for_every_multiplier
    assert not ns["particle_cmp"].agree_for_every_multiplier
    assert ns["integrable_gap"] < 1e-8
    np.testing.assert_allclose(ns["ratio"], ns["c3"], rtol=0.02)           # q_vak - q_nh = c t^3 + O(t^4)
    assert np.all(ns["gap2"][:5] > 10 * ns["gap"][:5])                    # lambda(0) != 0: order t^2


def test_sphere_on_turntable_turns_at_mu_with_the_table(tmp_path, capsys):
    ns = run("sphere_on_turntable", tmp_path, capsys)
    assert ns["mu"] > 0
    assert abs(ns["rate"] - ns["mu"]) < 1e-9
    assert ns["heading_error"] < 1e-8
    assert ns["path_error"] < 1e-8
