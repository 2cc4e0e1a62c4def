"""The comparison of Chetaev's (Lagrange–d'Alembert) and the vakonomic dynamics for kinematic
constraints (Cronström & Raita 2009; Deressa; docs/theory.rst).

The vakonomic field itself is :class:`~anholo.dynamics.multiplication_rule.NonlinearVakonomicSystem`
(the multiplication rule), re-exported here.

**Comparison** (:func:`compare_methods`).  At the same state ``(q, u)`` on C:

* at ``λ = 0`` the vakonomic accelerations *equal* the Chetaev ones (the two
  bordered systems coincide, with ``λ̇_vak = −λ_Chetaev``);
* for one linear constraint ``a(q)·u = 0`` (Cronström & Raita 2009), with ``M_AB = ∂_B a_A − ∂_A a_B``
  (so ``i_u da = M u``) and ``Π_W x = x − W⁻¹a (a·x)/(a·W⁻¹a)`` the W-orthogonal
  projection onto ``ker a``::

      q̈_vak − q̈_nh = −λ Π_W(W⁻¹ i_u da)

  (Cronström & Raita 2009 writes ``L − μφ``, so ``+μ Π_W(…)``).  It vanishes for every λ iff
  ``i_u da ∥ a``: for every constrained u iff ``a ∧ da = 0`` (Frobenius: holonomic,
  or holonomic after an integrating factor), else exactly at the *compatible*
  velocities ``(Mu)_A a_B − (Mu)_B a_A = 0`` (docs/consistency.rst);
* with ``λ(t₀) = 0`` the trajectories agree to second order and differ at
  order t³: ``q_vak − q_nh = (t³/6) (∂q̈_vak/∂λ_ν) λ̇_ν |_{λ=0} + O(t⁴)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import reduce_if_cheap, vanishes
from ..errors import DimensionError
from ..geometry.forms import Form
from ..geometry.frame import Frame
from ..dynamics.chetaev import ChetaevField, ChetaevSystem, _inverse_times
from ..constraints.kinematic import KinematicConstraints
from ..dynamics.lagrangian import Lagrangian
from ..dynamics.multiplication_rule import NonlinearVakonomicSystem, VakonomicMotion, vanishes_on_C
from ..errors import NonlinearConstraintError
from ..algebra import size_exceeds, tidy

__all__ = [
    "FrobeniusData",
    "frobenius_data",
    "MethodComparison",
    "compare_methods",
]


@dataclass(frozen=True)
class FrobeniusData:
    """Integrability data of linear constraints ``a^ν(q)·u = 0`` (docs/consistency.rst; Cronström & Raita (2009) §3).

    Attributes
    ----------
    forms : tuple
        The one-forms ``a^ν`` (rows of coefficients).
    integrable : bool
        Frobenius: ``da^ν ∧ a^1 ∧ … ∧ a^k = 0`` for every ν (for k = 1: ``a ∧ da = 0``).
    obstruction : dict
        Nonzero components of ``a ∧ da`` (k = 1) or of the ``da^ν ∧ a^1 ∧ … ∧ a^k`` (0-based index tuples).
    closed : bool
        ``da^ν = 0`` for all ν: the constraints are exact differentials as written.
    integrating_factor : expression or None
        For k = 1 with ``a ∧ da = 0`` and ``da ≠ 0``: a Φ with ``d(Φ a) = 0`` found among simple
        candidates (``1/a_A``, ``1/(a·a)``, ``1/(a_A a_B)``, …), else None (one exists locally).
    curvature : sympy Matrix or None
        For k = 1: ``M_AB = ∂_B a_A − ∂_A a_B`` (so ``i_u da = M u``).
    compatibility : tuple
        For k = 1: the expressions ``(Mu)_A a_B − (Mu)_B a_A`` (A < B, nonzero) whose vanishing on
        ``ker a`` characterises the compatible velocities.
    """

    forms: tuple
    integrable: bool
    obstruction: dict
    closed: bool
    integrating_factor: sp.Expr | None
    curvature: sp.Matrix | None
    compatibility: tuple

    def verdict(self) -> str:
        if self.closed:
            return "the constraint forms are closed (exact): holonomic as written"
        if self.integrable:
            found = (f"integrating factor {self.integrating_factor}" if self.integrating_factor is not None
                     else "an integrating factor exists locally (none found among the simple candidates)")
            return f"integrable (a ∧ da = 0): holonomic after rescaling; {found}"
        return "not integrable (a ∧ da ≠ 0): truly nonholonomic"


def frobenius_data(constraints: KinematicConstraints, candidates: Sequence = ()) -> FrobeniusData:
    """Frobenius data of linear homogeneous constraints (see :class:`FrobeniusData`).

    Examples
    --------
    ``x ẏ − y ẋ = 0`` is not closed but integrable, with integrating factor ``1/(x² + y²)``:

    >>> from anholo import Chart
    >>> data = frobenius_data(KinematicConstraints(Chart("x y z"), ["x*y_dot - y*x_dot"]))
    >>> data.closed, data.integrable, data.integrating_factor
    (False, True, 1/(x**2 + y**2))
    """
    C = constraints
    if not C.is_linear:
        raise NonlinearConstraintError("Frobenius data need constraints linear in the velocities.")
    chart = C.chart
    n, k = chart.dim, C.count
    J = C.jacobian
    if J.free_symbols & set(chart.velocities) or (C.time is not None and J.has(C.time)):
        raise NonlinearConstraintError("Frobenius data need constraint forms a(q) independent of velocities and time.")
    frame = Frame.coordinate(chart)
    forms = [Form.one_form(frame, list(J.row(a))) for a in range(k)]
    d_forms = [f.d() for f in forms]
    closed = all(vanishes(c) for df in d_forms for c in df.components.values())
    wedge_all = forms[0]
    for f in forms[1:]:
        wedge_all = wedge_all.wedge(f)
    obstruction = {}
    for nu, df in enumerate(d_forms):
        for key, val in df.wedge(wedge_all).components.items():
            val = reduce_if_cheap(val, 400)
            if not vanishes(val):
                obstruction[(nu,) + key if k > 1 else key] = val
    integrable = not obstruction
    factor, Mmat, compat = None, None, ()
    if k == 1:
        a = [J[0, A] for A in range(n)]
        q, u = chart.coordinates, chart.velocities
        Mmat = sp.Matrix(n, n, lambda A, B: reduce_if_cheap(a[A].diff(q[B]) - a[B].diff(q[A]), 200))
        Mu = [sp.Add(*[Mmat[A, B] * u[B] for B in range(n)]) for A in range(n)]
        compat = tuple(c for c in (reduce_if_cheap(Mu[A] * a[B] - Mu[B] * a[A], 400)
                                   for A in range(n) for B in range(A + 1, n)) if not vanishes(c))
        if integrable and not closed:
            factor = _integrating_factor(frame, a, candidates)
    return FrobeniusData(tuple(tuple(J.row(a)) for a in range(k)), integrable, obstruction, closed, factor,
                         Mmat, compat)


def _integrating_factor(frame: Frame, a: Sequence, candidates: Sequence):
    nz = [x for x in a if x != 0]
    cands = [sympified(c) for c in candidates]
    cands += [1 / x for x in nz]
    cands += [1 / sp.Add(*[x**2 for x in nz])]
    cands += [1 / (x * y) for i, x in enumerate(nz) for y in nz[i + 1:]]
    cands += [1 / x**2 for x in nz]
    for Phi in cands:
        form = Form.one_form(frame, [sp.cancel(Phi * x) for x in a])
        if all(vanishes(c) for c in form.d().components.values()):
            return sp.factor(Phi)
    return None


@dataclass(frozen=True, eq=False)
class MethodComparison:
    """Chetaev (= nonholonomic for linear constraints) and vakonomic dynamics side by side.

    Attributes
    ----------
    chetaev : ChetaevField
    vakonomic : VakonomicMotion
    acceleration_difference : dict
        ``{q^A: q̈_vak − q̈_Chetaev}`` at the same ``(q, u)`` on C, a function of ``(q, u, λ, t)``.
    frobenius : FrobeniusData or None
        For linear homogeneous stationary constraints.
    projection_formula : dict or None
        For one linear constraint: ``−λ Π_W(W⁻¹ i_u da)`` (Cronström & Raita 2009), to compare with the difference.
    third_order_difference : dict
        ``{q^A: c_A}`` with ``q_vak(t) − q_Chetaev(t) = c (t − t₀)³ + O((t − t₀)⁴)`` for ``λ(t₀) = 0``.
    agree_at_zero_multiplier : bool
        The accelerations agree at ``λ = 0`` (always true; a check).
    agree_for_every_multiplier : bool
        The difference vanishes on C for all λ: vakonomic = Chetaev for every initial multiplier.
    """

    chetaev: ChetaevField
    vakonomic: VakonomicMotion
    acceleration_difference: dict
    frobenius: FrobeniusData | None
    projection_formula: dict | None
    third_order_difference: dict
    agree_at_zero_multiplier: bool
    agree_for_every_multiplier: bool

    def statements(self) -> list:
        """Where the methods agree, in words."""
        out = []
        if self.agree_for_every_multiplier:
            out.append("vakonomic and Chetaev/d'Alembert motions coincide for every initial multiplier λ(t0)")
        else:
            out.append("with λ(t0) = 0 the accelerations agree at t0 and the trajectories differ at order "
                       "(t - t0)^3; with λ(t0) ≠ 0 they differ at order (t - t0)^2")
            if self.frobenius is not None and self.frobenius.compatibility:
                out.append("accelerations agree for every λ exactly at the compatible velocities: "
                           + ", ".join(f"{_show(c)} = 0" for c in self.frobenius.compatibility))
        if self.frobenius is not None:
            out.insert(0, "constraints: " + self.frobenius.verdict())
        return out

    def _repr_html_(self) -> str:
        import html

        return "<pre>" + html.escape(self.to_text()) + "</pre>"

    def to_text(self) -> str:
        ch, vak = self.chetaev, self.vakonomic
        sys_ = ch.system
        chart = sys_.chart
        lines = ["Constraints:"] + [f"  {e} = 0" for e in sys_.constraints.expressions]
        head = "Chetaev / Lagrange-d'Alembert: E_A(L) = lambda_nu dphi_nu/dq_dot_A, on C"
        lines += ["", head, "-" * len(head)]
        acc = ch.natural_accelerations()
        lines += [f"  {q.name}_ddot = {_show(sys_.constraints.on_C(acc[q]))}" for q in chart.coordinates]
        lines += [f"  lambda{a + 1} = {_show(sys_.constraints.on_C(lam))}" for a, lam in enumerate(ch.natural_multipliers())]
        names = " + ".join(f"{lam}*phi{a + 1}" for a, lam in enumerate(vak.system.multipliers))
        head = f"Vakonomic: Euler-Lagrange equations of L + {names}"
        lines += ["", head, "-" * len(head)]
        lines += [f"  {q.name}_ddot = {_show(sys_.constraints.on_C(vak.accelerations[q]))}" for q in chart.coordinates]
        lines += [f"  {lam}_dot = {_show(sys_.constraints.on_C(r))}"
                  for lam, r in zip(vak.system.multipliers, vak.multiplier_rates)]
        head = "Difference of accelerations at the same state (vakonomic - Chetaev)"
        lines += ["", head, "-" * len(head)]
        lines += [f"  {q.name}: {_show(sys_.constraints.on_C(e))}" for q, e in self.acceleration_difference.items()]
        if self.projection_formula is not None:
            lines.append("  (= -lambda1 * Pi_W(W^-1 i_u da), the formula of Cronström & Raita (2009) for one linear constraint)")
        if self.frobenius is not None:
            fr = self.frobenius
            head = "Frobenius data"
            lines += ["", head, "-" * len(head)]
            names = [q.name for q in chart.coordinates]
            lines.append("  a ^ da: " + (", ".join(f"(a^da)_{'_'.join(names[i] for i in key)} = {_show(val)}"
                                                   for key, val in fr.obstruction.items()) or "0"))
            lines.append(f"  closed: {fr.closed}; integrable: {fr.integrable}; integrating factor: "
                         + (str(fr.integrating_factor) if fr.integrating_factor is not None
                            else ("not needed" if fr.closed else ("not found" if fr.integrable else "none (not integrable)"))))
        head = "Where the methods agree"
        lines += ["", head, "-" * len(head)]
        lines += [f"  {s}" for s in self.statements()]
        lines.append("  third-order coefficient (lambda(t0) = 0): "
                     + ", ".join(f"{q.name}: {_show(sys_.constraints.on_C(c))}" for q, c in self.third_order_difference.items()))
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        fr = self.frobenius
        return {
            "chetaev": self.chetaev.to_dict(),
            "vakonomic": self.vakonomic.to_dict(),
            "acceleration_difference": {str(q): str(e) for q, e in self.acceleration_difference.items()},
            "third_order_difference": {str(q): str(e) for q, e in self.third_order_difference.items()},
            "agree_for_every_multiplier": self.agree_for_every_multiplier,
            "frobenius": None if fr is None else {
                "integrable": fr.integrable, "closed": fr.closed,
                "integrating_factor": None if fr.integrating_factor is None else str(fr.integrating_factor),
                "obstruction": {str(key): str(val) for key, val in fr.obstruction.items()},
                "compatibility": [str(c) for c in fr.compatibility],
            },
            "statements": self.statements(),
        }


def _show(expr):
    """The form printed: tidied; a small expression also trigonometrically simplified and factored when that
    is shorter (``-sin(θ)² - cos(θ)²`` is printed ``-1``)."""
    expr = sympified(expr)
    if size_exceeds(expr, 3000):
        return expr
    out = tidy(expr)
    if isinstance(out, sp.Expr) and not size_exceeds(out, 80):
        simple = sp.trigsimp(out)
        for cand in (simple, sp.factor(simple)):
            if sp.count_ops(cand) < sp.count_ops(out):
                out = cand
    return out


def compare_methods(lagrangian: Lagrangian, constraints, forces: Sequence | None = None,
                    progress=None) -> MethodComparison:
    """Chetaev/nonholonomic versus vakonomic dynamics of one system (see the module docstring).

    ``progress``, if given, is called with the name of each step as it starts.

    The Chetaev field is computed in the Lagrangian's frame, the vakonomic one in
    coordinates; both are compared in ``(q, q_dot)`` at the same state on C.

    Examples
    --------
    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> chart = Chart("x y z")
    >>> xd, yd, zd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2)/2)
    >>> cmp = compare_methods(L, ["z_dot - y*x_dot"])
    >>> cmp.frobenius.integrable, cmp.agree_for_every_multiplier
    (False, False)
    >>> holo = compare_methods(L, ["x*y_dot - y*x_dot"])
    >>> holo.frobenius.integrating_factor, holo.agree_for_every_multiplier
    (1/(x**2 + y**2), True)
    """
    say = progress or (lambda message: None)
    ch = ChetaevSystem(lagrangian, constraints, forces=forces)
    C = ch.constraints
    vak_sys = NonlinearVakonomicSystem(ch.lagrangian, C)
    lam = vak_sys.multipliers
    if any(f != 0 for f in ch.forces):
        raise DimensionError("the vakonomic comparison is defined for Lagrangian forces only; drop the forces F.")
    say("Chetaev (Lagrange-d'Alembert) field")
    field = ch.field()
    say("vakonomic field")
    vak = vak_sys.field()
    q, u = ch.chart.coordinates, ch.chart.velocities
    acc_ch = field.natural_accelerations()
    say("difference of the accelerations on C")
    diff = {x: reduce_if_cheap(vak.accelerations[x] - acc_ch[x], 600) for x in q}
    zero = dict.fromkeys(lam, 0)
    agree0 = all(vanishes_on_C(d.xreplace(zero), C) for d in diff.values())
    agree_all = all(vanishes_on_C(d, C, lam) for d in diff.values())
    rates0 = [r.xreplace(zero) for r in vak.multiplier_rates]
    third = {x: reduce_if_cheap(sp.Add(*[d.diff(l).xreplace(zero) * r0 for l, r0 in zip(lam, rates0)]) / 6, 600)
             for x, d in diff.items()}
    frob, formula = None, None
    linear = C.is_linear and not (C.jacobian.free_symbols & set(u))
    homogeneous = all(vanishes(e - sp.Add(*[e.diff(w) * w for w in u])) for e in C.expressions)
    if linear and homogeneous and C.is_stationary:
        say("Frobenius data")
        frob = frobenius_data(C)
        if C.count == 1:
            formula = _cronstrom_raita_projection(vak_sys, frob, lam[0])
    return MethodComparison(field, vak, diff, frob, formula, third, agree0, agree_all)


def _cronstrom_raita_projection(vak_sys: NonlinearVakonomicSystem, frob: FrobeniusData, lam) -> dict:
    """``−λ Π_W(W⁻¹ M u)`` for one linear constraint (Cronström & Raita 2009, in the convention ``L + λφ``)."""
    chart = vak_sys.chart
    q, u = chart.coordinates, chart.velocities
    n = len(q)
    Ln = vak_sys.lagrangian.natural_expr()
    W = sp.Matrix(n, n, lambda A, B: Ln.diff(u[A]).diff(u[B]))
    a = list(frob.forms[0])
    Mu = [sp.Add(*[frob.curvature[A, B] * u[B] for B in range(n)]) for A in range(n)]
    solved = _inverse_times(W, [Mu, a])
    if solved is None:
        return None  # W singular (L degenerate in the velocities): the closed form does not apply
    x, Wa = solved
    aWa = sp.Add(*[a[A] * Wa[A] for A in range(n)])
    ax = sp.Add(*[a[A] * x[A] for A in range(n)])
    return {q[A]: reduce_if_cheap(-lam * (x[A] - Wa[A] * ax / aWa), 600) for A in range(n)}
