"""Chaplygin Hamiltonisation in any number of shape degrees of freedom (anholo.analysis.hamiltonisation).

Oracles (independent of anholo):
* the reduced Lagrangian l(r, ṙ) = L with the constraints solved for the group velocities (sympy, here);
* the shape accelerations of the unreduced system from the coordinate multiplier method
  (tests/oracles.py), hence the gyroscopic force F = d/dt ∂l/∂ṙ − ∂l/∂r numerically;
* with them: the rescaled field (dτ = N dt, p̃ = N g ṙ) compared with the canonical Hamiltonian field of
  H̃ = ½ p̃ g⁻¹ p̃ / N² + V built here; the divergence of ρ X (ρ = N^(m−1) det g) by central differences;
  and, where the library reports no multiplier, the linear conditions on w = ∇ ln N assembled here from F
  at sampled velocities (least squares: inconsistent), or their curl by finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution, coordinate_vector_fields
from scipy.integrate import solve_ivp

from anholo import Chart, Frame, Lagrangian
from anholo.analysis.chaplygin import ChaplyginSystem
from anholo.analysis.hamiltonisation import hamiltonise
from anholo.errors import ReductionError
from anholo.system import System


class Reduced:
    """l, g, V of a Chaplygin system built here, and the oracle's shape accelerations."""

    def __init__(self, L, q, u, cons, shape, vals=None):
        vals = vals or {}
        self.L = sp.sympify(L).xreplace(vals)
        self.q, self.u = list(q), list(u)
        self.cons = [sp.sympify(c).xreplace(vals) for c in cons]
        self.shape = list(shape)
        self.group = [s for s in q if s not in shape]
        self.rd = [u[q.index(s)] for s in shape]
        self.gd = [u[q.index(s)] for s in self.group]
        self.sol = sp.solve(self.cons, self.gd, dict=True)[0]
        l = sp.expand(self.L.xreplace(self.sol)).xreplace({g: 0 for g in self.group})
        self.l = l
        self.g = sp.hessian(l, self.rd)
        self.V = -l.xreplace({s: 0 for s in self.rd})
        self.m = len(shape)
        args = self.shape + self.rd
        self.fg = sp.lambdify(self.shape, self.g, "numpy")
        self.fdp = sp.lambdify(args, sp.Matrix([[sp.diff(l, a, b) for b in self.shape] for a in self.rd]), "numpy")
        self.fdl = sp.lambdify(args, [sp.diff(l, s) for s in self.shape], "numpy")
        self.fgd = sp.lambdify(args, [self.sol[v].xreplace({g: 0 for g in self.group}) for v in self.gd], "numpy")

    def point(self, r, rd):
        pt = {s: 0.0 for s in self.group}
        pt.update(dict(zip(self.shape, r)))
        pt.update(dict(zip(self.rd, rd)))
        pt.update(dict(zip(self.gd, self.fgd(*r, *rd))))
        return {k: sp.Float(float(v), 30) for k, v in pt.items()}

    def rdd(self, r, rd):
        qdd, _ = constrained_coordinate_solution(self.L, self.q, self.u, self.cons, self.point(r, rd))
        return np.array([qdd[self.q.index(s)] for s in self.shape])

    def force(self, r, rd):
        """F = g r̈ + (∂²l/∂ṙ∂r) ṙ − ∂l/∂r (the gyroscopic force of the reduced equations)."""
        g = np.array(self.fg(*r), float)
        return g @ self.rdd(r, rd) + np.array(self.fdp(*r, *rd), float) @ np.asarray(rd) - np.array(
            self.fdl(*r, *rd), float).ravel()

    def w_least_squares(self, r, samples=8, seed=0):
        """Solve F_α = (p·ṙ) w_α − p_α (w·ṙ) for w over sampled ṙ; returns (w, relative residual)."""
        rng = np.random.default_rng(seed)
        g = np.array(self.fg(*r), float)
        rows, rhs = [], []
        for _ in range(samples):
            rd = rng.uniform(-1, 1, self.m)
            p = g @ rd
            F = self.force(r, rd)
            for a in range(self.m):
                row = -p[a] * rd
                row[a] += p @ rd
                rows.append(row)
                rhs.append(F[a])
        M, b = np.array(rows), np.array(rhs)
        w, *_ = np.linalg.lstsq(M, b, rcond=None)
        return w, np.linalg.norm(M @ w - b) / max(1e-300, np.linalg.norm(b))


