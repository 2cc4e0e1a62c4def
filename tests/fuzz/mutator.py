"""A seeded mutator over the bundled example files, and the independent reading oracle.

:func:`mutants` yields ``(id, toml_text, argv)`` triples: a bundled system file changed by one to
three random edits (of its characters, of a token inside an expression, of a [values] entry, a
[signs] or [symmetry] table, a constraint), with a command line (``analyze``, ``compare`` or
``simulate``, sometimes with hostile ``--set`` values).  The same seed gives the same inputs.

:func:`misreadings` is the oracle for "never a reading different from what was written": it reads the
expressions of an accepted file a second, independent way — :mod:`tomllib` for the file and SymPy's
own parser (:func:`sympy.parsing.sympy_parser.parse_expr`, with ``^`` as power and decimals as exact
rationals) for each expression — and compares with what anholo read, at random rational points.
It also checks the text itself: no ``#`` and no character that Python would read as another name.
"""

from __future__ import annotations

import random
import re
import tomllib
from decimal import Decimal
import unicodedata
from pathlib import Path

# The bundled files, without the 42 kB bicycles (their mutants only repeat the parser's checks, slowly; the
# hostile corpus and tests/mechanics/test_bicycle_maggi.py cover large files).
EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "src" / "anholo" / "examples").glob("*.toml")
                  if not p.stem.startswith("whipple_bicycle"))

_HOSTILE_NUMBERS = ["0", "-1", "1e-300", "1e300", "10^400", "0.0000001", "1e10000", "nan", "inf", "-0",
                    "2^2^2^2^2", "sqrt(-1)", "1/0", "(1/3)^999", "99999999999999999999999999", "1e-400",
                    "pi", "E^700", "exp(1000)", "0.1", "7"]
_INSERTS = list("+-*/^()., #_0123456789exyz") + ["**", "^40", "^0.5", "^-1", "sin(", "sqrt(", "log(", "ｘ",
                                                  "𝐱", "\u200b", "\u00a0", "__", "lambda", "[", "]", "'", '"',
                                                  "\\", "\n", "x_dot", "theta", "1e999", "/0", "*0", "^1e4"]
_SIGNS = ["positive", "nonnegative", "negative", "nonpositive", "real", "nonzero", "imaginary", ""]
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def _expression_spans(text: str) -> list:
    """(start, end) of the contents of every basic string on an expression line (lagrangian, frame,
    constraints, generators), outside the description."""
    spans = []
    body = text.split('"""', 2)[-1] if text.count('"""') >= 2 else text
    offset = len(text) - len(body)
    for m in _STRING.finditer(body):
        line_start = body.rfind("\n", 0, m.start()) + 1
        key = body[line_start:m.start()]
        if key.startswith(("name", "description", "action")):
            continue
        spans.append((offset + m.start(1), offset + m.end(1)))
    return spans


