"""``convolve``, ``correlate``, ``cross``, ``matvec``, ``vecmat``, ``vecdot`` and
``einsum_path`` on traced arrays (`runtime.numpy_rules.products`), differential against
NumPy: values, dtypes and shapes over float32/float64/int/bool/complex, every mode with
either operand longer, broadcast batch dimensions, negative axes, and NumPy's errors as
PSC errors at the line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from runtime import PSCError
from transpiler import jit_ps


@jit_ps(static_argnames=("name", "options"))
def _call(a, v, name, options):
    return getattr(np, name)(a, v, **dict(options))


def _input(shape, dtype, rng):
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _compare(a, v, name, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # cross of 2-vectors
        expected = getattr(np, name)(a, v, **options)
        actual = _call(a, v, name, tuple(sorted(options.items())))
    assert actual.dtype == expected.dtype, (name, options, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (name, options, actual.shape, expected.shape)
    single = expected.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(actual, expected, rtol=1e-5 if single else 1e-12,
                               atol=1e-4 if single else 1e-12)


DTYPES = [np.float32, np.float64, np.int32, np.int8, np.bool_, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_signals(name, dtype):
    rng = np.random.default_rng(0)
    for n, m in [(5, 3), (3, 5), (4, 4), (2, 7)]:
        a, v = _input(n, dtype, rng), _input(m, dtype, rng)
        for mode in ("full", "same", "valid"):
            _compare(a, v, name, mode=mode)
    _compare(_input(4, dtype, rng), _input(3, dtype, rng), name)   # each one's default mode


def test_signals_mixed_dtypes_and_errors():
    rng = np.random.default_rng(1)
    _compare(_input(5, np.float32, rng), _input(3, np.int64, rng), "convolve")
    _compare(_input(5, np.float32, rng), _input(3, np.complex64, rng), "correlate",
             mode="same")
    with pytest.raises(PSCError, match="cannot be empty"):
        _call(np.zeros(0), np.ones(3), "convolve", ())
    with pytest.raises(PSCError, match="cannot be empty"):
        _call(np.ones(3), np.zeros(0), "correlate", ())
    with pytest.raises(PSCError, match="too deep"):
        _call(np.ones((2, 2)), np.ones(3), "convolve", ())
    with pytest.raises(PSCError, match="mode must be one of"):
        _call(np.ones(3), np.ones(3), "convolve", (("mode", "wide"),))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex128])
def test_cross(dtype):
    rng = np.random.default_rng(2)
    r = lambda *s: _input(s, dtype, rng)   # noqa: E731
    _compare(r(4, 3), r(3), "cross")
    _compare(r(4, 3), r(2, 1, 3), "cross")
    _compare(r(3, 4), r(4, 3), "cross", axisa=0, axisc=0)
    _compare(r(3, 5), r(3, 5), "cross", axis=0)
    _compare(r(4, 2), r(2), "cross")
    _compare(r(2), r(3), "cross")
    _compare(r(5, 3), r(5, 2), "cross", axisc=-2)


def test_cross_warns_and_refuses_as_numpy():
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        _call(np.ones(2), np.ones(2), "cross", ())
    with pytest.raises(PSCError, match="incompatible dimensions"):
        _call(np.ones(4), np.ones(3), "cross", ())
    with pytest.raises(PSCError, match="out of bounds"):
        _call(np.ones(3), np.ones(3), "cross", (("axisa", 1),))
    with pytest.raises(PSCError):   # bool: NumPy's subtract refuses booleans
        _call(np.ones(3, bool), np.ones(3, bool), "cross", ())


@pytest.mark.parametrize("dtype", DTYPES)
def test_gufuncs(dtype):
    rng = np.random.default_rng(3)
    r = lambda *s: _input(s, dtype, rng)   # noqa: E731
    _compare(r(2, 3, 4), r(4), "matvec")
    _compare(r(3, 4), r(5, 1, 4), "matvec")
    _compare(r(4), r(2, 4, 3), "vecmat")
    _compare(r(5, 1, 4), r(3, 4, 2), "vecmat")
    _compare(r(3, 4), r(4), "vecdot")
    _compare(r(4, 3), r(2, 4, 3), "vecdot", axis=-2)
    _compare(r(0, 4), r(4), "vecdot")


def test_gufunc_errors():
    with pytest.raises(PSCError, match="mismatch in its core dimension"):
        _call(np.ones((2, 3)), np.ones(4), "matvec", ())
    with pytest.raises(PSCError, match="does not have enough dimensions"):
        _call(np.ones(3), np.ones(3), "matvec", ())
    with pytest.raises(PSCError, match="mismatch"):
        _call(np.ones(3), np.ones(4), "vecdot", ())


@jit_ps
def _path_then_einsum(a, c):
    path, _ = np.einsum_path("ij,jk,kl->il", a, c, a, optimize="optimal")
    return np.einsum("ij,jk,kl->il", a, c, a, optimize=path), len(path)


def test_einsum_path_is_numpys():
    a, c = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    result, length = _path_then_einsum(a, c)
    path, _ = np.einsum_path("ij,jk,kl->il", a, c, a, optimize="optimal")
    assert int(length) == len(path)
    np.testing.assert_allclose(result, np.einsum("ij,jk,kl->il", a, c, a))
