"""``scan`` (issue 12): jax.lax.scan's signature and meaning, staged as one fixed-trip
``while`` (`runtime/scan.py`).

Oracles: ``jax.lax.scan`` on the same program in ``jax.numpy`` (float64), and the
reference meaning (`runtime.reference.scan`, what a plain-Python call runs).  Derivatives
also against central differences; batching against running each lane alone.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

from ad_corpus.oracles import as_jax, close_tree, jax_x64  # noqa: F401
from conftest import assert_same
from runtime import (PSCShapeError, PSCTracedValueError, PSCTypeError, PSCValueError,
                     reference)
from runtime.context import building
from tests.test_batching_rules import check_batching
from transpiler import grad, hessian, jit_ps, jvp, lax, scan

RNG = np.random.default_rng(0)
W = RNG.normal(size=(3, 3)) * 0.5
XS = RNG.normal(size=(5, 3))


def jax_twin(fn):
    """``fn`` in JAX: ``np`` is ``jax.numpy``, ``scan`` and ``lax`` are JAX's."""
    twin = as_jax(fn)
    twin.__globals__.update(scan=jax.lax.scan, lax=jax.lax)
    return twin


def three_ways(fn, *args):
    """``fn`` compiled, run as plain Python (the reference scan) and in JAX agree."""
    compiled, plain = jit_ps(fn)(*args), fn(*args)
    assert_same(compiled, plain, rtol=1e-12)
    close_tree(compiled, jax_twin(fn)(*args))
    return compiled


# --- programs --------------------------------------------------------------------------------

def cumulative_sum(xs):
    def step(total, x):
        total = total + x
        return total, total
    return scan(step, 0, xs)


def rnn(w, xs, h0):
    def cell(h, x):
        h = np.tanh(w @ h + x)
        return h, np.sum(h * h)
    return lax.scan(cell, h0, xs)


def rnn_backwards(w, xs, h0):
    def cell(h, x):
        h = np.tanh(w @ h + x)
        return h, h[0]
    return lax.scan(cell, h0, xs, reverse=True)


def rnn_loss(w, xs, h0):
    h, ys = rnn(w, xs, h0)
    _, back = rnn_backwards(w, xs, h)
    return np.sum(h) + np.sum(ys * np.arange(1.0, 6.0)) + np.sum(back ** 2)


def pytrees(xs, scale):
    def step(carry, x):
        a, b = x
        new = {"sum": carry["sum"] + a * scale, "count": carry["count"] + 1,
               "last": (b, carry["last"][0])}
        return new, {"a": a * 2.0, "pair": (carry["count"], np.sum(b))}
    init = {"sum": np.zeros(3), "count": 0, "last": (np.zeros(2), np.zeros(2))}
    return scan(step, init, xs)


def geometric(x):
    def step(c, _):
        return c * 0.5 + 1.0, c
    return scan(step, x, None, length=4, reverse=True)


def weak_and_strong(xs):
    def step(carry, x):
        i, s, f = carry
        return (i + 1, s + x, f * x), s * 2
    return scan(step, (0, 0.0, np.float32(1.0)), xs)


def no_outputs(xs):
    def step(c, x):
        return c * x + 1.0, None
    return scan(step, np.ones(2), xs)


def nested(xs):
    def outer(c, row):
        def inner(d, x):
            return d * 0.5 + x, d + c
        d, ys = scan(inner, c, row)
        return d, ys
    return scan(outer, 0.0, xs)


def unrolled(xs, unroll):
    def step(c, x):
        return np.sin(c) + x, c
    return scan(step, np.zeros(3), xs, unroll=unroll)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_cumulative_sum_keeps_the_dtype(dtype):
    xs = np.arange(1, 7).astype(dtype)
    total, sums = three_ways(cumulative_sum, xs)
    assert total.dtype == dtype and sums.dtype == dtype


def test_rnn_forward_and_reverse():
    three_ways(rnn, W, XS, np.zeros(3))
    three_ways(rnn_backwards, W, XS, np.full(3, 0.1))


def test_pytree_carry_xs_and_ys():
    xs = (RNG.normal(size=(4, 3)), RNG.normal(size=(4, 2)))
    three_ways(pytrees, xs, 0.5)


def test_no_xs_with_length_reversed():
    three_ways(geometric, np.float64(3.0))
    three_ways(geometric, np.arange(3.0))


def test_weak_python_numbers_in_init():
    """An int counter stays an int, a Python float takes float32 from the body, a
    float32 stays float32 (JAX and NumPy 2 agree on each)."""
    (i, s, f), ys = three_ways(weak_and_strong, np.arange(1.0, 5.0, dtype=np.float32))
    assert (np.asarray(i).dtype, s.dtype, f.dtype, ys.dtype) == (
        np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float32), np.dtype(np.float32))


