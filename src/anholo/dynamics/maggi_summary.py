"""The report block of the nonholonomic field of a large system (Maggi's equations, :mod:`anholo.dynamics.maggi`).

The block has the keys of the exact route's ``nonholonomic`` block (constraints, rank of D,
integrability, the adapted frame and its structure functions, the quasi-velocities on C, ``v_dot``,
``q_ddot``, the multipliers of the constraints as written and in the frame, the implicit form),
written with one list of shared subexpressions ``"cse": [[name, expr], …]`` (docs/implicit.rst),
plus ``"route": "maggi"`` and the dependent and free coordinates.  The text prints the verdicts and
the sizes, never a large expression.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..algebra.decision import Decision
from ..algebra.engine import printed, to_engine
from ..algebra.presentation import Presenter, ReportBlock
from .maggi import MaggiSystem
from .maggi_chetaev import MaggiChetaev
from .maggi_vakonomic import MaggiVakonomic

__all__ = ["MaggiSummary", "LargeEulerLagrangeSummary", "LargeVakonomicSummary", "LargeChetaevSummary"]

#: How Maggi's route decides integrability of D (``R^a_αβ`` at random points) and regularity (the
#: condition number of ``g_αβ`` at a random point): :meth:`MaggiSystem.distribution_is_integrable`,
#: :meth:`MaggiSystem.check_regular`.
_INTEGRABILITY_DECISION = Decision.numerical(3, 1e-9)
_REGULARITY_DECISION = Decision.numerical(1, 1e-14)

_HINT = "complete in the JSON report (--json), or from Python: System.load(FILE).nonholonomic().implicit_form()"


def _cse_prefix(nh: MaggiSystem) -> str:
    """``cse`` (or ``_cse``, …): a prefix of the shared names that no name of the system starts with."""
    reserved = {s.name for s in nh._symbols()}
    prefix = "cse"
    while any(r.startswith(prefix) for r in reserved):
        prefix = "_" + prefix
    return prefix


@dataclass(frozen=True, eq=False)
class MaggiSummary(ReportBlock):
    """Γ_nh of a large system: the implicit form, the explicit accelerations and multipliers written with
    shared subexpressions, the adapted frame ``X_α = ∂_{f_α} + C^P_α ∂_P`` and its structure functions."""

    system: MaggiSystem
    written: tuple
    integrable: bool
    reason: str = ""  # why the system takes Maggi's route (System.route)

    key = "nonholonomic"
    title = "Nonholonomic (Lagrange-d'Alembert) dynamics"

    @classmethod
    def of(cls, nh: MaggiSystem, written=(), reason: str = "") -> "MaggiSummary":
        nh.check_regular()
        return cls(nh, tuple(written) or nh.constraints, nh.distribution_is_integrable(), reason)

    def _printed(self, prefix: str) -> tuple:
        pairs, res = self.system.shared()
        keys = ("frame", "structure", "v_dot", "q_ddot", "lambda", "mu", "M", "F")
        cse, out = printed(pairs, [res[k] for k in keys], prefix)
        return cse, dict(zip(keys, out))

    def payload(self, p: Presenter) -> dict:
        nh = self.system
        cse, out = self._printed(_cse_prefix(nh))
        m = nh.m
        return {"nonholonomic": {
            "constraints": [str(to_engine(c)) for c in self.written],
            "rank_D": m,
            "integrable": self.integrable,
            "affine": nh.is_affine,
            "route": "maggi",
            **_INTEGRABILITY_DECISION.to_dict(),
            "dependent": [c.name for c in nh.dependent_coordinates],
            "free": [c.name for c in nh.free_coordinates],
            "frame": {"vectors": out["frame"], "structure": out["structure"]},
            "quasi_velocities_on_C": [str(e) for e in nh.velocities_on_C],
            "v_dot": out["v_dot"],
            "q_ddot": {q.name: e for q, e in zip(nh.chart.coordinates, out["q_ddot"])},
            "multipliers": out["lambda"],
            "frame_multipliers": out["mu"],
            "implicit": {"unknowns": [str(x) for x in nh.quasi_velocity_rates[:m] + nh.multiplier_symbols],
                         "M": out["M"], "F": out["F"]},
            "cse": cse,
        }}

    def _kind(self) -> str:
        nh = self.system
        kind = "integrable: the constraints are holonomic" if self.integrable else "not integrable (nonholonomic)"
        return f"D: rank {nh.m} of {nh.n}, {kind}" + ("; affine constraints" if nh.is_affine else "")

    def text_lines(self, p: Presenter) -> list:
        nh = self.system
        pairs = nh._base[0]  # the implicit form's (the explicit solutions' cse is for the JSON and --full)
        v = nh.free_velocities
        lines = [f"Constraints: {len(self.written)} (print them with --json)", self._kind(),
                 "Computed by Maggi's equations (the Lagrange-d'Alembert equations projected on D in "
                 "coordinates, no symbolic inversion; docs/implicit.rst)"
                 + (f": {self.reason}" if self.reason else ""),
                 "Free velocities: " + ", ".join(f"{vv} = {c.name}_dot" for vv, c in zip(v, nh.free_coordinates)),
                 "Dependent velocities (solved by LU, kept as expressions): "
                 + ", ".join(f"{c.name}_dot" for c in nh.dependent_coordinates),
                 f"Adapted frame X_alpha = d/d(free) + C d/d(dependent), X_a = d/d(dependent): {self._size_note()}",
                 f"Implicit form M x = F in x = ({', '.join(map(str, nh.quasi_velocity_rates[:nh.m] + nh.multiplier_symbols))})"
                 f": {len(pairs)} shared subexpressions; {_HINT}"]
        if p.full:  # everything, written with the shared subexpressions
            cse, out = self._printed(_cse_prefix(nh))
            rates = nh.quasi_velocity_rates
            lines.append("Shared subexpressions:")
            lines += [f"  {name} = {expr}" for name, expr in cse]
            lines.append("Nonholonomic field on C:")
            lines += [f"  {d} = {e}" for d, e in zip(rates, out["v_dot"])]
            lines.append("Natural accelerations on C:")
            lines += [f"  {q.name}_ddot = {e}" for q, e in zip(nh.chart.coordinates, out["q_ddot"])]
            lines.append("Multipliers of the constraints as written (E(L) = sum_a lambda_a dphi_a/dq_dot):")
            lines += [f"  lambda{a + 1} = {e}" for a, e in enumerate(out["lambda"])]
        return lines

    def _size_note(self) -> str:
        return f"entries not printed ({_HINT})"

    def latex_lines(self, p: Presenter) -> list:
        return [r"\paragraph{Nonholonomic dynamics} " + self._kind().replace("D:", "$D$:") + ". Large system: "
                r"computed by Maggi's equations (no symbolic inversion); the expressions are in the JSON report."]

    def summary(self) -> list:
        return [self._kind()]


@dataclass(frozen=True, eq=False)
class LargeEulerLagrangeSummary(ReportBlock):
    """The Euler–Lagrange field of a large system, in the natural velocities: ``W q̈ = F`` (Maggi's
    equations with no constraints, :class:`~anholo.dynamics.maggi.MaggiSystem`), the accelerations by
    LU of the small system written with shared subexpressions (``W`` is positive definite for a kinetic
    energy, so its leading principal minors, the pivots, do not vanish)."""

    system: MaggiSystem
    constrained: bool = False

    key = "euler_lagrange"
    title = "Hamel equations and the Euler–Lagrange field"

    @classmethod
    def of(cls, free: MaggiSystem, constrained: bool = False) -> "LargeEulerLagrangeSummary":
        free.check_regular()
        return cls(free, constrained)

    def payload(self, p: Presenter) -> dict:
        nh = self.system
        pairs, res = nh.shared()
        cse, out = printed(pairs, [res["M"], res["F"], res["v_dot"], res["q_ddot"]], _cse_prefix(nh))
        M, F, vdot, qdd = out
        rates = nh.quasi_velocity_rates
        n = nh.n
        lhs = [" + ".join(f"({M[i][j]})*{rates[j]}" for j in range(n) if M[i][j] != "0") or "0" for i in range(n)]
        return {
            "lagrangian_quasi": str(to_engine(nh.lagrangian).xreplace(
                {to_engine(u): to_engine(v) for u, v in zip(nh.chart.velocities, nh.free_velocities)})),
            "regular": True,
            "route": "maggi",
            "hamel_equations": [{"lhs": a, "rhs": b} for a, b in zip(lhs, F)],
            "euler_lagrange": {"q_ddot": {q.name: e for q, e in zip(nh.chart.coordinates, qdd)}, "v_dot": vdot,
                               "cse": cse, **_REGULARITY_DECISION.to_dict()},  # also the names of hamel_equations (docs/implicit.rst)
        }

    def text_lines(self, p: Presenter) -> list:
        nh = self.system
        pairs = nh._base[0]  # the implicit form's (the explicit one is for the JSON)
        lines = ["(the free system, without the constraints)"] if self.constrained else []
        return lines + [
            "Large system: the Euler-Lagrange equations W q_ddot = F in the natural velocities "
            f"(v_i = q_i_dot), {len(pairs)} shared subexpressions; {_HINT.replace('nonholonomic()', 'free_maggi()')}",
            "Lagrangian: regular"]

    def latex_lines(self, p: Presenter) -> list:
        return [r"\paragraph{Euler--Lagrange field} Large system: $W\ddot q = F$ in the natural velocities; "
                r"the expressions are in the JSON report."]

    def summary(self) -> list:
        return ["Lagrangian: regular"]


@dataclass(frozen=True, eq=False)
class LargeVakonomicSummary(ReportBlock):
    """The vakonomic field of a large system (:class:`~anholo.dynamics.maggi_vakonomic.MaggiVakonomic`): the
    Euler–Lagrange equations of ``L + λ_a φ_a`` on C, with the keys of the exact route's block
    (``multipliers``, ``q_ddot``, ``lambda_dot``, ``implicit``) written with shared subexpressions."""

    field: MaggiVakonomic
    forced: bool = False

    key = "vakonomic"
    title = "Vakonomic dynamics"
    _FORCES_NOTE = ("with the forces added, E(L + lambda*phi) = Q: a convention, forces do not come from a "
                    "variational principle (docs/forces.rst)")

    @classmethod
    def of(cls, nh: MaggiSystem) -> "LargeVakonomicSummary":
        return cls(MaggiVakonomic(nh), nh.forces is not None)

    def payload(self, p: Presenter) -> dict:
        vak = self.field
        pairs, res = vak.shared()
        cse, (qdd, rates, M, F) = printed(pairs, [res["q_ddot"], res["lambda_dot"], res["M"], res["F"]],
                                          _cse_prefix(vak.nh))
        return {"vakonomic": {
            "multipliers": [lam.name for lam in vak.multipliers],
            "q_ddot": {q.name: e for q, e in zip(vak.nh.chart.coordinates, qdd)},
            "lambda_dot": rates,
            **({"forces": self._FORCES_NOTE} if self.forced else {}),
            "implicit": {"unknowns": [str(x) for x in vak.unknowns()], "M": M, "F": F},
            "route": "maggi",
            "cse": cse,
            "decided": "exact",
        }}

    def _rule(self) -> str:
        return " + ".join(f"{lam}*phi{a + 1}" for a, lam in enumerate(self.field.multipliers))

    def text_lines(self, p: Presenter) -> list:
        vak = self.field
        pairs = vak.forced._base[0]  # the implicit form's (the explicit solutions' cse is for the JSON and --full)
        lines = [f"({self._FORCES_NOTE})"] if self.forced else []
        lines += [f"Euler-Lagrange equations of L + {self._rule()}, on C (the multiplication rule):",
                  "Large system: the Lagrange-d'Alembert equations under the multiplier force "
                  "lambda_a (dphi_a/dq - d/dt dphi_a/dq_dot), by Maggi's equations (docs/implicit.rst)",
                  f"Implicit form M x = F in x = ({', '.join(map(str, vak.unknowns()))}), {len(pairs)} shared "
                  f"subexpressions; it and the explicit q_ddot, lambda_dot: {_HINT.replace('nonholonomic().implicit_form()', 'maggi()')}"
                  " (anholo.dynamics.maggi_vakonomic.MaggiVakonomic)"]
        if p.full:
            cse, (qdd, rates) = printed(*self._explicit(), _cse_prefix(vak.nh))
            lines.append("Shared subexpressions:")
            lines += [f"  {name} = {expr}" for name, expr in cse]
            lines += [f"  {q.name}_ddot = {e}" for q, e in zip(vak.nh.chart.coordinates, qdd)]
            lines += [f"  {lam}_dot = {e}" for lam, e in zip(vak.multipliers, rates)]
        return lines

    def _explicit(self) -> tuple:
        pairs, res = self.field.shared()
        return pairs, [res["q_ddot"], res["lambda_dot"]]

    def latex_lines(self, p: Presenter) -> list:
        rule = " + ".join(rf"\lambda_{{{a + 1}}}\,\varphi_{{{a + 1}}}" for a in range(len(self.field.multipliers)))
        return [rf"\paragraph{{Vakonomic dynamics}} Euler--Lagrange equations of $L + {rule}$ on $C$. Large system: "
                r"computed by Maggi's equations under the multiplier force; the expressions are in the JSON report."]

    def summary(self) -> list:
        return []


def _degree_text(d) -> object:
    """A homogeneity degree for JSON: an int, ``"p/q"`` for a fraction, None if not homogeneous."""
    return d if d is None or isinstance(d, int) else str(d)


@dataclass(frozen=True, eq=False)
class LargeChetaevSummary(ReportBlock):
    """Chetaev's equations of a large system with nonlinear (or time-dependent) constraints
    (:class:`~anholo.dynamics.maggi_chetaev.MaggiChetaev`): ``E_A(L) = Q_A + λ_ν ∂φ^ν/∂q̇^A``, ``φ = 0``,
    solved in coordinates by block elimination, ``q̈ = W⁻¹(F + Jᵀλ)`` with ``(J W⁻¹ Jᵀ) λ = s − J W⁻¹ F``
    (Chetaev (1932); Talamucci (2025); docs/chetaev.rst, *Large systems*), written with shared
    subexpressions.  The keys of the exact route's ``chetaev`` block where they make sense (not the
    displayed equations, nor ``ᾱ − α``, which need the constraints solved in closed form), plus
    ``"route": "maggi"``, ``"constraint_power_vanishes"`` and how the numerical verdicts (homogeneity
    degrees, the power of the constraint forces, energy) were decided."""

    system: MaggiChetaev
    written: tuple
    verdicts: object  # ChetaevVerdicts

    key = "chetaev"
    title = "Chetaev dynamics (nonlinear constraints)"

    @classmethod
    def of(cls, system) -> "LargeChetaevSummary":
        """The block of an :class:`anholo.system.System` (its chart, L in the natural velocities, its
        constraints, forces and time)."""
        forces = system.forces.total if getattr(system, "forces", None) is not None else None
        ch = MaggiChetaev(system.chart, system.lagrangian.natural_expr(), tuple(system.constraints), forces=forces,
                          time=system.time, name=getattr(system, "name", ""))
        ch.shared()  # raises the errors of a singular problem before anything is printed
        return cls(ch, tuple(system.constraints), ch.verdicts())

    def _prefix(self) -> str:
        reserved = {s.name for s in self.system._symbols()}
        prefix = "cse"
        while any(r.startswith(prefix) for r in reserved):
            prefix = "_" + prefix
        return prefix

    def _printed(self) -> tuple:
        pairs, res = self.system.shared()
        keys = ("q_ddot", "lambda", "M", "rhs")
        cse, out = printed(pairs, [res[k] for k in keys], self._prefix())
        return cse, dict(zip(keys, out))

    def _unknowns(self) -> tuple:
        return self.system.acceleration_symbols + self.system.multiplier_symbols

    def payload(self, p: Presenter) -> dict:
        ch, v = self.system, self.verdicts
        cse, out = self._printed()
        u = ch.chart.velocities
        return {"chetaev": {
            "constraints": [str(to_engine(c)) for c in self.written],
            "rank": ch.k,
            "dependent_velocities": [u[A].name for A in ch.dependent],
            "homogeneity_degrees": [_degree_text(d) for d in v.degrees],
            "q_ddot": {q.name: e for q, e in zip(ch.chart.coordinates, out["q_ddot"])},
            "multipliers": out["lambda"],
            "energy_conserved": v.energy_conserved,
            "constraint_power_vanishes": v.constraint_power_vanishes,
            "implicit": {"unknowns": [str(x) for x in self._unknowns()], "M": out["M"], "F": out["rhs"]},
            "route": "maggi",
            **v.decision.to_dict(),
            "cse": cse,
        }}

    def _degree_lines(self) -> list:
        out = []
        for a, d in enumerate(self.verdicts.degrees):
            kind = f"homogeneous of degree {d}" if d is not None else "not homogeneous"
            out.append(f"  phi{a + 1}: {kind} in the velocities")
        return out

    def text_lines(self, p: Presenter) -> list:
        ch, v = self.system, self.verdicts
        pairs, _ = ch.shared()
        u = ch.chart.velocities
        lines = [f"Constraints: {ch.k} (virtual displacements dphi/dq_dot . dq = 0; print them with --json)"]
        lines += self._degree_lines()
        lines += [f"Rank on C: {ch.k}; dependent velocities: {', '.join(u[A].name for A in ch.dependent)}",
                  "Computed by Chetaev's equations in coordinates, [[W, -J^T], [J, 0]] [q_ddot; lambda] = [F; s] "
                  "(J = dphi/dq_dot), by block elimination written with shared subexpressions (no normal forms)",
                  f"Implicit form M x = F in x = ({', '.join(map(str, self._unknowns()))}); q_ddot and lambda "
                  f"written with {len(pairs)} shared subexpressions: complete in the JSON report (--json), or "
                  "from Python: anholo.dynamics.maggi_chetaev.MaggiChetaev"]
        if p.full:
            cse, out = self._printed()
            lines.append("Shared subexpressions:")
            lines += [f"  {name} = {expr}" for name, expr in cse]
            lines.append("Natural accelerations on C:")
            lines += [f"  {q.name}_ddot = {e}" for q, e in zip(ch.chart.coordinates, out["q_ddot"])]
            lines.append("Multipliers of the constraints as written (E(L) = Q + sum_nu lambda_nu dphi_nu/dq_dot):")
            lines += [f"  {lam} = {e}" for lam, e in zip(ch.multiplier_symbols, out["lambda"])]
        lines.append("Power of the constraint forces lambda_nu dphi_nu/dq_dot . q_dot on C: "
                     + ("zero" if v.constraint_power_vanishes else "not zero"))
        lines += self.summary()
        lines.append(f"(verdicts {v.decision})")
        return lines

    def latex_lines(self, p: Presenter) -> list:
        return [r"\paragraph{Chetaev dynamics} Large system: Chetaev's equations "
                r"$E_A(L) = Q_A + \lambda_\nu\,\partial\varphi^\nu/\partial\dot q^A$, $\varphi = 0$, solved in "
                r"coordinates by block elimination (no normal forms); the expressions are in the JSON report. "
                + self.summary()[0] + "."]

    def summary(self) -> list:
        v = self.verdicts
        if v.energy_conserved:
            return ["Energy conserved: yes"]
        why = ("the constraint forces do work" if not v.constraint_power_vanishes
               else "the forces or the time dependence of L do work")
        return [f"Energy conserved: no ({why})"]