def vector_particle():
    """ż^a = φ(x) ẋ^a (a = 1, 2, 3), L = ½|ẋ|² + ½|ż|² − V: B = −φ dφ∧…; N = (1 + φ²)^(−1/2) by hand."""
    chart = Chart("x1 x2 x3 z1 z2 z3")
    q, u = list(chart.coordinates), list(chart.velocities)
    phi = q[0] + q[1] * q[2]
    L = sum(e**2 for e in u) / 2 - (q[0]**2 + q[1]**2 + 2 * q[2]**2) / 2
    cons = [u[3 + a] - phi * u[a] for a in range(3)]
    gens = [[1 if j == 3 + a else 0 for j in range(6)] for a in range(3)]
    ch = ChaplyginSystem(Lagrangian(Frame.coordinate(chart), L), cons, gens)
    return ch, Reduced(L, q, u, cons, q[:3]), 1 / sp.sqrt(1 + phi**2)


def veselova():
    """The Veselova system: a rigid body (I = diag(1, 2, 4)) with ⟨ω, γ⟩ = 0, ZXZ Euler angles
    (psi the precession about the vertical), symmetry: rotations about the vertical."""
    chart = Chart("psi theta phi")
    psi, th, ph = chart.coordinates
    psd, thd, phd = chart.velocities
    w = [psd * sp.sin(th) * sp.sin(ph) + thd * sp.cos(ph), psd * sp.sin(th) * sp.cos(ph) - thd * sp.sin(ph),
         psd * sp.cos(th) + phd]
    L = (w[0]**2 + 2 * w[1]**2 + 4 * w[2]**2) / 2
    cons = [psd + phd * sp.cos(th)]
    ch = ChaplyginSystem(Lagrangian(Frame.coordinate(chart), L), cons, [[1, 0, 0]])
    gamma = [sp.sin(th) * sp.sin(ph), sp.sin(th) * sp.cos(ph), sp.cos(th)]
    N_hand = 1 / sp.sqrt(gamma[0]**2 + gamma[1]**2 / 2 + gamma[2]**2 / 4)   # ⟨I⁻¹γ, γ⟩^(−1/2)
    return ch, Reduced(L, list(chart.coordinates), list(chart.velocities), cons, [th, ph]), N_hand


def particle():
    S = System.load("nonholonomic_particle")
    q, u = list(S.chart.coordinates), list(S.chart.velocities)
    return S.chaplygin(), Reduced(S.lagrangian.natural_expr(), q, u, S.constraints, q[:2]), 1 / sp.sqrt(1 + q[1]**2)


def particle_with_free_dof():
    """The nonholonomic particle plus a decoupled free coordinate w: m = 3, and no N(r) exists."""
    chart = Chart("x y w z")
    q, u = list(chart.coordinates), list(chart.velocities)
    L = sum(e**2 for e in u) / 2
    cons = [u[3] - q[1] * u[0]]
    ch = ChaplyginSystem(Lagrangian(Frame.coordinate(chart), L), cons, [[0, 0, 0, 1]])
    return ch, Reduced(L, q, u, cons, q[:3]), None


def chaplygin_ball():
    S = System.load("chaplygin_ball")
    vals = {p: v for p, v in zip(S.chart.parameters, (1.0, 1.0, 0.4, 0.5, 0.6))}
    q, u = list(S.chart.coordinates), list(S.chart.velocities)
    return S.chaplygin(), Reduced(S.lagrangian.natural_expr(), q, u, S.constraints, q[2:], vals), vals


@pytest.mark.parametrize("name", ["nonholonomic_particle", "knife_edge", "two_wheeled_carriage", "roller_racer",
                                  "crampin_mestdag_class", "vertical_rolling_disk"])
def test_two_shape_dof_agrees_with_chaplygins_reducing_multiplier(name):
    ch = System.load(name).chaplygin()
    h = hamiltonise(ch)
    rm = ch.reduction().reducing_multiplier()
    assert h.exists is rm.exists
    r = h.shape
    if h.exists:
        assert all(sp.simplify(a - b) == 0 for a, b in zip(h.log_gradient, rm.log_gradient))
        if h.multiplier is not None and rm.multiplier is not None:
            assert all(sp.simplify(sp.diff(sp.log(h.multiplier / rm.multiplier), x)) == 0 for x in r)
        assert h.two_form   # m = 2: the contracted and the 2-form conditions coincide
    else:
        assert h.log_gradient is not None and any(c != 0 for c in h.curl)


