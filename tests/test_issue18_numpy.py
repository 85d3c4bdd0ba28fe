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
from runtime import PSCError, PSCOverflowError, PSCUnsupportedCallError, PSCValueError
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


# --- 16c. divmod, ufunc methods, unsupported ndarray attributes ---------------------------

def builtin_divmod(a, b):
    return divmod(a, b), divmod(a, 3), divmod(7, b)


def numpy_divmod(a, b):
    return np.divmod(a, b)


@pytest.mark.parametrize("a,b", [
    (np.arange(-5, 5), np.array(3)), (np.arange(-5, 5), np.array(-3)),
    (np.arange(-5.0, 5.0), np.array(-2.5)), (np.arange(-5.0, 5.0), np.array(0.0)),
    (np.arange(-5, 5, dtype=np.int8), np.array(0, np.int8)),
    (np.array([7, -7, 0]), np.array([2, -2, 0])), (7, 2), (-7.5, 2.0),
])
def test_divmod_on_traced_values_is_numpys(a, b):
    same_as_numpy(builtin_divmod, a, b)
    same_as_numpy(numpy_divmod, a, b)


def ufunc_methods(x):
    return (np.add.reduce(x), np.multiply.reduce(x, axis=1), np.maximum.reduce(x, axis=None),
            np.minimum.reduce(x, axis=-1, keepdims=True), np.add.accumulate(x),
            np.multiply.accumulate(x, axis=1), np.logical_or.reduce(x > 3),
            np.logical_and.reduce(x > 0, axis=1), np.add.nin, np.add.reduce(np.arange(4)))


def test_ufunc_reduce_and_accumulate():
    same_as_numpy(ufunc_methods, np.arange(1.0, 7.0).reshape(2, 3))
    same_as_numpy(ufunc_methods, np.arange(6, dtype=np.int32).reshape(2, 3))


def ufunc_outer(x):
    return np.add.outer(x, x)


def test_ufunc_outer_is_supported():
    same_as_numpy(ufunc_outer, np.arange(3.0))


def ufunc_unsupported_method(x):
    return np.heaviside.accumulate(x)  # ufunc-method


def to_file(x):
    x.tofile("never-written")  # tofile
    return x


def item_set(x):
    x.itemset(0, 1.0)  # itemset
    return x


def no_such_attribute(x):
    return x.frobnicate  # frobnicate


def probing(x):
    return hasattr(x, "tofile"), getattr(x, "frobnicate", 3), x.itemsize, x.nbytes


def _marked_line(marker: str) -> int:
    with open(__file__, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    return next(i + 1 for i, text in enumerate(lines) if text.endswith(f"# {marker}"))


@pytest.mark.parametrize("fn,marker,words", [
    (ufunc_unsupported_method, "ufunc-method", ["np.heaviside.accumulate"]),
    (to_file, "tofile", ["ndarray.tofile", "not supported"]),
    (item_set, "itemset", ["itemset"]),   # gone in NumPy 2: no such attribute
    (no_such_attribute, "frobnicate", ["frobnicate"]),
])
def test_unsupported_attribute_is_a_psc_error_at_the_line(fn, marker, words):
    with pytest.raises(PSCUnsupportedCallError) as info:
        jit_ps(fn)(np.arange(3.0))
    message = str(info.value)
    assert f"test_issue18_numpy.py:{_marked_line(marker)}:" in message
    assert all(word in message for word in words), message
    assert info.value.hint


def byteswap_method(x):
    return x.byteswap()


def nonzero_method(x):
    return x.nonzero()


def test_unsupported_ndarray_method_is_named():
    with pytest.raises(PSCUnsupportedCallError) as info:
        jit_ps(byteswap_method)(np.arange(3.0))
    assert "ndarray.byteswap is not supported on traced arrays" in str(info.value)


def test_data_dependent_method_names_size():
    with pytest.raises(PSCError) as info:
        jit_ps(nonzero_method)(np.arange(3.0))
    assert "size=" in str(info.value)


def test_attribute_probing_still_works():
    assert_same(jit_ps(probing)(np.arange(3.0)), (False, 3, 8, 24))
    assert probing(np.arange(3.0))[1:] == (3, 8, 24)


# --- 5b. NumPy 2 rules for Python scalars, negative integer powers, division by zero ------

def plus_300(x):
    return x + 300  # plus-300


def minus_one_uint(x):
    return np.add(x, -1)  # minus-one


@pytest.mark.parametrize("fn,marker", [(plus_300, "plus-300"), (minus_one_uint, "minus-one")])
def test_python_int_that_does_not_fit_the_array_dtype_is_an_error(fn, marker):
    x = np.arange(3, dtype=np.uint8)
    with pytest.raises(OverflowError):
        fn(x)   # the oracle
    with pytest.raises(PSCOverflowError) as info:
        jit_ps(fn)(x)
    assert f"test_issue18_numpy.py:{_marked_line(marker)}:" in str(info.value)
    assert "out of bounds for uint8" in str(info.value)


def compare_with_big_ints(x):
    return (x < 300, x <= 300, x > 300, x >= 300, x == 300, x != 300,
            x < -1, x <= -1, x > -1, x >= -1, x == -1, x != -1,
            300 > x, -1 < x, 300 == x, np.less(x, 2 ** 70), np.greater_equal(-2 ** 70, x),
            x < 3, x == 2)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint32, np.int64,
                                   np.uint64])
