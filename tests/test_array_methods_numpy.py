"""The ndarray methods and attributes NumPy code calls on traced arrays, against NumPy:
``x.diagonal()``, ``x.take``, ``x.conj()``, ``x.real``/``x.imag``, ``x.nonzero(size=)``,
``x.searchsorted``, ``x.sort()``, ``x.round``, ``x.nbytes``, ``x.itemsize``, ``x.flat``."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same
from transpiler import jit_ps

RNG = np.random.default_rng(3)
REAL = RNG.standard_normal((3, 4))
COMPLEX = REAL + 1j * RNG.standard_normal((3, 4))


def _methods(x):
    y = x * 1
    if x.dtype.kind != "c":   # complex sorting is refused (a PSCTypeError)
        y.sort(axis=-1)
    return (x.diagonal(), x.diagonal(1), x.take([0, 5, -1]), x.take([2, 0], axis=1),
            x.conj(), x.conjugate(), x.real, x.imag, x.round(1), y,
            x.flat[5], np.stack(list(x.flat)), x.nbytes, x.itemsize)


@pytest.mark.parametrize("x", [REAL, REAL.astype(np.float32), COMPLEX,
                               (REAL * 3).astype(np.int32)], ids=lambda x: x.dtype.name)
def test_methods_and_attributes_match_numpy(x):
    actual = jit_ps(_methods)(x)
    expected = _methods(x)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert_same(np.asarray(got), np.asarray(want))


def test_searchsorted_and_nonzero_methods():
    a = np.sort(REAL.ravel())
    v = np.array([-1.0, 0.0, 0.5])

    def f(a, v):
        return a.searchsorted(v), a.searchsorted(v, side="right"), (a > 0).nonzero(size=4)

    actual = jit_ps(f)(a, v)
    assert_same(actual[0], a.searchsorted(v))
    assert_same(actual[1], a.searchsorted(v, side="right"))
    expected = np.nonzero(a > 0)[0][:4]
    assert_same(actual[2][0][:len(expected)], expected)
