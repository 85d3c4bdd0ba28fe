"""Linear-algebra rules (runtime/numpy_rules/linalg.py) against NumPy itself: values,
shapes and dtypes of dot, matmul/@, vdot, inner, outer, tensordot, kron, einsum, trace and
np.linalg.norm, plus their user errors."""
from __future__ import annotations

import operator

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime.errors import PSCShapeError, PSCTracedValueError, PSCTypeError, PSCValueError

F32, F64, I32, I64, BOOL = np.float32, np.float64, np.int32, np.int64, np.bool_


def arr(shape, dtype=F64, seed=0):
    """Deterministic test data: small integers for ints (no overflow), normals for floats."""
    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def tol(*dtypes_):
    """rtol/atol: float32 (or float16) results get float32 tolerances."""
    low = any(np.dtype(d) in (np.dtype(F32), np.dtype(np.float16), np.dtype(np.complex64))
              for d in dtypes_)
    return dict(rtol=1e-5, atol=1e-5) if low else dict(rtol=1e-10, atol=1e-12)


def check(fn, *args, static=(), **kwargs):
    expected = fn(*args, **kwargs)
    actual = run_rule(fn, *args, static=static, **kwargs)
    dts = [np.asarray(a).dtype for a in args if not isinstance(a, str)]
    assert_same(actual, expected, **tol(*dts, np.asarray(expected).dtype))


# --- dot ----------------------------------------------------------------------------------

DOT_SHAPES = [((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3, 4)),
              ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 2)),
              ((4,), (2, 4, 3)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0,), (0,))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES)
def test_dot_shapes(sa, sb):
    check(np.dot, arr(sa, F64), arr(sb, F64, seed=1))


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64, BOOL])
@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (3,))])
def test_dot_dtypes(dtype, sa, sb):
    check(np.dot, arr(sa, dtype), arr(sb, dtype, seed=1))


@pytest.mark.parametrize("da,db", [(I32, F32), (np.int8, np.uint8), (BOOL, I32), (F32, F64)])
def test_dot_mixed_dtypes(da, db):
    check(np.dot, arr((2, 3), da), arr((3, 2), db, seed=1))


def test_dot_python_scalars_are_strong():
    # np.dot converts with asarray: a Python int is int64, so float32 becomes float64.
    check(np.dot, 2, arr((3,), F32))                       # traced weak scalar
    check(np.dot, 2.0, arr((3,), I32), static=(0,))        # static scalar
    check(np.dot, arr((2, 3), F32), 3)


def test_dot_method_and_out_none():
    x, y = arr((2, 3)), arr((3,), seed=1)
    assert_same(run_rule(np.ndarray.dot, x, y), x.dot(y))
    assert_same(run_rule(np.dot, x, y, out=None), np.dot(x, y))


# --- matmul -------------------------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((5, 4, 2), (2,)), ((3,), (2, 3, 4)),
                 ((2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 2)),
                 ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (3, 1))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes(sa, sb):
    check(np.matmul, arr(sa, F32), arr(sb, F32, seed=1))


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64, BOOL])
def test_matmul_dtypes(dtype):
    check(np.matmul, arr((2, 3, 4), dtype), arr((4, 5), dtype, seed=1))
    check(np.matmul, arr((4,), dtype), arr((2, 4, 3), dtype, seed=2))


@pytest.mark.parametrize("da,db", [(I32, F32), (I64, F32), (np.int16, np.uint8),
                                   (BOOL, F32)])
def test_matmul_mixed_dtypes(da, db):
    check(np.matmul, arr((2, 3), da), arr((3, 2), db, seed=1))


def test_matmul_operator_and_dtype_kwarg():
    x, y = arr((2, 3, 4), F32), arr((4, 2), F32, seed=1)
    assert_same(run_rule(operator.matmul, x, y), x @ y, rtol=1e-5, atol=1e-5)
    xi, yi = arr((2, 3), I32), arr((3, 2), I32, seed=1)
    assert_same(run_rule(np.matmul, xi, yi, dtype=F32), np.matmul(xi, yi, dtype=F32))


def test_matmul_bool_is_logical():
    # any(a & b): counting in int32 and comparing with 0 must not wrap or give ints.
    x = np.ones((2, 300), bool)
    assert_same(run_rule(np.matmul, x, x.T), x @ x.T)


