"""Time np.cumsum / np.cumprod / np.maximum.accumulate of one long axis under jit_ps
against NumPy: ``python benchmarks/scan_timing.py [n ...]`` (not a timed test).

The ``cumulative`` primitive lowers a long axis as a blocked scan (O(n) work); with
``--sequential`` every axis uses the old whole-axis reduce_window (quadratic work), for
the before/after comparison."""
from __future__ import annotations

import sys
import time

import numpy as np

from runtime.primitives import reductions
from transpiler import jit_ps


@jit_ps(static_argnames=("name",))
def _scan(x, name):
    if name == "cumsum":
        return np.cumsum(x)
    if name == "cumprod":
        return np.cumprod(x)
    return np.maximum.accumulate(x)


NAMES = ("cumsum", "cumprod", "maximum.accumulate")


def _best_of(fn, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv):
    if "--sequential" in argv:
        argv = [a for a in argv if a != "--sequential"]
        reductions.SCAN_BLOCK = 1 << 62
    sizes = [int(a) for a in argv] or [10 ** 5, 10 ** 6]
    rng = np.random.default_rng(0)
    for n in sizes:
        x = rng.uniform(0.5, 1.5, n)
        for name in NAMES:
            start = time.perf_counter()
            got = np.asarray(_scan(x, name))
            first = time.perf_counter() - start
            run = _best_of(lambda: np.asarray(_scan(x, name)))
            ref_fn = {"cumsum": np.cumsum, "cumprod": np.cumprod,
                      "maximum.accumulate": np.maximum.accumulate}[name]
            ref = ref_fn(x)
            numpy_time = _best_of(lambda: ref_fn(x))
            with np.errstate(all="ignore"):
                err = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300))
            print(f"n={n:>8} {name:<19} first call {first:8.3f} s  run {run * 1e3:9.3f} ms"
                  f"  numpy {numpy_time * 1e3:8.3f} ms  max rel diff {err:.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
