"""Many trajectories in one compiled loop: an adaptive Runge–Kutta integrator written in the generated C.

:func:`compiled_loop` gives, for a compiled field whose right-hand side comes from a straight-line
program (Maggi's route, or an exact-route field whose rates are converted to one), a
:class:`CompiledLoop`: C source made of

* the right-hand side ``f(t, y, p)`` and its vectorised kernel (:func:`anholo.algebra.codegen.c_source`
  with ``lanes``: every shared definition one vector of ``w`` doubles, ``w`` = 8 with AVX-512, else 4);
* with control inputs given as expressions (:mod:`anholo.numerics.inputs`), their definitions
  ``u_k = e_k(t, y, p)`` first — ``q̇`` in them written with the field's own expressions of the state — and
  the rates, written in the ``u_k``, after them: the inputs are evaluated in the kernel with the rates, lane by
  lane (an input given as a Python callable has no loop: one ``simulate`` per run);
* with holonomic constraints ``h(q, t) = 0``, ``h`` and its Jacobian ``J = ∂h/∂q`` generated from the same
  program by forward-mode differentiation (:meth:`~anholo.algebra.program.Program.derivatives`);
* the integrator: the explicit Runge–Kutta pair of Dormand & Prince of order 8(5,3) (``DOP853``; Hairer,
  Nørsett & Wanner (1993), §II.10), with the coefficients, the error norm
  ``‖err‖ = |h| ‖e₅‖² / sqrt(n (‖e₅‖² + 0.01 ‖e₃‖²))``, the initial step and the step-size control
  (``safety 0.9``, factors in ``[0.2, 10]``, exponent ``−1/8``) of :class:`scipy.integrate.DOP853`,
  and after every accepted step the standard projection onto ``h = 0`` (Hairer, Lubich & Wanner (2006),
  §IV.4): ``q ← q − Jᵀ (J Jᵀ)⁻¹ h(q, t)`` until ``max|h| ≤ 10⁻¹⁴ (1 + max|q|)``, the derivative then
  evaluated again at the projected state (as :mod:`anholo.numerics.projection` does for one run).

``w`` runs advance in lock-step, one per lane: in every pass each lane asks for one evaluation of the
right-hand side (a stage, the first derivative of a run, the derivative after a projection) and the
kernel evaluates all ``w`` at once; a lane whose run has finished takes the next run.  Each lane's
arithmetic is its own (step sizes, rejections and errors per run), and the kernel's lanes give the bits
of the scalar function, so a run gives the same numbers bit for bit whatever runs share its batch —
alone or among thousands, in any chunk, process or Dask worker.

Output times are hit exactly (a step that would pass the next output time is shortened to it, and the
step size proposed before the shortening is kept), so no interpolation is involved; the runs therefore
agree with :func:`~anholo.numerics.integrate.simulate`'s ``DOP853`` runs to the tolerance, not bit for bit.

Status of a run: 0 finished, 1 the projection did not converge, 2 the step size collapsed, 3 the state or
its derivative is not finite.
"""

from __future__ import annotations

import ctypes
import hashlib
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..algebra import codegen
from ..algebra.program import Program, c_float
from ..errors import SimulationError

__all__ = ["CompiledLoop", "compiled_loop", "loop_source", "register_program", "STATUS_TEXT", "lanes",
           "jacobian_function", "program_of", "JACOBIAN_LIMIT"]

#: Why a run of the compiled loop ended, by its status.
STATUS_TEXT = {0: "ok", 1: "the projection onto the holonomic constraints did not converge",
               2: "the step size collapsed", 3: "the state or its derivative became non-finite"}

_PROGRAMS: dict = {}  # digest of a CompiledSystem's source -> (program, groups, solve, holonomic program) in this process


def lanes() -> tuple:
    """``(w, flags)``: the lanes of the vectorised kernel and the compiler flags for them on this CPU."""
    flags = codegen.vector_flags()
    return (8 if "-mavx512f" in flags else 4), flags


