#!/usr/bin/env python
"""Benchmark: structure-preserving integrators against DOP853 at equal cost over long times.

Methods (docs/integrators.rst):

* ``variational`` — the discrete Lagrange–d'Alembert scheme, midpoint discrete Lagrangian
  (Cortés & Martínez 2001; McLachlan & Perlmutter 2006), fixed step h;
* ``hamel`` — the discrete Hamel form in Maggi's adapted frame (Ball & Zenkov 2015), same h;
* ``DOP853`` — scipy's order-8 Runge–Kutta on anholo's compiled nonholonomic field, at a *fixed* step
  chosen so that it makes the same number of evaluations as the variational run (every step accepted:
  ``first_step = max_step = H``, tolerances that accept any error estimate).  Equal cost here means
  equal numbers of evaluations of the compiled functions (one Newton iteration of the variational scheme
  = one evaluation of its fused residual and Jacobian; one stage of DOP853 = one evaluation of the
  field); wall times are reported too.

Systems: the McLachlan–Perlmutter contact oscillator (constraint ``dx + y dz = 0``,
``H = ½(|q̇|² + |q|² + ε x² z²)``, the integral ``H − H_y``, ``H_y = ½(ẏ² + y²)``), the Chaplygin sleigh,
the rolling disk, the rattleback (Kane & Levinson (1982) parameters; spin −5 rad/s, 0.5° of roll and of
pitch, 50 s, the time of the spin reversal by every method), and a non-reversible variant of the
nonholonomic particle in the spirit of Modin & Verdier (2020): constraint ``ż = y ẋ``, a gyroscopic term
``(b/2)(x ẏ − y ẋ)`` (which breaks the reversing symmetry ``(q, q̇) ↦ (q, −q̇)`` of every natural
system) and a quartic potential; energy ``½|q̇|² + V`` is conserved.  (The exact test problems of
Modin & Verdier were not available to the author of this benchmark; this is a problem built on their
criterion, not a reproduction.)

Errors are the relative errors of the integral at the output times (``--points`` samples, not every
step).  Run from the repository root::

    python benchmarks/bench_integrators.py           # 10^6 steps for the contact oscillator, 10^5 others
    python benchmarks/bench_integrators.py --quick   # 10^4 steps each

Prints a table, writes ``benchmarks/results/integrators.json`` and the figure
``docs/_static/integrators_energy.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

import numpy as np

from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.variational import discrete_mechanics
from anholo.system import System

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CONTACT = """
name = "Contact oscillator"
coordinates = ["x", "y", "z"]
parameters = ["eps"]
lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2 - (x^2 + y^2 + z^2 + eps*x^2*z^2)/2"
constraints = ["x_dot + y*z_dot"]
[values]
eps = 0.1
"""

NONREVERSIBLE = """
name = "Gyroscopic nonholonomic particle"
coordinates = ["x", "y", "z"]
parameters = ["b", "eps", "d"]
lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2 + b*(x*y_dot - y*x_dot)/2 - (x^2 + y^2)/2 - eps*(x^4 + y^4)/4 - d*x*y"
constraints = ["z_dot - y*x_dot"]
[values]
b = 0.5
eps = 0.2
d = 0.3
"""


def contact_integral(tr):
    x, y, z = tr.q
    xd, yd, zd = tr.qdot
    return 0.5 * (xd ** 2 + zd ** 2 + x ** 2 + z ** 2 + 0.1 * x ** 2 * z ** 2)  # H − H_y


def energy(tr):
    return tr.energy()


def fixed_dop853(compiled, T, q0, qd0, H, points):
    """DOP853 at the fixed step H (every step accepted)."""
    return simulate(compiled, (0, T), q0, qd0, method="DOP853", rtol=1e3, atol=1e3, first_step=H, max_step=H,
                    points=points)


def run_case(name, system, q0, qd0, h, steps, integral, points, label):
    T = h * steps
    mech = discrete_mechanics(system)
    compiled = compile_system(from_system(system))
    out = {"system": name, "h": h, "steps": steps, "T": T, "integral": label, "methods": {}}
    curves, runs = {}, {}
    for method in ("variational", "hamel"):
        start = time.perf_counter()
        tr = simulate(mech, (0, T), q0, qd0, method=method, step=h, points=points)
        wall = time.perf_counter() - start
        I = integral(tr)
        err = np.abs(I - I[0]) / max(abs(I[0]), 1e-300)
        out["methods"][method] = {"evaluations": int(tr.nfev), "wall_s": wall, "max_rel_error": float(err.max()),
                                  "final_rel_error": float(err[-1]),
                                  "max_constraint_residual": float(np.abs(tr.constraint_residuals()).max())
                                  if tr.constraint_residuals().size else 0.0}
        curves[method] = (tr.t, err)
        runs[method] = tr
        nfev = tr.nfev
    H = T * 12.0 / nfev  # DOP853: 12 evaluations per accepted step
    start = time.perf_counter()
    tr = fixed_dop853(compiled, T, q0, qd0, H, points)
    wall = time.perf_counter() - start
    I = integral(tr)
    err = np.abs(I - I[0]) / max(abs(I[0]), 1e-300)
    out["methods"]["DOP853"] = {"evaluations": int(tr.nfev), "wall_s": wall, "step": H,
                                "max_rel_error": float(err.max()), "final_rel_error": float(err[-1]),
                                "max_constraint_residual": float(np.abs(tr.constraint_residuals()).max())}
    curves["DOP853"] = (tr.t, err)
    runs["DOP853"] = tr
    return out, curves, runs


def rattleback_initial(system, spin=-5.0, tilt_deg=0.5):
    """Roll = pitch = tilt, yaw rate = spin; (ẋ, ẏ) from the rolling constraints (linear in them)."""
    mech = discrete_mechanics(system)
    p = mech.parameter_vector()
    t = math.radians(tilt_deg)
    q0 = np.array([0.0, t, t, 0.0, 0.0])
    base = np.array([spin, 0.0, 0.0, 0.0, 0.0])

    def phi(u):
        return mech.constraint_functions(q0[:, None], np.asarray(u)[:, None], p)[:, 0]

    r0 = phi(base)
    M = np.column_stack([phi(base + e) - r0 for e in (np.eye(5)[3], np.eye(5)[4])])
    xy = np.linalg.solve(M, -r0)
    return q0, np.array([spin, 0.0, 0.0, *xy])


def reversal_time(tr):
    """The first time the yaw rate changes sign (linear interpolation between samples)."""
    w = tr.qdot[0]
    s = np.sign(w[0])
    idx = np.nonzero(np.sign(w[1:]) != s)[0]
    if not idx.size:
        return None
    i = idx[0]
    return float(tr.t[i] + (tr.t[i + 1] - tr.t[i]) * w[i] / (w[i] - w[i + 1]))


def rattleback_case(h, points):
    system = System.load("rattleback")
    q0, qd0 = rattleback_initial(system)
    T = 50.0
    steps = int(round(T / h))
    out, curves, runs = run_case("rattleback (Kane & Levinson 1982)", system, q0, qd0, h, steps, energy, points,
                                 "energy")
    compiled = compile_system(from_system(system))
    times = {m: reversal_time(tr) for m, tr in runs.items()}
    start = time.perf_counter()
    ref = simulate(compiled, (0, T), q0, qd0, method="DOP853", rtol=1e-11, atol=1e-12, points=points)
    times["DOP853 rtol 1e-11 (reference)"] = reversal_time(ref)
    out["reference"] = {"evaluations": int(ref.nfev), "wall_s": time.perf_counter() - start,
                        "max_rel_energy_error": float(ref.energy_drift().max())}
    out["reversal_time_s"] = times
    out["initial"] = {"q0": q0.tolist(), "qdot0": qd0.tolist()}
    return out, curves


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--quick", action="store_true", help="10^4 steps per system")
    args = ap.parse_args()
    long_steps = 10_000 if args.quick else 1_000_000
    steps = 10_000 if args.quick else 100_000
    points = 1001
    import tempfile

    tmp = Path(tempfile.mkdtemp())
    (tmp / "contact.toml").write_text(CONTACT)
    (tmp / "gyro.toml").write_text(NONREVERSIBLE)
    th, u, w, a = 0.3, 1.0, 0.7, 0.5
    cases = [
        ("contact oscillator", System.load(str(tmp / "contact.toml")), [0.0, 1.0, 1.0], [-1.0, 0.5, 1.0], 0.1,
         long_steps, contact_integral, "H - H_y"),
        ("Chaplygin sleigh", System.load("chaplygin_sleigh"), [0.0, 0.0, th],
         [math.cos(th) * u - math.sin(th) * a * w, math.sin(th) * u + math.cos(th) * a * w, w], 0.05, steps,
         energy, "energy"),
        ("rolling disk", System.load("rolling_disk"), [0.0, 0.0, 0.0, 0.3, 0.0],
         [0.5 * math.cos(0.0) * 4.0, 0.5 * math.sin(0.0) * 4.0, 1.0, 0.2, 4.0], 0.01, steps, energy, "energy"),
        ("gyroscopic nonholonomic particle (non-reversible)", System.load(str(tmp / "gyro.toml")),
         [0.5, 0.3, 0.0], [0.4, -0.2, 0.3 * 0.4], 0.05, steps, energy, "energy"),
    ]
    results = {"machine": platform.platform(), "python": platform.python_version(),
               "cost": "equal numbers of evaluations (variational Newton iterations = DOP853 stages)", "cases": []}
    all_curves = {}
    for name, system, q0, qd0, h, n, integral, label in cases:
        print(f"{name}: {n} steps of {h} ...", flush=True)
        out, curves, _ = run_case(name, system, q0, qd0, h, n, integral, points, label)
        results["cases"].append(out)
        all_curves[name] = curves
    print("rattleback: 50 s ...", flush=True)
    out, curves = rattleback_case(0.0005 if not args.quick else 0.002, 5001)
    results["cases"].append(out)
    all_curves["rattleback"] = curves

    print()
    print(f"{'system':52s} {'steps':>8s} {'method':12s} {'evals':>9s} {'wall s':>8s} {'max rel err':>12s} "
          f"{'final':>10s}")
    for case in results["cases"]:
        for m, r in case["methods"].items():
            print(f"{case['system'][:52]:52s} {case['steps']:8d} {m:12s} {r['evaluations']:9d} {r['wall_s']:8.2f} "
                  f"{r['max_rel_error']:12.3e} {r['final_rel_error']:10.3e}")
    print("rattleback spin reversal times:", json.dumps(results["cases"][-1]["reversal_time_s"]))
    (HERE / "results").mkdir(exist_ok=True)
    name = "integrators_quick.json" if args.quick else "integrators.json"
    (HERE / "results" / name).write_text(json.dumps(results, indent=1))
    figure(all_curves, results, ROOT / "docs" / "_static" / ("integrators_energy_quick.png" if args.quick
                                                             else "integrators_energy.png"))


def figure(all_curves, results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(all_curves)
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.3 * len(names)), sharex=False)
    styles = {"variational": ("C0", "-"), "hamel": ("C2", ":"), "DOP853": ("C3", "-")}
    for ax, name, case in zip(axes, names, results["cases"]):
        for m, (t, err) in all_curves[name].items():
            c, ls = styles[m]
            ax.semilogy(t, np.maximum(err, 1e-17), color=c, ls=ls, lw=1,
                        label=f"{m} ({case['methods'][m]['evaluations']} evals)")
        ax.set_title(f"{name}: relative error of {case['integral']}, {case['steps']} steps", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        ax.set_ylabel("rel. error", fontsize=8)
    axes[-1].set_xlabel("t")
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
