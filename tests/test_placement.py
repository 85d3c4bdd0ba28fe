"""Placement (issue 14, item 1): `devices`, `local_devices`, `device_put`, and calls that
run where their committed arguments are, as ``jax.jit``'s do.

Most cases need 8 devices, and jax fixes the CPU device count when it starts its client
(the rest of the suite has started it with one): `tests/placement_cases.py` holds them and
runs once, in a child process with ``--xla_force_host_platform_device_count=8``; each
case is reported here as a test of its own.  Mistakes that need no second device are
checked in this process.
"""
from __future__ import annotations

import numpy as np
import pytest

import placement_cases
from conftest import assert_same
from eight_devices import case_names, check_outcome, child_outcomes
from transpiler import PSCTypeError, PSCValueError, device_put, devices, jit_ps

CASES = case_names(placement_cases)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return child_outcomes(placement_cases.__file__, tmp_path_factory.mktemp("placement"))


@pytest.mark.parametrize("name", CASES)
def test_on_eight_devices(outcomes, name):
    check_outcome(outcomes, name)


def test_device_put_keeps_float64_on_the_default_device():
    host = np.linspace(0.0, 1.0, 7)
    for put in (device_put(host, devices()[0]), device_put(host)):
        assert put.dtype == np.float64 and set(put.devices()) == {devices()[0]}
        assert_same(np.asarray(put), host)
    assert_same(jit_ps(placement_cases.affine)(device_put(host, devices()[0]), host),
                placement_cases.affine(host, host))


def test_device_and_backend_together_are_refused():
    with pytest.raises(PSCValueError, match="not both"):
        jit_ps(placement_cases.affine, device=devices()[0], backend="cpu")


def test_a_device_must_be_a_jax_device():
    with pytest.raises(PSCTypeError, match="Device or Sharding"):
        jit_ps(placement_cases.affine, device="cpu:0")


def test_an_unknown_backend_is_a_psc_error():
    with pytest.raises(PSCValueError, match="backend 'no_such_backend' is not available"):
        devices("no_such_backend")
    f = jit_ps(placement_cases.affine, backend="no_such_backend")
    with pytest.raises(PSCValueError, match="not available") as info:
        f(np.ones(2), 1.0)
    assert info.value.hint
