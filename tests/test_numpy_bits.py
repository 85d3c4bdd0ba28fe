"""``np.packbits``/``np.unpackbits`` on traced arrays against NumPy: dtypes, axes, bit
orders, counts, padding, empty arrays, and NumPy's errors as PSC errors."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime import PSCTypeError, PSCValueError


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32, np.int64])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits(dtype, bitorder, rng):
    for shape in [(), (0,), (5,), (8,), (3, 11), (2, 0, 3), (2, 9, 4)]:
        x = rng.integers(-2, 3, shape).astype(dtype)
        for axis in [None] + list(range(-len(shape), len(shape))):
            expected = np.packbits(x, axis=axis, bitorder=bitorder)
            assert_same(run_rule(np.packbits, x, axis=axis, bitorder=bitorder), expected)


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_unpackbits(bitorder, rng):
    for shape in [(), (0,), (3,), (2, 5), (2, 3, 2)]:
        x = rng.integers(0, 256, shape).astype(np.uint8)
        for axis in [None] + list(range(-len(shape), len(shape))):
            for count in (None, 0, 3, -5, 30):
                if x.size == 0 and count and count > 0:
                    # NumPy 2.4 leaves the padding of an empty input uninitialized; its
                    # documentation promises zero bits
                    expected = np.zeros(count, np.uint8)
                else:
                    try:
                        expected = np.unpackbits(x, axis=axis, count=count,
                                                 bitorder=bitorder)
                    except ValueError:   # -count beyond the available bits
                        with pytest.raises(PSCValueError):
                            run_rule(np.unpackbits, x, axis=axis, count=count)
                        continue
                actual = run_rule(np.unpackbits, x, axis=axis, count=count,
                                  bitorder=bitorder)
                assert_same(actual, expected)


def test_round_trip(rng):
    x = rng.integers(0, 2, (4, 13)).astype(bool)
    packed = run_rule(np.packbits, x, axis=1)
    assert_same(run_rule(np.unpackbits, packed, axis=1, count=13).astype(bool), x)


def test_errors_match_numpy():
    with pytest.raises(TypeError):
        np.packbits(np.ones(3))
    with pytest.raises(PSCTypeError):
        run_rule(np.packbits, np.ones(3))
    with pytest.raises(TypeError):
        np.unpackbits(np.ones(3, np.int32))
    with pytest.raises(PSCTypeError):
        run_rule(np.unpackbits, np.ones(3, np.int32))
    with pytest.raises(ValueError):
        np.packbits(np.ones(3, bool), bitorder="middle")
    with pytest.raises(PSCValueError):
        run_rule(np.packbits, np.ones(3, bool), bitorder="middle")
