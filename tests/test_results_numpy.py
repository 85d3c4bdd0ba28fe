"""Results keep NumPy semantics after the call (issue 11, item 2).

A call returns what the plain function returns: NumPy arrays (read-only, zero-copy views of
XLA's buffers on CPU), NumPy scalars for 0-d results, Python scalars where the program
computed a 0-d result from Python numbers only.  So the caller's *next* plain-Python line
runs in NumPy with the result's exact dtype: float64 stays float64 although JAX's x64 flag
is off (as jax arrays, ``y * 2`` would run in JAX and round to float32).
``return_device_arrays=True`` keeps jax arrays.  Every check is differential: the oracle is
the same function run as plain Python + NumPy.
"""
from __future__ import annotations

import collections
import warnings

import jax
import numpy as np
import pytest
from jaxlib import _jax

from conftest import assert_same
from runtime import StagedFunction, translate
from runtime.autodiff.api import grad, hessian, jacfwd, jacrev, value_and_grad
from transpiler import jit_ps

DTYPES = [np.float64, np.int64, np.complex128, np.float32, np.bool_, np.int32, np.uint8,
          np.float16, np.complex64]


def double(x):
    return x + x


def follow_ups(y, dtype):
    """The plain-Python lines a user writes after the call."""
    other = np.ones(3, dtype)
    return [y * 2, y + other, y.sum(), y - y if dtype != np.bool_ else y ^ y, y / 3,
            np.sqrt(np.abs(y).astype(np.float64) if dtype == np.bool_ else np.abs(y)),
            y[0], y.mean(), y.dtype]


