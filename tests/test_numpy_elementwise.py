"""Element-wise rules against NumPy: every ufunc rule, every dtype, 0-d/empty/2-d shapes."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime import PSCError, PSCTypeError, StagedFunction, translate
from runtime.numpy_rules.elementwise import UFUNC_IMPLS

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
SHAPES = [(), (0,), (2, 3)]

# Inputs inside each function's domain, so both sides compute the same finite thing (NaN
# and inf cases are tested separately below).
_POSITIVE = {np.log, np.log2, np.log10, np.sqrt, np.reciprocal, np.arccosh}
_UNIT = {np.arcsin, np.arccos, np.arctanh}


def _operand(ufunc, dtype, shape, which, rng):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if ufunc in (np.left_shift, np.right_shift) and which == 1:
        return rng.integers(0, 8, shape).astype(dtype)
    if ufunc in (np.power, np.float_power) and which == 1:
        return rng.integers(0, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        low = 1 if ufunc in _POSITIVE else -20
        values = rng.integers(low, 20, shape)
        if ufunc in _UNIT:
            values = rng.integers(0, 1, shape)
        return values.astype(dtype)
    if ufunc in _POSITIVE:
        return rng.uniform(1.1, 5.0, shape).astype(dtype)
    if ufunc in _UNIT:
        return rng.uniform(-0.9, 0.9, shape).astype(dtype)
    return rng.uniform(-5.0, 5.0, shape).astype(dtype)


def _numpy(ufunc, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ufunc(*args)


def _tolerance(dtype):
    return (2e-5, 1e-6) if dtype in (np.float32,) else (1e-12, 1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ufunc", list(UFUNC_IMPLS), ids=lambda u: u.__name__)
def test_ufunc_matches_numpy(ufunc, dtype, rng):
    inputs = [[_operand(ufunc, dtype, shape, i, rng) for i in range(ufunc.nin)]
              for shape in SHAPES]
    try:
        expected = [_numpy(ufunc, *args) for args in inputs]
    except TypeError:   # NumPy rejects this dtype: so must we, at build time
        with pytest.raises(PSCTypeError):
            run_rule(ufunc, *inputs[0])
        return

    def build(b, groups):
        return [translate(b, ufunc, *args) for args in groups]
    actual = StagedFunction(build, name=ufunc.__name__)(inputs)
    rtol, atol = _tolerance(np.result_type(*inputs[0]))
    if ufunc in (np.arctanh, np.arcsinh, np.arccosh, np.cbrt, np.tan, np.sinh, np.cosh):
        rtol = max(rtol, 1e-5)
    assert_same(actual, expected, rtol=rtol, atol=atol)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -2.5])


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp,
                                   np.logaddexp2, np.floor_divide, np.remainder, np.fmod,
                                   np.arctan2, np.copysign, np.hypot],
                         ids=lambda u: u.__name__)
def test_binary_special_values(ufunc):
    x, y = np.meshgrid(SPECIAL, SPECIAL)
    assert_same(run_rule(ufunc, x, y), _numpy(ufunc, x, y))


@pytest.mark.parametrize("ufunc", [np.isnan, np.isinf, np.isfinite, np.signbit, np.sign,
                                   np.floor, np.ceil, np.trunc, np.rint, np.absolute,
                                   np.exp, np.log1p, np.tanh, np.square],
                         ids=lambda u: u.__name__)
def test_unary_special_values(ufunc):
    assert_same(run_rule(ufunc, SPECIAL), _numpy(ufunc, SPECIAL))


def test_rint_rounds_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.4999])
    assert_same(run_rule(np.rint, x), np.rint(x))


def test_integer_division_and_remainder_signs_and_zero():
    x = np.array([7, -7, 7, -7, 0, 5, -5], np.int32)
    y = np.array([2, 2, -2, -2, 3, 0, 0], np.int32)
    assert_same(run_rule(np.floor_divide, x, y), _numpy(np.floor_divide, x, y))
    assert_same(run_rule(np.remainder, x, y), _numpy(np.remainder, x, y))
    assert_same(run_rule(np.fmod, x, y), _numpy(np.fmod, x, y))


def test_unsigned_arithmetic():
    x = np.array([1, 200, 7, 255], np.uint8)
    y = np.array([2, 100, 0, 3], np.uint8)
    for ufunc in (np.add, np.subtract, np.floor_divide, np.remainder, np.right_shift,
                  np.less, np.maximum, np.sign, np.absolute):
        args = (x, y) if ufunc.nin == 2 else (x,)
        assert_same(run_rule(ufunc, *args), _numpy(ufunc, *args))


# --- promotion: NumPy 2 rules with weak Python scalars -------------------------------------

PROMOTION_CASES = [
    (np.float32, 2.0), (np.float32, 2), (np.int32, 2.5), (np.int8, 3), (np.int64, True),
    (np.bool_, 1), (np.bool_, 1.5), (np.uint8, 7), (np.float16, 2.0), (np.int32, 1j),
]


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.true_divide, np.less,
                                   np.maximum, np.power],
                         ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype,scalar", PROMOTION_CASES)
def test_weak_python_scalars_promote_like_numpy(ufunc, dtype, scalar):
    x = np.array([1, 2, 3]).astype(dtype)
    try:
        expected = _numpy(ufunc, x, scalar)
    except TypeError:
        with pytest.raises(PSCError):
            run_rule(ufunc, x, scalar, static=(1,))
        return
    assert_same(run_rule(ufunc, x, scalar, static=(1,)), expected)   # static scalar
    assert_same(run_rule(ufunc, scalar, x, static=(0,)), _numpy(ufunc, scalar, x))
    assert_same(run_rule(ufunc, x, scalar), expected)   # traced Python scalar stays weak


@pytest.mark.parametrize("left,right", [(np.int8, np.float32), (np.int32, np.float32),
                                        (np.int64, np.float32), (np.uint8, np.int8),
                                        (np.uint32, np.int32), (np.float16, np.int16),
                                        (np.bool_, np.int8), (np.float32, np.float64)])
def test_strong_dtype_promotion(left, right):
    x = np.array([1, 2, 3]).astype(left)
    y = np.array([3, 2, 1]).astype(right)
    assert_same(run_rule(np.add, x, y), x + y)
    assert_same(run_rule(np.add, x, right(2)), x + right(2))   # NumPy scalars are strong


def test_two_weak_traced_scalars_stay_weak():
    def build(b, s, t, x):
        return translate(b, np.add, translate(b, np.multiply, s, t), x)
    x = np.ones(3, np.float32)
    assert_same(StagedFunction(build)(2.0, 3, x), 2.0 * 3 + x)


@pytest.mark.parametrize("shapes", [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (2, 2)),
                                    ((0, 3), (1, 3)), ((5, 1, 2), (1, 3, 1))])
def test_broadcasting(shapes):
    x = np.arange(np.prod(shapes[0]), dtype=np.float64).reshape(shapes[0])
    y = np.arange(np.prod(shapes[1]), dtype=np.float64).reshape(shapes[1]) + 1
    assert_same(run_rule(np.subtract, x, y), x - y)


def test_broadcast_mismatch_is_a_shape_error():
    with pytest.raises(PSCError, match=r"could not be broadcast together with shapes "
                                       r"\(3,\) \(4,\)"):
        run_rule(np.add, np.ones(3), np.ones(4))


def test_boolean_subtract_is_rejected_like_numpy():
    with pytest.raises(PSCTypeError, match="subtract"):
        run_rule(np.subtract, np.array([True]), np.array([False]))


def test_out_argument_whose_result_is_used_is_rejected():
    # a call statement `np.add(a, b, out)` updates `out` (test_argument_updates); the rule
    # itself sees only calls whose result is used
    with pytest.raises(PSCTypeError, match="on its own line"):
        run_rule(np.add, np.ones(2), np.ones(2), out=np.ones(2))
    with pytest.raises(PSCTypeError, match="on its own line"):
        run_rule(np.add, np.ones(2), np.ones(2), np.ones(2))


@pytest.mark.parametrize("op,ufunc", [(operator.add, np.add), (operator.truediv, np.divide),
                                      (operator.floordiv, np.floor_divide),
                                      (operator.mod, np.remainder), (operator.pow, np.power),
                                      (operator.lt, np.less), (operator.and_, np.bitwise_and),
                                      (operator.xor, np.bitwise_xor)])
def test_python_operators_mean_numpy_ufuncs(op, ufunc):
    x = np.array([5, -3, 8], np.int64)
    y = np.array([2, 3, 3], np.int64)
    assert_same(run_rule(op, x, y), _numpy(ufunc, x, y))


@pytest.mark.parametrize("op", [operator.neg, operator.invert, operator.abs, abs])
def test_unary_python_operators(op):
    x = np.array([5, -3, 0], np.int32)
    assert_same(run_rule(op, x), op(x))


def test_dtype_keyword_sets_the_loop():
    x = np.array([1, 2, 3], np.int32)
    assert_same(run_rule(np.add, x, x, dtype=np.float32), np.add(x, x, dtype=np.float32))
