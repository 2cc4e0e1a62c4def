r"""Parallel parking: optimal inputs, and the sub-Riemannian geodesic as a vakonomic motion.
========================================================================================

A car-like robot: :math:`(x, y)` the midpoint of the rear axle, :math:`\theta` the heading,
:math:`\phi` the steering angle, :math:`l` the wheelbase,
:math:`L = \tfrac12 m(\dot x^2 + \dot y^2) + \tfrac12 I\dot\theta^2 + \tfrac12 J\dot\phi^2`.
Neither axle slides sideways:

.. math::

   -\sin\theta\,\dot x + \cos\theta\,\dot y = 0, \qquad
   -\sin(\theta + \phi)\,\dot x + \cos(\theta + \phi)\,\dot y + l\cos\phi\,\dot\theta = 0,

so :math:`D` is spanned by :math:`X_1 = \cos\phi(\cos\theta\,\partial_x + \sin\theta\,\partial_y)
+ \tfrac{\sin\phi}{l}\partial_\theta` (driving) and :math:`X_2 = \partial_\phi` (steering); their
brackets span :math:`TQ` (Chow's theorem), so the car can be moved sideways.  A motor force
``drive`` along the heading and a steering torque ``steer`` are the inputs (the system file's
``inputs``, :doc:`../forces`).

**1. Optimal inputs.**  :func:`~anholo.numerics.optimal_control.optimal_control` hands anholo's
equations of motion (state :math:`(q, v^\alpha)` on :math:`C`, :math:`M\dot v = F(q, v, u)`) to CasADi
and IPOPT by Hermite–Simpson collocation (:doc:`../optimal_control`): from rest at the origin to rest
half a wheelbase to the left, in :math:`T = 6`, with :math:`|\phi| \le 0.6`, minimising
:math:`\int \tfrac12(\mathrm{drive}^2 + \mathrm{steer}^2)\,dt`.  Integrating the nonholonomic field with
the computed inputs (:func:`~anholo.numerics.simulate`) retraces the optimal motion.

**2. The sub-Riemannian geodesic.**  With the free velocities as controls
(:math:`\dot q = X_\alpha u^\alpha`) and the cost :math:`\int L\,dt = \int \tfrac12 g(\dot q, \dot q)\,dt`, the
optimal paths are the geodesics of the sub-Riemannian metric :math:`g|_D`, and the normal ones are the
vakonomic motions of :math:`L` with the constraints (:cite:t:`Bloch2003`, Ch. 7;
:cite:t:`Montgomery2002`).  The optimal path is compared with the vakonomic motion started from its
initial point, whose initial velocity and multipliers are fitted by shooting to its end point (the
multipliers start from the ones read off IPOPT's multipliers, the costate :math:`p = -(\partial L/\partial
\dot q + \lambda_a\kappa_a)`): the two agree to the collocation accuracy, :math:`O(h^4)`.  The
nonholonomic (Lagrange–d'Alembert) motion with the same initial velocity goes elsewhere: the two dynamics
are not consistent (:doc:`../consistency`).
"""

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from scipy.optimize import least_squares

from anholo.io.systemfile import parse_system
from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.optimal_control import optimal_control
from anholo.system import System

CAR = """
name = "Car-like robot"
description = "Rear axle midpoint (x, y), heading theta, steering angle phi, wheelbase l."
coordinates = ["x", "y", "theta", "phi"]
parameters = ["m", "I", "J", "l"]
inputs = ["drive", "steer"]
lagrangian = "m*(x_dot^2 + y_dot^2)/2 + I*theta_dot^2/2 + J*phi_dot^2/2"
constraints = [
    "-sin(theta)*x_dot + cos(theta)*y_dot",
    "-sin(theta + phi)*x_dot + cos(theta + phi)*y_dot + l*cos(phi)*theta_dot",
]
forces = ["drive*cos(theta)", "drive*sin(theta)", "0", "steer"]

[values]
m = 1
I = 0.5
J = 0.1
l = 1
"""

car = System.from_spec(parse_system(CAR))
T = 6.0
start = {"x": 0, "y": 0, "theta": 0, "phi": 0}
goal = {"x": 0, "y": 0.5, "theta": 0, "phi": 0}

# %%
# 1. The dynamic problem: from rest to rest, the inputs as controls.

ode = from_system(car, "nonholonomic")          # the state anholo simulates: (x, y, theta, phi, v1, v2)
print("state:", ode.state)
parked = optimal_control(car, T, {**start, "v1": 0, "v2": 0}, {**goal, "v1": 0, "v2": 0},
                         bounds={"phi": (-0.6, 0.6)}, nodes=40)
print(parked)

