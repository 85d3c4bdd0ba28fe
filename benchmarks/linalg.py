"""Dense linear algebra: ``np.linalg.solve``, ``cholesky``, ``eigh`` and ``svd``, ours vs
jax.jit vs plain NumPy, side by side.

Ours is ``jit_ps`` of the NumPy function (one call of ``np.linalg.<name>``), with NumPy
results (the default) and with ``return_device_arrays=True``; the baseline ``jax.jit`` of
the same call in ``jax.numpy.linalg``, as it returns (jax arrays) and followed by
``np.asarray`` (NumPy results, the fair comparison for our default); plain NumPy calls
LAPACK directly.  All float64, n × n matrices (symmetric positive definite for cholesky and
eigh; ``solve`` has one right-hand-side vector).  Reports the steady-state time per call
(best of ``--repeats`` runs of ``--calls`` calls, runs alternating, each after a pause of
``--pause`` seconds so that the thread pools the previous run woke are idle again) and the
ratios.  A function with no rule in this build is skipped with a note.

    python benchmarks/linalg.py [--sizes 64 512] [--names solve eigh] [--pause 0.2]
                                [--write benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dispatch import best_alternating, cpu_model, write_section  # noqa: E402  (sibling benchmark)

from runtime.translation import lookup_rule  # noqa: E402
from transpiler import jit_ps  # noqa: E402

HEADER = "## Dense linear algebra (`benchmarks/linalg.py`)"
NAMES = ("solve", "cholesky", "eigh", "svd")


def solve(a, y):
    return np.linalg.solve(a, y)


def cholesky(a):
    return np.linalg.cholesky(a)


def eigh(a):
    return np.linalg.eigh(a)


def svd(a):
    return np.linalg.svd(a)


def _inputs(name: str, n: int):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, n))
    if name == "solve":
        return x + n * np.eye(n), rng.standard_normal(n)
    if name in ("cholesky", "eigh"):
        return (x @ x.T + n * np.eye(n),)
    return (x,)


def _invariant(name: str, out):
    """What is compared across implementations (eigenvectors and singular vectors are
    only defined up to sign): the result, the eigenvalues, the singular values."""
    if name == "eigh":
        return np.asarray(out[0])
    if name == "svd":
        return np.asarray(out[1])
    return np.asarray(out)


def _jax_functions():
    import jax
    import jax.numpy as jnp
    return {"solve": jax.jit(jnp.linalg.solve), "cholesky": jax.jit(jnp.linalg.cholesky),
            "eigh": jax.jit(jnp.linalg.eigh), "svd": jax.jit(jnp.linalg.svd)}


def _to_numpy(fn):
    """``fn`` followed by ``np.asarray`` of each result (jax's eigh and svd return tuples)."""
    def to_numpy(*args):
        out = fn(*args)
        if isinstance(out, tuple):
            return tuple(np.asarray(item) for item in out)
        return np.asarray(out)
    return to_numpy


def run(sizes, calls: int, repeats: int, names=NAMES, pause: float = 0.2) -> dict:
    import jax
    jax.config.update("jax_enable_x64", True)   # the baseline needs it for float64
    ours = {name: jit_ps(globals()[name]) for name in names}
    on_device = {name: jit_ps(globals()[name], return_device_arrays=True) for name in names}
    plain = {name: getattr(np.linalg, name) for name in names}
    baseline = _jax_functions()
    rows, skipped = [], []
    for name in names:
        if lookup_rule(f"numpy.linalg.{name}") is None:
            skipped.append(name)
            print(f"note: np.linalg.{name} has no translation rule in this build: skipped")
            continue
        for n in sizes:
            args = _inputs(name, n)
            expected = _invariant(name, plain[name](*args))
            for fn in (ours[name], on_device[name], baseline[name]):
                got = _invariant(name, fn(*args))
                np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-8 * n)
            timed = (ours[name], on_device[name], baseline[name], _to_numpy(baseline[name]),
                     plain[name])
            times = best_alternating(timed, args, calls, repeats, pause=pause)
            rows.append((name, n, *(t * 1e3 for t in times)))
    return {"rows": rows, "skipped": skipped, "calls": calls, "repeats": repeats,
            "pause": pause, "backend": jax.default_backend(), "jax_version": jax.__version__,
            "load": os.getloadavg()[0]}


def report(r: dict) -> str:
    lines = [
        HEADER,
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}, jax/jaxlib "
        f"{r['jax_version']}, backend {r['backend']}; load average {r['load']:.1f}.",
        "float64 n × n matrices. Ours: `jit_ps` of a function calling `np.linalg.<name>`, "
        "with NumPy results (the default) and with `return_device_arrays=True` (*device*); "
        "jax: `jax.jit(jax.numpy.linalg.<name>)`, as it returns and followed by `np.asarray` "
        "(*→ NumPy*, the fair comparison for our default); NumPy: the plain call. Best of "
        f"{r['repeats']}×{r['calls']} calls, runs alternating, each after a "
        f"{r['pause']:g} s pause (`--pause`).",
        "",
        "| function | n | ours (ms) | ours, device (ms) | jax.jit (ms) | jax.jit → NumPy (ms) "
        "| NumPy (ms) | ours / jax.jit → NumPy | device / jax.jit | ours / NumPy |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, n, ours, device, jax_ms, jax_np, numpy_ms in r["rows"]:
        lines.append(f"| `{name}` | {n} | {ours:.3f} | {device:.3f} | {jax_ms:.3f} | "
                     f"{jax_np:.3f} | {numpy_ms:.3f} | {ours / jax_np:.2f} | "
                     f"{device / jax_ms:.2f} | {ours / numpy_ms:.2f} |")
    if r["skipped"]:
        lines += ["", "Skipped (no rule in this build): "
                  + ", ".join(f"`np.linalg.{name}`" for name in r["skipped"]) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 512])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--names", nargs="+", choices=NAMES, default=list(NAMES),
                        help="the np.linalg functions to time")
    parser.add_argument("--pause", type=float, default=0.2, metavar="SECONDS",
                        help="sleep before each timed run, so the BLAS/LAPACK and XLA "
                        "thread pools the previous run woke are idle again (0: none)")
    parser.add_argument("--write", metavar="RESULTS_MD")
    args = parser.parse_args()
    section = report(run(args.sizes, args.calls, args.repeats, tuple(args.names),
                         args.pause))
    print(section)
    if args.write:
        write_section(args.write, section)


if __name__ == "__main__":
    main()
