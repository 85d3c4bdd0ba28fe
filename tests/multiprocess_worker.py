"""One process of `tests/test_multiprocess.py`'s two-process run (JAX's multi-controller
model: every process runs this same script).

    python tests/multiprocess_worker.py COORDINATOR NUM_PROCESSES PROCESS_ID OUT_JSON

It joins the others through ``jax.distributed.initialize``, builds a 1-D mesh over the
global devices (every process's), runs a few data-parallel logistic-regression steps with
the batch sharded over that mesh, and writes what it computed to ``OUT_JSON``.
"""
from __future__ import annotations

import json
import sys

import numpy as np

STEPS = 4


def logistic_step(w, x, y):
    """One gradient step of logistic regression on a batch (``x``, ``y``)."""
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    g = x.T @ (p - y) / x.shape[0]
    return w - 0.5 * g, np.mean(-y * np.log(p) - (1.0 - y) * np.log(1.0 - p))


def batch(n=64, d=5):
    """The global batch: every process makes the same one (a fixed seed)."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((n, d))
    y = (rng.uniform(size=n) < 0.5).astype(np.float64)
    return np.zeros(d), x, y


def main(coordinator: str, num_processes: str, process_id: str, out: str) -> None:
    import jax
    jax.distributed.initialize(coordinator_address=coordinator,
                               num_processes=int(num_processes), process_id=int(process_id),
                               initialization_timeout=120)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from transpiler import jit_ps
    mesh = Mesh(np.array(jax.devices()), ("batch",))   # spans both processes
    rows = NamedSharding(mesh, PartitionSpec("batch"))
    replicated = NamedSharding(mesh, PartitionSpec())
    step = jit_ps(logistic_step, in_shardings=(replicated, rows, rows),
                  out_shardings=replicated)
    w, x, y = batch()
    losses = []
    for _ in range(STEPS):
        w, loss = step(w, x, y)   # w comes back replicated on every device
        losses.append(float(loss.addressable_shards[0].data))
    report = {"process_index": jax.process_index(), "global_devices": len(jax.devices()),
              "local_devices": len(jax.local_devices()),
              "w": [np.asarray(s.data).tolist() for s in w.addressable_shards],
              "losses": losses, "dtype": str(w.dtype),
              "all_reduce": "all-reduce" in step.compile(w, x, y).as_hlo_text()}
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:5])
