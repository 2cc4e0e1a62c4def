"""A smaller program for the field of Maggi's route: the Lagrangian differentiated along its own program.

:meth:`~anholo.dynamics.maggi.MaggiSystem.program` writes the implicit form ``g v̇ = F`` (module
docstring of :mod:`anholo.dynamics.maggi`)

    g_αβ = X_α^A W_AB X_β^B,      F_α = X_α^A (∂L/∂q^A − ∂²L/∂q̇^A∂q^B q̇^B − ∂²L/∂q̇^A∂t − W_AB w^B + Q_A),

formed there from the second derivatives of L as expression trees (the ``n(n+1)/2`` entries of the
Hessian ``W = ∂²L/∂q̇∂q̇`` and the ``n²`` mixed ones), which makes the force column the bulk of the program.
Here the first and mixed derivatives are taken along the straight-line program of L (its common
subexpressions), as automatic differentiation does (Griewank & Walther (2008), ch. 3–5):

* one reverse sweep gives the gradient ``(∂L/∂q, p = ∂L/∂q̇)`` (:func:`reverse_sweep`);
* one forward (tangent) sweep over L and that gradient along ``(δt, δq) = (1, q̇)`` gives
  ``∂p/∂t + ∂p/∂q q̇`` (:func:`tangent_sweep`: a Hessian–vector product, never the mixed Hessian);
* ``w`` (``q̈`` at ``v̇ = 0``: ``κ_P w^P = −∂φ/∂t − ∂φ/∂q q̇``, the constraints ``φ = κ q̇ + c`` differentiated
  once) by a tangent sweep over the program of φ along ``(1, q̇)``, then the solve by ``κ_P``'s adjugate;
* ``W X_β`` either from the entries ``W_AB`` as expressions (shared with L's program) or as the tangent of
  ``p`` along ``δq̇ = X_β`` (a Hessian–vector product, Pearlmutter (1994)), both formed and the smaller
  program kept (:func:`formed_field_program`); ``g_αβ = X_α · (W X_β)`` and the term
  ``X_α^A W_AB w^B = (W X_α) · w``;

all of it at ``q̇ = X_α v^α + β`` (the kinematics written once, as definitions), then common-subexpression
passes over the whole program with the common factors of its sums taken out and the identities found at
random points removed between them (:func:`global_cse`, :mod:`anholo.algebra.identities`).  The multiplier
rows, when asked for, are the dependent components of the same vectors: ``μ_a − (W X_β)_{P_a} v̇^β = (∂p/∂t + ∂p/∂q q̇ + W w − ∂L/∂q − Q)_{P_a}``.

These are Maggi's equations term for term.  Hamel's form of the constrained Lagrangian
``l(q, v) = L(q, X v + β)`` (Voronets' equations; Neimark & Fufaev (1972); Bloch (2015), §5),
``∂²l/∂v^α∂v^β v̇^β = X_α(l) − ∂²l/∂v^α∂q^B q̇^B − p_a R^a_αβ v^β`` with ``[X_α, X_β] = R^a_αβ X_a``, needs
the q-derivatives of the frame besides (through ``l`` and the curvature ``R``) and gives a larger program
when formed with the same sweeps (``hamel_program`` in benchmarks/bench_codegen.py: 1.6 times as many
operations for the Whipple bicycle, 2.4 times for the 3-trailer).  The outputs are the numbers of the expression-tree program
up to rounding (tests/dynamics/test_maggi_field.py, with the multiplier method and
``sympy.physics.mechanics.KanesMethod`` as oracles); :meth:`MaggiSystem.program` keeps whichever of the two
programs has fewer operations (:func:`anholo.algebra.codegen.operation_count`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ..algebra.engine import engine_cse, engine_diff, se, zero
from ..algebra.identities import hidden_identities
from ..algebra.program import Program
from ..errors import NonFiniteExpressionError

__all__ = ["field_program", "formed_field_program", "stored_field_program", "input_digest", "reverse_sweep",
           "tangent_sweep", "global_cse", "factored"]


class _Names:
    """Fresh symbols ``prefix0, prefix1, …`` avoiding the names in ``used``."""

    def __init__(self, used, prefix: str):
        self.used, self.prefix, self.count = {str(x) for x in used}, prefix, 0

    def __call__(self):
        while f"{self.prefix}{self.count}" in self.used:
            self.count += 1
        name = f"{self.prefix}{self.count}"
        self.used.add(name)
        return se.Symbol(name)


def _atomic(e) -> bool:
    return e.is_Number or isinstance(e, se.Symbol)


def reverse_sweep(pairs, output, leaves, fresh, kinks: bool = False) -> tuple:
    """``(new_pairs, gradient)``: the adjoint of the scalar program ``(pairs, output)``.

    ``ā_x = Σ_{definitions y that use x} ā_y ∂y/∂x`` in reverse order (each ``∂y/∂x`` the derivative of one
    definition's expression with respect to one of its symbols, :func:`~anholo.algebra.engine.engine_diff`);
    ``gradient[leaf]`` is ``∂output/∂leaf`` written with the new definitions (named by ``fresh()``)."""
    contributions: dict = {}

    def push(expr, bar):
        for s in expr.free_symbols:
            d = engine_diff(expr, s, kinks)
            if d != 0:
                contributions.setdefault(s, []).append(d if bar is None else bar * d)

    push(output, None)
    new = []
    for name, value in reversed(list(pairs)):
        terms = contributions.pop(name, None)
        if not terms:
            continue
        total = se.Add(*terms)
        if total == 0:
            continue
        if _atomic(total):
            bar = total
        else:
            bar = fresh()
            new.append((bar, total))
        push(value, bar)
    return new, {x: se.Add(*contributions.get(x, [zero])) for x in leaves}


def tangent_sweep(pairs, seeds, fresh, kinks: bool = False) -> tuple:
    """``(new_pairs, tangent)``: the forward (tangent) sweep of the program ``pairs`` along ``seeds``
    (symbol → its tangent, an expression); ``tangent(expr)`` is the tangent of any expression over the
    program's names, ``Σ_s ∂expr/∂s · ṡ``.  Symbols neither seeded nor defined in ``pairs`` are constants."""
    dot = dict(seeds)

    def tangent(expr):
        terms = []
        for s in expr.free_symbols:
            ds = dot.get(s)
            if ds is None:
                continue
            d = engine_diff(expr, s, kinks)
            if d != 0:
                terms.append(d * ds)
        return se.Add(*terms) if terms else zero

    new = []
    for name, value in pairs:
        x = tangent(value)
        if x == 0:
            continue
        if _atomic(x):
            dot[name] = x
        else:
            s = fresh()
            new.append((s, x))
            dot[name] = s
    return new, tangent


def _ordered(defs: dict) -> list:
    """The definitions ``{name: expr}`` in an order where each follows the names it uses."""
    order, seen = [], set()
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, 10 * len(defs) + 1000))

        def visit(a):
            if a in seen:
                return
            seen.add(a)
            for s in defs[a].free_symbols:
                if s in defs:
                    visit(s)
            order.append((a, defs[a]))

        for a in list(defs):
            visit(a)
    finally:
        sys.setrecursionlimit(limit)
    return order