def register_program(source: str, program: Program, groups: Sequence, solve, holonomic: Program | None,
                     n_coordinates: int) -> None:
    """Remember the program of a compiled right-hand side (by the digest of the compiled system's source),
    so that :func:`compiled_loop` can generate its loop later in this process."""
    _PROGRAMS[hashlib.sha256(source.encode()).hexdigest()] = (program, tuple(groups), solve, holonomic, n_coordinates)


def _coefficients() -> dict:
    from scipy.integrate._ivp import dop853_coefficients as d

    n = d.N_STAGES
    return {"C": d.C[:n], "A": d.A[:n, :n], "B": d.B, "E3": d.E3, "E5": d.E5, "n": n}


def _array(name: str, values) -> str:
    flat = np.asarray(values, float).ravel()
    dims = "".join(f"[{k}]" for k in np.shape(values))
    return f"static const double {name}{dims} = {{" + ", ".join(c_float(x) for x in flat) + "};"


_LOOP = r"""
#define NY %(ny)d
#define NP %(npar)d
#define NQ %(nq)d
#define NH %(nh)d
#define W %(w)d
#define NS %(ns)d
%(coeffs)s
enum { P_IDLE = 0, P_F0, P_F1, P_STAGE, P_FINAL, P_PROJ };
typedef struct {
    long run, iout, nfev, nstep; int phase, stage, rejected, clamped;
    double t, tnew, h, h_abs, h_prop, h0, d1, tp;
    double y[NY], f[NY], ynew[NY], pt[NY], sc[NY], K[NS + 1][NY];
} lane_t;

static double _rms(const double *x) { double s = 0.0; for (int i = 0; i < NY; ++i) s += x[i] * x[i]; return sqrt(s / NY); }
static int _finite(const double *x) { for (int i = 0; i < NY; ++i) if (!isfinite(x[i])) return 0; return 1; }

#if NH > 0
int anholo_hol(double t, const double *y, const double *p, double *out);
/* q <- q - J^T (J J^T)^-1 h(q, t) until max|h| <= 1e-14 (1 + max|q|); 0 converged, 1 not */
static int _project(double t, double *q, const double *p) {
    double scale = 0.0, out[NH + NH * NQ], G[NH * NH], r[NH], x[NH];
    for (int i = 0; i < NQ; ++i) if (fabs(q[i]) > scale) scale = fabs(q[i]);
    scale = 1.0 + scale;
    for (int it = 0; it < 20; ++it) {
        anholo_hol(t, q, p, out);
        double worst = 0.0;
        for (int a = 0; a < NH; ++a) { if (!(fabs(out[a]) <= worst)) worst = fabs(out[a]); }
        if (worst <= 1e-14 * scale) return 0;
        if (!isfinite(worst)) return 1;
        const double *J = out + NH;
        for (int a = 0; a < NH; ++a) {
            r[a] = out[a];
            for (int b = 0; b < NH; ++b) { double s = 0.0; for (int i = 0; i < NQ; ++i) s += J[a * NQ + i] * J[b * NQ + i]; G[a * NH + b] = s; }
        }
        if (_elim(NH, G, r, x)) return 1;
        for (int i = 0; i < NQ; ++i) { double s = 0.0; for (int a = 0; a < NH; ++a) s += J[a * NQ + i] * x[a]; q[i] -= s; }
    }
    return 1;
}
#endif

typedef struct {
    long N; const double *Y0, *P; long ps; double t0, t1; long nout; const double *tout; double rtol, atol, max_step;
    double *YOUT; long *NFEV, *NSTEP; int *STATUS; double *TEND;
} job_t;

static void _finish(lane_t *L, const job_t *J, int status) {
    J->STATUS[L->run] = status; J->NFEV[L->run] = L->nfev; J->NSTEP[L->run] = L->nstep; J->TEND[L->run] = L->t;
    for (long k = L->iout; k < J->nout; ++k) for (int i = 0; i < NY; ++i) J->YOUT[(L->run * J->nout + k) * NY + i] = NAN;
    L->phase = P_IDLE;
}

static void _record(lane_t *L, const job_t *J) {
    while (L->iout < J->nout && J->tout[L->iout] == L->t) {
        for (int i = 0; i < NY; ++i) J->YOUT[(L->run * J->nout + L->iout) * NY + i] = L->y[i];
        ++L->iout;
    }
}

static void _stage_point(lane_t *L, int s) {
    for (int i = 0; i < NY; ++i) { double d = 0.0; for (int j = 0; j < s; ++j) d += L->K[j][i] * A_[s][j]; L->pt[i] = L->y[i] + d * L->h; }
    L->tp = L->t + C_[s] * L->h;
    L->phase = P_STAGE; L->stage = s;
}

static void _try_step(lane_t *L, const job_t *J) {
    const double min_step = 10.0 * (nextafter(L->t, INFINITY) - L->t);
    if (L->h_abs < min_step) { _finish(L, J, 2); return; }
    double tb = J->t1;
    while (L->iout < J->nout && J->tout[L->iout] <= L->t) ++L->iout;
    if (L->iout < J->nout && J->tout[L->iout] < tb) tb = J->tout[L->iout];
    double t_new = L->t + L->h_abs;
    L->clamped = 0; L->h_prop = L->h_abs;
    if (t_new - tb > 0.0) { t_new = tb; L->clamped = (tb != J->t1); }
    L->tnew = t_new; L->h = t_new - L->t; L->h_abs = fabs(L->h);
    for (int i = 0; i < NY; ++i) L->K[0][i] = L->f[i];
    _stage_point(L, 1);
}

static void _begin_step(lane_t *L, const job_t *J) {
    const double min_step = 10.0 * (nextafter(L->t, INFINITY) - L->t);
    if (L->h_abs > J->max_step) L->h_abs = J->max_step;
    else if (L->h_abs < min_step) L->h_abs = min_step;
    L->rejected = 0;
    _try_step(L, J);
}

static void _start(lane_t *L, const job_t *J, long run) {
    L->run = run; L->iout = 0; L->nfev = 0; L->nstep = 0; L->t = J->t0;
    for (int i = 0; i < NY; ++i) L->y[i] = J->Y0[run * NY + i];
#if NH > 0
    if (_project(L->t, L->y, J->P + run * J->ps)) { _finish(L, J, 1); return; }
#endif
    if (!_finite(L->y)) { _finish(L, J, 3); return; }
    _record(L, J);
    for (int i = 0; i < NY; ++i) L->pt[i] = L->y[i];
    L->tp = L->t; L->phase = P_F0;
}

static void _accepted(lane_t *L, const job_t *J) {
    ++L->nstep;
    _record(L, J);
    if (L->t == J->t1) { _finish(L, J, 0); return; }
    _begin_step(L, J);
}

/* one evaluation of the right-hand side (res) for the lane's pending request */
static void _advance(lane_t *L, const job_t *J, const double *res) {
    ++L->nfev;
    const double interval = J->t1 - J->t0;
    switch (L->phase) {
    case P_F0: {  /* scipy's select_initial_step, first half */
        if (!_finite(res)) { _finish(L, J, 3); return; }
        for (int i = 0; i < NY; ++i) { L->f[i] = res[i]; L->sc[i] = J->atol + fabs(L->y[i]) * J->rtol; }
        double a[NY], b[NY];
        for (int i = 0; i < NY; ++i) { a[i] = L->y[i] / L->sc[i]; b[i] = L->f[i] / L->sc[i]; }
        const double d0 = _rms(a), d1 = _rms(b);
        double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
        if (h0 > interval) h0 = interval;
        L->h0 = h0; L->d1 = d1;
        for (int i = 0; i < NY; ++i) L->pt[i] = L->y[i] + h0 * L->f[i];
        L->tp = L->t + h0; L->phase = P_F1;
        return;
    }
    case P_F1: {
        double a[NY];
        for (int i = 0; i < NY; ++i) a[i] = (res[i] - L->f[i]) / L->sc[i];
        const double d2 = _rms(a) / L->h0, d1 = L->d1;
        double h1;
        if (d1 <= 1e-15 && d2 <= 1e-15) h1 = (1e-6 > L->h0 * 1e-3) ? 1e-6 : L->h0 * 1e-3;
        else h1 = pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / 8.0);
        double h = 100.0 * L->h0;
        if (h1 < h) h = h1;
        if (interval < h) h = interval;
        if (J->max_step < h) h = J->max_step;
        L->h_abs = h;
        _begin_step(L, J);
        return;
    }
    case P_STAGE: {
        for (int i = 0; i < NY; ++i) L->K[L->stage][i] = res[i];
        if (L->stage + 1 < NS) { _stage_point(L, L->stage + 1); return; }
        for (int i = 0; i < NY; ++i) { double d = 0.0; for (int j = 0; j < NS; ++j) d += L->K[j][i] * B_[j]; L->ynew[i] = L->y[i] + L->h * d; }
        for (int i = 0; i < NY; ++i) L->pt[i] = L->ynew[i];
        L->tp = L->t + L->h; L->phase = P_FINAL;
        return;
    }
    case P_FINAL: {
        for (int i = 0; i < NY; ++i) L->K[NS][i] = res[i];
        double e5 = 0.0, e3 = 0.0;
        for (int i = 0; i < NY; ++i) {
            const double sc = J->atol + fmax(fabs(L->y[i]), fabs(L->ynew[i])) * J->rtol;
            double a = 0.0, b = 0.0;
            for (int j = 0; j <= NS; ++j) { a += L->K[j][i] * E5_[j]; b += L->K[j][i] * E3_[j]; }
            a /= sc; b /= sc; e5 += a * a; e3 += b * b;
        }
        double err = (e5 == 0.0 && e3 == 0.0) ? 0.0 : fabs(L->h) * e5 / sqrt((e5 + 0.01 * e3) * NY);
        if (err < 1.0) {
            double factor = (err == 0.0) ? 10.0 : 0.9 * pow(err, -1.0 / 8.0);
            if (factor > 10.0) factor = 10.0;
            if (L->rejected && factor > 1.0) factor = 1.0;
            L->h_abs *= factor;
            if (L->clamped && L->h_prop > L->h_abs) L->h_abs = L->h_prop;  /* shortened to an output time */
            L->t = L->tnew;
            for (int i = 0; i < NY; ++i) { L->y[i] = L->ynew[i]; L->f[i] = res[i]; }
            if (!_finite(L->y) || !_finite(L->f)) { _finish(L, J, 3); return; }
#if NH > 0
            if (_project(L->t, L->y, J->P + L->run * J->ps)) { _finish(L, J, 1); return; }
            for (int i = 0; i < NY; ++i) L->pt[i] = L->y[i];
            L->tp = L->t; L->phase = P_PROJ;
            return;
#else
            _accepted(L, J);
            return;
#endif
        }
        double factor = 0.9 * pow(err, -1.0 / 8.0);
        if (!(factor > 0.2)) factor = 0.2;
        L->h_abs *= factor; L->rejected = 1;
        _try_step(L, J);
        return;
    }
    case P_PROJ:
        if (!_finite(res)) { _finish(L, J, 3); return; }
        for (int i = 0; i < NY; ++i) L->f[i] = res[i];
        _accepted(L, J);
        return;
    }
}

long anholo_loop(long N, const double *Y0, const double *P, long ps, double t0, double t1, long nout,
                 const double *tout, double rtol, double atol, double max_step, double *YOUT, long *NFEV,
                 long *NSTEP, int *STATUS, double *TEND) {
    job_t J = {N, Y0, P, ps, t0, t1, nout, tout, rtol, atol, max_step, YOUT, NFEV, NSTEP, STATUS, TEND};
    lane_t L[W];
    double tl[W], yl[W * NY], pl[W * (NP > 0 ? NP : 1)], ol[W * NY];
    long next = 0, passes = 0;
    for (int l = 0; l < W; ++l) L[l].phase = P_IDLE;
    for (;;) {
        int active = -1;
        for (int l = 0; l < W; ++l) {
            while (L[l].phase == P_IDLE && next < N) _start(&L[l], &J, next++);
            if (L[l].phase != P_IDLE && active < 0) active = l;
        }
        if (active < 0) break;
        for (int l = 0; l < W; ++l) {
            const lane_t *S = (L[l].phase != P_IDLE) ? &L[l] : &L[active];
            tl[l] = S->tp;
            for (int i = 0; i < NY; ++i) yl[l * NY + i] = S->pt[i];
            for (int i = 0; i < NP; ++i) pl[l * NP + i] = P[S->run * ps + i];
        }
        anholo_f_block(tl, yl, pl, ol);
        ++passes;
        for (int l = 0; l < W; ++l) if (L[l].phase != P_IDLE) _advance(&L[l], &J, ol + l * NY);
    }
    return passes;
}
"""


