"""`iterated_map_reduce` on 8 simulated CPU devices: the cases
`tests/test_iterated_map_reduce.py` runs in a child process (`tests/eight_devices.py`).

The oracle is the reference semantics, `runtime.reference.iterated_map_reduce`, run with
the same functions as plain Python on 8 shards; values, dtypes and structure are compared.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import assert_same
from runtime import reference
from transpiler import (PSCTypeError, PSCUnsupportedCallError, PSCValueError, devices,
                        iterated_map_reduce, jit_ps)

N = 8
RNG = np.random.default_rng(0)
FEATURES = RNG.normal(size=(64, 3))
LABELS = (FEATURES @ np.array([1.0, -2.0, 0.5]) > 0).astype(np.float64)


def logistic_gradient(w, shard):
    x, y = shard
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return x.T @ (p - y)


def descend(w, g):
    return w - 0.1 * g


def column_stats(state, shard):
    return {"top": shard.max(axis=0) + state["shift"], "low": shard.min(axis=0)}


def shift_by(state, combined):
    return {"shift": state["shift"] + 0.1 * combined["top"].sum() - combined["low"].sum(),
            "count": state["count"] + 1}


def weighted(a, b):   # not commutative: the fold's order is the devices'
    return a * 0.5 + b


def merge_stats(a, b):   # a reduce function of pytrees
    return {"top": np.maximum(a["top"], b["top"]), "low": a["low"] * 0.5 + b["low"]}


def reference_of(map_fn, update_fn, init, data, iters, reduce, shards=N):
    return reference.iterated_map_reduce(map_fn, update_fn, init, data, iters,
                                         reduce=reduce, num_shards=shards)


KINDS = ["sum", "mean", "max", "min", weighted]


@pytest.mark.parametrize("reduce", KINDS, ids=lambda r: r if isinstance(r, str) else "fn")
@pytest.mark.parametrize("iters", [0, 1, 7, np.int64(7), np.int32(3)],
                         ids=["static0", "static1", "static7", "traced7", "traced3i32"])
def test_logistic_regression_steps(reduce, iters):
    init = np.zeros(3)
    got = iterated_map_reduce(logistic_gradient, descend, init, (FEATURES, LABELS), iters,
                              reduce=reduce)
    want = reference_of(logistic_gradient, descend, init, (FEATURES, LABELS), iters, reduce)
    assert_same(got, want, rtol=1e-10)


@pytest.mark.parametrize("reduce", KINDS, ids=lambda r: r if isinstance(r, str) else "fn")
def test_pytree_state_and_partial_results(reduce):
    reduce = merge_stats if reduce is weighted else reduce
    init = {"shift": 0.0, "count": np.int64(0)}
    data = RNG.normal(size=(16, 2))
    for iters in (4, np.int64(4)):
        got = iterated_map_reduce(column_stats, shift_by, init, data, iters, reduce=reduce)
        want = reference_of(column_stats, shift_by, init, data, iters, reduce)
        assert_same(got, want, rtol=1e-10)


def test_the_state_dtype_is_kept():
    counts = RNG.integers(0, 10, size=(24,))
    got = iterated_map_reduce(lambda s, d: d.sum() + s, lambda s, c: c % 1000, np.int64(1),
                              counts, 5)
    want = reference_of(lambda s, d: d.sum() + s, lambda s, c: c % 1000, np.int64(1),
                        counts, 5, "sum")
    assert_same(got, want)
    single = iterated_map_reduce(logistic_gradient, descend, np.zeros(3, np.float32),
                                 (FEATURES.astype(np.float32), LABELS.astype(np.float32)), 2)
    assert single.dtype == np.float32


def test_fewer_devices():
    four = devices()[:4]
    got = iterated_map_reduce(logistic_gradient, descend, np.zeros(3), (FEATURES, LABELS), 3,
                              reduce="mean", devices=four)
    want = reference_of(logistic_gradient, descend, np.zeros(3), (FEATURES, LABELS), 3,
                        "mean", shards=4)
    assert_same(got, want, rtol=1e-10)


def body_of_the_while(text: str) -> str:
    """The lines of the (one) while op's regions in StableHLO text."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if '"stablehlo.while"' in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if len(line) - len(line.lstrip()) <= indent and not line.strip().startswith("}"):
            break
        body.append(line)
    return "\n".join(body)


@pytest.mark.parametrize("iters", [5, np.int64(5)], ids=["static", "traced"])
def test_one_program_one_while_holding_the_all_reduce(iters):
    text = iterated_map_reduce.lower(logistic_gradient, descend, np.zeros(3),
                                     (FEATURES, LABELS), iters)
    assert text.count('"stablehlo.while"') == 1
    assert text.count('"stablehlo.all_reduce"') == 1
    assert '"stablehlo.all_reduce"' in body_of_the_while(text)
    assert "mhlo.num_replicas = 8 : i32" in text
    hlo = iterated_map_reduce.compile(logistic_gradient, descend, np.zeros(3),
                                      (FEATURES, LABELS), iters).as_hlo_text()
    assert len(re.findall(r"\bwhile\(", hlo)) == 1 and "all-reduce" in hlo


def test_a_reduce_function_gathers_and_folds():
    text = iterated_map_reduce.lower(logistic_gradient, descend, np.zeros(3),
                                     (FEATURES, LABELS), 2, reduce=weighted)
    assert '"stablehlo.all_gather"' in body_of_the_while(text)


def test_a_leading_axis_that_does_not_split_is_refused():
    with pytest.raises(PSCValueError, match="length 63, which does not split evenly over 8"):
        iterated_map_reduce(logistic_gradient, descend, np.zeros(3),
                            (FEATURES[:63], LABELS[:63]), 2)
    with pytest.raises(PSCValueError, match="does not split evenly into 8 shards"):
        reference_of(logistic_gradient, descend, np.zeros(3), (FEATURES[:63], LABELS[:63]),
                     2, "sum")


def test_mistakes_are_psc_errors():
    args = (logistic_gradient, descend, np.zeros(3), (FEATURES, LABELS))
    with pytest.raises(PSCValueError, match="unknown reduce 'prod'"):
        iterated_map_reduce(*args, 2, reduce="prod")
    with pytest.raises(PSCTypeError, match="num_iters must be an int or an integer scalar"):
        iterated_map_reduce(*args, np.float64(2.0))
    with pytest.raises(PSCValueError, match="a scalar"):
        iterated_map_reduce(logistic_gradient, descend, np.zeros(3), 1.0, 2)

    @jit_ps
    def inside(x):
        return iterated_map_reduce(logistic_gradient, descend, x, (FEATURES, LABELS), 2)
    with pytest.raises(PSCUnsupportedCallError, match="call it from plain Python|plain Python"):
        inside(np.zeros(3))


def halvings(state, shard):   # a loop whose trip count differs between devices
    count = 0
    x = np.abs(shard).max() * state
    while x > 0.01:
        x = x * 0.5
        count += 1
    return count


def test_control_flow_inside_the_map():
    data = RNG.normal(size=(32,)) * np.repeat(np.arange(1.0, 9.0), 4)
    for reduce in ("sum", "max"):
        got = iterated_map_reduce(halvings, lambda s, c: s * 0.5 + c * 0.01, 1.0, data,
                                  np.int64(3), reduce=reduce)
        want = reference_of(halvings, lambda s, c: s * 0.5 + c * 0.01, 1.0, data, 3, reduce)
        assert_same(got, want)
