"""Large constants are executable arguments, not program text (and are deduplicated)."""
from __future__ import annotations

import numpy as np

from conftest import assert_same
from runtime import StagedFunction, translate
from runtime.builder import LARGE_CONSTANT_BYTES

BIG = np.random.default_rng(0).normal(size=(LARGE_CONSTANT_BYTES // 8 + 10,))


def build(b, w):
    def body(sub, state):
        i, acc = state
        dot = translate(sub, np.sum, translate(sub, np.multiply, BIG, w))
        return sub.add(i, sub.constant(np.int32(1))), sub.add(acc, dot)

    def cond(sub, state):
        return sub.lt(state[0], sub.constant(np.int32(3)))
    # BIG is read at top level and inside a loop body: one constant, captured by the body
    top = translate(b, np.sum, BIG)
    _, total = b.while_loop(cond, body, (b.constant(np.int32(0)), b.constant(0.0)))
    return translate(b, np.add, total, top)


def test_large_constant_is_an_argument_used_on_every_dispatch_path():
    f = StagedFunction(build, name="big")
    w = 0.5
    expected = 3 * np.sum(BIG * w) + np.sum(BIG)
    for _ in range(3):   # the first call builds; the next ones go through the C++ path
        assert_same(f(w), np.float64(expected), rtol=1e-12)
    assert f.cache_info().misses == 1


def test_program_text_holds_no_large_constant_and_one_parameter_for_it():
    f = StagedFunction(build, name="big")
    text = f.lower(0.5)
    assert len(text) < 20_000   # the array's hex would be over 2 MB
    signature = text.split("func.func public @main(")[1].split(")")[0]
    assert signature.count("%arg") == 2   # the constant, then w
    assert f"tensor<{BIG.size}xf64>" in signature
