"""Python's builtins on traced values (issue 17, item 4): ``max``, ``min``, ``sum``,
``round``, ``pow``, ``abs``, ``divmod``, ``bool``, ``int``, ``float``, ``complex``; and
``x.shape = n`` on a local array.

Differential: each function runs as plain Python + NumPy and under ``jit_ps``; results must
agree in value *and* type: a Python scalar where Python gives one (``round(np.float64)``
is an ``int``), a NumPy scalar of the same dtype otherwise, bit for bit (the sign of zero,
NaN).  Errors are the same class as Python's (``ValueError``, ``TypeError``) at the line.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import assert_same, marked_line
from runtime.errors import PSCError
from transpiler import jit_ps

HERE = __file__
NAN, NEG0 = float("nan"), -0.0


def exactly(actual, expected):
    """Same structure, same types (Python scalar vs NumPy scalar, dtype), same bits."""
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            exactly(a, e)
        return
    assert type(actual) is type(expected), (type(actual), type(expected), actual, expected)
    if isinstance(expected, np.ndarray):
        assert_same(actual, expected, rtol=0, atol=0)
        assert np.array_equal(np.signbit(actual), np.signbit(expected)) or \
            expected.dtype.kind not in "f"
        return
    if isinstance(expected, (float, np.floating)):
        assert (math.isnan(actual) and math.isnan(expected)) or \
            (actual == expected and math.copysign(1, actual) == math.copysign(1, expected)), \
            (actual, expected)
    elif isinstance(expected, (complex, np.complexfloating)):
        assert repr(complex(actual)) == repr(complex(expected)), (actual, expected)
    else:
        assert actual == expected, (actual, expected)


def check(fn, *args, static=()):
    exactly(jit_ps(fn, static_argnames=static)(*args), fn(*args))


def raises_at(fn, args, cls, marker, match=None):
    """``jit_ps(fn)(*args)`` raises a PSCError that is also ``cls``, at the marked line; so
    does plain Python (with Python's own class)."""
    with pytest.raises(cls):
        fn(*args)
    with pytest.raises(cls, match=match) as info:
        jit_ps(fn)(*args)
    assert isinstance(info.value, PSCError)
    assert info.value.location.line == marked_line(HERE, marker), str(info.value)


# --- max and min of several arguments ---------------------------------------------------

def max_min_pair(a, b):
    return max(a, b), min(a, b), max(b, a), min(b, a)


PAIRS = [(NAN, 1.0), (1.0, NAN), (NEG0, 0.0), (0.0, NEG0), (2.0, 2.0), (-1.5, 3.0),
         (np.inf, NAN), (-np.inf, np.inf)]


@pytest.mark.parametrize("a, b", PAIRS)
def test_max_min_of_two_numpy_scalars_first_maximal_wins(a, b):
    check(max_min_pair, np.float64(a), np.float64(b))
    check(max_min_pair, np.float32(a), np.float32(b))


@pytest.mark.parametrize("a, b", PAIRS[:4])
def test_max_min_of_two_python_floats_stay_python_floats(a, b):
    check(max_min_pair, a, b)


def max_of_three(a, b, c):
    return max(a, b, c), min(a, b, c), max(c, b, a, b), min(b, c, a, a)


@pytest.mark.parametrize("values", [(3, -2, 7), (-9, -9, -9), (6, 6, 1)])
def test_max_min_of_ints(values):
    check(max_of_three, *map(np.int32, values))
    check(max_of_three, *map(np.int64, values))


def max_mixed(i, x):
    return max(i, x)


def test_mixed_dtypes_unify_by_numpy_promotion():
    # Python returns whichever argument wins, with its own type; a traced program has one
    # type for both outcomes: NumPy's promotion of the pair (documented).
    assert max_mixed(np.int32(1), np.float64(2.5)) == jit_ps(max_mixed)(np.int32(1),
                                                                        np.float64(2.5))
    exactly(jit_ps(max_mixed)(np.int32(3), np.float64(2.5)), np.float64(3.0))
    exactly(jit_ps(max_mixed)(np.float32(0.5), 1), np.float32(1.0))


def max_with_key(a, b, c):
    values = (a, b, c)
    return (max(a, b, c, key=abs), min(a, b, c, key=lambda v: -v), max([a, b], key=abs),
            max(range(3), key=lambda i: values[i]), min([2, 0, 1], key=lambda i: values[i]))


def test_key():
    check(max_with_key, np.float64(-3.0), np.float64(2.0), np.float64(3.0))
    check(max_with_key, np.int32(1), np.int32(-4), np.int32(4))


# --- max and min over one iterable --------------------------------------------------------

def max_min_of_sequences(x, y, z):
    return (max([x, y, z]), min((x, y, z)), max(v * 2 for v in (x, y, z)),
            min([x], default=y), max([], default=z))


def test_lists_tuples_generators():
    check(max_min_of_sequences, np.float64(NAN), np.float64(2.0), np.float64(-1.0))
    check(max_min_of_sequences, np.float64(1.0), np.float64(NAN), np.float64(3.0))


def max_min_of_array(x):
    return max(x), min(x)


@pytest.mark.parametrize("values", [
    [1.5, NAN, 2.5, -3.0], [NAN, 1.0, 5.0], [0.0, NEG0, -1.0], [NEG0, 0.0, 0.0],
    [1.0, 1.0], [-np.inf, -np.inf, NAN], [7.0], list(np.linspace(-1, 1, 40)) + [NAN, 2.0]])
def test_traced_float_array_iterates_its_elements(values):
    check(max_min_of_array, np.array(values, np.float64))
    check(max_min_of_array, np.array(values, np.float32))


@pytest.mark.parametrize("x", [np.array([3, -1, 7, 7], np.int16), np.array([True, False]),
                               np.array([5], np.uint8),
                               np.array([1 + 2j, 1 + 1j, 3j], np.complex128)])
def test_traced_int_bool_complex_arrays(x):
    check(max_min_of_array, x)


def test_rows_of_one_element_compare():
    check(max_min_of_array, np.array([[2.0], [5.0], [NAN]]))


def max_of_2d(x):
    return max(x)  # ERR:max_rows


def max_of_vectors(x, y):
    return max(x, y)  # ERR:max_vectors


def max_of_empty(x):
    return max(x)  # ERR:max_empty


def max_default_and_args(x, y):
    return max(x, y, default=0)  # ERR:max_default


def max_of_scalar(x):
    return max(x)  # ERR:max_scalar


def test_errors_are_pythons_at_the_line():
    raises_at(max_of_2d, (np.ones((2, 3)),), ValueError, "ERR:max_rows", "ambiguous")
    raises_at(max_of_vectors, (np.ones(2), np.zeros(2)), ValueError, "ERR:max_vectors",
              "ambiguous")
    raises_at(max_of_empty, (np.ones(0),), ValueError, "ERR:max_empty", "empty")
    raises_at(max_default_and_args, (1.0, 2.0), TypeError, "ERR:max_default", "default")
    raises_at(max_of_scalar, (np.float64(1.0),), TypeError, "ERR:max_scalar")


# --- sum ----------------------------------------------------------------------------------

def sums(x):
    return sum(x), sum(x, 10), sum(x, start=np.float32(0.5)), sum(v for v in x)


@pytest.mark.parametrize("x", [
    np.array([0.1, 0.2, 0.3, 1e16, -1e16, 0.7]),
    np.random.default_rng(0).standard_normal(50),                  # a staged loop
    np.random.default_rng(1).standard_normal(20).astype(np.float32),
    np.array([100, 100, 100, -7] * 10, np.int8),                    # wraps around in int8
    np.array([True, False, True] * 7),
    np.arange(12.0).reshape(4, 3), np.arange(60.0).reshape(20, 3) / 7])
def test_sum_is_pythons_left_fold(x):
    check(sums, x)


def sum_list(a, b, c):
    return sum([a, b, c]), sum((a, b), c), sum([a, b, c], 0.0)


def test_sum_of_lists():
    check(sum_list, np.float32(0.1), np.float32(0.2), np.float32(0.3))
    check(sum_list, 1.5, 2, 3.25)
    check(sum_list, np.int8(100), np.int8(100), np.int8(100))


# --- round, pow, abs, divmod --------------------------------------------------------------

def rounds(x):
    return round(x), round(x, 1), round(x, 0), round(x, -1)


# XLA:CPU computes a 0-d ``rint(x * 10) / 10`` as ``rint(x * 10) * 0.1`` (1.25 -> 12 ->
# 1.2000000000000002): np.round(x, 1) of a traced NumPy scalar, which round(x, 1) is,
# is off by one ulp there (arrays are not).  Found here; not fixed on this branch.
_SCALAR_DIVISION = pytest.mark.xfail(strict=True, reason="XLA:CPU divides a 0-d value by a "
                                     "constant as a multiplication by its reciprocal")


@pytest.mark.parametrize("value", [2.5, 3.5, -2.5, 0.5, 17.0, -0.4,
                                   pytest.param(1.25, marks=_SCALAR_DIVISION),
                                   pytest.param(1234.5678, marks=_SCALAR_DIVISION)])
def test_round_of_numpy_floats_gives_python_ints(value):
    check(rounds, np.float64(value))
    check(rounds, np.float32(value))
    check(rounds, np.float16(value))


@pytest.mark.parametrize("value", [17, 15, 25, -15, 125, 0])
def test_round_of_ints(value):
    check(rounds, np.int32(value))
    check(rounds, np.int8(value) if -128 <= value < 128 else np.int16(value))
    check(rounds, value)   # a Python int: exact halves to even at every digit


def round_python_float(x):
    return round(x)


def round_python_float_digits(x):
    return round(x, 2)  # ERR:round_float_digits


def round_array(x):
    return round(x)  # ERR:round_array


def round_bool(x):
    return round(x)  # ERR:round_bool


def test_round_of_python_floats_and_errors():
    for value in (2.5, 3.5, -0.5, 1e15 + 0.5):
        check(round_python_float, value)
    with pytest.raises(PSCError, match="exact decimal") as info:
        jit_ps(round_python_float_digits)(2.675)
    assert info.value.location.line == marked_line(HERE, "ERR:round_float_digits")
    raises_at(round_array, (np.ones(2),), TypeError, "ERR:round_array")
    raises_at(round_bool, (np.bool_(True),), TypeError, "ERR:round_bool")


def powers(a, b):
    return pow(a, b), pow(a, 3), abs(a - b), divmod(a, b), abs(-a)


@pytest.mark.parametrize("a, b", [(np.float64(1.5), np.float64(-2.0)),
                                  (np.int32(3), np.int32(4)), (2.5, 3), (7, 2),
                                  (np.int8(-7), np.int8(2))])
def test_pow_abs_divmod(a, b):
    check(powers, a, b)


def modular(a):
    return pow(a, 5, 7), pow(a, 0, 7), pow(a, 123, -1000), pow(a, 3, 2 ** 31)


def modular_numpy(a):
    return pow(a, 5, 7)  # ERR:pow_numpy


def test_three_argument_pow_of_python_ints():
    for value in (3, -3, 0, 123456789, -2 ** 40):
        check(modular, value)
    raises_at(modular_numpy, (np.int64(3),), TypeError, "ERR:pow_numpy", "unsupported operand")


# --- bool, int, float, complex ------------------------------------------------------------

def conversions(x):
    return bool(x), int(x), float(x), complex(x)


@pytest.mark.parametrize("x", [np.float64(-2.7), np.float32(3.9), np.float64(NAN * 0 + 0.0),
                               np.float64(NEG0), np.int16(-5), np.uint8(200),
                               np.bool_(True), np.float64(NAN), 2.5, 7, True])
def test_conversions_give_python_scalars(x):
    if isinstance(x, (float, np.floating)) and math.isnan(x):
        def no_int(x):
            return bool(x), float(x), complex(x)
        check(no_int, x)
    else:
        check(conversions, x)


def int_of_vector(x):
    return int(x)  # ERR:int_vector


def bool_of_vector(x):
    return bool(x)  # ERR:bool_vector


def bool_of_empty(x):
    return bool(x)  # ERR:bool_empty


def test_conversion_errors():
    raises_at(int_of_vector, (np.ones(3),), TypeError, "ERR:int_vector", "0-dimensional")
    raises_at(bool_of_vector, (np.ones(3),), ValueError, "ERR:bool_vector", "ambiguous")
    raises_at(bool_of_empty, (np.ones(0),), ValueError, "ERR:bool_empty", "empty")


def bool_in_if(x, y):
    if bool(x > y):
        z = x - y
    else:
        z = y - x
    if max(x, y) > 1:
        z = z + int(y)
    return z


def test_inside_traced_if():
    for x, y in [(3.0, 1.0), (0.5, 0.75), (NAN, 2.0), (2.0, 2.0)]:
        check(bool_in_if, np.float64(x), np.float64(y))


# --- inside staged loops ------------------------------------------------------------------

def pairs_table(n, seq):
    """Nussinov's shape: element updates by max under traced loop bounds and branches."""
    table = np.zeros((n, n), np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j] + (seq[i] + seq[j] == 3))
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def test_nussinov_like_kernel_stages_its_loops():
    staged = jit_ps(pairs_table, static_argnames=("n",))
    for seed in range(3):
        seq = np.random.default_rng(seed).integers(0, 4, 9).astype(np.int32)
        exactly(staged(9, seq), pairs_table(9, seq))
    # `table[i, j] = ...` makes the loops carry `table` from the first analysis on, so the
    # `if`s on the traced indices are staged, not Python `if`s that force the loops to
    # unroll (n**2 / 2 inner loops in the program)
    text = staged.generated_source
    assert "if j - 1 >= 0:" not in text and text.count("psc.if_stmt(") >= 2
    assert staged.lower(9, seq).count('"stablehlo.while"') == 3


