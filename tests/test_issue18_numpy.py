"""Issue 18, NumPy semantics: NumPy 2 scalar rules, out-of-bounds traced writes, float->int
casts, float16 accumulation, divmod and unsupported array attributes.

Every check is differential: the same function runs as plain Python + NumPy (the oracle)
and through `jit_ps`; where NumPy raises, we must raise a `PSCError` at the user's line.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_same
from runtime import PSCError, PSCUnsupportedCallError, PSCValueError
from transpiler import jit_ps


def numpy_result(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


def same_as_numpy(fn, *args, **tolerance):
    assert_same(jit_ps(fn)(*args), numpy_result(fn, *args), **tolerance)


# --- 6. out-of-bounds traced writes are dropped (reads clamp) ----------------------------

def set_one(y, i):
    y = y.copy()
    y[i] = 100
    return y


def add_one(y, i):
    y = y.copy()
    y[i] += 5
    return y


def set_row(y, i):
    y = y.copy()
    y[i] = -1.0
    return y


def set_element(y, i, j):
    y = y.copy()
    y[i, j] = -1.0
    return y


def set_part_of_row(y, i):
    y = y.copy()
    y[i, 1:3] = np.array([-1.0, -2.0])
    return y


def add_to_column(y, j):
    y = y.copy()
    y[:, j] += 10.0
    return y


def set_at(y, idx):
    y = y.copy()
    y[idx] = -1.0
    return y


def add_at_rows(y, idx):
    y = y.copy()
    y[idx, 1:] += 1.0
    return y


def fill_past_the_end(y):
    y = y.copy()
    for i in range(y.shape[0] + 3):
        y[i] = i * 10
    return y


def numpy_dropping_writes(fn, y, *indices):
    """NumPy's result with an out-of-bounds traced write left out (NumPy would raise)."""
    try:
        return numpy_result(fn, y, *indices)
    except IndexError:
        return y


@pytest.mark.parametrize("i", [0, 4, -1, -5, 5, 7, -6, -100, 2**40])
def test_out_of_bounds_traced_write_is_dropped_1d(i):
    y = np.arange(5)
    for fn in (set_one, add_one):
        assert_same(jit_ps(fn)(y, i), numpy_dropping_writes(fn, y, i))


def test_issue_reproducer_does_not_corrupt_the_last_element():
    assert_same(jit_ps(set_one)(np.arange(5), 7), np.arange(5))


@pytest.mark.parametrize("i", [0, 2, -1, -3, 3, -4, 50])
def test_out_of_bounds_traced_write_is_dropped_nd(i):
    y = np.arange(12.0).reshape(3, 4)
    for fn in (set_row, set_part_of_row):
        assert_same(jit_ps(fn)(y, i), numpy_dropping_writes(fn, y, i))
    for j in (0, -1, 4, -5, 9):
        assert_same(jit_ps(set_element)(y, i, j), numpy_dropping_writes(set_element, y, i, j))
    assert_same(jit_ps(add_to_column)(y, i), numpy_dropping_writes(add_to_column, y, i))


@pytest.mark.parametrize("idx", [[0, 7, -1, -9], [5, 6], [-1, 2], [3, -4, 100]])
def test_index_array_drops_only_its_out_of_bounds_entries(idx):
    idx = np.array(idx)
    y = np.arange(4.0)
    inside = idx[(idx >= -4) & (idx < 4)]
    assert_same(jit_ps(set_at)(y, idx), numpy_result(set_at, y, inside))
    rows = np.arange(12.0).reshape(4, 3)
    assert_same(jit_ps(add_at_rows)(rows, idx), numpy_result(add_at_rows, rows, inside))


def test_loop_writing_past_the_end_keeps_the_array():
    y = np.arange(4)
    assert_same(jit_ps(fill_past_the_end)(y), np.arange(4) * 10)


def read_at(y, i):
    return y[i]


@pytest.mark.parametrize("i", [5, 100, -6, -100])
def test_out_of_bounds_traced_read_still_clamps(i):
    """Reads clamp into range (documented: XLA's gather and dynamic slice clamp)."""
    y = np.arange(5.0)
    assert_same(jit_ps(read_at)(y, i), y[min(max(i + 5 if i < 0 else i, 0), 4)])


# --- 7. float -> int casts as NumPy computes them on x86-64 ------------------------------

import ml_dtypes  # noqa: E402  (jaxlib's companion: bfloat16)

FLOAT_DTYPES = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64, np.bool_]
SPECIAL_FLOATS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -1.0, -1.5,
                  127.0, 128.0, -128.0, -129.0, 255.0, 256.0, 300.7, -300.7, 32767.0,
                  32768.0, -32769.0, 65535.0, 65536.0, 70000.0, -70000.0, 2.0 ** 31 - 1,
                  2.0 ** 31, -2.0 ** 31, -2.0 ** 31 - 1, 3e9, -3e9, 2.0 ** 32, 2.0 ** 32 + 5,
                  5e9, -5e9, 2.0 ** 53 + 2, 2.0 ** 63, -2.0 ** 63, 1e19, 1.8e19, 2.0 ** 64,
                  -2.0 ** 64, 1e30, -1e30, 1e300]


def astype_to(x, dtype):
    return x.astype(dtype)


def numpy_scalar_cast(values, dtype):
    """NumPy's cast element by element: for float->uint32 NumPy's vectorized loop and its
    scalar tail disagree on out-of-range values; the scalar (C cast) one is the rule."""
    return np.array([np.array([v]).astype(dtype)[0] for v in values], dtype=dtype)


@pytest.mark.parametrize("dst", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("src", FLOAT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_float_to_int_cast_matches_numpy_table(src, dst):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x = np.array(SPECIAL_FLOATS, dtype=np.float64).astype(src)
        expected = numpy_scalar_cast(x, dst)
    assert_same(jit_ps(astype_to, static_argnames="dtype")(x, dtype=dst), expected)


def test_issue_cast_reproducers():
    x = np.array([np.nan, np.inf, -np.inf, -1.0, 256.0])
    for dtype in (np.int32, np.int64, np.uint8):
        assert_same(jit_ps(astype_to, static_argnames="dtype")(x, dtype=dtype),
                    numpy_result(astype_to, x, dtype))


def cast_in_many_ways(x):
    y = np.zeros(x.shape, dtype=np.uint8)
    y[:] = x
    return (np.int8(x), np.asarray(x, dtype=np.int16), np.array(x, dtype=np.uint16), y,
            np.sum(x, dtype=np.int32), np.cumsum(x, dtype=np.int64))


def test_every_float_to_int_path_casts_like_numpy():
    x = np.array([np.nan, -1.0, 256.0, 300.7, -70000.0, 3e9, 2.5])
    assert_same(jit_ps(cast_in_many_ways)(x), numpy_result(cast_in_many_ways, x))


def test_in_range_casts_are_exact():
    rng = np.random.default_rng(0)
    for src in (np.float32, np.float64):
        x = rng.uniform(-2.0 ** 31, 2.0 ** 31, 1000).astype(src)
        for dst in (np.int32, np.int64, np.uint32, np.uint64):
            assert_same(jit_ps(astype_to, static_argnames="dtype")(np.abs(x), dtype=dst),
                        np.abs(x).astype(dst))
