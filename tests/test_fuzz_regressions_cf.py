"""Control-flow bugs the differential fuzzer found (tests/fuzz), each reproducer and its
variants, run both as plain Python/NumPy (the oracle) and through `jit_ps`: the results must
agree in value, dtype and structure."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, f64, same
from runtime.errors import PSCError
from transpiler import jit_ps


POSITIVE, NEGATIVE = f64(1.0, 2.0, 3.0), f64(-1.0, -2.0, -3.0)


# --- N3: after a staged return, a variable may take another shape -----------------------
# On the path where the function has returned, the variables are dead: only the result is.

def rebound_after_staged_return(x):
    if x.sum() > 0.25:
        return x
    x = x.sum()
    return x * np.ones(3)


def rebound_after_loop_return(x):
    for i in range(3):
        if x.sum() > 0.25 * i:
            return x
    x = x.sum()
    return x * np.ones(3)


def assigned_in_returning_branch(x):
    if x.sum() > 0.25:
        y = x.sum()
        return y * np.ones(3)
    else:
        y = x
    y = y + 1.0
    return y


def assigned_before_return_in_else(x):
    if x.sum() < 0.25:
        z = x
    else:
        z = x.sum()
        return z + np.zeros(3)
    return z * 2.0


def fuzz_class_4(a0, a1, a2):
    for k2, c1 in enumerate([-1.0, -1.0, 3.0, 1.0]):
        if not np.sum(np.where(a1 > 2.25, k2, c1)) > -3.25:
            return 2
    for c6 in [1.5, 1.5, 3.0, -1.0]:
        a1 = (a1 * a2)
    a0 = (a0 - a1)
    return 1


def fuzz_class_4_full(a0, a1, a2):
    for k2, c1 in enumerate([-1.0, -1.0, 3.0, 1.0]):
        v3 = 0.5
        v4 = np.where((c1 * 2) > -2.25, np.add(c1, c1), (k2 + 3))
        if not np.sum(np.where(a1 > 2.25, k2, c1)) > -3.25:
            v5 = np.max(v3, axis=0)
            return 2
    for c6 in [1.5, 1.5, 3.0, -1.0]:
        a1 = (a1 * a2)
        v8 = (1.5 * a1)
    a0 = (a0 - a1)
    if np.max(2) < -2.25:
        for c9 in (1.0,):
            c6 = (c6 + (c6 * c9))
            v11 = a1
        a2 = np.full((3,), 1, dtype=np.float64)
    v12 = np.where(c6 > 0.25, a0, a2)
    return 1


def rebound_and_returned(x):
    if x.sum() > 0.25:
        return x
    x = x.sum()
    if x < -4.0:
        return x * np.ones(3)
    return x + np.zeros(3)


@pytest.mark.parametrize("fn", [rebound_after_staged_return, rebound_after_loop_return,
                                assigned_in_returning_branch, assigned_before_return_in_else,
                                rebound_and_returned])
@pytest.mark.parametrize("x", [POSITIVE, NEGATIVE, f64(-3.0, -2.0, 0.0)])
def test_rebound_after_staged_return(fn, x):
    same(fn, x)


@pytest.mark.parametrize("fn", [fuzz_class_4, fuzz_class_4_full])
def test_fuzz_class_4(fn):
    calls = [
        (f64(3.0, 3.0, 2.0), f64(1.0, -1.0, 0.0, -1.0, 0.0, 0.0).reshape(2, 3),
         f64(-3.0, 3.0, 3.0)),
        (f64(-1.0, -2.0, 3.0), f64(0.0, 0.0, 1.0, -2.0, 1.0, 2.0).reshape(2, 3),
         f64(1.0, 1.0, -3.0)),
        (f64(-1.0, -2.0, 3.0), f64(-9.0, 0.0, 1.0, -2.0, 1.0, 2.0).reshape(2, 3),
         f64(1.0, 1.0, -3.0)),
    ]
    for args in calls:
        same(fn, *args)


# --- N4: a traced if/else defining a variable, inside a loop that stays Python ----------

def defined_in_both_branches_in_python_loop(a0, a1):
    for i in range(4):
        if np.min(a0) > 0.25:
            v2 = a1 + 3.0
        else:
            v2 = np.zeros(3)
        v3 = v2 - a0
    return v3


def defined_in_both_branches_in_list_loop(a0, a1):
    total = np.zeros(3)
    for c in [1.0, 2.0]:
        if np.min(a0) > 0.25 * c:
            v2 = a1 + c
        else:
            v2 = np.zeros(3)
        total = total + v2
    return total


def defined_in_both_branches_in_nested_if(a0, a1):
    for i in range(2):
        if np.max(a0) > 0.0:
            if np.min(a1) > 0.0:
                v2 = a1
            else:
                v2 = a0
        else:
            v2 = a0 * 2.0
        a0 = a0 + v2
    return a0


def defined_in_both_branches_in_while(a0, a1):
    k = 0
    while k < 3:
        k += 1
        if np.min(a0) > 0.25:
            v2 = a1 + 3.0
        else:
            v2 = np.zeros(3)
        v3 = v2 - a0
    return v3


@pytest.mark.parametrize("fn", [defined_in_both_branches_in_python_loop,
                                defined_in_both_branches_in_list_loop,
                                defined_in_both_branches_in_nested_if,
                                defined_in_both_branches_in_while])
@pytest.mark.parametrize("a0", [POSITIVE, NEGATIVE])
def test_defined_in_both_branches_in_python_loop(fn, a0):
    same(fn, a0, f64(0.5, -0.5, 1.5))


# --- N5: a break/continue that stays Python inside a generated body function -------------

def continue_after_traced_break(a0):
    for i in range(2):
        if np.min(a0) < -2.25:
            break
        if i > 0:
            continue
    return a0


def continue_in_inner_loop_after_traced_break(a0):
    for c in [1.0, 2.0]:
        for i in range(1):
            if np.min(a0) < -2.25:
                break
            if c > 1.25:
                continue
            a0 = a0 + c
    return a0


def static_break_after_traced_break(a0):
    for i in range(3):
        if np.min(a0) < -2.25:
            break
        a0 = a0 + 1.0
        if i > 0:
            break
    return a0


def static_continue_after_traced_continue(a0):
    for i in range(3):
        if np.min(a0) < -2.25:
            continue
        if i == 1:
            continue
        a0 = a0 + 1.0
    return a0


def static_exit_after_traced_return(a0):
    for i in range(3):
        if np.min(a0) < -2.25:
            return a0 * 2.0
        if i == 1:
            continue
        a0 = a0 + 1.0
    return a0


def static_break_in_staged_branch(a0):
    for i in range(3):
        if np.min(a0) > 0.0:
            a0 = a0 - 1.0
            if i > 0:
                break
    return a0


@pytest.mark.parametrize("fn", [continue_after_traced_break,
                                continue_in_inner_loop_after_traced_break,
                                static_break_after_traced_break,
                                static_continue_after_traced_continue,
                                static_exit_after_traced_return,
                                static_break_in_staged_branch])
@pytest.mark.parametrize("a0", [POSITIVE, NEGATIVE, f64(-3.0, -2.0, 0.0)])
def test_static_exit_in_generated_body(fn, a0):
    same(fn, a0)


def test_generated_code_that_does_not_compile_is_an_internal_error(monkeypatch):
    """A safety net: a rule bug that writes code Python cannot compile is reported as an
    internal error naming the user's function, never a bare SyntaxError."""
    import gast
    from transpiler.rules import base

    original = base.Rule.visit if hasattr(base.Rule, "visit") else None

    def bad_return(x):
        return x + 1.0
    from transpiler import pipeline

    real = pipeline.run_rules

    def break_outside_loop(tree, *args, **kwargs):
        out = real(tree, *args, **kwargs)
        function = next(n for n in gast.walk(out) if isinstance(n, gast.FunctionDef))
        function.body.insert(0, gast.copy_location(gast.Break(), function.body[0]))
        return out
    monkeypatch.setattr(pipeline, "run_rules", break_outside_loop)
    del original
    with pytest.raises(PSCError) as caught:
        jit_ps(bad_return)(f64(1.0))
    assert not isinstance(caught.value, SyntaxError)
    assert "bad_return" in str(caught.value)