def test_no_stacked_outputs():
    carry, ys = three_ways(no_outputs, RNG.normal(size=(3, 2)))
    assert ys is None


def literal_carry(xs):
    def step(c, x):
        return 2.0, c + x
    return scan(step, np.float32(1.0), xs)


def test_a_python_number_returned_takes_the_carry_dtype():
    """A Python float for a float32 carry (JAX: a weak float32); Python itself keeps the
    float, so only the values are compared with the reference for the carry."""
    xs = np.arange(3.0, dtype=np.float32)
    (carry, ys), (plain_carry, plain_ys) = jit_ps(literal_carry)(xs), literal_carry(xs)
    assert carry.dtype == np.float32 and carry == plain_carry
    assert_same(ys, plain_ys)


def square_loss(w, xs, h0):
    h, ys = rnn(w, xs, h0)
    return np.sum(h * h) + np.sum(ys)


def test_zero_length():
    carry, ys = three_ways(rnn, W, np.zeros((0, 3)), np.ones(3))
    assert ys.shape == (0,)
    three_ways(pytrees, (np.zeros((0, 3)), np.zeros((0, 2))), 0.5)
    args = (W, np.zeros((0, 3)), np.full(3, 0.2))
    close_tree(grad(square_loss, argnums=(0, 2))(*args),
               jax.grad(jax_twin(square_loss), argnums=(0, 2))(*args))


def test_nested_scans():
    three_ways(nested, RNG.normal(size=(3, 4)))


@pytest.mark.parametrize("unroll", [1, 3, True, False])
def test_unroll_does_not_change_results(unroll):
    xs = RNG.normal(size=(5, 3))
    assert_same(jit_ps(unrolled, static_argnames=("unroll",))(xs, unroll),
                unrolled(xs, 1), rtol=1e-12)


LIMIT = 1.5


# at module level: `scan` transpiles it itself
def branching_step(c, x):
    if np.sum(c) > LIMIT:
        c = c * 0.5 - x
    else:
        c = c + x
    return c, np.max(c)


def traced_branch(xs):
    return scan(branching_step, np.zeros(3), xs)


@jit_ps
def compiled_step(c, x):
    return c * 0.9 + x, np.sum(c)


def scan_of_a_jit_ps_function(xs):
    return scan(compiled_step, np.zeros(3), xs)


def test_the_body_may_be_a_jit_ps_function():
    xs = RNG.normal(size=(4, 3))
    assert_same(jit_ps(scan_of_a_jit_ps_function)(xs), scan_of_a_jit_ps_function(xs),
                rtol=1e-12)


def nested_branch(xs, limit):
    def step(c, x):   # nested: transpiled with the jit_ps function (its own liveness)
        if np.sum(c) > limit:
            c = c * 0.5 - x
        else:
            c = c + x
        return c, np.max(c)
    return scan(step, np.zeros(3), xs)


def nested_loops(x, n):
    def step(c, v):
        for i in range(n):
            c = c * 0.5 + v
        while np.sum(c) < 10.0:
            c = c * 2.0 + 1.0
        return c, c[0]
    return scan(step, x[0], x)


def test_traced_if_in_the_body():
    xs = RNG.uniform(0.0, 1.0, size=(8, 3))
    compiled = jit_ps(traced_branch)(xs)
    assert_same(compiled, traced_branch(xs), rtol=1e-12)
    assert_same(jit_ps(nested_branch)(xs, LIMIT), compiled, rtol=1e-12)
    x = RNG.uniform(0.0, 1.0, size=(4, 3))
    assert_same(jit_ps(nested_loops)(x, 2), nested_loops(x, 2), rtol=1e-12)

    def jax_step(c, x):   # the same program in JAX: the branch as a select
        c = jax.numpy.where(jax.numpy.sum(c) > LIMIT, c * 0.5 - x, c + x)
        return c, jax.numpy.max(c)
    close_tree(compiled, jax.lax.scan(jax_step, np.zeros(3), xs))


# --- derivatives -----------------------------------------------------------------------------

def central_difference(fn, x, eps=1e-6):
    grad_ = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad_[i] = (fn(x + step) - fn(x - step)) / (2 * eps)
    return grad_


def test_grad_through_scan():
    h0 = np.full(3, 0.2)
    for argnum, x in [(0, W), (1, XS), (2, h0)]:
        ours = grad(rnn_loss, argnums=argnum)(W, XS, h0)
        close_tree(ours, jax.grad(jax_twin(rnn_loss), argnums=argnum)(W, XS, h0))

        def along(v, argnum=argnum):
            args = [W, XS, h0]
            args[argnum] = v
            return rnn_loss(*args)
        np.testing.assert_allclose(ours, central_difference(along, x), rtol=1e-6,
                                   atol=1e-8)


