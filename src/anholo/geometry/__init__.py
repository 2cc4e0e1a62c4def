"""Geometry on Q and TQ: charts, vector fields, frames, lifts, forms (THEORY §1–2)."""

from .chart import Chart, velocity_symbol
from .constraints import LinearConstraints
from .forms import Form, exterior_derivative, interior_product, wedge
from .frame import Frame
from .tangent import SecondOrderField, TangentBundle, TangentField
from .vector_field import VectorField

__all__ = [
    "Chart",
    "velocity_symbol",
    "VectorField",
    "Frame",
    "LinearConstraints",
    "TangentBundle",
    "TangentField",
    "SecondOrderField",
    "Form",
    "wedge",
    "exterior_derivative",
    "interior_product",
]
