"""NumPy's alias functions (``np.degrees`` beside ``np.rad2deg``, ``np.amin`` beside
``np.min``...) and the small shape helpers, through their rules, against NumPy itself."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, run_rule

DTYPES = [np.float32, np.float64, np.int32, np.bool_]
SHAPES = [(), (0,), (3,), (2, 3), (2, 3, 4)]


def _array(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", [np.degrees, np.radians], ids=lambda f: f.__name__)
def test_angle_conversions(fn, dtype, rng):
    for shape in SHAPES[:4]:
        x = _array(shape, dtype, rng)
        assert_same(run_rule(fn, x), fn(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_amin_and_cumulative_prod(dtype, rng):
    x = _array((2, 3, 4), dtype, rng)
    for axis in (None, 0, -1, (0, 2)):
        assert_same(run_rule(np.amin, x, axis=axis), np.amin(x, axis=axis))
    for axis in (0, -1):
        assert_same(run_rule(np.cumulative_prod, x, axis=axis),
                    np.cumulative_prod(x, axis=axis))


@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_3d, np.fliplr, np.flipud,
                                np.matrix_transpose], ids=lambda f: f.__name__)
def test_shape_helpers(fn, rng):
    for shape in SHAPES:
        x = _array(shape, np.float64, rng)
        try:
            expected = fn(x)
        except ValueError:   # fliplr of a 1-d array, matrix_transpose of a vector
            with pytest.raises(Exception) as raised:
                run_rule(fn, x)
            assert "PSC" in type(raised.value).__name__
            continue
        assert_same(run_rule(fn, x), expected)