# --- vdot, inner, outer, tensordot, kron --------------------------------------------------

@pytest.mark.parametrize("sa,sb,dtype", [((3,), (3,), F64), ((2, 3), (3, 2), F32),
                                          ((2, 2), (4,), I32), ((4,), (4,), BOOL)])
def test_vdot(sa, sb, dtype):
    check(np.vdot, arr(sa, dtype), arr(sb, dtype, seed=1))


@pytest.mark.parametrize("sa,sb,dtype", [((3,), (3,), F64), ((2, 3), (4, 3), F32),
                                          ((2, 3), (4, 5, 3), I64), ((), (3,), F64),
                                          ((3,), (3,), BOOL), ((0, 3), (2, 3), F64)])
def test_inner(sa, sb, dtype):
    check(np.inner, arr(sa, dtype), arr(sb, dtype, seed=1))


@pytest.mark.parametrize("sa,sb,da,db", [((3,), (4,), F64, F64), ((2, 3), (2,), F32, I32),
                                          ((), (3,), I64, I64), ((3,), (2,), BOOL, BOOL)])
def test_outer(sa, sb, da, db):
    check(np.outer, arr(sa, da), arr(sb, db, seed=1))


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3), (4,), 0), ((2, 3, 4), (4, 5), 1), ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (2, 3), 2), ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3), (3, 2), (-1, 0)), ((3, 4, 2), (2, 3), ((0, 2), (1, 0))), ((2, 3), (4, 5), 0)])
def test_tensordot(sa, sb, axes):
    check(np.tensordot, arr(sa, F32), arr(sb, F32, seed=1), axes=axes)


def test_tensordot_dtypes():
    check(np.tensordot, arr((2, 3), I32), arr((3, 2), I64, seed=1), axes=1)
    check(np.tensordot, arr((2, 3), BOOL), arr((2, 3), BOOL, seed=1), axes=2)


@pytest.mark.parametrize("sa,sb,dtype", [((2, 3), (4,), F64), ((2, 2), (3, 2), I32),
                                          ((), (3,), F32), ((2,), (2, 3), BOOL)])
def test_kron(sa, sb, dtype):
    check(np.kron, arr(sa, dtype), arr(sb, dtype, seed=1))


# --- einsum -------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),            # matrix product
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),   # batch matmul
    ("ij->ji", [(2, 3)]),                        # transpose
    ("ii", [(3, 3)]),                            # trace
    ("ii->i", [(3, 3)]),                         # diagonal
    ("iij->j", [(2, 2, 3)]),                     # diagonal then sum
    ("iji->ij", [(2, 3, 2)]),
    ("iii->i", [(2, 2, 2)]),
    ("ij->", [(2, 3)]),                          # sum
    ("ij->j", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),                   # outer
    ("i,i", [(3,), (3,)]),                       # inner
    ("ij,ij->ij", [(2, 3), (2, 3)]),             # elementwise
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),  # three operands
    ("ij,kl,jl->ik", [(2, 3), (4, 5), (3, 5)]),  # label skipping an operand
    ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),   # ellipsis, broadcast batch
    ("...ij,jk", [(5, 2, 3), (3, 4)]),           # implicit output with ellipsis
    ("i...->...", [(2, 3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),                 # implicit output
    ("ba", [(2, 3)]),                            # implicit: alphabetical -> transpose
    ("bA,Ac", [(2, 3), (3, 4)]),                 # implicit: upper case sorts first
    ("i,i", [(1,), (3,)]),                       # size-1 label broadcasts
    ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("ii,ii->i", [(2, 2), (2, 2)]),
    (",i->i", [(), (3,)]),                       # 0-d operand
    ("->", [()]),
    ("ij,jk->ik", [(0, 3), (3, 2)]),             # empty dimensions
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    (" i j -> j i ", [(2, 3)]),                  # spaces
    ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES)
def test_einsum(subscripts, shapes):
    operands = [arr(s, F64, seed=i) for i, s in enumerate(shapes)]
    check(np.einsum, subscripts, *operands, static=(0,))


@pytest.mark.parametrize("dtype", [F32, I32, I64, BOOL])
@pytest.mark.parametrize("subscripts,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]),
                                                ("ii->", [(3, 3)]),
                                                ("i,j->ij", [(2,), (3,)])])
