"""The generated source of a large system's field, kept in the code cache (anholo.numerics.maggi_compile).

A second process (here: a second MaggiSystem of the same file) reads the source and the field's program back
instead of forming them; what it computes is the same, bit for bit, as what the formed source computes; a
different system, a damaged entry or a cache without the entry form the source again."""

from __future__ import annotations

import numpy as np
import pytest

import anholo.numerics.maggi_compile as mc
from anholo.numerics import compile_system
from anholo.numerics import batch_loop
from anholo.system import System


def _rhs_values(compiled, states):
    rhs = compiled.rhs(compiled.parameter_vector())
    return np.array([rhs(0.0, y) for y in states])


def _states(compiled, seed=4, count=5):
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.4, 0.4, size=(count, len(compiled.state_names)))


def test_second_system_reads_the_stored_source(tmp_path, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    first = compile_system(System.load("n_trailer_3").maggi())
    assert len(list(tmp_path.glob("maggi-source-*.json"))) == 1
    states = _states(first)
    expected = _rhs_values(first, states)

    def fail(*args, **kwargs):
        raise AssertionError("formed again")

    monkeypatch.setattr(mc, "_form_source", fail)
    ms = System.load("n_trailer_3").maggi()
    second = compile_system(ms)
    assert second.source == first.source
    assert second.state_names == first.state_names and second.parameters == first.parameters
    assert np.array_equal(_rhs_values(second, states), expected)
    # the implicit form's cse (what forming the program needs) was never computed
    assert "_base" not in ms.__dict__
    # the program is registered for the compiled loop of many runs
    import hashlib

    assert hashlib.sha256(second.source.encode()).hexdigest() in batch_loop._PROGRAMS
    # another system is not this entry
    with pytest.raises(AssertionError, match="formed again"):
        compile_system(System.load("n_trailer_1").maggi())


def test_damaged_entry_is_formed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    first = compile_system(System.load("n_trailer_1").maggi())
    (entry,) = tmp_path.glob("maggi-source-*.json")
    entry.write_text("{not json")
    again = compile_system(System.load("n_trailer_1").maggi())
    assert again.source == first.source
    states = _states(first, seed=7)
    assert np.array_equal(_rhs_values(again, states), _rhs_values(first, states))
    assert entry.read_text().startswith("{\"source\"")  # written again, whole
