"""Sorting, searching, set and selection functions on traced arrays (`runtime.numpy_rules`
`sorting`, `setops`, `selection`), differential against NumPy: values, dtypes and shapes
over float32/float64/int/bool inputs with NaNs, ties, empty arrays and negative axes.
The data-dependent-length functions take jax's ``size=``/``fill_value=``: with ``size``
equal to NumPy's length the result is NumPy's; padded or truncated it is compared with
jax.numpy (the second oracle).  ``partition`` is checked by its property and its kth
values, the only things NumPy specifies."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from runtime import PSCError, PSCRuntimeIndexError, PSCTypeError, PSCValueError
from transpiler import grad, jit_ps
from ad_corpus.oracles import jax_x64  # noqa: F401,E402  (jax in 64 bits while this runs)


@jit_ps(static_argnames=("name", "options", "count"))
def _traced(args, arrays, name, options, count):
    return getattr(np, name)(*args[:count], **arrays, **dict(options))


def run(name, *args, **options):
    """np.<name>(*args, **options) compiled, every array argument (keywords too) traced."""
    arrays = {k: v for k, v in options.items() if isinstance(v, np.ndarray)}
    static = tuple(sorted((k, v) for k, v in options.items() if k not in arrays))
    return _traced(args, arrays, name, static, len(args))


def same(actual, expected):
    """Same structure, values (NaN where NumPy has NaN), dtypes and shapes."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), (actual, expected)
        assert type(actual) is type(expected), (type(actual), type(expected))
        for a, e in zip(actual, expected):
            same(a, e)
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


def like_jax(actual, expected):
    """Values and shapes as jax.numpy gives them (its int dtypes are its own)."""
    if isinstance(expected, (tuple, list)):
        for a, e in zip(actual, expected):
            like_jax(a, e)
        return
    expected = np.asarray(expected)
    assert np.shape(actual) == expected.shape, (np.shape(actual), expected.shape)
    np.testing.assert_array_equal(np.asarray(actual), expected)


def padded(expected, size, fill):
    """NumPy's 1-d result cut or padded to ``size`` with ``fill`` (jax's size=)."""
    tail = np.full(max(size - len(expected), 0), fill, expected.dtype)
    return np.concatenate([expected[:size], tail])


