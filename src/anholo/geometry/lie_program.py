"""Lie brackets of vector fields over one growing straight-line program, valued at a few points.

The engine of :func:`anholo.geometry.distribution.numerical_flag` (the flag of a large distribution,
Maggi's route): vector fields whose components are nodes of a hash-consed three-address program, their
iterated brackets ``[X, Y]^A = X(Y^A) − Y(X^A)`` by forward-mode differentiation along the program
(Griewank & Walther (2008)) with the derivative rules of ``+``, ``·``, powers and the elementary
functions written out, and the values of every node at the sample points computed generation by
generation with numpy (docs/controllability.rst).
"""

from __future__ import annotations

from array import array

import numpy as np

from ..algebra.engine import engine_diff, se, zero
from ..algebra.program import Program
from ..errors import DimensionError, NonFiniteExpressionError

__all__ = []


class _Brackets:
    """Vector fields on Q whose components are nodes of one growing straight-line program, their Lie
    brackets, and the value of every node at a few fixed points.

    The program is kept in three-address form: every node is one operation on earlier nodes (``a + b``,
    ``a · b``, ``a^c`` with a number c, ``f(a)`` for an elementary function f), an argument (coordinate
    or parameter) or a number, and is hash-consed (an operation met twice is one node).  A vector field
    ``V`` acts on a node by the chain rule along the program (forward-mode differentiation in the
    direction V, Griewank & Walther (2008)), one rule per operation written out:

        V(a + b) = V(a) + V(b),   V(a b) = V(a) b + a V(b),   V(a^c) = c a^(c−1) V(a),
        V(sin a) = cos a · V(a),  V(cos a) = −sin a · V(a),  V(exp a) = exp a · V(a),  V(log a) = a^(−1) V(a),

    ``V(q^B) = V^B`` and ``V(p) = 0`` for the other arguments (any other function: its partial derivatives
    by symengine, once per function).  Each ``V(t)`` is a few new nodes, memoised per (V, t).  The bracket
    of coordinate vector fields

        [X, Y]^A = X(Y^A) − Y(X^A)

    then costs a few nodes per node of its operands, whatever the size of their trees (the n-trailer's
    depth-(n+1) brackets: about 3·10^5 nodes for n = 10, 2 µs each).  The values of the nodes at the
    points are computed when a bracket's values are wanted, generation by generation (a node's operands
    lie in earlier generations), all sums and all products of a generation by one numpy operation each:
    no tree is expanded, compiled or simplified (a component that is an exact 0 by these rules is
    noticed; other zeros are numerical).  The symbolic definitions of the kept brackets are made only when
    read (:meth:`outputs`).
    """

    def __init__(self, coordinates, args, pairs, fields, points):
        self.n = len(coordinates)
        self.P = len(points)
        self.kind, self.ops, self.data = [], [], []
        self.gen = array("q")  # the generation of each node (arguments and numbers: 0)
        self.mask = []  # bit B set: the node depends on the coordinate q^B (structurally)
        self.moves = []  # moves[f]: bit B set where the field f has a component along ∂_B
        # 0 sum, 1 product, 2 other; the operands of sums and products (machine integers: evaluated by numpy)
        self.code, self.first, self.second = array("b"), array("q"), array("q")
        self.val = np.empty((1024, self.P))  # row k: the values of node k at the points
        self.consts = {}  # node -> its number, for the numbers
        self.done = 0  # nodes below this have their values (the others wait for :meth:`evaluate`)
        self.sums, self.products = {}, {}  # operands -> node (hash-consing of a + b and a · b)
        self.cons = {}  # (kind, operands, data) -> node, for the other nodes
        self.memo = []  # memo[f]: node -> V_f(node), a node or None (zero)
        self.fields = []
        self._partials = {}  # function type -> its partial derivatives in placeholders
        self._numeric = {}  # function type -> numpy evaluation
        self.coordinate = {}  # node -> B for the coordinate q^B
        self.args = tuple(args)
        env = {}
        for a in args:
            node = self._leaf("arg", a, [float(pt[str(a)]) for pt in points])
            env[a] = node
        for B, s in enumerate(coordinates):
            self.coordinate[env[s]] = B
            self.mask[env[s]] = 1 << B
        for name, value in pairs:
            env[name] = self.define(value, env)
        for row in fields:
            self.add_field([self.define(e, env) for e in row])

    # --- nodes ---------------------------------------------------------------------------------------

    def _node(self, kind, ops, data, table=None, key=None):
        """A new node (``table[key]`` records it; ``self.cons[(kind, ops, data)]`` by default); its
        generation is one more than its operands' (arguments and numbers: 0)."""
        k = len(self.kind)
        if table is None:
            table, key = self.cons, (kind, ops, data)
        table[key] = k
        self.kind.append(kind)
        self.ops.append(ops)
        self.data.append(data)
        gen, mask = self.gen, self.mask
        self.gen.append(1 + max(gen[x] for x in ops) if ops else 0)
        bits = 0
        for x in ops:
            bits |= mask[x]
        mask.append(bits)
        self.code.append(2)
        self.first.append(0)
        self.second.append(0)
        return k

    def _binary(self, kind, ops, table):
        """A new sum or product of two nodes (the hot path of :meth:`_node`)."""
        k = len(self.kind)
        table[ops] = k
        self.kind.append(kind)
        self.ops.append(ops)
        self.data.append(None)
        x, y = ops
        gx, gy = self.gen[x], self.gen[y]
        self.gen.append(1 + (gx if gx > gy else gy))
        self.mask.append(self.mask[x] | self.mask[y])
        self.code.append(0 if kind == "add" else 1)
        self.first.append(x)
        self.second.append(y)
        return k

    def _leaf(self, kind, data, value):
        """An argument or a number, with its values (evaluated at once)."""
        self.evaluate()
        k = self._node(kind, (), data)
        if kind == "const":
            self.consts[k] = data
        if k == len(self.val):
            self.val = np.concatenate([self.val, np.empty_like(self.val)])
        self.val[k] = value
        self.done = k + 1
        return k

    def const(self, c):
        """A number (symengine) as a node."""
        c = se.sympify(c)
        hit = self.cons.get(("const", (), c))
        return hit if hit is not None else self._leaf("const", c, float(c))

    def evaluate(self):
        """The values of the nodes made since the last call: generation after generation, the sums and the
        products of one generation by one numpy operation each, the other nodes one by one."""
        lo, hi = self.done, len(self.kind)
        if lo == hi:
            return
        while len(self.val) < hi:
            self.val = np.concatenate([self.val, np.empty_like(self.val)])
        V = self.val
        gens, codes = np.frombuffer(self.gen, np.int64)[lo:hi], np.frombuffer(self.code, np.int8)[lo:hi]
        first = np.frombuffer(self.first, np.int64)[lo:hi].copy()  # copies: the arrays grow again later
        second = np.frombuffer(self.second, np.int64)[lo:hi].copy()
        order = np.lexsort((codes, gens))
        runs = np.flatnonzero(np.diff(gens[order]) | np.diff(codes[order])) + 1
        with np.errstate(all="ignore"):
            for run in np.split(order, runs):
                c, ids = codes[run[0]], run + lo
                if c == 0:
                    V[ids] = V[first[run]] + V[second[run]]
                elif c == 1:
                    V[ids] = V[first[run]] * V[second[run]]
                else:
                    for k in ids:
                        V[k] = self._value(int(k))
        self.done = hi

    def _value(self, k):
        """The values of a power or a function node."""
        kind, ops, data, V = self.kind[k], self.ops[k], self.data[k], self.val
        if kind == "pow":
            v = V[ops[0]]
            if data == -1:
                return 1.0 / v
            if data == se.Rational(1, 2):
                return np.sqrt(v)
            return np.power(v, float(data))
        ev = self._numeric.get(data)
        if ev is None:
            ev = _NUMPY.get(data)
            if ev is None:
                from ..algebra.codegen import expression_function  # the one code generator

                dummies = [se.Symbol(f"_arg{i}") for i in range(len(ops))]
                f = expression_function(dummies, data(*dummies))
                ev = lambda *vs, f=f: np.asarray(f(*[np.asarray(v, float) for v in vs]), float).reshape(-1)  # noqa: E731
            self._numeric[data] = ev
        return ev(*[V[x] for x in ops])

    def add(self, x, y):
        """``x + y`` (None is zero)."""
        if x is None:
            return y
        if y is None:
            return x
        cx, cy = self.consts.get(x), self.consts.get(y)
        if cx is not None and cy is not None:
            s = cx + cy
            return None if s == 0 else self.const(s)
        if cx == 0:
            return y
        if cy == 0:
            return x
        ops = (x, y) if x <= y else (y, x)
        hit = self.sums.get(ops)
        return hit if hit is not None else self._binary("add", ops, self.sums)

    def mul(self, x, y):
        """``x · y`` (None is zero)."""
        if x is None or y is None:
            return None
        cx, cy = self.consts.get(x), self.consts.get(y)
        if cx is not None and cy is not None:
            p = cx * cy
            return None if p == 0 else self.const(p)
        if cx is not None or cy is not None:
            c, z = (cx, y) if cx is not None else (cy, x)
            if c == 0:
                return None
            if c == 1:
                return z
            inner = self.consts.get(self.ops[z][0]) if self.kind[z] == "mul" else None
            if inner is not None:  # c (d z') = (c d) z'
                return self.mul(self.const(c * inner), self.ops[z][1])
            x, y = self.const(c), z  # the number first
            ops = (x, y)
        else:
            ops = (x, y) if x <= y else (y, x)
        hit = self.products.get(ops)
        if hit is not None:
            return hit
        return self._binary("mul", ops, self.products)

    def power(self, x, c):
        """``x^c`` for a number c."""
        if x is None:
            if c > 0:
                return None
            raise NonFiniteExpressionError("a generator of D divides by an expression that is identically 0; "
                                           "rewrite the constraints so that their coefficients are defined.")
        if c == 0:
            return self.const(1)
        if c == 1:
            return x
        cx = self.consts.get(x)
        if cx is not None:
            return self.const(cx ** c)
        if self.kind[x] == "pow":  # (a^d)^c = a^(dc) for integer c
            d = self.data[x]
            if se.sympify(c).is_integer:
                return self.power(self.ops[x][0], d * c)
        hit = self.cons.get(("pow", (x,), c))
        return hit if hit is not None else self._node("pow", (x,), c)

    def function(self, fn, xs):
        """``fn(x_1, …)`` for a function type of symengine."""
        xs = tuple(self.const(0) if x is None else x for x in xs)
        hit = self.cons.get(("fn", xs, fn))
        if hit is not None:
            return hit
        if all(self.kind[x] == "const" for x in xs):
            value = fn(*[self.data[x] for x in xs])
            if not value.free_symbols and value.is_Number:
                return None if value == 0 else self.const(value)
        return self._node("fn", xs, fn)

    def define(self, expr, env):
        """A symengine expression in the symbols of ``env`` (symbol -> node) as a node (None for 0)."""
        memo, stack = {}, [(expr, False)]
        while stack:
            e, ready = stack.pop()
            if e in memo:
                continue
            if isinstance(e, se.Symbol):
                if e not in env:
                    raise DimensionError(f"the symbol {e} is neither a coordinate, a parameter nor a definition.")
                memo[e] = env[e]
                continue
            if not e.free_symbols:
                memo[e] = None if e == 0 else self.const(e)
                continue
            if not ready:
                stack.append((e, True))
                stack.extend((a, False) for a in e.args if a not in memo)
                continue
            xs = [memo[a] for a in e.args]
            if isinstance(e, se.Add):
                out = None
                for x in xs:
                    out = self.add(out, x)
            elif isinstance(e, se.Mul):
                out = self.const(1)
                for x in xs:
                    out = self.mul(out, x)
            elif isinstance(e, se.Pow) and not e.args[1].free_symbols:
                out = self.power(xs[0], e.args[1])
            else:
                out = self.function(type(e) if not isinstance(e, se.Pow) else se.Pow, xs)
            memo[e] = out
        return memo[expr]

    # --- vector fields ---------------------------------------------------------------------------------

    def add_field(self, components) -> int:
        self.fields.append(tuple(components))
        self.memo.append({})
        self.moves.append(sum(1 << B for B, c in enumerate(components) if c is not None))
        return len(self.fields) - 1

    def _partial(self, fn, nargs):
        hit = self._partials.get(fn)
        if hit is None:
            dummies = [se.Symbol(f"_arg{i}") for i in range(nargs)]
            f = fn(*dummies)
            hit = self._partials[fn] = (dummies, [engine_diff(f, d) for d in dummies])
        return hit

    def _rule(self, f: int, t: int):
        """``V_f(t)`` for one node whose operands' derivatives are known."""
        kind, ops, memo = self.kind[t], self.ops[t], self.memo[f]
        if kind == "arg":
            B = self.coordinate.get(t)
            return None if B is None else self.fields[f][B]
        if kind == "const":
            return None
        if kind == "add":
            return self.add(memo[ops[0]], memo[ops[1]])
        if kind == "mul":
            a, b = ops
            return self.add(self.mul(memo[a], b), self.mul(a, memo[b]))
        if kind == "pow":
            a, c = ops[0], self.data[t]
            da = memo[a]
            return None if da is None else self.mul(self.mul(self.const(c), self.power(a, c - 1)), da)
        fn = self.data[t]
        if fn in _DERIVATIVE:
            da = memo[ops[0]]
            return None if da is None else self.mul(_DERIVATIVE[fn](self, ops[0], t), da)
        dummies, partials = self._partial(fn, len(ops))
        env = dict(zip(dummies, ops))
        out = None
        for x, p in zip(ops, partials):
            dx = memo[x]
            if dx is not None:
                out = self.add(out, self.mul(self.define(p, env), dx))
        return out

    def derivative(self, f: int, t):
        """``V_f(t)`` (None for zero), the nodes it needs differentiated first (in the order of the program)."""
        if t is None:
            return None
        memo, moves, mask = self.memo[f], self.moves[f], self.mask
        if t in memo:
            return memo[t]
        if not mask[t] & moves:  # t does not depend on the coordinates V_f moves
            memo[t] = None
            return None
        need, stack, seen = [], [t], {t}
        while stack:
            s = stack.pop()
            need.append(s)
            for x in self.ops[s]:
                if x not in seen and x not in memo:
                    if mask[x] & moves:
                        seen.add(x)
                        stack.append(x)
                    else:
                        memo[x] = None
        need.sort()  # operands are made before the nodes that use them
        kinds, operands, add, mul = self.kind, self.ops, self.add, self.mul
        for s in need:
            kind = kinds[s]
            if kind == "add":  # the two rules met most, written in place
                x, y = operands[s]
                memo[s] = add(memo[x], memo[y])
            elif kind == "mul":
                x, y = operands[s]
                memo[s] = add(mul(memo[x], y), mul(x, memo[y]))
            else:
                memo[s] = self._rule(f, s)
        return memo[t]

    def bracket(self, a: int, g: int) -> tuple:
        """The components of ``[V_a, V_g]`` (nodes, None for zero), with their values at the points."""
        X, Y, minus = self.fields[a], self.fields[g], self.const(-1)
        return tuple(self.add(self.derivative(a, Y[A]), self.mul(minus, self.derivative(g, X[A])))
                     for A in range(self.n))

    def at_points(self, components) -> np.ndarray:
        """``(points, n)`` values of a vector field's components."""
        self.evaluate()
        out = np.zeros((self.P, self.n))
        for A, c in enumerate(components):
            if c is not None:
                out[:, A] = self.val[c]
        return out

    def outputs(self, components) -> tuple:
        """``(program, names)``: a straight-line program in ``args`` whose outputs are ``components`` (the
        nodes they need as symengine definitions, named ``<prefix><node>`` with a prefix no argument
        starts with, made when first read: :class:`_DeferredProgram`), and the components as names,
        arguments or numbers."""
        taken, prefix = [str(a) for a in self.args], "_lie"
        while any(t.startswith(prefix) for t in taken):
            prefix = "_" + prefix
        top = 1 + max((c for c in components if c is not None), default=-1)
        kinds, operands, data = self.kind[:top], self.ops[:top], self.data[:top]  # made into definitions when read

        def name(s):
            kind = self.kind[s]
            return self.data[s] if kind in ("arg", "const") else se.Symbol(f"{prefix}{s}")

        names = tuple(zero if c is None else name(c) for c in components)

        def build() -> tuple:
            need, stack = set(), [c for c in components if c is not None]
            while stack:
                s = stack.pop()
                if s not in need:
                    need.add(s)
                    stack.extend(operands[s])
            expr, pairs = {}, []
            for s in sorted(need):
                kind, ops, d = kinds[s], operands[s], data[s]
                if kind in ("arg", "const"):
                    expr[s] = d
                    continue
                xs = [expr[x] for x in ops]
                if kind == "add":
                    value = xs[0] + xs[1]
                elif kind == "mul":
                    value = xs[0] * xs[1]
                elif kind == "pow":
                    value = xs[0] ** d
                else:
                    value = d(*xs)
                expr[s] = se.Symbol(f"{prefix}{s}")
                pairs.append((expr[s], value))
            return tuple(pairs)

        return _DeferredProgram(self.args, names, build), names


