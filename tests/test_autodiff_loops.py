"""Reverse mode through staged loops (`runtime/autodiff/residuals.py`, `control.py`).

One step of the loop body is linearized; the forward loop runs its primal part and stores
the residuals, the backward loop runs only the cotangent part.  Oracles: jax.grad / jax.jvp
/ jax.hessian of the same program in ``jax.numpy`` (Python loops, which JAX unrolls), and
the structure of the program we build (what runs in which loop).
"""
from __future__ import annotations

import re

import jax
import numpy as np
import pytest

from ad_corpus import functions as F
from ad_corpus.oracles import as_jax, close, jax_x64  # noqa: F401
from runtime import Builder
from runtime.autodiff.residuals import RECOMPUTED, linearize_body
from transpiler import fori_loop, grad, hessian, jacrev, jit_ps, jvp


W = np.random.default_rng(0).normal(size=(4, 4)) * 0.5
OBS = np.array([3, 0, 2, 2, 1, 0, 3, 1])


def logsumexp(z, axis):
    top = np.max(z, axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(z - top), axis=axis))


def sine_loop(x):
    for i in range(6):
        x = np.sin(x) * 1.1 + 0.1
    return np.sum(x * np.arange(x.size))


def strided(x, start, stop, step):
    for i in range(start, stop, step):
        x = np.tanh(x * (0.5 + 0.1 * i)) + x
    return np.sum(x ** 2)


def extra_counter(x):
    j = 7
    for i in range(5):
        x = np.cos(x) * j + x * 0.2
        j = j + 3
    return np.sum(x)


def forward_algorithm(theta):
    alpha = theta[:4] + W[:, OBS[0]]
    for t in range(1, OBS.size):
        alpha = logsumexp(alpha[:, None] + W * theta[4:], 0) + W[:, OBS[t]]
    return logsumexp(alpha, 0)


def max_with_ties(x):
    for i in range(3):
        x = np.max(np.stack([x, x, x * 0.5]), axis=0) + 0.25
    return np.sum(x * np.arange(1.0, x.size + 1))


def nested(x):
    for i in range(3):
        for j in range(2):
            x = np.tanh(x * (1.0 + j) + i * 0.3)
    return np.sum(x ** 3)


def unused_loop(x):
    y = x
    for i in range(3):
        while np.sum(y) < 4.0:   # no reverse rule, but off the gradient's path
            y = y * 1.5 + 0.1
    if np.sum(y) > 1.0:
        return np.sum(x * 2.0)
    return np.sum(x * 3.0)


def _weyl_step(i, carry):
    s, x = carry
    return s + np.uint32(2654435769), np.sin(x) * 1.1 + 0.1


def _big_step(i, carry):
    s, x = carry
    return s + np.int32(1_000_000_000), np.sin(x) * 1.1 + 0.1


def _unsigned_down_step(i, carry):
    s, x = carry
    return s - np.uint32(1), np.sin(x) * 1.1 + 0.1


def _plain_step(i, x):
    return np.sin(x) * 1.1 + 0.1


# fori_loop's own counter is no constant step, so the state's integer is tried as the row
# index; it must be refused where it would wrap around or run below zero.

def weyl_counter(x):
    _, x = fori_loop(0, 4, _weyl_step, (np.uint32(0), x))
    return np.sum(x * np.arange(x.size))


def big_stride_counter(x):
    _, x = fori_loop(0, 4, _big_step, (np.int32(0), x))
    return np.sum(x * np.arange(x.size))


def unsigned_down_counter(x):
    _, x = fori_loop(0, 4, _unsigned_down_step, (np.uint32(10), x))
    return np.sum(x * np.arange(x.size))


def plain_counter(x):
    return np.sum(fori_loop(0, 4, _plain_step, x) * np.arange(x.size))


@jit_ps
def sine_loop_grad(x):
    return grad(sine_loop)(x)


def test_the_backward_loop_reads_stored_residuals():
    """sin runs once, in the forward loop; cos (what sin's VJP needs) is computed there too
    and stored: the backward loop recomputes neither."""
    x = np.array([0.3, -0.8, 1.2])
    close(sine_loop_grad(x), jax.grad(as_jax(sine_loop))(x))
    text = sine_loop_grad.lower(x)
    assert len(re.findall(r'"stablehlo\.sine"', text)) == 1
    assert len(re.findall(r'"stablehlo\.cosine"', text)) == 1
    assert text.count('"stablehlo.while"') == 2