def _factors(term) -> list:
    """The symbols that multiply a term of a sum (``a`` in ``a``, ``2·a·b``)."""
    if isinstance(term, se.Symbol):
        return [term]
    if isinstance(term, se.Mul):
        return [a for a in term.args if isinstance(a, se.Symbol)]
    return []


def _collect(terms: list):
    """``Σ terms`` with the symbol that multiplies most of them taken out, recursively (greedy)."""
    count: dict = {}
    for term in terms:
        for f in set(_factors(term)):
            count[f] = count.get(f, 0) + 1
    best = max(count, key=lambda f: (count[f], str(f)), default=None)
    if best is None or count[best] < 2:
        return se.Add(*terms)
    inner, rest = [], []
    for term in terms:
        if best in _factors(term):
            inner.append(se.Integer(1) if term == best else se.Mul(*[a for a in term.args if a != best]))
        else:
            rest.append(term)
    out = best * _collect(inner)
    return out + _collect(rest) if rest else out


def factored(expr):
    """``expr`` with common factors of its sums taken out (``a·b + a·c = a·(b + c)``: one multiplication
    fewer each time; the sum is rounded differently, the value is the same)."""
    if not expr.args:  # a number, a symbol, a constant such as E or pi
        return expr
    if isinstance(expr, se.Add):
        return _collect([factored(t) for t in expr.args])
    return expr.func(*[factored(a) for a in expr.args])


