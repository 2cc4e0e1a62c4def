r"""The two-wheeled carriage of seed 004 §7.2: consistent for a = 0, not for a ≠ 0.

:math:`q = (x, y, \theta, \psi_1, \psi_2)`,
:math:`L = \tfrac12 m(\dot x^2 + \dot y^2) + m_0 a\,\dot\theta(\dot y\cos\theta - \dot x\sin\theta)
+ \tfrac12 J\dot\theta^2 + \tfrac12 C(\dot\psi_1^2 + \dot\psi_2^2)`,
where :math:`a` is the distance of the body's centre of mass ahead of the axle.
Rolling without slipping confines the velocity to
:math:`D = \mathrm{span}\{X_1, X_2\}`,
:math:`X_{1,2} = \partial_{\psi_{1,2}} + \tfrac R2(\cos\theta\,\partial_x + \sin\theta\,\partial_y) \mp \tfrac{R}{2c}\partial_\theta`,
completed by the generators of :math:`SE(2)`,
:math:`X_3 = \partial_x`, :math:`X_4 = \partial_y`, :math:`X_5 = -y\partial_x + x\partial_y + \partial_\theta`.
The curvature is :math:`R^a_{12} = (R^2\sin\theta/2c,\ -R^2\cos\theta/2c,\ 0)`
(THEORY §9).  It is a Chaplygin system for :math:`SE(2)`, and the Chaplygin
condition :math:`p_a R^a_{\alpha\beta}v^\beta = 0` on :math:`C` is proportional
to :math:`a\,v^\beta(v^1 - v^2)`: the section :math:`\sigma = -p` is strongly
consistent iff :math:`a = 0`.

The figures integrate both dynamics from the same state, with the vakonomic
multipliers started on the section, :math:`\sigma_b(0) = -p_b(0) = -X_b\cdot P`
(:math:`P = \partial L/\partial\dot q`), rewritten for the constraints as
written (:math:`\lambda' = \sigma M^{-1}`, :math:`M^a_b = \omega^a(X_b)`).  For
:math:`a = 0` the two motions are one (and the wheels turn at constant
speeds); for :math:`a = 0.5` they separate.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402

from anholo import plotting  # noqa: E402
from anholo.numerics import compile_system, from_system, simulate  # noqa: E402
from anholo.system import System  # noqa: E402

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")

carriage = System.load("two_wheeled_carriage")
chart = carriage.chart
print("curvature R^k_12 (0-based keys):", carriage.nonholonomic().curvature())
nh_ode = compile_system(from_system(carriage, "nonholonomic"))
vak_ode = compile_system(from_system(carriage, "vakonomic"))
values = {str(p): v for p, v in carriage.values.items()}
R, c = values["R"], values["c"]

# Initial state: wheel rates (psi1_dot, psi2_dot) = (1.0, 1.5); the rest from the rolling conditions.
x0, y0, th0, w1, w2 = 0.2, 0.1, 0.1, 1.0, 1.5
q0 = [x0, y0, th0, 0.0, 0.0]
qdot0 = [R / 2 * np.cos(th0) * (w1 + w2), R / 2 * np.sin(th0) * (w1 + w2), R / (2 * c) * (w2 - w1), w1, w2]


def minus_p_multipliers(a):
    """lambda'(0) of the section sigma = -p at (q0, qdot0) for the constraints as written."""
    point = dict(zip(chart.coordinates + chart.velocities, q0 + qdot0))
    point.update({p: (a if str(p) == "a" else values[str(p)]) for p in chart.parameters})
    L = carriage.lagrangian.natural_expr()
    P = np.array([float(L.diff(u).subs(point)) for u in chart.velocities])
    X = np.array(carriage.frame.vectors.subs(point), dtype=float)[2:]      # X_3, X_4, X_5
    omega = np.array(sp.Matrix(carriage.linear_constraints().forms).subs(point), dtype=float)
    return -(X @ P) @ np.linalg.inv(omega @ X.T)


runs = {}
for a in (0.0, 0.5):
    nh = simulate(nh_ode, 12.0, q0, qdot0, parameters={"a": a}, points=241)
    vak = simulate(vak_ode, 12.0, q0, qdot0, minus_p_multipliers(a), parameters={"a": a}, points=241)
    runs[a] = (nh, vak, np.abs(nh.q - vak.q).max(axis=0))
    wheel_rates = np.ptp(nh.qdot[3:], axis=1).max()
    print(f"a = {a}: max |q_nh - q_vak| = {runs[a][2].max():.2e};  variation of the wheel rates = {wheel_rates:.1e}")

fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), constrained_layout=True)
for ax, a in zip(axes, runs):
    nh, vak, _ = runs[a]
    plotting.plot_phase_portrait([nh, vak], "x", "y", ["nonholonomic", "vakonomic, sigma = -p"], ax=ax)
    ax.set_title(f"a = {a:g}")
    ax.set_aspect("equal", adjustable="datalim")
plotting.save_figure(fig, OUT / "carriage_1_paths.png")

fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
for a, (nh, _, gap) in runs.items():
    ax.semilogy(nh.t, np.maximum(gap, 1e-17), label=f"a = {a:g}")
ax.set_xlabel("t")
ax.set_ylabel("max |q_nh - q_vak|")
ax.legend(loc="best", fontsize="small")
ax.grid(True, which="both", alpha=0.3)
plotting.save_figure(fig, OUT / "carriage_2_gap.png")
