"""The benchmark scripts run end to end at tiny sizes and print their sections.

Each runs in a subprocess (``dispatch.py`` turns on jax's 64-bit mode globally, which must
not leak into the test process), writing to a temporary RESULTS file and PNG, never to
``benchmarks/RESULTS.md``.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
REAL_RESULTS = os.path.join(BENCHMARKS, "RESULTS.md")

CASES = {
    "dispatch": (["--calls", "20", "--repeats", "1", "--sweep-max-bytes", str(64 << 10)],
                 "## Dispatch overhead (`benchmarks/dispatch.py`)"),
    "selu_fusion": (["--batch", "8", "--features", "16", "--calls", "2", "--repeats", "1"],
                    "## SeLU fusion (`benchmarks/selu_fusion.py`)"),
    "compile_latency": (["--sizes", "small"],
                        "## Compile latency (`benchmarks/compile_latency.py`)"),
    # issue 15: ours, jax.jit and (when installed) TensorFlow on a tiny All-CNN-C step
    "allconv": (["--batch", "2", "--width", "4", "--trials", "1", "--steps", "1"],
                "## All-CNN-C training step (`benchmarks/allconv.py`)"),
}
CASES["vmap"] = (["--n", "64", "--d", "8", "--calls", "2", "--repeats", "1"],   # issue 12: vmap
                 "## Per-example gradients (`benchmarks/vmap.py`)")
CASES["linalg"] = (["--sizes", "8", "--calls", "2", "--repeats", "1", "--pause", "0"],   # issue 13
                   "## Dense linear algebra (`benchmarks/linalg.py`)")
CASES["loops"] = (["--sizes", "small", "--calls", "1", "--repeats", "1",   # issue 16: loops
                   "--python-repeats", "1"], "## Loops (`benchmarks/loops.py`)")

CASES["scaling"] = (["--devices", "1,2", "--global-batch", "64", "--per-device-batch", "16",
                     "--features", "8", "--calls", "2", "--repeats", "1"],   # issue 14: SPMD
                    "## Scaling: data-parallel training step (`benchmarks/scaling.py`)")


def _installed(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def _snapshot(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_benchmark_runs(name, tmp_path):
    extra, header = CASES[name]
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Other section\n\nkept\n")
    args = [sys.executable, os.path.join(BENCHMARKS, f"{name}.py"), *extra,
            "--write", str(results)]
    if name == "compile_latency":
        args += ["--png", str(tmp_path / "compile_latency.png")]
    before = _snapshot(REAL_RESULTS)
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert header in proc.stdout
    written = results.read_text()
    assert header in written and "## Other section\n\nkept" in written
    assert written.count(header) == 1
    assert _snapshot(REAL_RESULTS) == before, "the real RESULTS.md was modified"
    if name == "compile_latency":
        png = tmp_path / "compile_latency.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "![compile latency against program size](compile_latency.png)" in written
    if name == "dispatch":   # the input size sweep, up to the size asked for
        assert "### Input size sweep" in written and "| 64 KiB |" in written
        assert "MiB |" not in written
    if name == "selu_fusion":
        assert "dot fused with bias add + SeLU?" in proc.stdout
    if name == "allconv":   # ours and jax.jit ran (and agreed: the script checks that)
        assert "| ours (`jit_ps`) | jax.jit |" in proc.stdout
        assert "| step time / jax.jit |" in proc.stdout
    if name == "scaling":   # both pairs, strong and weak, at both counts; one all-reduce
        assert written.count("| 2 | ") == 4 and "| all-reduce 1 | all-reduce 1 |" in written
        assert "**spmd, strong scaling" in written and "**pmap, weak scaling" in written
        assert "| all-reduce 2 |" not in written   # psum(1, axis) folds to the axis size
    if name == "loops":   # every program ran (and agreed with plain Python: the script checks)
        for program in ("max_drawdown", "mandelbrot", "viterbi", "gauss_seidel", "kmeans",
                        "particles"):
            assert f"| `{program}` |" in written
        if _installed("numba"):
            assert "| Numba (`njit`) (ms) |" in written
        else:   # without Numba: a note, and no Numba column
            assert "numba not installed" in proc.stdout and "Numba (`njit`)" not in written
