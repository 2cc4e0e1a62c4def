"""Non-potential forces, dissipation and control inputs (docs/forces.rst).

A *force model* is a covector field along motions: generalized forces ``Q_A(t, q, q̇, u)``
in the coordinate basis ``dq^A``, made of

* given generalized forces ``Q^0_A`` (friction laws, motor torques written with input
  symbols ``u_k``, periodic forcing in the time ``t``);
* a Rayleigh dissipation function ``R(t, q, q̇)``, contributing ``−∂R/∂q̇^A``
  (Rayleigh 1877; Goldstein, Poole & Safko 2002, §1.5);

so ``Q_A = Q^0_A − ∂R/∂q̇^A``.  In a frame ``X_i = X_i^A ∂/∂q^A`` the same covector has
the components ``F_i = ⟨Q, X_i⟩ = X_i^A Q_A`` (written in the quasi-velocities with
``q̇ = X_j v^j``); conversely ``Q_A = θ^i_A F_i`` for forces given by frame components
(a torque about a body axis, a traction force along a wheel).

The fields take the forces where their principle allows (docs/forces.rst):

* Euler–Lagrange / Hamel (Lagrange–d'Alembert principle with forces, Hamel 1904;
  Bloch 2003): ``d/dt p_i − X_i(L) + R^k_ij v^j p_k = F_i``;
* Lagrange–d'Alembert with constraints (Bloch et al. 1996): the same equations for
  the indices α of D, the constraint indices carry the multipliers,
  ``d/dt p_a − X_a(L) + R^k_aj v^j p_k = F_a + μ_a``, i.e. in coordinates
  ``W q̈ = F + Q + Aᵀλ``;
* Chetaev's rule: ``E_A(L) = Q_A + λ_ν ∂φ^ν/∂q̇^A`` (docs/chetaev.rst);
* vakonomic dynamics: forces do *not* come from a variational principle; anholo adds
  them to the Euler–Lagrange equations of the extended Lagrangian ``L + λ_a φ^a``,
  ``E_A(L + λ_a φ^a) = Q_A`` — a convention of anholo (the forces enter as in the
  Lagrange–d'Alembert equations), not a consequence of a variational principle.

For a Lagrangian that depends on the time the same equations hold with
``d/dt p_i`` including ``∂p_i/∂t``; the energy ``E_L = v^i p_i − L`` then obeys the
balance ``dE_L/dt = −∂L/∂t + F_i v^i = −∂L/∂t + Q_A q̇^A`` along every motion (the
constraint forces of linear stationary constraints do no work).

Every rate is affine in the inputs when the forces are: ``Γ = f_0 + Σ_k u_k g_k``
(:func:`control_affine`), the control-affine form of nonlinear control
(Nijmeijer & van der Schaft 1990; Bloch 2003).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..errors import ArgumentError, DimensionError, InputError, printable
from ..parsing import as_expression, as_sequence
from ..geometry.chart import Chart
from ..geometry.tangent import TangentBundle
from ..algebra.printing import latex

__all__ = ["Forces", "control_affine", "forcing_terms"]


def _symbols(items, what: str) -> tuple:
    if items is None:
        return ()
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    elif isinstance(items, sp.Symbol):
        items = (items,)
    out = []
    for s in as_sequence(items, what, what="names or symbols"):
        if isinstance(s, str):
            if not s.isidentifier():
                raise ArgumentError(f"{what}: {printable(repr(s))[:60]} is not a name.")
            s = sp.Symbol(s, real=True)
        if not isinstance(s, sp.Symbol):
            raise ArgumentError(f"{what}: expected symbols or names, got {printable(repr(s))[:60]}.")
        out.append(s)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Forces:
    """Generalized non-potential forces ``Q_A = Q^0_A − ∂R/∂q̇^A`` on a chart (module docstring).

    Parameters
    ----------
    chart : Chart
        Coordinates ``q^A`` and their velocities ``q̇^A`` (the symbols the expressions use).
    generalized : sequence, optional
        ``Q^0_A``, one per coordinate in coordinate order (default zero), expressions in
        ``t, q, q̇``, parameters and the inputs.
    dissipation : expression, optional
        A Rayleigh dissipation function ``R(t, q, q̇)`` (default 0); it adds ``−∂R/∂q̇^A``.
    inputs : sequence of Symbol or str, optional
        Control inputs ``u_k`` (symbols the forces may use; numerics take them as callables
        of ``(t, state)``).
    time : Symbol, optional
        The time symbol, if the forces (or the Lagrangian) depend on the time.

    Examples
    --------
    A sleigh with viscous friction ``R = c(ẋ² + ẏ²)/2`` and a motor torque ``τ`` about its
    vertical axis, and its frame components in the body frame ``X_1 = cos θ ∂x + sin θ ∂y``,
    ``X_2 = ∂θ``:

    >>> import sympy as sp
    >>> from anholo import Chart, Frame
    >>> from anholo.geometry.tangent import TangentBundle
    >>> chart = Chart("x y theta")
    >>> x, y, th = chart.coordinates
    >>> xd, yd, thd = chart.velocities
    >>> c = sp.Symbol("c", positive=True)
    >>> F = Forces(chart, [0, 0, "tau"], dissipation=c*(xd**2 + yd**2)/2, inputs=["tau"])
    >>> F.total
    (-c*x_dot, -c*y_dot, tau)
    >>> frame = Frame(chart, [[sp.cos(th), sp.sin(th), 0], [0, 0, 1], [-sp.sin(th), sp.cos(th), 0]])
    >>> [sp.simplify(e) for e in F.frame_components(TangentBundle(frame))]
    [-c*v1, tau, -c*v3]
    """

    chart: Chart
    generalized: tuple = None
    dissipation: sp.Expr = 0
    inputs: tuple = ()
    time: sp.Symbol = None

    def __post_init__(self):
        if not isinstance(self.chart, Chart):
            raise ArgumentError(f"Forces: the first argument must be a Chart, got {type(self.chart).__name__}"
                                f"{'; pass bundle.chart' if hasattr(self.chart, 'chart') else ''}.")
        n = self.chart.dim
        inputs = _symbols(self.inputs, "inputs")
        object.__setattr__(self, "inputs", inputs)
        by_name = {s.name: s for s in inputs}
        if isinstance(self.time, str):
            object.__setattr__(self, "time", _symbols([self.time], "time")[0])
        if self.time is not None:
            if not isinstance(self.time, sp.Symbol):
                raise ArgumentError(f"Forces: time must be a sympy Symbol or a name, got {type(self.time).__name__}.")
            by_name[self.time.name] = self.time
        by_name.update({s.name: s for s in self.chart.coordinates + self.chart.velocities + self.chart.parameters})

        def read(e, where):
            return as_expression(e, by_name, where=where)

        given = (0,) * n if self.generalized is None else as_sequence(self.generalized, "forces", what="forces")
        if len(given) != n:
            raise DimensionError(f"need {n} generalized forces Q_A, one per coordinate "
                                 f"({', '.join(map(str, self.chart.coordinates))}), got {len(given)}.")
        Q0 = tuple(read(e, f"forces[{A}]") for A, e in enumerate(given))
        object.__setattr__(self, "generalized", Q0)
        R = read(self.dissipation, "dissipation")
        object.__setattr__(self, "dissipation", R)
        if R != 0 and any(s in R.free_symbols for s in inputs):
            raise InputError("the dissipation function depends on an input; write input forces into "
                             "`forces` (generalized) instead.")

    @classmethod
    def from_frame_components(cls, bundle: TangentBundle, components: Sequence, *, dissipation=0,
                              inputs=(), time=None) -> "Forces":
        """Forces given by their frame components ``F_i = ⟨Q, X_i⟩`` (in ``q``, the quasi-velocities
        of ``bundle`` or ``q̇``): ``Q_A = θ^i_A F_i``."""
        if not isinstance(bundle, TangentBundle):
            raise ArgumentError(f"Forces.from_frame_components: the first argument must be a TangentBundle, "
                                f"got {type(bundle).__name__}.")
        names = bundle.chart.coordinates + bundle.chart.velocities + bundle.chart.parameters + bundle.quasi_velocities
        names = {s.name: s for s in names} | {s.name: s for s in _symbols(inputs, "inputs")}
        if time is not None:
            names[str(time)] = time if isinstance(time, sp.Symbol) else sp.Symbol(str(time), real=True)
        comps = tuple(bundle.to_natural(as_expression(c, names, where=f"components[{i}]"))
                      for i, c in enumerate(as_sequence(components, "components", what="frame components")))
        n = bundle.dim
        if len(comps) != n:
            raise DimensionError(f"need {n} frame components F_i, one per frame vector, got {len(comps)}.")
        th = bundle.frame.coframe
        Q = tuple(sp.Add(*[th[i, A] * comps[i] for i in range(n) if th[i, A] != 0 and comps[i] != 0])
                  for A in range(n))
        return cls(bundle.chart, Q, dissipation=dissipation, inputs=inputs, time=time)

    # --- the covector ------------------------------------------------------------------------
    @property
    def total(self) -> tuple:
        """``Q_A = Q^0_A − ∂R/∂q̇^A`` in ``(t, q, q̇, u)``."""
        R, u = self.dissipation, self.chart.velocities
        if R == 0:
            return self.generalized
        return tuple(Q - R.diff(uA) for Q, uA in zip(self.generalized, u))

    @property
    def is_zero(self) -> bool:
        return all(Q == 0 for Q in self.total)

    def frame_components(self, bundle: TangentBundle) -> tuple:
        """``F_i = X_i^A Q_A`` in the quasi-velocities of ``bundle`` (``q̇ = X_j v^j``)."""
        if bundle.chart != self.chart:
            raise DimensionError("the forces live on another chart than the frame.")
        X, Q, n = bundle.frame.vectors, self.total, bundle.dim
        return tuple(bundle.to_quasi(sp.Add(*[X[i, A] * Q[A] for A in range(n) if X[i, A] != 0 and Q[A] != 0]))
                     for i in range(n))

    def power(self) -> sp.Expr:
        """``Q_A q̇^A``: the power of the forces (the rate of work in the energy balance)."""
        return sp.Add(*[Q * u for Q, u in zip(self.total, self.chart.velocities) if Q != 0])

    def control_split(self) -> tuple:
        """``(Q_drift, (Q_{u_1}, …))`` with ``Q = Q_drift + Σ_k u_k Q_{u_k}`` (raises if not affine in u)."""
        return control_affine(self.total, self.inputs)

    @property
    def symbols(self) -> set:
        out = set()
        for Q in self.total:
            out |= Q.free_symbols
        return out

    def substitute(self, replacements: dict) -> "Forces":
        """The same force model with some symbols replaced (e.g. parameter values)."""
        return Forces(self.chart, tuple(Q.xreplace(replacements) for Q in self.generalized),
                      dissipation=self.dissipation.xreplace(replacements), inputs=self.inputs, time=self.time)

    def __str__(self):
        rows = [f"Q_{q} = {Q}" for q, Q in zip(self.chart.coordinates, self.total)]
        return "\n".join(rows)

    def as_latex(self) -> str:
        rows = [f"Q_{{{latex(q)}}} &= {latex(Q)}" for q, Q in zip(self.chart.coordinates, self.total)]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"generalized": [str(Q) for Q in self.generalized], "dissipation": str(self.dissipation),
                "total": [str(Q) for Q in self.total], "inputs": [s.name for s in self.inputs],
                "time": None if self.time is None else self.time.name}


def control_affine(exprs: Sequence, inputs: Sequence) -> tuple:
    """Split expressions affine in the inputs: ``e = f_0 + Σ_k u_k g_k``; returns ``(f_0, (g_1, …))``
    with ``f_0 = e|_{u=0}``, ``g_k = ∂e/∂u_k`` (tuples like ``exprs``).

    Raises
    ------
    InputError
        If some expression is not affine in the inputs (``∂²e/∂u_k∂u_l ≠ 0``).
    """
    exprs = tuple(sympified(e) for e in exprs)
    inputs = tuple(inputs)
    zero = {u: 0 for u in inputs}
    f0 = tuple(e.xreplace(zero) if e.free_symbols & set(inputs) else e for e in exprs)
    g = []
    for uk in inputs:
        col = tuple(e.diff(uk) for e in exprs)
        for e in col:
            if e.free_symbols & set(inputs):
                bad = sorted((s.name for s in e.free_symbols & set(inputs)))
                raise InputError(f"the dynamics is not affine in the input {uk.name} (its coefficient depends on "
                                 f"{', '.join(bad)}); the control-affine form f0 + sum u_k g_k does not exist.")
        g.append(col)
    return f0, tuple(g)


def forcing_terms(frame_forces: Sequence, momenta: Sequence, time) -> tuple:
    """``φ_i = F_i − ∂p_i/∂t``: what a force model and an explicit time dependence of L add to the
    right-hand side ``X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i)`` of the Hamel equations (module docstring).

    ``frame_forces`` (or None) and ``momenta`` are expressions on the same state space
    (TQ, or C for constrained problems); ``time`` the time symbol or None.
    """
    n = len(momenta)
    F = tuple(frame_forces) if frame_forces is not None else (sp.S.Zero,) * n
    if time is None:
        return F
    return tuple(f - sp.diff(p, time) for f, p in zip(F, momenta))
