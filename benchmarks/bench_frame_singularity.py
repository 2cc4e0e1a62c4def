#!/usr/bin/env python
"""Benchmark: simulations through frame singularities (the change of chart of anholo.numerics.switching).

Rows (medians over ``--repeats`` runs, integration wall time of ``simulate``; DOP853, rtol 1e-10,
atol 1e-12):

* the Veselova system written in the body angular velocities (``tests/numerics/data/veselova_frame.toml``,
  whose adapted frame degenerates at θ = π/2), over [0, T] from the issue's initial state: θ crosses
  π/2 at t ≈ 1.17, where the run changes to Maggi's equations with the dependent velocity φ̇.  Against:
  the same motion in Maggi's equations with dependent φ̇ from the start (a chart regular along the whole
  motion).  The one-off cost of building and compiling the second chart is reported apart (it is paid
  once per process: the atlas keeps its charts);
* the catalogue (every example with a nonholonomic or Euler–Lagrange field, the controlled one with the
  input ``0.2 sin t``; except the bicycles, and the ones with time-dependent or holonomic constraints,
  which are integrated in natural velocities or kept by projection and have no frame to degenerate): the
  same motion (coordinates 0.35, 0.45, …; free velocities 0.9…0.3, over [0, T]) four ways:
  ``frame`` (no atlas: the step loop alone), ``monitor`` (with the atlas: the monitors every 16 steps, no
  change of chart on these regular motions — checked), ``changed`` (the change of chart forced at the
  first look: Maggi's equations with the pivoted dependent velocities for the rest; the new chart built
  once before the timed runs) and ``regular`` (the same motion in that Maggi chart from the start, the
  regular chart of the issue's target "no more than 2× the cost of the same motion in a regular chart");
* the same test motion integrated from a user's choice of dependent velocities whose Voronets frame has
  poles on it (the knife edge solved for ẋ: ``ẋ = cot θ ẏ``, a pole at θ = π; :data:`DEPENDENT_CHOICES`),
  against the catalogue's own frame, regular along it: evaluations, wall time and the final gap;
* the held-out frame-language systems (``tests/numerics/data``: the Suslov problem in the space angular
  velocities, the Chaplygin sleigh in the spatial velocities of SE(2), the nonholonomic oscillator in rotated
  axes; their motions and their oracles from ``tests/numerics/test_frame_singularity_heldout.py``), whose
  adapted frames degenerate where the pivot of their constraint vanishes: the run with the atlas against the
  same motion in a chart regular along it from the start (the Suslov problem's body angular velocities,
  ``suslov_body_frame.toml``; the catalogue's ``chaplygin_sleigh``; Maggi's equations with the dependent
  velocity ż), with the largest error against the coordinate multiplier equations and what the frame chart
  alone does;
* a holonomic motion through the pole of its chart: the spherical pendulum in (θ, φ) from θ = 0.5,
  θ̇ = −1 and small φ̇ (it passes within about φ̇·sin²(0.5)/… of the pole θ = 0), integrated in an atlas of
  two charts (:mod:`anholo.numerics.coordinate_charts`; the second chart has its pole on the x-axis)
  against the same motion in the second chart alone (regular along it) and in (θ, φ) alone; the
  positions are compared with the Cartesian pendulum (``tests/numerics/test_coordinate_charts.py``).

Run from the repository root::

    python benchmarks/bench_frame_singularity.py            # T = 20, 5 repeats (about a minute)
    python benchmarks/bench_frame_singularity.py --quick    # T = 5, 3 repeats

Results are printed as a table and written to ``benchmarks/results/frame_singularity.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from anholo.errors import NonlinearConstraintError
from anholo.numerics import switching as sw
from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.charts import ChartAtlas
from anholo.system import System

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT / "tests" / "numerics" / "data"
VESELOVA = DATA / "veselova_frame.toml"
Q0, QDOT0 = [0.1, 1.0, 0.3], [-0.3782116141076978, 0.4, 0.7]
SKIP = {"whipple_bicycle", "whipple_bicycle_pitch_rate"}


def median_time(run, repeats: int) -> tuple:
    times, last = [], None
    for _ in range(repeats):
        last = run()
        times.append(last.wall_time)
    return statistics.median(times), last


def veselova_rows(t_end: float, repeats: int) -> dict:
    system = System.load(str(VESELOVA))
    frame = compile_system(from_system(system))
    atlas = ChartAtlas(system)
    t0 = time.perf_counter()
    atlas.chart(("phi",))
    build = time.perf_counter() - t0
    regular = atlas.chart(("phi",)).compiled
    switched, traj = median_time(lambda: simulate(frame, t_end, Q0, QDOT0, atlas=atlas), repeats)
    plain, ref = median_time(lambda: simulate(regular, t_end, Q0, QDOT0), repeats)
    gap = float(np.max(np.abs(traj.q[:, -1] - ref.q[:, -1])))
    return {"system": "veselova_frame", "T": t_end, "switched_s": switched, "regular_chart_s": plain,
            "ratio": switched / plain, "nfev": traj.nfev, "nfev_regular": ref.nfev,
            "nfev_ratio": traj.nfev / ref.nfev, "chart_build_s": build, "notes": list(traj.notes),
            "final_state_gap": gap}


def initial_data(compiled, name: str):
    """(q0, q̇0) on C: coordinates 0.35, 0.45, …, free velocities 0.9…0.3 (bench_numerics.py's choice)."""
    n = compiled.n
    q0 = np.array([0.35 + 0.1 * k for k in range(n)])
    if name == "spherical_pendulum":
        q0 = np.array([1.0, 0.0])
    s = np.concatenate([q0, np.linspace(0.9, 0.3, compiled.dim - n)])
    u0 = compiled.natural_velocities(s[:, None], compiled.parameter_vector())[:, 0]
    return q0, u0


def catalogue_rows(t_end: float, repeats: int) -> list:
    from anholo.examples import example_names

    rows = []
    for name in example_names(large=False):
        if name in SKIP:
            continue
        try:
            system = System.load(name)
            if system.is_time_dependent or getattr(system, "holonomic", ()):
                continue  # Chetaev's field in natural velocities, or holonomic constraints kept by projection
            field = "nonholonomic" if system.has_constraints else "euler-lagrange"
            compiled = compile_system(from_system(system, field))
            q0, u0 = initial_data(compiled, name)
            inputs = {u: "0.2*sin(t)" for u in compiled.control_names} or None
            atlas = ChartAtlas(system)

            def run(**kw):
                return simulate(compiled, t_end, q0, u0, inputs=inputs, **kw)

            plain, ref = median_time(run, repeats)
            monitored, mon = median_time(lambda: run(atlas=atlas), repeats)
            saved = sw.FRAME_SWITCH, sw.START_FACTOR, sw.BETTER
            sw.FRAME_SWITCH = sw.START_FACTOR = sw.BETTER = 0.0  # change chart at the first look
            try:
                run(atlas=atlas)  # the second chart built and compiled once (paid once per process)
                forced, frc = median_time(lambda: run(atlas=atlas), repeats)
            finally:
                sw.FRAME_SWITCH, sw.START_FACTOR, sw.BETTER = saved
            # the same motion in the chart the forced run changed to, from the start: a regular chart
            dep = tuple(x.strip() for x in frc.segments[-1]["chart"].split("dependent")[-1].split(",")) \
                if frc.segments and "dependent" in frc.segments[-1]["chart"] else ()
            target = atlas.chart(dep).compiled
            regular, reg = median_time(lambda: simulate(target, t_end, q0, u0, inputs=inputs), repeats)
        except NonlinearConstraintError:
            continue  # no Lagrange-d'Alembert field (Chetaev's, in natural velocities already)
        except Exception as exc:  # report and go on: a benchmark row, not a test
            rows.append({"system": name, "error": f"{type(exc).__name__}: {exc}"[:200]})
            continue
        rows.append({"system": name, "field": field, "inputs": bool(inputs), "plain_s": plain,
                     "monitored_s": monitored, "forced_s": forced, "regular_s": regular,
                     "monitor_ratio": monitored / plain, "forced_ratio": forced / regular,
                     "forced_vs_frame": forced / plain, "nfev_plain": ref.nfev, "nfev_forced": frc.nfev,
                     "nfev_regular": reg.nfev, "switched_in_monitored": bool(mon.notes),
                     "forced_chart": frc.segments[-1]["chart"] if frc.segments else "frame",
                     "forced_gap": float(np.max(np.abs(frc.q[:, -1] - ref.q[:, -1])))})
    return rows


#: Choices of dependent velocities a user may make whose Voronets frame has a pole on the catalogue's test motion
#: (coordinates 0.35, 0.45, …), besides the catalogue's own regular frame: (example, dependent coordinates).
DEPENDENT_CHOICES = [("knife_edge", ("x",)), ("knife_edge", ("y",)), ("vertical_rolling_disk", ("x", "phi")),
                     ("vertical_rolling_disk", ("y", "phi")), ("chaplygin_sleigh", ("y",)),
                     ("two_wheeled_carriage", ("x", "y", "theta")), ("snakeboard", ("x", "y")),
                     ("roller_racer", ("x", "y"))]


def dependent_rows(t_end: float, repeats: int) -> list:
    """The catalogue's test motion integrated from a user's choice of dependent velocities (a frame that may have
    poles on it: the run changes chart before them) against the same motion in the catalogue's own frame,
    regular along it."""
    rows = []
    for name, dep in DEPENDENT_CHOICES:
        system = System.load(name)
        regular = compile_system(from_system(system, "nonholonomic"))
        q0, u0 = initial_data(regular, name)
        try:
            chosen = compile_system(from_system(system, "nonholonomic", dependent=list(dep)))
        except Exception as exc:  # no frame for this choice at all
            rows.append({"system": name, "dependent": dep, "error": f"{type(exc).__name__}: {exc}"[:160]})
            continue
        atlas = ChartAtlas(system)
        simulate(chosen, t_end, q0, u0, atlas=atlas)  # the charts it changes to built once
        t_reg, ref = median_time(lambda: simulate(regular, t_end, q0, u0), repeats)
        t_ch, run = median_time(lambda: simulate(chosen, t_end, q0, u0, atlas=atlas), repeats)
        rows.append({"system": name, "dependent": dep, "changes": len(run.notes), "nfev": run.nfev,
                     "nfev_regular": ref.nfev, "nfev_ratio": run.nfev / ref.nfev, "wall_s": t_ch,
                     "regular_s": t_reg, "wall_ratio": t_ch / t_reg,
                     "final_gap": float(np.max(np.abs(run.q[:, -1] - ref.q[:, -1])))})
    return rows


#: The held-out systems: (case of the test module, the regular chart: a file or Maggi's dependent velocities).
HELD_OUT = [("suslov", DATA / "suslov_body_frame.toml"), ("sleigh", "chaplygin_sleigh"), ("oscillator", ("z",))]


def heldout_rows(t_end: float, repeats: int) -> list:
    """The held-out frame-language systems through the poles of their adapted frames (module docstring)."""
    sys.path.insert(0, str(ROOT / "tests" / "numerics"))
    sys.path.insert(0, str(ROOT / "tests"))
    from test_frame_singularity_heldout import CASES, reference

    from anholo.errors import IntegrationError

    rows = []
    for case, regular_chart in HELD_OUT:
        path, oracle, _ = CASES[case]
        system = System.load(str(DATA / path))
        frame = compile_system(from_system(system))
        atlas = ChartAtlas(system)
        _, _, _, _, q0, qd0, _ = oracle()
        if isinstance(regular_chart, tuple):
            regular = atlas.chart(regular_chart).compiled
        else:
            regular = compile_system(from_system(System.load(str(regular_chart))))
        times = np.linspace(0.0, t_end, 201)
        simulate(frame, t_end, q0, qd0, atlas=atlas)  # the charts it changes to built once
        t_sw, run = median_time(lambda: simulate(frame, (0.0, t_end), q0, qd0, t_eval=times, atlas=atlas), repeats)
        t_reg, reg = median_time(lambda: simulate(regular, (0.0, t_end), q0, qd0, t_eval=times), repeats)
        ref = reference(oracle, times)
        try:
            alone = simulate(frame, (0.0, t_end), q0, qd0, t_eval=times)
            alone_text = f"{alone.nfev} evaluations, error {np.abs(alone.q - ref[:3]).max():.1e}"
        except IntegrationError as exc:
            alone_text = "stalls at t = " + str(exc).split("at t = ")[1].split(",")[0]
        rows.append({"system": case, "file": path, "regular": str(regular_chart if isinstance(regular_chart, tuple)
                                                                     else Path(str(regular_chart)).name),
                     "changes": len(run.notes), "notes": list(run.notes), "nfev": run.nfev,
                     "nfev_regular": reg.nfev, "nfev_ratio": run.nfev / reg.nfev, "wall_s": t_sw,
                     "regular_s": t_reg, "wall_ratio": t_sw / t_reg,
                     "oracle_error": float(np.abs(run.q - ref[:3]).max()), "frame_alone": alone_text})
    return rows


def pendulum_rows(t_end: float, repeats: int) -> list:
    """The spherical pendulum through its pole: atlas, regular chart, one chart (evaluations, wall time)."""
    import math

    sys.path.insert(0, str(ROOT / "tests" / "numerics"))
    sys.path.insert(0, str(ROOT / "tests"))
    import tempfile

    from test_coordinate_charts import FROM_BASE, SIDE, TO_BASE, _side_velocity, cartesian, position

    from anholo.errors import IntegrationError
    from anholo.numerics.coordinate_charts import CoordinateChart, simulate_in_charts

    path = Path(tempfile.mkdtemp()) / "side.toml"
    path.write_text(SIDE)
    base, side = System.load("spherical_pendulum"), System.load(str(path))
    charts = [CoordinateChart(base), CoordinateChart(side, TO_BASE, FROM_BASE)]
    times = np.linspace(0.0, t_end, 201)
    r0 = position(0.5, 0.0)
    a0, b0 = math.acos(r0[0]), math.atan2(r0[2], r0[1])
    rows = []
    for phid in (1e-6, 1e-3, 0.3):
        runs = [simulate_in_charts(charts, (0, t_end), [0.5, 0.0], [-1.0, phid], t_eval=times)
                for _ in range(repeats)]
        regs = [simulate_in_charts([CoordinateChart(side)], (0, t_end), [a0, b0], _side_velocity(0.5, 0.0, -1.0, phid),
                                   t_eval=times) for _ in range(repeats)]
        atlas, reg = runs[-1], regs[-1]
        ref = cartesian(times, 0.5, 0.0, -1.0, phid)
        try:
            one = simulate(base, t_end, [0.5, 0.0], [-1.0, phid], t_eval=times, rtol=1e-9, atol=1e-12)
            one_text = f"{one.nfev} evaluations"
        except IntegrationError as exc:
            one_text = "stopped: " + str(exc).split(":")[1].strip()[:60]
        rows.append({"phi_dot0": phid, "switches": len(atlas.switches), "atlas_nfev": atlas.nfev,
                     "regular_nfev": reg.nfev, "nfev_ratio": atlas.nfev / reg.nfev,
                     "atlas_s": statistics.median(r.wall_time for r in runs),
                     "regular_s": statistics.median(r.wall_time for r in regs),
                     "position_error": float(np.abs(position(*atlas.q) - ref).max()), "one_chart": one_text})
        rows[-1]["wall_ratio"] = rows[-1]["atlas_s"] / rows[-1]["regular_s"]
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--t-end", type=float, default=None)
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    t_end = args.t_end or (5.0 if args.quick else 20.0)
    ves = veselova_rows(t_end, repeats)
    print(f"Veselova (frame language), T = {t_end:g}: through θ = π/2 {ves['switched_s'] * 1e3:.1f} ms, "
          f"regular chart {ves['regular_chart_s'] * 1e3:.1f} ms, ratio {ves['ratio']:.2f} "
          f"(second chart built once in {ves['chart_build_s'] * 1e3:.0f} ms); evaluations {ves['nfev']} / "
          f"{ves['nfev_regular']} ({ves['nfev_ratio']:.2f}); final-state gap "
          f"{ves['final_state_gap']:.2g}")
    held = heldout_rows(t_end, repeats)
    print(f"\nheld-out frame-language systems through the poles of their frames, T = {t_end:g}:")
    print(f"{'system':11s} {'changes':>7s} {'evals':>7s} {'regular':>7s} {'ratio':>6s} {'ms':>7s} {'reg. ms':>7s} "
          f"{'ratio':>6s} {'oracle err':>10s}  frame chart alone")
    for r in held:
        print(f"{r['system']:11s} {r['changes']:7d} {r['nfev']:7d} {r['nfev_regular']:7d} {r['nfev_ratio']:6.2f} "
              f"{r['wall_s'] * 1e3:7.1f} {r['regular_s'] * 1e3:7.1f} {r['wall_ratio']:6.2f} "
              f"{r['oracle_error']:10.1e}  {r['frame_alone']}")
    pend = pendulum_rows(t_end, repeats)
    print(f"\nspherical pendulum through its pole, T = {t_end:g} (DOP853 rtol 1e-9):")
    print(f"{'phi_dot0':>9s} {'switches':>8s} {'atlas ev':>9s} {'regular':>8s} {'ratio':>6s} {'atlas ms':>9s} "
          f"{'reg. ms':>8s} {'pos. err':>9s}  one chart (theta, phi)")
    for r in pend:
        print(f"{r['phi_dot0']:9.0e} {r['switches']:8d} {r['atlas_nfev']:9d} {r['regular_nfev']:8d} "
              f"{r['nfev_ratio']:6.2f} {r['atlas_s'] * 1e3:9.1f} {r['regular_s'] * 1e3:8.1f} "
              f"{r['position_error']:9.1e}  {r['one_chart']}")
    deps = dependent_rows(t_end, repeats)
    print(f"\na user's choice of dependent velocities, T = {t_end:g}, against the catalogue's regular frame:")
    print(f"{'system':22s} {'dependent':14s} {'changes':>7s} {'evals':>7s} {'regular':>7s} {'ratio':>6s} "
          f"{'ms':>7s} {'reg. ms':>7s} {'ratio':>6s} {'final gap':>9s}")
    for r in deps:
        if "error" in r:
            print(f"{r['system']:22s} {','.join(r['dependent']):14s} no frame: {r['error']}")
            continue
        print(f"{r['system']:22s} {','.join(r['dependent']):14s} {r['changes']:7d} {r['nfev']:7d} "
              f"{r['nfev_regular']:7d} {r['nfev_ratio']:6.2f} {r['wall_s'] * 1e3:7.1f} {r['regular_s'] * 1e3:7.1f} "
              f"{r['wall_ratio']:6.2f} {r['final_gap']:9.1e}")
    rows = catalogue_rows(t_end, repeats)
    print(f"\n{'system':26s} {'frame ms':>8s} {'monitor':>8s} {'changed':>8s} {'regular':>8s} {'mon/fr':>6s} "
          f"{'chg/reg':>7s} {'chg/fr':>6s} {'evals chg/reg':>13s}  chart changed to")
    for r in rows:
        if "error" in r:
            print(f"{r['system']:26s} error: {r['error']}")
            continue
        print(f"{r['system']:26s} {r['plain_s'] * 1e3:8.1f} {r['monitored_s'] * 1e3:8.1f} {r['forced_s'] * 1e3:8.1f} "
              f"{r['regular_s'] * 1e3:8.1f} {r['monitor_ratio']:6.2f} {r['forced_ratio']:7.2f} "
              f"{r['forced_vs_frame']:6.2f} {r['nfev_forced']:6d}/{r['nfev_regular']:<6d}  "
              f"{r['forced_chart'].replace('Maggi' + chr(39) + 's equations, ', '')}"
              + ("  (SWITCHED in monitored run!)" if r["switched_in_monitored"] else ""))
    ok = [r for r in rows if "error" not in r]
    summary = {"median_monitor_ratio": statistics.median(r["monitor_ratio"] for r in ok),
               "max_monitor_ratio": max(r["monitor_ratio"] for r in ok),
               "median_changed_vs_regular": statistics.median(r["forced_ratio"] for r in ok),
               "max_changed_vs_regular": max(r["forced_ratio"] for r in ok),
               "median_changed_vs_frame": statistics.median(r["forced_vs_frame"] for r in ok)}
    print("\n" + ", ".join(f"{k} {v:.2f}" for k, v in summary.items()))
    out = HERE / "results" / "frame_singularity.json"
    out.write_text(json.dumps({"T": t_end, "repeats": repeats, "veselova": ves, "catalogue": rows,
                               "dependent_choices": deps, "held_out": held,
                               "spherical_pendulum": pend,
                               "summary": summary}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
