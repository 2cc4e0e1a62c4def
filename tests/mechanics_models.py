"""Models of sympy's own tests, built exactly as sympy builds them (no anholo code here).

* :func:`rolling_disc` — ``test_rolling_disc`` of sympy/physics/mechanics/tests/test_kane.py
  (contact point at rest, body rates as speeds, no contact coordinates).
* :func:`rolling_disc_contact` — ``_create_rolling_disc`` of test_kane5.py (contact point
  coordinates, dependent speeds, nonholonomic constraints).
* :func:`whipple_bicycle` — ``test_bicycle`` of test_kane3.py (Meijaard et al. (2007) benchmark
  geometry; wheel angles and rear contact position not introduced) with the paper's values.
* :func:`rattleback` — Kane & Levinson's (1982) rattleback (ellipsoidal bottom, rolling constraints as
  velocity constraints, contact point from the ellipsoid's support function) with their values.
* :func:`incline_disc` — ``test_disc_on_an_incline_plane`` of test_lagrange.py (a LagrangesMethod with a
  holonomic rolling constraint).
* :func:`nonminimal_pendulum_lagrange` — ``test_nonminimal_pendulum`` of test_lagrange.py (holonomic, a force).
* :func:`lagrange_sleigh` — the Chaplygin sleigh as a LagrangesMethod (a nonholonomic knife edge, a damping
  torque in its forcelist), written here as a sympy user would.

Each returns ``(KanesMethod after kanes_equations, parameter values)`` (``LagrangesMethod after
form_lagranges_equations`` for the last three).
"""

from __future__ import annotations

import sympy as sp
from sympy import acos, cos, pi, sin, sqrt, symbols
from sympy.physics.mechanics import (KanesMethod, LagrangesMethod, Lagrangian, Particle, Point, ReferenceFrame,
                                     RigidBody, cross, dot, dynamicsymbols, inertia)


