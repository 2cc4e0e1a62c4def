"""The hostile-input corpus: every reproducer of the reliability issue, and attacks on the parser.

Each case is ``Case(id, argv, files, expect)``: ``argv`` is the command line after ``anholo``
in which ``{dir}`` stands for a temporary folder holding ``files`` (name -> TOML text);
``expect`` is ``"ok"`` (exit 0), ``"error"`` (exit 2, one clean line), ``"report"`` (exit 0 or 3:
a report printed) or ``"any"`` (any outcome the contract allows).  ``contains`` is a piece of
text the output (stdout for "ok", the error line for "error") must contain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Case", "CASES", "lagrangian_file", "system_file"]


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple
    files: dict = field(default_factory=dict)
    expect: str = "any"
    contains: str = ""


def system_file(lagrangian: str, *, coordinates=("x", "y"), parameters=("m", "k"), constraints=(),
                extra: str = "", raw_lagrangian: bool = False) -> str:
    """A small system file; ``lagrangian`` is written as a TOML basic string unless ``raw_lagrangian``."""
    lag = lagrangian if raw_lagrangian else '"' + lagrangian.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = ['name = "Fuzz"', "coordinates = [" + ", ".join(f'"{q}"' for q in coordinates) + "]",
             "parameters = [" + ", ".join(f'"{p}"' for p in parameters) + "]", f"lagrangian = {lag}"]
    if constraints:
        lines.append("constraints = [" + ", ".join('"' + c.replace('"', '\\"') + '"' for c in constraints) + "]")
    return "\n".join(lines) + "\n" + extra


def lagrangian_file(expr: str, **kw) -> dict:
    return {"s.toml": system_file(expr, **kw)}


F = "{dir}/s.toml"
A = ("analyze", F, "--budget", "8")
SIM = ("simulate", "--quiet", "--t-end", "0.1", "--points", "5")


def _lag(id, expr, expect="any", contains="", **kw):
    return Case(id, A, lagrangian_file(expr, **kw), expect, contains)


OSC = "m*(x_dot^2 + y_dot^2)/2 - k*(x^2 + y^2)/2"

CASES: list[Case] = [
    # --- the BooleanTrue tracebacks: degenerate Lagrangians and zero parameters -------------
    *[Case(f"set-m0-{ex}", ("analyze", ex, "--set", "m=0", "--budget", "30"), expect="any")
      for ex in ("chaplygin_sleigh", "knife_edge", "polar_particle")],
    _lag("constant-lagrangian", "1", "report"),
    _lag("zero-lagrangian", "0", "report"),
    _lag("truncated-lagrangian", "m*x_dot^2/2", "report"),
    _lag("linear-in-velocity", "m*x_dot + y_dot^2/2", "report"),
    _lag("coordinate-missing", "m*x_dot^2/2 - k*x^2/2", "report"),
    Case("heisenberg", A, lagrangian_file("(x_dot^2 + y_dot^2)/2", coordinates=("x", "y", "z"), parameters=(),
                                          constraints=("z_dot - (x*y_dot - y*x_dot)/2",)), "report"),
    Case("compare-linear-in-constrained-velocity", ("compare", F),
         lagrangian_file("x_dot + y_dot^2/2", constraints=("x_dot - y*y_dot",)), "any"),
    Case("compare-constant-lagrangian", ("compare", F),
         lagrangian_file("1", constraints=("x_dot - y*y_dot",)), "any"),
    # --- huge numbers --------------------------------------------------------------------------
    _lag("1e10000-times-x", "1e10000*x + x_dot^2/2", "any"),
    _lag("power-10-10000", "x^(10^10000) + x_dot^2/2", "error"),
    _lag("sin-1e10000", "sin(1e10000)/sin(x) + x_dot^2/2 + y_dot^2", "any"),
    _lag("100000-digit-decimal", "0." + "1" * 100_000 + "*x_dot^2", "error"),
    _lag("100000-digit-integer", "1" * 100_000 + "*x_dot^2", "error"),
    _lag("chained-powers", "((2^10000)^10000)^10000*x_dot^2", "error"),
    _lag("chained-powers-2", "2^2^2^2^2^2*x_dot^2", "error"),
    _lag("sqrt-10-9999", "sqrt(10^9999+1)*x + x_dot^2/2", "error"),
    _lag("expand-40", "(x_dot+y_dot+x+y)^40", "error", "expanded_terms"),
    _lag("expand-20", "(x_dot+y_dot+x+y)^20", "report"),
    _lag("sin-power-1e10000", "sin(x)^1e10000 + x_dot^2/2 + y_dot^2/2", "error"),
    _lag("tiny-power", "x_dot^0.0000001 + y_dot^2", "any"),
    _lag("factorial-like", "(10^300)^(10^300)*x_dot^2", "error"),
    _lag("exp-huge", "exp(10^10000)*x_dot^2", "error"),
    _lag("rational-power-huge", "(3/7)^100000*x_dot^2", "error"),
    _lag("negative-power-huge", "2^(-100000)*x_dot^2", "error"),
    _lag("flat-sum-500", " + ".join(f"{i}*x_dot^2" for i in range(1, 501)), "ok"),
    _lag("flat-sum-2000", " + ".join(f"{i}*x" for i in range(1, 2001)) + " + x_dot^2 + y_dot^2", "ok"),
    _lag("deep-nesting", "(" * 500 + "x_dot" + ")" * 500 + "^2", "error", "nest"),
    _lag("deep-unary", "-" * 5000 + "x_dot^2", "error"),
    _lag("deep-calls", "sin(" * 300 + "x" + ")" * 300 + " + x_dot^2", "error"),
    _lag("10MB-expression", "x_dot^2" + " + x" * 2_500_000, "error", "characters"),
    Case("100-coordinates", A, {"s.toml": system_file(" + ".join(f"q{i}_dot^2" for i in range(100)),
                                                      coordinates=tuple(f"q{i}" for i in range(100)),
                                                      parameters=())}, "error", "coordinates"),
    Case("n-trailer-huge", ("analyze", "n_trailer_99999999999999999999"), expect="error"),
    Case("n-trailer-30", ("analyze", "n_trailer_30"), expect="error"),
    Case("n-trailer-1", ("analyze", "n_trailer_1", "--sections", "frame"), expect="ok"),
    Case("rolling-disk-reduced", A, {"s.toml": system_file(
        "m*(x_dot^2+y_dot^2)/2 + k*(phi_dot^2 + theta_dot^2)/2", coordinates=("x", "y", "theta", "phi"),
        constraints=("x_dot",))}, "any"),
    Case("constraint-high-power", A, lagrangian_file(OSC, coordinates=("x", "y", "z"),
                                                     constraints=("(x*y_dot - y*x_dot)^1e3",)), "any"),
    # --- silent misreadings ------------------------------------------------------------------
    _lag("hash-comment", "x_dot^2/2 # - k*x^2/2", "error", "#"),
    _lag("fullwidth-x", "ｘ_dot^2/2 + y_dot^2/2", "error"),
    _lag("math-bold-x", "𝐱_dot^2/2 + y_dot^2/2", "error"),
    _lag("cyrillic-a", "m*x_dot^2/2 + y_dot^2/2 + а", "error"),
    _lag("greek-nu", "m*x_dot^2/2 + y_dot^2/2 + ν", "error"),
    _lag("zero-width-space", "m*x_dot^2/2 + y\u200b_dot^2/2", "error"),
    _lag("nbsp", "m*x_dot^2/2 +\u00a0y_dot^2/2", "any"),
    Case("fullwidth-coordinate-name", A, {"s.toml": system_file("ｘ_dot^2", coordinates=("ｘ",), parameters=())},
         "error"),
    # --- two rules for one thing ----------------------------------------------------------------
    Case("analyze-set-m-neg", ("analyze", "knife_edge", "--set", "m=-1"), expect="error", contains="positive"),
    Case("analyze-set-m-nan", ("analyze", "knife_edge", "--set", "m=nan"), expect="error"),
    Case("analyze-set-m-inf", ("analyze", "knife_edge", "--set", "m=inf"), expect="error"),
    Case("analyze-set-m-twice", ("analyze", "knife_edge", "--set", "m=1", "--set", "m=2"), expect="error",
         contains="twice"),
    Case("analyze-set-m-complex", ("analyze", "knife_edge", "--set", "m=sqrt(-1)"), expect="error"),
    Case("analyze-set-m-zero-knife", ("analyze", "knife_edge", "--set", "m=0"), expect="error"),
    Case("values-negative", A, lagrangian_file(OSC, extra="[values]\nm = -1\n"), "error", "positive"),
    Case("values-nan", A, lagrangian_file(OSC, extra="[values]\nm = nan\n"), "error"),
    Case("values-inf", A, lagrangian_file(OSC, extra="[values]\nm = inf\n"), "error"),
    Case("signs-real-negative-value", ("analyze", F, "--set", "k=-2"),
         lagrangian_file(OSC, extra='[signs]\nk = "real"\n'), "ok"),
    Case("signs-negative-positive-value", ("analyze", F, "--set", "k=2"),
         lagrangian_file(OSC, extra='[signs]\nk = "negative"\n'), "error", "negative"),
    Case("signs-nonzero-zero", ("analyze", F, "--set", "k=0"),
         lagrangian_file(OSC, extra='[signs]\nk = "nonzero"\n'), "error"),
    Case("signs-unknown-kind", A, lagrangian_file(OSC, extra='[signs]\nk = "imaginary"\n'), "error"),
    Case("signs-unknown-parameter", A, lagrangian_file(OSC, extra='[signs]\nq = "real"\n'), "error"),
    Case("signs-values-check", A, lagrangian_file(OSC, extra='[signs]\nk = "nonpositive"\n[values]\nk = 1\n'),
         "error"),
    # --- simulate -------------------------------------------------------------------------
    Case("simulate-set-m0", (*SIM, "chaplygin_sleigh", "--q0", "0,0,0", "--qdot0", "0,0,1", "--set", "m=0"),
         expect="error"),
    Case("simulate-set-m-nan", (*SIM, "knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--set", "m=nan"),
         expect="error"),
    Case("simulate-set-m-inf", (*SIM, "knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--set", "m=inf"),
         expect="error"),
    Case("simulate-set-m-neg", (*SIM, "knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--set", "m=-1"),
         expect="error"),
    Case("simulate-set-twice", (*SIM, "knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--set", "m=1",
                                "--set", "m=2"), expect="error"),
    Case("simulate-q0-complex", (*SIM, "polar_particle", "--q0", "sqrt(-1),0", "--qdot0", "0,1"),
         expect="error"),
    Case("simulate-q0-nan", (*SIM, "polar_particle", "--q0", "nan,0", "--qdot0", "0,1"), expect="error"),
    Case("simulate-q0-huge", (*SIM, "polar_particle", "--q0", "1e400,0", "--qdot0", "0,1"), expect="error"),
    Case("simulate-q0-symbol", (*SIM, "polar_particle", "--q0", "m,0", "--qdot0", "0,1"), expect="error"),
    Case("simulate-points-huge", ("simulate", "--quiet", "polar_particle", "--q0", "1,0", "--qdot0", "0,1",
                                  "--t-end", "0.1", "--points", "1000000000"), expect="error", contains="points"),
    Case("simulate-rtol-nan", (*SIM, "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--rtol", "nan"),
         expect="error", contains="rtol"),
    Case("simulate-rtol-neg", (*SIM, "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--rtol", "-1"),
         expect="error", contains="rtol"),
    Case("simulate-atol-inf", (*SIM, "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--atol", "inf"),
         expect="error", contains="atol"),
    Case("simulate-t-end-nan", ("simulate", "--quiet", "polar_particle", "--q0", "1,0", "--qdot0", "0,1",
                                "--t-end", "nan"), expect="error", contains="t-end"),
    Case("simulate-t-end-inf", ("simulate", "--quiet", "polar_particle", "--q0", "1,0", "--qdot0", "0,1",
                                "--t-end", "inf"), expect="error", contains="t-end"),
    Case("simulate-points-abc", (*SIM[:-2], "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--points", "abc"),
         expect="error"),
    Case("simulate-lambda0-nan", (*SIM, "knife_edge", "--field", "vakonomic", "--q0", "0,0,0", "--qdot0",
                                  "1,0,0", "--lambda0", "nan"), expect="error"),
    Case("simulate-ok", (*SIM, "polar_particle", "--q0", "1,0", "--qdot0", "0,1"), expect="ok"),
    Case("simulate-real-m0", (*SIM, F, "--q0", "1,0", "--qdot0", "0,1", "--set", "m=0", "--set", "k=1"),
         lagrangian_file(OSC, extra='[signs]\nm = "real"\n'), "error", "cannot be evaluated"),
    Case("simulate-t-end-huge", ("simulate", "--quiet", "polar_particle", "--q0", "1,0", "--qdot0", "0,1",
                                 "--t-end", "1e300", "--points", "3", "--budget", "5"), expect="any"),
    Case("simulate-missing-value", (*SIM, F, "--q0", "1,0", "--qdot0", "0,1"), lagrangian_file(OSC), "error"),
    Case("compare-over-budget", ("compare", "two_particles_perpendicular", "--budget", "2"), expect="any"),
    Case("limits-bad", ("--limits", "digits=0", "analyze", "knife_edge"), expect="error", contains="digits"),
    Case("limits-unknown", ("--limits", "colour=3", "analyze", "knife_edge"), expect="error"),
    Case("limits-raised", ("--limits", "digits=600", "analyze", F, "--sections", "frame"),
         lagrangian_file("1e500*x_dot^2 + y_dot^2"), "ok"),
    # --- [symmetry] without constraints ---------------------------------------------------------
    Case("symmetry-zero-generator", A, lagrangian_file(OSC, extra='[symmetry]\ngenerators = [["0", "0"]]\n'),
         "error"),
    Case("symmetry-too-many", A, lagrangian_file(
        OSC, extra='[symmetry]\ngenerators = [["1", "0"], ["0", "1"], ["1", "1"]]\n'), "error"),
    Case("symmetry-wrong-constants", A, lagrangian_file(
        OSC, extra='[symmetry]\ngenerators = [["1", "0"], ["0", "1"]]\n'
                   'structure_constants = [[[0, 1], [-1, 0]], [[0, 0], [0, 0]]]\n'), "error"),
    Case("symmetry-unused-ok", A, lagrangian_file(OSC, extra='[symmetry]\ngenerators = [["1", "0"]]\n'), "ok"),
    # --- names ---------------------------------------------------------------------------------
    Case("quasi-velocity-clash", A, {"s.toml": system_file(
        "x_dot^2 + y_dot^2", parameters=("v1", "w1", "nu1", "qv1", "v2", "w2", "nu2", "qv2"))}, "report"),
    Case("multi-line-bad-expression", A, {"s.toml": system_file('"""\nm*x_dot^2/2\n + +* y\n"""',
                                                                raw_lagrangian=True)}, "error"),
    Case("multi-line-unknown-name", A, {"s.toml": system_file('"""\nm*x_dot^2/2\n + zz*y\n"""',
                                                              raw_lagrangian=True)}, "error"),
    # --- parser attacks (must execute nothing; clean errors) ------------------------------------
    *[_lag(f"inject-{i}", text, "error") for i, text in enumerate([
        "__import__('os').system('touch /tmp/anholo_pwned')", "x.__class__", "(lambda: 1)()",
        "[i for i in range(10)]", "f'{x}'", "eval('1')", "exec('1')", "getattr(x, 'a')",
        "sympify('x')", "S('x')", "parse_expr('x')", "__builtins__", "x_dot if x else y",
        "x[0]", "{1: 2}", "x; y", "x_dot\n import os", "x == y", "not x", "x @ y", "x % 2", "~x",
        "x_dot ** -", "1 +", "", "   ", "()", "(x, y)", "*x", "x_dot := 1", "await x", "yield x",
        "'x'", "b'x'", "1j*x", "None", "True", "...", "x__", "_", "\\", "x_dot^^2",
        "\x00", "x\x00_dot", "\ud800", "x_dot^2 \x1b[31m", "\u202ex_dot", "x_dot^2/2 #",
    ])],
    _lag("nul-in-toml", "x_dot^2", "error") if False else Case("bom", A, {"s.toml": "\ufeff" + system_file(OSC)},
                                                              "any"),
    Case("not-utf8", A, {"s.toml": b"name = \"\xff\"\n"}, "error"),
    Case("missing-file", ("analyze", "{dir}/nope.toml"), expect="error"),
    Case("directory", ("analyze", "{dir}"), expect="error"),
    Case("unknown-option", ("analyze", "knife_edge", "--frobnicate"), expect="error"),
    Case("unknown-command", ("frobnicate",), expect="error"),
    Case("no-command", (), expect="error"),
    Case("bad-section", ("analyze", "knife_edge", "--sections", "nope"), expect="error"),
    Case("budget-nan", ("analyze", "knife_edge", "--budget", "nan"), expect="error"),
    Case("budget-neg", ("analyze", "knife_edge", "--budget", "-1"), expect="error"),
    Case("time-dependent-lagrangian", A, lagrangian_file(OSC, extra="") | {
        "s.toml": system_file(OSC + " + t*x") + 'time = "t"\n'}, "any"),
    # --- issue #25: system files read exactly and safely ------------------------------------------
    *[Case(f"signs-{i}", A, lagrangian_file(OSC, extra=f"[signs]\nm = {v}\n"), "error", "expected one of")
      for i, v in enumerate(['["real"]', "[]", "{a = 1}", "1.5"])],
    Case("toml-int-5000-digits", A, lagrangian_file(OSC, extra="[values]\nm = " + "1" * 5000 + "\n"), "error"),
    Case("toml-int-4000-digits", A, lagrangian_file(OSC, extra="[values]\nm = " + "1" * 4000 + "\n"), "error",
         "digits"),
    Case("toml-frame-4000-digits", A, lagrangian_file(OSC, extra="frame = [[" + "1" * 4000 + ", 0], [0, 1]]\n"),
         "error", "digits"),
    Case("toml-float-1e10000", A, lagrangian_file(OSC, extra="[values]\nm = 1e10000\n"), "error", "digits"),
    Case("toml-nesting-3000", A, lagrangian_file(OSC, extra="z = " + "[" * 3000 + "]" * 3000 + "\n"), "error",
         "nested"),
    Case("toml-nesting-table-3000", A, lagrangian_file(OSC, extra="z = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"),
         "error", "nested"),
    Case("toml-exact-decimal", ("analyze", F, "--json"),
         lagrangian_file(OSC, extra="[values]\nm = 1.00000000000000000001\n"), "ok"),
    Case("nested-rational-powers", A, lagrangian_file("x_dot^2/2 + y_dot^2/2 - x^(1/3)^(1/3)^(1/3)^(1/3)",
                                                      constraints=("y_dot - x*x_dot",)), "any"),
    *[_lag(f"complex-constant-{i}", OSC + f" + {c}*x", "error") for i, c in enumerate(
        ["asin(2)", "sqrt(-1)", "I", "log(-1)", "(-8)^(1/3)", "acosh(0)"])],
    _lag("log-base-0", OSC + " + log(x, 0)", "error", "base"),
    Case("frame-quasi-velocity", A, lagrangian_file(OSC, extra='quasi_velocities = ["u", "w"]\n'
                                                               'frame = [["1", "0"], ["0", "u"]]\n'), "error",
         "quasi-velocity"),
    Case("frame-input", A, lagrangian_file(OSC, extra='inputs = ["tau"]\nforces = ["tau", "0"]\n'
                                                      'frame = [["1", "0"], ["0", "tau"]]\n'), "error", "input"),
    *[Case(f"control-in-name-{i}", A, {"s.toml": system_file(OSC).replace('name = "Fuzz"', f'name = "F{c}"')},
           "error", "control") for i, c in enumerate(["\\u001b]0;PWNED\\u0007", "\\u001b[2J", "\\r", "\\u202e"])],
]
