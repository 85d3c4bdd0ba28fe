"""NumPy-semantics bugs the differential fuzzer (tests/fuzz/) found, as regression tests.

N1: a NumPy *function* returns NumPy values, strong even when its operands are Python
scalars (``np.abs(2.0)`` is an ``np.float64``, so ``float32_array * np.abs(2.0)`` is
float64), while Python's operators on Python scalars keep them weak.
N2: NumPy's reductions accept ``axis=0``/``axis=-1`` on a 0-d operand.

Every check is differential: the same function runs as plain Python + NumPy (the oracle)
and through `jit_ps`; where NumPy raises, PSC raises a `PSCError` at the user's line.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_same
from runtime import PSCError
from transpiler import jit_ps

X32 = np.array([0.5, -1.25, 2.0], dtype=np.float32)


def same_as_numpy(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = fn(*args)
    assert_same(jit_ps(fn)(*args), expected)


# --- N1: NumPy functions of Python scalars are strong -----------------------------------------

def times_abs(x, s):
    return x * np.abs(s)


def plus_floor(x, s):
    return x + np.floor(s)


def times_where_of_floats(x, s):
    return x * np.where(x.sum() > 0.25, 1.0, 2.0)


def times_where_of_weak(x, s):
    return x * np.where(x.sum() > 0.25, s, 2)


def times_ufunc_of_weak(x, s, n):
    return x * np.add(n, s)


def times_reduction_of_weak(x, s, n):
    return x * np.sum(s) + x * np.max(n) + x * np.mean(n)


def times_float64_of_weak(x, s):
    return x * np.float64(s)


def times_float32_of_weak(x, s):
    return x * np.float32(s)


def times_asarray_keeps_input_weak(x, s):
    strong = np.asarray(s)      # the rule returns its operand: s itself must stay weak
    return x * s, x * strong


def times_copy_keeps_input_weak(x, s):
    strong = np.copy(s)
    return x * s, x * strong


def divided_by_abs_of_counter(a0, a1):
    w = 0
    while w < 2 and np.max(a1 + w) < 10.0:
        w += 1
    return a0 / (np.abs(w) + 1.0)


def where_of_loop_index(x, n):
    last = np.zeros(3)
    for i in range(n):
        last = x * np.where(True, i, i)     # float64, as NumPy's int64 meets float32
    return last


def branch_types_agree(x, s):
    if x.sum() > 0:
        y = x * np.abs(s)
    else:
        y = x.astype(np.float64)
    return y


def fuzz_870108685902(a0, a1):
    w1 = 0
    while w1 < 2 and (np.min(np.floor(w1)) > 0.25):
        w1 += 1
    w4 = 0
    while w4 < 2 and (np.max((a1 + w4)) < -2.25):
        w4 += 1
        v5 = np.minimum(((a0).sum() / (np.abs((a0 / (np.abs(w4) + 1.0))) + 1.0)),
                        np.abs(w1).astype(np.float32))
        if w1 < 2.25:
            break
    v6 = np.where(a0.astype(np.int64) > 1.25, a1.astype(np.float32),
                  (a1 / (np.abs(w4) + 1.0)))
    return v6


@pytest.mark.parametrize("fn", [times_abs, plus_floor, times_where_of_floats,
                                times_where_of_weak, times_float64_of_weak,
                                times_float32_of_weak, times_asarray_keeps_input_weak,
                                times_copy_keeps_input_weak, branch_types_agree])
@pytest.mark.parametrize("s", [2.0, -3.5])
def test_numpy_function_of_python_float_is_strong(fn, s):
    same_as_numpy(fn, X32, s)
    same_as_numpy(fn, -X32, s)


@pytest.mark.parametrize("fn", [times_ufunc_of_weak, times_reduction_of_weak])
def test_numpy_function_of_python_int_and_float_is_strong(fn):
    same_as_numpy(fn, X32, 2.5, 3)


def test_abs_of_loop_counter_is_strong():
    a1 = np.array([-1.0, 3.0, 3.0], dtype=np.float32)
    same_as_numpy(divided_by_abs_of_counter, X32, a1)
    same_as_numpy(divided_by_abs_of_counter, X32, a1 + 20)


@pytest.mark.parametrize("n", [0, 3])
def test_where_of_loop_index_is_strong(n):
    same_as_numpy(where_of_loop_index, X32, n)


def test_fuzz_reproducer_870108685902():
    calls = [(np.array([3.0, 0.0, -3.0], np.float32), np.array([-1.0, 3.0, 3.0], np.float32)),
             (np.array([3.0, 2.0, -3.0], np.float32), np.array([-2.0, -2.0, 0.0], np.float32)),
             (np.array([3.0, 2.0, -3.0], np.float32), np.array([-3.0, -4.0, -5.0], np.float32))]
    for args in calls:
        same_as_numpy(fuzz_870108685902, *args)


# --- Python operators keep Python scalars weak; NumPy scalars stay strong ------------------------

def times_python_operators(x, s, n):
    return (x * (s * 2), x * -s, x * abs(s), x * round(s), x * (n + 1), x * abs(n),
            x * (s // 2), x * divmod(s, 3.0)[1], x * (s ** 2))


def times_python_logic(x, s):
    return x * (s and 2.0), x * (s or 1.5), x * (not s)


def numpy_scalar_meets_python(x, s):
    one32 = np.float32(1)
    return (one32 * 2.0, one32 * s, x * (one32 * s), one32 * np.float64(2), x * np.float64(2.0),
            x * np.float32(s) * s)


def numpy_scalar_results_are_strong(x, a, s):
    return x * a.sum(), x * a[0], x * a.max(), x * (a[1] + s), x * np.float64(s) * 2.0


def list_element_is_python_float(x, i):
    return x * [1.5, 2.5, 3.5][i]


def test_python_operators_keep_weak():
    same_as_numpy(times_python_operators, X32, 2.5, 3)
    same_as_numpy(times_python_operators, X32, -1.5, -4)


def test_python_logic_keeps_weak():
    same_as_numpy(times_python_logic, X32, 2.5)
    same_as_numpy(times_python_logic, X32, 0.0)


def test_numpy_scalars_meet_python_scalars():
    same_as_numpy(numpy_scalar_meets_python, X32, 2.5)


def test_numpy_scalar_results_are_strong():
    same_as_numpy(numpy_scalar_results_are_strong, X32, np.array([1.0, 2.0]), 2.5)


@pytest.mark.parametrize("i", [0, 2])
def test_python_list_element_is_weak(i):
    same_as_numpy(list_element_is_python_float, X32, i)


# --- N2: axis 0 / -1 on 0-d operands ---------------------------------------------------------

# NumPy (2.4) accepts these for a 0-d operand (one-line defs: each is its own jit function)
def sum0(v): return np.sum(v, axis=0)
def sum_minus1(v): return np.sum(v, axis=-1)
def prod0(v): return np.prod(v, axis=0)
def max0(v): return np.max(v, axis=0)
def min_minus1(v): return np.min(v, axis=-1)
def amax0(v): return np.amax(v, axis=0)
def any0(v): return np.any(v, axis=0)
def all_minus1(v): return np.all(v, axis=-1)
def sum_keepdims(v): return np.sum(v, axis=0, keepdims=True)
def max_keepdims(v): return np.max(v, axis=-1, keepdims=True)
def sum_empty_tuple(v): return np.sum(v, axis=())
def argmax0(v): return np.argmax(v, axis=0)
def argmin_minus1(v): return np.argmin(v, axis=-1)
def argmax_keepdims(v): return np.argmax(v, axis=0, keepdims=True)
def cumsum0(v): return np.cumsum(v, axis=0)
def cumprod_minus1(v): return np.cumprod(v, axis=-1)
def cumsum_default(v): return np.cumsum(v)
def argsort_default(v): return np.argsort(v)
def argsort0(v): return np.argsort(v, axis=0)
def argsort_none(v): return np.argsort(v, axis=None)
def sort_none(v): return np.sort(v, axis=None)
def squeeze0(v): return np.squeeze(v, axis=0)
def add_reduce0(v): return np.add.reduce(v, axis=0)
def maximum_reduce(v): return np.maximum.reduce(v)
def repeat0(v): return np.repeat(v, 2, axis=0)
def repeat_minus1(v): return np.repeat(v, 3, axis=-1)
def in_untaken_where(v): return np.where(v > 100, np.max(v, axis=0), np.sum(v, axis=-1))


def method_sum0(v): return v.sum(axis=0)
def method_max_minus1(v): return v.max(axis=-1)
def method_argmin0(v): return v.argmin(axis=0)
def method_cumsum0(v): return v.cumsum(axis=0)


# ... and refuses these
def sum1(v): return np.sum(v, axis=1)
def sum_tuple(v): return np.sum(v, axis=(0,))
def max_minus2(v): return np.max(v, axis=-2)
def argmax1(v): return np.argmax(v, axis=1)
def cumsum1(v): return np.cumsum(v, axis=1)
def mean0(v): return np.mean(v, axis=0)
def std0(v): return np.std(v, axis=0)
def var_minus1(v): return np.var(v, axis=-1)
def sort0(v): return np.sort(v, axis=0)
def sort_default(v): return np.sort(v)
def flip0(v): return np.flip(v, axis=0)
def squeeze_tuple(v): return np.squeeze(v, axis=(0,))
def add_accumulate(v): return np.add.accumulate(v)
def method_sum_tuple(v): return v.sum(axis=(0,))
def sum_bool_axis(v): return np.sum(v, axis=False)
def roll0(v): return np.roll(v, 1, axis=0)
def repeat1(v): return np.repeat(v, 2, axis=1)


ACCEPTED_FUNCTIONS = [sum0, sum_minus1, prod0, max0, min_minus1, amax0, any0, all_minus1,
                      sum_keepdims, max_keepdims, sum_empty_tuple, argmax0, argmin_minus1,
                      argmax_keepdims, cumsum0, cumprod_minus1, cumsum_default,
                      argsort_default, argsort0, argsort_none, sort_none, squeeze0,
                      add_reduce0, maximum_reduce, repeat0, repeat_minus1, in_untaken_where]
ACCEPTED_METHODS = [method_sum0, method_max_minus1, method_argmin0, method_cumsum0]
REFUSED = [sum1, sum_tuple, max_minus2, argmax1, cumsum1, mean0, std0, var_minus1, sort0,
           sort_default, flip0, squeeze_tuple, add_accumulate, method_sum_tuple,
           sum_bool_axis, roll0, repeat1]
ZERO_D_VALUES = [np.float32(1.5), np.array(-2.0), np.array(3, np.int64), np.array(True)]


def _ids(fns):
    return [f.__name__ for f in fns]


@pytest.mark.parametrize("fn", ACCEPTED_FUNCTIONS + ACCEPTED_METHODS,
                         ids=_ids(ACCEPTED_FUNCTIONS + ACCEPTED_METHODS))
def test_reductions_accept_axis_0_of_0d(fn):
    for value in ZERO_D_VALUES:
        assert_same(jit_ps(fn)(value), fn(value))


@pytest.mark.parametrize("fn", ACCEPTED_FUNCTIONS, ids=_ids(ACCEPTED_FUNCTIONS))
def test_reductions_accept_axis_0_of_python_numbers(fn):
    for number in (4, -2.5):     # traced Python scalars (weak): NumPy makes them 0-d
        assert_same(jit_ps(fn)(number), fn(number))


@pytest.mark.parametrize("fn", REFUSED, ids=_ids(REFUSED))
def test_reductions_refuse_what_numpy_refuses_for_0d(fn):
    value = np.array(1.5)
    with pytest.raises((ValueError, TypeError)):
        fn(value)
    with pytest.raises(PSCError) as err:
        jit_ps(fn)(value)
    assert "test_fuzz_regressions_numpy.py:" in str(err.value)


def fuzz_dd1af1bc3833(a0):
    v1 = np.add(a0, (a0 - 1.0).astype(np.int64))
    w2 = 0
    while w2 < 3 and (np.min(a0[::-1]) < -3.25):
        w2 += 1
        t3 = np.full(3, 2.0)
        t3 -= a0
        t3 = (t3 + (a0).sum())
        for i4 in range(3):
            t3 = (t3 + w2)
            v5 = np.where(((v1).min() / (np.abs(np.max(w2, axis=0)) + 1.0)) > -3.25,
                          (np.multiply(i4, i4)).sum(), (t3.astype(np.float64)).sum())
    v6 = a0
    return v6


def test_fuzz_reproducer_dd1af1bc3833():
    for a0 in (np.array([1.0, 2.0, 3.0], np.float32), np.array([-4.0, 2.0, 3.0], np.float32)):
        same_as_numpy(fuzz_dd1af1bc3833, a0)
