"""Invariant measures of the nonholonomic field.

Oracles: (1) the coordinate multiplier method solved symbolically by hand here
(``W q̈ = Aᵀλ``, differentiated constraints) and the divergence of N·Γ taken by direct
coordinate differentiation (the class of Crampin & Mestdag (2010), §7.1, whose density
is √(I₁ + Σ m_i A_i²)); (2) Liouville's theorem checked numerically: the volume of a cloud
of states (the determinant of the finite-difference Jacobian of the time-t flow, scipy
DOP853) times N(end)/N(start) stays 1 (the Chaplygin ball); (3) the closed form of the
ball's density, ∝ sin²θ √det(I + m r²(1 − γγᵀ)) (Chaplygin 1903; Borisov & Mamaev 2001:
ρ = det(J)^(-1/2) in (M, γ), i.e. det(J)^(1/2) in (ω, γ)).
"""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.analysis.invariant_measure import divergence, is_invariant_density, search_invariant_density
from anholo.system import System


def test_crampin_mestdag_class_density_by_coordinate_differentiation():
    s = System.load("crampin_mestdag_class")
    r1, r2, s1, s2 = q = list(s.chart.coordinates)
    I1, I2, m1, m2 = s.chart.parameters
    from sympy.core.function import AppliedUndef

    A1, A2 = sorted(s.frame.vectors.atoms(AppliedUndef), key=str)  # the file's functions A1(r2), A2(r2)
    u1, u2 = sp.symbols("u1 u2")
    # coordinate multiplier method by hand: m_i s_i'' = λ_i, I1 r1'' = -Σ λ_i A_i, I2 r2'' = 0,
    # s_i'' = A_i r1'' + A_i' r2' r1'  =>  (I1 + Σ m A²) r1'' = -Σ m A A' r1' r2'
    r1dd = -(m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)) * u1 * u2 / (I1 + m1 * A1**2 + m2 * A2**2)
    qdot = [u1, u2, A1 * u1, A2 * u1]
    vdot = [r1dd, 0]
    N = sp.sqrt(I1 + m1 * A1**2 + m2 * A2**2)
    div_N = sum(sp.diff(N * e, x) for e, x in zip(qdot, q)) + sum(sp.diff(N * e, x) for e, x in zip(vdot, (u1, u2)))
    assert sp.simplify(div_N) == 0
    nh = s.nonholonomic()
    field = nh.field()
    v1, v2 = nh.free_velocities  # v1 = r1_dot, v2 = r2_dot in the Chaplygin frame of the file
    div_oracle = sum(sp.diff(e, x) for e, x in zip(qdot, q)) + sp.diff(r1dd, u1)
    assert sp.simplify(divergence(field) - div_oracle.xreplace({u1: v1, u2: v2})) == 0
    found = search_invariant_density(field)
    assert found.density is not None and not found.divergence_free
    assert sp.simplify(found.density / N).free_symbols.isdisjoint(q)
    assert is_invariant_density(field, N) and not is_invariant_density(field, 1)
    # constant density iff Σ m_i A_i A_i' = 0
    cond = found.constant_density_conditions
    assert len(cond) == 1 and sp.simplify(cond[0] / (m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)) + 1) == 0 \
        or sp.simplify(cond[0] / (m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)) - 1) == 0


def test_vertical_rolling_disk_is_divergence_free_and_sleigh_has_no_density():
    disk = System.load("vertical_rolling_disk").nonholonomic().field()
    assert search_invariant_density(disk).divergence_free
    sleigh = search_invariant_density(System.load("chaplygin_sleigh").nonholonomic().field())
    assert sleigh.density is None and sleigh.searched and sleigh.complete
    a, m = sp.symbols("a m", positive=True)
    assert [sp.factor(c) for c in sleigh.constant_density_conditions] in ([a * m], [-a * m])


def _flow(field, values):
    nh = field.system
    q, v = list(nh.frame.chart.coordinates), list(nh.free_velocities)
    rhs = [e.xreplace(values) for e in list(field.velocity_field()) + list(field.accelerations)]
    f = sp.lambdify(q + v, rhs, modules="numpy", cse=True)
    return (lambda t, y: np.array(f(*y), dtype=float)), q, v


