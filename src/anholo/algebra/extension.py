"""The CPython extension built with a generated C function: ``call(t, y, p, out)`` and ``bound(p, t, y)``.

:func:`anholo.algebra.codegen.generate` builds the C of a program into a shared library that is also a
CPython extension module, so that an integrator calls it without :mod:`ctypes`:

* ``call(t, y, p, out)`` (``METH_FASTCALL``): the arrays read through the buffer protocol, about a microsecond
  less per call than ctypes; it returns False for a state that is not a contiguous float64 array of the
  right length (the caller copies it then);
* ``bound(p, t, y)``, where numpy's C headers are found: the outputs in a new array allocated through numpy's
  C API, any state converted in C; :meth:`~anholo.algebra.codegen.GeneratedFunction.bind` returns
  ``functools.partial(bound, p)``, so a call has no Python frame and no copy.

Each form that fails to build on a machine is remembered in the code cache (a ``.failed`` marker) and the
next one is tried: without numpy's headers the wrapper without ``bound``, without Python's headers the plain
library (ctypes).
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess

import numpy as np

from ..errors import SimulationError

__all__ = ["build_with_extension", "python_include", "numpy_include"]


_EXT_WRAPPER = r"""
static PyObject *_anholo_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) { PyErr_SetString(PyExc_TypeError, "expected (t, y, p, out)"); return NULL; }
    const double t = PyFloat_AsDouble(args[0]);
    if (t == -1.0 && PyErr_Occurred()) return NULL;
    Py_buffer y, p, o;
    if (PyObject_GetBuffer(args[1], &y, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) { PyErr_Clear(); Py_RETURN_FALSE; }
    const char *f = y.format ? y.format : "B";
    const int is_double = (f[0] == 'd' && !f[1]) || ((f[0] == '@' || f[0] == '=' || f[0] == '<') && f[1] == 'd' && !f[2]);
    if (!is_double || y.itemsize != 8 || y.len != %(ny)d * 8) { PyBuffer_Release(&y); Py_RETURN_FALSE; }
    if (PyObject_GetBuffer(args[2], &p, PyBUF_C_CONTIGUOUS) < 0) { PyBuffer_Release(&y); return NULL; }
    if (PyObject_GetBuffer(args[3], &o, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&y); PyBuffer_Release(&p); return NULL;
    }
    anholo_f(t, (const double *)y.buf, (const double *)p.buf, (double *)o.buf);
    PyBuffer_Release(&y); PyBuffer_Release(&p); PyBuffer_Release(&o);
    Py_RETURN_TRUE;
}
%(bound)s
static PyMethodDef _anholo_methods[] = {{"call", (PyCFunction)(void (*)(void))_anholo_call, METH_FASTCALL, ""},
                                        %(bound_entry)s{NULL, NULL, 0, NULL}};
static struct PyModuleDef _anholo_module = {PyModuleDef_HEAD_INIT, "%(name)s", NULL, -1, _anholo_methods,
                                            NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit_%(name)s(void) { %(init)sreturn PyModule_Create(&_anholo_module); }
"""

#: ``bound(p, t, y)``: the outputs as a new numpy array (numpy's C API allocates it: no copy and no Python frame
#: per call; ``functools.partial(bound, p)`` is what :meth:`GeneratedFunction.bind` returns).
_EXT_BOUND = r"""
static PyObject *_anholo_bound(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "expected (p, t, y)"); return NULL; }
    if (!PyArray_Check(args[0]) || PyArray_TYPE((PyArrayObject *)args[0]) != NPY_DOUBLE
            || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[0])) {
        PyErr_SetString(PyExc_TypeError, "p must be a contiguous float64 array"); return NULL;
    }
    const double t = PyFloat_AsDouble(args[1]);
    if (t == -1.0 && PyErr_Occurred()) return NULL;
    PyArrayObject *y = (PyArrayObject *)args[2];
    if (PyArray_Check(args[2]) && PyArray_TYPE(y) == NPY_DOUBLE && PyArray_NDIM(y) == 1
            && PyArray_IS_C_CONTIGUOUS(y) && PyArray_ISALIGNED(y)) {
        Py_INCREF(y);  /* the integrators' state: read in place */
    } else {
        y = (PyArrayObject *)PyArray_FROMANY(args[2], NPY_DOUBLE, 1, 1, NPY_ARRAY_IN_ARRAY);
        if (y == NULL) return NULL;
    }
    if (PyArray_SIZE(y) != %(ny)d) {
        Py_DECREF(y);
        PyErr_Format(PyExc_ValueError, "the state has %%zd entries, the function takes %(ny)d", (Py_ssize_t)PyArray_SIZE(y));
        return NULL;
    }
    npy_intp dim = %(size)d;
    PyObject *out = PyArray_SimpleNew(1, &dim, NPY_DOUBLE);
    if (out != NULL)
        anholo_f(t, (const double *)PyArray_DATA(y), (const double *)PyArray_DATA((PyArrayObject *)args[0]),
                 (double *)PyArray_DATA((PyArrayObject *)out));
    Py_DECREF(y);
    return out;
}
"""


def python_include() -> str | None:
    """The directory of ``Python.h`` for this interpreter, or None (no development headers)."""
    import sysconfig

    inc = sysconfig.get_paths().get("include")
    return inc if inc and os.path.exists(os.path.join(inc, "Python.h")) else None


def numpy_include() -> str | None:
    """The directory of numpy's C headers, or None."""
    try:
        inc = np.get_include()
    except (AttributeError, OSError):
        return None
    return inc if os.path.exists(os.path.join(inc, "numpy", "arrayobject.h")) else None