def loop_source(program: Program, groups: Sequence, solve, holonomic: Program | None, n_coordinates: int,
                w: int) -> str:
    """The C source of the compiled loop (module docstring): ``anholo_f`` with its ``w``-lane kernel,
    ``anholo_hol`` (``h`` and ``∂h/∂q``, row-major) if there are holonomic constraints, ``anholo_loop``."""
    gdict = {g: list(s) for g, s in groups}
    ny, npar = len(gdict.get("y", ())), len(gdict.get("p", ()))
    src = codegen.c_source(program, groups, solve, lanes=w)
    nh = 0
    if holonomic is not None and holonomic.outputs:
        nh = len(holonomic.outputs)
        q = gdict["y"][:n_coordinates]
        jac_prog, _ = holonomic.derivatives(q)
        hgroups = [("t", gdict.get("t", [])), ("y", q), ("p", gdict.get("p", []))]
        src += codegen.c_source(jac_prog, hgroups, None, name="anholo_hol", prelude=False)
    k = _coefficients()
    coeffs = "\n".join([_array("C_", k["C"]), _array("A_", k["A"]), _array("B_", k["B"]), _array("E3_", k["E3"]),
                        _array("E5_", k["E5"])])
    src += _LOOP % {"ny": ny, "npar": npar, "nq": n_coordinates, "nh": nh, "w": w, "ns": k["n"], "coeffs": coeffs}
    return src


