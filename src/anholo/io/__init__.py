"""Input: safe expression parsing and TOML system files.

>>> from anholo.io import parse_system
>>> spec = parse_system('name = "P"\\ncoordinates = ["x"]\\nlagrangian = "x_dot^2/2"')
>>> spec.lagrangian
x_dot**2/2
"""

from anholo.parsing import CONSTANTS, STANDARD_FUNCTIONS, parse_expression
from anholo.io.systemfile import KNOWN_FIELDS, SystemSpec, load_system_file, parse_system

__all__ = [
    "parse_expression",
    "STANDARD_FUNCTIONS",
    "CONSTANTS",
    "KNOWN_FIELDS",
    "SystemSpec",
    "parse_system",
    "load_system_file",
]