def static_return_in_loop_with_traced_return_after(x):
    for i in range(3):
        if i == 1:
            return x * i
    if x.sum() > 0:
        return x
    return -x


def static_return_in_loop_with_traced_return_before(x):
    if x.sum() > 0:
        return x
    for i in range(3):
        x = x + 1.0
        if i == 1:
            return x * i
    return -x


@pytest.mark.parametrize("fn", [static_return_in_loop_with_traced_return_after,
                                static_return_in_loop_with_traced_return_before])
@pytest.mark.parametrize("x", [POSITIVE, NEGATIVE])
def test_static_return_in_loop_of_a_lowered_function(fn, x):
    same(fn, x)


# --- after a branch that returns, its variables are dead (fuzz --focus early_return) -----

def dtype_changed_in_returning_branch(a0, a1, a2):
    if np.mean(a0) < 2.25:
        a2 = a2 + (a1 - a0) * 1.0
        return (0.5 / (np.abs((a1 + a1)) + 1.0)).astype(np.float64)
    v4 = np.floor(a2)
    return v4 * a1[::-1]


def int_becomes_float_in_returning_branch(a0, a1, s):
    if np.mean(a1) > -1.25:
        a1 = a1 * s
        return np.add(np.tanh(s).sum(), a0[-3])
    s = s + np.minimum(np.where(a1 > 0.25, a1, s), a0[0])
    return np.full((), 1, dtype=np.float64) + s.sum()