def running_extrema(x):
    best, worst, total = x[0], x[0], 0.0
    for i in range(1, x.shape[0]):
        best = max(best, x[i])
        worst = min(x[i], worst)
        total = total + round(abs(x[i]) * 2) + abs(x[i])
    return best, worst, total


def test_in_a_staged_loop():
    for values in ([1.0, 1.5, 3.0, -2.0], [4.0, 4.0, 1.0], [0.0, NEG0, 2.5, 2.5]):
        check(running_extrema, np.array(values))


# --- x.shape = n --------------------------------------------------------------------------

def reshaped(x, n):
    y = x * 2
    y.shape = (n, -1)
    a, b = np.mgrid[0:n, 0:3]
    a.shape = b.shape = 3 * n
    z = y + 1
    z.shape = z.size
    return y, a, b, z


def test_shape_assignment_on_locals():
    exactly(jit_ps(reshaped, static_argnames=("n",))(np.arange(6.0), 2),
            reshaped(np.arange(6.0), 2))


def shape_of_argument(x):
    x.shape = 6  # ERR:shape_argument
    return x


def shape_of_alias(x):
    y = x * 2
    z = y
    y.shape = 6  # ERR:shape_alias
    return z


def other_attribute(x):
    y = x * 2
    y.dtype = np.float32  # ERR:other_attribute
    return y


@pytest.mark.parametrize("fn, marker", [(shape_of_argument, "ERR:shape_argument"),
                                        (shape_of_alias, "ERR:shape_alias"),
                                        (other_attribute, "ERR:other_attribute")])
def test_shape_assignment_refused_where_numpy_would_differ(fn, marker):
    with pytest.raises(SyntaxError) as info:
        jit_ps(fn)(np.ones((2, 3)))
    assert isinstance(info.value, PSCError)
    assert info.value.location.line == marked_line(HERE, marker)


def transposed_shape(x):
    y = x.T
    y.shape = 6
    return y


def test_static_array_reshaped_in_place_by_numpy():
    # A static local keeps NumPy's own in-place reshape, error included.
    def build():
        return transposed_shape(np.ones((2, 3)))
    with pytest.raises(AttributeError):
        build()