def rolling_disc(motor=False):
    """With ``motor=True``, also a torque ``Tm L.y`` on the disc and a drag ``−c v`` at its centre."""
    q1, q2, q3, u1, u2, u3 = dynamicsymbols('q1 q2 q3 u1 u2 u3')
    r, m, g = symbols('r m g')
    N = ReferenceFrame('N')
    Y = N.orientnew('Y', 'Axis', [q1, N.z])
    L = Y.orientnew('L', 'Axis', [q2, Y.x])
    R = L.orientnew('R', 'Axis', [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = Point('C')
    C.set_vel(N, 0)
    Dmc = C.locatenew('Dmc', r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L]
    ForceList = [(Dmc, - m * g * Y.z)]
    values = {r: 0.26, m: 3.43, g: 9.81}
    if motor:
        Tm, c = symbols('Tm c')
        ForceList += [(R, Tm * L.y), (Dmc, -c * Dmc.vel(N))]
        values.update({Tm: 0.7, c: 0.4})
    BodyD = RigidBody('BodyD', Dmc, R, m, (I, Dmc))
    KM = KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    KM.kanes_equations([BodyD], ForceList)
    return KM, values


def rolling_disc_contact():
    t = dynamicsymbols._t
    q1, q2, q3, q4, q5, u1, u2, u3, u4, u5 = dynamicsymbols('q1:6 u1:6')
    g, r, m = symbols('g r m')
    ground = RigidBody('ground')
    disc = RigidBody('disk', mass=m)
    disc.inertia = (m * r ** 2 / 4 * inertia(disc.frame, 1, 2, 1), disc.masscenter)
    ground.masscenter.set_vel(ground.frame, 0)
    disc.masscenter.set_vel(disc.frame, 0)
    int_frame = ReferenceFrame('int_frame')
    int_frame.orient_body_fixed(ground.frame, (q1, q2, 0), 'zxy')
    disc.frame.orient_axis(int_frame, int_frame.y, q3)
    g_w_d = disc.frame.ang_vel_in(ground.frame)
    disc.frame.set_ang_vel(ground.frame, u1 * disc.x + u2 * disc.y + u3 * disc.z)
    cp = ground.masscenter.locatenew('contact_point', q4 * ground.x + q5 * ground.y)
    cp.set_vel(ground.frame, u4 * ground.x + u5 * ground.y)
    disc.masscenter.set_pos(cp, r * int_frame.z)
    disc.masscenter.set_vel(ground.frame, cross(disc.frame.ang_vel_in(ground.frame), disc.masscenter.pos_from(cp)))
    kdes = [g_w_d.dot(disc.x) - u1, g_w_d.dot(disc.y) - u2, g_w_d.dot(disc.z) - u3, q4.diff(t) - u4,
            q5.diff(t) - u5]
    v0 = cp.vel(ground.frame) + cross(disc.frame.ang_vel_in(int_frame), cp.pos_from(disc.masscenter))
    fnh = [v0.dot(ground.x), v0.dot(ground.y)]
    loads = [(disc.masscenter, -disc.mass * g * ground.z)]
    KM = KanesMethod(ground.frame, [q1, q2, q3, q4, q5], [u1, u2, u3], kdes, u_dependent=[u4, u5],
                     velocity_constraints=fnh, bodies=[disc], forcelist=loads, explicit_kinematics=False,
                     constraint_solver='LU')
    KM.kanes_equations()
    return KM, {g: 9.81, r: 0.26, m: 3.43}


def whipple_bicycle(steer_torque=False, pitch_rate=False):
    """sympy's test_kane3.py bicycle; with ``steer_torque`` (an addition of ours) a torque ``T`` of the
    frame on the fork about the steering axis ``Frame.x`` (and its reaction on the frame), ``T = 0.7``.
    With ``pitch_rate`` (also ours) the configuration constraint (the front contact on the ground,
    ``WF_cont.pos_from(WR_cont) & Y.z = 0``) is replaced by its time derivative among the velocity
    constraints (instead of the vertical velocity of the front contact), the pitch ``q4`` independent."""
    q1, q2, q4, q5 = dynamicsymbols('q1 q2 q4 q5')
    q1d, q2d, q4d, q5d = dynamicsymbols('q1 q2 q4 q5', 1)
    u1, u2, u3, u4, u5, u6 = dynamicsymbols('u1 u2 u3 u4 u5 u6')
    WFrad, WRrad, htangle, forkoffset = symbols('WFrad WRrad htangle forkoffset')
    forklength, framelength, forkcg1 = symbols('forklength framelength forkcg1')
    forkcg3, framecg1, framecg3, Iwr11 = symbols('forkcg3 framecg1 framecg3 Iwr11')
    Iwr22, Iwf11, Iwf22, Iframe11 = symbols('Iwr22 Iwf11 Iwf22 Iframe11')
    Iframe22, Iframe33, Iframe31, Ifork11 = symbols('Iframe22 Iframe33 Iframe31 Ifork11')
    Ifork22, Ifork33, Ifork31, g = symbols('Ifork22 Ifork33 Ifork31 g')
    mframe, mfork, mwf, mwr = symbols('mframe mfork mwf mwr')
    N = ReferenceFrame('N')
    Y = N.orientnew('Y', 'Axis', [q1, N.z])
    R = Y.orientnew('R', 'Axis', [q2, Y.x])
    Frame = R.orientnew('Frame', 'Axis', [q4 + htangle, R.y])
    WR = ReferenceFrame('WR')
    TempFrame = Frame.orientnew('TempFrame', 'Axis', [-htangle, Frame.y])
    Fork = Frame.orientnew('Fork', 'Axis', [q5, Frame.x])
    TempFork = Fork.orientnew('TempFork', 'Axis', [-htangle, Fork.y])
    WF = ReferenceFrame('WF')
    WR_cont = Point('WR_cont')
    WR_mc = WR_cont.locatenew('WR_mc', WRrad * R.z)
    Steer = WR_mc.locatenew('Steer', framelength * Frame.z)
    Frame_mc = WR_mc.locatenew('Frame_mc', - framecg1 * Frame.x + framecg3 * Frame.z)
    Fork_mc = Steer.locatenew('Fork_mc', - forkcg1 * Fork.x + forkcg3 * Fork.z)
    WF_mc = Steer.locatenew('WF_mc', forklength * Fork.x + forkoffset * Fork.z)
    WF_cont = WF_mc.locatenew('WF_cont', WFrad * (dot(Fork.y, Y.z) * Fork.y - Y.z).normalize())
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)
    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)
    Frame_I = (inertia(TempFrame, Iframe11, Iframe22, Iframe33, 0, 0, Iframe31), Frame_mc)
    Fork_I = (inertia(TempFork, Ifork11, Ifork22, Ifork33, 0, 0, Ifork31), Fork_mc)
    WR_I = (inertia(Frame, Iwr11, Iwr22, Iwr11), WR_mc)
    WF_I = (inertia(Fork, Iwf11, Iwf22, Iwf11), WF_mc)
    BodyFrame = RigidBody('BodyFrame', Frame_mc, Frame, mframe, Frame_I)
    BodyFork = RigidBody('BodyFork', Fork_mc, Fork, mfork, Fork_I)
    BodyWR = RigidBody('BodyWR', WR_mc, WR, mwr, WR_I)
    BodyWF = RigidBody('BodyWF', WF_mc, WF, mwf, WF_I)
    kd = [q1d - u1, q2d - u2, q4d - u4, q5d - u5]
    conlist_speed = [WF_cont.vel(N) & Y.x, WF_cont.vel(N) & Y.y, WF_cont.vel(N) & Y.z]
    conlist_coord = [WF_cont.pos_from(WR_cont) & Y.z]
    if pitch_rate:
        conlist_speed[2] = conlist_coord[0].diff(dynamicsymbols._t)
    FL = [(Frame_mc, -mframe * g * Y.z), (Fork_mc, -mfork * g * Y.z), (WF_mc, -mwf * g * Y.z),
          (WR_mc, -mwr * g * Y.z)]
    if steer_torque:
        T = symbols('T')
        FL += [(Fork, T * Frame.x), (Frame, -T * Frame.x)]
    BL = [BodyFrame, BodyFork, BodyWR, BodyWF]
    configuration = dict(q_ind=[q1, q2, q4, q5]) if pitch_rate else dict(
        q_ind=[q1, q2, q5], q_dependent=[q4], configuration_constraints=conlist_coord)
    KM = KanesMethod(N, **configuration, u_ind=[u2, u3, u5], u_dependent=[u1, u4, u6],
                     velocity_constraints=conlist_speed, kd_eqs=kd, constraint_solver="CRAMER")
    KM.kanes_equations(BL, FL)
    # the benchmark values (Meijaard et al. 2007), as in sympy's test
    PaperRadRear = 0.3
    PaperRadFront = 0.35
    HTA = (pi / 2 - pi / 10).evalf()
    TrailPaper = 0.08
    rake = (-(TrailPaper * sin(HTA) - (PaperRadFront * cos(HTA)))).evalf()
    PaperWb = 1.02
    PaperFrameCgX = 0.3
    PaperFrameCgZ = 0.9
    PaperForkCgX = 0.9
    PaperForkCgZ = 0.7
    FrameLength = (PaperWb * sin(HTA) - (rake - (PaperRadFront - PaperRadRear) * cos(HTA))).evalf()
    FrameCGNorm = ((PaperFrameCgZ - PaperRadRear - (PaperFrameCgX / sin(HTA)) * cos(HTA)) * sin(HTA)).evalf()
    FrameCGPar = (PaperFrameCgX / sin(HTA) + (PaperFrameCgZ - PaperRadRear - PaperFrameCgX / sin(HTA) * cos(HTA))
                  * cos(HTA)).evalf()
    tempa = (PaperForkCgZ - PaperRadFront)
    tempb = (PaperWb - PaperForkCgX)
    tempc = (sqrt(tempa**2 + tempb**2)).evalf()
    PaperForkL = (PaperWb * cos(HTA) - (PaperRadFront - PaperRadRear) * sin(HTA)).evalf()
    ForkCGNorm = (rake + (tempc * sin(pi / 2 - HTA - acos(tempa / tempc)))).evalf()
    ForkCGPar = (tempc * cos((pi / 2 - HTA) - acos(tempa / tempc)) - PaperForkL).evalf()
    values = {WFrad: PaperRadFront, WRrad: PaperRadRear, htangle: HTA, forkoffset: rake, forklength: PaperForkL,
              framelength: FrameLength, forkcg1: ForkCGPar, forkcg3: ForkCGNorm, framecg1: FrameCGNorm,
              framecg3: FrameCGPar, Iwr11: 0.0603, Iwr22: 0.12, Iwf11: 0.1405, Iwf22: 0.28, Ifork11: 0.05892,
              Ifork22: 0.06, Ifork33: 0.00708, Ifork31: 0.00756, Iframe11: 9.2, Iframe22: 11, Iframe33: 2.8,
              Iframe31: -2.4, mfork: 4, mframe: 85, mwf: 3, mwr: 2, g: 9.81}
    if steer_torque:
        values[T] = 0.7
    return KM, {k: float(v) for k, v in values.items()}


