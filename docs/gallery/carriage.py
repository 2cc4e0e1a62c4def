r"""The two-wheeled carriage: consistent for a = 0, not for a ≠ 0.
==============================================================

:math:`q = (x, y, \theta, \psi_1, \psi_2)`,
:math:`L = \tfrac12 m(\dot x^2 + \dot y^2) + m_0 a\,\dot\theta(\dot y\cos\theta - \dot x\sin\theta)
+ \tfrac12 J\dot\theta^2 + \tfrac12 C(\dot\psi_1^2 + \dot\psi_2^2)`,
the carriage of §7.2 of :cite:t:`CrampinMestdag2010`,
where :math:`a` is the distance of the body's centre of mass ahead of the axle.
Rolling without slipping confines the velocity to
:math:`D = \mathrm{span}\{X_1, X_2\}`,
:math:`X_{1,2} = \partial_{\psi_{1,2}} + \tfrac R2(\cos\theta\,\partial_x + \sin\theta\,\partial_y) \mp \tfrac{R}{2c}\partial_\theta`,
completed by the generators of :math:`SE(2)`,
:math:`X_3 = \partial_x`, :math:`X_4 = \partial_y`, :math:`X_5 = -y\partial_x + x\partial_y + \partial_\theta`.
The curvature is :math:`R^a_{12} = (R^2\sin\theta/2c,\ -R^2\cos\theta/2c,\ 0)`
(:ref:`theory-worked-examples`).  It is a Chaplygin system for :math:`SE(2)`, and the Chaplygin
condition :math:`p_a R^a_{\alpha\beta}v^\beta = 0` on :math:`C` is proportional
to :math:`a\,v^\beta(v^1 - v^2)`: the section :math:`\sigma = -p` is strongly
consistent iff :math:`a = 0`.

More sections are :math:`\sigma = -p + c` with :math:`c` constants of motion
of :math:`\Gamma_{nh}` such that :math:`(c_a - p_a)R^a_{\alpha\beta}v^\beta = 0`
(:ref:`theory-chaplygin`).  :func:`~anholo.analysis.consistency.search_sections` looks for
them with :math:`c_a` linear in :math:`v^1, v^2` with coefficients in
:math:`\{1, \cos\theta, \sin\theta\}`, and finds them for :math:`a = 0` and
for one special value (:doc:`../consistency`)

.. math::

   a_* = \frac{\sqrt{(mR^2 + 2C)(JR^2 + 2Cc^2)}}{m_0 R^2}.

The script runs the search with the file's values of :math:`m, m_0, J, C, R, c`
and :math:`a` symbolic (quicker than with all parameters symbolic), and
compares the special value it finds, :math:`a_* = 2\sqrt{133}/9 \approx 2.563`,
with the formula.

The figures integrate both dynamics from the same state, with the vakonomic
multipliers started on a section, :math:`\lambda(0) = \sigma(q_0, v_0)`,
rewritten for the constraints as written (:math:`\lambda' = \sigma M^{-1}`,
:math:`M^a_b = \omega^a(X_b)`).  From :math:`\sigma = -p`: for :math:`a = 0` the
two motions are one (and the wheels turn at constant speeds), for
:math:`a = 0.5` and for :math:`a = a_*` they separate.  From the section
:math:`\sigma = -p + c` found at :math:`a = a_*` (free constants put to 0) the
vakonomic motion is the nonholonomic one again.
"""

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

from anholo import plotting
from anholo.analysis.consistency import Section, polynomial_ansatz, search_sections, strong_consistency
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# The curvature of the carriage, and the consistency analysis with :math:`a`
# symbolic (the other parameters at the file's values): the verdict on
# :math:`\sigma = -p` and the search for sections :math:`-p + c`.

carriage = System.load("two_wheeled_carriage")
print("curvature R^k_12 (0-based keys):", carriage.nonholonomic().curvature())
values = {str(p): float(v) for p, v in carriage.values.items()}
m, m0, J, C, R, c = (values[k] for k in ("m", "m0", "J", "C", "R", "c"))

