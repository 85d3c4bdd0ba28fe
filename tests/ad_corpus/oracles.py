"""What the autodiff test modules share: JAX in float64 as the oracle, the same program
in ``jax.numpy``, and comparisons that check dtype and shape before values."""
from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

JAX_RTOL, JAX_ATOL = 1e-10, 1e-12


@pytest.fixture(autouse=True, scope="module")
def jax_x64():
    """JAX computes its oracle results in float64 while a module importing this fixture
    runs.  The flag is process-wide, so it is switched back afterwards rather than set at
    import (pytest imports every test module before running any, and
    tests/test_jit_api.py checks that the flag is off)."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def as_jax(fn):
    """``fn`` with ``np`` bound to ``jax.numpy``: the same program in JAX.  The functions
    of ``fn``'s module that it calls are rebound too."""
    namespace = dict(fn.__globals__, np=jnp)
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__:
            namespace[name] = types.FunctionType(value.__code__, namespace, value.__name__,
                                                 value.__defaults__, value.__closure__)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def close(actual, expected, rtol=JAX_RTOL, atol=JAX_ATOL, dtype=np.float64):
    actual = np.asarray(actual)
    assert actual.dtype == dtype, actual.dtype
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    np.testing.assert_allclose(actual, np.asarray(expected, np.float64), rtol=rtol,
                               atol=atol)


def close_tree(actual, expected, rtol=JAX_RTOL, atol=JAX_ATOL):
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree, (a_tree, e_tree)
    for a, e in zip(a_leaves, e_leaves):
        close(a, e, rtol, atol, dtype=np.asarray(e).dtype)