def assert_same_types(actual, expected):
    """Same Python types leaf by leaf (ndarray / NumPy scalar type / Python scalar), and
    the same container types."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, dict):
        for key in expected:
            assert_same_types(actual[key], expected[key])
    elif isinstance(expected, (tuple, list)):
        for a, e in zip(actual, expected):
            assert_same_types(a, e)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtype_survives_the_next_plain_python_line(dtype):
    assert not jax.config.jax_enable_x64   # the case that lost float64: x64 off
    x = (np.arange(3) + 1).astype(dtype)
    y = jit_ps(double)(x)
    expected = double(x)
    assert_same(y, expected)
    assert type(y) is np.ndarray
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # JAX warns when it squashes float64 to float32
        actual_next, expected_next = follow_ups(y, dtype), follow_ups(expected, dtype)
    for a, e in zip(actual_next, expected_next):
        if isinstance(e, np.dtype):
            assert a == e
            continue
        assert_same(a, e)
        assert_same_types(a, e)


def test_the_issue_reproducer_keeps_float64_exactly():
    x = np.linspace(0.1, 1.0, 3) + 1e-12   # digits float32 would round away
    f = jit_ps(double)
    y = f(x)
    for actual, expected in ((y * 2, double(x) * 2), (y + np.ones(3), double(x) + 1),
                             (y.sum(), double(x).sum())):
        assert actual.dtype == np.float64
        np.testing.assert_array_equal(actual, expected)


def total(x):
    return np.sum(x)


def first(x):
    return x[0]


def times_n(x, n):
    return n * 2


def scaled(x, s):
    return s * 0.5


def dot_self(x):
    return x @ x


def is_big(x):
    return np.sum(x) > 1


@pytest.mark.parametrize("fn, args", [
    (total, (np.arange(3.0),)),
    (total, (np.arange(3, dtype=np.int64),)),
    (total, (np.ones(3, np.float32),)),
    (first, (np.arange(3.0) + 1j,)),
    (dot_self, (np.arange(3.0),)),
    (is_big, (np.arange(3.0),)),
    (times_n, (np.ones(2), 3)),        # from a Python int: a Python int
    (scaled, (np.ones(2), 3.0)),       # from a Python float: a Python float
], ids=lambda v: getattr(v, "__name__", ""))
def test_0d_results_are_scalars_as_numpy_returns_them(fn, args):
    expected = fn(*args)
    actual = jit_ps(fn)(*args)
    assert_same(actual, expected)
    assert_same_types(actual, expected)
    # the follow-up keeps the weak/strong promotion of the plain result
    assert_same(actual * np.ones(2, np.float32), expected * np.ones(2, np.float32))


def zero_d_array(x):
    return np.zeros(()) + np.sum(x)


def test_a_0d_array_result_is_a_numpy_scalar():
    """Known limit: the compiled program cannot tell a 0-d array from a scalar, and NumPy
    returns scalars from nearly every operation on 0-d values, so a 0-d result is a
    scalar; values, dtype and promotion equal (``np.zeros(()) + s`` is a scalar in NumPy
    too)."""
    expected = zero_d_array(np.arange(3.0))
    actual = jit_ps(zero_d_array)(np.arange(3.0))
    assert_same(actual, expected)
    assert_same_types(actual, expected)


Pair = collections.namedtuple("Pair", "low high")


def tree(x, n):
    return {"sum": np.sum(x), "parts": (x[:1], [x * 2, n + 1]),
            "pair": Pair(np.min(x), np.max(x).astype(np.int64)), "x": x}


def test_every_leaf_of_a_pytree_is_converted():
    x = np.arange(4.0)
    expected = tree(x, 2)
    actual = jit_ps(tree)(x, 2)
    assert_same(actual, expected)
    assert_same_types(actual, expected)
    assert type(actual["pair"]) is Pair


def loss(x):
    return np.sum(x * x * x)


def loss_with_aux(x):
    return np.sum(x * x), x * 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_derivatives_called_from_plain_python_return_numpy(dtype):
    x = np.arange(3, dtype=dtype) + 1
    three_x2 = 3 * x * x   # d/dx sum(x^3)
    assert_same(grad(loss)(x), three_x2, rtol=1e-5)
    assert_same_types(grad(loss)(x), three_x2)
    value, g = value_and_grad(loss)(x)
    assert_same((value, g), (loss(x), three_x2), rtol=1e-5)
    assert_same_types((value, g), (loss(x), three_x2))
    (g, aux) = grad(loss_with_aux, has_aux=True)(x)
    assert_same_types((g, aux), (2 * x, loss_with_aux(x)[1]))
    assert_same((g, aux), (2 * x, loss_with_aux(x)[1]), rtol=1e-5)
    jac = np.diag(three_x2)   # d(v^3)/dv, element-wise
    for transform in (jacfwd, jacrev):
        actual = transform(lambda v: v * v * v)(x)
        assert type(actual) is np.ndarray
        assert_same(actual, jac, rtol=1e-5)
    actual = hessian(loss)(x)
    assert type(actual) is np.ndarray
    assert_same(actual, np.diag(6 * x), rtol=1e-5)


def test_grad_of_a_jit_ps_function_follows_its_result_option():
    x = np.arange(3.0)
    assert type(grad(jit_ps(loss))(x)) is np.ndarray
    on_device = grad(jit_ps(loss, return_device_arrays=True))(x)
    assert type(on_device) is _jax.ArrayImpl and on_device.dtype == np.float64
    np.testing.assert_allclose(np.asarray(on_device), 3 * x * x)
    assert type(jit_ps(grad(loss))(x)) is np.ndarray
    assert type(jit_ps(grad(loss), return_device_arrays=True)(x)) is _jax.ArrayImpl


def test_return_device_arrays_keeps_jax_arrays_for_chaining():
    f = jit_ps(double, return_device_arrays=True)
    x = np.arange(3.0)
    y = f(x)
    assert type(y) is _jax.ArrayImpl and y.dtype == np.float64
    z = f(f(y))   # device arrays in, device arrays out
    assert type(z) is _jax.ArrayImpl
    assert_same(z, double(double(double(x))))
    assert type(jit_ps(tree, return_device_arrays=True)(x, 2)["sum"]) is _jax.ArrayImpl
    # the option is part of the options a jit_ps function is rebuilt with
    assert type(jit_ps(f)(x)) is np.ndarray
    assert type(jit_ps(jit_ps(double), return_device_arrays=True)(x)) is _jax.ArrayImpl
    assert f.cache_info().misses == 1


def test_results_are_read_only_views_that_do_not_alias_arguments():
    """The choice: zero-copy read-only views (as ``np.asarray`` of a jax array); a write
    is NumPy's loud ``ValueError``, never a silent write into memory XLA owns."""
    def identity(x):
        return x
    x = np.arange(3.0)
    y = jit_ps(identity)(x)
    assert not y.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        y[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        y += 1.0
    x[0] = 99.0            # the argument's memory is not the result's
    assert y[0] == 0.0
    copy = np.array(y)     # a writable copy when one is wanted
    copy[0] = 5.0
    assert copy.flags.writeable and y[0] == 0.0


def identity_pair(x):
    return x, x


def test_two_results_of_one_value_are_both_read_only():
    """Whether XLA gives the two results one buffer or two, neither can be written."""
    x = np.arange(3.0)
    actual = jit_ps(identity_pair)(x)
    assert_same(actual, identity_pair(x))
    assert_same_types(actual, identity_pair(x))
    assert not any(result.flags.writeable for result in actual)


def count_to(x, n):
    i = 0
    while i < n:
        x = x * 2
        i += 1
    return x


def test_every_dispatch_path_returns_numpy():
    # a loop: calls run on the interrupt worker thread
    x = np.arange(3.0)
    assert_same_types(jit_ps(count_to)(x, 3), count_to(x, 3))
    assert_same(jit_ps(count_to)(x, 3), count_to(x, 3))
    # a non-native byte order argument: the Python path
    big_endian = np.arange(3.0).astype(">f8")
    actual = jit_ps(double)(big_endian)
    assert type(actual) is np.ndarray and actual.dtype == np.float64
    assert_same(actual, double(big_endian).astype(np.float64))
    # the runtime-level StagedFunction too
    staged = StagedFunction(lambda b, v: translate(b, np.multiply, v, 2.0), name="twice")
    assert type(staged(x)) is np.ndarray
    assert type(StagedFunction(lambda b, v: translate(b, np.multiply, v, 2.0), name="t",
                               return_device_arrays=True)(x)) is _jax.ArrayImpl
