"""The composed numpy.linalg functions (runtime/numpy_rules/linalg_composite.py) against
NumPy itself: values, dtypes and shapes of matrix_power, multi_dot, tensorsolve, tensorinv
and the numpy.linalg aliases (cross, outer, trace, vecdot, matmul, diagonal,
matrix_transpose, tensordot), and the errors NumPy raises."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime import StagedFunction, translate
from runtime.errors import PSCError, PSCShapeError, PSCTracedValueError, PSCTypeError, \
    PSCValueError

F32, F64, I8, I64, BOOL, C64, C128 = (np.float32, np.float64, np.int8, np.int64, np.bool_,
                                      np.complex64, np.complex128)


def arr(shape, dtype=F64, seed=0):
    rng = np.random.default_rng(seed + 11 * len(shape) + sum(shape))
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-3, 4, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def well_conditioned(shape, dtype=F64, seed=0):
    n = shape[-1]
    return (arr(shape, dtype, seed) + n * np.eye(n)).astype(dtype)


def check(fn, *args, static=(), **kwargs):
    expected = fn(*args, **kwargs)
    static = set(static) | {i for i, a in enumerate(args) if not isinstance(a, np.ndarray)}
    actual = run_rule(fn, *args, static=static, **kwargs)
    low = any(np.asarray(a).dtype in (np.dtype(F32), np.dtype(C64)) for a in args)
    assert_same(actual, expected, **(dict(rtol=2e-4, atol=2e-5) if low else
                                     dict(rtol=1e-9, atol=1e-11)))


# --- matrix_power -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64, C128, I8, I64, BOOL])
@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_matrix_power_dtypes(dtype, n):
    check(np.linalg.matrix_power, arr((3, 3), dtype), n)


@pytest.mark.parametrize("n", [-1, -3])
@pytest.mark.parametrize("dtype", [F64, F32, I64])
def test_matrix_power_negative(dtype, n):
    a = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], dtype)
    check(np.linalg.matrix_power, a, n)


def test_matrix_power_stack_and_empty():
    check(np.linalg.matrix_power, arr((2, 4, 3, 3)), 5)
    check(np.linalg.matrix_power, arr((2, 0, 0)), 4)


def test_matrix_power_errors():
    with pytest.raises(PSCShapeError, match="at least two-dimensional"):
        run_rule(np.linalg.matrix_power, arr((3,)), 2, static=(1,))
    with pytest.raises(PSCShapeError, match="square"):
        run_rule(np.linalg.matrix_power, arr((2, 3)), 2, static=(1,))
    with pytest.raises(PSCTypeError, match="exponent must be an integer"):
        run_rule(np.linalg.matrix_power, arr((2, 2)), 2.0, static=(1,))
    with pytest.raises(PSCTracedValueError):
        run_rule(np.linalg.matrix_power, arr((2, 2)), np.int64(2))


# --- multi_dot ----------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [
    [(3, 4), (4, 5)], [(4,), (4, 2), (2,)], [(2, 30), (30, 5), (5, 40)],
    [(40, 5), (5, 30), (30, 2)], [(6,), (6, 10), (10, 3), (3, 8), (8,)],
    [(10, 30), (30, 5), (5, 60), (60, 7)], [(3,), (3, 4), (4, 5)], [(2, 3, 4), (4,)]])
def test_multi_dot(shapes):
    arrays = [arr(s, seed=i) for i, s in enumerate(shapes)]
    expected = np.linalg.multi_dot(arrays)
    assert_same(_multi_dot(arrays), expected, rtol=1e-10, atol=1e-11)


def _multi_dot(arrays):
    return StagedFunction(lambda b, *v: translate(b, np.linalg.multi_dot, list(v)))(*arrays)


def test_multi_dot_dtypes_and_order():
    # mixed dtypes promote through the same pairwise order as NumPy
    arrays = [arr((2, 3), I64), arr((3, 4), F32, 1), arr((4, 2), I8, 2)]
    assert_same(_multi_dot(arrays), np.linalg.multi_dot(arrays), rtol=1e-5, atol=1e-5)
    arrays = [arr((2, 3), BOOL), arr((3, 4), BOOL, 1), arr((4, 2), BOOL, 2)]
    assert_same(_multi_dot(arrays), np.linalg.multi_dot(arrays))


def test_multi_dot_errors():
    with pytest.raises(PSCValueError, match="at least two"):
        _multi_dot([arr((2, 2))])
    with pytest.raises(PSCShapeError, match="two-dimensional"):
        _multi_dot([arr((2, 2, 2)), arr((2, 2)), arr((2, 2))])
    with pytest.raises(PSCShapeError):
        _multi_dot([arr((2, 3)), arr((2, 2)), arr((2, 2))])


# --- tensorsolve, tensorinv ------------------------------------------------------------------


def test_tensorsolve():
    a = well_conditioned((6, 6)).reshape(2, 3, 6)
    check(np.linalg.tensorsolve, a, arr((2, 3)))
    a = well_conditioned((6, 6)).reshape(6, 2, 3)
    check(np.linalg.tensorsolve, a, arr((6,)))
    a4 = well_conditioned((6, 6)).reshape(2, 3, 3, 2)
    check(np.linalg.tensorsolve, a4, arr((2, 3)))
    check(np.linalg.tensorsolve, np.moveaxis(a4, 0, 3), arr((3, 3), seed=2)[:, :2], axes=(0,))
    check(np.linalg.tensorsolve, a4.astype(F32), arr((2, 3), F32))
    check(np.linalg.tensorsolve, np.eye(4, dtype=I64).reshape(4, 2, 2), np.arange(4))


def test_tensorsolve_errors():
    with pytest.raises(PSCShapeError, match="prod"):
        run_rule(np.linalg.tensorsolve, arr((2, 3, 4)), arr((2, 3)))
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.tensorsolve, arr((2, 2, 4)), arr((2, 2)), axes=(5,))


@pytest.mark.parametrize("shape,ind", [((4, 6, 8, 3), 2), ((24, 8, 3), 1), ((3, 3), 1)])
def test_tensorinv(shape, ind):
    rows = int(np.prod(shape[ind:]))
    a = well_conditioned((rows, rows)).reshape(shape)
    check(np.linalg.tensorinv, a, ind=ind)


def test_tensorinv_errors():
    with pytest.raises(PSCValueError, match="Invalid ind"):
        run_rule(np.linalg.tensorinv, arr((2, 2)), ind=0)
    with pytest.raises(PSCShapeError, match="square"):
        run_rule(np.linalg.tensorinv, arr((2, 3, 4)), ind=1)


# --- the numpy.linalg aliases ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64, I64, C128])
def test_cross(dtype):
    check(np.linalg.cross, arr((3,), dtype), arr((3,), dtype, 1))
    check(np.linalg.cross, arr((4, 3), dtype), arr((2, 1, 3), dtype, 1))


def test_cross_axis_and_promotion():
    check(np.linalg.cross, arr((3, 4)), arr((3, 1), seed=1), axis=0)
    check(np.linalg.cross, arr((2, 3, 4), I8), arr((3, 4), F32, seed=1), axis=-2)
    check(np.linalg.cross, np.array([1, 2, 3], np.uint8), np.array([4, 5, 6], np.int8))


def test_cross_errors():
    with pytest.raises(PSCValueError, match="3-dimensional vectors"):
        run_rule(np.linalg.cross, arr((2,)), arr((2,)))
    with pytest.raises(PSCValueError, match="3-dimensional vectors"):
        run_rule(np.linalg.cross, arr((3, 2)), arr((3, 2)))
    with pytest.raises(PSCTypeError, match="boolean subtract"):
        run_rule(np.linalg.cross, arr((3,), BOOL), arr((3,), BOOL))


@pytest.mark.parametrize("dtype", [F32, I64, BOOL, C64])
def test_outer(dtype):
    check(np.linalg.outer, arr((3,), dtype), arr((4,), dtype, 1))


def test_outer_refuses_nd():
    check(np.linalg.outer, arr((3,), I8), arr((2,), F32))
    with pytest.raises(PSCValueError, match="one-dimensional"):
        run_rule(np.linalg.outer, arr((2, 2)), arr((3,)))


@pytest.mark.parametrize("offset", [0, 1, -2])
def test_trace_and_diagonal(offset):
    x = arr((2, 3, 4, 5))
    check(np.linalg.trace, x, offset=offset)
    check(np.linalg.diagonal, x, offset=offset)
    check(np.linalg.diagonal, arr((4, 3), BOOL), offset=offset)


def test_trace_and_diagonal_dtypes():
    check(np.linalg.trace, arr((3, 3), I8))
    check(np.linalg.trace, arr((3, 3), BOOL))
    check(np.linalg.trace, arr((3, 3), F64), dtype=F32)
    check(np.linalg.trace, arr((3, 3), C128), offset=1)
    check(np.linalg.diagonal, arr((3, 3), C128), offset=5)
    x = np.array([[-0.0, 1.0], [2.0, np.inf]])
    out = run_rule(np.linalg.diagonal, x)
    assert np.signbit(out[0]) and out[1] == np.inf
    for fn in (np.linalg.trace, np.linalg.diagonal):
        with pytest.raises(PSCValueError, match="at least two"):
            run_rule(fn, arr((3,)))


@pytest.mark.parametrize("dtype", [F32, F64, I64, BOOL, C128])
def test_vecdot(dtype):
    check(np.linalg.vecdot, arr((2, 4), dtype), arr((3, 1, 4), dtype, 1))


def test_vecdot_axis_promotion_and_errors():
    check(np.linalg.vecdot, arr((4, 2), C64), arr((4, 1), C64, 1), axis=0)
    check(np.linalg.vecdot, arr((3,), I8), arr((3,), F32, 1))
    with pytest.raises(PSCValueError, match="core dimension"):
        run_rule(np.linalg.vecdot, arr((3,)), arr((4,)))
    with pytest.raises(PSCValueError, match="enough dimensions"):
        run_rule(np.linalg.vecdot, arr(()), arr((4,)))


def test_matmul_transpose_tensordot():
    check(np.linalg.matmul, arr((2, 3, 4), I64), arr((4,), F32))
    check(np.linalg.matmul, arr((3,), BOOL), arr((3, 2), BOOL))
    check(np.linalg.matrix_transpose, arr((2, 3, 4)))
    check(np.linalg.tensordot, arr((2, 3, 4)), arr((3, 4, 5)))
    check(np.linalg.tensordot, arr((2, 3, 4)), arr((4, 2)), axes=([0, 2], [1, 0]))
    with pytest.raises(PSCError):
        run_rule(np.linalg.matmul, arr((2, 3)), arr((2, 3)))


def test_under_jit_ps():
    """Through the decorator: generated code reaches the numpy.linalg rules."""
    from transpiler import jit_ps   # noqa: PLC0415

    def f(a, v):
        p = np.linalg.matrix_power(a, 3)
        return np.linalg.multi_dot([v, p, a, v]) + np.linalg.trace(p) + \
            np.linalg.vecdot(v, v) + np.linalg.cross(v, v).sum()
    a, v = arr((3, 3)), arr((3,), seed=1)
    np.testing.assert_allclose(jit_ps(f)(a, v), f(a, v), rtol=1e-10)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, 0)])
@pytest.mark.parametrize("ord", [2, 1, np.inf, 0, 3])
def test_vector_norm(axis, ord):
    check(np.linalg.vector_norm, arr((2, 3, 4)), axis=axis, ord=ord)


def test_vector_norm_dtypes_keepdims_and_matrix_norm():
    check(np.linalg.vector_norm, arr((3, 4), I64), axis=(0, 1), keepdims=True)
    check(np.linalg.vector_norm, arr((3, 4), F32), axis=1, keepdims=True)
    check(np.linalg.vector_norm, arr((3, 4), C128))
    for ord in ("fro", 1, -np.inf):
        check(np.linalg.matrix_norm, arr((2, 3, 4)), ord=ord)
    check(np.linalg.matrix_norm, arr((3, 4), F32), keepdims=True)
    for ord in (2, -2, "nuc"):   # through the singular values (numpy_rules.svd)
        check(np.linalg.matrix_norm, arr((2, 3, 3)), ord=ord)