# anholo's own simulation of the nonholonomic field under the computed inputs (open loop)
nonholonomic = compile_system(ode)
replay = simulate(nonholonomic, T, parked.q[:, 0], parked.qdot[:, 0], t_eval=parked.t,
                  inputs={"drive": lambda t, s: parked.control(t)[0], "steer": lambda t, s: parked.control(t)[1]})
replay_gap = np.abs(replay.q - parked.q).max()
print(f"simulated with the optimal inputs: largest distance to the optimal motion {replay_gap:.2e}")

# %%
# 2. The kinematic energy problem and the vakonomic motion through the same end points.

vakonomic = compile_system(from_system(car, "vakonomic"))
velocity = sp.lambdify([ode.state], [e.subs(ode.values) for e in ode.natural_velocities])   # q_dot = X_alpha v^alpha
zero_inputs = {"drive": 0.0, "steer": 0.0}


def kappa(q):
    th, ph = q[2], q[3]
    return np.array([[-np.sin(th), np.cos(th), 0, 0], [-np.sin(th + ph), np.cos(th + ph), np.cos(ph), 0]])


def vakonomic_fit(geodesic):
    """Fit (v(0), lambda(0)) so that the vakonomic motion from q(0) ends at q(T); compare the paths."""
    q0, qd0 = geodesic.q[:, 0], geodesic.qdot[:, 0]
    p0 = (3 * geodesic.costate[:, 0] - geodesic.costate[:, 1]) / 2          # the costate at t = 0
    momentum = np.array([1.0, 1.0, 0.5, 0.1]) * qd0                        # dL/dq_dot (m, m, I, J)
    lam_costate = np.linalg.lstsq(kappa(q0).T, -p0 - momentum, rcond=None)[0]

    def run(p, t_eval):
        qdot = np.asarray(velocity(np.concatenate([q0, p[:2]])), float)
        return simulate(vakonomic, T, q0, qdot, list(p[2:]), t_eval=t_eval, inputs=zero_inputs)

    fit = least_squares(lambda p: run(p, [T]).q[:, -1] - geodesic.q[:, -1], np.concatenate([geodesic.v[:, 0], lam_costate]),
                        xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return run(fit.x, geodesic.t), fit, lam_costate


results = {}
for nodes in (40, 80):
    geodesic = optimal_control(car, T, start, goal, mode="kinematic", cost="lagrangian", nodes=nodes)
    path, fit, lam_costate = vakonomic_fit(geodesic)
    results[nodes] = (geodesic, path, np.abs(path.q - geodesic.q).max())
    print(f"N = {nodes}: cost {geodesic.cost:.8f}; lambda(0) from the costate {lam_costate.round(4)}, "
          f"fitted {fit.x[2:].round(4)}; vakonomic path - optimal path: {results[nodes][2]:.2e}")
geodesic, path, gap = results[40]
print(geodesic)
order = np.log2(results[40][2] / results[80][2])
print(f"the gap shrinks like h^{order:.1f} (Hermite-Simpson: h^4)")

# the nonholonomic motion with the same initial velocity (no inputs)
free = simulate(nonholonomic, T, path.q[:, 0], path.qdot[:, 0], t_eval=geodesic.t, inputs=zero_inputs)
separation = np.abs(free.q - geodesic.q).max()
print(f"nonholonomic motion with the same initial velocity: {separation:.2f} away")

# %%
# The paths in the plane, the inputs and the steering angle.

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
ax = axes[0]
ax.plot(parked.q[0], parked.q[1], label="dynamic optimum (inputs)")
ax.plot(geodesic.q[0], geodesic.q[1], lw=3, alpha=0.4, label="energy optimum (kinematic)")
ax.plot(path.q[0], path.q[1], "k--", lw=1, label="vakonomic motion")
ax.plot(free.q[0], free.q[1], ":", label="nonholonomic motion")
ax.set_xlim(-1.2, 1.6)
ax.set_ylim(-1.1, 1.0)
ax.set_aspect("equal")
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.legend(fontsize=7, loc="lower left")
ax = axes[1]
for row, name in zip(parked.u, parked.input_names):
    ax.plot(parked.t, row, label=name)
ax.set_xlabel("t")
ax.set_title("optimal inputs", fontsize=9)
ax.legend(fontsize=7)
ax = axes[2]
ax.plot(parked.t, parked.q[3], label=r"$\phi$ (dynamic)")
ax.plot(geodesic.t, geodesic.q[3], label=r"$\phi$ (energy)")
ax.axhline(0.6, color="grey", lw=0.5)
ax.axhline(-0.6, color="grey", lw=0.5)
ax.set_xlabel("t")
ax.legend(fontsize=7)
fig.tight_layout()
plt.show()
