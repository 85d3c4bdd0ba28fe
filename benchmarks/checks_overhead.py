"""What run-time checks cost: ``jit_ps(f)`` vs ``jit_ps(f, checks=True)`` vs ``jax.jit``.

Two programs: a tiny one (dispatch dominates: checked calls take the Python path, since
the failure code must be read after each run) and a loop with traced indexing, integer
division and a logarithm on 10^5 elements (the guards' own cost: a comparison and a
reduction per guarded op).  With checks off the compiled program is the one built without
the feature: the script asserts that the StableHLO text is identical, so "off" costs
nothing but the one setting read on each call.

    python benchmarks/checks_overhead.py [--calls N] [--repeats R]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from transpiler import jit_ps  # noqa: E402


def tiny(x, i):
    return x[i] * 2.0 + 1.0


def work(x, idx, n):
    s = np.zeros_like(x)
    for k in range(n):
        j = idx[k]
        s = s + np.log(x + x[j]) + (idx // (k + 1))[j]
    return s


def jax_versions():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def tiny_jax(x, i):
        return x[i] * 2.0 + 1.0

    def work_jax(x, idx, n):
        def body(k, s):
            j = idx[k]
            return s + jnp.log(x + x[j]) + (idx // (k + 1))[j]
        return jax.lax.fori_loop(0, n, body, jnp.zeros_like(x))
    return jax.jit(tiny_jax), jax.jit(work_jax)


def best_per_call(fn, args, calls: int, repeats: int) -> float:
    for _ in range(min(calls, 50)):
        np.asarray(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            result = fn(*args)
        np.asarray(result)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x_small = np.arange(8.0)
    x_big = rng.uniform(1.0, 2.0, 100_000)
    idx = rng.integers(0, 100_000, 100_000)
    cases = [("tiny x[i]*2+1 (dispatch)", tiny, (x_small, 3), options.calls),
             ("loop: index, //, log on 1e5", work, (x_big, idx, 20),
              max(options.calls // 100, 5))]
    jax_fns = jax_versions()
    print(f"{'program':32s} {'off us':>10s} {'on us':>10s} {'jax us':>10s} "
          f"{'on/off':>7s} {'off/jax':>8s}")
    for (label, fn, args, calls), jax_fn in zip(cases, jax_fns):
        off, on = jit_ps(fn), jit_ps(fn, checks=True)
        assert off.lower(*args) == jit_ps(fn, checks=False).lower(*args)
        assert off.lower(*args) != on.lower(*args)
        np.testing.assert_allclose(np.asarray(off(*args)), np.asarray(on(*args)))
        t_off = best_per_call(off, args, calls, options.repeats)
        t_on = best_per_call(on, args, calls, options.repeats)
        t_jax = best_per_call(jax_fn, args, calls, options.repeats)
        print(f"{label:32s} {t_off:10.2f} {t_on:10.2f} {t_jax:10.2f} "
              f"{t_on / t_off:7.2f} {t_off / t_jax:8.2f}")
    print("checks off: StableHLO identical to a build without the option (asserted)")


if __name__ == "__main__":
    main()
