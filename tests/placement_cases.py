"""Placement on 8 simulated CPU devices: the cases `tests/test_placement.py` runs.

They need ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` set before jax starts its
CPU client, so `tests/test_placement.py` runs this file with pytest in a child process
(its name keeps the main suite from collecting it; importing it starts nothing).
Oracles: plain NumPy for values and dtypes, ``jax.jit`` for where results land.
"""
from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

import transpiler
from conftest import assert_same
from transpiler import (PSCTypeError, PSCUnsupportedCallError, PSCValueError, device_put,
                        devices, jit_ps, local_devices)

N_DEVICES = 8
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.complex128, np.bool_]


def affine(x, y):
    return x * y + 1.0


def loop_halving(x):
    while np.abs(x).max() > 1.0:   # a traced condition: a while loop in the program
        x = x * 0.5
    return x


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def on(x) -> set:
    """The devices of jax array ``x``."""
    return set(x.devices())


@pytest.fixture
def d():
    found = devices()
    assert len(found) == N_DEVICES, "run with --xla_force_host_platform_device_count=8"
    return found


def test_devices_are_jax_devices(d):
    assert d == jax.devices() and devices("cpu") == jax.devices("cpu")
    assert local_devices() == jax.local_devices() == d
    assert local_devices(process_index=0, backend="cpu") == d


@pytest.mark.parametrize("dtype", DTYPES)
def test_device_put_commits_and_keeps_the_dtype(d, dtype):
    host = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    for device in (d[0], d[3], d[7]):
        put = device_put(host, device)
        assert put.dtype == host.dtype and put.committed
        assert on(put) == {device} == on(jax.device_put(host, device))
        np.testing.assert_array_equal(np.asarray(put), host)


def test_device_put_of_pytrees_scalars_and_shardings(d):
    tree = {"w": np.ones((2, 2)), "b": (np.zeros(2), 2.5)}
    put = device_put(tree, SingleDeviceSharding(d[2]))
    assert put.keys() == tree.keys() and all(on(leaf) == {d[2]} for leaf in
                                             jax.tree_util.tree_leaves(put))
    scalar = put["b"][1]
    assert scalar.shape == () and scalar.dtype == np.float64 and float(scalar) == 2.5


def test_device_put_copies_numpy_and_moves_jax_arrays(d):
    host = np.arange(4.0)
    put = device_put(host, d[1])
    host[0] = 99.0   # the caller's array changes after the put: the device copy does not
    moved = device_put(put, d[5])
    assert on(moved) == {d[5]} and moved.committed and moved.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(moved), np.arange(4.0))
    assert device_put(put, d[1]) is put   # already there, committed: nothing to do


def test_device_put_without_device_is_uncommitted_as_jax_puts_it(d):
    put = device_put(np.arange(3.0))
    oracle = jax.device_put(np.arange(3.0))
    assert put.committed is oracle.committed is False
    assert on(put) == on(oracle) == {d[0]} and put.dtype == np.float64
    committed = device_put(np.arange(3.0), d[4])
    assert device_put(committed) is committed   # jax arrays stay where they are


@pytest.mark.parametrize("index", [0, 3, 7])
def test_results_stay_on_the_committed_argument_device(d, index):
    x, y = np.linspace(-1.0, 1.0, 5), np.full(5, 3.0)
    f = jit_ps(affine, return_device_arrays=True)
    result = f(device_put(x, d[index]), y)
    oracle = jax.jit(affine)(jax.device_put(x, d[index]), y)
    assert on(result) == on(oracle) == {d[index]} and result.committed == oracle.committed
    assert result.dtype == np.float64
    np.testing.assert_allclose(np.asarray(result), affine(x, y))


def test_numpy_results_by_default(d):
    x = np.linspace(-1.0, 1.0, 5)
    result = jit_ps(affine)(device_put(x, d[6]), 2.0)
    assert type(result) is np.ndarray and result.dtype == np.float64
    np.testing.assert_allclose(result, affine(x, 2.0))


def test_repeated_calls_keep_their_device(d):
    """The second and later calls go through jaxlib's C++ dispatcher: it too keys them by
    device (and runs them where the first one ran)."""
    f = jit_ps(affine, return_device_arrays=True)
    x = np.arange(4.0)
    for device in (d[3], d[5], d[3], d[5], d[3]):
        for _ in range(3):
            result = f(device_put(x, device), x)
            assert on(result) == {device}
            np.testing.assert_allclose(np.asarray(result), affine(x, x))


def test_executables_are_cached_per_device(d):
    f = jit_ps(affine)
    x = np.arange(4.0)
    on_1, on_2 = device_put(x, d[1]), device_put(x, d[2])
    for args in [(on_1, x), (on_2, x), (on_1, x), (on_2, x)]:
        f(*args)
    assert (f.cache_info().misses, f.cache_info().hits) == (2, 2)
    f(x, x)                      # nothing committed: the first device
    f(device_put(x, d[0]), x)    # committed to it: the same executable
    assert f.cache_info().misses == 3
    assert f.compile(on_2, x).device == d[2] and f.compile(x, x).device == d[0]
    assert f.cache_info().misses == 3