class _DeferredProgram(Program):
    """A :class:`~anholo.algebra.program.Program` whose definitions are made when first read (``pairs``):
    the brackets of a numerical flag are decided from values at points, and the symbolic program of the
    kept brackets (hundreds of thousands of definitions for the 10-trailer) is wanted only by
    :meth:`~anholo.geometry.distribution.Flag.ranks_at` and
    :meth:`~anholo.geometry.distribution.Flag.basis_matrix`."""

    def __init__(self, args, outputs, build):
        object.__setattr__(self, "args", tuple(args))
        object.__setattr__(self, "outputs", tuple(outputs))
        object.__setattr__(self, "_build", build)

    def __getattr__(self, name):
        if name != "pairs" or "_build" not in self.__dict__:
            raise AttributeError(name)
        pairs = self._build()
        object.__setattr__(self, "pairs", pairs)
        object.__delattr__(self, "_build")
        return pairs

    def __reduce__(self):  # pickles as the plain program, its definitions made
        return (Program.derived, (self.args, self.pairs, self.outputs))


def _d_sin(lie, a, t):
    return lie.function(se.cos, (a,))


def _d_cos(lie, a, t):
    return lie.mul(lie.const(-1), lie.function(se.sin, (a,)))


def _d_exp(lie, a, t):
    return t


def _d_log(lie, a, t):
    return lie.power(a, -1)


#: The derivative rules written out (``f'(a)`` as a node; ``t`` is the node ``f(a)``).
_DERIVATIVE = {se.sin: _d_sin, se.cos: _d_cos, se.exp: _d_exp, se.log: _d_log}
#: Functions evaluated by numpy (others by a symengine Lambdify of the function, made once).
_NUMPY = {se.sin: np.sin, se.cos: np.cos, se.tan: np.tan, se.exp: np.exp, se.log: np.log, se.sinh: np.sinh,
          se.cosh: np.cosh, se.tanh: np.tanh, se.asin: np.arcsin, se.acos: np.arccos, se.atan: np.arctan}

