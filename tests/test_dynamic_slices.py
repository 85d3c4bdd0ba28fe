"""Slices of static length at a traced start (issue 17): ``x[i:i + K]`` in a staged loop is
one dynamic slice, ``x[i:i + K] = v`` / ``+=`` one dynamic update slice, and the loop stays
staged.  Differential against NumPy: where NumPy would clip the window (fewer elements,
a shape the program cannot have) the call raises `PSCRuntimeIndexError` instead.  A loop
that must still be unrolled warns (`PSCPerformanceWarning`) at its line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_same, marked_line, same
from transpiler import PSCPerformanceWarning, PSCRuntimeIndexError, jit_ps


# --- reads in staged loops (bounds proved: no guard) -------------------------------------

def window_sums(x, w):
    K = w.shape[0]
    out = np.zeros(x.shape[0] - K + 1)
    for i in range(x.shape[0] - K + 1):
        out[i] = np.sum(x[i:i + K] * w)
    return out


def column_windows(x):
    out = np.zeros((x.shape[0], x.shape[1] - 2))
    for j in range(x.shape[1] - 2):
        out[:, j] = x[:, j:j + 3].max(axis=1)
    return out


def conv2d(inp, weights):
    K = weights.shape[0]
    H_out, W_out = inp.shape[1] - K + 1, inp.shape[2] - K + 1
    out = np.empty((inp.shape[0], H_out, W_out, weights.shape[3]), dtype=np.float32)
    for i in range(H_out):
        for j in range(W_out):
            out[:, i, j, :] = np.sum(inp[:, i:i + K, j:j + K, :, np.newaxis] *
                                     weights[np.newaxis, :, :, :], axis=(1, 2, 3))
    return out


def stencil(x):
    out = x.copy()
    for i in range(1, x.shape[0] - 1):
        out[i] = x[i - 1:i + 2].mean()
    return out


def maxpool(x):
    out = np.empty((x.shape[0] // 2, x.shape[1] // 2), dtype=x.dtype)
    for i in range(x.shape[0] // 2):
        for j in range(x.shape[1] // 2):
            out[i, j] = np.max(x[2 * i:2 * i + 2, 2 * j:2 * j + 2])
    return out


def strided_windows(x):
    out = np.zeros((x.shape[0] - 4, 3))
    for i in range(x.shape[0] - 4):
        out[i] = x[i:i + 5:2]
    return out


def backwards_from_end(x):
    acc = np.zeros(2)
    for i in range(1, 5):
        acc = acc * 0.5 + x[-i - 2:-i]   # negative starts: counted from the end
    return acc


def reversed_loop(x):
    acc = np.zeros(3, dtype=x.dtype)
    for i in range(x.shape[0] - 3, -1, -1):
        acc = acc * 2 + x[i:3 + i]
    return acc


@pytest.mark.parametrize("fn, shape", [
    (window_sums, (12,)), (column_windows, (4, 9)), (stencil, (10,)), (maxpool, (6, 8)),
    (strided_windows, (11,)), (backwards_from_end, (9,)), (reversed_loop, (7,)),
])
def test_windows_in_staged_loops_match_numpy(fn, shape, rng):
    x = rng.standard_normal(shape)
    if fn is window_sums:
        same(fn, x, rng.standard_normal(3))
    else:
        same(fn, x)


def test_conv2d_matches_numpy_and_stays_staged(rng):
    inp = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
    weights = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    f = jit_ps(conv2d)
    assert_same(f(inp, weights), conv2d(inp, weights), rtol=1e-5, atol=1e-5)
    text = f.lower(inp, weights)
    # two nested staged loops, one window read per iteration: nothing unrolled
    assert text.count('"stablehlo.while"') == 2
    assert text.count('"stablehlo.dynamic_slice"') == 1
    # the loop bounds prove the windows fit: no guard, so no failure-code output
    main = next(line for line in text.splitlines() if "func.func public @main" in line)
    assert "tensor<i32>" not in main


def triangular(x):
    acc = np.zeros(2)
    for i in range(x.shape[0] - 2):
        for j in range(i + 1, x.shape[0] - 1):   # traced bounds, known to lie in [1, n - 2]
            acc = acc + x[j:j + 2] * i
    return acc


def test_traced_range_bounds_prove_the_window(rng):
    x = rng.standard_normal(7)
    same(triangular, x)
    main = next(line for line in jit_ps(triangular).lower(x).splitlines()
                if "func.func public @main" in line)
    assert "tensor<i32>" not in main


def test_guard_only_where_the_bounds_do_not_prove_the_window():
    def loose(x):
        acc = np.zeros(3)
        for i in range(x.shape[0] - 1):       # the last window would be clipped
            acc = acc + x[i:i + 3]
        return acc
    x = np.arange(8.0)
    main = next(line for line in jit_ps(loose).lower(x).splitlines()
                if "func.func public @main" in line)
    assert "tensor<i32>" in main               # the guard's failure code
    with pytest.raises(PSCRuntimeIndexError, match="slice of 3 elements"):
        jit_ps(loose)(x)
    with pytest.raises(ValueError):           # NumPy: a shorter slice does not broadcast
        loose(x)


# --- traced starts given as arguments: near the edges, negative ---------------------------

def _numpy_or_error(fn, *args):
    try:
        return fn(*args), None
    except (ValueError, IndexError) as err:
        return None, err


def _window(x, s):
    return x[s - 1:s + 2]


def _window_2d(x, s):
    return x[:, s:s + 2] * 2


@pytest.mark.parametrize("fn, count", [(_window, 3), (_window_2d, 2)])
def test_traced_start_is_numpy_or_an_index_error(fn, count):
    x = np.arange(24.0).reshape(3, 8) if fn is _window_2d else np.arange(7.0)
    n = x.shape[-1]
    f = jit_ps(fn)
    for s in range(-n - 3, n + 4):
        expected = fn(x, np.int64(s))
        if expected.shape[-1] == count:
            assert_same(f(x, np.int64(s)), expected)
        else:   # NumPy clipped the window: a shape the program cannot have
            with pytest.raises(PSCRuntimeIndexError, match=f"slice of {count} elements"):
                f(x, np.int64(s))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_unsigned_and_narrow_starts():
    x = np.arange(10.0)
    f = jit_ps(_window)
    for s in (np.uint8(1), np.uint8(9), np.int8(-3), np.int32(5), np.uint64(0)):
        expected = _window(x, s)
        if expected.shape == (3,):
            assert_same(f(x, s), expected)
        else:
            with pytest.raises(PSCRuntimeIndexError):
                f(x, s)


def test_runtime_error_names_the_line():
    def clipped(x, s):
        return x[s:s + 4]   # the-window
    with pytest.raises(PSCRuntimeIndexError) as info:
        jit_ps(clipped)(np.arange(5.0), np.int64(3))
    assert info.value.location.line == marked_line(__file__, "the-window")


# --- writes ------------------------------------------------------------------------------

def transposed_conv(x, w):
    K = w.shape[0]
    out = np.zeros(x.shape[0] + K - 1)
    for i in range(x.shape[0]):
        out[i:i + K] += x[i] * w
    return out


def write_columns(a, v):
    a = a.copy()
    for j in range(0, a.shape[1] - 1, 2):
        a[:, j:j + 2] = v * j
    return a


def write_block_2d(a):
    a = a.copy()
    for i in range(a.shape[0] - 1):
        for j in range(a.shape[1] - 1):
            a[i:i + 2, j:j + 2] = a[i:i + 2, j:j + 2] * 0.5 + a[i, j]
    return a


def strided_write(a):
    a = a.copy()
    for i in range(a.shape[0] - 4):
        a[i:i + 5:2] -= a[i + 1]
    return a


def test_transposed_conv(rng):
    same(transposed_conv, rng.standard_normal(9), rng.standard_normal(4))


def test_write_columns(rng):
    same(write_columns, rng.standard_normal((3, 8)), rng.standard_normal((3, 2)))


def test_write_block_2d(rng):
    same(write_block_2d, rng.standard_normal((5, 6)))


def test_strided_write(rng):
    same(strided_write, rng.standard_normal(9))


def _set_at(x, s, v):
    x = x.copy()
    x[s:s + 2] = v
    return x


def _add_at(x, s, v):
    x = x.copy()
    x[s:s + 2] += v
    return x


@pytest.mark.parametrize("fn", [_set_at, _add_at])
@pytest.mark.parametrize("v", [np.array([10.0, 20.0]), 5.0])
def test_traced_start_writes_are_numpy_or_an_index_error(fn, v):
    x = np.arange(6.0)
    f = jit_ps(fn)
    for s in range(-8, 9):
        written = (np.arange(6)[s:s + 2]).size == 2
        if written:
            assert_same(f(x, np.int64(s), v), fn(x, np.int64(s), v))
        else:   # NumPy writes fewer elements (or cannot broadcast v): never silently
            with pytest.raises(PSCRuntimeIndexError):
                f(x, np.int64(s), v)


# --- what still unrolls, and says so ------------------------------------------------------

def needs_static(x):
    acc = 0.0
    for i in range(65):   # unrolled-loop
        acc = acc + np.zeros(i + 1).sum() + x[i % 4]
    return acc


def short_needs_static(x):
    acc = 0.0
    for i in range(64):
        acc = acc + np.zeros(i + 1).sum() + x[i % 4]
    return acc


def test_unrolled_fallback_warns_at_the_loop():
    x = np.arange(4.0)
    with pytest.warns(PSCPerformanceWarning, match="built 65 times") as record:
        result = jit_ps(needs_static)(x)
    assert_same(result, needs_static(x))
    warning = next(w for w in record if issubclass(w.category, PSCPerformanceWarning))
    assert warning.filename == __file__
    assert warning.lineno == marked_line(__file__, "unrolled-loop")
    assert f"line {warning.lineno + 1}" in str(warning.message)   # what needed the index
    assert "np.zeros(i + 1)" in str(warning.message)


def test_short_unrolled_fallback_and_static_range_do_not_warn():
    from transpiler import static_range

    def python_loop(x):
        acc = x[0]
        for i in static_range(100):
            acc = acc + x[i % 4]
        return acc
    x = np.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PSCPerformanceWarning)
        assert_same(jit_ps(short_needs_static)(x), short_needs_static(x))
        assert_same(jit_ps(python_loop)(x), python_loop(x))


# --- derivatives through windows ---------------------------------------------------------

def window_loss(x, w):
    K = w.shape[0]
    total = 0.0
    for i in range(x.shape[0] - K + 1):
        total = total + np.sum(x[i:i + K] * w) ** 2
    return total


def test_grad_through_windows(rng):
    from transpiler import grad
    x, w = rng.standard_normal(9), rng.standard_normal(3)
    expected = np.zeros_like(x)   # d/dx of sum_i s_i**2, s_i = x[i:i+K] . w
    for i in range(x.size - w.size + 1):
        expected[i:i + w.size] += 2 * np.dot(x[i:i + w.size], w) * w
    assert_same(grad(window_loss)(x, w), expected, rtol=1e-10)