def global_cse(args, pairs, outputs, fresh, rounds: int = 8, factor: bool = True, identities: bool = True) -> Program:
    """Common-subexpression passes over every needed definition and output together (the definitions as
    expressions over each other's names; definitions that are a bare symbol or number substituted; with
    ``factor``, common factors of sums taken out first, :func:`factored`; with ``identities``, definitions
    whose values equal a small rational or ``±`` another definition at random points replaced by it,
    :func:`~anholo.algebra.identities.hidden_identities`), ``rounds`` passes (a pass can make two definitions
    equal, a factoring new common subexpressions, an identity new zeros), the result in dependency order."""
    defs, outputs = dict(pairs), list(outputs)
    taken = {str(a) for a in args} | fresh.used
    ordered = _ordered(defs)
    for round_ in range(rounds):
        if identities:
            found = hidden_identities(args, ordered)
            if found:
                keys = set(found)
                defs = {a: (b.xreplace(found) if b.free_symbols & keys else b) for a, b in defs.items()
                        if a not in found}
                ordered = [(a, defs[a]) for a, _ in ordered if a in defs]
                outputs = [o.xreplace(found) if o.free_symbols & keys else o for o in outputs]
        trivial = {a: b for a, b in defs.items() if _atomic(b)}
        while any(b in trivial for b in trivial.values()):  # chains a → b → c
            trivial = {a: trivial.get(b, b) for a, b in trivial.items()}
        if trivial:
            keys = set(trivial)
            defs = {a: (b.xreplace(trivial) if b.free_symbols & keys else b) for a, b in defs.items()
                    if a not in trivial}
            ordered = [(a, defs[a]) for a, _ in ordered if a in defs]
            outputs = [o.xreplace(trivial) for o in outputs]
        needed = {s for o in outputs for s in o.free_symbols}
        keep = []
        for name, value in reversed(ordered):
            if name in needed:
                keep.append(name)
                needed |= value.free_symbols
        keep.reverse()
        exprs = [defs[a] for a in keep] + outputs
        # the first pass finds the repeated subexpressions of the blocks, the later ones factor the sums of names
        more, reduced = engine_cse([factored(e) for e in exprs] if factor and round_ else exprs)
        rename = {a: fresh() for a, _ in more if str(a) in taken}  # symengine's names x0, x1, … already taken
        if rename:
            keys = set(rename)

            def renamed(e):
                return e.xreplace(rename) if e.free_symbols & keys else e

            more = [(rename.get(a, a), renamed(b)) for a, b in more]
            reduced = [renamed(e) for e in reduced]
        taken |= {str(a) for a, _ in more}
        fresh.used |= {str(a) for a, _ in more}
        defs = dict(more)
        defs.update(zip(keep, reduced[:len(keep)]))
        outputs = reduced[len(keep):]
        ordered = _ordered(defs)
        if not more and not trivial and not (identities and found) and round_:
            break  # a fixed point
    return Program(tuple(args), tuple(ordered), tuple(outputs))


