"""Reports of an analysis: a plain dict (→ JSON), readable text and LaTeX.

The dict is built from the result objects; text and LaTeX are rendered from the
same dict's sympy objects, so the three never disagree.  Expressions in the
JSON report are strings in the system file's names (q, q_dot, parameters),
parseable by ``sympy.sympify(s, locals=...)``.

Presentation simplification (once, at the end): each reported expression is put
through :func:`anholo._algebra.tidy` (``cancel`` plus reduction modulo
``sin² + cos² = 1``) when it is small enough for that to be cheap, or through
``sympy.simplify`` with ``simplify=True``.
"""

from __future__ import annotations

import json

import sympy as sp

from ._algebra import size_exceeds, tidy
from .printing import latex

__all__ = ["analyze", "Report"]

_TIDY_LIMIT = 3000


def _present(expr, simplify: bool = False):
    expr = sp.sympify(expr)
    if simplify:
        return sp.simplify(expr)
    if not size_exceeds(expr, 2 * _TIDY_LIMIT):
        return tidy(expr)
    return expr


class Report:
    """The result of :func:`analyze`: sections of sympy objects with three renderings."""

    def __init__(self, system, sections: dict):
        self.system = system
        self.sections = sections

    # --- JSON -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        s, sys_ = self.sections, self.system

        def st(e):
            return str(e)

        frame = sys_.frame
        n = frame.dim
        out = {
            "name": sys_.name,
            "coordinates": [q.name for q in sys_.chart.coordinates],
            "velocities": [u.name for u in sys_.chart.velocities],
            "parameters": [p.name for p in sys_.chart.parameters],
            "quasi_velocities": [v.name for v in sys_.bundle.quasi_velocities],
            "lagrangian": st(s["lagrangian_natural"]),
            "frame": {
                "vectors": [[st(frame.vectors[i, A]) for A in range(n)] for i in range(n)],
                "coframe": [[st(frame.coframe[i, A]) for A in range(n)] for i in range(n)],
                "structure": [[[st(frame.structure[k][i][j]) for j in range(n)] for i in range(n)] for k in range(n)],
                "holonomic": frame.is_holonomic,
            },
            "lagrangian_quasi": st(s["lagrangian_quasi"]),
            "regular": s["regular"],
            "hamel_equations": [{"lhs": st(e.lhs), "rhs": st(e.rhs)} for e in s["hamel"]],
            "euler_lagrange": None,
        }
        if s.get("q_ddot") is not None:
            out["euler_lagrange"] = {
                "q_ddot": {q.name: st(e) for q, e in s["q_ddot"].items()},
                "v_dot": [st(e) for e in s["v_dot"]],
            }
        else:
            out["euler_lagrange"] = {"q_ddot": None, "cartan": s["cartan"].to_dict()}
        nh = s.get("nonholonomic")
        if nh is not None:
            F = nh["frame"]
            out["nonholonomic"] = {
                "constraints": [st(c) for c in sys_.constraints],
                "rank_D": nh["rank_D"],
                "integrable": nh["integrable"],
                "affine": nh["affine"],
                "frame": {
                    "vectors": [[st(F.vectors[i, A]) for A in range(n)] for i in range(n)],
                    "structure": [[[st(F.structure[k][i][j]) for j in range(n)] for i in range(n)]
                                  for k in range(n)],
                },
                "quasi_velocities_on_C": [st(e) for e in nh["velocities_on_C"]],
                "v_dot": [st(e) for e in nh["v_dot"]],
                "q_ddot": {q.name: st(e) for q, e in nh["q_ddot"].items()},
                "multipliers": [st(e) for e in nh["multipliers"]],
                "frame_multipliers": [st(e) for e in nh["mu"]],
            }
        ch = s.get("chetaev")
        if ch is not None:
            out["chetaev"] = {
                "constraints": [st(c) for c in sys_.constraints],
                "rank": ch["rank"],
                "dependent_velocities": [u.name for u in ch["dependent"]],
                "homogeneity_degrees": [None if d is None else st(d) for d in ch["degrees"]],
                "alpha_bar_minus_alpha": [st(e) for e in ch["alpha_bar_minus_alpha"]],
                "q_ddot": {q.name: st(e) for q, e in ch["q_ddot"].items()},
                "multipliers": [st(e) for e in ch["multipliers"]],
                "energy_conserved": ch["energy_conserved"],
            }
        vak = s.get("vakonomic")
        if vak is not None:
            out["vakonomic"] = {
                "multipliers": [lam.name for lam in vak["lambdas"]],
                "q_ddot": {q.name: st(e) for q, e in vak["q_ddot"].items()},
                "lambda_dot": [st(e) for e in vak["lambda_dot"]],
            }
        if s.get("consistency") is not None:
            out["consistency"] = s["consistency"].to_dict()
        if s.get("chaplygin") is not None:
            out["chaplygin"] = _chaplygin_dict(s["chaplygin"])
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    # --- text -----------------------------------------------------------------------
    def to_text(self) -> str:
        s, sys_ = self.sections, self.system
        frame, b = sys_.frame, sys_.bundle
        lines = [sys_.name, "=" * len(sys_.name), ""]
        lines.append("Coordinates: " + ", ".join(q.name for q in sys_.chart.coordinates))
        if sys_.chart.parameters:
            lines.append("Parameters:  " + ", ".join(p.name for p in sys_.chart.parameters))
        lines.append(f"L = {s['lagrangian_natural']}")
        lines += ["", "Frame (X_i in the coordinate basis; quasi-velocities "
                  + ", ".join(v.name for v in b.quasi_velocities) + "):"]
        for i in range(frame.dim):
            lines.append(f"  X{i + 1} = {frame.vector(i)}")
        lines += ["", "Structure functions [X_i, X_j] = R^k_ij X_k (nonzero, i < j):"]
        nz = frame.nonzero_structure()
        if not nz:
            lines.append("  none: the frame is holonomic")
        for (k, i, j), val in nz.items():
            lines.append(f"  R^{k + 1}_{i + 1}{j + 1} = {val}")
        lines += ["", f"L in quasi-velocities: {s['lagrangian_quasi']}"]
        lines += ["", "Hamel equations  d/dt p_i = X_i(L) - R^k_ij v^j p_k:"]
        for e in s["hamel"]:
            lines.append(f"  {e.lhs} = {e.rhs}")
        lines += ["", "Euler-Lagrange field:"]
        if s.get("q_ddot") is not None:
            for v, e in zip(b.quasi_velocity_rates, s["v_dot"]):
                lines.append(f"  {v} = {e}")
            lines += ["", "Natural accelerations:"]
            for q, e in s["q_ddot"].items():
                lines.append(f"  {q.name}_ddot = {e}")
        else:
            lines.append("  the Lagrangian is singular; general solution of i_G dtheta_L = -dE_L:")
            lines += ["  " + line for line in str(s["cartan"]).splitlines()[1:]]
        nh = s.get("nonholonomic")
        if nh is not None:
            lines += self._nonholonomic_text(nh)
        if s.get("chetaev") is not None:
            lines += self._chetaev_text(s["chetaev"])
        return "\n".join(lines) + "\n"

    def _chetaev_text(self, ch) -> list:
        sys_ = self.system
        head = "Chetaev dynamics (nonlinear constraints, virtual displacements dphi/dq_dot . dq = 0)"
        lines = ["", head, "-" * len(head), "Constraints:"]
        for c, d in zip(sys_.constraints, ch["degrees"]):
            kind = f"homogeneous of degree {d}" if d is not None else "not homogeneous"
            lines.append(f"  {c} = 0   ({kind} in the velocities)")
        lines.append(f"Rank on C: {ch['rank']}; dependent velocities: {', '.join(u.name for u in ch['dependent'])}")
        lines.append("alpha_bar - alpha: " + ", ".join(str(e) for e in ch["alpha_bar_minus_alpha"]))
        lines.append("Equations E_A(L) = sum_nu lambda_nu dphi_nu/dq_dot_A, phi = 0:")
        lines += [f"  {e.lhs} = {e.rhs}" for e in ch["equations"]]
        lines.append("Natural accelerations on C:")
        lines += [f"  {q.name}_ddot = {e}" for q, e in ch["q_ddot"].items()]
        lines.append("Multipliers of the constraints as written:")
        lines += [f"  lambda{a + 1} = {e}" for a, e in enumerate(ch["multipliers"])]
        lines.append("Energy conserved: " + ("yes" if ch["energy_conserved"] else "no (the constraint forces do work)"))
        return lines

    def _nonholonomic_text(self, nh) -> list:
        sys_ = self.system
        F, m = nh["frame"], nh["rank_D"]
        v = sys_.bundle.quasi_velocities
        head = "Nonholonomic (Lagrange-d'Alembert) dynamics"
        lines = ["", head, "-" * len(head), "Constraints:"]
        lines += [f"  {c} = 0" for c in sys_.constraints]
        kind = "integrable: the constraints are holonomic" if nh["integrable"] else "not integrable (nonholonomic)"
        lines.append(f"D: rank {m} of {F.dim}, {kind}" + ("; affine constraints" if nh["affine"] else ""))
        lines.append(f"Adapted frame (X1..X{m} span D):")
        lines += [f"  X{i + 1} = {F.vector(i)}" for i in range(F.dim)]
        curv = [(k, i, j, val) for (k, i, j), val in F.nonzero_structure().items()]
        lines.append("Structure functions R^k_ij (nonzero, i < j):")
        lines += [f"  R^{k + 1}_{i + 1}{j + 1} = {val}" for k, i, j, val in curv] or ["  none"]
        on_C = ", ".join(f"{v[m + a]} = {b}" for a, b in enumerate(nh["velocities_on_C"][m:]))
        lines.append(f"Constraint submanifold C: {on_C}")
        lines.append("Hamel equations on C  d/dt dL_c/dv^alpha = X_alpha(L_c) - R^k_alpha,j v^j p_k|_C:")
        lines += [f"  {e.lhs} = {e.rhs}" for e in nh["hamel"]]
        lines.append("Nonholonomic field on C:")
        lines += [f"  {d} = {e}" for d, e in zip(sys_.bundle.quasi_velocity_rates, nh["v_dot"])]
        lines.append("Natural accelerations on C:")
        lines += [f"  {q.name}_ddot = {e}" for q, e in nh["q_ddot"].items()]
        lines.append("Multipliers of the constraints as written (E(L) = sum_a lambda_a dphi_a/dq_dot):")
        lines += [f"  lambda{a + 1} = {e}" for a, e in enumerate(nh["multipliers"])]
        vak = self.sections.get("vakonomic")
        if vak is not None:
            names = " + ".join(f"{lam}*phi{a + 1}" for a, lam in enumerate(vak["lambdas"]))
            head = f"Vakonomic dynamics (Euler-Lagrange equations of L + {names}, on C)"
            lines += ["", head, "-" * len(head)]
            lines += [f"  {q.name}_ddot = {e}" for q, e in vak["q_ddot"].items()]
            lines += [f"  {lam}_dot = {e}" for lam, e in zip(vak["lambdas"], vak["lambda_dot"])]
        cons = self.sections.get("consistency")
        if cons is not None:
            head = "Consistency of the nonholonomic and vakonomic dynamics (THEORY section 6)"
            lines += ["", head, "-" * len(head)] + cons.lines()
        if self.sections.get("chaplygin") is not None:
            lines += _chaplygin_text(self.sections["chaplygin"])
        return lines

    # --- LaTeX ----------------------------------------------------------------------
    def to_latex(self) -> str:
        s, sys_ = self.sections, self.system
        frame, b = sys_.frame, sys_.bundle
        out = [f"% anholo report: {sys_.name}", r"\begin{align*}", f"L &= {latex(s['lagrangian_natural'])}"]
        for i in range(frame.dim):
            comps = [
                rf"{latex(frame.vectors[i, A])}\,\partial_{{{latex(q)}}}"
                for A, q in enumerate(frame.chart.coordinates)
                if frame.vectors[i, A] != 0
            ]
            out[-1] += r" \\"
            out.append(f"X_{{{i + 1}}} &= " + " + ".join(comps))
        for (k, i, j), val in frame.nonzero_structure().items():
            out[-1] += r" \\"
            out.append(f"R^{{{k + 1}}}_{{{i + 1}{j + 1}}} &= {latex(val)}")
        for e in s["hamel"]:
            out[-1] += r" \\"
            out.append(f"{latex(e.lhs)} &= {latex(e.rhs)}")
        if s.get("q_ddot") is not None:
            for q, e in s["q_ddot"].items():
                out[-1] += r" \\"
                out.append(rf"\ddot{{{latex(q)}}} &= {latex(e)}")
        nh = s.get("nonholonomic")
        if nh is not None:
            for d, e in zip(b.quasi_velocity_rates, nh["v_dot"]):
                out[-1] += r" \\"
                out.append(f"{latex(d)} &= {latex(e)}")
            for q, e in nh["q_ddot"].items():
                out[-1] += r" \\"
                out.append(rf"\ddot{{{latex(q)}}}\big|_{{C}} &= {latex(e)}")
            for a, e in enumerate(nh["multipliers"]):
                out[-1] += r" \\"
                out.append(rf"\lambda_{{{a + 1}}} &= {latex(e)}")
        ch = s.get("chetaev")
        if ch is not None:
            for q, e in ch["q_ddot"].items():
                out[-1] += r" \\"
                out.append(rf"\ddot{{{latex(q)}}}\big|_{{C}} &= {latex(e)}")
            for a, e in enumerate(ch["multipliers"]):
                out[-1] += r" \\"
                out.append(rf"\lambda_{{{a + 1}}} &= {latex(e)}")
        out.append(r"\end{align*}")
        return "\n".join(out) + "\n"

    def __str__(self):
        return self.to_text()

    def _repr_latex_(self):
        body = self.to_latex().split("\n", 1)[1]
        return "$$" + body.replace(r"\begin{align*}", r"\begin{aligned}").replace(r"\end{align*}", r"\end{aligned}") + "$$"


