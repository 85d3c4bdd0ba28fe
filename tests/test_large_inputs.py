"""Large NumPy inputs on CPU (issue 17, item 6): `runtime.staging`.

PJRT uses a 64-byte-aligned, C-contiguous, native-order host array in place (zero-copy)
and copies any other one slowly; a large array of the second kind is first copied into an
aligned pool buffer, which PJRT then uses in place.  Every check is differential (the
oracle is the same function run by plain NumPy); which path a call took is observed
through data pointers and `staging.STATS`, never through timing.
"""
from __future__ import annotations

import threading

import jax
import numpy as np
import pytest

from conftest import assert_same
from runtime import staging
from runtime.client import device_put, get_client
from transpiler import jit_ps, to_device

LARGE = staging.STAGE_BYTES + 4096   # bytes: every array here this size is staged


def sum_and_row(A):
    return A.sum(axis=0) + A[0]


def doubled(A):
    return A * 2


def identity(A):
    return A


def first_plus_one(A):
    return A[0, 0] + 1


def at_offset(shape, dtype, offset: int, fill=None) -> np.ndarray:
    """A C-contiguous array whose data pointer is ``offset`` bytes past a 64-byte
    boundary (0: aligned), with deterministic contents."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + 2 * staging.ALIGNMENT, np.uint8)
    start = (offset - raw.ctypes.data) % staging.ALIGNMENT
    array = raw[start:start + nbytes].view(dtype).reshape(shape)
    values = np.arange(array.size).reshape(shape) % 7 - 3 if fill is None else fill
    array[...] = values if dtype.kind != "b" else (values > 0)
    assert staging.data_pointer(array) % staging.ALIGNMENT == offset
    return array


def large_shape(dtype, cols=256) -> tuple:
    rows = -(-LARGE // (cols * np.dtype(dtype).itemsize))
    return rows, cols


def staged_count():
    return staging.STATS.staged


@pytest.mark.parametrize("offset", [0, 8, 16, 32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int8, np.bool_])
def test_large_arrays_at_any_alignment_equal_numpy(dtype, offset):
    A = at_offset(large_shape(dtype), dtype, offset)
    for fn in (sum_and_row, doubled):
        assert_same(jit_ps(fn)(A), fn(A))


VIEWS = {
    "strided": lambda A: A[:, ::2],
    "transposed": lambda A: A.T,
    "negative stride": lambda A: A[::-1],
    "both negative": lambda A: A[::-1, ::-3],
    "fortran": np.asfortranarray,
    "read-only": lambda A: _read_only(A),
    "big-endian": lambda A: A.astype(">f8"),
    "big-endian transposed": lambda A: A.astype(">f8").T,
    "column": lambda A: A[:, :1],
}


def _read_only(A):
    A = A.copy()
    A.flags.writeable = False
    return A


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_views_and_layouts_equal_numpy(view):
    A = VIEWS[view](at_offset(large_shape(np.float64), np.float64, 16))
    for fn in (sum_and_row, doubled):
        assert_same(jit_ps(fn)(A), fn(A))
        assert_same(jit_ps(fn)(A), fn(A))   # the C++ path too


@pytest.mark.parametrize("shape", [(0,), (0, 5), (3, 0)])
def test_empty_arrays(shape):
    A = np.zeros(shape)
    assert_same(jit_ps(doubled)(A), doubled(A))
    assert_same(jit_ps(identity)(A), identity(A))


def test_aligned_array_is_used_in_place():
    A = at_offset(large_shape(np.float64), np.float64, 0)
    device = get_client().devices()[0]
    before = staged_count()
    buffer = device_put(A, A.shape, A.dtype, device)
    assert buffer.unsafe_buffer_pointer() == staging.data_pointer(A)
    assert staged_count() == before


def test_small_array_is_left_to_pjrt():
    A = at_offset((4, 8), np.float64, 16)
    before = staged_count()
    assert_same(jit_ps(sum_and_row)(A), sum_and_row(A))
    assert staged_count() == before


def test_misaligned_large_array_is_staged_then_used_in_place():
    A = at_offset(large_shape(np.float64), np.float64, 16)
    device = get_client().devices()[0]
    before = staged_count()
    buffer = device_put(A, A.shape, A.dtype, device)
    assert staged_count() == before + 1
    pointer = buffer.unsafe_buffer_pointer()
    assert pointer % staging.ALIGNMENT == 0 and pointer != staging.data_pointer(A)
    assert_same(np.asarray(buffer), A)


def test_staged_copy_is_aligned_native_contiguous_and_read_only():
    A = at_offset(large_shape(np.float64), ">f8", 8)[::-1].T
    staged = staging.stage(A)
    assert staging.zero_copyable(staged) and not staged.flags.writeable
    assert staged.dtype == np.dtype("<f8") and staged.shape == A.shape
    np.testing.assert_array_equal(staged, A)


def test_calls_stay_on_the_cpp_path():
    """Staging happens before jaxlib's C++ dispatcher, which then serves the calls."""
    f = jit_ps(sum_and_row)
    A = at_offset(large_shape(np.float64), np.float64, 16)
    before = staged_count()
    for _ in range(3):
        assert_same(f(A), sum_and_row(A))
    info = f.cache_info()
    assert info.misses == 1 and info.hits == 2
    assert staged_count() == before + 3