def data(shape, dtype, seed=0, nans=True):
    """Small values with ties (and NaNs for floats)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape)
    if np.dtype(dtype) == np.bool_:
        return (x > 0)
    x = x.astype(dtype)
    if nans and np.dtype(dtype).kind == "f" and x.size > 2:
        x.flat[[1, x.size - 1]] = np.nan
    return x


DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


# --- searchsorted, digitize ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_searchsorted_short_and_long(dtype):
    for n in (7, 150):   # counting comparisons, and the bisection
        a = np.sort(data((n,), dtype, seed=n))
        v = data((3, 5), dtype, seed=1)
        for side in ("left", "right"):
            same(run("searchsorted", a, v, side=side), np.searchsorted(a, v, side=side))
    same(run("searchsorted", a, v[0, 0]), np.searchsorted(a, v[0, 0]))
    same(run("searchsorted", a[:0], v), np.searchsorted(a[:0], v))


def test_searchsorted_sorter_and_promotion():
    rng = np.random.default_rng(3)
    for n in (9, 100):
        a = rng.integers(0, 20, n).astype(np.int32)
        sorter = np.argsort(a, kind="stable")
        v = np.array([-1.5, 0, 3.5, 19, 25])
        for side in ("left", "right"):
            same(run("searchsorted", a, v, side=side, sorter=sorter),
                 np.searchsorted(a, v, side=side, sorter=sorter))


def test_digitize_increasing_decreasing_traced_and_static():
    x = np.array([-1, 0, 0.5, 1, 2.5, 3, 4, np.nan])
    for bins in (np.array([0., 1, 1, 3]), np.array([3., 2, 1, 1, 0]), np.array([2.0]),
                 np.array([1., 1])):
        for right in (False, True):
            expected = np.digitize(x, bins, right)
            same(run("digitize", x, bins, right=right), expected)
            same(_digitize_static(x, tuple(bins), right), expected)
    same(run("digitize", np.arange(5, dtype=np.int32), np.array([1, 3])),
         np.digitize(np.arange(5, dtype=np.int32), np.array([1, 3])))


@jit_ps(static_argnames=("bins", "right"))
def _digitize_static(x, bins, right):
    return np.digitize(x, np.array(bins), right)


def test_digitize_errors():
    with pytest.raises(PSCValueError, match="monoton"):
        _digitize_static(np.ones(3), (0.0, 2.0, 1.0), False)
    with pytest.raises(PSCTypeError, match="complex"):
        run("digitize", np.ones(3, complex), np.arange(3.0))


# --- lexsort, partition, sort_complex -------------------------------------------------------

def test_lexsort():
    k1, k2 = data((4, 6), np.float64, 1), data((4, 6), np.int32, 2)
    k3 = data((4, 6), np.bool_, 3)
    for axis in (-1, 0, 1):
        same(run("lexsort", (k1, k2, k3), axis=axis), np.lexsort((k1, k2, k3), axis=axis))
    keys = np.stack([k1[0], k2[0].astype(np.float64)])
    same(run("lexsort", keys), np.lexsort(keys))
    same(run("lexsort", (k1[0],)), np.lexsort((k1[0],)))


def _check_partition(x, kth, axis, part, index):
    kths = np.atleast_1d(kth)
    expected = np.partition(x, kth, axis=axis)
    assert part.dtype == expected.dtype and part.shape == expected.shape
    if axis is None:
        x, axis = x.ravel(), -1
    n = x.shape[axis]
    moved = np.moveaxis(part, axis, -1)
    reference = np.moveaxis(expected, axis, -1)
    np.testing.assert_array_equal(moved[..., kths % n], reference[..., kths % n])
    sorted_x = np.sort(np.moveaxis(x, axis, -1), axis=-1)
    for k in kths % n:   # the partition property, NaN sorting last
        low, high = moved[..., :k], moved[..., k + 1:]
        pivot = moved[..., k:k + 1]
        assert np.all((low <= pivot) | np.isnan(pivot)), (low, pivot)
        assert np.all((high >= pivot) | np.isnan(high)), (high, pivot)
    np.testing.assert_array_equal(np.sort(moved, axis=-1), sorted_x)   # a permutation
    assert index.dtype == np.int64
    np.testing.assert_array_equal(np.take_along_axis(np.moveaxis(x, axis, -1),
                                                     np.moveaxis(index, axis, -1), -1), moved)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_partition_property(dtype):
    x = data((3, 8), dtype, 5)
    for kth, axis in ((3, -1), ((0, 5, -1), 1), (1, 0), (-2, -2), (4, None)):
        _check_partition(x, kth, axis, run("partition", x, kth=kth, axis=axis),
                         run("argpartition", x, kth=kth, axis=axis))
    with pytest.raises(PSCValueError, match="out of bounds"):
        run("partition", x, kth=8)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64])
def test_sort_complex(dtype):
    x = data((7,), dtype, 2)
    same(run("sort_complex", x), np.sort_complex(x))


def test_complex_refused():
    z = np.array([1 + 2j, 0j])
    for name, args in (("sort_complex", (z,)), ("searchsorted", (z, z)),
                       ("partition", (z, 0)), ("lexsort", ((z,),))):
        with pytest.raises(PSCTypeError, match="complex"):
            run(name, *args)
    with pytest.raises(PSCTypeError, match="complex"):
        run("unique", z, size=2)


# --- nonzero and relatives ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_nonzero_family(dtype):
    x = data((3, 4), dtype, 7, nans=False)
    count = np.count_nonzero(x)
    same(run("nonzero", x, size=count), np.nonzero(x))
    same(run("argwhere", x, size=count), np.argwhere(x))
    same(run("flatnonzero", x, size=count), np.flatnonzero(x))
    same(run("nonzero", x[:0], size=0), np.nonzero(x[:0]))


def test_extract_and_compress():
    x = np.arange(12.0).reshape(3, 4)
    cond = data((3, 4), np.bool_, 4)
    n = int(cond.sum())
    same(run("extract", cond, x, size=n), np.extract(cond, x))
    same(_extract_static(x, tuple(cond.ravel())), np.extract(cond, x))
    rows = np.array([True, False, True])
    for axis in (0, -2):
        same(_compress_static(x, (True, False, True), axis), np.compress(rows, x, axis=axis))
        same(run("compress", rows, x, axis=axis, size=2), np.compress(rows, x, axis=axis))
    same(_compress_static(x, (False, True), 1), np.compress([False, True], x, axis=1))
    same(_compress_static(x, (True, False, True), None), np.compress(rows, x))


@jit_ps(static_argnames=("cond",))
def _extract_static(x, cond):
    return np.extract(np.array(cond), x)


@jit_ps(static_argnames=("cond", "axis"))
def _compress_static(x, cond, axis):
    return np.compress(list(cond), x, axis=axis)


def test_data_dependent_lengths_need_size():
    x = np.array([1.0, 0.0, 2.0])
    for name, args in (("nonzero", (x,)), ("argwhere", (x,)), ("flatnonzero", (x,)),
                       ("extract", (x, x)), ("compress", (x > 0, x)), ("unique", (x,)),
                       ("unique_values", (x,)), ("union1d", (x, x)), ("setdiff1d", (x, x)),
                       ("intersect1d", (x, x)), ("setxor1d", (x, x))):
        with pytest.raises(PSCValueError, match="depends") as info:
            run(name, *args)
        assert "size=" in info.value.hint, name
    with pytest.raises(PSCValueError, match="depends"):
        run("trim_zeros", x)
    with pytest.raises(PSCValueError, match="length="):
        run("bincount", np.array([1, 2]))
    with pytest.raises(PSCValueError, match="0d"):
        run("nonzero", np.float64(1.0), size=1)


# --- unique --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_matches_numpy(dtype):
    x = data((3, 5), dtype, 11)
    flags = dict(return_index=True, return_inverse=True, return_counts=True)
    for equal_nan in (True, False):
        n = len(np.unique(x, equal_nan=equal_nan))
        same(run("unique", x, size=n, equal_nan=equal_nan), np.unique(x, equal_nan=equal_nan))
        same(run("unique", x, size=n, equal_nan=equal_nan, **flags),
             np.unique(x, equal_nan=equal_nan, **flags))


def test_padded_and_truncated_like_jax():
    """size= past and short of NumPy's length, against jax.numpy (each jax call compiles:
    one case per function)."""
    x = data((3, 4), np.int64, 7, nans=False)
    count = np.count_nonzero(x)
    like_jax(run("nonzero", x, size=count + 2, fill_value=(7, 8)),
             jnp.nonzero(x, size=count + 2, fill_value=(7, 8)))
    for size in (count + 3, count - 2):
        same(run("nonzero", x, size=size, fill_value=-1),
             tuple(padded(c, size, -1) for c in np.nonzero(x)))
    like_jax(run("argwhere", x, size=count + 2), jnp.argwhere(x, size=count + 2))
    like_jax(run("flatnonzero", x, size=count + 3, fill_value=9),
             jnp.flatnonzero(x, size=count + 3, fill_value=9))
    cond = x > 0
    like_jax(run("extract", cond, x, size=x.size), jnp.extract(cond, x, size=x.size))
    rows = np.array([True, False, True])
    like_jax(run("compress", rows, x, axis=0, size=3, fill_value=-1),
             jnp.compress(rows, x, axis=0, size=3, fill_value=-1))
    flags = dict(return_index=True, return_counts=True)
    y = data((10,), np.float64, 12, nans=False)
    n = len(np.unique(y))
    like_jax(run("unique", y, size=n + 3, **flags), jnp.unique(y, size=n + 3, **flags))
    values, _, counts = np.unique(y, **flags)
    got = run("unique", y, size=n - 2, fill_value=-7, **flags)
    same(got[0], values[:n - 2])
    same(got[2], counts[:n - 2])
    like_jax(run("unique", y[:0], size=2, fill_value=5), jnp.unique(y[:0], size=2,
                                                                     fill_value=5))
    with pytest.raises(PSCValueError, match="fill_value"):
        run("unique", y[:0], size=2)


def test_unique_along_axis():
    x = np.array([[1, 0, 1, 2], [3, 3, 3, 0], [1, 0, 1, 2]], dtype=np.float32)
    flags = dict(return_index=True, return_inverse=True, return_counts=True)
    for axis in (0, 1, -1):
        expected = np.unique(x, axis=axis, **flags)
        same(run("unique", x, axis=axis, size=len(expected[1]), **flags), expected)
    empty_rows = np.zeros((2, 0))
    same(run("unique", empty_rows, axis=0, size=1, **flags),
         np.unique(empty_rows, axis=0, **flags))


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_unique_array_api(dtype):
    x = data((2, 5), dtype, 13)
    values = np.unique_values(x)
    n = len(values)
    same(run("unique_values", x, size=n), np.sort(values))   # NumPy's order is unspecified
    same(run("unique_counts", x, size=n), np.unique_counts(x))
    same(run("unique_inverse", x, size=n), np.unique_inverse(x))
    same(run("unique_all", x, size=n), np.unique_all(x))


# --- bincount, isin ------------------------------------------------------------------------

def test_bincount():
    x = np.array([0, 3, 3, 1, 7], dtype=np.int32)
    same(run("bincount", x, length=8), np.bincount(x))
    same(run("bincount", x, length=10), np.bincount(x, minlength=10))
    w = np.float32([0.5, 1, 2, 3, 4])
    same(run("bincount", x, w, length=8), np.bincount(x, w))
    like_jax(run("bincount", x, length=4), jnp.bincount(x, length=4))   # values dropped
    small = np.array([1, 255, 1], dtype=np.uint8)
    same(run("bincount", small, minlength=256), np.bincount(small, minlength=256))
    same(run("bincount", np.array([True, True]), minlength=2),
         np.bincount(np.array([True, True]), minlength=2))
    same(run("bincount", x[:0], length=0), np.bincount(x[:0]))
    with pytest.raises(PSCTypeError):
        run("bincount", np.ones(3), length=2)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_isin(dtype):
    for shape, pool in (((2, 3), 5), ((40, 30), 700)):   # compare-all, then sort + search
        e, t = data(shape, dtype, 1), data((pool,), dtype, 2)
        for invert in (False, True):
            same(run("isin", e, t, invert=invert), np.isin(e, t, invert=invert))
    same(run("isin", e, t[:0]), np.isin(e, t[:0]))
    same(run("isin", np.arange(5), np.array([1.0, 3.5, 4.0])),
         np.isin(np.arange(5), np.array([1.0, 3.5, 4.0])))
    with pytest.raises(PSCValueError, match="table"):
        run("isin", np.ones(2), np.ones(2), kind="table")


# --- set operations ------------------------------------------------------------------------

@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.int32, np.float32),
                                    (np.int64, np.int64)])
def test_set_operations_match_numpy(dtypes):
    a, c = data((9,), dtypes[0], 21), data((3, 2), dtypes[1], 22)
    for name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
        expected = getattr(np, name)(a, c)
        same(run(name, a, c, size=len(expected)), expected)
    expected = np.intersect1d(a, c, return_indices=True)
    same(run("intersect1d", a, c, return_indices=True, size=len(expected[0])), expected)
    ua, uc = np.unique(a), np.unique(c)
    np.random.default_rng(0).shuffle(ua)
    for name in ("setdiff1d", "setxor1d", "intersect1d"):
        expected = getattr(np, name)(ua, uc, assume_unique=True)
        same(run(name, ua, uc, assume_unique=True, size=len(expected)), expected)


def test_set_operations_padded_like_jax():
    a, c = np.array([5, 1, 2, 2, 9, 4]), np.array([2, 7, 9, 9, 3])
    for name, size in (("union1d", 10), ("setdiff1d", 6), ("setxor1d", 9),
                       ("intersect1d", 4)):   # jax's default fill
        like_jax(run(name, a, c, size=size), getattr(jnp, name)(a, c, size=size))
    for name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
        expected = getattr(np, name)(a, c)
        for size in (len(expected) + 2, len(expected) - 1):   # NumPy's, padded or cut
            same(run(name, a, c, size=size, fill_value=-1), padded(expected, size, -1))
    like_jax(run("intersect1d", a, c, return_indices=True, size=4),
             jnp.intersect1d(a, c, return_indices=True, size=4))
    for name in ("union1d", "setdiff1d", "setxor1d", "intersect1d"):
        expected = getattr(np, name)(a[:0], c)
        same(run(name, a[:0], c, size=len(expected)), expected)


# --- select, choose ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_select(dtype):
    x = data((2, 5), dtype, 31, nans=False)
    conds = [x > 0, x < 0]
    for default in (0, 2.5, np.float64(1)):
        same(run("select", conds, [x, x * 2 if dtype != np.bool_ else ~x], default=default),
             np.select(conds, [x, x * 2 if dtype != np.bool_ else ~x], default=default))
    same(run("select", [x > 0], [np.int8(3)], default=x[0]),
         np.select([x > 0], [np.int8(3)], default=x[0]))
    with pytest.raises(PSCValueError):
        run("select", [x > 0], [x, x])
    with pytest.raises(PSCTypeError, match="boolean"):
        run("select", [x.astype(np.int32)], [x])


def test_choose_modes():
    a = np.array([[0, 2, 1, 5], [-1, 1, 0, 3]])
    choices = [np.arange(4, dtype=np.float32), np.float32(10), np.ones((2, 4), np.int16) * 7]
    for mode in ("wrap", "clip"):
        same(run("choose", a, choices, mode=mode), np.choose(a, choices, mode=mode))
    same(run("choose", a % 3, choices), np.choose(a % 3, choices))
    same(run("choose", a % 3 > 0, [np.int32(1), np.int64(2)]),
         np.choose(a % 3 > 0, [np.int32(1), np.int64(2)]))


@jit_ps(checks=True)
def _choose_checked(a, x, y):
    return np.choose(a, [x, y])


def test_choose_raise_out_of_range_traced():
    x, y = np.zeros(3), np.ones(3)
    same(_choose_checked(np.array([0, 1, 1]), x, y), np.choose(np.array([0, 1, 1]), [x, y]))
    with pytest.raises(PSCRuntimeIndexError):
        _choose_checked(np.array([0, 2, 1]), x, y)
    with pytest.raises(PSCError):
        _choose_static(x, y)


@jit_ps
def _choose_static(x, y):
    return np.choose(np.array([0, 3, 1]), [x, y])


# --- derivatives ---------------------------------------------------------------------------

def _through_compaction(x):
    kept = np.unique(x, size=4)   # the largest value is cut off: it gets no gradient
    picked = np.extract(x > 0.5, x, size=3)
    return np.sum(kept ** 2) + np.sum(picked * np.arange(3.0)) + \
        np.sum(np.partition(x, 2) * np.arange(6.0))


def test_grad_through_size_and_partition_against_central_differences():
    x = np.array([3.0, 1.0, 2.5, 0.25, 5.0, -1.0])
    f = jit_ps(_through_compaction)
    eps = 1e-6
    expected = [(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(6)]
    np.testing.assert_allclose(grad(_through_compaction)(x), expected, rtol=1e-6, atol=1e-6)