def analyze(system, *, simplify: bool = False) -> Report:
    """Frame, structure functions, Hamel equations and Euler–Lagrange field of a system;
    with constraints also the nonholonomic field Γ_nh on C, its natural accelerations
    and the multipliers of the constraints as written (THEORY §4).

    For a singular Lagrangian the Euler–Lagrange part is the general solution of
    the Cartan equation (free directions and solvability conditions) instead.
    """
    L = system.lagrangian
    b = system.bundle
    sections = {
        "lagrangian_natural": _present(L.natural_expr(), simplify),
        "lagrangian_quasi": _present(L.expr, simplify),
        "regular": L.is_regular(),
        "hamel": [sp.Eq(_present(e.lhs, simplify), _present(e.rhs, simplify)) for e in L.hamel_equations()],
    }
    if sections["regular"]:
        field = L.euler_lagrange_field()
        sections["v_dot"] = [_present(a, simplify) for a in field.accelerations]
        sections["q_ddot"] = {q: _present(e, simplify) for q, e in field.natural_accelerations().items()}
    else:
        sections["q_ddot"] = None
        sections["cartan"] = L.euler_lagrange_field_cartan()
    if system.constraints and not _linear_constraints(system):
        sections["chetaev"] = _chetaev_section(system, simplify)
    elif system.constraints:
        sections["nonholonomic"] = _nonholonomic_section(system, simplify)
        if not sections["nonholonomic"]["affine"]:
            sections["vakonomic"] = _vakonomic_section(system, simplify)
            chaplygin = _chaplygin_section(system, simplify)
            if chaplygin is not None:
                sections["chaplygin"] = chaplygin
            sections["consistency"] = consistency_section(system, chaplygin["sections"] if chaplygin else ())
    return Report(system, sections)


