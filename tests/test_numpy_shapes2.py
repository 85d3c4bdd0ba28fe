"""np.pad (every mode), splitting, diagonals, insertion/deletion, blocks, grids, take/put &
co, the in-place functions and apply_along_axis, against NumPy.

Cases are grouped: one staged program computes many results (one compile each), which
are compared with NumPy's one by one."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime import (PSCError, PSCIndexError, PSCRuntimeIndexError, PSCTracedValueError,
                     PSCTypeError, PSCUnsupportedCallError, PSCValueError, StagedFunction,
                     translate)
from ad_corpus.oracles import jax_x64  # noqa: F401
from transpiler import grad as psc_grad
from transpiler import jit_ps


class Arg:
    """Placeholder for the i-th traced operand in a case."""

    def __init__(self, i):
        self.i = i


def _sub(a, values):
    if isinstance(a, Arg):
        return values[a.i]
    if isinstance(a, list):
        return [_sub(e, values) for e in a]
    return a


def check_many(calls, *arrays, post=None):
    """Every ``(fn, args, kwargs)`` of ``calls`` on traced ``arrays``, one program."""
    def build(b, *values):
        return [translate(b, fn, *[_sub(a, values) for a in args], **kw)
                for fn, args, kw in calls]
    got = StagedFunction(build)(*arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for (fn, args, kw), actual in zip(calls, got):
            concrete = [_sub(a, arrays) for a in args]
            expected = fn(*concrete, **kw)
            if post is not None:
                expected = post(fn, concrete, kw, expected)
            try:
                assert_same(actual, expected, rtol=1e-5)
            except AssertionError as err:
                raise AssertionError(f"{fn.__name__}{args} {kw}: {err}") from None


def _sample(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    base = (np.arange(n) * 7 % 11 - 4).reshape(shape)
    if dtype == np.bool_:
        return base % 3 == 0
    if np.dtype(dtype).kind == "c":
        return (base + 1j * (base % 4)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        return (base * 0.75).astype(dtype)
    return base.astype(dtype)


DTYPES = [np.float32, np.float64, np.int32, np.bool_, np.complex128]
X = Arg(0)

# --- np.pad -----------------------------------------------------------------------------

_PAD_MODES = [
    ("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}),
    ("constant", {"constant_values": 7.6}), ("edge", {}), ("linear_ramp", {}),
    ("linear_ramp", {"end_values": (5, -2)}), ("maximum", {}),
    ("minimum", {"stat_length": 2}), ("mean", {}), ("mean", {"stat_length": ((1, 2), (3, 1))}),
    ("median", {}), ("median", {"stat_length": 2}), ("reflect", {}),
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {}),
    ("symmetric", {"reflect_type": "odd"}), ("wrap", {}), ("empty", {}),
]
_WIDTHS = [2, ((1, 7), (9, 0)), {1: (3, 11)}]


def _empty_as_zeros(fn, args, kw, expected):
    # mode='empty' leaves NumPy's pad area uninitialized; PSC documents zeros there
    if len(args) > 2 and args[2] == "empty":
        return np.pad(args[0], args[1])
    return expected


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_pad_every_mode(dtype):
    x = _sample(dtype)
    widths = _WIDTHS if dtype == np.float64 else _WIDTHS[1:2]   # kept short: compile time
    calls = [(np.pad, (X, w, mode), kw) for w in widths for mode, kw in _PAD_MODES]
    check_many(calls, x, post=_empty_as_zeros)


def test_pad_3d_singleton_and_empty_axes():
    x = _sample(np.float64, (2, 1, 3))
    e = np.zeros((0, 3), np.float32)
    modes = ["reflect", "symmetric", "wrap", "edge", "mean"]
    check_many([(np.pad, (X, ((1, 2), (3, 1), (4, 5)), m), {}) for m in modes]
               + [(np.pad, (X, 1), {"mode": "reflect", "reflect_type": "odd"})], x)
    check_many([(np.pad, (X, 2), {}), (np.pad, (X, ((0, 0), (1, 2)), "edge"), {}),
                (np.pad, (X, ((0, 0), (1, 2)), "reflect"), {})], e)


def test_pad_traced_constant_value():
    x = _sample(np.float32)
    got = StagedFunction(lambda b, x, v: translate(b, np.pad, x, 2, constant_values=v))(
        x, np.float64(2.5))
    assert_same(got, np.pad(x, 2, constant_values=2.5))


@pytest.mark.parametrize("args,kwargs,error", [
    ((-1,), {}, PSCValueError), ((1.5,), {}, PSCTypeError), ((1, "bogus"), {}, PSCValueError),
    ((1, "edge"), {"constant_values": 1}, PSCValueError),
    ((1, "maximum"), {"stat_length": 0}, PSCValueError),
    ((1, lambda v, w, a, k: None), {}, PSCUnsupportedCallError),
    (((1, 2, 3),), {}, PSCValueError),
])
def test_pad_errors(args, kwargs, error):
    with pytest.raises(error):
        run_rule(np.pad, _sample(np.float64), *args, static=tuple(range(1, 1 + len(args))),
                 **kwargs)


def test_pad_cannot_extend_empty_axis():
    with pytest.raises(PSCValueError, match="can't extend empty axis 0"):
        run_rule(np.pad, np.zeros((0, 2)), 1, "wrap", static=(1, 2))


# --- rearranging ------------------------------------------------------------------------

Y, V = Arg(1), Arg(2)
_REARRANGING = [
    (np.split, (X, 2, 2), {}), (np.split, (X, [1, 5, 3], -1), {}),
    (np.array_split, (X, 3, 1), {}), (np.array_split, (X, 5), {}), (np.hsplit, (X, 3), {}),
    (np.vsplit, (X, 2), {}), (np.dsplit, (X, [1]), {}), (np.hsplit, (V, 2), {}),
    (np.diagonal, (X,), {}), (np.diagonal, (X, 1, -1, 0), {}), (np.diagonal, (Y, -1), {}),
    (np.diag, (Y, -1), {}), (np.diag, (V, 2), {}), (np.diagflat, (Y, 1), {}),
    (np.rot90, (X,), {}), (np.rot90, (X, 2, (2, 0)), {}), (np.rot90, (X, -1, (1, 2)), {}),
    (np.rot90, (Y, 3), {}), (np.append, (X, Y), {}), (np.append, (Y, Y, 0), {}),
    (np.append, (V, 2), {}), (np.insert, (Y, 1, 7, 1), {}),
    (np.insert, (Y, [0, 2, 2], [1, 0, 1], 1), {}), (np.insert, (X, slice(1, 3), 1), {}),
    (np.insert, (Y, 2, [[1], [0]], 1), {}), (np.insert, (Y, [2], [[1], [0]], 1), {}),
    (np.insert, (V, -1, V), {}), (np.delete, (X, 1, 1), {}), (np.delete, (X, [0, 2], -1), {}),
    (np.delete, (X, slice(None, None, 2)), {}), (np.delete, (Y, [True, False], 0), {}),
    (np.block, ([[Y, Y], [Y, Y]],), {}), (np.block, ([V, 1, V],), {}),
    (np.block, ([[X], [X]],), {}), (np.dstack, ([Y, Y],), {}), (np.dstack, ([V, V],), {}),
    (np.meshgrid, (V, Y), {}), (np.meshgrid, (V, Y, V), {"indexing": "ij"}),
    (np.meshgrid, (V, Y), {"sparse": True}), (np.broadcast_arrays, (V, X, 2), {}),
    (np.resize, (Y, (3, 5)), {}), (np.resize, (V, 2), {}), (np.rollaxis, (X, 2), {}),
    (np.rollaxis, (X, 0, 3), {}), (np.rollaxis, (X, -1, 1), {}),
    (np.permute_dims, (X, (2, 0, 1)), {}), (np.permute_dims, (X,), {}),
    (np.unstack, (X,), {"axis": -1}), (np.astype, (X, np.int8), {}),
    (np.astype, (V, np.complex64), {}), (np.ix_, (V, [0, 2], [True, False, True]), {}),
    (np.tril_indices_from, (Y,), {}), (np.triu_indices_from, (Y, 1), {}),
    (np.take, (X, [[0, -1], [2, 1]], -1), {}), (np.take, (X, [5, -30, 29]), {"mode": "wrap"}),
    (np.take, (X, [5, -30, 29], 1), {"mode": "clip"}), (np.take, (V, 2), {}),
    (np.take_along_axis, (X, np.array([[[0, 3, 1]]]), -1), {}),
    (np.take_along_axis, (Y, np.array([[1], [0]]), 1), {}),
    (np.take_along_axis, (V, np.array([3, 0, 0]), None), {}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_rearranging(dtype):
    x = _sample(dtype, (2, 3, 4))
    y = _sample(np.int32 if dtype != np.bool_ else np.bool_, (2, 3))
    v = _sample(dtype, (4,))
    if dtype == np.bool_:   # a traced mask in np.ix_ has a data-dependent length
        with pytest.raises(PSCValueError, match="depends on the data"):
            run_rule(np.ix_, v)
    check_many([c for c in _REARRANGING if not (dtype == np.bool_ and c[0] is np.ix_)],
               x, y, v)


def test_rearranging_empty_arrays():
    e = Arg(0)
    check_many([(np.split, (e, 3, 1), {}), (np.delete, (e, 1, 1), {}),
                (np.insert, (e, 0, 1.0, 0), {}), (np.diagonal, (e,), {}),
                (np.resize, (e, 4), {}), (np.rot90, (e,), {}), (np.append, (e, e, 0), {}),
                (np.pad, (e, 1), {}), (np.take, (e, [1, 2], 1), {}),
                (np.block, ([e, e],), {}), (np.diag_indices_from, (np.zeros((2, 2)),), {})],
               np.zeros((0, 3), np.float32))


_NUMPY_ERROR = {PSCValueError: ValueError, PSCIndexError: IndexError, PSCTypeError: TypeError}


@pytest.mark.parametrize("fn,args,error", [
    (np.split, (3,), PSCValueError), (np.diag, (), PSCValueError),
    (np.insert, (9, 1.0, 1), PSCIndexError), (np.delete, (7, 2), PSCIndexError),
    (np.rot90, (1, (0, 0)), PSCValueError), (np.resize, ((-1, 2),), PSCValueError),
    (np.take, ([24],), PSCIndexError), (np.take, ([0], 0, None, "fold"), PSCValueError),
    (np.take, (np.array([0.5]),), PSCTypeError), (np.take_along_axis, (np.zeros(2, int), 0),
                                       PSCValueError),
    (np.diagonal, (0, 0, 0), PSCValueError), (np.dsplit, (3,), PSCValueError),
    (np.tril_indices_from, (), PSCValueError), (np.rollaxis, (0, 5), PSCValueError),
])
def test_errors_where_numpy_raises(fn, args, error):
    x = np.zeros((2, 3, 4))
    if fn in (np.tril_indices_from,):
        x = np.zeros(3)
    with pytest.raises(_NUMPY_ERROR[error]):
        fn(x, *args)   # NumPy raises too
    with pytest.raises(error):
        run_rule(fn, x, *args, static=tuple(range(1, 1 + len(args))))


def test_block_and_meshgrid_errors():
    x = np.zeros(2)
    with pytest.raises(PSCValueError, match="depths are mismatched"):
        StagedFunction(lambda b, x: translate(b, np.block, [x, [x]]))(x)
    with pytest.raises(PSCTypeError, match="tuple"):
        StagedFunction(lambda b, x: translate(b, np.block, (x, x)))(x)
    with pytest.raises(PSCValueError, match="indexing"):
        StagedFunction(lambda b, x: translate(b, np.meshgrid, x, indexing="yx"))(x)


def test_traced_positions_are_refused():
    x = np.arange(4.0)
    with pytest.raises(PSCTracedValueError):
        run_rule(np.delete, x, np.int64(1))
    with pytest.raises(PSCTracedValueError):
        run_rule(np.tri, np.int64(3))


# --- traced indices ---------------------------------------------------------------------

def take_traced(x, i, j):
    return (np.take(x, i), np.take(x, j, axis=-1, mode="wrap"), np.take(x, j, mode="clip"),
            np.take_along_axis(x, j.reshape(1, -1) % 4, 1),
            np.unravel_index(i, (3, 4)), np.unravel_index(i, (4, 3), order="F"),
            np.ravel_multi_index((j % 3, i[0, 0] + j % 2), (3, 12)),
            np.ravel_multi_index((j, j + 1), (3, 4), mode=("clip", "wrap"), order="F"))


def test_traced_indices_against_numpy():
    x = _sample(np.float64)
    i, j = np.array([[0, 5], [11, 7]]), np.array([-7, 2, 13])
    got = jit_ps(take_traced)(x, i, j)
    expected = take_traced(x, i, j)
    assert_same(list(got[:4]) + [list(got[4]), list(got[5])] + list(got[6:]),
                list(expected[:4]) + [list(expected[4]), list(expected[5])]
                + list(expected[6:]))


def take_one(x, i):
    return np.take(x, i)


def test_traced_out_of_range_take_follows_the_indexing_policy():
    x = np.arange(5.0)
    assert_same(jit_ps(take_one)(x, np.int64(7)), x[4])   # clamped, as x[i] reads
    with pytest.raises(PSCRuntimeIndexError):
        jit_ps(take_one, checks=("index",))(x, np.int64(7))
    with pytest.raises(PSCRuntimeIndexError):
        jit_ps(lambda_unravel, checks=("index",))(np.int64(12))


def lambda_unravel(i):
    return np.unravel_index(i, (3, 4))


# --- in-place functions -----------------------------------------------------------------

def fill_many(x, v, m):
    A = x * 2.0
    np.fill_diagonal(A, v)
    B = np.zeros((3, 3), np.int32)
    np.put(B, [0, 4, -1], [v, 2 * v])
    np.put(B, [10, -11], v, mode="clip")
    np.copyto(B, x > 4, where=m)
    C = x.copy()
    np.place(C, x > 3, [v, -v])
    D = x.astype(np.complex64)
    np.put_along_axis(D, np.array([[0], [1], [2]]), v, axis=1)
    E = np.zeros((4, 3))
    np.fill_diagonal(E, [v, 1.0], wrap=True)
    F = np.zeros((2, 2, 2))
    np.fill_diagonal(F, v)
    np.copyto(x, A)
    return A, B, C, D, E, F, x


def test_inplace_functions_rebind_locals_and_update_arguments():
    x, m = np.arange(9.0).reshape(3, 3), np.eye(3, dtype=bool)
    mine, theirs = x.copy(), x.copy()
    got = jit_ps(fill_many)(mine, 7.5, m)
    expected = fill_many(theirs, 7.5, m)
    assert_same(got, expected)
    assert_same(mine, theirs)   # np.copyto(x, A) reached the caller's array


def put_in_loops(x, v, n):
    A = x.copy()
    for k in range(3):
        np.put(A, [k], v * k)
    i = 0
    while i < n:
        np.fill_diagonal(A, np.diagonal(A) + v)
        i += 1
    return A


def test_inplace_functions_in_loops():
    x = np.arange(9.0).reshape(3, 3)
    assert_same(jit_ps(put_in_loops)(x, 1.5, 4), put_in_loops(x, 1.5, 4))


def put_in_expression(x, v):
    y = np.put(x, [0], v)
    return y


def put_on_view(x, v):
    np.fill_diagonal(x[0], v)
    return x


def put_on_global(v):
    np.put(_GLOBAL, [0], v)
    return v


_GLOBAL = np.zeros(3)


@pytest.mark.parametrize("fn,error", [(put_in_expression, PSCUnsupportedCallError),
                                      (put_on_view, PSCUnsupportedCallError),
                                      (put_on_global, PSCError)])
def test_inplace_functions_refused_elsewhere(fn, error):
    args = (np.zeros((2, 2, 2)), 1.0) if fn is not put_on_global else (1.0,)
    with pytest.raises(error):
        jit_ps(fn)(*args)


def test_inplace_errors_where_numpy_raises():
    def cast_float_into_int(v):
        a = np.zeros(3, np.int64)
        np.copyto(a, v)
        return a

    def fill_1d(v):
        a = np.zeros(3)
        np.fill_diagonal(a, v)
        return a
    with pytest.raises(PSCTypeError, match="same_kind"):
        jit_ps(cast_float_into_int)(1.5)
    with pytest.raises(PSCValueError, match="at least 2-d"):
        jit_ps(fill_1d)(1.5)


# --- functions calling user functions ---------------------------------------------------

def norm_and_max(v, scale, shift=0.0):
    return np.array([np.sum(v * v) * scale + shift, np.max(v)])


def applying(x, t):
    return (np.apply_along_axis(norm_and_max, 1, x, 2.0, shift=1.0),
            np.apply_along_axis(np.sum, -1, x),
            np.apply_along_axis(lambda v: np.outer(v, v), 0, x),
            np.apply_over_axes(np.sum, x, [0, -1]),
            np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
            np.fromfunction(lambda i, j: i * t + j, (2, 3)))


def test_apply_functions():
    x = _sample(np.float32, (2, 3, 4))
    assert_same(jit_ps(applying)(x, 1.5), applying(x, 1.5))


# --- derivatives ------------------------------------------------------------------------

_IDX = np.array([[2, 0], [1, 1], [0, 3]])


def shape_loss(x):
    """One scalar through pad modes, take_along_axis, diagonal, delete, insert, rot90."""
    terms = [np.pad(x, ((1, 5), (2, 0)), "reflect", reflect_type="odd") ** 2,
             np.pad(x, 2, "linear_ramp", end_values=1.0) ** 2,
             np.pad(x, 1, "mean") * 3.0, np.pad(x, (3, 1), "symmetric") ** 3,
             np.take_along_axis(x, _IDX, 1) ** 3, np.diagonal(x, 1) * 2.0,
             np.delete(x, 0, 1) ** 2, np.insert(x, 1, x[0], 0) ** 2, np.rot90(x) * x.T,
             np.take(x, _IDX, mode="wrap") ** 2]
    return sum(np.sum(t) for t in terms)


def _jax_shape_loss(x):
    import jax.numpy as jnp   # the same program, for jax.grad
    terms = [jnp.pad(x, ((1, 5), (2, 0)), "reflect", reflect_type="odd") ** 2,
             jnp.pad(x, 2, "linear_ramp", end_values=1.0) ** 2,
             jnp.pad(x, 1, "mean") * 3.0, jnp.pad(x, (3, 1), "symmetric") ** 3,
             jnp.take_along_axis(x, _IDX, 1) ** 3, jnp.diagonal(x, 1) * 2.0,
             jnp.delete(x, 0, 1) ** 2, jnp.insert(x, 1, x[0], 0) ** 2, jnp.rot90(x) * x.T,
             jnp.take(x, _IDX, mode="wrap") ** 2]
    return sum(jnp.sum(t) for t in terms)


def shape_loss_grad(x):
    return psc_grad(shape_loss)(x)


def test_derivatives_against_jax_and_central_differences(jax_x64):
    import jax
    x = _sample(np.float64) * 0.3 + 0.1
    got = jit_ps(shape_loss_grad)(x)
    expected = np.asarray(jax.grad(_jax_shape_loss)(x))
    assert_same(got, expected, rtol=1e-9)
    h, e = 1e-6, np.zeros_like(x)
    e[1, 2] = h
    central = (shape_loss(x + e) - shape_loss(x - e)) / (2 * h)
    np.testing.assert_allclose(got[1, 2], central, rtol=1e-6)
