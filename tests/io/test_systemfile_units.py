"""The system file's ``[quantities]`` and ``[units]`` tables: read, validated, substituted."""

from __future__ import annotations

import pytest
import sympy as sp

from anholo.errors import SystemFileError, UnknownSymbolError
from anholo.io import parse_system

BASE = '''
name = "Wheel"
coordinates = ["phi", "x"]
parameters = ["r"]
lagrangian = "x_dot^2/2 + phi_dot^2/2"
constraints = ["x_dot - r*phi_dot"]
'''


def test_quantities_and_units_are_read():
    spec = parse_system(BASE + '[quantities]\nspeed = "r*phi_dot"\n[units]\nspeed = "m/s"\nphi_dot = "rad/s"\nr = "m"\n')
    r, phi_dot = sp.Symbol("r", positive=True), sp.Symbol("phi_dot", real=True)
    assert sp.simplify(spec.quantities["speed"] - r * phi_dot) == 0
    assert spec.units == {"speed": "m/s", "phi_dot": "rad/s", "r": "m"}
    sub = spec.substitute({"r": 2})
    assert sub.quantities["speed"] == 2 * phi_dot
    assert spec.to_dict()["units"]["speed"] == "m/s"


@pytest.mark.parametrize("table, message", [
    ('[units]\nspeed = "m/s"\n', "units.speed: 'speed' is not a name"),
    ('[units]\nx = ""\n', "units.x: expected a unit"),
    ('[units]\nx = 3\n', "units.x: expected a unit"),
    ('[quantities]\nx = "r*phi_dot"\n', "quantities.x: 'x' is already a name"),
    ('[quantities]\nspeed = ["r"]\n', "quantities.speed: expected an expression"),
    ('units = "m"\n', "units: expected a table"),
])
def test_bad_tables_are_refused_with_the_field(table, message):
    with pytest.raises(SystemFileError, match=message.replace("[", r"\[")):
        parse_system(BASE + table)


def test_quantity_with_an_unknown_name_is_refused():
    with pytest.raises(UnknownSymbolError):
        parse_system(BASE + '[quantities]\nspeed = "R*phi_dot"\n')