def consistency_section(system, extra_sections=()):
    """Weak/strong consistency for the best section known (THEORY §6): the zero section, a cheap
    default search and ``extra_sections`` (e.g. −p of a Chaplygin system); see
    :func:`anholo.dynamics.consistency.consistency_report`.  ``extra_sections`` are built on
    ``system.nonholonomic()`` or given as value tuples in its adapted frame."""
    from .dynamics.consistency import Section, consistency_report

    nh = system.nonholonomic()
    extra = [Section(nh, s.values, s.name, s.conditions) if isinstance(s, Section) else s for s in extra_sections]
    return consistency_report(nh, extra)


def _linear_constraints(system) -> bool:
    """True if the file's constraints are linear or affine in the velocities (THEORY §4)."""
    from .errors import NonlinearConstraintError

    if getattr(system, "is_time_dependent", False):
        return False  # time-dependent constraints: the Chetaev treatment (THEORY §8)
    try:
        system.linear_constraints()
    except NonlinearConstraintError:
        return False
    return True


def _chetaev_section(system, simplify: bool) -> dict:
    """Chetaev equations for nonlinear constraints (THEORY §8): q̈ and the multipliers of the
    constraints as written, with the homogeneity diagnostics of seed 000."""
    from .dynamics.diagnostics import alpha_bar_minus_alpha, energy_balance, homogeneity_degree

    ch = system.chetaev()
    C = ch.constraints
    field = ch.field()
    return {
        "rank": C.rank,
        "dependent": [system.chart.velocities[A] for A in C.dependent],
        "degrees": [homogeneity_degree(e, system.chart.velocities) for e in C.expressions],
        "alpha_bar_minus_alpha": [_present(e, simplify) for e in alpha_bar_minus_alpha(C)],
        "equations": ch.equations_with_multipliers(),
        "q_ddot": {q: _present(C.on_C(e), simplify) for q, e in field.natural_accelerations().items()},
        "multipliers": [_present(C.on_C(e), simplify) for e in field.natural_multipliers()],
        "energy_conserved": energy_balance(field).conserved,
    }