@pytest.mark.parametrize("a0", [np.float64(-2.0), np.float64(3.0)])
def test_dtype_changed_in_returning_branch(a0):
    same(dtype_changed_in_returning_branch, a0, np.array([2, -1, 3]), np.float32(1.0))


@pytest.mark.parametrize("a1", [np.array([[-2, -1, -3], [-1, -2, 3]]),
                                np.array([[-9, -9, -9], [-9, -9, -9]])])
def test_int_becomes_float_in_returning_branch(a1):
    same(int_becomes_float_in_returning_branch, f64(-2.0, -3.0, 0.0), a1, 0.0)


def assigned_only_where_not_returned(a0):
    if (a0).max() < 0.25:
        return (a0.sum(), 0.5)
    if np.sum(a0) < 2.25:
        w2 = 0
        while w2 < 1 and (np.sum(a0) < 1.25 or np.mean(w2) < 1.25):
            w2 += 1
            if np.sum(a0) < -1.25:
                return (np.add(3, w2).astype(a0.dtype), 2.0)
        a0 = (a0 * w2)
        v1 = a0[::-1]
    elif np.sum(a0) > 0.25:
        a0 = (a0 * a0[0])
        v1 = (a0 - a0)
    else:
        v1 = a0
    v1 = (v1 * a0)
    return (v1.sum(), (1.5 + 0.5))


def else_returns_if_assigns(x):
    if x.sum() > 0.0:
        v = x * 2.0
    else:
        return x
    return v + 1.0


def both_branches_return_then_more(x):
    if x.sum() > 0.0:
        if x.min() > 1.5:
            return x
        else:
            return x * 2.0
    else:
        y = x.sum()
    return y * np.ones(3)


@pytest.mark.parametrize("fn", [assigned_only_where_not_returned, else_returns_if_assigns,
                                both_branches_return_then_more])