def test_aligned_and_device_arrays_are_not_copied_by_us():
    f = jit_ps(sum_and_row)
    A = at_offset(large_shape(np.float64), np.float64, 0)
    on_device = to_device(A)
    assert on_device.dtype == np.float64   # (jax.device_put squashes it without x64)
    device = get_client().devices()[0]
    assert device_put(on_device, A.shape, A.dtype, device) is on_device
    small = jax.device_put(np.ones(3, np.float32))
    assert device_put(small, (3,), np.dtype(np.float32), device) is small
    before = staged_count()
    assert_same(f(A), sum_and_row(A))
    assert_same(f(on_device), sum_and_row(A))
    assert_same(f(on_device), sum_and_row(A))   # the C++ path
    assert staged_count() == before


@pytest.mark.parametrize("dtype", [np.float64, ">f8", np.int8, np.bool_, np.complex128])
def test_to_device_copies_once_and_keeps_the_dtype(dtype):
    A = at_offset(large_shape(np.float64), dtype, 16)
    saved = A.copy()
    on_device = to_device(A)
    assert on_device.dtype == np.dtype(dtype).newbyteorder("=")
    A[...] = 0   # the jax array has its own memory
    assert_same(np.asarray(on_device), saved.astype(on_device.dtype))
    assert_same(jit_ps(doubled)(on_device), doubled(saved))
    assert to_device(on_device) is on_device
    assert_same(np.asarray(to_device(2.5)), np.asarray(2.5))


@pytest.mark.parametrize("offset", [0, 16])
def test_mutating_the_input_after_the_call_leaves_results_alone(offset):
    A = at_offset(large_shape(np.float64), np.float64, offset)
    saved = A.copy()
    results = [jit_ps(fn)(A) for fn in (identity, doubled, first_plus_one)]
    assert not any(np.shares_memory(np.asarray(r), A) for r in results)
    A[...] = -1.0
    for fn, result in zip((identity, doubled, first_plus_one), results):
        assert_same(result, fn(saved))


@pytest.mark.parametrize("offset", [0, 16])
def test_the_computation_leaves_its_input_alone(offset):
    A = at_offset(large_shape(np.float64), np.float64, offset)
    saved = A.copy()
    for fn in (doubled, identity, sum_and_row):
        jit_ps(fn)(A)
    np.testing.assert_array_equal(A, saved)


def test_a_reused_pool_buffer_carries_the_new_input():
    f = jit_ps(doubled)
    shape = large_shape(np.float64)
    X = at_offset(shape, np.float64, 16)
    Y = at_offset(shape, np.float64, 16, fill=np.full(shape, 5.0))
    reused = staging.STATS.reused
    first = f(X)
    second = f(Y)
    third = f(X)
    assert staging.STATS.reused > reused   # the pool's buffer served a later call
    assert_same(first, doubled(X))
    assert_same(second, doubled(Y))
    assert_same(third, doubled(X))