def field_program(ms, multipliers: bool = False) -> Program | None:
    """The program of :meth:`~anholo.dynamics.maggi.MaggiSystem.program` (same arguments, outputs ``q̇``,
    ``M`` row-major, ``F``; with or without the multiplier rows) formed by differentiating the Lagrangian
    along its program (module docstring), with ``W X_β`` formed both ways (from the entries of ``W`` and by
    Hessian–vector products, :func:`formed_field_program`) and the one with fewer operations kept; ``None``
    where that program holds a non-finite constant (the caller keeps its own program, whose construction
    names the cause)."""
    from ..algebra.codegen import operation_count

    best = None
    for tangents in (False, True):
        prog = formed_field_program(ms, multipliers, tangents)
        if prog is not None and (best is None or operation_count(prog)["total"] < best[0]):
            best = (operation_count(prog)["total"], prog)
    return best[1] if best else None


def formed_field_program(ms, multipliers: bool = False, tangents: bool = True) -> Program | None:
    """:func:`field_program` with ``W X_β`` (the columns of ``g = Xᵀ W X``, and ``W w`` in the multiplier
    rows) formed one way: with ``tangents``, as the tangent of ``p = ∂L/∂q̇`` along ``δq̇ = X_β`` over L's
    program and its adjoint (a Hessian–vector product, Pearlmutter (1994); Griewank & Walther (2008) §5.4),
    else from the entries ``W_AB`` differentiated as expressions and contracted with ``X_β``.  The first is
    smaller where W is dense and L is written body by body (the Whipple bicycle: 1,783 operations against
    1,952; the 8-trailer 848 against 1,182), the second where W has few entries (the two-wheeled carriage 101
    against 168; the rattleback 1,238 against 1,259)."""
    C, P = ms._cache, ms._parts
    q, u, t, kappa, cterm, dep, free, kinks = (C[k] for k in ("q", "u", "t", "kappa", "c", "dep", "free", "kinks"))
    n, m, k = ms.n, ms.m, len(dep)
    v, S, beta = P["v"], P["S"], P["beta"]
    args = ms.program_args()
    L = C["L"]
    Q = [zero] * n
    for extra in (C["Q"] if ms.forces is not None else None, ms.engine_forces):
        if extra is not None:
            Q = [a + b for a, b in zip(Q, extra)]
    used = {str(a) for a in args} | {str(s) for e in [L, *Q, *(kappa[a][A] for a in range(k) for A in range(n)),
                                                      *cterm] for s in e.free_symbols}
    used |= {str(x) for x in q + u + v} | ({str(t)} if t is not None else set())
    fresh = _Names(used, "h")
    ud = [fresh() for _ in range(n)]  # the velocities on C, as definitions
    on_ud = dict(zip(u, ud))

    def own(pairs, reduced):  # a cse list, renamed with fresh names where symengine's names are taken
        if any(str(a) in fresh.used for a, _ in pairs):
            ren = {a: fresh() for a, _ in pairs}
            pairs, reduced = [(ren[a], b.xreplace(ren)) for a, b in pairs], [e.xreplace(ren) for e in reduced]
        fresh.used |= {str(a) for a, _ in pairs}
        return pairs, reduced

    # one common-subexpression pass over the frame X_α, β, w (written over the symbols r of the differentiated
    # constraints), the constraints φ, L and the entries W_AB, all at the velocities ud on C
    r = [fresh() for _ in range(k)]
    wP = P["inv"].solve(se.DenseMatrix(k, 1, [-s for s in r])) if k else None
    phi = [se.Add(*[kappa[a][A] * ud[A] for A in range(n)]) + cterm[a] for a in range(k)]
    upper = [(A, B) for A in range(n) for B in range(A, n)]
    W_exprs = [] if tangents else [P["W0"][A][B].xreplace(on_ud) for A, B in upper]  # ∂²L/∂q̇^A∂q̇^B
    groups = [[S[A, al] for al in range(m) for A in range(n)], [beta[a, 0] for a in range(k)],
              [wP[a, 0] for a in range(k)], phi, [L.xreplace(on_ud)], W_exprs]
    base, reduced = own(*engine_cse([e for g in groups for e in g]))
    out, pos = [], 0
    for g in groups:
        out.append(reduced[pos:pos + len(g)])
        pos += len(g)
    Xf, beta_r, w_r, phi_r, (Lout,), W_r = out
    X = [[Xf[al * n + A] for A in range(n)] for al in range(m)]
    kin = []  # the kinematics q̇ = X_α v^α + β, as the definitions of ud
    for A in range(n):
        e = se.Add(*[X[al][A] * v[al] for al in range(m)])
        if A in dep:
            e = e + beta_r[dep.index(A)]
        kin.append((ud[A], e))
    # r = ∂φ/∂t + ∂φ/∂q q̇: a tangent sweep along (δt, δq) = (1, q̇); then w^P = −κ_P⁻¹ r
    seeds = {q[A]: ud[A] for A in range(n)}
    if t is not None:
        seeds[t] = se.Integer(1)
    w = [zero] * n
    dphi = []
    if k:
        dphi, tan = tangent_sweep(base, seeds, fresh, kinks)
        dphi += [(r[a], tan(phi_r[a])) for a in range(k)]
        for a, Pc in enumerate(dep):
            w[Pc] = w_r[a]
    # L's gradient (reverse sweep), and a tangent sweep of it along (δt, δq) = (1, q̇)
    adjoint, grad = reverse_sweep(base, Lout, list(q) + ud, fresh, kinks)
    named = []

    def name(e):
        if _atomic(e):
            return e
        s = fresh()
        named.append((s, e))
        return s

    G = [name(grad[x]) for x in q]
    p = [name(grad[x]) for x in ud]
    hp, tan = tangent_sweep(base + adjoint + named, seeds, fresh, kinks)
    Qc = [e.xreplace(on_ud) if e != 0 else zero for e in Q]
    # ∂p/∂t + ∂p/∂q q̇: the tangent of p (W w is added with W X_α: (W X_α)·w reuses W X_α of g)
    hq = [tan(pA) for pA in p]
    if tangents:  # W X_β and W w: tangents of p along δq̇ = X_β, w (q and t fixed)
        def hessian_times(vector):
            more, tan_v = tangent_sweep(base + adjoint + named, {ud[A]: vector[A] for A in range(n)
                                                                   if vector[A] != 0}, fresh, kinks)
            hp.extend(more)
            return [tan_v(pA) for pA in p]

        WX = [hessian_times(X[be]) for be in range(m)]
        Ww = hessian_times(w) if multipliers and any(x != 0 for x in w) else [zero] * n
    else:
        Wt = {}
        for (A, B), e in zip(upper, W_r):
            Wt[A, B] = Wt[B, A] = e
        WX = [[se.Add(*[Wt[A, B] * X[be][B] for B in range(n) if X[be][B] != 0]) for A in range(n)]
              for be in range(m)]
        Ww = [se.Add(*[Wt[A, B] * w[B] for B in range(n) if w[B] != 0]) for A in range(n)]
    size = m + k if multipliers else m
    M = [[zero] * size for _ in range(size)]
    for al in range(m):
        for be in range(al, m):
            M[al][be] = M[be][al] = se.Add(*[X[al][A] * WX[be][A] for A in range(n) if X[al][A] != 0])
    F = [se.Add(*[X[al][A] * (G[A] - hq[A] + Qc[A]) for A in range(n) if X[al][A] != 0])
         - se.Add(*[WX[al][B] * w[B] for B in range(n) if w[B] != 0]) for al in range(m)]
    if multipliers:
        for a, Pc in enumerate(dep):
            for be in range(m):
                M[m + a][be] = -WX[be][Pc]
            M[m + a][m + a] = se.Integer(1)
            F.append(hq[Pc] + Ww[Pc] - G[Pc] - Qc[Pc])
    outputs = [e for _, e in kin] + [M[i][j] for i in range(size) for j in range(size)] + F
    pairs = base + kin + dphi + adjoint + named + hp
    try:
        prog = global_cse(args, pairs, outputs, fresh)
    except NonFiniteExpressionError:
        return None
    defined = {a for a, _ in prog.pairs} | set(args)
    if any(s not in defined for _, e in prog.pairs for s in e.free_symbols) or any(
            s not in defined for e in prog.outputs for s in e.free_symbols):
        return None  # a symbol outside the Maggi program's arguments (should not happen): keep that program
    return prog



