r"""The nonholonomic particle: nonholonomic and vakonomic motions separate.
=======================================================================

A unit particle in :math:`\mathbb R^3`, :math:`L = \tfrac12(\dot x^2 + \dot y^2 + \dot z^2)`,
with the constraint :math:`\dot z = y\,\dot x` (§7 of :cite:t:`CrampinMestdag2010`;
:ref:`theory-worked-examples`).  In the
frame adapted to :math:`D`, :math:`X_1 = \partial_x + y\,\partial_z`,
:math:`X_2 = \partial_y`, :math:`X_3 = \partial_z`, the object of anholonomity is
:math:`R^3_{12} = -1`: :math:`D` is not integrable.  The nonholonomic field is

.. math::

   \dot v^1 = -\frac{y\,v^1 v^2}{1 + y^2}, \qquad \dot v^2 = 0,
   \qquad \mu = \frac{v^1 v^2}{1 + y^2}.

The system is weakly consistent with :math:`\sigma = 0` (always, Thm. 2 of :cite:t:`CrampinMestdag2010`) but
not strongly: :math:`\sigma = 0` fails because :math:`\mu \ne 0`, and the
Chaplygin section :math:`\sigma = -p_3 = -y v^1` fails because
:math:`\sigma_a R^a_{12} v^2 = y v^1 v^2 \neq 0`.  So the vakonomic motion
started from the same state with the multiplier :math:`\lambda(0) = -p_3`
(the natural section) is *not* the nonholonomic one: the figure shows the two
motions from :math:`(x, y, z) = (0, 0.5, 0)`,
:math:`(\dot x, \dot y, \dot z) = (1, 0.5, 0.5)` drifting apart.  Both keep the
constraint exactly (the state is a point of :math:`C`), and the vakonomic motion
conserves the energy :math:`E_L` up to the integration tolerance (last figure).
"""

import matplotlib.pyplot as plt
import numpy as np

from anholo import plotting
from anholo.analysis.consistency import Section, strong_consistency, weak_consistency, zero_section
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# The system file ``nonholonomic_particle`` gives the frame adapted to :math:`D`;
# the curvature, :math:`\Gamma_{nh}`, its multiplier and the three verdicts:

particle = System.load("nonholonomic_particle")
nh = particle.nonholonomic()
field = nh.field()
print("curvature R^k_ij (0-based):", nh.curvature())
print("Gamma_nh:", field.accelerations, " multiplier mu:", field.multipliers)
v1, v2, v3 = nh.bundle.quasi_velocities
minus_p = Section(nh, [-nh.lagrangian.momenta[2].subs(v3, 0)], "-p")      # -p_3|_C = -y v1
verdicts = [weak_consistency(nh, zero_section(nh)), strong_consistency(nh, zero_section(nh)),
            strong_consistency(nh, minus_p)]
for verdict in verdicts:
    print(verdict)

# %%
# Both dynamics from the same state; the vakonomic multiplier starts on the
# natural section, :math:`\lambda(0) = -p_3(0)`:

q0, qdot0 = [0.0, 0.5, 0.0], [1.0, 0.5, 0.5]      # z_dot = y x_dot holds
lambda0 = [-qdot0[2]]                              # lambda(0) = -p_3 = -z_dot(0) for z_dot - y x_dot
T = 10.0
nonholonomic = simulate(compile_system(from_system(particle, "nonholonomic")), T, q0, qdot0, points=201)
vakonomic = simulate(compile_system(from_system(particle, "vakonomic")), T, q0, qdot0, lambda0, points=201)

separation = np.abs(nonholonomic.q - vakonomic.q).max(axis=0)
residual = max(np.abs(nonholonomic.constraint_residuals()).max(), np.abs(vakonomic.constraint_residuals()).max())
print(f"max |q_nh - q_vak| at t = 1: {separation[20]:.3g}, at t = {T:g}: {separation[-1]:.3g}")
print(f"largest constraint residual of the two motions: {residual:.1e}")

# %%
# The coordinates along the two motions:

fig = plotting.plot_comparison([nonholonomic, vakonomic], ["nonholonomic", "vakonomic"], ["x", "y", "z"])
fig.axes[0].set_title("Nonholonomic particle: the same initial state, two dynamics")

# %%
# The paths in the :math:`(x, y)`-plane:

fig = plotting.plot_phase_portrait([nonholonomic, vakonomic], "x", "y", ["nonholonomic", "vakonomic"])

# %%
# Energy and constraint along the vakonomic motion:

fig = plotting.plot_drift(vakonomic)
fig.axes[0].set_title("vakonomic motion: energy and constraint")

plt.show()
