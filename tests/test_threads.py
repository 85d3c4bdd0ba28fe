"""Sixteen threads calling `jit_ps` functions at once, with mixed signatures.

Each distinct signature (argument shapes, dtypes, static values) is compiled exactly once
however many threads miss it at the same moment — ``cache_info().misses`` equals the
number of distinct signatures — and every result is what plain Python + NumPy gives.
"""
from __future__ import annotations

import itertools
import random
import threading

import numpy as np
import pytest

from conftest import assert_same
from runtime.cache import LRUCache
from transpiler import jit_ps

THREADS = 16
ROUNDS = 3                 # each thread makes every call of its plan this many times


def _shift(v):
    """A plain helper: transpiled on first use, possibly by several threads at once."""
    return v - 0.5


def branchy(x, y):
    z = x * 2.0 + y
    if z.sum() > 0.25:
        z = _shift(z)
    else:
        z = z * -1.0
    return z, z.max()


def looping(x):
    total = np.zeros_like(x)
    count = 0
    while count < 4 and total.sum() < 20.25:
        count += 1
        for row in range(2):
            if x.max() < -0.75:
                break
            total = total + x * (row + 1)
    return total, count


def scaled(x, k):
    return (x * k).astype(np.float64) + k


def arrays(shape, dtype, offset):
    values = (np.arange(int(np.prod(shape))) % 5 - 2 + offset).reshape(shape)
    return values.astype(dtype)


def calls():
    """(function name, args, static kwargs) for every signature, and the distinct
    signature count per function."""
    plan = []
    for shape, dtype in itertools.product([(3,), (2, 3)], [np.float64, np.float32]):
        plan.append(("branchy", (arrays(shape, dtype, 0), arrays(shape, dtype, 1)), {}))
        plan.append(("branchy", (arrays(shape, dtype, -2), arrays(shape, dtype, 1)), {}))
        # the same signature in the other byte order: calls that take the Python path
        swapped = np.dtype(dtype).newbyteorder("S")
        plan.append(("branchy", (arrays(shape, swapped, 0), arrays(shape, dtype, 1)), {}))
    for shape, dtype in itertools.product([(4,), (2, 2), ()], [np.float64, np.int64]):
        plan.append(("looping", (arrays(shape, dtype, 1),), {}))
        plan.append(("looping", (arrays(shape, dtype, -3),), {}))
    for k in (1, 2, 3):
        plan.append(("scaled", (arrays((3,), np.int32, 0),), {"k": k}))
    signatures = {"branchy": 4, "looping": 6, "scaled": 3}
    return plan, signatures


PLAIN = {"branchy": branchy, "looping": looping, "scaled": scaled}


def test_sixteen_threads_compile_each_signature_once_and_agree_with_numpy():
    compiled = {"branchy": jit_ps(branchy), "looping": jit_ps(looping),
                "scaled": jit_ps(scaled, static_argnames="k")}
    plan, signatures = calls()
    expected = [PLAIN[name](*args, **kw) for name, args, kw in plan]
    barrier = threading.Barrier(THREADS)
    errors, results = [], {}

    def worker(k):
        order = list(range(len(plan))) * ROUNDS
        random.Random(k).shuffle(order)          # every thread its own mix of signatures
        try:
            barrier.wait()
            for i in order:
                name, args, kw = plan[i]
                results.setdefault(i, []).append(compiled[name](*args, **kw))
        except BaseException as err:            # noqa: BLE001 - reported below
            errors.append((k, repr(err)))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    for i, outcomes in results.items():
        assert len(outcomes) == THREADS * ROUNDS
        for actual in outcomes:
            assert_same(actual, expected[i], rtol=1e-6)
    assert len(results) == len(plan)
    for name, count in signatures.items():
        info = compiled[name].cache_info()
        assert info.misses == count, (name, info)       # one compile per signature
        assert info.size == count, (name, info)


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_the_signature_counts_are_right_single_threaded(name):
    """The test above is only as good as its signature count: one thread agrees."""
    plan, signatures = calls()
    fn = jit_ps(PLAIN[name], static_argnames="k" if name == "scaled" else ())
    for n, args, kw in plan:
        if n == name:
            assert_same(fn(*args, **kw), PLAIN[name](*args, **kw), rtol=1e-6)
    assert fn.cache_info().misses == signatures[name]


# --- the cache underneath: one creation per key ---------------------------------------------

def test_threads_missing_one_key_at_once_create_it_once():
    cache, started, release = LRUCache(), threading.Event(), threading.Event()
    created = []

    def create():
        created.append(threading.get_ident())
        started.set()
        release.wait(timeout=60)              # hold the creation until all have missed
        return "value"
    values = []
    threads = [threading.Thread(target=lambda: values.append(cache.get_or_create("k", create)))
               for _ in range(THREADS)]
    threads[0].start()
    assert started.wait(timeout=60)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(timeout=60)
    assert values == ["value"] * THREADS
    assert len(created) == 1
    info = cache.info()
    assert (info.misses, info.hits, info.size) == (1, THREADS - 1, 1)


def test_a_failed_creation_is_retried_by_a_waiting_thread():
    cache, started, release = LRUCache(), threading.Event(), threading.Event()
    attempts = []

    def create():
        attempts.append(1)
        if len(attempts) == 1:
            started.set()
            release.wait(timeout=60)
            raise MemoryError("first attempt fails")
        return "second"
    outcomes = []

    def call():
        try:
            outcomes.append(cache.get_or_create("k", create))
        except MemoryError as err:
            outcomes.append(repr(err))
    first = threading.Thread(target=call)
    first.start()
    assert started.wait(timeout=60)
    second = threading.Thread(target=call)
    second.start()
    release.set()
    first.join(timeout=60)
    second.join(timeout=60)
    assert sorted(outcomes) == sorted(["MemoryError('first attempt fails')", "second"])
    assert cache.info().misses == 2


def test_a_creation_that_looks_its_own_key_up_does_not_wait_for_itself():
    cache = LRUCache()

    def create(depth=0):
        if depth < 2:
            return cache.get_or_create("k", lambda: create(depth + 1)) + 1
        return 0
    done = []
    t = threading.Thread(target=lambda: done.append(cache.get_or_create("k", create)))
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "deadlocked on its own pending creation"
    assert done == [0]                       # the first value stored wins
    assert cache.info().misses == 3