@pytest.mark.parametrize("x", [f64(-1, 1, -3), f64(-3, 3, 0), f64(2, 3, 4), f64(-9, -9, 1)])
def test_assigned_only_where_not_returned(fn, x):
    same(fn, x)


def test_assigned_only_where_not_returned_int():
    for x in [np.array([-1, 1, -3]), np.array([-3, 3, 0]), np.array([-9, -9, 1])]:
        same(assigned_only_where_not_returned, x)


def assigned_in_one_branch_no_return(x):
    if x.sum() > 0.0:
        v = x * 2.0
    return v


def test_assigned_in_one_branch_without_return_is_still_an_error():
    from runtime.errors import PSCNameError
    with pytest.raises(PSCNameError, match="assigned in one branch"):
        jit_ps(assigned_in_one_branch_no_return)(POSITIVE)


# --- a guarded rest of the function that starts with a loop reads the loop's state -------
# (the `if not do_return:` body function must take c5 and t1 as parameters)

def fuzz_exits_guard_reads_loop_state(a0, a1):
    t1 = np.full(3, 2.0)
    t1 *= (t1 + (a0 + 2))
    if np.sum(t1) < -1.25:
        v2 = 3.0
    elif not np.mean(a1) < 1.25:
        for c3, k4 in zip([1.5, 0.5, 2.0], [-1, 3, 2]):
            t1 = (t1 + a0)
            a0 = (a0 + (0.5 / (np.abs(((a0 / (np.abs(k4) + 1.0)) - (k4 / (np.abs(a0) + 1.0)))) + 1.0)))
            if c3 > 1.25:
                continue
        v2 = 1.0
    elif np.max(a1) < 2.25:
        t1[0] *= (np.where((2 * a0) > 2.25, (2.0 - a1), a1)).max()
        v2 = 3.0
    else:
        v2 = 0.5
    for c5 in [1.5]:
        t1 = (t1 - 0.5)
        if np.mean(np.abs(a1)) > -2.25:
            t1 = (t1 - (c5 + 1))
            break
        if not np.abs(0.5) < -3.25:
            return a1[np.argmax(t1)].astype(np.int64).astype(np.float64)
    for c7 in (a1, a1, a0,):
        c5 = (c5 - v2)
        for i9 in range(3):
            t1 = (t1 + (c5 - a0))
            v10 = v2
            if not np.max((v2 - 1.0)) < -2.25:
                break
            t1 += np.max(a0)
        v11 = np.abs(np.where(t1[::-1] > 1.25, np.where(2.0 > 2.25, c7, -1), np.maximum(a1, 3.0)))
    if v2 < 1.25:
        v12 = (np.add(3.0, t1) + np.min(t1))
    elif t1[-2] > 1.25 and np.negative(c5) < 1.25:
        t1 -= (np.sum(a0[1:]) / (np.abs((np.negative(a0) + (1.5 - a0))) + 1.0))
        v12 = a1[::-1]
    else:
        v12 = ((a1 + v2) / (np.abs((a1 / (np.abs(a1) + 1.0))) + 1.0))
    return np.full((), 1, dtype=np.float64)


EXITS_GUARD_CALLS = [
    (np.array([2.0, 1.0, 0.0], dtype='<f8').reshape((3,)), np.array([1.0, -2.0, -1.0], dtype='<f8').reshape((3,)), ),
    (np.array([0.0, 2.0, -3.0], dtype='<f8').reshape((3,)), np.array([-2.0, -3.0, -2.0], dtype='<f8').reshape((3,)), ),
]


def read_in_guard_then_loop(x):
    for c in [1.5]:
        if np.mean(x) > -2.25:
            break
        if c > 2.0:
            return x
    for d in (x, x):
        c = c - 1.0
        x = x + c
    return x


def test_fuzz_exits_guard_reads_loop_state():
    for args in EXITS_GUARD_CALLS:
        same(fuzz_exits_guard_reads_loop_state, *args)


