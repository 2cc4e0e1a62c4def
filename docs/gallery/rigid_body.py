r"""The free rigid body: Euler's equations from Hamel's, energy and Casimir along a motion.
=======================================================================================

In ZXZ Euler angles :math:`(\varphi, \theta, \psi)` with the body angular
velocities :math:`\Omega^i` as quasi-velocities (the frame dual to the body
angular-velocity one-forms), the structure functions are
:math:`R^k_{ij} = \varepsilon_{ijk}` (:math:`[X_1, X_2] = X_3`, cyclic) and
Hamel's equations :math:`\tfrac{d}{dt} p_i - X_i(L) + R^k_{ij} v^j p_k = 0`
with :math:`L = \tfrac12 \sum_i I_i (\Omega^i)^2` are Euler's equations
(:ref:`theory-hamel`),

.. math::

   I_1\dot\Omega^1 = (I_2 - I_3)\,\Omega^2\Omega^3 \quad\text{(and cyclic)}.

The motion below starts close to a rotation about the intermediate axis
(:math:`I = (1, 2, 3)`, :math:`\Omega(0) = (0.05, 1, 0.05)`), which is
unstable: the body flips over periodically (the tennis-racket effect), so
:math:`\Omega^2` changes sign.  Along the motion the energy
:math:`E = \tfrac12\sum_i I_i(\Omega^i)^2` and the Casimir
:math:`|\Pi|^2 = \sum_i (I_i\Omega^i)^2` (the squared length of the body
angular momentum) are conserved; the second figure shows their relative
drift with the default integrator (DOP853, ``rtol=1e-10``, ``atol=1e-12``).
The body's 3-axis stays well away from the vertical, where the Euler-angle
chart is singular (:math:`\sin\theta = 0`).
"""

import math

import matplotlib.pyplot as plt
import numpy as np

from anholo import plotting
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# The structure functions of the body frame and Hamel's equations:

body = System.load("rigid_body")
print(body.frame.nonzero_structure())
print(body.lagrangian.hamel())

# %%
# A motion close to a rotation about the intermediate axis:

el = compile_system(from_system(body, "euler-lagrange"))

# Body axis 2 along the vertical: (phi, theta, psi) = (0, pi/2, 0); natural velocities u = Omega^i X_i.
q0 = [0.0, math.pi / 2, 0.0]
omega0 = [0.05, 1.0, 0.05]
X = body.frame.vectors.subs(dict(zip(body.chart.coordinates, q0)))
qdot0 = [float(sum(omega0[i] * X[i, A] for i in range(3))) for A in range(3)]

T = 40.0
motion = simulate(el, T, q0, qdot0, points=801)
I = np.array([motion.parameters[name] for name in ("I1", "I2", "I3")], dtype=float)
omega = motion.states[el.state_names.index("v1"):el.state_names.index("v3") + 1]
casimir = ((I[:, None] * omega) ** 2).sum(axis=0)
casimir_drift = np.abs(casimir - casimir[0]) / casimir[0]
energy_drift = motion.energy_drift()
flips = int(np.sum(np.diff(np.sign(omega[1])) != 0))
print(f"Omega2 changes sign {flips} times in t <= {T:g}")
print(f"max relative drift: energy {energy_drift.max():.1e}, Casimir {casimir_drift.max():.1e}")
print(f"sin(theta) stays >= {np.sin(motion.q[1]).min():.2f}")

# %%
# The body angular velocities: :math:`\Omega^2` changes sign at each flip.

fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
for i in range(3):
    ax.plot(motion.t, omega[i], label=f"Omega{i + 1}")
ax.set_xlabel("t")
ax.legend(loc="best", fontsize="small")
ax.grid(True, alpha=0.3)
ax.set_title("body angular velocities (Euler's equations)")

# %%
# The relative drift of the energy and of the Casimir:

fig = plotting.plot_drift(motion)
fig.axes[0].semilogy(motion.t, np.maximum(casimir_drift, 1e-17), label="relative Casimir drift")
fig.axes[0].legend(loc="best", fontsize="small")
fig.axes[0].set_title("conserved quantities")

plt.show()
