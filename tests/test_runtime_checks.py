"""Opt-in run-time checks (`runtime.checks`): ``jit_ps(..., checks=...)``,
``transpiler.config`` and ``PSC_CHECKS``.

Each case runs the function as plain Python + NumPy too: where NumPy raises (an index out
of bounds) or warns (integer division by zero, a NaN or infinity produced), the checked
compiled function raises the matching `PSCRuntimeError` at the line of the failing
expression; on valid inputs it gives NumPy's result.  With checks off the compiled program
is exactly the one built without this feature (same StableHLO text).
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import transpiler
from conftest import assert_same, marked_line
from runtime.errors import (PSCError, PSCFloatingPointError, PSCIndexError, PSCRuntimeError,
                            PSCRuntimeIndexError, PSCRuntimeZeroDivisionError)
from transpiler import config, grad, jit_ps

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


def marker_line(marker: str) -> int:
    return marked_line(HERE, marker)


@pytest.fixture(autouse=True)
def checks_off_after():
    saved = config.read("checks")
    yield
    config.update("checks", saved)


# --- the functions ------------------------------------------------------------------------

def read_at(x, i):
    return x[i] * 2.0  # READ


def write_at(x, i, v):
    y = x.copy()
    y[i] = v  # WRITE
    return y


def gather_at(x, idx):
    return x[idx] + 1.0  # GATHER


def sum_first(x, n):
    s = 0.0
    for k in range(n):
        s = s + x[k]  # LOOP_READ
    return s


def while_read(x, n):
    k = 0
    s = 0.0
    while k < n:
        s = s + x[k]  # WHILE_READ
        k = k + 1
    return s


def while_test_read(x, limit):
    k = 0
    while x[k] < limit:  # WHILE_TEST
        k = k + 1
    return k


def branch_read(x, i, flag):
    if flag > 0:
        y = x[i]  # BRANCH_READ
    else:
        y = x[0]
    return y


def dead_read_in_branch(x, i, flag):
    if flag > 0:
        unused = x[i]  # DEAD_READ
    return x


def nested_loops(x, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            s = s + x[i, j]  # NESTED_READ
    return s


def floor_div(a, b):
    return a // b  # FLOOR_DIV


def modulo(a, b):
    return a % b  # MODULO


def fmod(a, b):
    return np.fmod(a, b)  # FMOD


def div_in_loop(a, b, n):
    s = a
    for k in range(n):
        s = s // (b - k)  # LOOP_DIV
    return s


def log_of(x):
    y = x * 2.0
    return np.log(y)  # LOG


def ratio(x, y):
    return x / y  # RATIO


def exp_sum(x):
    return np.exp(x).sum()  # EXP


def times_inf(x):
    return x * np.inf


def safe_log(x):
    return np.log(np.maximum(x, 1e-300))


def two_failures(x, i, a, b):
    y = x[i]  # FIRST
    z = a // b  # SECOND
    return y, z


def loss(w, x):
    return np.sum(np.log(w * x))


def loss_grad(w, x):
    return grad(loss)(w, x)  # GRAD_CALL


# --- helpers --------------------------------------------------------------------------------

def raises_at(exc_type, marker, fn, *args):
    with pytest.raises(exc_type) as info:
        fn(*args)
    err = info.value
    assert isinstance(err, PSCRuntimeError)
    assert err.location is not None
    assert err.location.file == HERE and err.location.line == marker_line(marker), str(err)
    assert f"test_runtime_checks.py:{marker_line(marker)}:" in str(err)
    assert err.hint
    return err


def numpy_warns(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    assert any(issubclass(w.category, RuntimeWarning) for w in caught), caught


# --- index ----------------------------------------------------------------------------------

X = np.arange(5.0)


@pytest.mark.parametrize("i", [5, 6, -6, 2**40, -(2**40)])
def test_read_out_of_bounds_raises_like_numpy(i):
    with pytest.raises(IndexError):
        read_at(X, i)
    err = raises_at(PSCRuntimeIndexError, "READ", jit_ps(read_at, checks=("index",)), X, i)
    assert isinstance(err, IndexError) and isinstance(err, PSCIndexError)
    assert "size 5" in err.message


@pytest.mark.parametrize("i", [0, 4, -1, -5])
def test_read_in_bounds_matches_numpy(i):
    assert_same(jit_ps(read_at, checks=True)(X, i), read_at(X, i))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_index_dtypes(dtype):
    f = jit_ps(read_at, checks=True)
    x = np.arange(300.0)
    for i in [0, 5, min(np.iinfo(dtype).max, 2**40)]:   # NumPy: OverflowError past int64
        i = dtype(i)
        if -300 <= int(i) < 300:
            assert_same(f(x, i), read_at(x, i))
        else:
            with pytest.raises(IndexError):
                read_at(x, i)
            raises_at(PSCRuntimeIndexError, "READ", f, x, i)


def test_write_out_of_bounds():
    with pytest.raises(IndexError):
        write_at(X, 7, 1.0)
    f = jit_ps(write_at, checks=True)
    raises_at(PSCRuntimeIndexError, "WRITE", f, X, 7, 1.0)
    assert_same(f(X, -2, 9.0), write_at(X, -2, 9.0))


def test_gather_out_of_bounds():
    f = jit_ps(gather_at, checks=True)
    idx = np.array([0, 4, 5])
    with pytest.raises(IndexError):
        gather_at(X, idx)
    raises_at(PSCRuntimeIndexError, "GATHER", f, X, idx)
    assert_same(f(X, np.array([0, -5, 4])), gather_at(X, np.array([0, -5, 4])))


def test_index_in_for_loop():
    f = jit_ps(sum_first, checks=True)
    assert_same(f(X, 5), sum_first(X, 5))
    with pytest.raises(IndexError):
        sum_first(X, 6)
    raises_at(PSCRuntimeIndexError, "LOOP_READ", f, X, 6)


def test_index_in_while_loop():
    f = jit_ps(while_read, checks=True)
    assert_same(f(X, 5), while_read(X, 5))
    with pytest.raises(IndexError):
        while_read(X, 8)
    raises_at(PSCRuntimeIndexError, "WHILE_READ", f, X, 8)


def test_index_in_while_test():
    f = jit_ps(while_test_read, checks=True)
    assert_same(f(X, 3.0), while_test_read(X, 3.0))
    with pytest.raises(IndexError):     # x[k] < 10 holds for every k: x[5] is read
        while_test_read(X, 10.0)
    raises_at(PSCRuntimeIndexError, "WHILE_TEST", f, X, 10.0)


def test_index_in_branch():
    f = jit_ps(branch_read, checks=True)
    assert_same(f(X, 3, 1), branch_read(X, 3, 1))
    assert_same(f(X, 9, -1), branch_read(X, 9, -1))   # the branch that reads x[9] is not taken
    with pytest.raises(IndexError):
        branch_read(X, 9, 1)
    raises_at(PSCRuntimeIndexError, "BRANCH_READ", f, X, 9, 1)


def test_index_in_branch_whose_result_is_dead():
    f = jit_ps(dead_read_in_branch, checks=True)
    assert_same(f(X, 9, -1), dead_read_in_branch(X, 9, -1))
    with pytest.raises(IndexError):
        dead_read_in_branch(X, 9, 1)
    raises_at(PSCRuntimeIndexError, "DEAD_READ", f, X, 9, 1)
    assert jit_ps(dead_read_in_branch).lower(X, 9, 1) == jit_ps(
        dead_read_in_branch, checks=False).lower(X, 9, 1)


def test_index_in_nested_loops():
    f = jit_ps(nested_loops, checks=True)
    x = np.arange(12.0).reshape(3, 4)
    assert_same(f(x, 3, 4), nested_loops(x, 3, 4))
    for n, m in [(3, 5), (4, 4)]:
        with pytest.raises(IndexError):
            nested_loops(x, n, m)
        raises_at(PSCRuntimeIndexError, "NESTED_READ", f, x, n, m)


def test_without_checks_reads_clamp():
    # the documented behaviour the check exists for: no error, the last element
    assert_same(jit_ps(read_at)(X, 7), np.float64(8.0))


# --- div ------------------------------------------------------------------------------------

A, B = np.array([7, -7, 9]), np.array([2, 3, 0])


@pytest.mark.parametrize("fn,marker", [(floor_div, "FLOOR_DIV"), (modulo, "MODULO"),
                                       (fmod, "FMOD")])
def test_integer_division_by_zero(fn, marker):
    numpy_warns(fn, A, B)
    f = jit_ps(fn, checks=("div",))
    err = raises_at(PSCRuntimeZeroDivisionError, marker, f, A, B)
    assert isinstance(err, ZeroDivisionError)
    ok = np.array([2, 3, -4])
    assert_same(f(A, ok), fn(A, ok))
    assert_same(f(7, 2), fn(7, 2))
    # float division is not a "div" check (it gives inf or NaN: the "nan" check)
    assert_same(f(A * 1.0, B * 1.0), fn(A * 1.0, B * 1.0))


def test_division_by_zero_in_loop():
    f = jit_ps(div_in_loop, checks=True)
    assert_same(f(np.int64(1000), np.int64(10), 3), div_in_loop(np.int64(1000), np.int64(10), 3))
    numpy_warns(div_in_loop, np.int64(1000), np.int64(2), 4)
    raises_at(PSCRuntimeZeroDivisionError, "LOOP_DIV", f, np.int64(1000), np.int64(2), 4)


# --- nan --------------------------------------------------------------------------------------

def test_nan_produced():
    f = jit_ps(log_of, checks=("nan",))
    bad = np.array([1.0, 0.0])
    numpy_warns(log_of, bad)
    err = raises_at(PSCFloatingPointError, "LOG", f, bad)
    assert isinstance(err, FloatingPointError)
    assert_same(f(np.array([1.0, 2.0])), log_of(np.array([1.0, 2.0])))


@pytest.mark.parametrize("x,y", [(np.array([0.0]), np.array([0.0])),
                                 (np.array([1.0]), np.array([0.0]))])
def test_nan_and_inf_from_division(x, y):
    numpy_warns(ratio, x, y)
    raises_at(PSCFloatingPointError, "RATIO", jit_ps(ratio, checks=True), x, y)


def test_overflow_to_inf():
    x = np.array([1000.0, 1.0])
    numpy_warns(exp_sum, x)
    raises_at(PSCFloatingPointError, "EXP", jit_ps(exp_sum, checks=True), x)


def test_nan_inputs_are_not_a_failure():
    # like jax_debug_nans: only NaNs *produced* by an op count
    x = np.array([np.nan, 1.0])
    assert_same(jit_ps(log_of, checks=True)(x), log_of(x))
    assert_same(jit_ps(ratio, checks=True)(x, np.array([np.inf, 2.0])),
                ratio(x, np.array([np.inf, 2.0])))


def test_explicit_inf_constant_is_not_a_failure():
    x = np.array([1.0, 2.0])
    assert_same(jit_ps(times_inf, checks=True)(x), times_inf(x))
    assert_same(jit_ps(safe_log, checks=True)(np.array([0.0, 1.0])),
                safe_log(np.array([0.0, 1.0])))


def test_float32_and_complex():
    f = jit_ps(ratio, checks=True)
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    assert_same(f(one, one), ratio(one, one))
    raises_at(PSCFloatingPointError, "RATIO", f, one, zero)
    c = np.array([1 + 1j])
    assert_same(f(c, c), ratio(c, c))


def test_nan_check_under_grad():
    # A function differentiated by `grad` runs as Python on traced values (it is not
    # transpiled), so its ops carry the line of the `grad` call.
    g = jit_ps(loss_grad, checks=True)
    w, x = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert_same(g(w, x), 1.0 / w)
    with pytest.raises(PSCFloatingPointError) as info:
        g(np.array([1.0, 0.0]), x)
    assert info.value.location.line == marker_line("GRAD_CALL")


# --- first failure, options, settings, cost ---------------------------------------------------

def test_first_failure_is_reported():
    f = jit_ps(two_failures, checks=True)
    raises_at(PSCRuntimeIndexError, "FIRST", f, X, 9, np.int64(1), np.int64(0))
    raises_at(PSCRuntimeZeroDivisionError, "SECOND", f, X, 1, np.int64(1), np.int64(0))
    assert_same(f(X, 1, np.int64(7), np.int64(2)), two_failures(X, 1, np.int64(7), np.int64(2)))


def test_only_selected_checks():
    f = jit_ps(two_failures, checks="div")
    raises_at(PSCRuntimeZeroDivisionError, "SECOND", f, X, 9, np.int64(1), np.int64(0))
    g = jit_ps(two_failures, checks=("index",))
    assert_same(g(X, 1, np.int64(1), np.int64(0))[1], np.int64(0))


def test_unknown_check_name():
    with pytest.raises(PSCError, match="unknown run-time check 'bounds'"):
        jit_ps(read_at, checks=("bounds",))
    with pytest.raises(PSCError, match="unknown setting"):
        config.update("debug_everything", True)


def test_stablehlo_identical_when_off():
    plain = jit_ps(two_failures).lower(X, 1, np.int64(1), np.int64(2))
    for option in (None, False, ()):
        text = jit_ps(two_failures, checks=option).lower(X, 1, np.int64(1), np.int64(2))
        assert text == plain
    checked = jit_ps(two_failures, checks=True).lower(X, 1, np.int64(1), np.int64(2))
    assert checked != plain
    config.update("checks", True)
    assert jit_ps(two_failures, checks=False).lower(X, 1, np.int64(1), np.int64(2)) == plain
    for fn in (sum_first, branch_read):
        config.update("checks", False)
        args = (X, 3) if fn is sum_first else (X, 3, 1)
        off = jit_ps(fn).lower(*args)
        config.update("checks", True)
        assert jit_ps(fn, checks=False).lower(*args) == off
        assert jit_ps(fn).lower(*args) != off


def test_global_switch_and_cache_key():
    f = jit_ps(read_at)
    assert_same(f(X, 7), np.float64(8.0))            # off: clamps
    config.update("debug_index", True)
    assert config.read("debug_index") and config.read("checks") == ("index",)
    raises_at(PSCRuntimeIndexError, "READ", f, X, 7)  # the switch is part of the key
    config.update("debug_index", False)
    assert_same(f(X, 7), np.float64(8.0))
    assert f.cache_info().misses == 2
    config.update("debug_nans", True)
    config.update("debug_div", True)
    assert config.read("checks") == ("nan", "div")
    raises_at(PSCRuntimeZeroDivisionError, "FLOOR_DIV", jit_ps(floor_div), A, B)
    # a function's own option wins over the process-wide setting
    with np.errstate(divide="ignore"):
        expected = floor_div(A, B)
    assert_same(jit_ps(floor_div, checks=False)(A, B), expected)


def test_environment_variable():
    code = ("import numpy as np, transpiler, sys; sys.path.insert(0, 'tests');"
            "import test_runtime_checks as t; f = transpiler.jit_ps(t.read_at)\n"
            "print(transpiler.config.read('checks'))\n"
            "try:\n    f(np.arange(5.0), 9)\nexcept IndexError as e:\n    print(type(e).__name__)")
    env = dict(os.environ, PSC_CHECKS="1", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["('index',", "'nan',", "'div')", "PSCRuntimeIndexError"], out
    env["PSC_CHECKS"] = "div"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["('div',)"], out
    env["PSC_CHECKS"] = "bounds"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["()"] and "PSC_CHECKS='bounds' ignored" in out.stderr, out


def test_checked_errors_pickle():
    import pickle
    f = jit_ps(read_at, checks=True)
    with pytest.raises(PSCRuntimeIndexError) as info:
        f(X, 9)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is PSCRuntimeIndexError and str(again) == str(info.value)


def test_exported_names():
    for name in ("PSCRuntimeError", "PSCRuntimeIndexError", "PSCRuntimeZeroDivisionError",
                 "PSCFloatingPointError", "config"):
        assert name in transpiler.__all__ and hasattr(transpiler, name)
