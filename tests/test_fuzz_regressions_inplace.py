"""Fuzzer finding: an in-place operator on a *static* NumPy array inside one branch of a
traced ``if`` mutated the array while the branch was built, so the other branch, and
everything after the ``if``, saw the mutation (a silently wrong result).  Each branch now
gets its own copy of the static arrays it carries; a traced select merges them."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, same
from transpiler import jit_ps

TAKES_IF, TAKES_ELSE = np.ones(3), -np.ones(3)


def minus_in_else(x):
    t = np.ones(3)
    if x.sum() > 0.25:
        y = x
    else:
        t -= 3.0
        y = -x
    return y * t


def times_in_if(x):
    t = np.full(3, 2.0)
    if x.sum() > 0.25:
        t *= 4.0
    return x + t


def setitem_in_elif(x):
    t = np.zeros(3)
    if x.sum() > 5.25:
        y = x
    elif x.sum() > 0.25:
        t[1] = 7.0
        y = x * 2.0
    else:
        t[0] += 1.0
        y = x - 1.0
    return y + t, t


def both_branches_mutate(x):
    t = np.arange(3.0)
    if x.max() > 0.25:
        t += 10.0
    else:
        t -= 10.0
    return t * x


def zero_d_from_where(a0):
    """The fuzzer's own shrunk program (a 0-d array made by np.where)."""
    v1 = np.where(1.0 > -2.25, 1.0, 1.0)
    if np.sum((1.0 + a0)) > 1.25:
        v2 = a0
    elif np.sum(a0) > 0.25:
        v2 = a0
    else:
        v1 -= np.abs(3)
        v2 = np.where(a0 > 0.25, a0, a0)
    return v2 * (3 / (np.abs(v1) + 1.0))


def aliases_share_one_copy(x):
    t = np.ones(3)
    u = t
    if x.sum() > 0.25:
        t -= 1.0
        u = u * 1.0
    return t + u


def int_array_in_branch(x):
    t = np.ones(3, dtype=np.int64)
    if x.sum() > 0.25:
        t += 2
    return t * 3


@pytest.mark.parametrize("fn", [minus_in_else, times_in_if, setitem_in_elif,
                                both_branches_mutate, zero_d_from_where,
                                aliases_share_one_copy, int_array_in_branch])
@pytest.mark.parametrize("x", [TAKES_IF, TAKES_ELSE, np.array([0.0, 0.5, 0.0])],
                         ids=["if", "else", "middle"])
def test_an_in_place_update_in_one_branch_stays_in_that_branch(fn, x):
    same(fn, x)


def test_the_static_array_is_not_mutated_by_the_build_either():
    """The array the function made is untouched after a build that took neither path."""
    from transpiler import jit_ps
    compiled = jit_ps(minus_in_else)
    for x in (TAKES_IF, TAKES_ELSE, TAKES_IF):
        np.testing.assert_array_equal(np.asarray(compiled(x)), minus_in_else(x))


# --- a static array updated in place after a traced value was computed from it ------------
# (found by `make fuzz`, seed 1: the program kept a reference to the array, so the update
# reached the constant the earlier operation had read)

def updated_after_use(a0, a1):
    t1 = np.arange(3.0)
    t1 -= np.cos(-1.0)
    a1 = a1 - 2
    v2 = a1 * t1            # reads t1 as it is now
    t1 *= t1                # then t1 changes
    v2[1] = 1
    return v2 + t1 * np.maximum(a1, t1), v2 + a0


def large_updated_after_use(x):
    t = np.ones(300_000)    # a large constant: passed to the executable as an argument
    y = x * t
    t *= 3.0
    z = x * t               # the same array object, since modified: a second constant
    return y.sum(), z.sum(), (y * t).sum()


def test_static_array_updated_after_use_keeps_its_old_value_in_the_program():
    calls = [(np.array([-2.0, -2.0, 3.0], np.float32), np.array([2, 2, 2], np.int32)),
             (np.array([2.0, 2.0, -2.0], np.float32), np.array([-1, 0, -2], np.int32))]
    compiled = jit_ps(updated_after_use)
    for args in calls:
        assert_same(compiled(*args), updated_after_use(*args))


def test_large_static_array_updated_after_use():
    compiled = jit_ps(large_updated_after_use)
    for x in (np.float64(2.0), np.float64(-0.5)):
        assert_same(compiled(x), large_updated_after_use(x))
