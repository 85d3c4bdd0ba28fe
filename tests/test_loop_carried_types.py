"""How often a staged loop's body is built while its carried types settle.

`runtime.control_flow` builds a loop body speculatively with the types it knows; a build
whose body changes a type (a weak number meeting float32) is dropped and the loop built
again.  These tests count the body's builds, and check that a dropped build leaves nothing
behind and that an error in the body is raised once.
"""
from __future__ import annotations

import numpy as np
import pytest

from runtime import Builder
from runtime import control_flow as cf
from runtime.context import building
from runtime.errors import PSCTypeError


class CountingBody:
    """A loop body that counts how often it is built."""

    def __init__(self, fn):
        self.fn, self.builds = fn, 0

    def __call__(self, *args):
        self.builds += 1
        return self.fn(*args)


def _build(run):
    b = Builder("loop")
    x = b.parameter(0, (3,), np.float32)
    with building(b):
        out = run(b, x)
    return b, out


def _ops(b: Builder) -> list[str]:
    return [op.name for op in b.region.operations]


def test_strong_carried_values_build_the_body_once():
    body = CountingBody(lambda x, y: (x, y * 2.0))
    b, (x, y) = _build(lambda b, x: cf.while_stmt(
        lambda x, y: (y < 10.0).all(), body, (x, x), ("x", "y")))
    assert body.builds == 1
    assert y.dtype == np.float32 and _ops(b).count("while") == 1


def test_a_weak_number_settles_in_one_dropped_build():
    body = CountingBody(lambda x, acc: (x, acc + x.sum()))
    b, (_, acc) = _build(lambda b, x: cf.while_stmt(
        lambda x, acc: acc < 10.0, body, (x, b.constant(0.0)), ("x", "acc")))
    assert body.builds == 2                      # weak float64, then float32
    assert acc.dtype == np.float32 and not acc.weak
    # the test run as Python (it is traced from the start), then one conversion of the
    # initial value, then the loop: the dropped build left no initial values behind
    assert _ops(b) == ["constant", "constant", "compare", "convert", "while"]


def test_for_range_builds_twice_for_its_index_target():
    body = CountingBody(lambda i, acc: (acc + i,))
    b, (acc,) = _build(lambda b, x: cf.for_stmt(range(5), body, (x,), ("acc",)))
    assert body.builds == 1                      # the loop target is presumed the index
    assert acc.dtype == np.float32
    assert [op.name for op in b.region.operations].count("while") == 1


def test_nested_loops_settle_inside_a_dropped_outer_build():
    def run(b, x):
        inner = CountingBody(lambda j, acc: (acc + x.sum(),))
        outer = CountingBody(lambda i, acc: cf.for_stmt(range(2), inner, (acc,), ("acc",)))
        out = cf.for_stmt(range(3), outer, (b.constant(0.0),), ("acc",))
        return out, outer.builds, inner.builds
    b, ((acc,), outer_builds, inner_builds) = _build(run)
    # outer build 1 (weak acc): inner settles in 2 builds and turns acc float32, so the
    # outer build is dropped; outer build 2 (float32 acc): the inner loop builds once
    assert (outer_builds, inner_builds) == (2, 3)
    assert acc.dtype == np.float32 and _ops(b).count("while") == 1


def test_an_error_in_the_body_is_raised_once():
    def bad(x, y):
        raise PSCTypeError("the user's error")
    body = CountingBody(bad)
    with pytest.raises(PSCTypeError, match="the user's error"):
        _build(lambda b, x: cf.while_stmt(
            lambda x, y: (y < 10.0).all(), body, (x, x), ("x", "y")))
    assert body.builds == 1


def test_a_strong_dtype_change_is_still_an_error():
    body = CountingBody(lambda x, y: (x, y.astype(np.float64)))
    with pytest.raises(PSCTypeError, match=r"y is float32\[3\] before the loop but "
                                           r"float64\[3\] after an iteration"):
        _build(lambda b, x: cf.while_stmt(
            lambda x, y: (y < 10.0).all(), body, (x, x), ("x", "y")))
    assert body.builds == 1
