"""The discrete Hamel scheme (``simulate(method="hamel", step=h)``) in Maggi's adapted frame.

Oracles: the contact oscillator's coordinate multiplier equations written in the test (scipy DOP853 at
tight tolerance) for the order, the constraint as written for the discrete constraint, the pendulum
``l φ̈ = −g sin φ`` for holonomic constraints, and the frame: its columns span the kernel of the
constraint forms (checked against the constraint matrix itself).
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from anholo.numerics import simulate
from anholo.numerics.discrete_hamel import adapted_basis
from anholo.system import System

from oracles import CONTACT_OSCILLATOR, contact_reference


@pytest.fixture(scope="module")
def contact(tmp_path_factory):
    path = tmp_path_factory.mktemp("systems") / "contact.toml"
    path.write_text(CONTACT_OSCILLATOR)
    return System.load(str(path))


def test_adapted_basis_spans_the_kernel_with_unit_free_block():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(2, 5))
    B = adapted_basis(A, [1, 3])
    assert np.abs(A @ B).max() < 1e-13
    assert np.allclose(B[[0, 2, 4]], np.eye(3))
    assert np.linalg.matrix_rank(B) == 3


def test_order_two_and_discrete_constraint_on_the_contact_oscillator(contact):
    q0, qd0 = [0.0, 1.0, 1.0], [-1.0, 0.5, 1.0]
    times = np.linspace(0, 5, 6)
    ref = np.vstack(contact_reference(q0, qd0, times))
    errors = []
    for h in (0.05, 0.025):
        tr = simulate(contact, (0, 5), q0, qd0, method="hamel", step=h, t_eval=times)
        errors.append(np.abs(np.vstack([tr.q, tr.qdot]) - ref).max())
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.15, errors
    h = 0.1
    tr = simulate(contact, (0, 50), q0, qd0, method="hamel", step=h)
    x, y, z = tr.q
    discrete = (np.diff(x) + 0.5 * (y[1:] + y[:-1]) * np.diff(z)) / h  # κ(q̄)(q1 − q0)/h
    assert np.abs(discrete).max() < 1e-12
    left = (np.diff(x) + y[:-1] * np.diff(z)) / h
    assert np.abs(left).max() > 1e-3


def test_holonomic_pendulum_in_the_frame():
    system = System.load("nonminimal_pendulum")
    phi0 = 1.2
    times = np.linspace(0, 3, 4)
    sol = solve_ivp(lambda t, s: [s[1], -9.81 * math.sin(s[0])], (0, 3), [phi0, 0.0], method="DOP853",
                    rtol=1e-13, atol=1e-14, t_eval=times)
    tr = simulate(system, (0, 3), [math.cos(phi0), math.sin(phi0)], [0.0, 0.0], method="hamel", step=0.002,
                  t_eval=times)
    assert np.abs(tr.q - np.array([np.cos(sol.y[0]), np.sin(sol.y[0])])).max() < 1e-3
    assert np.abs(tr.holonomic_residuals()).max() < 1e-12