def test_comparison_with_a_python_int_outside_the_dtype_is_exact(dtype):
    same_as_numpy(compare_with_big_ints, np.arange(4, dtype=dtype))


def power_minus_one(x):
    return x ** -1  # power-minus-one


def power_of_array(x):
    return np.power(x, np.array([1, -2, 3]))  # power-array


def float_power_is_fine(x):
    return x ** -1.0, np.power(x, -2.0), x ** 2, x.astype(np.float64) ** -1


@pytest.mark.parametrize("fn,marker", [(power_minus_one, "power-minus-one"),
                                       (power_of_array, "power-array")])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.bool_])
def test_integer_to_a_static_negative_power_is_an_error(fn, marker, dtype):
    x = np.arange(1, 4).astype(dtype)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        fn(x)   # the oracle
    with pytest.raises(PSCValueError) as info:
        jit_ps(fn)(x)
    assert "Integers to negative integer powers are not allowed" in str(info.value)
    assert f"test_issue18_numpy.py:{_marked_line(marker)}:" in str(info.value)


def test_float_powers_with_negative_exponents_still_work():
    same_as_numpy(float_power_is_fine, np.arange(1, 4))


def division_family(a, b):
    return a // b, a % b, np.floor_divide(a, b), np.remainder(a, b), np.divmod(a, b), \
        np.fmod(a, b)


INT_OPERANDS = np.array([0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100])
# No denormals: XLA:CPU flushes them to zero (a known limit: FTZ/DAZ are set by its runtime).
FLOAT_OPERANDS = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 1e30, -1e30, 1e-30,
                           np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint32, np.uint64])
