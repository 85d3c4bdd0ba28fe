"""Fuzzer findings from the binding-time analysis calling build-time traced values static.

A ``for i in range(n)`` loop whose body updates traced state is staged: its index, the
variables it carries, and what is computed from them are traced while the program is
built, whatever ``n`` is.  Each reproducer (and variants) runs as plain Python/NumPy (the
oracle) and through `jit_ps`; results must agree in value, dtype and structure.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import f64, same
from transpiler import jit_ps


# --- 1: the index of a staged range loop is traced ------------------------------------------

def index_scales_numpy_temporary(a0, a2):      # the fuzzer's reproducer (class 2)
    for i1 in range(1):
        t2 = np.zeros(3)
        t2 += -1
        t2 *= i1
        a0 = (a0 + a0)
    return a2 + 2.0


def index_into_numpy_temporary_returned(x):
    for i in range(3):
        t = np.ones(3)
        t -= i
        t *= i + 1
        x = x + t
    return x


def value_from_index_in_place(x):
    for i in range(4):
        k = i * 2
        t = np.full(3, 0.5)
        t += k
        x = x * t
    return x


def index_after_staged_loop(x):
    i = 0
    for i in range(3):
        x = x + 1.0
    t = np.zeros(3)
    t += i
    return x, t


def index_in_nested_static_loop(x):
    for i in range(2):
        for j in [1.0, 2.0]:
            t = np.ones(2)
            t *= i
            t += j
            x = x + t
    return x


def unrolled_loop_keeps_static_index(x):
    # nothing traced is carried: the loop stays Python and `i` stays a Python int
    for i in range(3):
        t = np.zeros(3, np.int64)
        t += i
    return x + t


@pytest.mark.parametrize("fn, args", [
    (index_scales_numpy_temporary, (np.float32(1.0), f64(-2.0, 0.0, 3.0))),
    (index_into_numpy_temporary_returned, (f64(1.0, 2.0, 3.0),)),
    (value_from_index_in_place, (f64(1.0, -2.0, 3.0),)),
    (index_after_staged_loop, (f64(1.0, 2.0, 3.0),)),
    (index_in_nested_static_loop, (f64(1.0, 2.0),)),
    (unrolled_loop_keeps_static_index, (f64(1.0, 2.0, 3.0),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_staged_range_index_is_traced(fn, args):
    same(fn, *args)


# --- 2: a variable a staged loop carries is traced after it ---------------------------------

def if_on_loop_carried_scalar(a1):             # N6
    c = 1.0
    for i in range(2):
        c = c + 1
        a1 = a1 - 1
    if c > -1.25:
        a1 = a1 * 2.0
    return a1


def if_on_loop_carried_scalar_false(a1):
    c = 1.0
    for i in range(2):
        c = c + 1
        a1 = a1 - 1
    if c < -1.25:
        a1 = a1 * 2.0
    return a1


def while_on_loop_carried_counter(x):
    n = 0
    for i in range(3):
        n = n + 1
        x = x + 1.0
    while n > 0:
        x = x * 2.0
        n = n - 1
    return x


def if_on_loop_index_after_loop(x):
    for i in range(3):
        x = x + 1.0
    if i == 2:
        x = x - 10.0
    return x


def in_place_on_carried_scalar(x):
    c = 1.0
    for i in range(2):
        c = c * 2
        x = x + c
    t = np.ones(3)
    t *= c
    return x + t


def if_on_count_of_traced_rows(x):
    c = 0
    for row in x:               # a traced array's rows: a staged loop
        c = c + 1
    if c > 1:
        x = x * 2.0
    return x, c


def in_place_by_count_of_traced_rows(x):
    c = 0.5
    for row in x:
        c = c + 1
    t = np.zeros(2, np.int64)
    t += 3
    t *= 2
    u = np.ones(2)
    u *= c
    return t, u


def index_tested_inside_staged_loop(x):
    for i in range(3):
        if i == 1:
            x = x * 3.0
        x = x + i
    return x


def index_as_shape_unrolls(x):
    for i in range(3):          # np.ones needs a static size: the loop unrolls
        x = x + np.ones(i + 1)[0]
    return x


@pytest.mark.parametrize("fn, args", [
    (if_on_count_of_traced_rows, (np.ones((3, 2)),)),
    (in_place_by_count_of_traced_rows, (np.ones((3, 2)),)),
    (index_tested_inside_staged_loop, (f64(1.0, 2.0),)),
    (index_as_shape_unrolls, (f64(1.0, 2.0),)),
    (if_on_loop_carried_scalar, (f64(1.0, 2.0),)),
    (if_on_loop_carried_scalar_false, (f64(1.0, 2.0),)),
    (while_on_loop_carried_counter, (f64(1.0, 2.0),)),
    (if_on_loop_index_after_loop, (f64(1.0, 2.0),)),
    (in_place_on_carried_scalar, (f64(1.0, 2.0, 3.0),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_staged_loop_carried_is_traced(fn, args):
    same(fn, *args)


# --- 3: a loop variable of an unrolled loop is not an argument ------------------------------

def float_loop_variable_minus_traced(a):
    for c1 in [1.0, 2.0]:
        c1 -= a.sum()
        a = a + c1
    return a


def float_loop_variable_in_place_array(a):
    for c1 in (1.5, -2.0):
        c1 *= a
        a = a - c1
    return a


def enumerate_loop_variable_in_place(a):
    for k, c1 in enumerate([1.0, 3.0]):
        c1 -= a.sum()
        k += a.max()
        a = a * c1 + k
    return a


@pytest.mark.parametrize("fn, args", [
    (float_loop_variable_minus_traced, (f64(1.0, 2.0),)),
    (float_loop_variable_in_place_array, (f64(1.0, 2.0),)),
    (enumerate_loop_variable_in_place, (f64(1.0, 2.0),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_unrolled_loop_variable_in_place(fn, args):
    same(fn, *args)


def loop_variable_was_an_alias(a):
    c1 = a                      # c1 aliases a ...
    for c1 in [1.0, 2.0]:       # ... until the loop rebinds it to a float
        c1 -= a.sum()
    return c1


def loop_variable_over_range_was_an_alias(a):
    k = a
    for k in range(2):
        k += 1
    return a + k


def enumerate_index_over_arguments(a):
    v1 = a
    for k, c in enumerate([a]):     # k is an int, c the argument: only c aliases
        k *= k
        if np.sum(a) > 0.25:
            break
    return v1 + a + k


def zip_pairs_names_with_iterables(a, b):
    for k, c in zip([1.0, 2.0], [a, b]):   # k a float, c an argument
        k -= 1.0
    return a + k


@pytest.mark.parametrize("fn, args", [
    (loop_variable_was_an_alias, (f64(1.0, 2.0),)),
    (loop_variable_over_range_was_an_alias, (f64(1.0, 2.0),)),
    (enumerate_index_over_arguments, (f64(0.0, 0.0),)),
    (enumerate_index_over_arguments, (f64(1.0, 2.0),)),
    (zip_pairs_names_with_iterables, (f64(1.0, 2.0), f64(3.0, 4.0))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_rebound_loop_variable_is_not_an_argument(fn, args):
    same(fn, *args)


# NumPy writes into the caller's array in each of these; PSC refuses them (README: in-place
# updates of arguments are refused) instead of silently leaving the argument unchanged.

def rows_of_argument(a):
    for row in a:
        row -= 1.0              # line +2: a view of a's row
    return a


def list_of_arguments(a, b):
    for c in [a, b]:
        c -= 1.0
    return a


def enumerate_argument(a):
    for i, row in enumerate(a):
        row *= 2.0
    return a


def alias_from_first_iteration(a):
    z = 1.0
    for i in range(2):
        z -= 1.0                # the second iteration's z is a
        z = a
    return a


def alias_on_one_branch(a, flag):
    if flag > 0:
        z = a
    else:
        z = np.ones(2)
    z -= 1.0
    return a


def argument_copied_on_one_branch(a, flag):
    if flag > 0:
        a = a.copy()
    a -= 1.0
    return a


def zip_value_of_argument(a):
    for k, c in zip([1.0, 2.0], [a, a]):
        c -= k
    return a


def view_by_slice(a):
    z = a[1:]
    z += 1.0
    return a


def view_by_transpose(a):
    z = a.T
    z *= 2.0
    return a


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, args, statement", [
    (rows_of_argument, (np.ones((2, 2)),), "row -= 1.0"),
    (list_of_arguments, (f64(1.0, 2.0), f64(3.0, 4.0)), "c -= 1.0"),
    (enumerate_argument, (np.ones((2, 2)),), "row *= 2.0"),
    (alias_from_first_iteration, (f64(1.0, 2.0),), "z -= 1.0"),
    (alias_on_one_branch, (f64(1.0, 2.0), np.float64(1.0)), "z -= 1.0"),
    (zip_value_of_argument, (f64(1.0, 2.0),), "c -= k"),
    (view_by_slice, (f64(1.0, 2.0),), "z += 1.0"),
    (view_by_transpose, (np.ones((2, 2)),), "z *= 2.0"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_in_place_through_an_argument_is_refused(fn, args, statement):
    from runtime.errors import PSCSyntaxError
    copies = [np.copy(a) for a in args]
    fn(*copies)
    assert any(not np.array_equal(c, a) for c, a in zip(copies, args)), \
        "the oracle: NumPy modifies an argument in place"
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(fn)(*args)
    message = str(info.value)
    assert f"test_fuzz_regressions_bt.py:{_line_of(fn, statement)}:" in message
    assert "would modify an argument in place" in message
    assert "hint:" in message


# --- the loop variable of an unrolled loop with a traced break ------------------------------

def loop_variable_tested_after_traced_break(x):      # the 10^4 campaign's class 2
    for c in [1.0, 2.0]:
        if x.sum() > 0.25:
            break
    if x.sum() > 100.25:
        y = x
    elif c > 1.5:
        y = x + 1.0
    else:
        y = x - 1.0
    return y


def loop_variable_updates_numpy_array_after_traced_break(x):
    t = np.ones(3)
    for c in [1.0, 2.0]:
        if x.sum() > 0.25:
            break
    t -= c
    return t * x


def loop_variable_returned_after_traced_break(x):
    for k in (3, 5, 7):
        if x.max() > k:
            break
    return x * k, k


@pytest.mark.parametrize("fn", [loop_variable_tested_after_traced_break,
                                loop_variable_updates_numpy_array_after_traced_break,
                                loop_variable_returned_after_traced_break])
@pytest.mark.parametrize("x", [np.ones(3), np.zeros(3), -np.ones(3), np.full(3, 6.0),
                               np.full(3, 9.0)])
def test_loop_variable_after_traced_break_is_traced(fn, x):
    """After a traced ``break`` the later iterations bind the loop variable only where the
    loop did not stop: the value after the loop is selected at run time, so it is traced."""
    same(fn, x)


def test_argument_copied_on_one_branch_is_refused_naming_both_lines():
    """Updated in place while the argument on one path, a copy on the other: the caller
    sees the update or not depending on the branch; refused at the rebinding, naming the
    update's line (issue 17: an argument's own updates are written back)."""
    from runtime.errors import PSCSyntaxError
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(argument_copied_on_one_branch)(f64(1.0, 2.0), np.float64(-1.0))
    message = str(info.value)
    fn = argument_copied_on_one_branch
    assert f"test_fuzz_regressions_bt.py:{_line_of(fn, 'a = a.copy()')}:" in message
    assert f"(line {_line_of(fn, 'a -= 1.0')})" in message
    assert "rebound" in message and "hint:" in message
