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
