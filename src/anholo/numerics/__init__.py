"""Numerics for the derived fields: compile, integrate, monitor, batch (issue 6).

* :mod:`~anholo.numerics.ode` — every field as a first-order system with its natural read-out;
* :mod:`~anholo.numerics.compile` — fast numerical functions (``sympy.cse``, parameters as values);
* :mod:`~anholo.numerics.integrate` — :func:`simulate` on :func:`scipy.integrate.solve_ivp`, :class:`Trajectory`;
* :mod:`~anholo.numerics.monitors` — energy, constraint residuals, momentum maps;
* :mod:`~anholo.numerics.batch` — many runs over initial states or parameter values, in processes or on Dask;
* :mod:`~anholo.numerics.sweep` — parameter sweeps tabulated to CSV/Parquet (``anholo sweep``).
"""

from .compile import CompiledSystem, compile_functions, compile_system
from .ode import (
    FIELDS,
    FirstOrderSystem,
    first_order_system,
    from_euler_lagrange,
    from_nonholonomic,
    from_vakonomic,
    from_system,
    regular_nonholonomic,
)
from .integrate import DEFAULT_ATOL, DEFAULT_METHOD, DEFAULT_RTOL, Trajectory, simulate

__all__ = [
    "FIELDS",
    "FirstOrderSystem",
    "first_order_system",
    "from_euler_lagrange",
    "from_nonholonomic",
    "from_vakonomic",
    "regular_nonholonomic",
    "from_system",
    "simulate",
    "Trajectory",
    "DEFAULT_METHOD",
    "DEFAULT_RTOL",
    "DEFAULT_ATOL",
    "CompiledSystem",
    "compile_system",
    "compile_functions",
]
