"""Values whose length is only known when the program runs (`runtime.numpy_rules.masked`):
slices with traced bounds and traced boolean masks, differential against NumPy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from transpiler import grad, jit_ps
from runtime.errors import PSCRuntimeIndexError, PSCShapeError, PSCTypeError, PSCValueError

from conftest import assert_same, marked_line

N = 7
BOUNDS = [(0, 3), (2, 5), (0, 0), (3, 3), (5, 2), (0, N), (-3, N), (0, -2), (-9, 4),
          (4, 99), (99, 100), (-99, -98), (N, N)]
DTYPES = [np.float64, np.float32, np.int32, np.int64, np.bool_, np.complex128]


def _data(dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 6, n).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def numpy_or_nan(fn, *args):
    """NumPy's result; NaN where NumPy refuses an empty max/min (our documented value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # mean of nothing
        try:
            return fn(*args)
        except ValueError:
            return np.float64(np.nan)


def check(fn, *args, static=()):
    expected = numpy_or_nan(fn, *args)
    assert_same(jit_ps(fn, static_argnames=static)(*args), expected)


# --- windows: reading ----------------------------------------------------------------------

def window_sum(x, a, b):
    return x[a:b].sum()


def window_np_sum(x, a, b):
    return np.sum(x[a:b])


def window_mean(x, a, b):
    return x[a:b].mean()


def window_prod(x, a, b):
    return np.prod(x[a:b])


def window_max(x, a, b):
    return x[a:b].max()


def window_min(x, a, b):
    return np.min(x[a:b])


def window_any(x, a, b):
    return np.any(x[a:b])


def window_all(x, a, b):
    return x[a:b].all()


@pytest.mark.parametrize("a,b", BOUNDS, ids=[f"{a}:{b}" for a, b in BOUNDS])
@pytest.mark.parametrize("fn", [window_sum, window_np_sum, window_mean, window_prod,
                                window_max, window_min, window_any, window_all])
def test_window_reductions_with_numpys_bound_clipping(fn, a, b):
    check(fn, _data(np.float64), a, b)


def prefix_sum(x, k):
    return x[:k].sum()


def suffix_mean(x, k):
    return x[k:].mean()


def prefix_max(x, k):
    return x[:k].max()


@pytest.mark.parametrize("k", [0, 1, 3, N, N + 4, -1, -N, -N - 3])
@pytest.mark.parametrize("fn", [prefix_sum, suffix_mean, prefix_max])
def test_prefix_and_suffix(fn, k):
    check(fn, _data(np.float64), k)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", [window_sum, window_mean, window_prod, window_any])