def _vakonomic_section(system, simplify: bool) -> dict:
    """The vakonomic field tangent to C for the multiplication rule L + Σ λ_a φ_a (THEORY §5)."""
    from .dynamics.vakonomic import VakonomicSystem

    vak = VakonomicSystem(system.nonholonomic())
    qdd, rates = vak.field().in_written_multipliers()
    return {
        "lambdas": vak.multipliers,
        "q_ddot": {q: _present(e, simplify) for q, e in qdd.items()},
        "lambda_dot": [_present(e, simplify) for e in rates],
    }


def _nonholonomic_section(system, simplify: bool) -> dict:
    """Γ_nh and its multipliers (THEORY §4) for the file's constraints."""
    nh = system.nonholonomic()
    field = nh.field()
    return {
        "frame": nh.frame,
        "rank_D": nh.m,
        "integrable": nh.distribution_is_integrable(),
        "affine": nh.constraints.is_affine,
        "velocities_on_C": tuple(_present(e, simplify) for e in nh.velocities_on_C),
        "hamel": [sp.Eq(_present(e.lhs, simplify), _present(e.rhs, simplify)) for e in nh.constrained_hamel_equations()],
        "v_dot": [_present(a, simplify) for a in field.accelerations],
        "q_ddot": {q: _present(e, simplify) for q, e in field.natural_accelerations().items()},
        "multipliers": [_present(e, simplify) for e in field.coordinate_multipliers()],
        "mu": [_present(e, simplify) for e in field.multipliers],
    }


