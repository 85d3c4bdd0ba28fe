"""Smoke test of ``benchmarks/table1.py`` (Table 1: truncated Newton-CG) at tiny sizes.

For each problem the three systems (plain Python + autograd on the examples' own source,
hand-written ``jax.jit``, ours) must reach the same final objective with the same number of
Hessian-vector products.  Each problem runs in a subprocess: the ``jax.jit`` baseline turns
on JAX's 64-bit mode globally, which must not leak into the test process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "table1.py")
HEADER = "## Table 1: truncated Newton-CG (`benchmarks/table1.py`)"
SYSTEMS = ("plain", "jax", "ours")

def _run(problem, tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Other section\n\nkept\n")
    measurements = tmp_path / "table1.json"
    args = [sys.executable, SCRIPT, "--sizes", "small", "--problems", problem,
            "--repeats", "2", "--plain-repeats", "1", "--write", str(results),
            "--json", str(measurements)]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    return proc, results.read_text(), (json.loads(measurements.read_text())
                                       if measurements.exists() else None)


@pytest.mark.parametrize("problem", ["quadratic", "logistic", "hmm"])
def test_three_systems_agree_at_small_sizes(problem, tmp_path):
    proc, written, measured = _run(problem, tmp_path)
    output = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert measured is not None, output
    row = measured[problem]
    assert sorted(row) == sorted(SYSTEMS), output
    values = [row[s]["objective"] for s in SYSTEMS]
    scale = max(abs(v) for v in values)
    assert max(values) - min(values) <= 1e-8 * scale, (values, output)
    assert len({row[s]["hvps"] for s in SYSTEMS}) == 1, ({s: row[s]["hvps"]
                                                         for s in SYSTEMS}, output)
    assert proc.returncode == 0, output
    for s in SYSTEMS:
        assert row[s]["steady_s"] > 0 and row[s]["first_s"] > 0
    assert HEADER in proc.stdout
    assert "| problem | plain Python (s) | jax.jit (s) | ours (s) |" in proc.stdout
    assert HEADER in written and "## Other section\n\nkept" in written


def test_plain_baseline_runs_the_examples_source_without_jit():
    """The plain-Python solver is the example's function, undecorated, on autograd.numpy."""
    code = (
        "import sys; sys.path.insert(0, 'benchmarks')\n"
        "import table1_plain, autograd.numpy as anp\n"
        "m = table1_plain.load_all()\n"
        "solver = m['newton_cg'].newton_cg\n"
        "assert type(solver).__name__ == 'function', type(solver)\n"
        "assert solver.__code__.co_filename.endswith('examples/newton_cg.py')\n"
        "assert solver.__globals__['np'] is anp\n"
        "assert m['hmm'].newton_cg is solver and m['quadratic'].np is anp\n"
        "import jax; assert not jax.config.jax_enable_x64\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
