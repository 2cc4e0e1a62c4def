r"""The sphere on a turntable, with the correct sign: the centre circles at the rate μ.
===================================================================================

A homogeneous sphere (radius :math:`a`, radius of gyration :math:`k`) rolls
without slipping on a table turning at the rate :math:`\Omega`.  The rolling
conditions are *affine* in the velocities,
:math:`\dot x - a\,\omega_y + \Omega y = 0`, :math:`\dot y + a\,\omega_x - \Omega x = 0`,
and the Lagrange–d'Alembert dynamics of the centre is (:ref:`theory-errata`)

.. math::

   \ddot x = -\mu\,\dot y, \qquad \ddot y = \mu\,\dot x, \qquad
   \mu = \frac{k^2\,\Omega}{a^2 + k^2}:

the velocity of the centre turns at the constant rate :math:`\mu`, in the
sense of the table, and the centre moves on a circle of radius
:math:`|\dot{\mathbf x}|/\mu`.  :cite:t:`Deressa` prints it (eq. (2.17)) with the opposite sign,
which would make the centre circle against the table.  The script derives
:math:`\Gamma_{nh}` from the bundled ``sphere_on_turntable`` (:math:`a = 1`,
:math:`k = 0.6`, :math:`\Omega = 1`, so :math:`\mu = 0.36/1.36`), integrates it,
and draws the computed path of the centre on the circle with the correct sign
and, dashed, the circle the printed sign would give.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

from anholo import plotting
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# The natural accelerations of the centre, from :math:`\Gamma_{nh}`:

system = System.load("sphere_on_turntable")
x, y = system.chart.coordinates[:2]
acc = system.nonholonomic().field().natural_accelerations()
print("x_ddot =", sp.simplify(acc[x]), "   y_ddot =", sp.simplify(acc[y]))

# %%
# One full turn of the centre's velocity, from a state on :math:`C`:

a, k, Omega = 1.0, 0.6, 1.0                                   # the file's [values]
mu = k**2 * Omega / (a**2 + k**2)
# Initial state: centre at (1, 0), Euler angles (phi, theta, psi) = (0, 1, 0), spin rates chosen freely;
# the centre's velocity then follows from the rolling conditions.
x0, y0, phi, theta, psi = 1.0, 0.0, 0.0, 1.0, 0.0
phid, thetad, psid = 0.3, 0.5, -0.4
omega_x = thetad * math.cos(phi) + psid * math.sin(theta) * math.sin(phi)
omega_y = thetad * math.sin(phi) - psid * math.sin(theta) * math.cos(phi)
xd, yd = a * omega_y - Omega * y0, -a * omega_x + Omega * x0
T = 2 * math.pi / mu                                           # one full turn of the centre's velocity
motion = simulate(compile_system(from_system(system, "nonholonomic")), T, [x0, y0, phi, theta, psi],
                  [xd, yd, phid, thetad, psid], points=401)

heading = np.unwrap(np.arctan2(motion.coordinate("y_dot"), motion.coordinate("x_dot")))
rate = np.polyfit(motion.t, heading, 1)[0]
heading_error = np.abs(heading - heading[0] - mu * motion.t).max()
print(f"mu = {mu:.10f}; fitted turning rate of the centre's velocity = {rate:.10f}")
print(f"max |heading(t) - heading(0) - mu t| = {heading_error:.1e};  sin(theta) >= {np.sin(motion.q[3]).min():.2f}")

# %%
# The computed path against the closed-form circles with the two signs:

def circle(sign):
    """The centre under x_ddot = -s mu y_dot, y_ddot = s mu x_dot from the same state (closed form)."""
    w = sign * mu
    t = motion.t
    return (x0 + (xd * np.sin(w * t) - yd * (1 - np.cos(w * t))) / w,
            y0 + (yd * np.sin(w * t) + xd * (1 - np.cos(w * t))) / w)


closed_x, closed_y = circle(+1)
path_error = max(np.abs(motion.coordinate("x") - closed_x).max(), np.abs(motion.coordinate("y") - closed_y).max())
print(f"max distance of the computed centre from the closed-form circle: {path_error:.1e}")
print(f"max |rolling constraint residual| = {np.abs(motion.constraint_residuals()).max():.1e}")

fig = plotting.plot_phase_portrait([motion], "x", "y", ["computed (Gamma_nh)"])
ax = fig.axes[0]
ax.plot(closed_x, closed_y, ":", color="k", lw=2, label="x_ddot = -mu y_dot, y_ddot = mu x_dot")
wrong_x, wrong_y = circle(-1)
ax.plot(wrong_x, wrong_y, "--", color="tab:red", lw=1, label="sign of Deressa, eq. (2.17)")
ax.annotate("", xy=(motion.q[0, 12], motion.q[1, 12]), xytext=(x0, y0),
            arrowprops={"arrowstyle": "->", "color": "tab:blue"})
ax.set_aspect("equal")
ax.legend(loc="best", fontsize="small")
ax.set_title("centre of the sphere, table turning counterclockwise")

plt.show()