def test_uncommitted_results_follow_committed_arguments_like_jax(d):
    f = jit_ps(affine, return_device_arrays=True)
    x = np.arange(3.0)
    free = f(x, x)
    oracle_free = jax.jit(affine)(x, x)
    assert free.committed is oracle_free.committed is False and on(free) == {d[0]}
    on_5 = device_put(x, d[5])
    for _ in range(2):   # the C++ dispatcher moves the uncommitted one too
        result = f(free, on_5)
        assert on(result) == on(jax.jit(affine)(oracle_free, on_5)) == {d[5]}
        np.testing.assert_allclose(np.asarray(result), affine(affine(x, x), x))


def test_arguments_committed_to_different_devices_are_an_error(d):
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="incompatible devices"):   # jax refuses it too
        jax.jit(affine)(jax.device_put(x, d[1]), jax.device_put(x, d[2]))
    f = jit_ps(affine)
    with pytest.raises(PSCValueError) as info:
        f(device_put(x, d[1]), device_put(x, d[2]))
    message = str(info.value)
    assert "argument 'x'" in message and "argument 'y'" in message
    assert str(d[1]) in message and str(d[2]) in message
    assert "device_put" in info.value.hint


def test_mixing_error_names_pytree_leaves(d):
    @jit_ps
    def model(params, x):
        return np.tanh(x @ params["w"] + params["b"])
    params = {"w": device_put(np.ones((2, 2)), d[3]), "b": device_put(np.zeros(2), d[4])}
    with pytest.raises(PSCValueError, match=r"argument 'params'\['b'\]"):
        model(params, np.ones(2))
    assert model.cache_info().misses == 0   # refused before any build


def test_a_pinned_device_runs_every_call_as_jax_jit_pins_it(d):
    x = np.linspace(-2.0, 2.0, 4)
    pinned = jit_ps(affine, device=d[6], return_device_arrays=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # jax.jit's device= is
        oracle = jax.jit(affine, device=d[6])
    for args in [(x, x), (device_put(x, d[3]), x), (device_put(x, d[3]), device_put(x, d[4]))]:
        result = pinned(*args)
        assert on(result) == on(oracle(*args)) == {d[6]} and result.committed
        np.testing.assert_allclose(np.asarray(result), affine(x, x))
    assert pinned.cache_info().misses == 1


def test_a_backend_pins_its_first_device_as_jax_jit_does(d):
    f = jit_ps(affine, backend="cpu", return_device_arrays=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # jax.jit's backend= is
        oracle = jax.jit(affine, backend="cpu")
    x = np.arange(3.0)
    for args in [(x, x), (device_put(x, d[2]), x)]:
        assert on(f(*args)) == on(oracle(*args)) == {d[0]}
        np.testing.assert_allclose(np.asarray(f(*args)), affine(x, x))


def test_loops_checks_and_gradients_run_on_the_committed_device(d):
    x = np.array([3.0, -5.0, 0.5])
    halving = jit_ps(loop_halving, return_device_arrays=True)   # interruptible path
    assert on(halving(device_put(x, d[2]))) == {d[2]}
    np.testing.assert_allclose(np.asarray(halving(device_put(x, d[2]))), loop_halving(x))
    checked = jit_ps(affine, checks=True, return_device_arrays=True)   # Python path
    assert on(checked(device_put(x, d[4]), x)) == {d[4]}
    gradient = jit_ps(transpiler.grad(loss), return_device_arrays=True)
    w, inputs = np.array([0.3, -0.2, 0.1]), np.eye(3)
    result = gradient(device_put(w, d[7]), inputs)
    assert on(result) == {d[7]} and result.dtype == np.float64
    expected = 2 * np.tanh(inputs @ w) * (1 - np.tanh(inputs @ w) ** 2) @ inputs
    np.testing.assert_allclose(np.asarray(result), expected)


BIG = np.linspace(0.0, 1.0, 1 << 18)   # 2 MiB: an executable argument, not program text


def with_large_constant(x):
    return BIG * x


def test_large_constants_live_on_the_executable_device(d):
    f = jit_ps(with_large_constant, return_device_arrays=True)
    for device in (d[5], d[1]):
        result = f(device_put(np.float64(2.0), device))
        assert on(result) == {device}
        assert all(on(c) == {device} for c in f.compile(device_put(2.0, device)).const_buffers)
        np.testing.assert_allclose(np.asarray(result), BIG * 2.0)


def test_shardings_over_several_devices_split_and_run_spmd(d):
    # (issue 14, item 4: once refused; tests/spmd_cases.py covers SPMD itself)
    mesh = Mesh(np.array(d[:2]), ("i",))
    spread = NamedSharding(mesh, PartitionSpec("i"))
    put = device_put(np.arange(4.0), spread)
    assert put.sharding == spread and put.dtype == np.float64
    assert [s.data.shape for s in put.addressable_shards] == [(2,), (2,)]
    assert_same(jit_ps(affine)(put, 1.0), affine(np.arange(4.0), 1.0))
    with pytest.raises(PSCUnsupportedCallError, match="2 devices names no single device"):
        jit_ps(affine, device=spread)
    with pytest.raises(PSCTypeError, match="Device or Sharding"):
        device_put(np.arange(4.0), "cpu:1")