def input_digest(ms, multipliers: bool) -> str:
    """A digest of everything :func:`field_program` reads: the symengine forms of L, the constraints and the
    forces, the dependent coordinates, the symbols the program can take as arguments, and the source of the
    modules that form the program (a change of the method makes a new digest).  Nothing is formed to compute it
    (not even :meth:`~anholo.dynamics.maggi.MaggiSystem.program_args`, which needs the implicit form's cse)."""
    import importlib

    C = ms._cache
    h = hashlib.sha256()
    for module in ("anholo.dynamics.maggi_field", type(ms).__module__, "anholo.algebra.engine", "anholo.algebra.program",
                   "anholo.algebra.identities"):
        h.update(Path(importlib.import_module(module).__file__).read_bytes())
    h.update(se.__version__.encode())
    k = len(C["dep"])
    kappa = [C["kappa"][a][A] for a in range(k) for A in range(ms.n)]
    forces = [*(C["Q"] if ms.forces is not None else ()), *(ms.engine_forces or ())]
    symbols = sorted({str(s) for e in [C["L"], *kappa, *C["c"], *forces] for s in e.free_symbols})
    texts = [str(multipliers), str(C["L"]), str(C["dep"]), str(C["free"]), str(C["kinks"]), str(C["t"]),
             *(str(e) for e in kappa), *(str(c) for c in C["c"]), *(str(e) for e in forces),
             *(str(a) for a in C["q"]), *(str(v) for v in ms.free_velocities), "symbols:", *symbols]
    h.update("\x00".join(texts).encode())
    return h.hexdigest()


