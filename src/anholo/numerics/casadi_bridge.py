"""anholo's expressions handed to CasADi (Andersson, Gillis, Horn, Rawlings & Diehl (2019)).

CasADi is an optional dependency (``pip install "anholo[optimal]"``); :func:`require_casadi` imports it
or raises :class:`CasadiMissingError`.  :class:`SXConverter` writes symengine expressions (the straight-line
programs of :mod:`anholo.algebra.program`, Maggi's implicit form, the rates of a first-order system) as
CasADi ``SX`` expressions:

* every distinct subexpression is converted once (a memo over the expression DAG), and a
  :class:`~anholo.algebra.program.Program` is converted definition by definition, each shared name
  bound to its ``SX`` value — so a shared subexpression stays one node of CasADi's graph;
* the walk is iterative (no recursion limit on deep expressions);
* ``Abs`` and ``sign`` become ``fabs`` and ``sign``; ``sec``, ``csc``, ``cot`` the reciprocals of
  ``cos``, ``sin``, ``tan``; the unevaluated derivatives of ``Abs``/``sign`` that symengine leaves
  (``Derivative``/``Subs`` nodes) are first rewritten by
  :func:`~anholo.algebra.engine.kink_derivative` (``d|f| = sign(f) df``, ``d sign(f) = 0``).

Parameters of the system enter as numbers (their values), so CasADi folds them into its graph.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..algebra.engine import kink_derivative, se
from ..errors import SimulationError

__all__ = ["OptimalControlError", "CasadiMissingError", "SolverFailedError", "require_casadi", "SXConverter"]


class OptimalControlError(SimulationError):
    """A trajectory optimisation cannot be set up or solved as asked (base class of the two below; also
    raised for an expression that CasADi cannot represent)."""


class CasadiMissingError(OptimalControlError):
    """The optional dependency CasADi is not installed: ``pip install "anholo[optimal]"``."""


class SolverFailedError(OptimalControlError):
    """IPOPT did not converge; ``status`` holds its return status (e.g. ``Infeasible_Problem_Detected``,
    ``Maximum_Iterations_Exceeded``) and ``iterations`` the iterations it took."""

    def __init__(self, message: str, status: str = "", iterations: int = 0):
        super().__init__(message)
        self.status = status
        self.iterations = iterations


def require_casadi():
    """The ``casadi`` module, or :class:`CasadiMissingError` saying how to install it."""
    try:
        import casadi
    except ImportError:
        raise CasadiMissingError(
            "trajectory optimisation needs CasADi (with its bundled IPOPT), which is not installed; install the "
            "optional extra: pip install \"anholo[optimal]\" (or pip install casadi).") from None
    return casadi


_UNARY = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
          "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
          "exp": "exp", "log": "log", "abs": "fabs", "sign": "sign", "sqrt": "sqrt"}
_RECIPROCAL = {"sec": "cos", "csc": "sin", "cot": "tan"}


class SXConverter:
    """symengine expressions → CasADi ``SX``.

    Parameters
    ----------
    env : mapping
        Symbol name → ``SX`` (or number) for every free symbol the expressions may use.
    casadi : module, optional
        The ``casadi`` module (default: :func:`require_casadi`).

    Examples
    --------
    >>> import pytest; ca = pytest.importorskip("casadi")
    >>> x = se.Symbol("x")
    >>> X = ca.SX.sym("x")
    >>> conv = SXConverter({"x": X})
    >>> f = ca.Function("f", [X], [conv(se.sin(x)**2 + se.Abs(x) / 2)])
    >>> round(float(f(-0.5)), 12) == round(__import__("math").sin(-0.5)**2 + 0.25, 12)
    True
    """

    def __init__(self, env: Mapping, casadi=None):
        self.ca = casadi if casadi is not None else require_casadi()
        self.env = {str(k): v for k, v in env.items()}
        self.memo: dict = {}

    def bind(self, name, value) -> None:
        """Bind one more symbol (a shared definition's name) to its ``SX`` value."""
        self.env[str(name)] = value

    def program(self, program) -> list:
        """The outputs of a :class:`~anholo.algebra.program.Program` (its definitions bound in order)."""
        for name, value in program.pairs:
            self.bind(name, self(value))
        return [self(o) for o in program.outputs]

    def many(self, exprs: Sequence) -> list:
        return [self(e) for e in exprs]

    def __call__(self, expr):
        memo = self.memo
        root = expr
        if root in memo:
            return memo[root]
        stack = [(root, False)]
        while stack:
            e, expanded = stack.pop()
            if e in memo:
                continue
            if isinstance(e, (se.Derivative, se.Subs)):
                d = kink_derivative(e)
                if d not in memo:
                    stack.append((e, True))
                    stack.append((d, False))
                    continue
                memo[e] = memo[d]
                continue
            if not e.args or isinstance(e, se.Symbol):
                memo[e] = self._atom(e)
                continue
            if not expanded:
                stack.append((e, True))
                stack.extend((a, False) for a in e.args if a not in memo)
                continue
            memo[e] = self._node(e, [memo[a] for a in e.args])
        return memo[root]

    def _atom(self, e):
        if isinstance(e, se.Symbol):
            name = str(e)
            if name not in self.env:
                raise OptimalControlError(
                    f"the expression uses {name}, which is neither a state, an input, the time nor a parameter "
                    "with a value; give it a value (values={...}).")
            return self.env[name]
        if e.is_Number:
            if not e.is_real:
                raise OptimalControlError(f"the expression holds the complex number {e}; expressions must be real.")
            return float(e)
        if e == se.pi or e == se.E:
            return float(e)
        try:
            return float(e)
        except (TypeError, ValueError, RuntimeError):
            raise OptimalControlError(f"CasADi has no counterpart of {e}; rewrite the expression with elementary "
                                      "functions.") from None

    def _node(self, e, args):
        ca = self.ca
        if isinstance(e, se.Add):
            out = args[0]
            for a in args[1:]:
                out = out + a
            return out
        if isinstance(e, se.Mul):
            out = args[0]
            for a in args[1:]:
                out = out * a
            return out
        if isinstance(e, se.Pow):
            base, ex = args
            raw = e.args[1]
            if raw.is_Number:
                if raw == se.Rational(1, 2):
                    return ca.sqrt(base)
                if raw == se.Rational(-1, 2):
                    return 1 / ca.sqrt(base)
                if raw == -1:
                    return 1 / base
                if raw.is_Integer:
                    return ca.constpow(base, float(raw)) if int(raw) > 0 else 1 / ca.constpow(base, -float(raw))
                return ca.constpow(base, float(raw))
            return ca.power(base, ex)
        name = type(e).__name__.lower()
        if name in _UNARY and len(args) == 1:
            return getattr(ca, _UNARY[name])(args[0])
        if name in _RECIPROCAL and len(args) == 1:
            return 1 / getattr(ca, _RECIPROCAL[name])(args[0])
        if name == "atan2" and len(args) == 2:
            return ca.atan2(args[0], args[1])
        raise OptimalControlError(f"CasADi has no counterpart of {type(e).__name__} (in {str(e)[:120]}); rewrite the "
                                  "expression with elementary functions.")
