"""No user input aborts the process.

Each case is a PSC function a user could write — huge shapes, shapes whose element count
overflows int64, negative dimensions, reshapes to impossible shapes, a 10^4-line function,
``if`` nested as deep as Python parses, nested loops, expressions nested 1000 deep — run in
a child process (an abort inside XLA's C++ would otherwise take pytest with it).  Each
must end normally: either its result equals plain Python + NumPy's, or it raises a
Python exception — a `PSCError`, or (for a static computation NumPy itself refuses) the
very exception NumPy raises — never SIGABRT/SIGSEGV, never a C++ message on stderr.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import select
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASE_TIMEOUT_S = 240


def _nested_ifs(depth):
    lines = []
    for d in range(depth):
        lines += ["    " * d + f"if x.sum() > {d - depth // 2}.25:", "    " * (d + 1) + "x = x + 1.0"]
    return lines


def _nested_fors(depth):
    lines = []
    for d in range(depth):
        lines += ["    " * d + f"for i{d} in range(2):", "    " * (d + 1) + "x = x * 0.5 + 1.0"]
    return lines + ["    " * depth + "if x.sum() > 4.25:", "    " * (depth + 1) + "break"]


def _nested_whiles(depth):
    lines = []
    for d in range(depth):
        lines += ["    " * d + f"w{d} = 0", "    " * d + f"while w{d} < 2 and x.sum() < 1e6:",
                  "    " * (d + 1) + f"w{d} += 1", "    " * (d + 1) + "x = x + 1.0"]
    return lines


# name: (body lines, argument expression).  Depths: Python's tokenizer refuses more than
# 100 indentation levels (the def's body is one) and its compiler more than 20 nested
# loops; PSC's build time grows steeply with loop nesting (see the report in the fuzz
# section of benchmarks/RESULTS.md), so the loop cases stay moderate.
CASES = {
    "zeros_2_40_squared": (["return np.zeros((2**40, 2**40)) + x"], "np.ones(3)"),
    "ones_2_40_summed": (["return np.ones(2**40).sum() + x"], "np.ones(3)"),
    "shape_product_overflows": (["return np.ones((2**32, 2**32)).sum() + x"], "np.ones(3)"),
    "empty_product_overflows": (["return np.empty((2**62, 2**62, 4)) + x"], "np.ones(3)"),
    "negative_dimension": (["return np.zeros((-1, 3)) + x"], "np.ones(3)"),
    "negative_dimension_from_traced_shape": (["return np.zeros(x.shape[0] - 10) + x.sum()"],
                                             "np.ones(3)"),
    "reshape_to_overflow": (["return x.reshape(2**62, 2**62)"], "np.ones(3)"),
    "reshape_minus_one_overflow": (["return x.reshape(-1, 2**62, 2**62)"], "np.ones(3)"),
    "reshape_negative": (["return x.reshape(-3)"], "np.ones(3)"),
    "broadcast_to_overflow": (["return np.broadcast_to(x, (2**62, 2**62, 3)).sum()"],
                              "np.ones(3)"),
    "broadcast_huge_then_reshape": (["return np.broadcast_to(x, (2**40,)).reshape(2**20, 2**20)"],
                                    "np.ones(1)"),
    "full_traced_huge": (["return np.full((2**41,), x.sum())"], "np.ones(3)"),
    "tile_overflow": (["return np.tile(x, 2**62)"], "np.ones(3)"),
    "arange_huge": (["return np.arange(2**62) * x[0]"], "np.ones(3)"),
    "eye_huge": (["return np.eye(2**40) * x[0]"], "np.ones(3)"),
    "outer_huge": (["return np.outer(np.broadcast_to(x, (2**40,)), "
                    "np.broadcast_to(x, (2**40,))).sum()"], "np.ones(1)"),
    "index_far_out_of_range": (["return x[2**62]"], "np.ones(3)"),
    "lines_10000": ([f"x = x + {i % 7}.0" for i in range(10_000)] + ["return x"],
                    "np.ones(3)"),
    "if_nested_98_deep": (_nested_ifs(98) + ["return x"], "np.ones(3)"),
    "for_nested_8_deep_with_break": (_nested_fors(8) + ["return x"], "np.ones(3)"),
    "while_nested_6_deep": (_nested_whiles(6) + ["return x"], "np.ones(3)"),
    "negations_1000": (["return " + "-" * 1000 + "x"], "np.ones(3)"),
    "sum_1000_terms": (["return " + " + ".join(["x"] * 1000)], "np.ones(3)"),
    "parentheses_190_deep": (["return " + "(" * 190 + "x" + " * 1.0)" * 190], "np.ones(3)"),
}

CHILD = """\
import json, sys, traceback
import numpy as np
from runtime.errors import PSCError
from transpiler import jit_ps
sys.path.insert(0, {tests!r})
from conftest import assert_same
sys.path.insert(0, {folder!r})

