"""SPMD (issue 14, item 4): ``jit_ps(in_shardings=, out_shardings=)`` with jax's sharding
classes and ``with_sharding_constraint``, partitioned by XLA over a mesh of devices.

The cases need 8 devices, and jax fixes the CPU device count when it starts its client
(the rest of the suite has started it with one): `tests/spmd_cases.py` holds them and runs
once, in a child process with ``--xla_force_host_platform_device_count=8``; each case is
reported here as a test of its own.  Mistakes that need no second device are checked here.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import spmd_cases
from conftest import assert_same
from transpiler import PSCValueError, jit_ps, with_sharding_constraint

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES_FILE = pathlib.Path(spmd_cases.__file__)
CASES = sorted(name for name in vars(spmd_cases) if name.startswith("test_"))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """``{case name: None if it passed, else its failure text}`` from one child run."""
    report = tmp_path_factory.mktemp("spmd") / "report.xml"
    flags = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    env = dict(os.environ, XLA_FLAGS=flags.strip(),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(CASES_FILE), "-q", "-p", "no:cacheprovider",
         "-o", "addopts=", f"--junitxml={report}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
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


@pytest.mark.parametrize("name", CASES)
def test_on_eight_devices(outcomes, name):
    assert name in outcomes, f"{name} did not run in the child"
    if outcomes[name] is not None:
        pytest.fail(outcomes[name], pytrace=False)


def one_device_mesh():
    return Mesh(np.array(jax.devices()[:1]), ("batch",))


def test_a_one_device_mesh_runs_and_returns_sharded_jax_arrays():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch"))
    w, x, y = spmd_cases.data(np.random.default_rng(5))
    step = jit_ps(spmd_cases.logistic_step, in_shardings=(None, rows, rows))
    new_w, loss = step(w, x, y)
    assert isinstance(new_w, jax.Array) and new_w.sharding.mesh == rows.mesh
    assert_same((np.asarray(new_w), np.asarray(loss)), spmd_cases.logistic_step(w, x, y),
                rtol=1e-12)


def test_a_constraint_on_a_one_device_mesh_is_the_identity():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch"))
    f = jit_ps(lambda x: with_sharding_constraint(x * 2.0, rows))
    assert_same(f(np.arange(4.0)), np.arange(4.0) * 2.0)
    assert "sharding" not in f.lower(np.arange(4.0))


def test_a_constraint_outside_a_program_puts_the_array():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch"))
    put = with_sharding_constraint(np.arange(4.0), rows)
    assert put.sharding == rows and put.dtype == np.float64


def test_a_constraint_of_the_wrong_rank_is_an_error_at_its_line():
    rows = NamedSharding(one_device_mesh(), PartitionSpec("batch", None))
    f = jit_ps(lambda x: with_sharding_constraint(x, rows))
    with pytest.raises(PSCValueError, match="rank 1") as info:
        f(np.arange(4.0))
    assert info.value.location.file == __file__