@pytest.mark.slow
def test_chaplygin_ball_density_by_liouville():
    s = System.load("chaplygin_ball")
    values = {p: sp.nsimplify(s.values[p]) for p in s.chart.parameters}
    nh = s.nonholonomic()
    field = nh.field()
    found = search_invariant_density(field)
    assert found.density is not None
    # closed form: sin²θ √det(I + m r²(1 − γγᵀ)), γ = (sinθ sinψ, sinθ cosψ, cosθ)
    phi, th, psi = s.chart.coordinates[2:]
    m, r, I1, I2, I3 = s.chart.parameters
    g = sp.Matrix([sp.sin(th) * sp.sin(psi), sp.sin(th) * sp.cos(psi), sp.cos(th)])
    J = sp.diag(I1, I2, I3) + m * r**2 * (sp.eye(3) - g * g.T)
    closed = sp.sin(th) ** 2 * sp.sqrt(J.det())
    rng = np.random.default_rng(1)
    ratios = []
    for _ in range(4):
        pt = {x: float(rng.uniform(0.2, 1.3)) for x in s.chart.coordinates} | {p: float(rng.uniform(0.5, 1.5)) for p in s.chart.parameters}
        if len(ratios) == 0:
            base = pt
        ratios.append(float(sp.N((found.density / closed).xreplace(pt | {p: base[p] for p in s.chart.parameters}))))
    assert np.allclose(ratios, ratios[0], rtol=1e-9)
    # Liouville: det(D flow_t) * N(end) / N(start) = 1
    F, q, v = _flow(field, values)
    N = sp.lambdify(q, found.density.xreplace(values), modules="numpy")
    y0 = np.array([0.1, -0.2, 0.3, 1.1, 0.4, 0.7, -0.5, 0.9])
    T, h = 2.0, 1e-5

    def end(y):
        return solve_ivp(F, (0, T), y, method="DOP853", rtol=1e-12, atol=1e-13).y[:, -1]

    Jac = np.column_stack([(end(y0 + h * e) - end(y0 - h * e)) / (2 * h) for e in np.eye(len(y0))])
    yT = end(y0)
    vol = np.linalg.det(Jac)
    assert abs(vol * N(*yT[:5]) / N(*y0[:5]) - 1) < 1e-6
    assert abs(vol - 1) > 1e-3  # the constant density is not invariant: the check can fail


# --- square roots, Abs and sign ------------------------------------------------------------------
# The density search replaces sign(f) by a constant ±1 on the regions where f keeps a sign; its results
# are checked here on the field computed independently: the coordinate multiplier method (sympy, in the
# test: W q̈ = F + Q + Aᵀλ, A q̈ = −(d/dt A) q̇), transformed to the coordinates (q, v) of C that the
# density refers to, and div(N Γ) taken by central finite differences.

PARTICLE = """name = "Particle ({what})"
coordinates = ["x", "y", "z"]
parameters = ["c"]
lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2"
constraints = ["{constraint}"]
"""

DISK_SQRT = """name = "Rolling disk, square-root height"
coordinates = ["x", "y", "yaw", "lean", "spin"]
parameters = ["m", "r", "g"]
lagrangian = \"\"\"
m*( (x_dot + r*(lean_dot*sin(yaw)*cos(lean) + yaw_dot*cos(yaw)*sin(lean)))^2
  + (y_dot - r*(lean_dot*cos(yaw)*cos(lean) - yaw_dot*sin(yaw)*sin(lean)))^2
  + r^2*lean_dot^2*sin(lean)^2 )/2
+ m*r^2*( lean_dot^2 + 2*(spin_dot + yaw_dot*sin(lean))^2 + yaw_dot^2*cos(lean)^2 )/8
- m*g*sqrt(r^2 - r^2*sin(lean)^2)
\"\"\"
constraints = ["x_dot - r*cos(yaw)*spin_dot", "y_dot - r*sin(yaw)*spin_dot"]
"""


def _system(tmp_path, name, text):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return System.load(str(path))


