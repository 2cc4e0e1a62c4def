"""Charts of the velocity space along a motion: monitors of their conditioning, and the switch.

A field is integrated in one *chart* of its state space: the nonholonomic field on ``(q, v^α)`` with
``q̇ = X_α(q) v^α + β(q)`` for an adapted frame ``X_α`` spanning D (docs/theory.rst, *Nonholonomic
dynamics*; Prop. 2 of Crampin & Mestdag (2010)).  Such a chart can fail where the *frame* fails and the
motion does not: the rows ``X_α(q)`` may become linearly dependent (the Veselova system written with
the body angular velocities, Veselov & Veselova (1986): the frame solved for ``Ω3`` with the pivot
``cos θ`` degenerates at ``θ = π/2`` although D is regular there), and then ``v^α`` blows up and the
integrator grinds.  Two numbers tell how good a chart is at a point:

* the *frame condition* ``κ_X(q)``: the larger of ``σ_max / σ_min`` of the m × n matrix of the rows
  ``X_α(q)`` as they are and with each row scaled to unit length — two rows that turn parallel count,
  and so does a row whose length runs away from the others' (``X = cot θ ∂_x + ∂_y, ∂_θ`` of the knife
  edge solved for ``ẋ``: the quasi-velocity ``v = ẏ`` goes to 0 at θ = π while ``ẋ`` does not, and a
  step of ``v`` costs ``1/sin θ`` in ``x``) — read from the compiled map ``v ↦ q̇`` at
  ``v = 0, e_1, …, e_m``, one vectorised call;
* in a chart of Maggi's equations (dependent velocities ``q̇^P``, free ``v^α = q̇^{f_α}``,
  :mod:`anholo.dynamics.maggi`), the *pivot condition* ``‖κ(q)‖ / σ_min(κ_P(q))`` of the block of
  the constraint matrix ``κ(q)`` that is solved for ``q̇^P``, and the *mass condition* ``cond(g(q, v))``
  of ``g_αβ = X_α^A W_AB X_β^B`` (``W = ∂²L/∂q̇∂q̇``), the matrix inverted at every step.

The dependent velocities with the best pivot at ``q`` are those with the largest ``σ_min(κ_P(q))``
among all choices when there are few, else the first k pivot columns of QR with column pivoting of
``κ(q)`` (Businger & Golub (1965); the strategy of coordinate partitioning, Wehage & Haug (1982)).  Maggi's equations in those velocities are exactly the Lagrange–d'Alembert
equations (Kane & Levinson (1985)), so the motion continues from the state reached, converted through
the natural velocities ``q̇ = X_α v^α + β`` (finite where the old chart still is).  If even the best
chart has a singular ``g`` (``cond(g) > SINGULAR_MASS``) the motion itself is singular there: ``W``
restricted to D degenerates, either in the coordinates (Euler angles at gimbal lock) or in the
Lagrangian; :func:`~anholo.numerics.simulate` then stops with :class:`~anholo.errors.IntegrationError`
saying where and why.  Where the field was integrated in a user's choice of dependent velocities, the
system's own adapted frame (:meth:`ChartAtlas.own_frame`) is a candidate too, preferred when it is as good.
docs/simulation.rst, *Frame singularities*, has the whole scheme.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import qr

from ..algebra.program import Program
from ..errors import AnholoError, SimulationError

__all__ = ["ChartAtlas", "frame_condition", "frame_rows", "FRAME_SWITCH", "PIVOT_SWITCH", "PIVOT_BETTER", "SINGULAR_MASS"]

#: The frame condition above which the frame chart is left (also: 5 × its value at the start, if larger;
#: and only for a chart whose frame and pivot conditions are 4 × smaller: anholo.numerics.switching).
FRAME_SWITCH = 10.0
#: The pivot condition above which the dependent velocities are chosen again (if the best is PIVOT_BETTER ×
#: better).  Low, because the charts of Maggi's equations are anholo's own and a change costs a restart of the
#: solver, while steps near a pole of the pivot cost more all the way: the knife edge turning through several
#: half-turns (every choice of one dependent velocity is singular twice per turn) costs 2.8× the evaluations of
#: its regular frame at 10 / 10, 2.2× at 4 / 4 (benchmarks/bench_frame_singularity.py); where the system's own
#: frame is regular (:meth:`ChartAtlas.own_frame`) the run goes on in it instead, at 1.4×.
PIVOT_SWITCH = 4.0
#: A change of dependent velocities is made only for a choice whose pivot condition is this many times smaller.
PIVOT_BETTER = 4.0
#: Up to this many choices of dependent velocities the best pivot is found among all of them (else: QR).
EXHAUSTIVE = 64
#: The condition of the mass block ``g`` (in the best chart) above which the motion is called singular.
SINGULAR_MASS = 1e10


def _condition(a: np.ndarray) -> float:
    """``σ_max / σ_min`` (inf for a rank-deficient or non-finite matrix; 1 for an empty one)."""
    if a.size == 0:
        return 1.0
    if not np.all(np.isfinite(a)):
        return float("inf")
    s = np.linalg.svd(a, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def velocity_block(compiled) -> tuple:
    """``(start, m)``: where the quasi-velocities ``v^α`` sit in the state of a compiled field and how many
    there are (``m = 0``: a state in natural velocities, no frame to watch)."""
    n, dim = compiled.n, compiled.dim
    if compiled.kind == "chetaev":
        return n, 0
    if compiled.kind == "vakonomic":
        return n, dim - n - len(compiled.multiplier_names)
    return n, dim - n


def frame_rows(compiled, y, p, t: float = 0.0) -> np.ndarray:
    """The rows ``X_α = ∂q̇/∂v^α`` (m × n) of the chart of ``compiled`` at the state ``y``, read from the
    compiled map ``v ↦ q̇`` at ``v = 0, e_1, …, e_m`` (one vectorised call)."""
    start, m = velocity_block(compiled)
    Y = np.repeat(np.asarray(y, float)[:, None], m + 1, axis=1)
    Y[start:start + m, :] = np.hstack([np.zeros((m, 1)), np.eye(m)])
    with np.errstate(all="ignore"):
        U = compiled.natural_velocities(Y, p, t)
    return (U[:, 1:] - U[:, :1]).T


def frame_condition(compiled, y, p, t: float = 0.0) -> float:
    """The frame condition ``κ_X`` of the chart of ``compiled`` at the state ``y`` (module docstring): the
    larger condition number of the rows ``X_α = ∂q̇/∂v^α`` as they are and scaled to unit length."""
    if velocity_block(compiled)[1] == 0:
        return 1.0
    X = frame_rows(compiled, y, p, t)
    norms = np.linalg.norm(X, axis=1)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        return float("inf")
    return max(_condition(X / norms[:, None]), _condition(X))


@dataclass
class _MaggiChart:
    """One choice of dependent velocities: the compiled field and its two monitors."""

    dependent: tuple
    compiled: object
    mass: object  # compiled g(q, v, params, t) (row-major)
    args: tuple  # argument names of ``mass``
    m: int


@dataclass
class ChartAtlas:
    """The charts of Maggi's equations of a :class:`~anholo.system.System`, one per choice of dependent
    velocities, built (and compiled) when first needed; and the numerical constraint matrix ``κ(q)``
    that chooses among them (module docstring).

    Parameters
    ----------
    system : System
        Its nonholonomic field (constraints) or, without constraints, its Euler–Lagrange field in
        natural velocities (Maggi's equations with k = 0: ``W q̈ = F``).

    Examples
    --------
    >>> from anholo.system import System
    >>> atlas = ChartAtlas(System.load("vertical_rolling_disk"))
    >>> atlas.best([0.0, 0.0, 0.3, 0.0], {"R": 1.0})   # κ = [[1, 0, 0, −R cos θ], [0, 1, 0, −R sin θ]]
    ('x', 'y')
    """

    system: object
    _charts: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        sysm = self.system
        self.k = len(sysm.constraints) if sysm.has_constraints else 0
        if sysm.has_constraints and getattr(sysm, "is_time_dependent", False):
            self.unavailable = "the constraints depend on time"
        else:
            self.unavailable = ""
        self.names = tuple(q.name for q in sysm.chart.coordinates)
        self._kappa = None
        self._own = None

    # --- the system's own frame ------------------------------------------------------------------
    def own_frame(self):
        """The compiled nonholonomic field in the system's own adapted frame (``from_system(system,
        "nonholonomic")``: the frame a file or a user wrote, else the library's, which avoids the usual poles),
        built once; None without constraints, for a large system (whose own chart is Maggi's) or with holonomic
        constraints (kept by projection, no change of chart).  A run from a user's choice of dependent
        velocities goes on in it where that choice degenerates and it does not: the knife edge solved for ẏ
        (poles at θ = ±π/2) in ``cos θ ∂x + sin θ ∂y, ∂θ``.  (The library's frame of the constraints in the
        coordinate velocities was tried as a second candidate for frame-language systems whose own frame
        degenerates; on the held-out ones of the tests it was never better than Maggi's equations — the library
        clears such poles itself where it builds the frame — so it is not kept.)"""
        if self._own is None:
            self._own = False
            sysm = self.system
            if self.k and not self.unavailable and not getattr(sysm, "holonomic", ()):
                from ..dynamics.maggi import MaggiSystem
                from .compile import compile_system
                from .ode import from_system

                try:
                    ode = from_system(sysm, "nonholonomic")
                    if not isinstance(ode, MaggiSystem) and not getattr(ode, "holonomic", ()):
                        self._own = compile_system(ode)
                except AnholoError:
                    pass
        return self._own or None

    # --- the constraint matrix ---------------------------------------------------------------
    def _maggi(self, dependent):
        from ..dynamics.maggi import MaggiSystem

        s = self.system
        if self.k:
            return s.maggi(dependent=list(dependent))
        forces = s.forces.total if getattr(s, "forces", None) is not None else None
        return MaggiSystem(s.chart, s.lagrangian.natural_expr(), [], forces=forces,
                           time=getattr(s, "lagrangian_time", None), values=dict(s.values or {}), name=s.name)

    def kappa(self, q, params: dict, t: float = 0.0) -> np.ndarray:
        """``κ(q) = ∂φ/∂q̇`` at ``q`` (k × n)."""
        if self.k == 0:
            return np.zeros((0, len(self.names)))
        if self._kappa is None:
            base = self.system.maggi()
            kap = base._cache["kappa"]
            flat = [e for row in kap for e in row]
            args = sorted({x for e in flat for x in e.free_symbols}, key=str)
            self._kappa = ([str(a) for a in args], Program.from_expressions(args, flat).compile())
        names, f = self._kappa
        env = {**params, **dict(zip(self.names, (float(x) for x in q))), "t": float(t)}
        with np.errstate(all="ignore"):
            return np.array([complex(x).real for x in f(*[env[a] for a in names])]).reshape(self.k, -1)

    def best(self, q, params: dict, t: float = 0.0) -> tuple:
        """The dependent coordinates whose block of ``κ(q)`` is best conditioned: the largest smallest
        singular value ``σ_min(κ_P)`` among all choices when there are at most :data:`EXHAUSTIVE`, else
        the first k columns of QR with column pivoting (ties keep the later columns, Maggi's route's
        default)."""
        if self.k == 0:
            return ()
        K = self.kappa(q, params, t)
        n = K.shape[1]
        if math.comb(n, self.k) <= EXHAUSTIVE:  # few choices: the best of all (the last columns among equals)
            best, cols = None, None
            for choice in itertools.combinations(range(n), self.k):
                s = np.linalg.svd(K[:, list(choice)], compute_uv=False)
                if np.all(np.isfinite(s)) and (best is None or s[-1] >= best * (1 - 1e-12)):
                    best, cols = s[-1], choice
            if cols is not None:
                return tuple(self.names[c] for c in cols)
        rev = K[:, ::-1]  # prefer the last columns among equals
        _, _, piv = qr(rev, pivoting=True, mode="economic")
        cols = sorted(n - 1 - c for c in piv[:self.k])
        return tuple(self.names[c] for c in cols)

    def pivot_condition(self, dependent, q, params: dict, t: float = 0.0) -> float:
        """``‖κ(q)‖ / σ_min(κ_P(q))``: how badly the block of the dependent velocities is conditioned, relative
        to the whole constraint matrix (≥ 1; a 1 × 1 block counts too: ``|κ| / |κ_P|``)."""
        if self.k == 0:
            return 1.0
        K = self.kappa(q, params, t)
        if not np.all(np.isfinite(K)):
            return float("inf")
        s = np.linalg.svd(K[:, [self.names.index(d) for d in dependent]], compute_uv=False)
        top = np.linalg.norm(K, 2)
        return float(top / s[-1]) if s[-1] > 0 else float("inf")

    # --- the charts ----------------------------------------------------------------------------
    def chart(self, dependent) -> _MaggiChart:
        """The compiled chart of Maggi's equations for these dependent coordinates (built once)."""
        from .compile import compile_system

        dependent = tuple(dependent)
        if self.unavailable:
            raise SimulationError(f"no other chart: {self.unavailable}.")
        if dependent not in self._charts:
            try:
                nh = self._maggi(dependent)
                compiled = compile_system(nh)
            except AnholoError as exc:
                raise SimulationError(f"Maggi's equations for the dependent velocities of "
                                      f"{', '.join(dependent) or '(none)'} cannot be built: {exc}") from exc
            prog = nh.program()
            n, m = nh.n, nh.m
            mass = Program(prog.args, prog.pairs, prog.outputs[n:n + m * m]).pruned()
            self._charts[dependent] = _MaggiChart(dependent, compiled, mass.compile(),
                                                  tuple(str(a) for a in prog.args), m)
        return self._charts[dependent]

    def adopt(self, maggi, compiled) -> None:
        """Register a chart built elsewhere (the large-system route of ``from_system``): ``maggi`` a
        :class:`~anholo.dynamics.maggi.MaggiSystem`, ``compiled`` its compiled field."""
        dependent = tuple(c.name for c in maggi.dependent_coordinates)
        prog = maggi.program()
        n, m = maggi.n, maggi.m
        mass = Program(prog.args, prog.pairs, prog.outputs[n:n + m * m]).pruned()
        self._charts[dependent] = _MaggiChart(dependent, compiled, mass.compile(), tuple(str(a) for a in prog.args), m)

    def adopted(self, compiled):
        """The Maggi chart whose compiled field is ``compiled`` (registered by :meth:`adopt`), or None."""
        for chart in self._charts.values():
            if chart.compiled is compiled:
                return chart
        return None

    def mass_condition(self, chart: _MaggiChart, y, params: dict, t: float = 0.0) -> float:
        """``cond(g)`` of a Maggi chart at its state ``y = (q, v)``."""
        if chart.m == 0:
            return 1.0
        names = chart.compiled.state_names
        env = {**dict.fromkeys(chart.compiled.control_names, 0.0),  # g does not depend on the inputs
               **params, **dict(zip(names, (float(x) for x in y))), "t": float(t)}
        try:
            with np.errstate(all="ignore"):
                g = np.array([complex(x).real for x in chart.mass(*[env[a] for a in chart.args])])
        except (ZeroDivisionError, OverflowError, ValueError):
            return float("inf")
        return _condition(g.reshape(chart.m, chart.m))

    def candidates(self) -> list:
        """Every choice of k dependent coordinates (for tests and benchmarks)."""
        return [tuple(c) for c in itertools.combinations(self.names, self.k)]
