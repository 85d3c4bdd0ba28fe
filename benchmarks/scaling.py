"""Scaling of a data-parallel logistic-regression training step over 1, 2, 4, 8 devices.

    python benchmarks/scaling.py [--devices 1,2,4,8] [--global-batch 16384]
                                 [--per-device-batch 2048] [--features 256]
                                 [--calls 10] [--repeats 21] [--write benchmarks/RESULTS.md]

One gradient step of logistic regression (``w -= lr * X.T @ (sigmoid(X @ w) - y) / n``),
with the batch sharded over a 1-D mesh of ``n`` devices and the weights replicated: each
device computes its shard's partial gradient and XLA's all-reduce sums them.  Strong
scaling keeps the global batch fixed (each device gets ``global / n`` rows); weak scaling
keeps the per-device batch fixed (the global batch grows with ``n``).

Each *system* is a pair (ours, theirs) measured side by side in the same process, the
timed runs alternating: ``spmd`` — ours `jit_ps(..., in_shardings=, out_shardings=)`
vs ``jax.jit`` with the same shardings (arguments placed once) — and ``pmap`` — ours
``pmap`` with ``psum`` (``return_device_arrays=True``: results stay jax arrays, as
``jax.pmap``'s) vs ``jax.pmap`` with ``lax.psum`` (NumPy arguments, split onto the
devices at each call, by both).  Per device count the script
prints the time per step of both, the ratio ours/jax (target ≤ 1.05), the collectives in
both optimized HLO modules, and the speed-up slope (a least-squares fit of speed-up
against device count).  The slope means something only on real devices: on CPU the
"devices" are threads of one host (``--xla_force_host_platform_device_count``, set here
before jax starts), sharing its cores.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from typing import Callable, NamedTuple

_FLAG = "--xla_force_host_platform_device_count"
if _FLAG not in os.environ.get("XLA_FLAGS", ""):   # before jax starts its CPU client
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + f" {_FLAG}=8").strip()

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dispatch import cpu_model, ready, write_section  # noqa: E402  (sibling benchmark)

HEADER = "## Scaling: data-parallel training step (`benchmarks/scaling.py`)"
LEARNING_RATE = 0.1
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
               "collective-permute")


def train_step(w, x, y):
    """One logistic-regression gradient step on the batch (``x``, ``y``): ours, as NumPy."""
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return w - LEARNING_RATE * (x.T @ (p - y)) / x.shape[0]


def jax_train_step(w, x, y):
    """The same step in jax.numpy (the baseline)."""
    import jax.numpy as jnp
    p = 1.0 / (1.0 + jnp.exp(-(x @ w)))
    return w - LEARNING_RATE * (x.T @ (p - y)) / x.shape[0]


class Runner(NamedTuple):
    """One system at one device count: ``step(w, x, y)`` (arguments already placed as
    it wants them), those arguments, and its optimized HLO text."""

    step: Callable
    args: tuple
    hlo: str


def spmd_ours(devices, w, x, y) -> Runner:
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    import transpiler
    mesh = Mesh(np.array(devices), ("batch",))
    rows, replicated = (NamedSharding(mesh, PartitionSpec("batch")),
                        NamedSharding(mesh, PartitionSpec()))
    step = transpiler.jit_ps(train_step, in_shardings=(replicated, rows, rows),
                             out_shardings=replicated)
    args = (transpiler.device_put(w, replicated), transpiler.device_put(x, rows),
            transpiler.device_put(y, rows))
    return Runner(step, args, step.compile(*args).as_hlo_text())


def spmd_jax(devices, w, x, y) -> Runner:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array(devices), ("batch",))
    rows, replicated = (NamedSharding(mesh, PartitionSpec("batch")),
                        NamedSharding(mesh, PartitionSpec()))
    step = jax.jit(jax_train_step, in_shardings=(replicated, rows, rows),
                   out_shardings=replicated)
    args = (jax.device_put(w, replicated), jax.device_put(x, rows), jax.device_put(y, rows))
    return Runner(step, args, step.lower(*args).compile().as_text())


def _per_device(devices, x, y):
    """``x``, ``y`` with a leading device axis, as ``pmap`` maps them."""
    n = len(devices)
    return x.reshape(n, x.shape[0] // n, *x.shape[1:]), y.reshape(n, y.shape[0] // n)


def pmap_ours(devices, w, x, y) -> Runner:
    import transpiler
    step = transpiler.pmap(pmap_train_step, axis_name="batch", in_axes=(None, 0, 0),
                           out_axes=None, devices=devices, return_device_arrays=True)
    args = (w, *_per_device(devices, x, y))
    return Runner(step, args, step.compile(*args).as_hlo_text())


def pmap_jax(devices, w, x, y) -> Runner:
    import jax
    step = jax.pmap(jax_pmap_train_step, axis_name="batch", in_axes=(None, 0, 0),
                    out_axes=None, devices=devices)
    args = (w, *_per_device(devices, x, y))
    return Runner(step, args, step.lower(*args).compile().as_text())


def pmap_train_step(w, x, y):
    """The step as one device's part (ours, as NumPy): its shard's gradient, summed over
    the devices.  Both pmap systems take NumPy arguments, split at each call."""
    from transpiler import psum
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    n = x.shape[0] * psum(1, "batch")
    return w - LEARNING_RATE * psum(x.T @ (p - y), "batch") / n


def jax_pmap_train_step(w, x, y):
    import jax.numpy as jnp
    from jax import lax
    p = 1.0 / (1.0 + jnp.exp(-(x @ w)))
    n = x.shape[0] * lax.psum(1, "batch")
    return w - LEARNING_RATE * lax.psum(x.T @ (p - y), "batch") / n


# name: (ours, theirs, how the column is labelled); the builders take (devices, w, x, y)
# with the global batch and return a Runner.
SYSTEMS = {
    "spmd": (spmd_ours, spmd_jax, ("ours SPMD `jit_ps`", "`jax.jit` (same shardings)")),
    "pmap": (pmap_ours, pmap_jax, ("ours `pmap`", "`jax.pmap`")),
}


def collective_counts(hlo: str) -> dict:
    """How many of each collective the optimized HLO holds (async pairs count once)."""
    counts = {}
    for name in COLLECTIVES:
        found = len(re.findall(rf"= [^=\n]* {name}(?:-start)?\(", hlo))
        if found:
            counts[name] = found
    return counts


def batch(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = (rng.uniform(size=n) < 0.5).astype(np.float32)
    return np.zeros(d, np.float32), x, y


def measure(system: str, devices, n_rows: int, d: int, calls: int, repeats: int) -> dict:
    """Time per step (s) of both systems of ``system`` on the first ``len(devices)``
    devices, checking that they agree; their collective counts."""
    build_ours, build_theirs, _ = SYSTEMS[system]
    w, x, y = batch(n_rows, d)
    ours, theirs = build_ours(devices, w, x, y), build_theirs(devices, w, x, y)
    np.testing.assert_allclose(np.asarray(ours.step(*ours.args)),
                               np.asarray(theirs.step(*theirs.args)), rtol=2e-4, atol=1e-6)

    t_ours, t_theirs = paired_times(ours, theirs, calls, repeats)
    ratios = sorted(a / b for a, b in zip(t_ours, t_theirs))
    return {"ours": min(t_ours), "theirs": min(t_theirs),
            "ratio": float(np.median(ratios)), "ratio_range": (ratios[0], ratios[-1]),
            "ours_collectives": collective_counts(ours.hlo),
            "theirs_collectives": collective_counts(theirs.hlo)}


def paired_times(ours: Runner, theirs: Runner, calls: int, repeats: int, warmups: int = 3):
    """Per repeat, the time per step of each (``calls`` steps, waited for), the two runs
    back to back: a pair sees the same load from the machine's other processes, so the
    ratio within a pair is steadier than the ratio of two bests."""
    for runner in (ours, theirs):
        for _ in range(warmups):
            ready(runner.step(*runner.args))
    times = ([], [])
    for _ in range(repeats):
        for runner, out in zip((ours, theirs), times):
            start = time.perf_counter()
            for _ in range(calls):
                result = runner.step(*runner.args)
            ready(result)
            out.append((time.perf_counter() - start) / calls)
    return times


def slope(counts, times) -> float:
    """The least-squares slope of speed-up (time on the fewest devices / time) against
    the device count, scaled so that perfect scaling is 1.0."""
    n = np.asarray(counts, float) / counts[0]
    speedup = times[0] / np.asarray(times, float)
    if len(n) < 2:
        return float("nan")
    return float(np.polyfit(n, speedup, 1)[0])


def _counts(c: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.items()) or "none"


def report(results: dict, args, device_kind: str) -> str:
    lines = [HEADER, "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
             f"{platform.machine()}, Python {platform.python_version()}, jax/jaxlib "
             f"{_jax_version()}; devices: {device_kind}.",
             f"Step: logistic regression, float32, {args.features} features, the batch "
             "sharded over a 1-D mesh, weights replicated; best time per step of "
             f"{args.repeats}×{args.calls} calls, runs alternating between the systems, "
             "arguments already on the devices; *ours / jax* is the median over the "
             "repeats of the ratio within each back-to-back pair of runs [its range].", ""]
    for system in results:
        ours_name, theirs_name = SYSTEMS[system][2]
        for mode, label in (("strong", f"strong scaling (global batch {args.global_batch})"),
                            ("weak", f"weak scaling ({args.per_device_batch} rows per device)")):
            rows = results[system][mode]
            lines += [f"**{system}, {label}**", "",
                      f"| devices | {ours_name} (ms) | {theirs_name} (ms) | ours / jax | "
                      "collectives: ours | collectives: jax |", "|---|---|---|---|---|---|"]
            for n, r in rows.items():
                low, high = r["ratio_range"]
                lines.append(f"| {n} | {r['ours'] * 1e3:.3f} | {r['theirs'] * 1e3:.3f} | "
                             f"{r['ratio']:.2f} [{low:.2f}–{high:.2f}] | "
                             f"{_counts(r['ours_collectives'])} | "
                             f"{_counts(r['theirs_collectives'])} |")
            counts = list(rows)
            if mode == "strong":
                lines += ["", "Speed-up slope (1.0 = linear): ours "
                          f"{slope(counts, [r['ours'] for r in rows.values()]):.2f}, jax "
                          f"{slope(counts, [r['theirs'] for r in rows.values()]):.2f}."]
            else:
                lines += ["", "Weak-scaling efficiency at the most devices (time on the "
                          "fewest / time on the most): ours "
                          f"{rows[counts[0]]['ours'] / rows[counts[-1]]['ours']:.2f}, jax "
                          f"{rows[counts[0]]['theirs'] / rows[counts[-1]]['theirs']:.2f}."]
            lines.append("")
    lines.append("The slopes and efficiencies mean something only on real devices: here the "
                 "devices are " + device_kind + ", so more devices do not add compute; the "
                 "ratios ours/jax and the collective counts are what this run shows.")
    return "\n".join(lines) + "\n"


def _jax_version() -> str:
    import jax
    return jax.__version__


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="1,2,4,8")
    parser.add_argument("--global-batch", type=int, default=16384)
    parser.add_argument("--per-device-batch", type=int, default=2048)
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--write", metavar="RESULTS_MD")
    args = parser.parse_args()
    import jax
    counts = [int(n) for n in args.devices.split(",")]
    available = jax.devices()
    if max(counts) > len(available):
        raise SystemExit(f"{max(counts)} devices asked for, {len(available)} available")
    device_kind = (f"{len(available)} simulated CPU devices ({_FLAG})"
                   if available[0].platform == "cpu" else
                   f"{len(available)} × {available[0].device_kind}")
    results = {}
    for system in args.systems.split(","):
        results[system] = {"strong": {}, "weak": {}}
        for n in counts:
            devices = available[:n]
            results[system]["strong"][n] = measure(system, devices, args.global_batch,
                                                   args.features, args.calls, args.repeats)
            results[system]["weak"][n] = measure(system, devices, args.per_device_batch * n,
                                                 args.features, args.calls, args.repeats)
            print(f"# {system} {n} devices: strong "
                  f"{results[system]['strong'][n]['ours'] * 1e3:.3f} / "
                  f"{results[system]['strong'][n]['theirs'] * 1e3:.3f} ms, weak "
                  f"{results[system]['weak'][n]['ours'] * 1e3:.3f} / "
                  f"{results[system]['weak'][n]['theirs'] * 1e3:.3f} ms", file=sys.stderr)
    section = report(results, args, device_kind)
    print(section)
    if args.write:
        write_section(args.write, section)


if __name__ == "__main__":
    main()