def rattleback():
    """The rattleback of Kane & Levinson (1982): a rigid body with an ellipsoidal bottom rolling without
    slipping on a horizontal plane under gravity, built as a sympy.physics.mechanics user would.

    Body frame R (x along the long semi-axis a, y along b, z along c, z up at rest), oriented by the
    body-fixed z-x-y angles (yaw, roll, pitch); (x, y) is the contact point P on the ground.  With
    ``n = (n1, n2, n3)`` the components of the upward vertical N.z in R, the contact point of the
    ellipsoid x²/a² + y²/b² + z²/c² = 1 relative to its centre E is ``−(a² n1, b² n2, c² n3)/ε``,
    ``ε = sqrt(a² n1² + b² n2² + c² n3²)``; the mass centre G lies on the c axis at distance h from E
    towards the bottom (Kane & Levinson's h, the distance from the ellipsoid's centre to G).  Central
    inertia ``A xx + B yy + C zz + D (xy + yx)`` in R (D the product of inertia of the a and b axes).
    Generalized speeds: the angle rates u1, u2, u3 and u4, u5 = ẋ, ẏ (dependent); the rolling
    constraints are the horizontal components of the velocity ``v_G + ω × (r_P − r_G)`` of the body's
    point at P (its vertical component vanishes identically: the height of G is the support function
    ``ε − h n3`` of the orientation, so there is no holonomic constraint).

    Values: Kane & Levinson (1982) in SI units, as in Autolev's rattleback sample problem (Online
    Dynamics Inc., Kane & Levinson's program): a = 0.20, b = 0.03, c = 0.02, h = 0.01 m, m = 1 kg,
    A = 2e-4, B = 1.6e-3, C = 1.7e-3 kg m², D = 2e-5 kg m² in these axes (z up), g = 9.81 m/s².
    """
    yaw, roll, pitch, x, y = dynamicsymbols('yaw roll pitch x y')
    u1, u2, u3, u4, u5 = dynamicsymbols('u1:6')
    t = dynamicsymbols._t
    a, b, c, h, m, g, A, B, C, D = symbols('a b c h m g A B C D')
    N = ReferenceFrame('N')
    R = ReferenceFrame('R')
    R.orient_body_fixed(N, (yaw, roll, pitch), 'zxy')
    kd = [yaw.diff(t) - u1, roll.diff(t) - u2, pitch.diff(t) - u3, x.diff(t) - u4, y.diff(t) - u5]
    n1, n2, n3 = (dot(N.z, e) for e in (R.x, R.y, R.z))
    eps = sqrt(a**2 * n1**2 + b**2 * n2**2 + c**2 * n3**2)
    O = Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', x * N.x + y * N.y)
    P.set_vel(N, u4 * N.x + u5 * N.y)
    E = P.locatenew('E', (a**2 * n1 * R.x + b**2 * n2 * R.y + c**2 * n3 * R.z) / eps)
    G = E.locatenew('G', -h * R.z)
    body = RigidBody('rattleback', G, R, m, (inertia(R, A, B, C, D, 0, 0), G))
    v_contact = G.vel(N) + cross(R.ang_vel_in(N), P.pos_from(G))
    fnh = [dot(v_contact, N.x), dot(v_contact, N.y)]
    KM = KanesMethod(N, [yaw, roll, pitch, x, y], [u1, u2, u3], kd, u_dependent=[u4, u5],
                     velocity_constraints=fnh, constraint_solver='LU')
    KM.kanes_equations([body], [(G, -m * g * N.z)])
    values = {a: 0.20, b: 0.03, c: 0.02, h: 0.01, m: 1.0, A: 2e-4, B: 1.6e-3, C: 1.7e-3, D: 2e-5, g: 9.81}
    return KM, values