def _coordinate_field(s, field, params):
    """``(q, v) ↦ (q̇, v̇)`` on C from the coordinate multiplier method (numpy), in the fibre coordinates v of
    ``field`` (q̇ = X(q) v, read off its kinematics; v̇ from X v̇ = q̈ − (∂(X v)/∂q) q̇, least squares)."""
    nh = field.system
    q, qd = list(s.chart.coordinates), list(s.chart.velocities)
    v = list(nh.free_velocities)
    sub = {p: params[p.name] for p in s.chart.parameters}
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr).xreplace(sub)
    cons = [sp.sympify(c).xreplace(sub) for c in s.constraints]
    Q = [sp.sympify(e).xreplace(sub) for e in s.forces.total] if s.forces is not None else [0] * len(q)
    n, k = len(q), len(cons)
    Lu = [L.diff(u) for u in qd]
    W = sp.Matrix(n, n, lambda A, B: Lu[A].diff(qd[B]))
    F = sp.Matrix([L.diff(q[A]) - sum(Lu[A].diff(q[B]) * qd[B] for B in range(n)) + Q[A] for A in range(n)])
    Am = sp.Matrix(k, n, lambda a, A: cons[a].diff(qd[A]))
    rc = sp.Matrix([-sum(c.diff(q[B]) * qd[B] for B in range(n)) for c in cons])
    modules = [{"DiracDelta": lambda t: 0.0}, "numpy"]  # sympy's d sign(f) = 2 δ(f): 0 where f ≠ 0
    f_mult = sp.lambdify([q, qd], [W, F, Am, rc], modules=modules)
    kin = sp.Matrix([e.xreplace(sub) for e in field.velocity_field()])
    f_kin = sp.lambdify([q, v], [kin, kin.jacobian(v), kin.jacobian(q)], modules=modules)

    def rhs(z):
        qv, vv = z[:n], z[n:]
        qdot, X, dXv = (np.array(a, dtype=float) for a in f_kin(qv, vv))
        qdot = qdot.ravel()
        Wv, Fv, Av, rv = (np.array(a, dtype=float) for a in f_mult(qv, qdot))
        K = np.block([[Wv, -Av.T], [Av, np.zeros((k, k))]])
        qdd = np.linalg.solve(K, np.concatenate([Fv.ravel(), rv.ravel()]))[:n]
        vdot, *_ = np.linalg.lstsq(X, qdd - dXv @ qdot, rcond=None)
        return np.concatenate([qdot, vdot])

    return rhs, q + v


def _liouville(rhs, density, z, h=1e-5):
    """``(div(N F), scale)`` at z by central differences (scale: the sum of the absolute partial terms)."""
    total, scale = 0.0, 0.0
    for i in range(len(z)):
        zp, zm = z.copy(), z.copy()
        zp[i] += h
        zm[i] -= h
        term = (density(zp) * rhs(zp)[i] - density(zm) * rhs(zm)[i]) / (2 * h)
        total += term
        scale += abs(term)
    return total, scale


def _check_density(s, result, params, points, perturbation):
    field = s.nonholonomic().field()
    rhs, zsyms = _coordinate_field(s, field, params)
    sub = {p: params[p.name] for p in s.chart.parameters}
    N = sp.lambdify([zsyms], sp.sympify(result.density).xreplace(sub), modules="numpy")
    wrong = sp.lambdify([zsyms], (sp.sympify(result.density) * perturbation).xreplace(sub), modules="numpy")
    for z in points:
        z = np.array(z, dtype=float)
        div, scale = _liouville(rhs, N, z)
        assert abs(div) < 1e-6 * max(1.0, scale), (z, div, scale)
        div_wrong, _ = _liouville(rhs, wrong, z)  # the check can fail
        assert abs(div_wrong) > 1e-3, (z, div_wrong)