def test_device_results_with_staged_inputs():
    f = jit_ps(doubled, return_device_arrays=True)
    A = at_offset(large_shape(np.float64), np.float64, 16)
    results = [f(A) for _ in range(3)]
    for result in results:
        assert_same(np.asarray(result), doubled(A))


def test_containers_of_large_arrays():
    def pair(arrays, scale):
        return arrays[0] * scale["s"] + arrays[1]
    shape = large_shape(np.float64)
    X, Y = at_offset(shape, np.float64, 16), at_offset(shape, np.float64, 0)
    f = jit_ps(pair)
    for args in [((X, Y), {"s": 2.0}), ([Y, X], {"s": 3.0})]:
        assert_same(f(*args), pair(*args))


def test_threads_calling_with_different_inputs():
    f = jit_ps(doubled)
    shape = large_shape(np.float64)
    inputs = [at_offset(shape, np.float64, 16, fill=np.full(shape, float(i)))
              for i in range(4)]
    failures = []

    def work(A):
        for _ in range(5):
            result = f(A)
            if not np.array_equal(result, doubled(A)):
                failures.append(result[0, 0])
    threads = [threading.Thread(target=work, args=(A,)) for A in inputs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_pool_keeps_at_most_its_budget(monkeypatch):
    staging.clear_pool()
    shape = large_shape(np.float64)
    size = int(np.prod(shape)) * 8 + staging.ALIGNMENT
    monkeypatch.setattr(staging, "POOL_BYTES", size * 2)
    arrays = [at_offset((shape[0] + i, shape[1]), np.float64, 16) for i in range(4)]
    for A in arrays:
        assert_same(jit_ps(doubled)(A), doubled(A))
        assert staging.pool_bytes() <= staging.POOL_BYTES
    staging.clear_pool()
    assert staging.pool_bytes() == 0


def test_a_pool_buffer_in_use_is_not_handed_out_again():
    shape = large_shape(np.float64)
    X = at_offset(shape, np.float64, 16)
    Y = at_offset(shape, np.float64, 16, fill=np.full(shape, 5.0))
    held = staging.stage(X)   # referred to from here, as PJRT refers to its inputs
    other = staging.stage(Y)
    assert not np.shares_memory(held, other)
    np.testing.assert_array_equal(held, X)
    del other
    again = staging.stage(Y)   # the freed buffer may serve it; the held one must not
    assert not np.shares_memory(held, again)
    np.testing.assert_array_equal(held, X)


def log_of_sum(A):
    return np.log(A.sum(axis=0) + 100.0)


def test_checked_calls_take_the_python_path_and_stage_there():
    A = at_offset(large_shape(np.float64), np.float64, 16)
    f = jit_ps(log_of_sum, checks=("nan",))
    before = staged_count()
    for _ in range(2):
        assert_same(f(A), log_of_sum(A))
    assert staged_count() == before + 2


def halve_until_small(A):
    total = A.sum()
    while total > 1.0:
        total = total / 2
    return total + A[0, 0]


def test_programs_with_loops_stage_on_their_worker_thread():
    A = at_offset(large_shape(np.float64), np.float64, 16, fill=1.0)
    f = jit_ps(halve_until_small)
    for _ in range(2):
        assert_same(f(A), halve_until_small(A))


TABLE = at_offset(large_shape(np.float64), np.float64, 16)
TABLE_ALIGNED = at_offset(large_shape(np.float64), np.float64, 0)


def with_tables(x):
    return TABLE[0] * x + TABLE_ALIGNED[-1]


def test_large_constants_get_memory_of_their_own():
    staging.clear_pool()
    x = np.linspace(0.0, 1.0, TABLE.shape[1])
    f = jit_ps(with_tables)
    assert_same(f(x), with_tables(x))
    assert staging.pool_bytes() == 0   # constants are not the calls' pool buffers
    assert_same(f(x), with_tables(x))
