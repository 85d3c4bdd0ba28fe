"""`pmap` (issue 14, item 2): `tests/pmap_cases.py` on 8 simulated devices in a child
process (`tests/eight_devices.py`), one test here per case; what needs no second device in
this process (the suite's jax has one CPU device)."""
from __future__ import annotations

import numpy as np
import pytest

import pmap_cases
from conftest import assert_same
from eight_devices import case_names, check_outcome, child_outcomes
from transpiler import PSCTypeError, PSCValueError, devices, jit_ps, pmap, pmean

CASES = case_names(pmap_cases)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return child_outcomes(pmap_cases.__file__, tmp_path_factory.mktemp("pmap"))


@pytest.mark.parametrize("name", CASES)
def test_on_eight_devices(outcomes, name):
    check_outcome(outcomes, name)


def test_one_device_runs_a_one_slice_map():
    x = np.arange(3.0).reshape(1, 3)
    assert_same(pmap(lambda v: pmean(v, "i") * 2.0, "i")(x), x * 2.0)


def test_more_slices_than_devices_says_how_to_get_more():
    with pytest.raises(PSCValueError, match="more than the 1 available") as info:
        pmap(lambda v: v)(np.ones((2, 3)))
    assert "xla_force_host_platform_device_count" in info.value.hint
    assert info.value.location is not None


def test_devices_and_backend_together_are_refused():
    with pytest.raises(PSCValueError, match="not both"):
        pmap(lambda v: v, devices=devices(), backend="cpu")


def test_a_non_function_is_refused():
    with pytest.raises(PSCTypeError, match="needs a function"):
        pmap(3)


def spread(x):
    return x - pmean(x, "k")


@jit_ps
def uses_pmap(x):
    return pmap(spread, "k")(x) * 2.0


def test_inside_jit_ps_pmap_means_vmap_over_its_axis():
    x = np.random.default_rng(0).normal(size=(6, 2))
    assert_same(uses_pmap(x), (x - x.mean(0)) * 2.0)