@pytest.mark.parametrize("a,b", [(1, 5), (3, 3)])
def test_window_reduction_dtypes(fn, dtype, a, b):
    check(fn, _data(dtype), a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_window_extremum_dtypes(dtype):
    check(window_max, _data(dtype), 1, 5)
    check(window_min, _data(dtype), 2, 6)


def test_traced_numpy_integer_bounds():
    check(window_sum, _data(np.float64), np.int32(2), np.uint8(6))
    check(window_sum, _data(np.float64), np.int64(-4), np.uint64(2**63 + 5))


def test_empty_integer_max_is_the_identity_and_the_check_raises():
    x = _data(np.int32)
    assert jit_ps(window_max)(x, 3, 3) == np.iinfo(np.int32).min
    with pytest.raises(PSCRuntimeIndexError):
        jit_ps(window_max, checks=True)(x, 3, 3)
    assert jit_ps(window_max, checks=True)(x, 1, 3) == x[1:3].max()


def window_mean_of_2d(A, k):
    return A[:k].mean(axis=0), A[:, 1:k].sum(axis=1), A[k:, :].sum()


@pytest.mark.parametrize("k", [0, 2, 4])
def test_windows_of_2d_arrays(k):
    A = np.arange(20.0).reshape(4, 5)
    check(window_mean_of_2d, A, k)


# --- windows: element-wise ------------------------------------------------------------------

def scaled(x, a, b):
    return (2.5 * x[a:b] - 1).sum(), np.abs(-x[a:b]).sum(), (x[a:b] ** 2).mean()


def paired(x, y, a, b):
    return (x[a:b] * y[a:b]).sum(), np.dot(x[a:b], y[a:b]), x[a:b] @ y[a:b]


def flipped_dot(r, y, k):
    return np.dot(np.flip(r[:k]), y[:k]), (np.flip(r[:k]) * np.arange(N)[:1]).sum()


def astype_and_where(x, k):
    w = x[:k]
    return np.where(w > 0, w, 0.0).sum(), w.astype(np.int32).sum(), np.clip(w, -0.5, 0.5).sum()


@pytest.mark.parametrize("a,b", [(1, 5), (0, 0), (-4, 99)])
def test_elementwise_with_scalars(a, b):
    check(scaled, _data(np.float64), a, b)


@pytest.mark.parametrize("a,b", [(1, 5), (0, 0), (2, 99), (-3, -1)])
def test_elementwise_and_dot_of_windows_with_the_same_bounds(a, b):
    check(paired, _data(np.float64), _data(np.float64, seed=1), a, b)


def test_windows_of_arrays_of_different_sizes_need_the_run_time_check():
    # x[2:99] and y[2:99] clip differently: their lengths are equal only for some bounds
    x, y = _data(np.float64), _data(np.float64, N + 3, seed=1)
    with pytest.raises(PSCShapeError) as info:
        jit_ps(paired)(x, y, 1, 5)
    assert "different sizes" in info.value.message
    assert_same(jit_ps(paired, checks=True)(x, y, 1, 5), paired(x, y, 1, 5))
    with pytest.raises(PSCRuntimeIndexError):
        jit_ps(paired, checks=True)(x, y, 2, 99)


@pytest.mark.parametrize("k", [0, 1, 4, N])
def test_flip_and_a_length_1_operand(k):
    check(flipped_dot, _data(np.float64), _data(np.float64, seed=2), k)


@pytest.mark.parametrize("k", [0, 3, N])
def test_astype_where_clip(k):
    check(astype_and_where, _data(np.float64), k)


def different_lengths(x, k, j):
    return (x[:k] * x[:j]).sum()  # marker: lengths


def full_size_operand(x, k):
    return (x[:k] * x).sum()


def test_lengths_not_provably_equal_are_an_error_or_a_run_time_check():
    x = _data(np.float64)
    with pytest.raises(PSCShapeError) as info:
        jit_ps(different_lengths)(x, 2, 2)
    assert info.value.location.line == marked_line(__file__, "marker: lengths")
    assert "checks=True" in info.value.hint
    assert jit_ps(different_lengths, checks=True)(x, 3, 3) == different_lengths(x, 3, 3)
    with pytest.raises(ValueError):   # NumPy
        different_lengths(x, 2, 3)
    with pytest.raises(PSCRuntimeIndexError):
        jit_ps(different_lengths, checks=True)(x, 2, 3)
    with pytest.raises(PSCShapeError):
        jit_ps(full_size_operand)(x, N)


# --- windows: assignment --------------------------------------------------------------------

def assign_prefix(y, x, k):
    y = y.copy()
    y[:k] = 0.5
    z = y.copy()
    z[k:] = x[k:]
    return y, z


def augmented_window(y, x, a, b):
    y = y.copy()
    y[a:b] += 2 * x[a:b]
    y[a:b] *= 3
    return y


def assign_in_2d(A, i, k):
    A = A.copy()
    A[i, :k] += 1.0
    A[:k, 2] = -A[:k, 0]
    return A


def flip_update(y, k):
    y = y.copy()
    y[:k] += 0.5 * np.flip(y[:k])
    return y


@pytest.mark.parametrize("k", [0, 2, N, -2, 99])
def test_assign_prefix_and_suffix(k):
    check(assign_prefix, _data(np.float64), _data(np.float64, seed=1), k)


@pytest.mark.parametrize("a,b", [(1, 5), (3, 3), (-5, 99), (6, 2)])
def test_augmented_assignment_of_windows(a, b):
    check(augmented_window, _data(np.float64), _data(np.float64, seed=1), a, b)


@pytest.mark.parametrize("i,k", [(0, 2), (3, 5), (2, 0)])
def test_window_assignment_in_2d(i, k):
    check(assign_in_2d, np.arange(20.0).reshape(4, 5), i, k)


@pytest.mark.parametrize("k", [0, 1, 4, N])
def test_flip_update_as_durbin_does(k):
    check(flip_update, _data(np.float64), k)


def int_window_gets_float(y, k):
    y = y.copy()
    y[:k] += 1.5
    return y


def test_augmented_assignment_keeps_numpys_casting_rule():
    with pytest.raises(TypeError):
        int_window_gets_float(np.arange(4), 2)
    with pytest.raises(PSCTypeError):
        jit_ps(int_window_gets_float)(np.arange(4), 2)


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def test_durbin_is_staged_and_matches_numpy():
    r = np.random.default_rng(3).random(40) * 0.2
    check(durbin, r)
    assert jit_ps(durbin).lower(r).count('"stablehlo.while"') == 1


# --- gathers through windows: CSR ------------------------------------------------------------

def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_csr_row_loop_is_staged_and_matches_numpy(dtype):
    rng = np.random.default_rng(4)
    A = (rng.random((9, 6)) * (rng.random((9, 6)) < 0.35)).astype(dtype)
    A[3] = 0   # an empty row
    rows = np.concatenate([[0], np.cumsum((A != 0).sum(1))]).astype(np.int64)
    cols = np.nonzero(A)[1].astype(np.int32)
    check(spmv, rows, cols, A[A != 0], rng.random(6).astype(dtype))
    assert jit_ps(spmv).lower(rows, cols, A[A != 0], rng.random(6).astype(dtype)).count(
        '"stablehlo.while"') == 1


# --- selections -------------------------------------------------------------------------------

def selection_reductions(x, t):
    m = x > t
    return x[m].sum(), np.sum(x[m]), x[m].mean(), np.mean(x[m]), (x[m] * 2 + x[m]).sum()


def selection_max(x, t):
    return x[x > t].max()


def selection_min(x, t):
    return np.min(x[x > t])


@pytest.mark.parametrize("t", [-9.0, 0.0, 0.7, 9.0], ids=["all", "some", "few", "none"])
@pytest.mark.parametrize("fn", [selection_reductions, selection_max, selection_min])
def test_selection_reductions(fn, t):
    check(fn, _data(np.float64, 12), t)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_selection_sum_and_mean_dtypes(dtype):
    def sum_and_mean(x, m):
        return x[m].sum(), x[m].mean()
    check(sum_and_mean, _data(dtype, 10), _data(np.bool_, 10, seed=5))
    check(sum_and_mean, _data(dtype, 10), np.zeros(10, bool))


def selections_2d(A, m_rows, m_all):
    return A[m_rows].sum(axis=0), A[m_rows].mean(), A[m_all].max(), A[:, m_rows[:4]].sum()


def test_selections_of_2d_arrays():
    A = np.arange(20.0).reshape(5, 4)
    check(selections_2d, A, np.array([1, 0, 1, 1, 0], bool), A % 3 == 1)


def azimint_naive(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


def test_azimint_like_loop_with_empty_bins():
    rng = np.random.default_rng(6)
    # radii on a coarse grid, away from the bin edges (r2 is computed, so an element on an
    # edge could fall either way by one rounding)
    radius = (rng.integers(0, 40, 60) + 0.5) / 40 * 0.999
    radius[0] = 0.999
    check(azimint_naive, rng.random(60), radius, 16, static=("npt",))


def mandelbrot(C, maxiter, horizon=2.0):
    N = np.zeros(C.shape, dtype=np.int64)
    Z = np.zeros(C.shape, dtype=np.complex128)
    for n in range(maxiter):
        I = np.less(abs(Z), horizon)
        N[I] = n
        Z[I] = Z[I]**2 + C[I]
    N[N == maxiter - 1] = 0
    return Z, N


def test_mandelbrot_like_masked_update_is_staged_and_matches_numpy():
    X = np.linspace(-2.0, 0.5, 13)
    Y = np.linspace(-1.25, 1.25, 11)
    C = X + Y[:, None] * 1j
    with np.errstate(all="ignore"):
        check(mandelbrot, C, 20)
    assert jit_ps(mandelbrot).lower(C, 20).count('"stablehlo.while"') == 1


def masked_updates(x, y, m):
    x = x.copy()
    x[m] = y[m] * 2
    x[m] += np.sqrt(np.abs(x[m]))
    return x


def test_assignment_through_the_same_mask():
    check(masked_updates, _data(np.float64, 8), _data(np.float64, 8, seed=1),
          _data(np.bool_, 8, seed=2))


def other_mask(x, y, m):
    x = x.copy()
    x[m] = y[y > 0]  # marker: other mask
    return x


def two_masks(x, m):
    return (x[m] * x[x > 0]).sum()


def test_different_masks_are_an_error():
    x, m = _data(np.float64, 8), _data(np.bool_, 8)
    with pytest.raises(PSCValueError) as info:
        jit_ps(other_mask)(x, x, m)
    assert info.value.location.line == marked_line(__file__, "marker: other mask")
    with pytest.raises(PSCValueError):
        jit_ps(two_masks)(x, m)


# --- what needs the length -------------------------------------------------------------------

def returned(x, k):
    return x[:k]  # marker: returned


def shape_read(x, k):
    return x[:k].shape[0]  # marker: shape


def length_read(x, k):
    return len(x[k:])  # marker: len


def no_masked_rule(x, k):
    return np.cumsum(x[:k])  # marker: cumsum


def loop_state(x, n):
    s = x[:1]
    for i in range(n):  # marker: state
        s = x[:i]
    return s.sum()


def selection_returned(x):
    return x[x > 0]  # marker: selection


@pytest.mark.parametrize("fn,marker,args", [
    (returned, "returned", (3,)), (shape_read, "shape", (3,)), (length_read, "len", (3,)),
    (no_masked_rule, "cumsum", (3,)), (loop_state, "state", (3,)),
    (selection_returned, "selection", ())], ids=lambda v: v if isinstance(v, str) else "")
def test_what_needs_the_length_is_an_error_at_the_line(fn, marker, args):
    with pytest.raises(PSCValueError) as info:
        jit_ps(fn)(_data(np.float64), *args)
    assert info.value.location.line == marked_line(__file__, f"marker: {marker}")
    assert "only known when the program runs" in info.value.message
    assert "np.where" in info.value.hint


# --- derivatives ------------------------------------------------------------------------------

def weighted_window(x, k):
    return (x[:k] ** 2).sum() + x[x > 0.2].mean()


def test_gradient_through_masked_reductions():
    x = _data(np.float64)
    k = 4
    expected = np.where(np.arange(N) < k, 2 * x, 0.0)
    sel = x > 0.2
    expected = expected + np.where(sel, 1.0 / sel.sum(), 0.0)
    assert_same(grad(weighted_window)(x, k), expected)


def integer_division(x, y, k):
    return (x[:k] // y[:k]).sum()


def gather_selected(x, idx, m):
    return x[idx[m]].sum()


def test_what_is_not_there_cannot_fail_run_time_checks():
    x, y = np.arange(1, 6), np.array([1, 2, 3, 0, 0])   # zeros past the window
    assert_same(jit_ps(integer_division, checks=True)(x, y, 3), integer_division(x, y, 3))
    idx = np.array([0, 99, 2, -99, 1])   # out of bounds where the mask is False
    m = np.array([True, False, True, False, True])
    xs = np.arange(5.0)
    assert_same(jit_ps(gather_selected, checks=True)(xs, idx, m), gather_selected(xs, idx, m))


# --- matrix products keeping the masked axis ------------------------------------------------

def covariance_like(data):
    M = data.shape[1]
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / 3.0
    return cov


def products_keeping_the_window(A, v):
    out = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        out[i] = np.sum(A[i:, :] @ v) + np.max(v[:3] @ A[:3, i:]) + np.sum(A[:, :3] @ A[:3, i:])
    return out


@pytest.mark.parametrize("fn, args", [
    (covariance_like, (np.random.default_rng(1).random((6, 5)),)),
    (products_keeping_the_window, (np.random.default_rng(2).random((4, 4)),
                                   np.random.default_rng(3).random(4))),
], ids=["covariance", "both_sides"])
def test_products_along_the_axis_they_keep(fn, args):
    """``v @ A[:, i:]`` and ``A[i:, :] @ v``: the window is on an axis the product keeps,
    so the result is a window of the same length (NPBench's covariance)."""
    check(fn, *args)