def _chaplygin_section(system, simplify: bool):
    """The Chaplygin analysis of a file with a ``[symmetry]`` table (THEORY §7), or None.

    Frame, curvature, momenta and multipliers μ = Γ_nh(p), the verdict for σ = −p, L̂ with
    Prop. 5/6 and, when −p fails, a search of sections −p + c in the default ansatz; the
    sections −p and −p + c (in the adapted frame of ``system.nonholonomic()``) are handed to
    the consistency report.
    """
    ch = system.chaplygin()
    if ch is None:
        return None
    from .dynamics.consistency import Section

    nh = system.nonholonomic()
    verdict = ch.consistency()
    sections = [Section(nh, ch.section_in(nh, ch.momentum_section()), "-p")]
    search = None
    if verdict.holds is not True:
        search = ch.momentum_sections(ch.default_ansatz(), solve_for=_coupling_parameter(system, verdict))
        for k, found in enumerate(search.sections):
            zero = {c: 0 for c in found.free_constants}
            c = [e.xreplace(zero) for e in found.c]
            if all(e == 0 for e in c):
                continue
            values = [e.xreplace(zero) for e in found.section]
            conds = tuple(sp.Eq(p, v) for p, v in found.parameter_values.items())
            if any(cond is sp.false for cond in conds):
                continue  # a special value excluded by the parameter's sign (e.g. a negative root)
            conds = tuple(cond for cond in conds if cond is not sp.true)
            sections.append(Section(nh, ch.section_in(nh, values), f"-p + c ({k + 1})", conds))
    check = ch.check_variational_lagrangian()
    return {
        "system": ch,
        "verdict": verdict,
        "momenta": [_present(ch.nonholonomic.to_natural(p), simplify) for p in ch.momenta_on_C],
        "multipliers": [_present(ch.nonholonomic.to_natural(m), simplify) for m in ch.multipliers()],
        "check": check,
        "search": search,
        "sections": sections,
    }


