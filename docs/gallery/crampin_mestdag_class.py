r"""The Crampin–Mestdag class: the vertical disk is consistent, the knife edge is not.
==================================================================================

The class of systems of §7.1 of :cite:t:`CrampinMestdag2010`: coordinates
:math:`(r_1, r_2, s^1, \dots, s^k)`, constraints
:math:`\dot s^i = A_i(r_2)\,\dot r_1` and
:math:`L = \tfrac12\bigl(I_1\dot r_1^2 + I_2\dot r_2^2 + \sum_i m_i (\dot s^i)^2\bigr)`
(:ref:`theory-worked-examples`).  The translations in :math:`s` make it a Chaplygin system: in the
Chaplygin frame :math:`X_1 = \partial_{r_1} + A_i\,\partial_{s^i}`,
:math:`X_2 = \partial_{r_2}`, :math:`X_{2+i} = \partial_{s^i}` the curvature is
:math:`R^{2+i}_{12} = -A_i'(r_2)`, the momenta are :math:`p_i = m_i \dot s^i`
and the Chaplygin condition :math:`p_a R^a_{\alpha\beta} v^\beta = 0` on
:math:`C` reads

.. math::

   \sum_i m_i A_i(r_2) A_i'(r_2) = 0,

i.e. the coefficient :math:`I_1 + \sum_i m_i A_i^2` of :math:`(v^1)^2` in
:math:`L_c` is constant.  Then the section :math:`\sigma = -p` is strongly
consistent (:ref:`theory-chaplygin`): the vakonomic motion whose multipliers start at
:math:`\lambda(0) = -p(0)` *is* the nonholonomic motion.  The script asks
:func:`~anholo.analysis.consistency.strong_consistency` for the verdict on
:math:`\sigma = -p` of three members (the printed output), then integrates two
of them.

* Vertical rolling disk, :math:`A = (R\cos r_2, R\sin r_2)`, :math:`m_1 = m_2 = m`:
  :math:`\sum_i m A_i A_i' = mR^2(-\cos r_2 \sin r_2 + \sin r_2\cos r_2) = 0` —
  consistent (with unequal :math:`m_1, m_2` it would be consistent iff
  :math:`m_1 = m_2`).  The two computed motions agree to the integration tolerance
  (top figure; the difference is plotted on a log scale in the bottom one).
* Knife edge (flat, no gravity), :math:`A = \tan r_2`:
  :math:`A A' = \tan r_2 / \cos^2 r_2 \neq 0` — not consistent; from the same
  state and :math:`\lambda(0) = -p(0)` the motions separate.
* Nonholonomic particle, :math:`A = r_2`: :math:`A A' = r_2 \neq 0` — not
  consistent (its motions are on :doc:`particle`).

The written constraints are :math:`\dot s^i - A_i \dot r_1`, i.e. exactly the
forms :math:`\theta^{2+i}(u)`, so the written multipliers equal the frame
components: :math:`\lambda'_i(0) = \sigma_i = -m_i \dot s^i(0)`.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

from anholo import plotting
from anholo.analysis.consistency import Section, strong_consistency
from anholo.examples import crampin_mestdag_class
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System

# %%
# Two helpers: the verdict on :math:`\sigma = -p` for a member given by its
# :math:`A_i`, and both motions of a member from one state.

T = 8.0


def minus_p_verdict(A, masses=None):
    """Strong consistency of sigma = -p for a member; in its Chaplygin frame p_a = dL/dv^a (a: the d/ds_i)."""
    nh = System.from_spec(crampin_mestdag_class(A, masses)).nonholonomic()
    v = nh.bundle.quasi_velocities
    return strong_consistency(nh, Section(nh, [-nh.restrict(nh.lagrangian.expr.diff(va)) for va in v[nh.m:]], "-p"))


def both_motions(A, q0, qdot0, title, masses=None):
    system = System.from_spec(crampin_mestdag_class(A, masses, name=title))   # every parameter defaults to 1
    k = len(A)
    lambda0 = [-qdot0[2 + i] for i in range(k)]          # -p_i(0) = -m_i s_i_dot(0), m_i = 1
    nh = simulate(compile_system(from_system(system, "nonholonomic")), T, q0, qdot0, points=161)
    vak = simulate(compile_system(from_system(system, "vakonomic")), T, q0, qdot0, lambda0, points=161)
    return nh, vak

# %%
# The vertical disk and the knife edge from states on :math:`C`:

# Vertical disk: R = 1, r1 = rolling angle, r2 = heading; x_dot = cos(r2) r1_dot, y_dot = sin(r2) r1_dot.
disk_A = ["R*cos(r2)", "R*sin(r2)"]
r2, r1dot, r2dot = 0.3, 1.0, 0.7
disk_nh, disk_vak = both_motions(disk_A, [0, r2, 0, 0], [r1dot, r2dot, math.cos(r2) * r1dot, math.sin(r2) * r1dot],
                                 "vertical disk", ["m", "m"])
# Knife edge: s_dot = tan(r2) r1_dot; r2 stays in (-pi/2, pi/2) over the run.
knife_A = ["tan(r2)"]
r2, r1dot, r2dot = 0.0, 1.0, 0.15
knife_nh, knife_vak = both_motions(knife_A, [0, r2, 0], [r1dot, r2dot, math.tan(r2) * r1dot], "knife edge")

# %%
# The verdicts, and how far apart the motions get:

verdicts = {"vertical disk": minus_p_verdict(disk_A, ["m", "m"]), "knife edge": minus_p_verdict(knife_A),
            "nonholonomic particle": minus_p_verdict(["r2"])}
for name, verdict in verdicts.items():
    print(f"{name}: {verdict.reason}")
disk_gap = np.abs(disk_nh.q - disk_vak.q).max(axis=0)
knife_gap = np.abs(knife_nh.q - knife_vak.q).max(axis=0)
print(f"vertical disk: max |q_nh - q_vak| = {disk_gap.max():.1e};  knife edge: max |q_nh - q_vak| = {knife_gap.max():.2f}")

# %%
# The vertical disk: one motion.

fig = plotting.plot_comparison([disk_nh, disk_vak], ["nonholonomic", "vakonomic"], ["r1", "s1", "s2"])
fig.axes[0].set_title("vertical disk, lambda(0) = -p(0): one motion")

# %%
# The knife edge: two motions.

fig = plotting.plot_comparison([knife_nh, knife_vak], ["nonholonomic", "vakonomic"], ["r1", "r2", "s1"])
fig.axes[0].set_title("knife edge, lambda(0) = -p(0): two motions")

# %%
# The distance between the motions, on a log scale:

fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
ax.semilogy(disk_nh.t, np.maximum(disk_gap, 1e-17), label="vertical disk")
ax.semilogy(knife_nh.t, np.maximum(knife_gap, 1e-17), label="knife edge")
ax.set_xlabel("t")
ax.set_ylabel("max |q_nh - q_vak|")
ax.legend(loc="best", fontsize="small")
ax.grid(True, which="both", alpha=0.3)

plt.show()
