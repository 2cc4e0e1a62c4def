"""The Chaplygin block of Maggi's route (translations) against the exact route and brackets computed here.

Oracles: the exact route's :class:`ChaplyginSystem` verdict for σ = −p (Crampin & Mestdag (2010), §6);
the curvature as the brackets ``[X_α, X_β] = R^a_αβ ∂/∂q^{P_a}`` of the horizontal vector fields
``X_α = ∂_{f_α} + C^P_α ∂_P`` computed with sympy in the test from the constraint matrix; the momenta
``∂L/∂q̇^P`` by sympy differentiation.
"""

from __future__ import annotations

import json
import random

import pytest
import sympy as sp

from anholo.analysis.chaplygin_numerical import translation_chaplygin
from anholo.errors import SymmetryError
from anholo.io.report import analyze
from anholo.system import System

TRANSLATION_EXAMPLES = ["vertical_rolling_disk", "knife_edge", "nonholonomic_particle", "roller_racer",
                        "chaplygin_ball"]


def _read(block: dict, expr: str, env: dict) -> float:
    """Evaluate a JSON expression of the block (written with its ``cse`` list) at ``env`` (names → floats)."""
    names = dict(env)
    for name, value in block["cse"]:
        names[name] = sp.sympify(value, locals={k: sp.Symbol(k) for k in names}).subs(
            {sp.Symbol(k): v for k, v in names.items()})
    return float(sp.sympify(expr, locals={k: sp.Symbol(k) for k in names}).subs(
        {sp.Symbol(k): v for k, v in names.items()}))


@pytest.mark.parametrize("name", TRANSLATION_EXAMPLES)
def test_minus_p_verdict_agrees_with_the_exact_route(name):
    system = System.load(name)
    exact = system.chaplygin().consistency()
    block = translation_chaplygin(system.maggi())
    assert block.holds == (exact.holds is True)


@pytest.mark.parametrize("name", ["vertical_rolling_disk", "knife_edge", "roller_racer"])
def test_curvature_and_momenta_from_brackets_computed_here(name):
    system = System.load(name)
    nh = system.maggi()
    d = translation_chaplygin(nh).to_dict()["chaplygin"]
    q, u = list(system.chart.coordinates), list(system.chart.velocities)
    dep = [q.index(c) for c in nh.dependent_coordinates]
    free = [i for i in range(len(q)) if i not in dep]
    K = sp.Matrix([[sp.diff(c, ui) for ui in u] for c in system.constraints])
    C = -K[:, dep].inv() * K[:, free]  # q̇^P = C^P_α q̇^{f_α}
    X = []
    for al, f in enumerate(free):
        col = [sp.S.Zero] * len(q)
        col[f] = sp.S.One
        for a, P in enumerate(dep):
            col[P] = C[a, al]
        X.append(col)

    def bracket(A, B):
        return [sum(A[j] * sp.diff(B[i], q[j]) - B[j] * sp.diff(A[i], q[j]) for j in range(len(q)))
                for i in range(len(q))]

    rng = random.Random(3)
    point = {s: rng.uniform(0.3, 0.9) for s in q + list(system.chart.parameters)}
    point.update({u[f]: rng.uniform(-1, 1) for f in free})
    qdot_dep = (C * sp.Matrix([u[f] for f in free])).subs(point)
    point.update({u[P]: qdot_dep[a] for a, P in enumerate(dep)})
    env = {s.name: float(v) for s, v in point.items()}
    for al in range(len(free)):
        for be in range(al + 1, len(free)):
            br = bracket(X[al], X[be])
            for a, P in enumerate(dep):
                want = float(br[P].subs(point))
                got = _read(d, d["curvature"].get(f"R^{a + 1}_{al + 1}{be + 1}", "0"), env)
                assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    L = system.lagrangian.natural_expr()
    for a, P in enumerate(dep):
        assert _read(d, d["momenta"][a], env) == pytest.approx(float(sp.diff(L, u[P]).subs(point)), rel=1e-12)


def test_a_coordinate_in_L_is_not_a_symmetry(tmp_path):
    src = tmp_path / "disk.toml"
    src.write_text('name = "disk with a slope"\ncoordinates = ["x", "y", "theta", "phi"]\n'
                   'parameters = ["m", "R", "I", "J", "k"]\n'
                   'lagrangian = "m*(x_dot^2 + y_dot^2)/2 + J*theta_dot^2/2 + I*phi_dot^2/2 - k*x"\n'
                   'constraints = ["x_dot - R*cos(theta)*phi_dot", "y_dot - R*sin(theta)*phi_dot"]\n'
                   '[symmetry]\ngenerators = [["1", "0", "0", "0"], ["0", "1", "0", "0"]]\n')
    system = System.load(str(src))
    with pytest.raises(SymmetryError, match="x occurs in L"):
        translation_chaplygin(system.maggi())


def test_report_on_maggis_route_has_the_block_and_says_how_it_decided():
    system = System.load("vertical_rolling_disk")
    system.__dict__["_route"] = ("maggi", "forced by the test")
    data = json.loads(analyze(system, sections=["chaplygin", "consistency"]).to_json())
    assert data["chaplygin"]["minus_p"]["holds"] is True and data["chaplygin"]["decided"] == "numerical"
    assert data["chaplygin"]["invariance"] == {"decided": "exact"}
    assert data["consistency"]["strong"] is True and data["consistency"]["section"] == "-p"