def _coupling_parameter(system, verdict):
    """The parameter to express a special value of, for sections −p + c: one whose vanishing makes −p
    consistent (a factor ``p`` of the −p condition) and that enters neither the constraints nor the
    frame — the carriage's offset ``a`` (with ``m0``, which always multiplies it, the later declared
    is taken: geometric parameters are usually declared after the masses); None if there is none."""
    cons = set().union(*(sp.sympify(c).free_symbols for c in system.constraints)) if system.constraints else set()
    cons |= set(system.frame.vectors.free_symbols)
    factors = set()
    for c in getattr(verdict, "conditions", ()) or ():
        factors |= {f for f in sp.Mul.make_args(sp.factor(c)) if f.is_Symbol}
    candidates = [p for p in system.chart.parameters if p in factors and p not in cons]
    return candidates[-1] if candidates else None


def _chaplygin_dict(ch) -> dict:
    sysc, F = ch["system"], ch["system"].frame
    G = sysc.action
    n = F.dim
    return {
        "group_dimension": G.dim,
        "action": G.action,
        "generators": [[str(e) for e in g.components] for g in G.generators],
        "structure_constants": [[[str(e) for e in row] for row in mat] for mat in G.structure_constants],
        "shape_coordinates": None if sysc.shape_coordinates is None else [q.name for q in sysc.shape_coordinates],
        "frame": [[str(F.vectors[i, A]) for A in range(n)] for i in range(n)],
        "curvature": {f"R^{a + 1}_{al + 1}{be + 1}": str(v) for (a, al, be), v in sysc.curvature().items()},
        "momenta": [str(p) for p in ch["momenta"]],
        "multipliers": [str(m) for m in ch["multipliers"]],
        "minus_p": ch["verdict"].to_dict(),
        "variational_lagrangian": ch["check"].to_dict(),
        "search": None if ch["search"] is None else ch["search"].to_dict(),
    }


def _chaplygin_text(ch) -> list:
    sysc = ch["system"]
    G, F, m = sysc.action, sysc.frame, sysc.m
    head = f"Chaplygin system (THEORY section 7): {G.action} action of a {G.dim}-dimensional group"
    lines = ["", head, "-" * len(head)]
    lines += [f"  E{a + 1} = {g}" for a, g in enumerate(G.generators)]
    shape = sysc.shape_coordinates
    lines.append("Chaplygin frame (X1..X%d horizontal%s, then the generators):"
                 % (m, "" if shape is None else " lifts of d/" + ", d/".join(q.name for q in shape)))
    lines += [f"  X{i + 1} = {F.vector(i)}" for i in range(F.dim)]
    lines.append("Curvature R^a_alpha,beta:")
    lines += [f"  R^{a + 1}_{al + 1}{be + 1} = {v}" for (a, al, be), v in sysc.curvature().items()] or ["  none"]
    lines.append("Momenta p_a = X_a^V(L) on C, and multipliers mu_a = Gamma_nh(p_a):")
    lines += [f"  p{a + 1} = {p}" for a, p in enumerate(ch["momenta"])]
    lines += [f"  mu{a + 1} = {mu}" for a, mu in enumerate(ch["multipliers"])]
    lines.append(f"Section sigma = -p: {ch['verdict'].reason}")
    c = ch["check"]
    lines.append("Variational Lagrangian L^ = L - p_a v^a (Prop. 5/6): "
                 f"invariant {c.invariant}, Hessian block-diagonal on C {c.mixed_block_vanishes}, "
                 f"regular w.r.t. D {c.regular_D} and g {c.regular_g}, EL field tangent to C {c.tangent_to_C}, "
                 f"equal to Gamma_nh on C {c.equals_nonholonomic}")
    if ch["search"] is not None:
        found = ch["search"].sections
        if not found:
            lines.append("Sections -p + c (c constants of motion, default ansatz): none found")
        for s in found:
            where = ", ".join(f"{k} = {v}" for k, v in s.parameter_values.items()) or "all parameter values"
            lines.append(f"Section -p + c for {where}: c = ({', '.join(map(str, s.c))})")
    return lines
