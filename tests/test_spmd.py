"""SPMD (issue 14, item 4): ``jit_ps(in_shardings=, out_shardings=)`` with jax's sharding
classes and ``with_sharding_constraint``, partitioned by XLA over a mesh of devices.

The cases need 8 devices, and jax fixes the CPU device count when it starts its client
(the rest of the suite has started it with one): `tests/spmd_cases.py` holds them and runs
once, in a child process with ``--xla_force_host_platform_device_count=8``; each case is
reported here as a test of its own.  Mistakes that need no second device are checked here.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import spmd_cases
from conftest import assert_same
from eight_devices import case_names, check_outcome, child_outcomes
from transpiler import PSCValueError, jit_ps, with_sharding_constraint

CASES = case_names(spmd_cases)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return child_outcomes(spmd_cases.__file__, tmp_path_factory.mktemp("spmd"))


@pytest.mark.parametrize("name", CASES)
def test_on_eight_devices(outcomes, name):
    check_outcome(outcomes, name)


def one_device_mesh():
    return Mesh(np.array(jax.devices()[:1]), ("batch",))


def test_a_one_device_mesh_runs_and_returns_sharded_jax_arrays():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch"))
    w, x, y = spmd_cases.data(np.random.default_rng(5))
    step = jit_ps(spmd_cases.logistic_step, in_shardings=(None, rows, rows))
    new_w, loss = step(w, x, y)
    assert isinstance(new_w, jax.Array) and new_w.sharding.mesh == rows.mesh
    assert_same((np.asarray(new_w), np.asarray(loss)), spmd_cases.logistic_step(w, x, y),
                rtol=1e-12)


def test_a_constraint_on_a_one_device_mesh_is_the_identity():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch"))
    f = jit_ps(lambda x: with_sharding_constraint(x * 2.0, rows))
    assert_same(f(np.arange(4.0)), np.arange(4.0) * 2.0)
    assert "sharding" not in f.lower(np.arange(4.0))


def test_a_constraint_outside_a_program_puts_the_array():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch"))
    put = with_sharding_constraint(np.arange(4.0), rows)
    assert put.sharding == rows and put.dtype == np.float64


def test_a_constraint_of_the_wrong_rank_is_an_error_at_its_line():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch", None))
    f = jit_ps(lambda x: with_sharding_constraint(x, rows))
    with pytest.raises(PSCValueError, match="rank 1") as info:
        f(np.arange(4.0))
    assert info.value.location.file == __file__
