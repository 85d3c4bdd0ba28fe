"""`iterated_map_reduce` (issue 14, item 3): `tests/map_reduce_cases.py` on 8 simulated
devices in a child process (`tests/eight_devices.py`), one test here per case; on this
process's one device, and the reference semantics against a direct NumPy statement."""
from __future__ import annotations

import numpy as np
import pytest

import map_reduce_cases
from conftest import assert_same
from eight_devices import case_names, check_outcome, child_outcomes
from map_reduce_cases import FEATURES, LABELS, descend, logistic_gradient
from runtime import reference
from transpiler import iterated_map_reduce

CASES = case_names(map_reduce_cases)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return child_outcomes(map_reduce_cases.__file__, tmp_path_factory.mktemp("map_reduce"))


@pytest.mark.parametrize("name", CASES)
def test_on_eight_devices(outcomes, name):
    check_outcome(outcomes, name)


def test_the_reference_is_full_batch_gradient_descent_for_a_sum():
    w = np.zeros(3)
    for _ in range(4):
        w = descend(w, logistic_gradient(w, (FEATURES, LABELS)))
    for shards in (1, 2, 8):
        got = reference.iterated_map_reduce(logistic_gradient, descend, np.zeros(3),
                                            (FEATURES, LABELS), 4, num_shards=shards)
        assert_same(got, w, rtol=1e-10)


def test_the_reference_folds_a_reduce_function_in_shard_order():
    data = np.arange(8.0)
    got = reference.iterated_map_reduce(lambda s, d: d.sum(), lambda s, c: c, 0.0, data, 1,
                                        reduce=lambda a, b: a * 10 + b, num_shards=4)
    assert got == ((1 * 10 + 5) * 10 + 9) * 10 + 13


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_on_one_device(reduce):
    got = iterated_map_reduce(logistic_gradient, descend, np.zeros(3), (FEATURES, LABELS),
                              np.int64(3), reduce=reduce)
    want = reference.iterated_map_reduce(logistic_gradient, descend, np.zeros(3),
                                         (FEATURES, LABELS), 3, reduce=reduce, num_shards=1)
    assert_same(got, want, rtol=1e-10)