def test_grad_inside_jit_ps_of_nested_scans():
    def loss(xs):
        d, ys = nested(xs)
        return d + np.sum(ys * ys)
    xs = RNG.normal(size=(3, 4))
    ours = jit_ps(lambda v: grad(loss)(v))(xs)
    close_tree(ours, jax.grad(jax_twin(loss))(xs))


def test_hessian_through_scan():
    h0 = np.full(3, 0.2)
    close_tree(hessian(rnn_loss, argnums=2)(W, XS, h0),
               jax.hessian(jax_twin(rnn_loss), argnums=2)(W, XS, h0))


def test_jvp_through_scan():
    h0, dw, dxs, dh = np.full(3, 0.2), RNG.normal(size=W.shape), RNG.normal(size=XS.shape), \
        RNG.normal(size=3)
    ours = jvp(rnn, (W, XS, h0), (dw, dxs, dh))
    close_tree(ours, jax.jvp(jax_twin(rnn), (W, XS, h0), (dw, dxs, dh)))


# --- batching ------------------------------------------------------------------------------

def _scan_lane(b, w, xs, h0):
    with building(b):
        h, ys = rnn_backwards(w, xs, h0)
        return [h, ys]


@pytest.mark.parametrize("dims", [(None, 0, 0), (0, None, None), (None, 1, -1)],
                         ids=["xs_and_init", "weights", "other_axes"])
def test_batching_a_scan(dims):
    def draw(shape):
        return lambda rng: rng.normal(size=shape)
    check_batching(_scan_lane, [draw((3, 3)), draw((4, 3)), draw((3,))], dims)


# --- errors --------------------------------------------------------------------------------

def carry_dtype_changes(x):
    def step(c, v):
        return c.astype(np.float32), v
    return scan(step, x, x)


def carry_shape_changes(x):
    def step(c, v):
        return np.concatenate([c, v[:1]]), v
    return scan(step, x[0], x)


def carry_structure_changes(x):
    def step(c, v):
        return [c[0], c[1]], v
    return scan(step, (x[0], x[0]), x)


def int_for_float_carry(x):
    return scan(lambda c, v: (1, v), x[0, 0], x)


def ragged_xs(a, b):
    return scan(lambda c, x: (c, x[0] + x[1]), 0.0, (a, b))


def wrong_length(a):
    return scan(lambda c, x: (c + x, x), 0.0, a, length=3)


def no_length():
    return scan(lambda c, x: (c + 1.0, c), 0.0, None)


def traced_length(n):
    return scan(lambda c, _: (c + 1.0, c), 0.0, None, length=n)


def not_a_pair(a):
    return scan(lambda c, x: c + x, 0.0, a)


def bad_unroll(a):
    return scan(lambda c, x: (c + x, x), 0.0, a, unroll=0)


@pytest.mark.parametrize("fn, args, error, words", [
    (carry_dtype_changes, (np.ones((4, 2)),), PSCTypeError,
     "carry input and carry output must have equal types"),
    (carry_shape_changes, (np.ones((4, 2)),), PSCShapeError,
     "carry input and carry output must have equal types"),
    (int_for_float_carry, (np.ones((4, 2)),), PSCTypeError,
     "carry input and carry output must have equal types"),
    (carry_structure_changes, (np.ones((4, 2)),), PSCTypeError,
     "carry input and carry output must have the same structure"),
    (ragged_xs, (np.ones(4), np.ones(3)), PSCValueError, "different leading axis sizes"),
    (wrong_length, (np.ones(4),), PSCValueError, "disagrees with leading axis sizes"),
    (no_length, (), PSCValueError, "`length` not provided"),
    (traced_length, (3,), PSCTracedValueError, "length must be static"),
    (not_a_pair, (np.ones(4),), PSCTypeError, "must return a pair"),
    (bad_unroll, (np.ones(4),), PSCValueError, "unroll"),
], ids=["carry_dtype", "carry_shape", "int_for_float", "carry_structure", "ragged_xs",
        "length", "no_length", "traced_length", "pair", "unroll"])
def test_errors_name_the_scan_line(fn, args, error, words):
    with pytest.raises(error) as info:
        jit_ps(fn)(*args)
    assert words in info.value.message
    line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1)
                if text.strip().startswith("return scan(") and
                i > fn.__code__.co_firstlineno)
    assert info.value.location is not None and info.value.location.line == line


def test_reference_checks_the_lengths_too():
    with pytest.raises(PSCValueError, match="different leading axis sizes"):
        reference.scan(lambda c, x: (c, x), 0.0, (np.ones(4), np.ones(3)))
