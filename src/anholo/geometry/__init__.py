"""Geometry on Q and TQ: charts, vector fields, frames, forms, the Hamel chart and its lifts, Lie group actions.

See docs/theory.rst, "Frames on Q" and "TQ in a frame".
"""

from .chart import Chart, velocity_symbol
from .distribution import Flag, flag_of
from .forms import Form, exterior_derivative, interior_product, wedge
from .frame import Frame
from .tangent import SecondOrderField, TangentBundle, TangentField
from .vector_field import VectorField

__all__ = [
    "Chart",
    "velocity_symbol",
    "VectorField",
    "Frame",
    "Flag",
    "flag_of",
    "TangentBundle",
    "TangentField",
    "SecondOrderField",
    "Form",
    "wedge",
    "exterior_derivative",
    "interior_product",
]
