r"""A non-homogeneous constraint: the Chetaev motion does not conserve the energy.
==============================================================================

A unit particle under gravity with the nonlinear constraint
:math:`\varphi = \dot z - \dot x^2 - \dot y = 0` (§4 of :cite:t:`Talamucci2025`; :ref:`theory-chetaev`).
Chetaev's rule takes the virtual displacements with
:math:`\partial\varphi/\partial\dot q\cdot\delta q = 0`, i.e.
:math:`-2\dot x\,\delta x - \delta y + \delta z = 0`, and gives
:math:`E_A(L) = \lambda\,\partial\varphi/\partial\dot q^A` with
:math:`\lambda = g/(2 + 4\dot x^2)`.  Solved for the dependent velocity,
:math:`\dot z = \alpha = \dot x^2 + \dot y`, so
:math:`\bar\alpha - \alpha = (\partial\alpha/\partial\dot x)\dot x + (\partial\alpha/\partial\dot y)\dot y - \alpha = \dot x^2`:
the constraint is not homogeneous in the velocities and the constraint
force does work,

.. math::

   \frac{dE}{dt} = \lambda\,\bigl(\dot q^A\,\partial\varphi/\partial\dot q^A\bigr)
   = -\lambda\,\dot x^2 = -\frac{g\,\dot x^2}{2 + 4\dot x^2},
   \qquad E = \tfrac12|\dot q|^2 + g z .

Since :math:`\ddot x = -g\dot x/(1 + 2\dot x^2)`, :math:`\tfrac{d}{dt}\,\dot x^2/4 = \dot x\ddot x/2`
equals this rate, so :math:`E - \dot x^2/4` is conserved — the quantity the
library's energy balance predicts.  Since :math:`\dot x` decays (like
:math:`e^{-gt}` once it is small), the energy drops by :math:`\dot x(0)^2/4`
within a fraction of a second and then stays.  The figure shows :math:`E(t) - E(0)`
falling by the amount :math:`\dot x^2/4` loses, while :math:`E - \dot x^2/4`
stays constant to the integration tolerance.  The Chetaev state is
:math:`(q, \dot q)`, so the constraint is kept by the integration (its residual
stays below :math:`10^{-9}`), not by construction as for the nonholonomic
field.
"""

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

from anholo import plotting
from anholo.analysis.diagnostics import alpha_bar_minus_alpha, energy_balance
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# The Chetaev field of the bundled ``nonhomogeneous_counterexample`` and its
# energy balance:

system = System.load("nonhomogeneous_counterexample")
chetaev = system.chetaev()
field = chetaev.field()
balance = energy_balance(field)
print("alpha_bar - alpha =", alpha_bar_minus_alpha(chetaev.constraints)[0])
print("lambda =", field.natural_multipliers()[0])
print("dE/dt =", sp.factor(balance.energy_rate), "  energy conserved:", balance.conserved)

# %%
# A motion, with the energy and the predicted conserved quantity along it:

q0, qdot0 = [0.1, -0.2, 0.3], [0.7, -0.4, 0.7**2 - 0.4]      # z_dot = x_dot^2 + y_dot
motion = simulate(compile_system(from_system(system, "chetaev")), 1.5, q0, qdot0, points=151)
E = motion.energy()
xdot = motion.coordinate("x_dot")
predicted = E - xdot**2 / 4
energy_change = E[-1] - E[0]
predicted_drift = np.abs(predicted - predicted[0]).max()
residual = np.abs(motion.constraint_residuals()).max()
print(f"E(1.5) - E(0) = {energy_change:.4f};  max |(E - x_dot^2/4)(t) - (E - x_dot^2/4)(0)| = {predicted_drift:.1e}")
print(f"max |phi| = {residual:.1e}")

# %%
# The energy falls by what :math:`\dot x^2/4` loses:

fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
ax.plot(motion.t, E - E[0], label="E(t) - E(0)")
ax.plot(motion.t, predicted - predicted[0], "--", label="(E - x_dot^2/4)(t) - (E - x_dot^2/4)(0)")
ax.set_xlabel("t")
ax.legend(loc="best", fontsize="small")
ax.grid(True, alpha=0.3)
ax.set_title("Chetaev motion with z_dot = x_dot^2 + y_dot")

# %%
# Energy and constraint residual along the motion:

plotting.plot_drift(motion)

plt.show()