for name in sys.argv[1:]:
    print(json.dumps({{"start": name}}), flush=True)
    module = __import__(name)
    fn, arg = module.f, module.ARG
    try:
        expected, python_error = fn(arg), None
    except Exception as err:
        expected, python_error = None, err
    report = {{"name": name, "python": type(python_error).__name__ if python_error else None}}
    try:
        actual = jit_ps(fn)(arg)
        report["psc"] = "ok"
        if python_error is None:
            assert_same(actual, expected)
            report["same"] = True
    except PSCError as err:
        report["psc"] = "PSCError"
        report["message"] = str(err)[:2000]
    except AssertionError as err:
        report["same"] = False
        report["message"] = str(err)[:2000]
    except Exception as err:
        report["psc"] = type(err).__name__
        report["message"] = "".join(traceback.format_exception(err))[-3000:]
    print(json.dumps(report), flush=True)
"""

# What may appear on a child's stderr (warnings Python or jax print); anything else, such
# as a C++ check failure or "Fatal Python error", fails the case.
BENIGN_STDERR = ("Warning", "warn(", "  warnings.warn", "UserWarning", "RuntimeWarning")


def _write_cases(folder: pathlib.Path):
    for name, (body, arg) in CASES.items():
        text = "import numpy as np\n\nARG = " + arg + "\n\n\ndef f(x):\n" + "".join(
            "    " + line + "\n" for line in body)
        (folder / f"{name}.py").write_text(text)
    (folder / "child.py").write_text(CHILD.format(tests=str(ROOT / "tests"),
                                                  folder=str(folder)))


def _run(folder, names):
    """Run ``names`` in one child; returns (reports by name, the case it died in, rc,
    stderr).  A case past `CASE_TIMEOUT_S` kills the child."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PSC_TRACEBACK="full")
    child = subprocess.Popen([sys.executable, str(folder / "child.py"), *names],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=folder)
    reports, current, deadline = {}, None, time.monotonic() + CASE_TIMEOUT_S
    while True:
        ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            child.kill()
            reports[current] = {"name": current, "psc": "timeout"}
            break
        line = child.stdout.readline()
        if not line:
            break
        record = json.loads(line)
        if "start" in record:
            current, deadline = record["start"], time.monotonic() + CASE_TIMEOUT_S
        else:
            reports[record["name"]] = record
            current = None
    child.wait()
    return reports, current, child.returncode, child.stderr.read()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every case's report; a child that dies is restarted after its case, so one abort
    cannot hide the others."""
    folder = tmp_path_factory.mktemp("abort_safety")
    _write_cases(folder)
    # two children at once (the two slowest cases in different ones): half the wall time
    names = sorted(CASES, key=lambda n: n not in ("lines_10000", "if_nested_98_deep"))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        halves = pool.map(lambda half: _run_all(folder, half), (names[0::2], names[1::2]))
        return {name: report for half in halves for name, report in half.items()}


def _run_all(folder, names):
    remaining, results = list(names), {}
    while remaining:
        reports, died_in, rc, stderr = _run(folder, remaining)
        for name, report in reports.items():
            results[name] = dict(report, rc=rc, stderr=stderr)
        if died_in is not None and died_in not in results:
            results[died_in] = {"name": died_in, "psc": "died", "rc": rc, "stderr": stderr}
        remaining = [n for n in remaining if n not in results]
        if rc == 0 and remaining:          # ended normally without running them: a bug
            for name in remaining:
                results[name] = {"name": name, "psc": "not run", "rc": rc, "stderr": stderr}
            break
    return results


def _unexpected_stderr(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()
            and not any(mark in line for mark in BENIGN_STDERR)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_user_input_never_aborts_the_process(outcomes, name):
    report = outcomes[name]
    assert report["psc"] not in ("died", "timeout", "not run"), (
        f"{name}: {report['psc']}, returncode {report['rc']}\n{report['stderr'][-3000:]}")
    assert report["rc"] == 0, report["stderr"][-3000:]
    assert not _unexpected_stderr(report["stderr"]), report["stderr"][-3000:]
    if report["psc"] == "ok":
        # it worked: then plain Python must have worked too, with the same result
        assert report["python"] in (None, "MemoryError"), report
        if report["python"] is None:
            assert report.get("same") is True, report
    elif report["psc"] != "PSCError":
        # not a PSCError: only NumPy's own exception for a static computation it refuses
        assert report["psc"] == report["python"], report