def test_integer_division_by_zero_and_negative_operands_match_numpy(dtype):
    info = np.iinfo(dtype)
    values = [int(v) for v in INT_OPERANDS] + [info.min, info.max, info.min + 1]
    values = np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)
    a, b = (np.repeat(values, len(values)), np.tile(values, len(values)))
    same_as_numpy(division_family, a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_division_by_zero_nan_and_infinity_match_numpy(dtype):
    values = FLOAT_OPERANDS.astype(dtype)
    a, b = (np.repeat(values, len(values)), np.tile(values, len(values)))
    expected = numpy_result(division_family, a, b)
    actual = jit_ps(division_family)(a, b)
    assert_same(actual, expected, rtol=0, atol=0)
    for got, want in zip(actual[:4], expected[:4]):   # signed zeros too
        assert np.array_equal(np.signbit(np.asarray(got)), np.signbit(want))


# --- 7. float16 reductions accumulate in float32 ------------------------------------------

def reductions_16(x):
    return (x.sum(), np.sum(x, axis=-1), x.mean(), x.mean(axis=-1, keepdims=True), x.var(),
            x.std(axis=-1), np.var(x, ddof=1), np.prod(x / 50, axis=-1))


@pytest.mark.parametrize("x", [
    np.arange(100, dtype=np.float16),
    np.arange(240, dtype=np.float16).reshape(2, 120),
    np.random.default_rng(0).uniform(-3, 3, (3, 700)).astype(np.float16),
    np.full(3000, 1.0, np.float16),
], ids=["arange100", "2x120", "random", "ones3000"])
def test_float16_reductions_over_the_last_axis_match_numpy(x):
    expected = numpy_result(reductions_16, x)
    assert_same(jit_ps(reductions_16)(x), expected, rtol=0, atol=0)


def test_issue_float16_sum_reproducer_is_exact():
    x = np.arange(100, dtype=np.float16)
    assert jit_ps(reductions_16)(x)[0] == np.sum(x) == np.float16(4952)


def test_float16_variance_overflows_like_numpy():
    """NumPy computes a float16 variance in float16: its sum of squares overflows."""
    x = np.arange(100, dtype=np.float16)
    assert np.isinf(numpy_result(reductions_16, x)[4])
    assert np.isinf(np.asarray(jit_ps(reductions_16)(x)[4]))


def cumulative(x):
    return np.cumsum(x), np.cumprod(x / 10)


def test_float16_cumsum_accumulates_in_float32():
    """Known limit: NumPy's float16 cumsum rounds every partial sum to float16 (a strictly
    sequential recurrence); ours accumulates in float32 and rounds each prefix, which
    equals NumPy while the partial sums are exact in float16."""
    x = np.arange(60, dtype=np.float16)
    assert_same(jit_ps(cumulative)(x), numpy_result(cumulative, x), rtol=3e-3, atol=0)
    long = np.arange(100, dtype=np.float16)
    exact = np.cumsum(long.astype(np.float32)).astype(np.float16)
    assert_same(jit_ps(cumulative)(long)[0], exact, rtol=0, atol=0)


def rounding(x):
    return (np.round(x), np.round(x, 2), np.around(x, -1), x.round(1), round(x[0], 3),
            round(x.sum(), -1), np.round(x * 0 + 2.5))


def builtin_round_of_array(x):
    return round(x, 2)


def builtin_round_of_scalar(x):
    return round(x[0])


@pytest.mark.parametrize("x", [
    np.array([1.25, 2.675, -0.5, 0.5, 1.5, 2.5, -2.5, 1234.5678, np.nan, -np.inf]),
    np.array([1.25, 2.675, -0.5, 1234.5678], np.float32),
    np.array([15, 25, -35, 7]), np.array([15, 25, -35, 7], np.int8),
])
def test_round_is_numpys(x):
    same_as_numpy(rounding, x)


def test_builtin_round_of_an_array_is_refused_and_of_a_scalar_is_a_python_int():
    x = np.array([1.25, 2.5])
    with pytest.raises(TypeError):
        builtin_round_of_array(x)   # the oracle: ndarray has no __round__
    with pytest.raises(PSCError):
        jit_ps(builtin_round_of_array)(x)
    # a Python int in Python: a traced weak int64 in the program, a Python int as a result
    # (tests/test_builtins_traced.py has the rest)
    assert type(builtin_round_of_scalar(x)) is int
    assert jit_ps(builtin_round_of_scalar)(x) == builtin_round_of_scalar(x)
    assert type(jit_ps(builtin_round_of_scalar)(x)) is int


def python_int_powers(n):
    return n ** -1, n ** -2, n ** 2, n ** 0


@pytest.mark.parametrize("n", [2, -3, 1, 7])
def test_traced_python_int_to_a_negative_power_is_a_float_as_in_python(n):
    same_as_numpy(python_int_powers, n)
    # a Python float in Python: weak in the program, so a Python float again as the result
    assert type(jit_ps(python_int_powers)(n)[0]) is type(python_int_powers(n)[0]) is float


@pytest.mark.parametrize("dst", INT_DTYPES + [np.float32], ids=lambda d: np.dtype(d).name)
def test_complex_casts_drop_the_imaginary_part_like_numpy(dst):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = np.array(SPECIAL_FLOATS) + 1j * np.array(SPECIAL_FLOATS[::-1])
        x = np.concatenate([x, [1j, -2j, 0j]])
        expected = numpy_scalar_cast(x, dst)
    assert_same(jit_ps(astype_to, static_argnames="dtype")(x, dtype=dst), expected)


def sum_over(x, axis):
    return np.sum(x, axis=axis), np.mean(x, axis=axis)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16],
                         ids=["float16", "bfloat16"])
def test_16_bit_sums_over_any_axis_accumulate_in_float32(dtype):
    """Known limit: NumPy rounds to 16 bits after every addition when it reduces over a
    non-innermost axis of float16, and always for bfloat16 (ml_dtypes has no pairwise
    sum): ones(3000).sum() is 256 in bfloat16.  We accumulate in float32 everywhere, the
    way NumPy treats a contiguous float16 axis."""
    x = np.ones((3000, 2), dtype)
    f = jit_ps(sum_over, static_argnames="axis")
    for axis in (0, 1, None):
        wide = x.astype(np.float32)
        expected = (np.sum(wide, axis=axis).astype(dtype),
                    np.mean(wide, axis=axis).astype(dtype))
        assert_same(f(x, axis=axis), expected, rtol=0, atol=0)


def set_traced_slice(y, i):
    y = y.copy()
    y[i:i + 2] = 0.0  # traced-slice
    return y


def test_traced_slice_bounds_in_a_write_are_an_error_not_a_clamped_write():
    # issue 17: a slice of static length at a traced start is a dynamic update slice;
    # where NumPy would clip it (fewer elements written) the call raises at the line
    from runtime import PSCRuntimeIndexError
    assert_same(jit_ps(set_traced_slice)(np.arange(5.0), 2), set_traced_slice(np.arange(5.0), 2))
    with pytest.raises(PSCRuntimeIndexError) as info:
        jit_ps(set_traced_slice)(np.arange(5.0), 4)
    assert f"test_issue18_numpy.py:{_marked_line('traced-slice')}:" in str(info.value)
