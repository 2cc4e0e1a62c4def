"""The nonholonomic field of a large system as a straight-line program: Lie derivatives and divergence.

For a system on Maggi's route (:class:`~anholo.dynamics.maggi.MaggiSystem`) the field Γ_nh on the
constraint submanifold C is kept as a program (shared subexpressions, never expanded) in the
coordinates ``(q^A, v^α)`` of C, ``v^α = q̇^{f_α}`` (the free velocities of Maggi's frame):

    q̇^A = X_α^A(q) v^α + β^A(q),        v̇^α = Γ^α(q, v),

with ``X_α = ∂_{f_α} + C^P_α ∂_P`` the adapted frame, ``β`` the affine part of the dependent
velocities and ``Γ^α`` the explicit LU solution of Maggi's equations ``g_αβ v̇^β = X_α^A (F_A − W_AB w^B)``
(Kane & Levinson (1985); docs/nonholonomic.rst).  From it, by forward-mode differentiation along
the shared definitions (:meth:`anholo.algebra.program.Program.derivatives`, Griewank & Walther (2008)):

* the Lie derivative of functions ``f(t, q, v)`` along Γ_nh (the time derivative along motions),

      Γ_nh(f) = ∂f/∂q^A q̇^A + ∂f/∂v^α Γ^α + ∂f/∂t;

* the divergence of Γ_nh with respect to the coordinate measure ``dq^1 ∧ … ∧ dq^n ∧ dv^1 ∧ … ∧ dv^m``
  of C,

      div Γ_nh = Σ_A ∂q̇^A/∂q^A + Σ_α ∂Γ^α/∂v^α,

  so that ``N dq ∧ dv`` is invariant iff ``Γ_nh(N) + N div Γ_nh = 0`` (Liouville's equation;
  Zenkov & Bloch (2003), Fedorov & Jovanović (2004)).

The programs are evaluated at random points by a :class:`~anholo.algebra.decision.Sampler`
(compiled once); the verdicts built on them are in :mod:`anholo.analysis.flow_numerical`
(docs/invariants.rst).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

from ..algebra.decision import Sampler
from ..algebra.engine import engine_cse, se, shared_to_sympy, to_engine, zero
from ..algebra.program import Program
from ..dynamics.maggi import MaggiSystem
from ..errors import DimensionError

__all__ = ["FlowProgram"]


def _renamed(pairs: Sequence, outputs: Sequence, taken: set, prefix: str) -> tuple:
    """``(pairs, outputs)`` with every defined name that is in ``taken`` renamed ``prefix<i>`` (not taken)."""
    table, count = {}, 0
    for name, _ in pairs:
        if str(name) in taken:
            while f"{prefix}{count}" in taken:
                count += 1
            table[name] = se.Symbol(f"{prefix}{count}")
            taken.add(f"{prefix}{count}")
        else:
            taken.add(str(name))
    if not table:
        return list(pairs), list(outputs)
    keys = set(table)

    def sub(e):
        hit = {s: table[s] for s in e.free_symbols & keys}
        return e.xreplace(hit) if hit else e

    return [(table.get(a, a), sub(b)) for a, b in pairs], [sub(o) for o in outputs]


@dataclass(frozen=True, eq=False)
class FlowProgram:
    """Γ_nh of a :class:`~anholo.dynamics.maggi.MaggiSystem` on C, as a straight-line program.

    Parameters
    ----------
    maggi : MaggiSystem

    Attributes (all symengine, over the shared definitions of :attr:`field`)
    ----------------------------------------------------------------------
    q, v : tuple of Symbol
        The coordinates ``q^A`` and the free velocities ``v^α = q̇^{f_α}`` of C.
    time : Symbol or None
    args : tuple of Symbol
        ``maggi.program_args()``: ``q``, ``v``, then parameters, the time and inputs by name.
    q_dot, v_dot, mu : tuple
        ``q̇^A = X_α^A v^α + β^A``, ``Γ^α`` and the frame multipliers ``μ_a`` (``maggi.shared()``).

    Examples
    --------
    The nonholonomic particle ``ż = y ẋ`` with ``L = (ẋ² + ẏ² + ż²)/2``: ``Γ^1 = −y v^1 v^2/(1 + y²)``,
    ``Γ^2 = 0``, and ``div Γ_nh = ∂ż/∂z + ∂Γ^1/∂v^1 = −y v^2/(1 + y²)``.

    >>> from anholo.system import System
    >>> flow = FlowProgram(System.load("nonholonomic_particle").maggi())
    >>> s = flow.sampler(flow.divergence())
    >>> pt = {"x": 0.1, "y": 2.0, "z": 0.3, "u1": 0.7, "u2": 0.5}
    >>> round(float(s.at(pt)[0]), 12), round(-2.0 * 0.5 / 5.0, 12)
    (-0.2, -0.2)
    """

    maggi: MaggiSystem

    @classmethod
    def of(cls, maggi: MaggiSystem) -> "FlowProgram":
        """The flow program of ``maggi``, made once per system (kept in the system's cache, so that the
        divergence and the field's programs are shared by the blocks of one report)."""
        key = "flow_program"
        if key not in maggi._cache:
            maggi._cache[key] = cls(maggi)
        return maggi._cache[key]

    # --- the field --------------------------------------------------------------------------------
    @cached_property
    def _data(self) -> dict:
        M = self.maggi
        pairs, res = M.shared()
        _, red = M._base  # the frame rows and β over the first part of the same cse list
        n, m, dep = M.n, M.m, M._cache["dep"]
        v = tuple(se.Symbol(s.name) for s in M.free_velocities)
        X = red["frame"]
        K = [sum((X[al * n + A] * v[al] for al in range(m)), zero) for A in range(n)]
        for a, P in enumerate(dep):
            K[P] = K[P] + red["beta"][a]
        args = tuple(M.program_args())
        field = Program(args, tuple(pairs), tuple(K) + tuple(res["v_dot"]) + tuple(res["mu"])).pruned()
        return dict(field=field, all_pairs=tuple(pairs), qdot=tuple(K), vdot=tuple(res["v_dot"]),
                    mu=tuple(res["mu"]), v=v,
                    names={str(a) for a, _ in pairs} | {str(a) for a in args})

    @property
    def field(self) -> Program:
        """The program with outputs ``q̇^A`` (n), ``Γ^α`` (m), ``μ_a`` (k)."""
        return self._data["field"]

    @property
    def args(self) -> tuple:
        return self.field.args

    @property
    def q(self) -> tuple:
        return tuple(self.maggi._cache["q"])

    @property
    def v(self) -> tuple:
        return self._data["v"]

    @property
    def time(self):
        t = self.maggi.time
        return None if t is None else se.Symbol(t.name)

    @property
    def q_dot(self) -> tuple:
        return self._data["qdot"]

    @property
    def v_dot(self) -> tuple:
        return self._data["vdot"]

    @property
    def mu(self) -> tuple:
        return self._data["mu"]

    def on_C(self, exprs: Sequence) -> list:
        """Functions ``f(t, q, q̇)`` of the natural velocities (sympy or symengine) as functions on C:
        ``q̇ = X_α v^α + β`` substituted (the result uses the names of the field's definitions)."""
        u = self.maggi._cache["u"]
        table = dict(zip(u, self.q_dot))
        return [to_engine(e).xreplace(table) for e in exprs]

    # --- Lie derivatives and divergence ------------------------------------------------------------
    def _with(self, exprs: Sequence) -> Program:
        """A program of ``exprs`` (in the arguments and the names of the field's definitions): the field's
        definitions they use, then their own common subexpressions (renamed apart)."""
        exprs = [to_engine(e) for e in exprs]
        known = set(self.args) | {a for a, _ in self._data["all_pairs"]}
        stray = {s for e in exprs for s in e.free_symbols} - known
        if stray:
            raise DimensionError(
                "a function along the nonholonomic field may depend on the coordinates, the free velocities "
                f"{', '.join(map(str, self.v))}, the parameters and the time only, not on "
                f"{', '.join(sorted(map(str, stray)))}; substitute the dependent velocities with on_C().")
        own, reduced = engine_cse(exprs) if exprs else ([], [])
        own, reduced = _renamed(own, reduced, set(self._data["names"]), "f")
        return Program(self.args, self._data["all_pairs"] + tuple(own), tuple(reduced)).pruned()

    def _merged(self, prog: Program, outputs: Sequence) -> Program:
        """``outputs`` (over the definitions of ``prog``, which extend a subset of the field's) as a
        program whose definitions are the field's followed by ``prog``'s others, renamed apart."""
        field_names = {a for a, _ in self._data["all_pairs"]}
        extra = [(a, b) for a, b in prog.pairs if a not in field_names]
        extra, outputs = _renamed(extra, outputs, set(self._data["names"]), "g")
        return Program(self.args, self._data["all_pairs"] + tuple(extra), tuple(outputs)).pruned()

    def along(self, fs: Sequence) -> Program:
        """``Γ_nh(f)`` for each ``f(t, q, v)`` of ``fs`` (sympy or symengine expressions in ``args``, or in
        the names of :attr:`field`'s definitions, as :meth:`on_C` gives them): a program sharing the
        field's definitions,

            Γ_nh(f) = ∂f/∂q^A q̇^A + ∂f/∂v^α Γ^α (+ ∂f/∂t),

        the partial derivatives by forward mode along the definitions (nothing is expanded)."""
        prog = self.along_terms(fs)
        width = len(prog.outputs) // max(1, len(fs))
        sums = [sum(prog.outputs[i * width:(i + 1) * width], zero) for i in range(len(fs))]
        return Program(self.args, prog.pairs, tuple(sums)).pruned()

    def along_terms(self, fs: Sequence) -> Program:
        """The terms of :meth:`along`, ``n + m`` (``+ 1`` with a time) per function, row by row:
        ``∂f/∂q^A q̇^A`` (A = 1..n), ``∂f/∂v^α Γ^α``, ``∂f/∂t``.  Their sum is ``Γ_nh(f)``; their sizes are
        the scale of a numerical zero test of it (:func:`anholo.algebra.decision.vanishes_at`)."""
        prog = self._with(fs)
        t = self.time
        variables = list(self.q) + list(self.v) + ([t] if t is not None else [])
        d, (rows, cols) = prog.derivatives(variables)
        jac = d.outputs[rows:]
        rates = list(self.q_dot) + list(self.v_dot) + ([se.Integer(1)] if t is not None else [])
        out = [jac[i * cols + j] * r for i in range(rows) for j, r in enumerate(rates)]
        return self._merged(d, out)

    def hessian(self) -> list:
        """``g_αβ = X_α^A W_AB X_β^B`` (row-major, m × m): the Hessian of the constrained Lagrangian
        ``L_c(q, v) = L(q, X v + β)`` in the free velocities, over the field's definitions (the leading
        block of Maggi's implicit form, ``maggi._base``)."""
        M = self.maggi
        _, red = M._base
        m, k = M.m, M.n - M.m
        return [red["M"][i * (m + k) + j] for i in range(m) for j in range(m)]

    def program_of(self, exprs: Sequence) -> Program:
        """``exprs`` (in the arguments and the field's definitions) as a program sharing the field's definitions."""
        return self._with(exprs)

    def joined(self, *programs: Program) -> Program:
        """One program with the outputs of ``programs`` in order (each one of this field's programs: the
        field's definitions, then its own, which are renamed apart here)."""
        field_names = {a for a, _ in self._data["all_pairs"]}
        taken = set(self._data["names"])
        pairs, outputs = list(self._data["all_pairs"]), []
        for i, prog in enumerate(programs):
            extra = [(a, b) for a, b in prog.pairs if a not in field_names]
            extra, outs = _renamed(extra, prog.outputs, taken, f"j{i}_")
            pairs += extra
            outputs += outs
        return Program(self.args, tuple(pairs), tuple(outputs)).pruned()

    def divergence_terms(self) -> Program:
        """The ``n + m`` terms ``∂q̇^A/∂q^A`` and ``∂Γ^α/∂v^α`` of ``div Γ_nh`` (their sum is the divergence;
        their sizes are the scale of a numerical zero test)."""
        return self._divergence_terms

    @cached_property
    def _divergence_terms(self) -> Program:
        n = len(self.q)
        kin = self._with(self.q_dot)
        dk, (rk, ck) = kin.derivatives(self.q)
        acc = self._with(self.v_dot)
        da, (ra, ca) = acc.derivatives(self.v)
        terms = ([dk.outputs[rk + A * ck + A] for A in range(n)]
                 + [da.outputs[ra + al * ca + al] for al in range(ra)])
        field_names = {a for a, _ in self._data["all_pairs"]}
        taken = set(self._data["names"])
        extra_k, terms_k = _renamed([(a, b) for a, b in dk.pairs if a not in field_names], terms[:n], taken, "g")
        extra_a, terms_a = _renamed([(a, b) for a, b in da.pairs if a not in field_names], terms[n:], taken, "h")
        return Program(self.args, self._data["all_pairs"] + tuple(extra_k) + tuple(extra_a),
                       tuple(terms_k) + tuple(terms_a)).pruned()

    def divergence(self) -> Program:
        """``div Γ_nh = Σ_A ∂q̇^A/∂q^A + Σ_α ∂Γ^α/∂v^α`` (one output), for the measure
        ``dq ∧ dv^1 ∧ … ∧ dv^m`` of C."""
        terms = self.divergence_terms()
        return Program(self.args, terms.pairs, (sum(terms.outputs, zero),)).pruned()

    # --- numbers and sympy ----------------------------------------------------------------------------
    def sampler(self, program: Program, values: Mapping | None = None, seed: int = 0) -> Sampler:
        """A :class:`~anholo.algebra.decision.Sampler` of ``program`` (one of this field's programs): the
        parameters fixed at ``values`` (by name; default the system's ``values``), the other arguments —
        coordinates, velocities, the time, inputs, parameters without a value — random."""
        if values is None:
            values = self.maggi.values or {}
        fixed = {str(k): float(x) for k, x in values.items()}
        free = {str(s) for s in self.q + self.v}
        return Sampler(program, {k: x for k, x in fixed.items() if k not in free}, seed=seed)

    def to_sympy(self, program: Program) -> list:
        """The outputs of ``program`` as sympy expressions sharing their subexpressions (the system's symbols)."""
        return shared_to_sympy(program.pairs, program.outputs, self.maggi._symbols())
