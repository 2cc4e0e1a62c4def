"""Write src/anholo/examples/rattleback.toml: the rattleback of Kane & Levinson (1982).

The model is built with sympy.physics.mechanics (``rattleback`` in tests/mechanics_models.py: a body
with an ellipsoidal bottom, the contact point from the ellipsoid's support function, the rolling
constraints as KanesMethod velocity constraints, its ten parameters symbolic) and read with
``anholo.from_mechanics`` in one call; the file keeps from_mechanics's Lagrangian and constraints as
they come (L = T − V and the two rolling constraints, with the square root of the support function),
with a description and Kane & Levinson's values.

Run from the repository root:  python tools/make_rattleback.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from anholo import from_mechanics  # noqa: E402
from mechanics_models import rattleback  # noqa: E402

DESCRIPTION = '''description = """
The rattleback (celt): a rigid body whose bottom is the ellipsoid \\
x^2/a^2 + y^2/b^2 + z^2/c^2 = 1 (body axes: x long, z up at rest), rolling \\
without slipping on a horizontal plane under gravity (Kane & Levinson 1982; \\
Garcia & Hubbard 1988). Its mass centre lies on the short axis at distance h \\
from the ellipsoid's centre, towards the bottom; its central inertia has \\
moments A, B, C about the ellipsoid's axes and the product D of the x and y \\
axes (principal axes turned about the vertical body axis by an angle delta, \\
tan(2 delta) = 2 D/(A - B)). yaw, roll, pitch are body-fixed z-x-y angles and \\
(x, y) is the contact point on the ground. With n the upward vertical in body \\
axes, the contact point is -(a^2 n1, b^2 n2, c^2 n3)/eps relative to the \\
centre, eps = sqrt(a^2 n1^2 + b^2 n2^2 + c^2 n3^2): the height of the mass \\
centre, eps - h n3, is a function of the orientation (no holonomic \\
constraint, no height coordinate), and the Lagrangian and the two rolling \\
constraints carry this square root. Built with sympy.physics.mechanics and \\
read by anholo.from_mechanics (tools/make_rattleback.py); values of Kane & \\
Levinson (1982) in SI units (D as in Autolev's rattleback sample problem). \\
L and the constraints exceed LARGE_SYSTEM tree nodes: the nonholonomic field \\
comes from Maggi's equations. Spun counterclockwise seen from above it starts \\
to rock and reverses its spin within seconds: anholo simulate rattleback \\
--q0=0,0.01,-0.01,0,0 --qdot0=5,0,0,0,0 --t-end 5 (yaw_dot < 0 from about \\
2.5 s); spun clockwise (--qdot0=-5,0,0,0,0) it keeps its spin for about \\
11 s (without dissipation it then reverses as well)."""'''


#: Appended to rattleback.toml: display units (anholo linearize shows them).
UNITS = '''
[units]
yaw_dot = "rad/s"
roll_dot = "rad/s"
pitch_dot = "rad/s"
roll = "rad"
pitch = "rad"'''


def main() -> None:
    KM, values = rattleback()
    model = from_mechanics(KM, values=values, name="Rattleback")
    out = []
    for line in model.to_toml().splitlines():
        if line.startswith("description ="):
            out.append(DESCRIPTION)
        else:
            out.append(line)
    out += UNITS.splitlines()
    path = ROOT / "src" / "anholo" / "examples" / "rattleback.toml"
    path.write_text("\n".join(out) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
