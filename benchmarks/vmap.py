"""Per-example gradients of logistic regression: ``vmap(grad(loss))``, ours vs jax.jit.

Ours is ``jit_ps(vmap(grad(loss), in_axes=(None, 0, 0)))`` on the NumPy loss of one
example; the baseline ``jax.jit(jax.vmap(jax.grad(loss), ...))`` of the same loss in
jax.numpy, and a plain Python loop of NumPy per-example gradients (the closed form
``(sigmoid(x_i @ w) - y_i) * x_i``, row by row).  All float64 (N examples of D features).
Reports the steady-state time per call (best of ``--repeats`` runs of ``--calls`` calls,
alternating), the ratios, and the size of each program: StableHLO op count before XLA
(ours: our text; jax: ``jax.jit(...).lower(...).as_text()``) and instructions of the
optimized HLO's entry computation.

    python benchmarks/vmap.py [--n 4096 --d 256] [--write benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dispatch import best_alternating, cpu_model, write_section  # noqa: E402  (sibling benchmark)

from transpiler import grad, jit_ps, vmap  # noqa: E402

HEADER = "## Per-example gradients (`benchmarks/vmap.py`)"


def loss(w, x, y):
    """Logistic loss of one example ``x`` (D,) with label ``y``."""
    p = 1.0 / (1.0 + np.exp(-np.dot(x, w)))
    return -(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


per_example_grads = jit_ps(vmap(grad(loss), in_axes=(None, 0, 0)))


def numpy_loop(w, X, Y):
    """Plain Python: one NumPy gradient per example."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        p = 1.0 / (1.0 + np.exp(-np.dot(X[i], w)))
        out[i] = (p - Y[i]) * X[i]
    return out


def jax_per_example_grads():
    import jax
    import jax.numpy as jnp

    def loss_jnp(w, x, y):
        p = 1.0 / (1.0 + jnp.exp(-jnp.dot(x, w)))
        return -(y * jnp.log(p) + (1.0 - y) * jnp.log(1.0 - p))
    return jax.jit(jax.vmap(jax.grad(loss_jnp), in_axes=(None, 0, 0)))


_OP = re.compile(r"\b(?:stablehlo|chlo)\.([a-z_]+)")


def stablehlo_ops(text: str) -> int:
    """Operations in a StableHLO module (generic or pretty syntax), ``return``s excluded."""
    count = 0
    for line in text.splitlines():
        match = _OP.search(line)
        if match and match.group(1) != "return":
            count += 1
    return count


def entry_instructions(hlo: str) -> int:
    """Instructions of the optimized HLO's entry computation, parameters excluded."""
    inside, count = False, 0
    for line in hlo.splitlines():
        if line.startswith("ENTRY "):
            inside = True
            continue
        if inside:
            if line.startswith("}"):
                break
            if "=" in line and " parameter(" not in line:
                count += 1
    return count


def best_per_call(fns, args, calls: int, repeats: int) -> list[float]:
    """Best time per call (ms) of each function, runs alternating between them."""
    return [t * 1e3 for t in best_alternating(fns, args, calls, repeats)]


def run(n: int, d: int, calls: int, repeats: int) -> dict:
    import jax
    jax.config.update("jax_enable_x64", True)   # the baseline needs it for float64
    rng = np.random.default_rng(0)
    w = rng.normal(size=d) / np.sqrt(d)
    X = rng.normal(size=(n, d))
    Y = (rng.uniform(size=n) < 0.5).astype(np.float64)
    args = (w, X, Y)
    jitted = jax_per_example_grads()
    expected = numpy_loop(*args)
    for fn in (per_example_grads, jitted):
        out = np.asarray(fn(*args))
        assert out.dtype == np.float64 and out.shape == (n, d), (out.dtype, out.shape)
        np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-12)
    ours_us, jax_us, loop_us = best_per_call((per_example_grads, jitted, numpy_loop), args,
                                             calls, repeats)
    return {
        "n": n, "d": d, "calls": calls, "repeats": repeats,
        "ours_ms": ours_us, "jax_ms": jax_us, "loop_ms": loop_us,
        "ours_ops": stablehlo_ops(per_example_grads.lower(*args)),
        "jax_ops": stablehlo_ops(jitted.lower(*args).as_text()),
        "ours_hlo": entry_instructions(per_example_grads.compile(*args).as_hlo_text()),
        "jax_hlo": entry_instructions(jitted.lower(*args).compile().as_text()),
        "backend": jax.default_backend(), "jax_version": jax.__version__,
        "load": os.getloadavg()[0],
    }


def report(r: dict) -> str:
    lines = [
        HEADER,
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}, jax/jaxlib "
        f"{r['jax_version']}, backend {r['backend']}; load average {r['load']:.1f}.",
        f"Logistic regression, N = {r['n']} examples, D = {r['d']} features, float64: the "
        "gradient of each example's loss (an N × D result). Ours: "
        "`jit_ps(vmap(grad(loss), in_axes=(None, 0, 0)))` on the NumPy loss of one example; "
        "jax: `jax.jit(jax.vmap(jax.grad(loss), ...))` of the same loss in jax.numpy; plain: "
        "a Python loop of NumPy per-example gradients (closed form). Best of "
        f"{r['repeats']}×{r['calls']} calls, runs alternating.",
        "",
        "| | ours | jax.jit | Python loop (NumPy) |",
        "|---|---|---|---|",
        f"| time per call (ms) | {r['ours_ms']:.3f} | {r['jax_ms']:.3f} | {r['loop_ms']:.3f} |",
        f"| ratio to ours | 1.00 | {r['jax_ms'] / r['ours_ms']:.2f} | "
        f"{r['loop_ms'] / r['ours_ms']:.2f} |",
        f"| StableHLO ops (before XLA) | {r['ours_ops']} | {r['jax_ops']} | — |",
        f"| optimized HLO entry instructions | {r['ours_hlo']} | {r['jax_hlo']} | — |",
        "",
        f"ours / jax.jit = {r['ours_ms'] / r['jax_ms']:.2f}; the Python loop takes "
        f"{r['loop_ms'] / r['ours_ms']:.1f}× ours.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--d", type=int, default=256)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--write", metavar="RESULTS_MD")
    args = parser.parse_args()
    section = report(run(args.n, args.d, args.calls, args.repeats))
    print(section)
    if args.write:
        write_section(args.write, section)


if __name__ == "__main__":
    main()
