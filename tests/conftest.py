"""Shared test helpers: run builder code through XLA and compare with NumPy."""
from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np
import pytest

# The suite never reads or writes the user's own persistent cache (runtime.disk_cache): it
# gets a fresh one, removed at the end; subprocesses the tests start inherit it.
_SESSION_CACHE = tempfile.mkdtemp(prefix="psc-test-cache-")
os.environ["PSC_CACHE_DIR"] = _SESSION_CACHE

from runtime import StagedFunction, translate  # noqa: E402 (after the cache is chosen)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


def run_rule(fn, *args, static=(), **kwargs):
    """Call ``fn`` (a NumPy function or operator) on traced ``args`` through its rule,
    compiled with XLA.  Positions in ``static`` are passed as build-time constants."""
    static = set(static)
    traced = [a for i, a in enumerate(args) if i not in static]

    def build(b, *values):
        it = iter(values)
        call = [a if i in static else next(it) for i, a in enumerate(args)]
        return translate(b, fn, *call, **kwargs)
    return StagedFunction(build, name=getattr(fn, "__name__", "rule"))(*traced)


def assert_same(actual, expected, rtol=1e-6, atol=1e-12):
    """Values, dtypes and shapes equal (NaNs equal, floats within tolerance)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e, rtol, atol)
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys()
        for k in expected:
            assert_same(actual[k], expected[k], rtol, atol)
        return
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def same(fn, *args, static=()):
    """``jit_ps(fn)(*args)`` equals ``fn(*args)``: the differential check of a PSC function
    against plain Python + NumPy."""
    from transpiler import jit_ps
    expected = fn(*args)
    actual = jit_ps(fn, static_argnames=static)(*args)
    assert_same(actual, expected)


def f64(*values):
    return np.array(values, np.float64)


def marked_line(path: str, marker: str) -> int:
    """The number of the one line of ``path`` that ends with the comment ``# marker``."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found = [i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, (marker, found)
    return found[0]
