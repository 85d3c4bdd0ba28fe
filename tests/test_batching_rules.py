"""Every primitive's batching rule against a Python loop over the lanes.

A case is a per-lane program (``build(b, *params)`` with builder ops) and how to draw one
lane of each argument.  The oracle compiles the per-lane program once and runs it lane by
lane; the batched program is the same computation's region run through
`runtime.batching.batch_region` on arguments stacked along the batch dimension under test
(0, 1, the last one, or ``None`` for an argument shared by all lanes).  Values, dtypes and
shapes must agree.
"""
from __future__ import annotations

import numpy as np
import pytest

from runtime import Builder, compile
from runtime.batching import batch_region
from runtime.primitive import PRIMITIVES
from runtime.primitives.support import to_front
from tests.primitive_cases import CASES, lane_program

LANES = 3


def _batched_program(lane_computation, args, dims):
    b = Builder("batched")
    params = [b.parameter(i, a.shape, a.dtype) for i, a in enumerate(args)]
    outs, out_dims = batch_region(b, lane_computation.region, params, dims)
    return b.build(*[to_front(b, v, d, LANES) for v, d in zip(outs, out_dims)])


def check_batching(build, draws, dims, seed=0):
    rng = np.random.default_rng(seed)
    lanes = [[draw(rng) for _ in range(LANES)] for draw in draws]
    shared = [lane[0] for lane in lanes]
    per_lane = [[lane[k] if d is not None else shared[i] for i, (lane, d) in
                 enumerate(zip(lanes, dims))] for k in range(LANES)]
    lane_computation = lane_program(build, per_lane[0])
    run_lane = compile(lane_computation)
    expected = [[np.asarray(r) for r in run_lane(*args)] for args in per_lane]
    args = [np.stack(lane, axis=d % (lane[0].ndim + 1)) if d is not None else shared[i]
            for i, (lane, d) in enumerate(zip(lanes, dims))]
    norm = [d % (lane[0].ndim + 1) if d is not None else None for lane, d in zip(lanes, dims)]
    batched = compile(_batched_program(lane_computation, args, norm))(*args)
    for i, actual in enumerate(batched):
        want = np.stack([e[i] for e in expected])
        actual = np.asarray(actual)
        assert actual.shape == want.shape and actual.dtype == want.dtype, \
            (i, actual.shape, actual.dtype, want.shape, want.dtype)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(actual, want, rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_array_equal(actual, want)


def dims_variants(draws, rng=np.random.default_rng(1)):
    """Batch dimensions to try: all 0, all last, all 1 (when every lane has rank >= 1),
    and the first argument shared (when there are several)."""
    ranks = [draw(rng).ndim for draw in draws]
    variants = [[0] * len(draws), [-1] * len(draws)]
    if min(ranks) >= 1:
        variants.append([1] * len(draws))
    if len(draws) > 1:
        variants.append([None] + [0] * (len(draws) - 1))
        variants.append([-1] + [None] * (len(draws) - 1))
    return variants


PARAMS = [pytest.param(name, dims, id=f"{name}-{dims}")
          for name, (_, draws, _) in CASES.items() for dims in dims_variants(draws)]


@pytest.mark.parametrize("name,dims", PARAMS)
def test_batching_rule_matches_a_loop_over_lanes(name, dims):
    build, draws, _ = CASES[name]
    check_batching(build, draws, dims)


def test_every_primitive_with_operands_has_a_batching_case():
    """The cases above reach every primitive's batching rule (nullary ones are replayed,
    never batched)."""
    covered = {p for _, _, prims in CASES.values() for p in prims}
    assert set(PRIMITIVES) - covered == set()