@dataclass(frozen=True, eq=False)
class CompiledLoop:
    """The compiled loop of one field (:func:`compiled_loop`); pickles as its source (a worker loads the
    library from the cache).

    Attributes
    ----------
    source : str
        The C source.
    n_state, n_params : int
    flags : tuple of str
        Extra compiler flags (the vector instructions of this CPU).
    """

    source: str
    n_state: int
    n_params: int
    flags: tuple = ()
    _lib: object = field(default=None, repr=False)

    def __post_init__(self):
        # only the vector instructions this CPU has (a Dask worker may lack AVX-512): without them the same
        # source gives the same bits, the vectors split into narrower ones
        usable = set(codegen.vector_flags())
        lib = codegen.build_library(self.source, tuple(f for f in self.flags if f in usable))
        fn = lib.anholo_loop
        fn.restype = ctypes.c_long
        fn.argtypes = (ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_double,
                       ctypes.c_double, ctypes.c_long, ctypes.c_void_p, ctypes.c_double, ctypes.c_double,
                       ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                       ctypes.c_void_p)
        object.__setattr__(self, "_lib", lib)

    def __reduce__(self):
        return (CompiledLoop, (self.source, self.n_state, self.n_params, self.flags))

    def rhs_batch(self, Y, P, t=0.0) -> np.ndarray:
        """The right-hand side at many states at once: ``Y`` ``(N, n_state)``, ``P`` ``(n_params,)`` (shared) or
        ``(N, n_params)``; returns ``(N, n_state)`` (the vectorised kernel, the loop over states in C)."""
        Y = np.ascontiguousarray(Y, dtype=float)
        N = Y.shape[0]
        P = np.ascontiguousarray(P, dtype=float)
        ps = 0 if P.ndim == 1 else self.n_params
        P = P if P.size else np.zeros(1)
        T = np.ascontiguousarray(np.broadcast_to(np.asarray(t, float), (N,)) if np.ndim(t) else [float(t)])
        out = np.empty((N, self.n_state))
        fn = self._lib.anholo_f_batch
        fn.restype = ctypes.c_long
        fn.argtypes = (ctypes.c_long, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p,
                       ctypes.c_long, ctypes.c_void_p)
        fn(N, T.ctypes.data, 1 if np.ndim(t) else 0, Y.ctypes.data, P.ctypes.data, ps, out.ctypes.data)
        return out

    def run(self, Y0, P, t0: float, t1: float, t_out, *, rtol: float, atol: float,
            max_step: float = np.inf) -> dict:
        """Integrate ``N`` runs from the states ``Y0`` (``(N, n_state)``) with the parameter vectors ``P``
        (``(n_params,)`` for all, or ``(N, n_params)``) over ``[t0, t1]`` (``t1 > t0``), the states kept at the
        increasing times ``t_out`` (within ``[t0, t1]``).

        Returns ``{"y": (N, len(t_out), n_state), "nfev", "nstep", "status", "t_end": (N,), "passes"}`` (the
        outputs after a failure are ``nan``)."""
        Y0 = np.ascontiguousarray(Y0, dtype=float)
        N = Y0.shape[0]
        P = np.ascontiguousarray(P, dtype=float)
        ps = 0 if P.ndim == 1 else self.n_params
        P = P if P.size else np.zeros(1)
        tout = np.ascontiguousarray(t_out, dtype=float)
        if not (t1 > t0) or np.any(np.diff(tout) < 0) or (tout.size and (tout[0] < t0 or tout[-1] > t1)):
            raise SimulationError("the compiled loop integrates forward in time (t1 > t0) with increasing output "
                                  "times inside [t0, t1].")
        yout = np.empty((N, tout.size, self.n_state))
        nfev, nstep = np.zeros(N, dtype=np.int_), np.zeros(N, dtype=np.int_)
        status, t_end = np.zeros(N, dtype=np.intc), np.zeros(N)
        passes = self._lib.anholo_loop(N, Y0.ctypes.data, P.ctypes.data, ps, float(t0), float(t1), tout.size,
                                       tout.ctypes.data, float(rtol), float(atol), float(max_step), yout.ctypes.data,
                                       nfev.ctypes.data, nstep.ctypes.data, status.ctypes.data, t_end.ctypes.data)
        return {"y": yout, "nfev": nfev, "nstep": nstep, "status": status, "t_end": t_end, "passes": int(passes)}


