"""How the report blocks of a large system's flow write their expressions: small ones as sympy
expressions (tidied and printed by the report's :class:`~anholo.algebra.presentation.Presenter`),
large ones as text over one list of shared subexpressions (``"cse": [[name, expr], …]``, later
definitions use earlier names; docs/implicit.rst) — never expanded into a tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..algebra.engine import engine_cse, printed, shared_to_sympy, to_engine
from ..algebra.presentation import Presenter
from ..algebra.printing import tex_text
from ..algebra.program import Program
from .flow_program import FlowProgram, _renamed

__all__ = ["Written", "write", "SMALL_PROGRAM"]

#: Shared definitions above which a block writes its expressions as text over a ``"cse"`` list.
SMALL_PROGRAM = 150


def _prefix(flow: FlowProgram) -> str:
    """``cse`` (or ``_cse``, …): a prefix of the shared names that no name of the system starts with."""
    reserved = {s.name for s in flow.maggi._symbols()}
    prefix = "cse"
    while any(r.startswith(prefix) for r in reserved):
        prefix = "_" + prefix
    return prefix


@dataclass(frozen=True)
class Written:
    """The expressions of a block: sympy expressions (``cse`` None), or strings over ``cse``."""

    exprs: tuple
    cse: list | None
    definitions: int

    @property
    def large(self) -> bool:
        return self.cse is not None

    def json(self, p: Presenter, i: int):
        """The JSON leaf of expression ``i`` (a presented sympy expression, or its text over ``cse``)."""
        return self.exprs[i] if self.large else p.present(self.exprs[i])

    def _note(self, p: Presenter) -> str:
        return (f"[written with the block's {self.definitions} shared subexpressions, not printed: "
                + p.hint + "]")

    def text(self, p: Presenter, i: int) -> str:
        if self.large:
            return self.exprs[i] if p.full else self._note(p)
        return p.text(self.exprs[i])

    def latex(self, p: Presenter, i: int) -> str:
        if self.large:
            return r"\text{" + tex_text(self._note(p)) + "}"
        return p.latex(self.exprs[i])


def write(flow: FlowProgram, programs: Sequence[Program] = (), natural: Sequence = ()) -> Written:
    """The outputs of ``programs`` (this flow's programs) followed by ``natural`` (symengine or sympy
    expressions of ``(t, q, q̇)`` and the parameters) as a :class:`Written`."""
    joint = flow.joined(*programs) if programs else Program(flow.args, (), ())
    pairs, outputs = list(joint.pairs), list(joint.outputs)
    if natural:
        own, reduced = engine_cse([to_engine(e) for e in natural])
        taken = {str(a) for a, _ in pairs} | {str(a) for a in flow.args}
        own, reduced = _renamed(own, reduced, taken, "nat")
        pairs += own
        outputs += reduced
    if len(pairs) <= SMALL_PROGRAM:
        return Written(tuple(shared_to_sympy(pairs, outputs, flow.maggi._symbols())), None, len(pairs))
    cse, texts = printed(pairs, outputs, _prefix(flow))
    return Written(tuple(texts), cse, len(pairs))