@pytest.mark.parametrize("build", [particle, veselova, vector_particle])
def test_rescaled_field_is_the_canonical_hamiltonian_field(build):
    ch, red, N_hand = build()
    h = hamiltonise(ch)
    assert h.exists and h.multiplier is not None and h.decision.is_exact
    r = red.shape
    # the multiplier is the one derived by hand (up to a constant factor)
    assert all(abs(float(sp.diff(sp.log(h.multiplier / N_hand), x).xreplace(dict(zip(r, [0.31, -0.52, 0.23]))))) < 1e-12
               for x in r)
    m = red.m
    pt = sp.symbols(f"P0:{m}", real=True)

    def hamiltonian_rhs(N):
        ginv = red.g.adjugate() / red.g.det(method="berkowitz")   # no simplification (trigonometric g)
        H = (sp.Matrix(pt).T * ginv * sp.Matrix(pt))[0] / (2 * N**2) + red.V
        f = sp.lambdify(list(r) + list(pt), [H.diff(s) for s in pt] + [-H.diff(s) for s in r], "numpy")
        dN = sp.lambdify(list(r), [N] + [N.diff(s) for s in r], "numpy")
        return f, dN

    def mismatch(N, seed):
        f, dN = hamiltonian_rhs(N)
        rng = np.random.default_rng(seed)
        shift = 0.9 if build is veselova else 0.0   # Euler angles: away from sin θ = 0
        rv, rdv = rng.uniform(-0.8, 0.8, m) + shift, rng.uniform(-1, 1, m)
        Nv, *gradN = dN(*rv)
        g = np.array(red.fg(*rv), float)
        dg = (np.array([np.array(red.fg(*(rv + 1e-6 * e)), float) - np.array(red.fg(*(rv - 1e-6 * e)), float)
                        for e in np.eye(m)]) / 2e-6)
        rdd = red.rdd(rv, rdv)
        ptil = Nv * g @ rdv
        gdot = np.tensordot(rdv, dg, axes=(0, 0))
        Ndot = np.dot(gradN, rdv)
        # d/dτ = (1/N) d/dt
        lhs = np.concatenate([rdv / Nv, (Ndot * g @ rdv + Nv * (gdot @ rdv + g @ rdd)) / Nv])
        rhs = np.array(f(*rv, *ptil), float).ravel()
        return np.abs(lhs - rhs).max() / max(1.0, np.abs(rhs).max())
    for seed in range(3):
        assert mismatch(h.multiplier, seed) < 1e-7
    # the test can fail: another factor is not a multiplier
    wrong = h.multiplier * (1 + r[0]**2 / 3)
    assert max(mismatch(wrong, s) for s in range(3)) > 1e-4


@pytest.mark.parametrize("build", [particle, vector_particle])
def test_invariant_measure_of_the_reduced_flow(build):
    """div(ρ X) = 0 for ρ = N^(m−1) det g and X = (ṙ, r̈) of the oracle (central differences)."""
    ch, red, _ = build()
    h = hamiltonise(ch)
    m, r = red.m, red.shape
    rho = sp.lambdify(list(r), h.measure_density, "numpy")

    def flux(x):
        return rho(*x[:m]) * np.concatenate([x[m:], red.rdd(x[:m], x[m:])])
    rng = np.random.default_rng(5)
    for _ in range(2):
        x = rng.uniform(-0.8, 0.8, 2 * m)
        eps = 1e-5
        div = sum((flux(x + eps * e)[i] - flux(x - eps * e)[i]) / (2 * eps) for i, e in enumerate(np.eye(2 * m)))
        assert abs(div) < 1e-6
        # ρ det g (a wrong density) is not invariant
        bad = sum((flux(x + eps * e)[i] * (1 + (x + eps * e)[0]) - flux(x - eps * e)[i] * (1 + (x - eps * e)[0]))
                  / (2 * eps) for i, e in enumerate(np.eye(2 * m)))
        assert abs(bad) > 1e-3