_LOOPS: dict = {}
_JACOBIANS: dict = {}

#: Largest derivative program (definitions) whose Jacobian :func:`jacobian_function` generates by itself:
#: beyond it the build costs more than finite differences save (the Whipple bicycle's earlier program of
#: 1,463 definitions gave 7,151, a C build of about 230 s against 19 µs per Jacobian, docs/benchmarks.rst;
#: its program of 556 definitions is still over the bound).
JACOBIAN_LIMIT = 2000


def program_of(compiled):
    """``(program, groups, solve, holonomic program, n)`` of a compiled field's right-hand side in this
    process, or None."""
    entry = _PROGRAMS.get(hashlib.sha256(compiled.source.encode()).hexdigest())
    if entry is None and getattr(compiled, "ode", None) is not None and not getattr(compiled, "control_names", ()):
        entry = _exact_program(compiled)
    return entry


def jacobian_function(compiled, p, *, limit: int | None = JACOBIAN_LIMIT):
    """``jac(t, y) -> (n, n)``: the Jacobian of the compiled right-hand side at the parameter vector ``p``,
    generated from its program (:func:`anholo.algebra.codegen.generate_jacobian`), or None (no program in
    this process, or a derivative program of more than ``limit`` definitions: the solver's finite
    differences are then cheaper overall)."""
    entry = program_of(compiled)
    if entry is None:
        return None
    program, groups, solve, _, _ = entry
    key = (hashlib.sha256(compiled.source.encode()).hexdigest(), codegen.chosen_backend())
    if key not in _JACOBIANS:
        state = dict(groups)["y"]
        if limit is not None and len(program.pruned().pairs) * (1 + len(state) // 2) > limit:
            _JACOBIANS[key] = None  # a cheap bound on the derivative program's size
        else:
            try:
                _JACOBIANS[key] = codegen.generate_jacobian(program, groups, solve)
            except SimulationError:
                _JACOBIANS[key] = None
    f = _JACOBIANS[key]
    if f is None:
        return None
    g, n = f.bind(p), f.n_state

    def jac(t, y):
        return g(t, y)[n:].reshape(n, n)

    return jac


def compiled_loop(compiled, inputs=None) -> CompiledLoop | None:
    """The :class:`CompiledLoop` of a :class:`~anholo.numerics.compile.CompiledSystem`, or None where it has
    none: no C compiler, ``ANHOLO_CODEGEN=python``, control inputs not given as expressions, or a right-hand
    side that was not generated from a program in this process (a system compiled in another process: compile
    it here).

    ``inputs`` (a :class:`~anholo.numerics.inputs.ControlInputs` of expressions, for a system with control
    inputs): their definitions ``u_k = e_k(t, y, p)`` come first in the program, before the rates that use them
    (:func:`_exact_program`); one loop is kept per field and set of inputs."""
    if codegen.chosen_backend() == "python" or codegen.find_compiler() is None:
        return None
    controls = getattr(compiled, "control_names", ())
    if controls and (inputs is None or not inputs.compilable or compiled.ode is None):
        return None
    key = hashlib.sha256((compiled.source + (inputs.key if controls else "")).encode()).hexdigest()
    if key in _LOOPS:
        return _LOOPS[key]
    entry = _exact_program(compiled, inputs) if controls else program_of(compiled)
    if entry is None:
        return None
    program, groups, solve, hol, nq = entry
    w, flags = lanes()
    try:
        src = loop_source(program, groups, solve, hol, nq, w)
        loop = CompiledLoop(src, len(dict(groups)["y"]), len(dict(groups)["p"]), tuple(flags))
    except SimulationError:
        if codegen.chosen_backend() == "c":
            raise
        loop = None
    _LOOPS[key] = loop
    return loop


def _exact_program(compiled, inputs=None):
    """The program of an exact-route field's rates (``compiled.ode``), or None (natural velocities kept by
    projection need the velocity projection too, which the loop does not do).

    With control inputs ``u_k`` (``inputs``, expressions): the program begins with the definitions
    ``u_k = e_k(t, y, p)`` of :meth:`~anholo.numerics.inputs.ControlInputs.definitions` (their shared
    subexpressions first), and the rates, written in the ``u_k``, follow."""
    from ..algebra.engine import se, to_engine

    ode = compiled.ode
    if ode.inputs and inputs is None:
        return None
    natural = compiled.kind == "chetaev" or compiled.state_names[compiled.n:2 * compiled.n] == tuple(
        f"{c}_dot" for c in compiled.coordinate_names)
    if ode.holonomic and natural and compiled.kind != "euler-lagrange":
        return None
    defs = inputs.definitions(ode) if ode.inputs else []  # an input that does not fit this field: InputError
    try:
        rates = [to_engine(e) for e in ode.rates]
        time = [to_engine(ode.time)] if ode.time is not None else [se.Symbol("t")]
        state = [to_engine(s) for s in ode.state]
        params = [to_engine(p) for p in ode.parameters]
        args = time + state + params
        if ode.inputs:
            head = Program(tuple(args), (), ()).with_outputs(defs, prefix="in")
            used = {str(a) for a in args} | {str(a) for a, _ in head.pairs} | {
                str(s) for e in rates for s in e.free_symbols}
            fresh = []
            for k in range(len(ode.inputs)):
                name = f"input{k}"
                while name in used:
                    name = "_" + name
                used.add(name)
                fresh.append(se.Symbol(name))
            own = dict(zip((to_engine(u) for u in ode.inputs), fresh))
            head = Program(head.args, head.pairs + tuple(zip(fresh, head.outputs)), ())
            program = head.with_outputs([r.xreplace(own) for r in rates], prefix="r")
        else:
            program = Program.from_expressions(args, rates)
        # projected as simulate projects: not the Euler–Lagrange field (its motion ignores the constraints)
        hol = Program.from_expressions(args, [to_engine(h) for h in ode.holonomic]) \
            if ode.holonomic and compiled.kind != "euler-lagrange" else None
    except Exception:  # noqa: BLE001 - an expression symengine cannot take: the per-run route
        return None
    return program, (("t", time), ("y", state), ("p", params)), None, hol, compiled.n
