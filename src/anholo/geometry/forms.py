"""Differential forms in a frame, stored sparsely (docs/theory.rst, Frames on Q; docs/theory.rst, The tangent bundle in a frame; docs/theory.rst, Lagrangian dynamics in a frame).

A k-form is ``ω = Σ_{i1<…<ik} ω_I e^{i1} ∧ … ∧ e^{ik}`` in the coframe ``{e^a}``
dual to a frame ``{E_a}`` of the manifold; components are kept in a dict
``{sorted index tuple: expression}`` holding only nonzero entries.  The frame is
any object with the *basis protocol*:

* ``basis_size`` — number of frame fields;
* ``basis_derivative(a, f)`` — ``E_a(f)``;
* ``basis_structure(c, a, b)`` — ``C^c_ab`` with ``[E_a, E_b] = C^c_ab E_c``;
* ``basis_labels()`` — names of the coframe one-forms.

:class:`~anholo.geometry.frame.Frame` (coframe ``θ^i`` on Q) and
:class:`~anholo.geometry.tangent.TangentBundle` (lifted coframe ``θ^i, ψ^i`` on
TQ) implement it.

Conventions: ``(α ∧ β)(X, Y) = α(X) β(Y) − α(Y) β(X)`` (no ½), so
``ω_I = ω(E_{i1}, …, E_{ik})``; ``i_X ω = ω(X, ·, …)`` (for a 2-form with
antisymmetric matrix W, ``i_X ω = Wᵀ X``); the exterior derivative is computed
frame-wise from ``df = E_a(f) e^a`` and ``de^c = −½ C^c_ab e^a ∧ e^b``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Sequence

import sympy as sp

from ..algebra import vanishes
from ..algebra.printing import latex
from ..errors import AnholoError, ArgumentError, DimensionError
from ..parsing import as_argument, as_sequence, chart_names
from .vector_field import VectorField

__all__ = ["Form", "wedge", "exterior_derivative", "interior_product", "import_galgebra"]


def _sort_with_sign(indices: tuple) -> tuple[int, tuple | None]:
    """Sort an index tuple; return (sign of the permutation, sorted tuple) or (0, None) if repeated."""
    if len(set(indices)) != len(indices):
        return 0, None
    arr = list(indices)
    sign = 1
    for i in range(1, len(arr)):  # insertion sort counting transpositions
        j = i
        while j > 0 and arr[j - 1] > arr[j]:
            arr[j - 1], arr[j] = arr[j], arr[j - 1]
            sign = -sign
            j -= 1
    return sign, tuple(arr)


def _accumulate(out: dict, key: tuple, value) -> None:
    if value == 0:
        return
    if key in out:
        new = out[key] + value
        if new == 0:
            del out[key]
        else:
            out[key] = new
    else:
        out[key] = value


def _basis_names(basis) -> dict:
    """name -> symbol for the coordinates a form on ``basis`` (a Frame or a TangentBundle) may use."""
    chart = getattr(basis, "chart", None)
    if chart is None:
        return {}
    return chart_names(chart, getattr(basis, "quasi_velocities", None), getattr(basis, "extra", None))


class Form:
    """A differential k-form in the coframe of a frame (sparse, immutable).

    Build forms with :meth:`function`, :meth:`one_form`, :meth:`basis_one_form`
    or :meth:`from_components`; combine them with ``+``, ``-``, ``f * ω``,
    ``α ^ β`` (wedge), :meth:`interior` and :meth:`d`.

    Examples
    --------
    >>> import sympy as sp
    >>> from anholo import Chart, Frame
    >>> r, th = sp.symbols("r theta", positive=True)
    >>> F = Frame(Chart([r, th]), [[1, 0], [0, 1/r]])
    >>> theta2 = Form.basis_one_form(F, 1)     # θ^2 = r dθ
    >>> theta2.d().components                   # dθ^2 = (1/r) θ^1 ∧ θ^2
    mappingproxy({(0, 1): 1/r})
    """

    __slots__ = ("basis", "degree", "_components")

    def __init__(self, basis, degree: int, components: Mapping | None = None):
        self.basis = basis
        if isinstance(degree, bool) or not isinstance(degree, (int, sp.Integer)) or degree < 0:
            raise ArgumentError(f"a form's degree must be a nonnegative integer, got {degree!r}.")
        self.degree = int(degree)
        comps: dict = {}
        for key, val in (components or {}).items():
            if any(not isinstance(k, (int, sp.Integer)) or isinstance(k, bool) for k in key):
                raise DimensionError(f"form indices must be integers, got {key}.")
            key = tuple(int(k) for k in key)
            if len(key) != self.degree:
                raise DimensionError(f"a {self.degree}-form needs index tuples of length {self.degree}, got {key}.")
            if any(not 0 <= k < basis.basis_size for k in key):
                raise DimensionError(f"index {key} out of range 0..{basis.basis_size - 1}.")
            sign, skey = _sort_with_sign(key)
            if sign:
                _accumulate(comps, skey, sign * as_argument(val, lambda: _basis_names(basis), where=f"components[{key}]"))
        self._components = comps

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def from_components(cls, basis, degree: int, components: Mapping) -> "Form":
        """From ``{index tuple: coefficient}`` (tuples need not be sorted: signs are applied)."""
        return cls(basis, degree, components)

    @classmethod
    def function(cls, basis, f) -> "Form":
        """The 0-form f."""
        return cls(basis, 0, {(): f})

    @classmethod
    def one_form(cls, basis, coefficients: Sequence) -> "Form":
        """``Σ_a c_a e^a`` from a full component vector."""
        if len(coefficients) != basis.basis_size:
            raise DimensionError(f"need {basis.basis_size} coefficients, got {len(coefficients)}.")
        return cls(basis, 1, {(a,): c for a, c in enumerate(coefficients)})

    @classmethod
    def basis_one_form(cls, basis, a: int) -> "Form":
        """The coframe one-form ``e^a``."""
        return cls(basis, 1, {(a,): sp.S.One})

    @classmethod
    def from_matrix(cls, basis, W) -> "Form":
        """The 2-form with antisymmetric matrix ``W_ab = ω(E_a, E_b)``."""
        W = sp.Matrix(W)
        n = basis.basis_size
        if W.shape != (n, n):
            raise DimensionError(f"need a {n}×{n} matrix, got {W.shape}.")
        return cls(basis, 2, {(a, b): W[a, b] for a in range(n) for b in range(a + 1, n) if W[a, b] != 0})

    # --- data -----------------------------------------------------------------------------
    @property
    def components(self) -> Mapping:
        """Read-only ``{sorted index tuple: coefficient}`` of the nonzero components."""
        return MappingProxyType(self._components)

    def __getitem__(self, key) -> sp.Expr:
        sign, skey = _sort_with_sign(tuple(key) if not isinstance(key, int) else (key,))
        if not sign:
            return sp.S.Zero
        return sign * self._components.get(skey, sp.S.Zero)

    def as_vector(self) -> sp.Matrix:
        """Component column of a 1-form."""
        self._need_degree(1)
        return sp.Matrix([self._components.get((a,), sp.S.Zero) for a in range(self.basis.basis_size)])

    def as_matrix(self) -> sp.Matrix:
        """Antisymmetric matrix ``W_ab = ω(E_a, E_b)`` of a 2-form."""
        self._need_degree(2)
        n = self.basis.basis_size
        W = sp.zeros(n, n)
        for (a, b), val in self._components.items():
            W[a, b] = val
            W[b, a] = -val
        return W

    def _need_degree(self, k: int):
        if self.degree != k:
            raise DimensionError(f"this operation needs a {k}-form, got a {self.degree}-form.")

    def _check(self, other: "Form"):
        if not isinstance(other, Form) or other.basis is not self.basis:
            raise DimensionError("forms must be expressed in the same frame to be combined.")

    # --- algebra ---------------------------------------------------------------------------
    def __add__(self, other: "Form") -> "Form":
        self._check(other)
        if other.degree != self.degree:
            raise DimensionError(f"cannot add a {self.degree}-form and a {other.degree}-form.")
        out = dict(self._components)
        for k, v in other._components.items():
            _accumulate(out, k, v)
        return Form(self.basis, self.degree, out)

    def __neg__(self) -> "Form":
        return Form(self.basis, self.degree, {k: -v for k, v in self._components.items()})

    def __sub__(self, other: "Form") -> "Form":
        return self + (-other)

    def __rmul__(self, f) -> "Form":
        if isinstance(f, Form):
            return NotImplemented
        f = as_argument(f, lambda: _basis_names(self.basis), where="factor")
        return Form(self.basis, self.degree, {k: f * v for k, v in self._components.items()})

    def __mul__(self, f) -> "Form":
        if isinstance(f, Form):
            raise TypeError("use ^ or .wedge() for the exterior product of two forms.")
        return self.__rmul__(f)

    def wedge(self, other: "Form") -> "Form":
        """Exterior product ``self ∧ other``."""
        self._check(other)
        out: dict = {}
        for I, a in self._components.items():
            sI = set(I)
            for J, b in other._components.items():
                if sI.intersection(J):
                    continue
                sign, key = _sort_with_sign(I + J)
                _accumulate(out, key, sign * a * b)
        return Form(self.basis, self.degree + other.degree, out)

    __xor__ = wedge

    def interior(self, X) -> "Form":
        """Interior product ``i_X ω = ω(X, ·, …)``.

        X is a sequence of frame components ``X^a`` (w.r.t. the frame dual to the
        coframe), or a field object understood by the basis (a
        :class:`~anholo.geometry.vector_field.VectorField` for a Frame, a
        :class:`~anholo.geometry.tangent.TangentField` or SecondOrderField for a
        TangentBundle).
        """
        Xc = self._vector_components(X)
        if self.degree == 0:
            return Form(self.basis, 0, {})
        out: dict = {}
        for I, w in self._components.items():
            for r, idx in enumerate(I):
                x = Xc[idx]
                if x == 0:
                    continue
                _accumulate(out, I[:r] + I[r + 1:], (-1) ** r * x * w)
        return Form(self.basis, self.degree - 1, out)

    def _vector_components(self, X) -> tuple:
        # fields on TQ (anholo.geometry.tangent, a layer above this module) give their
        # components in the Hamel chart's basis; a SecondOrderField first becomes a TangentField
        if hasattr(X, "as_tangent_field"):
            X = X.as_tangent_field()
        if hasattr(X, "frame_components"):
            A, B, extra = X.frame_components()
            return tuple(A) + tuple(B) + tuple(extra)
        if isinstance(X, VectorField):
            if not hasattr(self.basis, "components_of"):
                raise DimensionError(
                    "a vector field on Q cannot be inserted into a form on TQ; lift it first "
                    "(TangentBundle.complete_lift or vertical_lift)."
                )
            return tuple(self.basis.components_of(X))
        X = tuple(as_argument(x, lambda: _basis_names(self.basis), where="X") for x in as_sequence(X, "X"))
        if len(X) != self.basis.basis_size:
            raise DimensionError(f"a vector needs {self.basis.basis_size} frame components, got {len(X)}.")
        return X

    def __call__(self, *vectors) -> sp.Expr:
        """Evaluate ``ω(X_1, …, X_k)``."""
        if len(vectors) != self.degree:
            raise DimensionError(f"a {self.degree}-form takes {self.degree} vectors, got {len(vectors)}.")
        form = self
        for X in vectors:
            form = form.interior(X)
        return form._components.get((), sp.S.Zero)

    # --- exterior derivative --------------------------------------------------------------
    def _basis_differentials(self) -> list:
        cache = getattr(self.basis, "_anholo_de_cache", None)
        if cache is None:
            n = self.basis.basis_size
            cache = []
            for c in range(n):
                comps = {}
                for a in range(n):
                    for b in range(a + 1, n):
                        C = self.basis.basis_structure(c, a, b)
                        if C != 0:
                            comps[(a, b)] = -C
                cache.append(comps)
            try:
                object.__setattr__(self.basis, "_anholo_de_cache", cache)
            except (AttributeError, TypeError):
                pass
        return cache

    def d(self) -> "Form":
        """Exterior derivative, frame-wise: ``d(f e^I) = E_a(f) e^a ∧ e^I + f d(e^I)``,
        ``de^c = −½ C^c_ab e^a ∧ e^b``."""
        n = self.basis.basis_size
        de = self._basis_differentials()
        out: dict = {}
        for I, w in self._components.items():
            sI = set(I)
            for a in range(n):
                if a in sI:
                    continue
                Ea_w = self.basis.basis_derivative(a, w)
                if Ea_w == 0:
                    continue
                sign, key = _sort_with_sign((a,) + I)
                _accumulate(out, key, sign * Ea_w)
            for r, c in enumerate(I):
                rest_before, rest_after = I[:r], I[r + 1:]
                for (a, b), C in de[c].items():
                    key_raw = rest_before + (a, b) + rest_after
                    sign, key = _sort_with_sign(key_raw)
                    if sign:
                        _accumulate(out, key, (-1) ** r * sign * w * C)
        return Form(self.basis, self.degree + 1, out)

    # --- presentation / export ------------------------------------------------------------
    def applyfunc(self, func) -> "Form":
        """Apply ``func`` to every coefficient (e.g. ``sympy.cancel``)."""
        return Form(self.basis, self.degree, {k: func(v) for k, v in self._components.items()})

    def is_zero(self) -> bool:
        """True if every coefficient vanishes identically (cancel, or numerically at random points)."""
        return all(vanishes(v) for v in self._components.values())

    def __str__(self):
        if not self._components:
            return "0"
        labels = self.basis.basis_labels()
        terms = []
        for I in sorted(self._components):
            name = "^".join(labels[i] for i in I)
            terms.append(f"({self._components[I]})" + (f"*{name}" if name else ""))
        return " + ".join(terms)

    def __repr__(self):
        return f"<{self.degree}-form with {len(self._components)} nonzero components: {self}>"

    def _repr_latex_(self):
        if not self._components:
            return "$0$"
        labels = self.basis.basis_labels()

        def tex(label):
            for base, cmd in (("theta", r"\theta"), ("psi", r"\psi")):
                if label.startswith(base) and label[len(base):].isdigit():
                    return f"{cmd}^{{{label[len(base):]}}}"
            return r"\mathrm{" + label + "}"

        terms = [
            rf"\left({latex(self._components[I])}\right)" + r" \wedge ".join(tex(labels[i]) for i in I)
            for I in sorted(self._components)
        ]
        return "$" + " + ".join(terms) + "$"

    def to_galgebra(self, ga=None):
        """Export as a galgebra multivector (extra ``anholo[ga]``).

        The coframe one-forms ``e^a`` are sent to the orthonormal basis vectors of a
        Euclidean geometric algebra of dimension ``basis_size`` (built if ``ga`` is
        not given); ``∧`` becomes the outer product ``^`` and ``i_X`` the left
        contraction ``X < ω``.  Meant for small dimensions (galgebra builds all
        ``2^N`` blades).  Returns ``(ga, multivector)``.
        """
        Ga = import_galgebra().Ga
        n = self.basis.basis_size
        if ga is None:
            ga = Ga(" ".join(f"e{a + 1}" for a in range(n)), g=[1] * n)
        vecs = ga.mv()
        out = ga.mv(0, "scalar")
        for I, w in self._components.items():
            blade = ga.mv(1, "scalar")
            for i in I:
                blade = blade ^ vecs[i]
            out = out + w * blade
        return ga, out


def import_galgebra():
    """Import and return ``galgebra.ga``, leaving sympy's printing as it was.

    On import, galgebra 0.6 replaces ``sympy.Basic.__repr__`` (and the matrix
    ``__repr__``) by its own printer, which drops the arguments of undefined
    functions (``A(x)`` prints as ``A``) for the rest of the session.  anholo
    restores the previous methods so that exporting a form does not change how
    every other expression prints.

    Raises
    ------
    AnholoError
        If galgebra is not installed.
    """
    import importlib
    import sys

    from sympy.core._print_helpers import Printable

    saved = [(cls, cls.__dict__.get("__repr__")) for cls in (Printable, sp.Basic, sp.matrices.MatrixBase)]
    first_import = "galgebra.ga" not in sys.modules
    try:
        module = importlib.import_module("galgebra.ga")
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise AnholoError(
            "galgebra is not installed; install the optional extra: pip install 'anholo[ga]'"
        ) from exc
    if first_import:
        for cls, method in saved:
            if method is None:
                if "__repr__" in cls.__dict__:
                    delattr(cls, "__repr__")
            else:
                setattr(cls, "__repr__", method)
    return module


def wedge(*forms: Form) -> Form:
    """``ω_1 ∧ ω_2 ∧ …``."""
    if not forms:
        raise DimensionError("wedge needs at least one form.")
    out = forms[0]
    for f in forms[1:]:
        out = out.wedge(f)
    return out


def exterior_derivative(form: Form) -> Form:
    """``dω`` (see :meth:`Form.d`)."""
    return form.d()


def interior_product(X, form: Form) -> Form:
    """``i_X ω`` (see :meth:`Form.interior`)."""
    return form.interior(X)