#: The files of the code cache this module writes (the formed programs), as glob patterns.
CACHE_FILES = ("maggi-field-*.json",)


def _store_dir():
    from ..algebra.codegen import cache_directory

    return cache_directory(required=False)  # where the compiled fields are kept too


def stored_field_program(ms, multipliers: bool = False) -> Program | None:
    """:func:`field_program`, kept as text in the code cache (``$ANHOLO_CACHE``, default
    ``~/.cache/anholo/codegen``, where the compiled field is kept too) under a digest of its inputs and of the
    source of the modules that form it: a second process reads it back (milliseconds) instead of forming it
    again (about half a second for the Whipple bicycle).  The program returned is always the one read from its
    text, so that every process computes with the same expressions (symengine orders the terms of a sum by
    construction, and the order of a floating sum is its rounding).  A program whose text does not give it
    back exactly (a floating constant, whose text keeps 15 digits; a name such as ``I`` or ``E``, which the
    parser reads as a constant), or without a writable cache, is formed each time."""
    from ..algebra.codegen import store_json

    directory = _store_dir()
    path = directory / f"maggi-field-{input_digest(ms, multipliers)}.json" if directory is not None else None
    names = [str(a) for a in ms.program_args()]
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text())
            if data["args"] == names:
                return Program.from_text(data)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, NonFiniteExpressionError):
            pass  # formed again below
    prog = field_program(ms, multipliers)
    data = prog.to_text() if prog is not None and path is not None else None
    if data is None:
        return prog  # no cache, or the text does not give the program back (a float's 15 digits; I or E)
    store_json(path, data)
    return Program.from_text(data)
