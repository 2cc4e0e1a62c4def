"""Consistency of large systems, decided at random points, against published results and the exact route.

Oracles: Crampin & Mestdag (2010), §7.1: for the class ``ṡ^i = A_i(r2) ṙ1``,
``L = ½(I1 ṙ1² + I2 ṙ2² + Σ m_i ṡ_i²)`` the natural section σ = −p (p the momenta of the
translations in s) is strongly consistent iff ``Σ m_i A_i A_i' = 0``: the vertical rolling disk
(A = (R cos r2, R sin r2)) is consistent, the knife edge (A = tan r2) and the nonholonomic
particle (A = r2) are not.  Maggi's frame uses ``X_a = ∂/∂s^i`` when the s are the last
coordinates, so its −p is that section.  And the exact route's verdicts on catalogue systems.
"""

from __future__ import annotations

import json

import pytest

from anholo.analysis.consistency import consistency_report
from anholo.analysis.consistency_numerical import numerical_consistency
from anholo.errors import ConstraintError
from anholo.system import System

CLASS = """name = "{name}"
coordinates = ["r1", "r2", "s1", "s2"]
parameters = ["I1", "I2", "m1", "m2", "R"]
lagrangian = "(I1*r1_dot^2 + I2*r2_dot^2 + m1*s1_dot^2 + m2*s2_dot^2)/2"
constraints = ["s1_dot - ({A1})*r1_dot", "s2_dot - ({A2})*r1_dot"]
"""


def _class(tmp_path, name, A1, A2, masses_equal=False):
    text = CLASS.format(name=name, A1=A1, A2=A2)
    if masses_equal:
        text = text.replace("m2*s2_dot", "m1*s2_dot").replace('"m1", "m2"', '"m1"')
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return System.load(str(path))


def test_the_vertical_rolling_disk_is_strongly_consistent_with_minus_p(tmp_path):
    # Σ m_i A_i A_i' = m R²(−cos sin + sin cos) = 0 with equal masses
    system = _class(tmp_path, "disk", "R*cos(r2)", "R*sin(r2)", masses_equal=True)
    verdict = numerical_consistency(system.maggi())
    assert verdict.strong is True and verdict.section == "-p"
    assert verdict.decision.how == "numerical" and verdict.decision.points >= 5


def test_unequal_masses_break_it(tmp_path):
    # the same A with m1 != m2: Σ m_i A_i A_i' = (m2 − m1) R² sin cos ≠ 0 — the check can fail
    system = _class(tmp_path, "disk2", "R*cos(r2)", "R*sin(r2)")
    assert numerical_consistency(system.maggi()).strong is False


@pytest.mark.parametrize("A1, A2", [("tan(r2)", "0"), ("r2", "0"), ("r2", "r2^2")])
def test_members_with_nonzero_sum_are_not_consistent(tmp_path, A1, A2):
    system = _class(tmp_path, "member", A1, A2)
    verdict = numerical_consistency(system.maggi())
    assert verdict.strong is False
    assert all(not holds for _, holds, _ in verdict.tried)


@pytest.mark.parametrize("name", ["conformal_constraint", "nonholonomic_particle", "knife_edge", "darboux_4d",
                                  "chaplygin_sleigh", "rolling_disk"])
def test_agrees_with_the_exact_route_on_the_catalogue(name):
    system = System.load(name)
    exact = consistency_report(system.nonholonomic(), search_budget=5)
    numerical = numerical_consistency(system.maggi())
    assert numerical.weak is True
    assert numerical.strong == bool(exact.strong)


def test_affine_constraints_are_refused():
    with pytest.raises(ConstraintError, match="affine"):
        numerical_consistency(System.load("sphere_on_turntable").maggi())


def test_json_says_how_it_was_decided(tmp_path):
    system = _class(tmp_path, "disk3", "R*cos(r2)", "R*sin(r2)", masses_equal=True)
    d = json.loads(json.dumps(numerical_consistency(system.maggi()).to_dict()))
    assert d["decided"] == "numerical" and d["points"] >= 5 and d["tolerance"] == pytest.approx(1e-8)
    assert d["strong"] is True and d["weak"] is True


def test_the_catalogue_disk_takes_its_symmetry_as_complement():
    """With a [symmetry] of translations, Maggi's dependent velocities are the symmetry's, so its −p is
    the Chaplygin section and the published verdict (consistent) comes out of the catalogue file."""
    system = System.load("vertical_rolling_disk")
    assert [c.name for c in system.maggi().dependent_coordinates] == ["x", "y"]
    verdict = numerical_consistency(system.maggi())
    assert verdict.strong is True and verdict.section == "-p"