def test_einsum_dtypes(dtype, subscripts, shapes):
    operands = [arr(s, dtype, seed=i) for i, s in enumerate(shapes)]
    check(np.einsum, subscripts, *operands, static=(0,))


def test_einsum_mixed_dtypes_and_optimize():
    x, y = arr((2, 3), I32), arr((3, 2), F32, seed=1)
    check(np.einsum, "ij,jk", x, y, static=(0,), optimize=True)
    check(np.einsum, ",i", 2.0, arr((3,), I32), static=(0,))   # Python scalar is strong


# --- trace --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,kwargs", [
    ((3, 3), {}), ((3, 4), {"offset": 1}), ((3, 4), {"offset": -2}), ((3, 4), {"offset": 9}),
    ((2, 3, 4), {}), ((2, 3, 4), {"axis1": 2, "axis2": 0}),
    ((2, 3, 4), {"axis1": -1, "axis2": 1, "offset": 1}), ((0, 3), {})])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_trace(shape, kwargs, dtype):
    check(np.trace, arr(shape, dtype), **kwargs)


@pytest.mark.parametrize("dtype,kwargs", [(BOOL, {}), (np.int8, {}), (np.uint8, {}),
                                          (I64, {}), (F64, {}), (I32, {"dtype": F32}),
                                          (F64, {"dtype": I32})])
def test_trace_dtypes(dtype, kwargs):
    check(np.trace, arr((3, 3), dtype), **kwargs)


def test_trace_method_and_inf_off_diagonal():
    x = np.array([[1.0, np.inf], [-np.inf, 2.0]])
    assert_same(run_rule(np.trace, x), np.trace(x))          # inf off the diagonal: 3.0
    assert_same(run_rule(np.ndarray.trace, x, 1, static=(1,)), x.trace(1))


# --- norm ---------------------------------------------------------------------------------

VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1, -2]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_norm_vector(ord):
    x = np.array([3.0, -4.0, 0.5, 2.0], F32)
    check(np.linalg.norm, x, ord=ord)
    check(np.linalg.norm, arr((2, 3, 4), F64), ord=ord, axis=1)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf])
def test_norm_matrix(ord):
    check(np.linalg.norm, arr((3, 4), F32), ord=ord)
    check(np.linalg.norm, arr((2, 3, 4), F64), ord=ord, axis=(2, 0), keepdims=True)


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64, BOOL, np.complex64])
def test_norm_dtypes(dtype):
    x = arr((3, 4), dtype)
    check(np.linalg.norm, x)
    check(np.linalg.norm, x, ord=1, axis=0)
    check(np.linalg.norm, x, ord=np.inf)


@pytest.mark.parametrize("shape,kwargs", [
    ((), {}), ((2, 3, 4), {}), ((2, 3, 4), {"keepdims": True}), ((3, 4), {"keepdims": True}),
    ((2, 3, 4), {"axis": -1, "ord": 3, "keepdims": True}), ((0,), {}),
    ((0,), {"ord": np.inf}), ((0, 2), {"ord": 1}), ((0, 2), {"ord": -1}),
    ((3,), {"ord": 2, "axis": 0})])
def test_norm_shapes(shape, kwargs):
    check(np.linalg.norm, arr(shape, F32), **kwargs)


def test_norm_nan_propagates():
    x = np.array([[1.0, np.nan], [2.0, -3.0]])
    for ord in (np.inf, -np.inf):
        assert_same(run_rule(np.linalg.norm, x, ord=ord, axis=1),
                    np.linalg.norm(x, ord=ord, axis=1))
        assert_same(run_rule(np.linalg.norm, x, ord=ord), np.linalg.norm(x, ord=ord))


# --- errors -------------------------------------------------------------------------------

def raises(error, fn, *args, match, static=(), **kwargs):
    """The rule raises ``error`` with a message matching ``match`` (NumPy's wording)."""
    with pytest.raises(error, match=match):
        run_rule(fn, *args, static=static, **kwargs)


