"""Running a file of test cases on 8 simulated CPU devices, in a child process.

jax fixes the CPU device count when it starts its client, and the rest of the suite has
started it with one; a cases file (named so that the suite does not collect it) runs once,
in a child pytest with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``, and
`child_outcomes` reads its report back, one entry per case, for a test of its own each
(`tests/test_placement.py`, `test_spmd.py`, `test_pmap.py`, `test_collectives.py`,
`test_iterated_map_reduce.py`).
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
COUNT = 8


def case_names(module) -> list:
    return sorted(name for name in vars(module) if name.startswith("test_"))


def child_outcomes(cases_file, report_dir) -> dict:
    """``{case name: None if it passed, else its failure text}`` from one child run."""
    report = pathlib.Path(report_dir) / "report.xml"
    flags = os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={COUNT}"
    env = dict(os.environ, XLA_FLAGS=flags.strip(),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(cases_file), "-q", "-p", "no:cacheprovider",
         "-o", "addopts=", f"--junitxml={report}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if not report.exists():
        pytest.fail(f"the child run wrote no report:\n{proc.stdout}\n{proc.stderr}")
    found = {}
    for case in ElementTree.parse(report).iter("testcase"):
        problems = [p for p in case if p.tag in ("failure", "error", "skipped")]
        name = case.get("name").split("[")[0]   # parametrized cases: one entry for all
        text = "\n".join(f"{case.get('name')}: {p.get('message')}\n{p.text}"
                         for p in problems) or None
        found[name] = found.get(name) or text
    return found


def check_outcome(outcomes: dict, name: str) -> None:
    assert name in outcomes, f"{name} did not run in the child"
    if outcomes[name] is not None:
        pytest.fail(outcomes[name], pytrace=False)
