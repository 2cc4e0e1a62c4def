"""Write src/anholo/examples/whipple_bicycle.toml (and whipple_bicycle_pitch_rate.toml): the Whipple bicycle
of sympy's test_kane3.py.

The model is built with sympy.physics.mechanics exactly as sympy's test builds it (the benchmark
bicycle of Meijaard, Papadopoulos, Ruina & Schwab (2007), its 27 parameters symbolic) and read with
``anholo.from_mechanics`` in one call; the coordinates are renamed after their meaning and ordered
so that the free velocities are the lean, steer and rear-wheel rates (Kane's independent speeds).

The second file writes the same bicycle another way: the holonomic constraint (the front wheel touches
the ground) replaced by its time derivative, computed by sympy.physics.mechanics
(``(WF_cont.pos_from(WR_cont) & Y.z).diff(t)``, with the square root of the contact geometry explicit)
among the velocity constraints, and no ``[values]`` (every parameter symbolic).

Run from the repository root:  python tools/make_whipple_bicycle.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from anholo import from_mechanics  # noqa: E402
from mechanics_models import whipple_bicycle  # noqa: E402

NAMES = {"q1": "yaw", "q2": "lean", "q4": "pitch", "q5": "steer", "q3": "rear_wheel", "q6": "front_wheel"}
ORDER = ["lean", "steer", "rear_wheel", "yaw", "pitch", "front_wheel", "x", "y"]

DESCRIPTION = '''description = """
The Whipple bicycle: rear frame with rider, front fork with handlebar, and two \\
knife-edge wheels rolling without slipping on level ground (Whipple 1899); the \\
benchmark bicycle of Meijaard, Papadopoulos, Ruina & Schwab (2007), built as in \\
sympy's test_kane3.py (its 27 parameters symbolic, the benchmark values below) \\
and read by anholo.from_mechanics in one call (tools/make_whipple_bicycle.py). \\
(x, y) is the rear contact point, yaw the heading, lean the roll angle, pitch \\
the frame pitch (tied to lean and steer by the holonomic constraint that the \\
front wheel touches the ground), steer the steering angle, rear_wheel and \\
front_wheel the wheel rotations relative to frame and fork. Rolling gives five \\
velocity constraints (two at the rear contact, three at the front contact, one \\
of them the derivative of the holonomic constraint): D has rank 3, with the \\
lean, steer and rear-wheel rates free. Upright straight running at speed v \\
(rear_wheel rate v/WRrad) is stable between the weave speed 4.292 m/s and the \\
capsize speed 6.024 m/s (Meijaard et al. 2007): try \\
anholo linearize whipple_bicycle --states lean,steer,v1,v2 --sweep v3=0:33.33:21."""'''


DESCRIPTION_PITCH_RATE = '''description = """
The Whipple bicycle of whipple_bicycle written another way: the holonomic \
constraint (the front wheel touches the ground) is not given under holonomic \
but replaced by its time derivative, computed by sympy.physics.mechanics (the \
height of the front contact above the rear one differentiated in time, its \
square root explicit), among the velocity constraints; the pitch is an \
independent coordinate, and the field is the same as whipple_bicycle's on the \
surface where the front wheel touches the ground (anholo keeps no holonomic \
constraint here, so simulations do not project onto it). There is no [values] \
table: the 27 parameters are symbolic (give them with --set NAME=VALUE for \
numerics, e.g. the benchmark values of whipple_bicycle). Built by \
tools/make_whipple_bicycle.py from sympy's test_kane3.py KanesMethod with the \
pitch-rate constraint (Meijaard, Papadopoulos, Ruina & Schwab 2007). \
D has rank 3, with the lean, steer and rear-wheel rates free."""'''


#: The units of the 27 parameters (both files).
PARAMETER_UNITS = """
Ifork11 = "kg*m^2"
Ifork22 = "kg*m^2"
Ifork31 = "kg*m^2"
Ifork33 = "kg*m^2"
Iframe11 = "kg*m^2"
Iframe22 = "kg*m^2"
Iframe31 = "kg*m^2"
Iframe33 = "kg*m^2"
Iwf11 = "kg*m^2"
Iwf22 = "kg*m^2"
Iwr11 = "kg*m^2"
Iwr22 = "kg*m^2"
WFrad = "m"
WRrad = "m"
forkcg1 = "m"
forkcg3 = "m"
forklength = "m"
forkoffset = "m"
framecg1 = "m"
framecg3 = "m"
framelength = "m"
g = "m/s^2"
htangle = "rad"
mfork = "kg"
mframe = "kg"
mwf = "kg"
mwr = "kg"
"""

#: Appended to whipple_bicycle.toml: the forward speed of the rear contact (for anholo linearize --at/--sweep)
#: and the units of the coordinates, velocities, parameters and time.
TABLES = '''
[quantities]
speed = "x_dot*cos(yaw) + y_dot*sin(yaw)"

[units]
speed = "m/s"
lean = "rad"
steer = "rad"
lean_dot = "rad/s"
steer_dot = "rad/s"
rear_wheel_dot = "rad/s"
yaw_dot = "rad/s"
t = "s"
x = "m"
y = "m"
yaw = "rad"
pitch = "rad"
rear_wheel = "rad"
front_wheel = "rad"''' + PARAMETER_UNITS.rstrip("\n")

#: Appended to whipple_bicycle_pitch_rate.toml: the units.
TABLES_PITCH_RATE = '''
[units]
t = "s"
lean = "rad"
steer = "rad"
rear_wheel = "rad"
yaw = "rad"
pitch = "rad"
front_wheel = "rad"
x = "m"
y = "m"''' + PARAMETER_UNITS.rstrip("\n")


def write(name: str, title: str, description: str, pitch_rate: bool) -> None:
    KM, values = whipple_bicycle(pitch_rate=pitch_rate)
    model = from_mechanics(KM, values=values)
    text = model.to_toml()
    if pitch_rate:
        text = text.split("[values]")[0].rstrip() + "\n"
    for old, new in NAMES.items():
        text = re.sub(rf"\b{old}(_dot)?\b", lambda m, new=new: new + (m.group(1) or ""), text)
    lines = text.splitlines()
    out = []
    for line in lines:
        if line.startswith("name ="):
            out.append(f'name = "{title}"')
        elif line.startswith("description ="):
            out.append(description)
        elif line.startswith("coordinates ="):
            out.append("coordinates = [" + ", ".join(f'"{c}"' for c in ORDER) + "]")
        else:
            out.append(line)
    out += ["", *(TABLES_PITCH_RATE if pitch_rate else TABLES).splitlines()]
    path = ROOT / "src" / "anholo" / "examples" / f"{name}.toml"
    path.write_text("\n".join(out) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def main() -> None:
    write("whipple_bicycle", "Whipple bicycle", DESCRIPTION, pitch_rate=False)
    write("whipple_bicycle_pitch_rate", "Whipple bicycle (pitch-rate constraint)", DESCRIPTION_PITCH_RATE,
          pitch_rate=True)


if __name__ == "__main__":
    main()
