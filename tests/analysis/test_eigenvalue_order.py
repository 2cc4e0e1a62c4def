"""The order in which ``linearize`` lists eigenvalues: at one point real parts within the verdict's threshold
τ count as equal (rounding of a zero real part does not reorder ``±iω`` and the zeros); over a sweep the k-th
eigenvalue stays on one continuous branch.

Oracles: ``numpy.linalg.eigvals`` of a hand-written matrix family with known spectra (a real pair that turns
into an imaginary pair, two real eigenvalues that cross, a double zero), rotated by a fixed orthogonal matrix
so that the solver's output carries rounding noise and comes in its own order; and the classical spectrum of
the upright rolling thin disk, ``0, 0, ±√((4g/r − 12ω²)/5)`` at spin rate ω (stable iff ``ω² > g/(3r)``,
Neimark & Fufaev (1972)).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from anholo.analysis.linear_problem import (STABILITY_THRESHOLD, Linearization, eigenvalue_order,
                                            follow_branches, track_branches)

_Q = np.linalg.qr(np.random.default_rng(7).normal(size=(6, 6)))[0]


def _family(s: float) -> np.ndarray:
    """Eigenvalues ±√(1 − s) (real for s < 1, ±i√(s − 1) above), 0.25 + s/2 and 0.75 − s/2 (crossing each other at
    s = 0.5, the first crossing √(1 − s) too, the second crossing 0 at s = 1.5), 0, 0."""
    D = np.zeros((6, 6))
    D[0, 1], D[1, 0] = 1.0, 1.0 - s      # [[0, 1], [1 - s, 0]]: λ² = 1 − s
    D[2, 2], D[3, 3] = 0.25 + s / 2, 0.75 - s / 2
    return _Q @ D @ _Q.T


def _exact(s: float) -> list:
    root = np.sqrt(complex(1.0 - s))
    return [root, -root, 0.25 + s / 2, 0.75 - s / 2, 0.0, 0.0]


def _linearization(A):
    ev = np.linalg.eigvals(A)
    return Linearization((), A, ev[eigenvalue_order(ev)], np.zeros(len(A)), {})


def test_real_parts_within_the_threshold_count_as_equal():
    rng = np.random.default_rng(1)
    for _ in range(50):
        noise = rng.uniform(-3e-16, 3e-16, 4)
        ev = np.array([2j, 0, 0, -2j]) + noise + 1j * rng.uniform(-1e-17, 1e-17, 4)
        ev = ev[rng.permutation(4)]
        listed = ev[eigenvalue_order(ev)]
        assert np.allclose(listed, [2j, 0, 0, -2j], atol=1e-15)
    # real parts further apart than τ are ordered by real part, whatever the imaginary parts
    ev = np.array([-3 * STABILITY_THRESHOLD + 5j, 0.0, -3 * STABILITY_THRESHOLD - 5j])
    assert np.allclose(ev[eigenvalue_order(ev)], [0.0, ev[0], ev[2]])
    # the exact sort this replaces puts ±2i after a zero whose real part rounded up
    ev = np.array([1e-16, -1e-16 + 2j, 0.0, -1e-16 - 2j])
    assert np.lexsort((-ev.imag, -ev.real))[0] == 0 and eigenvalue_order(ev)[0] == 1


def test_a_sweep_lists_each_eigenvalue_on_its_branch():
    s = np.linspace(0.0, 2.0, 20)  # not at s = 1 (a Jordan block: eigvals only to ~1e-8)
    lins = follow_branches([_linearization(_family(x)) for x in s])
    listed = np.array([r.eigenvalues for r in lins])
    exact = np.array([_exact(x) for x in s])
    for k in range(6):  # column k equals one closed-form branch at every point
        matches = [j for j in range(6) if np.allclose(listed[:, k], exact[:, j], atol=1e-9)]
        assert matches, f"column {k} jumps between branches: {listed[:, k].round(3)}"
    # the crossings are followed through, not swapped: the column that starts at 0.25 ends at 1.25
    k = int(np.argmin(np.abs(listed[0] - 0.25)))
    assert np.allclose(listed[:, k], 0.25 + s / 2, atol=1e-9)
    # ±√(1 − s) becomes ±i√(s − 1) in the same columns, the positive real branch in the upper half plane
    assert np.allclose(listed[:, 0], [np.sqrt(complex(1 - x)) for x in s], atol=1e-9)
    # the solver's own order (by exact real part) jumps: the check above can fail
    raw = np.array([np.linalg.eigvals(_family(x)) for x in s])
    raw = np.array([r[np.lexsort((-r.imag, -r.real))] for r in raw])
    assert not all(any(np.allclose(raw[:, k], exact[:, j], atol=1e-9) for j in range(6)) for k in range(6))


def test_follow_branches_keeps_everything_but_the_order():
    s = np.linspace(0.0, 2.0, 5)
    before = [_linearization(_family(x)) for x in s]
    after = follow_branches(before)
    for b, a in zip(before, after):
        assert a.A is b.A and a.verdict == b.verdict
        assert np.allclose(np.sort_complex(a.eigenvalues), np.sort_complex(b.eigenvalues))
    assert track_branches([]).shape == (0, 0)


def test_rolling_disk_sweep_lists_the_classical_branches():
    """``anholo linearize rolling_disk --sweep v3=0:5:6`` (the README's command): the JSON's k-th eigenvalue
    and the table's k-th column are one closed-form branch: ±√((4g/r − 12ω²)/5), 0, 0."""
    from anholo.cli import main

    out = io.StringIO()
    assert main(["linearize", "rolling_disk", "--states", "lean,v1,v2,v3", "--sweep", "v3=0:5:6", "--json"],
                out=out) == 0
    data = json.loads(out.getvalue())
    g, r = 9.81, 0.5
    for w, res in zip(data["values"], data["results"]):
        ev = np.array([complex(a, b) for a, b in res["eigenvalues"]])
        root = np.sqrt(complex((4 * g / r - 12 * w ** 2) / 5))
        assert np.allclose(ev, [root, 0, 0, -root], atol=1e-8), (w, ev)
    out = io.StringIO()
    assert main(["linearize", "rolling_disk", "--states", "lean,v1,v2,v3", "--sweep", "v3=0:5:6"], out=out) == 0
    lines = out.getvalue().splitlines()
    rows = lines[next(i for i, line in enumerate(lines) if "verdict" in line and "eigenvalues" in line) + 1:]
    assert len(rows) == 6
    for row in rows:
        cells = row.split(None, 2)[2].split(", ")
        assert cells[1] == cells[2] == "0" and not cells[0].startswith("-") and cells[3].startswith(("-", "0-"))


@pytest.mark.parametrize("reverse", [False, True])
def test_order_of_the_sweep_is_the_order_given(reverse):
    """A sweep from 2 down to 0 starts from the listing order at s = 2 and follows the same branches."""
    s = np.linspace(0.0, 2.0, 20)[::-1 if reverse else 1]
    lins = follow_branches([_linearization(_family(x)) for x in s])
    listed = np.array([r.eigenvalues for r in lins])
    first = np.linalg.eigvals(_family(s[0]))
    assert np.allclose(listed[0], first[eigenvalue_order(first)])
    exact = np.array([_exact(x) for x in s])
    for k in range(6):
        assert any(np.allclose(listed[:, k], exact[:, j], atol=1e-9) for j in range(6)), k