def test_dot_shape_errors():
    x, y = np.ones((2, 3)), np.ones((4, 2))
    with pytest.raises(ValueError):
        np.dot(x, y)
    raises(PSCShapeError, np.dot, x, y,
           match=r"shapes \(2,3\) and \(4,2\) not aligned: 3 \(dim 1\) != 4 \(dim 0\)")
    raises(PSCShapeError, np.dot, np.ones(3), np.ones(4),
           match=r"shapes \(3,\) and \(4,\) not aligned")
    raises(PSCShapeError, np.inner, np.ones((2, 3)), np.ones((2, 4)), match="not aligned")
    raises(PSCShapeError, np.vdot, np.ones(3), np.ones(4),
           match=r"cannot reshape array of size 4 into shape \(3,\)")


def test_matmul_errors():
    raises(PSCShapeError, np.matmul, np.ones((2, 3)), np.ones((4, 2)),
           match=r"matmul: Input operand 1 has a mismatch in its core dimension 0.*"
                 r"\(size 4 is different from 3\)")
    raises(PSCShapeError, operator.matmul, np.ones((2, 2, 3)), np.ones((3, 3, 2)),
           match="could not be broadcast together")
    raises(PSCValueError, np.matmul, 2.0, np.ones(3),
           match="matmul: Input operand 0 does not have enough dimensions")
    raises(PSCValueError, np.matmul, np.ones(3), np.float64(2),
           match="Input operand 1 does not have enough dimensions")
    raises(PSCTypeError, np.matmul, np.ones(2), np.ones(2), dtype=I32, match="Cannot cast")


def test_out_is_rejected():
    out = np.zeros((2, 2))
    for fn in (np.dot, np.matmul):
        raises(PSCTypeError, fn, np.ones((2, 2)), np.ones((2, 2)), out=out, match="out=")
    raises(PSCTypeError, np.einsum, "ij->ij", np.ones((2, 2)), out=out, static=(0,),
           match="out=")
    raises(PSCTypeError, np.trace, np.ones((2, 2)), out=out, match="out=")


def test_einsum_errors():
    x = np.ones((2, 3))
    raises(PSCTracedValueError, np.einsum, np.array(1), x, match="subscripts")
    raises(PSCTypeError, np.einsum, 5, x, static=(0,), match="subscripts string")
    raises(PSCShapeError, np.einsum, "ij,jk", x, np.ones((4, 2)), static=(0,),
           match="could not be broadcast together")
    raises(PSCShapeError, np.einsum, "ii", x, static=(0,),
           match=r"collapsing index 'i' don't match \(2 != 3\)")
    raises(PSCValueError, np.einsum, "ij->k", x, static=(0,),
           match="output subscript 'k' which never appeared")
    raises(PSCValueError, np.einsum, "ij->ii", x, static=(0,), match="multiple times")
    raises(PSCValueError, np.einsum, "ijk", x, static=(0,), match="too many subscripts")
    raises(PSCValueError, np.einsum, "i", x, static=(0,), match="no '...' ellipsis")
    raises(PSCValueError, np.einsum, "ij,j", x, static=(0,),
           match=r"fewer operands.*\(1 given, 2 specified\)")
    raises(PSCValueError, np.einsum, "ij", x, x, static=(0,), match="more operands")
    raises(PSCValueError, np.einsum, "i1", x, static=(0,), match="invalid subscript '1'")


def test_norm_trace_tensordot_errors():
    x = np.ones((3, 4))
    raises(PSCValueError, np.linalg.norm, x, ord=3, match="Invalid norm order for matrices")
    raises(PSCValueError, np.linalg.norm, np.ones(3), ord="fro", match="for vectors")
    raises(PSCValueError, np.linalg.norm, np.ones((2, 2, 2)), ord=1, match="Improper")
    raises(PSCValueError, np.linalg.norm, x, axis=(0, 0), match="Duplicate axes")
    raises(PSCValueError, np.linalg.norm, np.ones(0), ord=-np.inf, match="zero-size")
    raises(PSCValueError, np.trace, np.ones(3), match="at least two dimensions")
    raises(PSCValueError, np.trace, x, axis1=1, axis2=1, match="cannot be the same")
    raises(PSCShapeError, np.tensordot, x, np.ones((4, 2)), axes=([0], [0]),
           match="shape-mismatch for sum")
    raises(PSCValueError, np.tensordot, x, x, axes=([0, 0], [1, 1]), match="duplicate axes")
