"""``pydy.System(model)`` with a :func:`anholo.from_mechanics` model: a one-line anholo error naming
``in_user_symbols()`` (the model is in anholo's state (q̃, v), whose mass matrix and forcing are not KanesMethod's),
never ``AttributeError: _uaux``; ``pydy.System(model.in_user_symbols())`` is accepted and integrates.

Oracle for the integration: sympy's own KanesMethod of the same rolling disc handed to PyDy (the model's
``kindiffdict`` and equations as sympy writes them), compared with PyDy's run of anholo's form.
"""

from __future__ import annotations

import numpy as np
import pytest

from anholo import MechanicsModelError, from_mechanics

from mechanics_models import rolling_disc

pydy_system = pytest.importorskip("pydy.system")


@pytest.fixture(scope="module")
def disc():
    KM, values = rolling_disc()
    return KM, values, from_mechanics(KM, values=values)


def test_pydy_system_of_the_model_names_in_user_symbols(disc):
    KM, values, model = disc
    with pytest.raises(MechanicsModelError) as info:
        pydy_system.System(model, constants=values)
    message = str(info.value)
    assert "in_user_symbols()" in message and "_uaux" in message and "\n" not in message
    assert isinstance(info.value, AttributeError)  # hasattr and getattr with a default keep working
    assert not hasattr(model, "_uaux") and getattr(model, "u", None) is None
    with pytest.raises(AttributeError) as other:  # a name no mechanics tool reads: the usual AttributeError
        model.no_such_attribute
    assert not isinstance(other.value, MechanicsModelError)


def test_pydy_integrates_the_user_form_as_it_integrates_kanesmethod(disc):
    KM, values, model = disc
    q0, u0 = [0.1, 0.2, 0.0], [0.3, 2.0, -0.4]
    times = np.linspace(0.0, 1.0, 11)
    runs = []
    for eom in (model.in_user_symbols(), KM):
        sysm = pydy_system.System(eom, constants=values, times=times,
                                  initial_conditions=dict(zip(list(KM.q) + list(KM.u), q0 + u0)))
        runs.append(sysm.integrate(rtol=1e-11, atol=1e-11))
    assert np.allclose(runs[0], runs[1], atol=1e-7)
    assert np.abs(runs[1][-1] - runs[1][0]).max() > 0.1  # it moved
