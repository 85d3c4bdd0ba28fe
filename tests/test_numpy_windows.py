"""``kaiser`` with a traced beta, ``logspace`` between traced exponents and ``piecewise``
(`runtime.numpy_rules.windows`), differential against NumPy; a traced window length is a
PSCTracedValueError."""
from __future__ import annotations

import numpy as np
import pytest

from runtime import PSCTracedValueError
from transpiler import jit_ps


@jit_ps(static_argnames=("m",))
def _kaiser(beta, m):
    return np.kaiser(m, beta)


@jit_ps(static_argnames=("num", "endpoint", "base"))
def _logspace(start, stop, num, endpoint, base):
    return np.logspace(start, stop, num, endpoint, base)


@jit_ps
def _piecewise(x):
    return (np.piecewise(x, [x < 0, x > 2], [lambda v: -v, np.sqrt, 7.0]),
            np.piecewise(x.ravel(), x.ravel() < 1, [np.sin, 3]))


@jit_ps
def _hamming(m):
    return np.hamming(m)


def test_kaiser():
    for beta in (0.0, 3.5, 14.0, np.float32(20.0)):
        for m in (0, 1, 2, 7, 12):
            expected = np.kaiser(m, beta)
            actual = _kaiser(beta, m)
            assert actual.dtype == expected.dtype and actual.shape == expected.shape
            np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)


def test_logspace():
    for start, stop in [(0.0, 2.0), (np.float32(-1), np.float32(1.5)), (1, 3)]:
        for num, endpoint, base in [(5, True, 10.0), (4, False, 2.0), (1, True, 10.0)]:
            expected = np.logspace(start, stop, num, endpoint, base)
            actual = _logspace(start, stop, num, endpoint, base)
            assert actual.dtype == expected.dtype and actual.shape == expected.shape
            np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_piecewise():
    for x in (np.linspace(-2, 4, 13), np.linspace(-2, 4, 12).reshape(3, 4).astype(np.float32),
              np.arange(-3, 5)):
        expected = (np.piecewise(x, [x < 0, x > 2], [lambda v: -v, np.sqrt, 7.0]),
                    np.piecewise(x.ravel(), x.ravel() < 1, [np.sin, 3]))
        with np.errstate(invalid="ignore"):
            actual = _piecewise(x)
        for a, e in zip(actual, expected):
            assert a.dtype == e.dtype and a.shape == e.shape
            np.testing.assert_allclose(a, e, rtol=1e-6)


def test_traced_window_length():
    with pytest.raises(PSCTracedValueError, match="window length"):
        _hamming(np.int64(5))


@jit_ps(static_argnames=("m",))
def _static_helpers(x, m):
    """Functions of static arguments only, used in PSC code beside traced values."""
    rows, cols = np.diag_indices(m)
    upper = np.mask_indices(m, np.triu)
    windows = (np.bartlett(m), np.blackman(m), np.hamming(m), np.hanning(m))
    shape = np.broadcast_shapes((m, 1), (1, 3))
    return [x * w for w in windows] + [rows + cols, upper[0] * 10 + upper[1],
                                       np.zeros(shape) + x[0]]


def test_static_argument_helpers_inside_psc_code():
    for m in (1, 4, 7):
        x = np.linspace(0.5, 2.0, m)
        rows, cols = np.diag_indices(m)
        upper = np.mask_indices(m, np.triu)
        expected = [x * np.bartlett(m), x * np.blackman(m), x * np.hamming(m),
                    x * np.hanning(m), rows + cols, upper[0] * 10 + upper[1],
                    np.zeros(np.broadcast_shapes((m, 1), (1, 3))) + x[0]]
        for a, e in zip(_static_helpers(x, m), expected):
            assert a.dtype == e.dtype and a.shape == e.shape
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