def _mutate_once(rng: random.Random, text: str) -> str:
    spans = _expression_spans(text)
    kind = rng.random()
    if spans and kind < 0.55:
        a, b = rng.choice(spans)
        inner = text[a:b]
        r = rng.random()
        if r < 0.25 and inner:  # insert
            k = rng.randrange(len(inner) + 1)
            inner = inner[:k] + rng.choice(_INSERTS) + inner[k:]
        elif r < 0.45 and inner:  # delete a span
            k = rng.randrange(len(inner))
            inner = inner[:k] + inner[k + rng.randint(1, 4):]
        elif r < 0.65:  # replace a number or a name by a hostile number or another name
            tokens = list(re.finditer(r"[A-Za-z_]\w*|\d+(?:\.\d*)?", inner))
            if tokens:
                t = rng.choice(tokens)
                names = re.findall(r"[A-Za-z_]\w*", text)
                repl = rng.choice(_HOSTILE_NUMBERS) if rng.random() < 0.5 or not names else rng.choice(names)
                inner = inner[:t.start()] + f"({repl})" + inner[t.end():]
        elif r < 0.8:  # power, product, sum with something
            inner = f"({inner})" + rng.choice(["^2", "^40", "^0.5", "^1e3", "*0", " + x_dot", "/0", "^(1/3)",
                                               " - (" + inner + ")", "*1e-300", "^-1"])
        elif r < 0.9:
            inner = rng.choice(["0", "1", "x_dot", inner + " " + inner, inner[: len(inner) // 2]])
        else:
            inner = inner.replace("*", rng.choice(["^", "/", "+", " "]), 1)
        return text[:a] + inner.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + text[b:]
    if kind < 0.7:  # values / signs / symmetry tables
        params = re.search(r"parameters\s*=\s*\[([^\]]*)\]", text)
        names = re.findall(r'"(\w+)"', params.group(1)) if params else []
        coords = re.search(r"coordinates\s*=\s*\[([^\]]*)\]", text)
        n = len(re.findall(r'"(\w+)"', coords.group(1))) if coords else 1
        r = rng.random()
        if r < 0.4 and names:
            value = rng.choice(["0", "-1", "nan", "inf", "1e308", "1e-320", "-0.0", "3", "0.5", '"1"', "true"])
            if "[values]" in text:
                text = re.sub(rf"(?m)^{rng.choice(names)}\s*=.*$", f"{rng.choice(names)} = {value}", text, count=1)
                return text
            return text + f"\n[values]\n{rng.choice(names)} = {value}\n"
        if r < 0.7 and names and "[signs]" not in text:
            return text + f'\n[signs]\n{rng.choice(names)} = "{rng.choice(_SIGNS)}"\n'
        if "[symmetry]" not in text:
            gens = [[rng.choice(["0", "1", "x", "-1", "y_dot", "sin(theta)"]) for _ in range(n)]
                    for _ in range(rng.randint(1, 3))]
            return text + "\n[symmetry]\ngenerators = " + str(gens).replace("'", '"') + "\n"
        return text.replace("[symmetry]", "[symmetry]\naction = " + rng.choice(['"left"', '"right"', '"up"', "1"]))
    if kind < 0.8:  # lines
        lines = text.split("\n")
        k = rng.randrange(len(lines))
        r = rng.random()
        if r < 0.5:
            del lines[k]
        else:
            lines.insert(k, lines[rng.randrange(len(lines))])
        return "\n".join(lines)
    # raw characters anywhere
    k = rng.randrange(len(text) + 1)
    r = rng.random()
    if r < 0.5:
        return text[:k] + rng.choice(_INSERTS) + text[k:]
    return text[:k] + text[k + rng.randint(1, 3):]


def _argv(rng: random.Random, text: str, path: str) -> list:
    params = re.search(r"parameters\s*=\s*\[([^\]]*)\]", text)
    names = re.findall(r'"(\w+)"', params.group(1)) if params else []
    sets = []
    if names and rng.random() < 0.25:
        for _ in range(rng.randint(1, 2)):
            sets += ["--set", f"{rng.choice(names)}={rng.choice(_HOSTILE_NUMBERS + names)}"]
    r = rng.random()
    if r < 0.70:
        return ["analyze", path, "--budget", "6", "--sections", "frame,euler_lagrange", *sets,
                *(["--json"] if rng.random() < 0.3 else [])]
    if r < 0.88:
        return ["analyze", path, "--budget", "6", *sets, *(["--latex"] if rng.random() < 0.3 else [])]
    if r < 0.94:
        return ["compare", path, "--budget", "10", *sets]
    coords = re.search(r"coordinates\s*=\s*\[([^\]]*)\]", text)
    n = len(re.findall(r'"(\w+)"', coords.group(1))) if coords else 1
    vals = lambda: ",".join(rng.choice(["0", "1", "0.5", "-1", "nan", "1e400"]) if rng.random() < 0.1 else "0.3"  # noqa: E731
                            for _ in range(n))
    return ["simulate", path, "--quiet", "--t-end", rng.choice(["0.1", "1", "nan", "-1"]), "--points", "5",
            "--q0", vals(), "--qdot0", vals(), *sets]


def mutants(count: int, seed: int = 0, path: str = "{dir}/s.toml"):
    """``count`` mutated inputs ``(id, toml_text, argv)``, reproducible from ``seed``."""
    rng = random.Random(seed)
    sources = [(p.stem, p.read_text(encoding="utf-8")) for p in EXAMPLES]
    for i in range(count):
        name, text = sources[rng.randrange(len(sources))]
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            text = _mutate_once(rng, text)
        yield f"mutant-{seed}-{i}-{name}", text, _argv(rng, text, path)


# ---------------------------------------------------------------------------------------------------------
# The reading oracle
# ---------------------------------------------------------------------------------------------------------

def _independent(text: str, names: dict):
    from sympy.parsing.sympy_parser import parse_expr, rationalize, standard_transformations

    text = " ".join(text.replace("^", "**").splitlines())  # line breaks are spaces (as documented)
    return parse_expr(text, local_dict=names,
                      transformations=standard_transformations + (rationalize,), evaluate=True)


def _raw_checks(text: str, where: str) -> list:
    out = []
    if "#" in text:
        out.append(f"{where}: accepted with '#' inside: {text!r}")
    for word in re.findall(r"[^\W\d]\w*", text):
        if unicodedata.normalize("NFKC", word) != word:
            out.append(f"{where}: accepted the name {word!r}, which Python reads as another name")
    return out


def _agree(a, b, symbols, rng) -> bool:
    import sympy as sp

    if a == b:
        return True
    tried = 0
    for _ in range(6):
        point = {s: sp.Rational(rng.randint(5, 20), rng.randint(3, 9)) for s in symbols}
        try:
            va = complex(sp.sympify(a).xreplace(point).evalf(30))
            vb = complex(sp.sympify(b).xreplace(point).evalf(30))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            continue  # a singular point of both (or of one: then the next points decide)
        tried += 1
        if abs(va - vb) > 1e-9 * max(1.0, abs(va), abs(vb)):
            return False
        if tried == 3:
            return True
    return sp.expand(a - b) == 0


def misreadings(toml_text: str, spec) -> list:
    """Differences between what anholo read (``spec``, a SystemSpec) and an independent reading of the text."""
    import sympy as sp

    # TOML decimals are exact (docs/systemfiles.rst): read them as Decimal, from their text
    data = tomllib.loads(toml_text[1:] if toml_text.startswith("\ufeff") else toml_text, parse_float=Decimal)
    if data.get("functions"):
        return []  # undefined functions have no values at random points
    by_name = {s.name: s for s in spec.names.values() if isinstance(s, sp.Symbol)}
    plain = {name: sp.Symbol(name) for name in by_name}
    rng = random.Random(1)
    out = []
    pairs = [("lagrangian", data["lagrangian"], spec.lagrangian)]
    pairs += [(f"constraints[{k}]", c, e) for k, (c, e) in enumerate(zip(data.get("constraints", []),
                                                                        spec.constraints))]
    if spec.frame is not None:
        pairs += [(f"frame[{i}][{j}]", c, e) for i, row in enumerate(data["frame"])
                  for j, (c, e) in enumerate(zip(row, spec.frame[i]))]
    for where, written, read in pairs:
        if not isinstance(written, str):
            written = str(written)
        out += _raw_checks(written, where)
        try:
            other = _independent(written, dict(plain))
        except Exception as exc:  # noqa: BLE001 - the oracle could not read it: anholo accepted what SymPy refuses
            out.append(f"{where}: accepted {written[:80]!r}, which SymPy's parser refuses ({type(exc).__name__})")
            continue
        ours = sp.sympify(read).xreplace({s: plain[s.name] for s in sp.sympify(read).free_symbols
                                           if s.name in plain})
        if not _agree(ours, other, list(plain.values()), rng):
            out.append(f"{where}: read {str(read)[:80]!r} from {written[:80]!r}")
    for p, v in spec.values.items():
        written = data.get("values", {}).get(p.name)
        if written is not None and sp.Rational(str(written)) != v:
            out.append(f"values.{p.name}: read {v} from {written!r}")
    return out
