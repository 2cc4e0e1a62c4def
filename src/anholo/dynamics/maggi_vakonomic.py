"""The vakonomic field of a large system, in Maggi's form: the multiplication rule without normal forms.

The vakonomic equations are the Euler–Lagrange equations of ``L + λ_a φ_a`` with the multipliers
``λ_a(t)`` as unknowns and the constraints ``φ_a = κ_aA(t, q) q̇^A + c_a(t, q) = 0`` kept (the
multiplication rule; Arnold, Kozlov & Neishtadt (1988); Crampin & Mestdag (2010), Prop. 3;
docs/theory.rst, *Vakonomic dynamics*).  Written out,

    d/dt (∂L/∂q̇^A + λ_a κ_aA) − ∂L/∂q^A − λ_a ∂φ_a/∂q^A = Q_A,

that is ``E_A(L) = Q_A + Q^λ_A − λ̇_a κ_aA`` with the *multiplier force*

    Q^λ_A = λ_a (∂φ_a/∂q^A − d/dt κ_aA)
          = λ_a [ (∂κ_aB/∂q^A − ∂κ_aA/∂q^B) q̇^B + ∂c_a/∂q^A − ∂κ_aA/∂t ].

So the vakonomic motion is the Lagrange–d'Alembert motion under the extra force ``Q^λ``
(:class:`~anholo.dynamics.maggi.MaggiSystem` with ``engine_forces``), and the multiplier rates are
minus the multipliers of the constraints as written of that motion: if ``E(L) − Q − Q^λ = ν_a dφ_a/dq̇``
then ``λ̇ = −ν``.  In Maggi's adapted frame (``X_α = ∂_{f_α} + C^P_α ∂_P``, ``X_a = ∂_{P_a}``) the
implicit form in the unknowns ``(v̇^α, λ̇_a)`` is

    g_αβ v̇^β                        = X_α^A (F_A + Q^λ_A − W_AB w^B)
    −(W X_β)_{P_a} v̇^β − κ_{b P_a} λ̇_b = (W w − F − Q^λ)_{P_a}

(the notation of :mod:`anholo.dynamics.maggi`): the nonholonomic implicit form with the force
``Q^λ`` added and ``μ_a = −κ_{b P_a} λ̇_b``.  Everything is a symengine expression over one list
of shared subexpressions; nothing is normalised or inverted beyond the LU solves of Maggi's route.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from ..algebra.engine import se, zero
from ..errors import DimensionError
from .maggi import MaggiSystem

__all__ = ["MaggiVakonomic"]


@dataclass(frozen=True, eq=False)
class MaggiVakonomic:
    """The vakonomic field of the Lagrange–d'Alembert problem ``nh`` (a :class:`MaggiSystem`), for the
    multiplication rule ``L + λ_a φ_a`` with the constraints as written.

    Parameters
    ----------
    nh : MaggiSystem
    multipliers : sequence of str or Symbol, optional
        Names of ``λ_a`` (default ``lambda1, lambda2, …``).

    Examples
    --------
    The nonholonomic particle (``ż = y ẋ``, ``L = |q̇|²/2``): ``ẍ = ẏ(λ − yẋ)/(1 + y²)``, ``ÿ = −λẋ``,
    ``λ̇ = −ẏ(ẋ + yλ)/(1 + y²)`` (docs/theory.rst).

    >>> import sympy as sp
    >>> from anholo import Chart
    >>> chart = Chart("x y z")
    >>> xd, yd, zd = chart.velocities
    >>> y = chart.coordinates[1]
    >>> vak = MaggiVakonomic(MaggiSystem(chart, (xd**2 + yd**2 + zd**2) / 2, [zd - y * xd]))
    >>> qdd, rates = vak.natural()
    >>> lam = vak.multipliers[0]
    >>> sp.simplify(qdd[0] - yd * (lam - y * xd) / (1 + y**2)), sp.simplify(rates[0] + yd * (xd + y * lam) / (1 + y**2))
    (0, 0)
    """

    nh: MaggiSystem
    multipliers: tuple = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        nh, k = self.nh, len(self.nh.constraints)
        names = self.multipliers
        if names is None:
            taken = {s.name for s in nh._symbols()}
            prefix = "lambda"
            while any(f"{prefix}{a + 1}" in taken for a in range(k)):
                prefix = "_" + prefix
            names = tuple(f"{prefix}{a + 1}" for a in range(k))
        lam = tuple(sp.Symbol(s, real=True) if isinstance(s, str) else s for s in names)
        if len(lam) != k:
            raise DimensionError(f"need {k} multiplier names (one per constraint), got {len(lam)}.")
        clash = {s.name for s in lam} & {s.name for s in nh._symbols()}
        if clash:
            raise DimensionError(f"multiplier names clash with other symbols: {sorted(clash)}; choose others.")
        object.__setattr__(self, "multipliers", lam)

    @property
    def multiplier_rates(self) -> tuple:
        return tuple(sp.Symbol(f"{lam.name}_dot", real=True) for lam in self.multipliers)

    def multiplier_force(self) -> list:
        """``Q^λ_A`` of the module docstring (symengine expressions in ``t, q, q̇, λ``)."""
        nh = self.nh
        C = nh._cache
        q, u, t, kappa, cterm = C["q"], C["u"], C["t"], C["kappa"], C["c"]
        n, k = nh.n, len(kappa)
        lam = [se.Symbol(s.name) for s in self.multipliers]
        out = []
        for A in range(n):
            e = zero
            for a in range(k):
                term = cterm[a].diff(q[A])
                for B in range(n):
                    d = kappa[a][B].diff(q[A]) - kappa[a][A].diff(q[B])
                    if d != 0:
                        term = term + d * u[B]
                if t is not None:
                    term = term - kappa[a][A].diff(t)
                if term != 0:
                    e = e + lam[a] * term
            out.append(e)
        return out

    @cached_property
    def forced(self) -> MaggiSystem:
        """The Lagrange–d'Alembert problem under the extra force ``Q^λ`` (same dependent velocities)."""
        nh = self.nh
        return MaggiSystem(nh.chart, nh.lagrangian, nh.constraints, forces=nh.forces, time=nh.time,
                           dependent=nh.dependent_coordinates, holonomic=nh.holonomic,
                           quasi_velocities=nh.quasi_velocities, values=nh.values, name=nh.name, inputs=nh.inputs,
                           engine_forces=tuple(self.multiplier_force()))

    def shared(self) -> tuple:
        """``(pairs, results)``: ``q_ddot`` (n, in ``q, q̇, λ``; valid on C), ``lambda_dot`` (k, same),
        ``v_dot`` (m, in ``q, v, λ``) and the implicit form ``M`` (rows) and ``F`` in the unknowns
        ``(v̇^α, λ̇_a)``, over one list of shared subexpressions."""
        if "shared" not in self._cache:
            f = self.forced
            pairs, res = f.shared()
            m, k = f.m, len(f.constraints)
            KP = f._base[1]["KP"]  # κ_{a P_b}, row-major
            M = [list(row) for row in res["M"]]
            for a in range(k):  # μ_a = −κ_{b P_a} λ̇_b: the multiplier columns
                M[m + a] = M[m + a][:m] + [-KP[b * k + a] for b in range(k)]
            out = {"q_ddot": list(res["q_ddot"]), "lambda_dot": [-e for e in res["lambda"]],
                   "v_dot": list(res["v_dot"]), "M": M, "F": list(res["F"])}
            self._cache["shared"] = (pairs, out)
        return self._cache["shared"]

    def unknowns(self) -> tuple:
        """The unknowns of the implicit form: ``v̇^α`` (free velocities of Maggi's frame), then ``λ̇_a``."""
        return self.nh.quasi_velocity_rates[: self.nh.m] + self.multiplier_rates

    def natural(self) -> tuple:
        """``(q_ddot, lambda_dot)`` as sympy expressions in ``(q, q̇, λ)`` sharing their subexpressions."""
        from ..algebra.engine import shared_to_sympy

        pairs, res = self.shared()
        n = self.nh.n
        symbols = tuple(self.nh._symbols()) + self.multipliers
        out = shared_to_sympy(pairs, res["q_ddot"] + res["lambda_dot"], symbols)
        return tuple(out[:n]), tuple(out[n:])
