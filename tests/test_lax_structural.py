"""``transpiler.lax``'s structural functions against jax.lax's on the same inputs (values,
shapes, dtypes), from plain Python and inside ``jit_ps``, with their derivatives where
they have one, and their errors."""
from __future__ import annotations

import jax
import jax.lax as jlax
import numpy as np
import pytest

from ad_corpus.oracles import jax_x64  # noqa: F401 - jax computes in float64 here
from runtime import grad
from runtime.errors import PSCShapeError, PSCTypeError
from transpiler import jit_ps, lax

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 5))
V = np.arange(10.0)


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours, theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# name -> (function name, arguments); each is run by both libraries
CALLS = {
    "dot_general_batch": ("dot_general", (RNG.standard_normal((2, 3, 4)),
                                          RNG.standard_normal((2, 4, 5)),
                                          (((2,), (1,)), ((0,), (0,))))),
    "dot_general_promotes": ("dot_general", (np.arange(6, dtype=np.int32).reshape(2, 3),
                                             X, (((1,), (0,)), ((), ()))), ),
    "dynamic_slice_clamped": ("dynamic_slice", (X, (2, 3), (2, 4))),
    "dynamic_slice_negative": ("dynamic_slice", (X, (-2, -30), (1, 3))),
    "dynamic_slice_array_starts": ("dynamic_slice", (X, np.array([1, 1], np.int32), (2, 2))),
    "dynamic_update_slice": ("dynamic_update_slice", (V, np.ones(3), (-2,))),
    "pad_negative_interior": ("pad", (X, 0.5, [(1, -1, 1), (-2, 2, 0)])),
    "select": ("select", (X > 0, X, -X)),
    "broadcast_in_dim": ("broadcast_in_dim", (V[:3], (2, 3, 4), (1,))),
    "reduce_precision_half": ("reduce_precision", (X / 3, 5, 10)),
    "reduce_precision_bfloat16": ("reduce_precision", (X * 1e30, 8, 7)),
    "iota": ("iota", (np.int32, 4)),
    "broadcasted_iota": ("broadcasted_iota", (np.float32, (2, 3), 1)),
    "sort_one": ("sort", (X, 0)),
    "sort_keys": ("sort", ((np.array([[2, 1, 2, 1]]), np.array([[4.0, 3, 2, 1]])), -1,
                           True, 1)),
    "sort_two_keys": ("sort", ((np.array([2, 1, 2, 1]), np.array([4.0, 3, 2, 1]),
                                np.arange(4)), 0, True, 2)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_matches_jax(name):
    function, args = CALLS[name]
    _same(getattr(lax, function)(*args), getattr(jlax, function)(*args))


@jit_ps
def _window_update(x, i, j):
    block = lax.dynamic_slice(x, (i, j), (2, 2))
    padded = lax.pad(block, 0.0, [(0, 0, 1), (1, 0, 0)])
    keys, values = lax.sort((padded[:, 0], padded[:, 1]), num_keys=1)
    x = lax.dynamic_update_slice(x, lax.broadcast_in_dim(values, (2, 3), (1,)), (i, j))
    return lax.select(x > 0, x, lax.reduce_precision(x, 5, 10)), keys


def _window_update_jax(x, i, j):
    block = jlax.dynamic_slice(x, (i, j), (2, 2))
    padded = jlax.pad(block, 0.0, [(0, 0, 1), (1, 0, 0)])
    keys, values = jlax.sort((padded[:, 0], padded[:, 1]), num_keys=1)
    x = jlax.dynamic_update_slice(x, jlax.broadcast_in_dim(values, (2, 3), (1,)), (i, j))
    return jlax.select(x > 0, x, jlax.reduce_precision(x, 5, 10)), keys


@pytest.mark.parametrize("i, j", [(1, 2), (-1, 4)])
def test_inside_jit_ps(i, j):
    _same(_window_update(X, i, j), _window_update_jax(X, i, j))


def test_gradients_match_jax():
    def ours(x):
        y = lax.dot_general(x, x, (((1,), (1,)), ((), ())))
        return (lax.pad(lax.dynamic_slice(y, (1, 0), (2, 2)), 0.0, [(1, 0, 1), (0, -1, 0)])
                ** 2).sum()

    def theirs(x):
        y = jlax.dot_general(x, x, (((1,), (1,)), ((), ())))
        return (jlax.pad(jlax.dynamic_slice(y, (1, 0), (2, 2)), 0.0,
                         [(1, 0, 1), (0, -1, 0)]) ** 2).sum()
    _same(grad(ours)(X), jax.grad(theirs)(X))


def test_errors():
    with pytest.raises(PSCTypeError, match="start indices"):
        lax.dynamic_slice(X, (1.5, 0), (1, 1))
    with pytest.raises(PSCTypeError, match="start indices"):
        lax.dynamic_slice(X, (1,), (1, 1))
    with pytest.raises(PSCShapeError, match="broadcast"):
        lax.broadcast_in_dim(V, (3, 4), (1,))
    with pytest.raises(PSCTypeError, match="bool predicate"):
        lax.select(X, X, X)
