"""Collectives (issue 14, item 2): `tests/collective_cases.py` on 8 simulated devices in a
child process (`tests/eight_devices.py`), one test here per case; the mistakes and the
vmap forms, which need no second device, in this process."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import collective_cases
import transpiler as T
from conftest import assert_same
from eight_devices import case_names, check_outcome, child_outcomes
from transpiler import PSCNameError, PSCUnsupportedCallError, jit_ps, lax, vmap

CASES = case_names(collective_cases)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return child_outcomes(collective_cases.__file__, tmp_path_factory.mktemp("collectives"))


@pytest.mark.parametrize("name", CASES)
def test_on_eight_devices(outcomes, name):
    check_outcome(outcomes, name)


def test_a_collective_outside_any_axis_names_the_axis():
    with pytest.raises(PSCNameError, match="psum: unbound axis name 'batch'") as info:
        T.psum(np.ones(3), "batch")
    assert info.value.location is not None and info.value.hint


def sums_over_rows(x):
    return T.psum(x, "rows")


def test_a_collective_in_a_jit_ps_function_without_the_axis_points_at_its_line():
    with pytest.raises(PSCNameError, match="unbound axis name 'rows'") as info:
        jit_ps(sums_over_rows)(np.ones(3))
    assert info.value.location.line == sums_over_rows.__code__.co_firstlineno + 1


def test_axis_index_groups_is_refused():
    with pytest.raises(PSCUnsupportedCallError, match="axis_index_groups"):
        vmap(lambda x: T.psum(x, "i", axis_index_groups=[[0, 1]]), axis_name="i")(np.ones(2))


def test_vmap_collectives_under_grad_agree_with_jax():
    X = np.random.default_rng(0).normal(size=(5, 3))

    def loss(w, x):
        return np.sum(T.psum(w * x, "i") ** 2) + np.sum(T.pmean(np.sin(x * w), "i"))

    def jax_loss(w, x):
        return jax.numpy.sum(jax.lax.psum(w * x, "i") ** 2) + \
            jax.numpy.sum(jax.lax.pmean(jax.numpy.sin(x * w), "i"))
    w = np.linspace(0.5, 1.5, 3)
    got = vmap(T.grad(loss), in_axes=(None, 0), axis_name="i")(w, X)
    with jax.enable_x64(True):
        want = np.asarray(jax.vmap(jax.grad(jax_loss), in_axes=(None, 0), axis_name="i")(w, X))
    assert_same(got, want, rtol=1e-12)


def test_vmap_psum_of_an_unbatched_value_is_size_times_it():
    got = vmap(lambda x, y: T.psum(y, "i") + 0 * x, in_axes=(0, None), axis_name="i")(
        np.zeros(4), np.float64(2.5))
    assert_same(got, np.full(4, 10.0))


def through_lax(x):
    return lax.psum(x, "i") - lax.pmax(x, "i") + lax.axis_index("i")


def test_the_collectives_of_transpiler_lax_in_transpiled_code():
    X = np.random.default_rng(1).normal(size=(4, 3))
    got = vmap(through_lax, axis_name="i")(X)
    assert_same(got, X.sum(0) - X.max(0) + np.arange(4.0)[:, None])