@pytest.mark.parametrize("build", [particle_with_free_dof, chaplygin_ball])
def test_no_multiplier_certificate_is_confirmed_by_the_oracle(build):
    ch, red, _ = build()
    h = hamiltonise(ch)
    assert not h.exists and h.log_gradient is None and h.algebraic_obstruction
    assert h.decision.is_exact
    assert "No Chaplygin multiplier" in str(h) and h.to_dict()["exists"] is False and r"\neq" in h.as_latex()
    # independently: the linear conditions on w at one shape point are inconsistent
    _, res = red.w_least_squares(np.array([0.3, -0.5, 0.7]))
    assert res > 1e-3
    # … while for a system with a multiplier they are consistent and give the library's w
    ch2, red2, _ = vector_particle()
    rv = np.array([0.3, -0.5, 0.7])
    w, res2 = red2.w_least_squares(rv)
    assert res2 < 1e-8
    lib = [float(e.xreplace(dict(zip(red2.shape, rv)))) for e in hamiltonise(ch2).log_gradient]
    np.testing.assert_allclose(w, lib, atol=1e-8)


def test_non_closed_log_gradient_is_confirmed_by_finite_differences():
    """The roller racer (m = 2): w exists pointwise but is not closed; the oracle's w has a curl."""
    S = System.load("roller_racer")
    vals = {p: v for p, v in zip(S.chart.parameters, (1.0, 0.7, 0.4, 1.1, 0.8))}
    ch = S.chaplygin()
    h = hamiltonise(ch)
    assert not h.exists and h.log_gradient is not None
    q, u = list(S.chart.coordinates), list(S.chart.velocities)
    red = Reduced(S.lagrangian.natural_expr(), q, u, S.constraints, [q[2], q[3]], vals)
    r0, eps = np.array([0.2, 0.9]), 1e-4
    w = lambda x: red.w_least_squares(x)[0]   # noqa: E731
    curl = ((w(r0 + [eps, 0])[1] - w(r0 - [eps, 0])[1]) - (w(r0 + [0, eps])[0] - w(r0 - [0, eps])[0])) / (2 * eps)
    lib_curl = float(h.curl[0].xreplace(vals).xreplace(dict(zip(h.shape, r0))))
    assert abs(curl) > 1e-3 and abs(curl - lib_curl) < 1e-5 * max(1.0, abs(curl))


def test_hamiltonian_flow_in_new_time_is_the_unreduced_motion_three_shape_dof():
    ch, red, _ = vector_particle()
    h = hamiltonise(ch)
    r = red.shape
    pt = sp.symbols("P0:3", real=True)
    H = (sp.Matrix(pt).T * red.g.inv() * sp.Matrix(pt))[0] / (2 * h.multiplier**2) + red.V
    ham = sp.lambdify(list(r) + list(pt), [H.diff(s) for s in pt] + [-H.diff(s) for s in r], "numpy")
    nh, _, _ = coordinate_vector_fields(red.L, red.q, red.u, red.cons, {})
    fN = sp.lambdify(list(r), h.multiplier, "numpy")
    n = len(red.q)

    def full(t, x):
        return np.concatenate([nh(t, x[:-1]), [fN(*x[:3])]])
    r0, rd0 = np.array([0.2, -0.3, 0.4]), np.array([0.5, 0.1, -0.4])
    p0 = red.point(r0, rd0)
    x0 = [float(p0[s]) for s in red.q] + [float(p0[s]) for s in red.u] + [0.0]
    T = 2.0
    sol = solve_ivp(full, (0, T), x0, rtol=1e-11, atol=1e-12, dense_output=True)
    ptil0 = fN(*r0) * np.array(red.fg(*r0), float) @ rd0
    hs = solve_ivp(lambda tau, y: np.array(ham(*y), float).ravel(), (0, sol.y[-1, -1]),
                   np.concatenate([r0, ptil0]), rtol=1e-11, atol=1e-12, dense_output=True)
    ts = np.linspace(0, T, 9)
    np.testing.assert_allclose(hs.sol(sol.sol(ts)[-1])[:3].T, sol.sol(ts)[:3].T, atol=1e-7)
    assert n == 6


def test_hamiltonisation_errors_and_rendering():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 + xd)
    with pytest.raises(ReductionError, match="linear in the shape velocities"):
        hamiltonise(ChaplyginSystem(L, ["z_dot - y*x_dot"], [[0, 0, 1]]))
    h = hamiltonise(System.load("nonholonomic_particle").chaplygin())
    d = h.to_dict()
    assert d["exists"] and d["decided"] == "exact" and "Fedorov" in d["criterion"]
    assert "tilde H" in h.as_latex() and "Hamiltonian" in str(h)
