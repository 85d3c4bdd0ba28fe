"""`benchmarks/npbench.py` on a tiny kernel directory laid out as NPBench's.

The real NPBench is not part of the project: these kernels are written here, in its layout
(``bench_info/<name>.json``, ``benchmarks/<path>/<module>.py`` with ``initialize`` and the
``_numpy`` / ``_jax`` versions), so the runner's loading, checking and reporting are tested
without it.  The runner runs each kernel in a subprocess, as it does for NPBench.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "benchmarks", "npbench.py")

KERNELS = {
    # name: (numpy version, jax version, parameters, array args, output args)
    "axpy": ("def kernel(alpha, x, y):\n    return alpha * x + y\n",
             "def kernel(alpha, x, y):\n    return alpha * x + y\n",
             {"N": 8}, ["x", "y"], []),
    "wrong_jax": ("def kernel(alpha, x, y):\n    return (x * y).sum() + alpha\n",
                  "def kernel(alpha, x, y):\n    return (x * y).sum()\n",
                  {"N": 8}, ["x", "y"], []),
    "impure": ("def kernel(alpha, x, y):\n    return x + np.random.rand(*x.shape)\n",
               "def kernel(alpha, x, y):\n    return x\n",
               {"N": 8}, ["x", "y"], []),
}

INIT = """import numpy as np

def initialize(N):
    return 2.0, np.arange(N, dtype=np.float64), np.ones(N)
"""


def make_kernels(root):
    for name, (numpy_src, jax_src, params, arrays, outputs) in KERNELS.items():
        info = {"benchmark": {
            "name": name, "short_name": name, "relative_path": f"group/{name}",
            "module_name": name, "func_name": "kernel",
            "parameters": {"S": params, "M": params},
            "init": {"func_name": "initialize", "input_args": ["N"],
                     "output_args": ["alpha", "x", "y"]},
            "input_args": ["alpha", "x", "y"], "array_args": arrays,
            "output_args": outputs}}
        (root / "bench_info").mkdir(exist_ok=True)
        (root / "bench_info" / f"{name}.json").write_text(json.dumps(info))
        folder = root / "benchmarks" / "group" / name
        folder.mkdir(parents=True)
        (folder / f"{name}.py").write_text(INIT)
        (folder / f"{name}_numpy.py").write_text("import numpy as np\n\n" + numpy_src)
        (folder / f"{name}_jax.py").write_text("import jax.numpy as jnp\n\n" + jax_src)


def test_runner_reports_each_kernel(tmp_path):
    make_kernels(tmp_path)
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Other section\n\nkept\n")
    proc = subprocess.run(
        [sys.executable, RUNNER, "--kernels", str(tmp_path), "--frameworks", "numpy", "psc",
         "jax", "--budget", "0", "--most", "3", "--write", str(results),
         "--plot", str(tmp_path / "npbench.png")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    written = results.read_text()
    assert "## Other section\n\nkept" in written
    assert written.count("## NPBench, preset S (`benchmarks/npbench.py`)") == 1
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in written.splitlines() if line.startswith("| ") and "kernel" not in line}
    assert rows["axpy"][4] == "ok"
    assert rows["wrong_jax"][4] == "ok" and rows["wrong_jax"][6] == "–"   # jax differs
    assert rows["impure"][4] == "error"
    assert "impure: PSCImpureCallError" in written
    assert "2 of 3 kernels run under `jit_ps` and match NumPy" in written
    assert (tmp_path / "npbench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