def test_square_root_particle_has_no_constant_density_and_no_internal_error(tmp_path):
    """ż = y ẋ/√(1 − sin²x) = y ẋ/|cos x| (the reported case): the search ends with "not found", and the
    constant density is indeed not invariant (finite differences of the coordinate field)."""
    s = _system(tmp_path, "sqrt_particle", PARTICLE.format(what="sqrt", constraint="z_dot - y*x_dot/sqrt(1 - sin(x)^2)"))
    field = s.nonholonomic().field()
    result = search_invariant_density(field)
    assert result.density is None and result.complete and not result.divergence_free
    assert result.searched
    # no parameters: div Γ ≠ 0 (below) cannot vanish under a condition; no spurious sign(cos x) = 0 either
    assert any(cond.is_number and cond != 0 for cond in result.constant_density_conditions)
    assert not any(cond.has(sp.sign) for cond in result.constant_density_conditions)
    rhs, _ = _coordinate_field(s, field, {"c": 0.7})
    rng = np.random.default_rng(1)
    for z in rng.uniform(-0.8, 0.8, size=(3, 5)):
        div, scale = _liouville(rhs, lambda z: 1.0, z)
        assert abs(div) > 1e-4 * max(1.0, scale), (z, div)


@pytest.mark.parametrize("what, constraint, forces, extra", [
    ("Abs", "z_dot - sqrt(y^2)*x_dot", None, ""),
    ("Abs and sign", "z_dot - sqrt(y^2)*sign(y)*x_dot", None, ""),
    ("sign force", "z_dot - y*x_dot", ["-c*sign(x_dot)", "0", "0"], ""),
    ("Abs of a velocity in L", "z_dot - y*x_dot", None, " + c*y*Abs(x_dot)"),
])
def test_density_with_abs_and_sign_is_invariant(tmp_path, what, constraint, forces, extra):
    """sympy writes the Hessian of c y |ẋ| with δ(ẋ); the density (found with det g^(1/2), g the Hessian
    where ẋ ≠ 0) holds on both sides of ẋ = 0."""
    text = PARTICLE.format(what=what, constraint=constraint).replace("z_dot^2)/2", "z_dot^2)/2" + extra)
    if forces:
        text += "forces = [" + ", ".join(f'"{f}"' for f in forces) + "]\n"
    s = _system(tmp_path, "particle", text)
    result = search_invariant_density(s.nonholonomic().field())
    assert result.found, result
    y = s.chart.coordinates[1]
    rng = np.random.default_rng(2)
    points = [np.concatenate([rng.uniform(0.2, 0.9, 3) * sign, rng.uniform(0.2, 0.9, 2) * sign])
              for sign in (1, -1)]  # both sides of y = 0 and of x_dot = 0
    _check_density(s, result, {"c": 0.7}, points, 1 + y**2 / 3)


def test_rolling_disk_with_a_square_root_height(tmp_path):
    """The centre height r cos(lean) written √(r² − r² sin²(lean)) = r |cos lean| (the reported case): the
    density found is checked on both sides of cos(lean) = 0."""
    s = _system(tmp_path, "disk", DISK_SQRT)
    assert s.lagrangian.expr.atoms(sp.Abs)
    result = search_invariant_density(s.nonholonomic().field())
    assert result.found, result
    lean = s.chart.coordinates[3]
    rng = np.random.default_rng(3)
    points = []
    for lean_value in (0.4, 2.6):  # cos(lean) > 0 and < 0
        z = np.concatenate([rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 3)])
        z[3] = lean_value
        points.append(z)
    _check_density(s, result, {"m": 1.3, "r": 0.5, "g": 9.81}, points, 1 + sp.sin(lean) / 2)


def test_cli_analyze_with_square_roots_abs_and_sign_has_no_internal_error(tmp_path):
    import io

    from anholo.cli import main

    files = {"sqrt_particle": PARTICLE.format(what="sqrt", constraint="z_dot - y*x_dot/sqrt(1 - sin(x)^2)"),
             "disk": DISK_SQRT,
             "potential": PARTICLE.format(what="V", constraint="z_dot - sign(cos(y))*y*x_dot").replace(
                 '"(x_dot^2 + y_dot^2 + z_dot^2)/2"', '"(x_dot^2 + y_dot^2 + z_dot^2)/2 - c*Abs(y)"')}
    for name, text in files.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        out = io.StringIO()
        code = main(["analyze", str(path)], out=out)
        assert "internal error" not in out.getvalue() and code in (0, 3), (name, out.getvalue()[-2000:])
        assert "Invariant measure" in out.getvalue()