# The consistency analysis with a symbolic and the other parameters at the file's values.
only_a = System.load("two_wheeled_carriage", {k: sp.nsimplify(v) for k, v in values.items() if k != "a"})
nh = only_a.nonholonomic()                      # the file's frame: X1, X2 span D; X3, X4, X5 generate SE(2)
x, y, theta = only_a.chart.coordinates[:3]
a = next(p for p in only_a.chart.parameters if p.name == "a")
minus_p = Section(nh, [-nh.restrict(nh.lagrangian.expr.diff(va)) for va in nh.bundle.quasi_velocities[nh.m:]], "-p")
print(strong_consistency(nh, minus_p).reason)
search = search_sections(nh, polynomial_ansatz(nh, [1, sp.cos(theta), sp.sin(theta)], 1, offset=minus_p.values,
                                               name="-p + c"), solve_for=[a])
print(search.reason)
special = sorted(float(f.conditions[0].rhs) for f in search.families if f.conditions and f.conditions[0].rhs != 0)
a_star = special[-1]
formula = np.sqrt((m * R**2 + 2 * C) * (J * R**2 + 2 * C * c**2)) / (m0 * R**2)
print(f"special a found: {special};  formula: a_* = {formula:.6f}")
family = next(f for f in search.families if f.conditions and float(f.conditions[0].rhs) == a_star)
plus_c = [e.xreplace(dict.fromkeys(family.free_constants, 0)) for e in family.section.values]
print("sigma = -p + c at a = a_* (free constants 0):", [sp.nsimplify(e) for e in plus_c])

# %%
# Both dynamics from one state, for :math:`a = 0`, :math:`a = 0.5` and
# :math:`a = a_*`, with the multipliers started on a section:

# Initial state: wheel rates (psi1_dot, psi2_dot) = (1.0, 1.5); the rest from the rolling conditions.
x0, y0, th0, w1, w2 = 0.2, 0.1, 0.1, 1.0, 1.5
q0 = [x0, y0, th0, 0.0, 0.0]
qdot0 = [R / 2 * np.cos(th0) * (w1 + w2), R / 2 * np.sin(th0) * (w1 + w2), R / (2 * c) * (w2 - w1), w1, w2]
state0 = dict(zip(only_a.chart.coordinates + only_a.chart.velocities, q0 + qdot0))


def written_multipliers(sigma, a_value):
    """lambda'(0) = sigma M^-1 at (q0, qdot0), for the constraints as written."""
    lam = sp.Matrix([list(sigma)]) * sp.Matrix(nh.form_matrix).inv()
    return [float(nh.to_natural(e).subs(state0).subs(a, a_value)) for e in lam]


nh_ode = compile_system(from_system(carriage, "nonholonomic"))
vak_ode = compile_system(from_system(carriage, "vakonomic"))
runs = {}
for a_value, label, sigma in [(0.0, "sigma = -p", minus_p.values), (0.5, "sigma = -p", minus_p.values),
                              (a_star, "sigma = -p", minus_p.values), (a_star, "sigma = -p + c", plus_c)]:
    nh_run = simulate(nh_ode, 12.0, q0, qdot0, parameters={"a": a_value}, points=241)
    vak_run = simulate(vak_ode, 12.0, q0, qdot0, written_multipliers(sigma, a_value), parameters={"a": a_value},
                       points=241)
    runs[(a_value, label)] = (nh_run, vak_run, np.abs(nh_run.q - vak_run.q).max(axis=0))
    wheel_rates = np.ptp(nh_run.qdot[3:], axis=1).max()
    print(f"a = {a_value:.4f}, {label}: max |q_nh - q_vak| = {runs[(a_value, label)][2].max():.2e};  "
          f"variation of the wheel rates = {wheel_rates:.1e}")

# %%
# The paths of the axle midpoint:

fig, axes = plt.subplots(2, 2, figsize=(10, 9), constrained_layout=True)
for ax, (a_value, label) in zip(axes.flat, runs):
    nh_run, vak_run, _ = runs[(a_value, label)]
    plotting.plot_phase_portrait([nh_run, vak_run], "x", "y", ["nonholonomic", f"vakonomic, {label}"], ax=ax)
    ax.set_title(f"a = {a_value:.4g}")
    ax.set_aspect("equal", adjustable="datalim")

# %%
# The distance between the motions, on a log scale:

fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
for (a_value, label), (nh_run, _, gap) in runs.items():
    ax.semilogy(nh_run.t, np.maximum(gap, 1e-17), label=f"a = {a_value:.4g}, {label}")
ax.set_xlabel("t")
ax.set_ylabel("max |q_nh - q_vak|")
ax.legend(loc="best", fontsize="small")
ax.grid(True, which="both", alpha=0.3)

plt.show()