def build_with_extension(c_src: str, compiler: str, n_state: int, size: int, build, cache) -> tuple:
    """``(library, call, bound)``: ``c_src`` built together with a CPython wrapper ``call(t, y, p, out)``
    (``METH_FASTCALL``, the arrays read through the buffer protocol: about a microsecond less per call than
    :mod:`ctypes`) and, where numpy's headers are found, ``bound(p, t, y)``, which returns the outputs in a new
    array (0.5 µs less per call than ``call`` and a copy: the Whipple bicycle's field 0.65 µs per call from
    Python against 0.50 µs in a C loop); the library usable by ctypes as well.  ``bound`` is None where the
    build with numpy's headers fails (the wrapper is built without it), ``(None, None, None)`` where Python's
    headers are missing or that build fails too (the plain library is built then).  ``build(source, compiler,
    flags)`` compiles a source into a loaded library (:mod:`anholo.algebra.codegen`'s, with its cache);
    ``cache`` is the directory of the failure markers."""
    inc = python_include()
    if inc is None or os.environ.get("ANHOLO_NO_EXTENSION"):
        return None, None, None
    np_inc = numpy_include() if size >= 1 else None
    for with_numpy in ((True, False) if np_inc else (False,)):
        tag = c_src + ("\x00numpy" if with_numpy else "")
        name = "anholo_ext_" + hashlib.sha256(tag.encode()).hexdigest()[:16]
        head = "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n"
        parts = {"ny": n_state, "name": name, "size": size, "bound": "", "bound_entry": "", "init": ""}
        flags = (f"-I{inc}",)
        if with_numpy:
            head += "#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION\n#include <numpy/arrayobject.h>\n"
            parts.update(bound=_EXT_BOUND % parts, init="import_array(); ",
                         bound_entry='{"bound", (PyCFunction)(void (*)(void))_anholo_bound, METH_FASTCALL, ""},\n'
                                     "                                        ")
            flags += (f"-I{np_inc}",)
        src = head + c_src + _EXT_WRAPPER % parts
        flags += (("-undefined", "dynamic_lookup") if platform.system() == "Darwin" else ())
        failed = cache / f"{name}_{hashlib.sha256(compiler.encode()).hexdigest()[:8]}.failed"
        if failed.exists():  # tried before on this machine: the next form (no second failing build)
            continue
        try:
            lib = build(src, compiler, flags)
            import importlib.machinery
            import importlib.util

            loader = importlib.machinery.ExtensionFileLoader(name, lib._name)
            spec = importlib.util.spec_from_file_location(name, lib._name, loader=loader)
            mod = importlib.util.module_from_spec(spec)
            loader.exec_module(mod)
            return lib, mod.call, getattr(mod, "bound", None)
        except (OSError, ImportError, subprocess.SubprocessError, SimulationError):
            try:
                failed.touch()
            except OSError:
                pass
    return None, None, None