@pytest.mark.parametrize("x", [POSITIVE, f64(-9.0, -9.0, -9.0)])
def test_read_in_guard_then_loop(x):
    same(read_in_guard_then_loop, x)


def rebound_in_branch_dead_after(x):
    if x.sum() > 0:
        x = x.sum()
        y = x * np.ones(3)
    else:
        y = x
    return y


@pytest.mark.parametrize("x", [POSITIVE, NEGATIVE])
def test_rebound_in_branch_dead_after(x):
    same(rebound_in_branch_dead_after, x)


# --- a traced branch Python would not take reads a variable with no value yet -----------

def reads_unassigned_in_untaken_branch(a0, a1):
    for i in range(3):
        if np.min(a0) > 100.0:
            v2 = v2 + 1.0
        else:
            v2 = a1
    return v2


def test_reading_a_variable_without_value_in_a_traced_branch_is_a_name_error():
    """Python takes the else branch and never reads v2 early; a staged if builds both
    branches, so it cannot: a PSCNameError at the read, not a crash."""
    from runtime.errors import PSCNameError
    assert_same(reads_unassigned_in_untaken_branch(POSITIVE, NEGATIVE), NEGATIVE)
    with pytest.raises(PSCNameError) as caught:
        jit_ps(reads_unassigned_in_untaken_branch)(POSITIVE, NEGATIVE)
    line = reads_unassigned_in_untaken_branch.__code__.co_firstlineno + 3
    assert f"test_fuzz_regressions_cf.py:{line}:" in str(caught.value)
    assert "assign the variable before" in str(caught.value)


# --- a Python number a staged loop gives back unchanged stays static ---------------------

def static_number_through_staged_loop(a0):
    for c1 in [1.0, 2.0, 0.5, 1.5]:
        for i3 in range(4):
            c1 = c1
            a0 = (a0 - a0[np.argmax(a0)])
        if c1 < -3.25:      # a Python `if`: c1 is static
            return c1
    return 0.5


def changed_number_through_staged_loop(a0):
    c = 0.0
    for i in range(3):
        c = -c
        a0 = a0 + c
    return a0, c


@pytest.mark.parametrize("a0", [np.array([0, 3, 3]), np.array([-3, 3, 3])])
def test_static_number_through_staged_loop(a0):
    same(static_number_through_staged_loop, a0)
    same(changed_number_through_staged_loop, a0.astype(np.float64))


# --- a loop variable the body assigns again: after the loop it holds the body's value -------

def rebound_target_with_traced_exit(a0):
    for c1 in (3.0, 3.0):
        if np.sum(a0) > 2.25:
            c1 = c1 - c1
        if c1 < -1.25:
            break
    return a0 / (np.abs(c1) + 1.0)


def rebound_target_from_fuzz(a0, s):
    for c1 in (3.0, 3.0,):
        if not np.max(np.add(s, a0)) > -3.25:
            c1 = (c1 - 1)
        elif np.sum(a0) > 2.25:
            c1 = (c1 - c1)
        else:
            c1 = (c1 + s)
        if c1 < -1.25:
            break
    return a0 / (np.abs(c1) + 1.0)


def rebound_index_of_staged_range(a0, n):
    total = a0 * 0.0
    for i in range(n):
        i = i * 2
        total = total + a0 * i
    return total, i


def rebound_target_over_rows(m):
    acc = m[0] * 0.0
    for row in m:
        row = row * 2.0
        acc = acc + row
    return acc, row


A2 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 1.0]])


@pytest.mark.parametrize("a0", [A2, -A2, A2 * 0.0])
def test_rebound_loop_target_keeps_the_body_value(a0):
    same(rebound_target_with_traced_exit, a0)
    for s in (0.0, -1.0, 2.0, -5.0):
        same(rebound_target_from_fuzz, a0, s)
    same(rebound_index_of_staged_range, a0, np.int64(3))
    same(rebound_target_over_rows, a0)