@pytest.mark.parametrize("bounds", [(0, 5, 1), (1, 9, 2), (8, 0, -2), (2, 3, 1), (4, 4, 1)],
                         ids=["0:5", "1:9:2", "8:0:-2", "one_trip", "no_trip"])
def test_loops_counting_in_any_stride(bounds):
    x = np.array([0.4, -0.2, 0.9])
    ours = grad(strided)(x, *bounds)
    close(ours, jax.grad(as_jax(strided))(x, *bounds))


def test_a_second_integer_counter_in_the_state():
    x = np.array([0.1, 0.5])
    close(grad(extra_counter)(x), jax.grad(as_jax(extra_counter))(x))


@pytest.mark.parametrize("fn", [forward_algorithm, max_with_ties, nested,
                                F.cf_early_return],
                         ids=lambda f: f.__name__)
def test_grad_and_hessian_vector_products(fn):
    rng = np.random.default_rng(1)
    x = rng.normal(size=8) * 0.3 if fn is forward_algorithm else np.array([0.2, 0.2, -0.5])
    v = rng.normal(size=x.shape)
    close(grad(fn)(x), jax.grad(as_jax(fn))(x), 1e-9, 1e-11)
    _, ours = jvp(grad(fn), (x,), (v,))
    _, theirs = jax.jvp(jax.grad(as_jax(fn)), (x,), (v,))
    close(ours, theirs, 1e-9, 1e-11)


@pytest.mark.parametrize("fn", [forward_algorithm, nested], ids=lambda f: f.__name__)
def test_hessian_through_loops(fn):
    x = np.random.default_rng(2).normal(size=8) * 0.3 if fn is forward_algorithm else \
        np.array([0.2, 0.7, -0.5])
    close(hessian(fn)(x), jax.hessian(as_jax(fn))(x), 1e-8, 1e-10)


@pytest.mark.parametrize("fn", [sine_loop, forward_algorithm, nested,
                                F.cf_early_return],
                         ids=lambda f: f.__name__)
def test_reverse_over_reverse_through_loops(fn):
    """The backward loop records its trip count, so it can be reversed in turn."""
    x = np.random.default_rng(2).normal(size=8) * 0.3 if fn is forward_algorithm else \
        np.array([0.2, 0.7, -0.5])
    close(jacrev(grad(fn))(x), jax.jacrev(jax.grad(as_jax(fn)))(x), 1e-8, 1e-10)


def test_a_loop_off_the_gradient_path_is_not_differentiated():
    x = np.array([0.5, 1.0, 0.25])
    close(grad(unused_loop)(x), np.full(3, 2.0))


@pytest.mark.parametrize("fn", [weyl_counter, big_stride_counter, unsigned_down_counter],
                         ids=lambda f: f.__name__)
def test_integer_state_that_cannot_number_the_rows(fn):
    x = np.array([0.3, -0.8, 1.2])
    close(grad(fn)(x), jax.grad(as_jax(plain_counter))(x))


def test_linearized_body_splits_primal_and_cotangent_ops():
    """No primal op reads a cotangent; residuals are parameters or results of real
    computations (never of an op that is cheaper to redo than to store)."""
    b = Builder("loop")
    x = b.parameter(0, (3,), np.float64)
    w = b.parameter(1, (3,), np.float64)

    def body(sub, carry):
        i, v = carry
        return sub.add(i, sub.constant(np.int32(1))), sub.mul(sub.sin(v), w)
    b.while_loop(lambda sub, c: sub.lt(c[0], sub.constant(np.int32(4))), body,
                 (b.constant(np.int32(0)), x), trip_count=4)
    loop = b.region.operations[-1]
    linear = linearize_body(b, loop.regions[1], loop.attrs["num_state"],
                            loop.operands[loop.attrs["num_state"]:])
    primal = set(linear.primal_ops)
    reads_cotangent = set(linear.cotangents)
    for op in linear.region.operations:
        if any(v in reads_cotangent for v in op.operands):
            reads_cotangent.update(op.results)
            assert op not in primal
    producers = {v: op for op in linear.region.operations for v in op.results}
    assert linear.residuals
    for value in linear.residuals:
        assert value not in reads_cotangent
        is_param = any(value is p for p in linear.region.params)   # Values overload ==
        assert is_param or producers[value].name not in RECOMPUTED
    # sin(v) for w's cotangent, cos(v) for v's: nothing else is worth storing
    assert sorted(producers[v].name for v in linear.residuals if v in producers) == [
        "cosine", "sine"]
