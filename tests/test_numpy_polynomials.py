"""``polyval``, ``polyder``, ``polyint``, ``polyadd``, ``polysub`` and ``vander`` on traced
arrays (`runtime.numpy_rules.polynomials`), differential against NumPy over
float32/float64/int/bool/complex; the data-dependent ones (``polymul``, ``polydiv``,
``poly``) refused with a PSCUnsupportedCallError."""
from __future__ import annotations

import numpy as np
import pytest

from runtime import PSCError, PSCUnsupportedCallError
from transpiler import jit_ps


@jit_ps(static_argnames=("name", "options"))
def _call(args, name, options):
    return getattr(np, name)(*args, **dict(options))


def _input(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind in "iu":
        x = rng.integers(-3, 4, shape)
    if np.dtype(dtype).kind == "b":
        x = rng.integers(0, 2, shape)
    return x.astype(dtype)


def _compare(name, *args, **options):
    expected = np.asarray(getattr(np, name)(*args, **options))
    actual = np.asarray(_call(args, name, tuple(sorted(options.items()))))
    where = (name, options, [np.asarray(a).dtype for a in args])
    assert actual.dtype == expected.dtype, where
    assert actual.shape == expected.shape, where
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5, err_msg=str(where))


DTYPES = [np.float32, np.float64, np.int32, np.int8, np.bool_, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
def test_polynomials(dtype):
    p, q, x = _input(4, dtype), _input(2, dtype, 1), _input((2, 3), dtype, 2)
    _compare("polyval", p, x)
    _compare("polyval", p, _input(3, np.float32, 3))
    _compare("vander", _input(4, dtype))
    _compare("vander", _input(3, dtype), N=5, increasing=True)
    _compare("vander", _input(3, dtype), N=0)
    if dtype is not np.bool_:   # NumPy: bool subtract / arange products refuse or differ
        _compare("polysub", p, q)
        _compare("polysub", q, p)
    _compare("polyadd", p, q)
    _compare("polyadd", q, p)
    _compare("polyadd", p, _input(4, np.float32, 4))
    if dtype is not np.bool_:
        _compare("polyder", p)
        _compare("polyder", p, m=2)
        _compare("polyder", p, m=5)
        _compare("polyint", p)
        _compare("polyint", p, m=2, k=np.float32(3))
        _compare("polyint", p, m=2, k=(1.0, 2.0))


def test_errors_and_refusals():
    with pytest.raises(PSCError, match="Order of derivative"):
        _call((np.ones(3),), "polyder", (("m", -1),))
    with pytest.raises(PSCError, match="one-dimensional"):
        _call((np.ones((2, 2)),), "vander", ())
    for name in ("polymul", "polydiv"):
        with pytest.raises(PSCUnsupportedCallError, match="trims leading zero"):
            _call((np.ones(3), np.ones(2)), name, ())
    with pytest.raises(PSCUnsupportedCallError):
        _call((np.ones(3),), "poly", ())