def incline_disc():
    """test_lagrange.py's disc on an incline: ``y`` along the incline, ``theta`` the disc's angle, ``y = R theta``."""
    y, theta = dynamicsymbols('y theta')
    yd, thetad = dynamicsymbols('y theta', 1)
    m, g, R, l, alpha = symbols('m g R l alpha')
    N = ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [pi / 2 - alpha, N.z])
    B = A.orientnew('B', 'Axis', [-theta, A.z])
    Do = Point('Do')
    Do.set_vel(N, yd * A.x)
    I = m * R**2 / 2 * B.z | B.z
    D = RigidBody('D', Do, B, m, (I, Do))
    D.potential_energy = m * g * (l - y) * sin(alpha)
    L = Lagrangian(N, D)
    LM = LagrangesMethod(L, [y, theta], hol_coneqs=[y - R * theta])
    LM.form_lagranges_equations()
    return LM, {m: 1.3, g: 9.81, R: 0.4, l: 2.0, alpha: 0.3}


def lagrange_sleigh():
    """A rigid body on a knife edge at P = (x, y), its mass centre at distance a ahead along the heading theta:
    ``−sin(theta) x' + cos(theta) y' = 0``; a damping torque ``−c theta'``."""
    x, y, th = dynamicsymbols('x y theta')
    xd, yd, thd = dynamicsymbols('x y theta', 1)
    m, I, a, c = symbols('m I a c')
    N = ReferenceFrame('N')
    B = N.orientnew('B', 'Axis', [th, N.z])
    O = Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', x * N.x + y * N.y)
    P.set_vel(N, xd * N.x + yd * N.y)
    G = P.locatenew('G', a * B.x)
    G.v2pt_theory(P, N, B)
    body = RigidBody('sleigh', G, B, m, (inertia(B, 0, 0, I), G))
    LM = LagrangesMethod(Lagrangian(N, body), [x, y, th], nonhol_coneqs=[-sin(th) * xd + cos(th) * yd],
                         forcelist=[(B, -c * thd * N.z)], frame=N)
    LM.form_lagranges_equations()
    return LM, {m: 2.0, I: 0.3, a: 0.5, c: 0.1}


def nonminimal_pendulum_lagrange():
    """test_lagrange.py's ``test_nonminimal_pendulum``: a particle at (q1, q2) on a circle of radius L,
    ``q1² + q2² − L² = 0``, pulled by the force ``m g N.x`` (g = 9.8 written as a number, as there)."""
    q1, q2 = dynamicsymbols('q1:3')
    L, m = symbols('L, m')
    g = 9.8
    N = ReferenceFrame('N')
    pN = Point('N*')
    pN.set_vel(N, 0)
    P = pN.locatenew('P1', q1 * N.x + q2 * N.y)
    P.set_vel(N, P.pos_from(pN).dt(N))
    pP = Particle('pP', P, m)
    LM = LagrangesMethod(Lagrangian(N, pP), [q1, q2], hol_coneqs=sp.Matrix([q1**2 + q2**2 - L**2]),
                         forcelist=[(P, m * g * N.x)], frame=N)
    LM.form_lagranges_equations()
    return LM, {L: 1.2, m: 0.7}
