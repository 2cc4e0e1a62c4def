r"""Vakonomic against d'Alembert: equal for an integrable constraint, apart at order t³ otherwise.
==============================================================================================

For one linear constraint :math:`a(q)\cdot\dot q = 0` and
:math:`L = \tfrac12|\dot q|^2`, the two dynamics at the same state differ by
(:cite:t:`CronstromRaita2009`, in the convention :math:`L + \lambda\varphi`)

.. math::

   \ddot q_{vak} - \ddot q_{nh} = -\lambda\,\Pi_W\bigl(W^{-1} i_{\dot q}\,da\bigr),

with :math:`\Pi_W` the :math:`W`-orthogonal projection onto :math:`\ker a`.
It vanishes for every multiplier iff :math:`i_{\dot q}da \parallel a` for every
constrained velocity, i.e. iff :math:`a\wedge da = 0` (Frobenius).  The initial
multiplier :math:`\lambda(t_0)` is a free datum of the vakonomic problem
(a correction to :cite:t:`CronstromRaita2009`, see :ref:`theory-errata`).

* **Integrable:** :math:`x\dot y - y\dot x = 0` (the bundled
  ``conformal_constraint``; integrating factor :math:`1/(x^2+y^2)`, the
  particle keeps its polar angle).  The vakonomic motion coincides with the
  nonholonomic one for *any* :math:`\lambda(0)`, here :math:`\lambda(0) = 0.7`.
* **Not integrable:** :math:`\dot z - y\dot x = 0` (the nonholonomic
  particle).  With :math:`\lambda(0) = 0` the accelerations agree at
  :math:`t = 0` and the trajectories separate at third order,
  :math:`q_{vak}(t) - q_{nh}(t) = c\,t^3 + O(t^4)` with
  :math:`c = \tfrac16\,(\partial\ddot q_{vak}/\partial\lambda)\,\dot\lambda|_{\lambda = 0}`
  (``compare_methods(...).third_order_difference``); with
  :math:`\lambda(0) \ne 0` already at second order.  The log-log figure shows the
  computed separation on the predicted :math:`|c|\,t^3` line.
"""

import matplotlib.pyplot as plt
import numpy as np

from anholo import plotting
from anholo.analysis.comparison import compare_methods
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# A helper: both motions from one state.

def motions(system, q0, qdot0, lambda0, T, **times):
    nh = simulate(compile_system(from_system(system, "nonholonomic")), T, q0, qdot0, **times)
    vak = simulate(compile_system(from_system(system, "vakonomic")), T, q0, qdot0, lambda0, **times)
    return nh, vak

# %%
# The integrable constraint: one motion for any multiplier.

# Integrable: x y_dot - y x_dot = 0.
conformal = System.load("conformal_constraint")
conformal_cmp = compare_methods(conformal.lagrangian, conformal.kinematic_constraints())
print("x*y_dot - y*x_dot:", "; ".join(conformal_cmp.statements()))
c_nh, c_vak = motions(conformal, [1.0, 0.5, 0.0], [0.4, 0.2, 0.3], [0.7], 5.0, points=101)
integrable_gap = np.abs(c_nh.q - c_vak.q).max()
print(f"  lambda(0) = 0.7: max |q_nh - q_vak| = {integrable_gap:.1e}")

# %%
# The nonholonomic particle: the predicted third-order coefficient and the
# computed separation.

# Not integrable: z_dot - y x_dot = 0, lambda(0) = 0.
particle = System.load("nonholonomic_particle")
particle_cmp = compare_methods(particle.lagrangian, particle.kinematic_constraints())
print("z_dot - y*x_dot:", "; ".join(particle_cmp.statements()))
q0, qdot0 = [0.0, 0.5, 0.0], [1.0, 0.5, 0.5]
state0 = dict(zip(particle.chart.coordinates + particle.chart.velocities, q0 + qdot0))
c3 = np.array([float(c.subs(state0)) for c in particle_cmp.third_order_difference.values()])
print("  third-order coefficient c at the initial state:", np.round(c3, 6))
times = np.concatenate([[0.0], np.logspace(-2, 0, 41)])
p_nh, p_vak = motions(particle, q0, qdot0, [0.0], 1.0, t_eval=times)
gap = np.abs(p_nh.q - p_vak.q).max(axis=0)[1:]
ratio = (p_vak.q - p_nh.q)[:, 1] / times[1] ** 3                    # at t = 0.01: ~ c
print("  (q_vak - q_nh)/t^3 at t = 0.01:", np.round(ratio, 6))
_, p_vak2 = motions(particle, q0, qdot0, [0.5], 1.0, t_eval=times)
gap2 = np.abs(p_nh.q - p_vak2.q).max(axis=0)[1:]

# %%
# The separation on a log-log scale, with the predicted :math:`|c|\,t^3`:

fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
t = times[1:]
ax.loglog(t, gap, "o", ms=3, label="z_dot = y x_dot, lambda(0) = 0: max |q_vak - q_nh|")
ax.loglog(t, np.abs(c3).max() * t**3, "-", label="predicted max |c| t^3")
ax.loglog(t, gap2, "s", ms=3, label="z_dot = y x_dot, lambda(0) = 0.5 (order t^2)")
ax.loglog(c_nh.t[1:], np.maximum(np.abs(c_nh.q - c_vak.q).max(axis=0)[1:], 1e-17), "-", lw=1,
          label="x y_dot = y x_dot, lambda(0) = 0.7 (integrable)")
ax.set_xlabel("t")
ax.set_ylabel("separation")
ax.set_ylim(1e-17, 10)
ax.legend(loc="lower right", fontsize="small")
ax.grid(True, which="both", alpha=0.3)

# %%
# The integrable constraint: one motion.

fig = plotting.plot_comparison([c_nh, c_vak], ["nonholonomic", "vakonomic, lambda(0) = 0.7"], ["x", "y", "z"])
fig.axes[0].set_title("x y_dot - y x_dot = 0: one motion")

plt.show()
