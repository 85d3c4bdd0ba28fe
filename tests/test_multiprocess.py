"""Multiple processes (issue 14, item 5): two local CPU processes joined by
``jax.distributed.initialize`` (coordinator on 127.0.0.1, a free port) run the same
data-parallel script (`tests/multiprocess_worker.py`) over a global mesh of both
processes' devices, and agree on the result, which equals the plain NumPy run of the same
steps on the whole batch; and README's own commands for it run as written.
Cross-process collectives on CPU use gloo (jax 0.10.2's default
``jax_cpu_collectives_implementation``).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import socket
import subprocess
import sys

import numpy as np
import pytest

import multiprocess_worker as worker

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKER = pathlib.Path(worker.__file__)
LOCAL_DEVICES = 2   # per process: a global mesh of 4 devices
TIMEOUT_S = 240


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_processes(tmp_path, n: int = 2) -> list[dict]:
    """Start ``n`` workers, wait for all (bounded), and return their reports; a worker
    that fails or hangs fails the test with every worker's output."""
    coordinator = f"127.0.0.1:{free_port()}"
    flags = (os.environ.get("XLA_FLAGS", "") +
             f" --xla_force_host_platform_device_count={LOCAL_DEVICES}").strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    outs = [tmp_path / f"process{i}.json" for i in range(n)]
    procs = [subprocess.Popen([sys.executable, str(WORKER), coordinator, str(n), str(i),
                               str(outs[i])], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for i in range(n)]
    logs = []
    try:
        for proc in procs:
            logs.append(proc.communicate(timeout=TIMEOUT_S)[0])
    except subprocess.TimeoutExpired:
        for proc in procs:
            proc.kill()
        logs = [proc.communicate()[0] for proc in procs]
        pytest.fail(f"the processes did not finish in {TIMEOUT_S} s:\n" + _joined(logs))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    if any(proc.returncode for proc in procs) or not all(out.exists() for out in outs):
        codes = [proc.returncode for proc in procs]
        pytest.fail(f"a process failed (exit codes {codes}):\n" + _joined(logs))
    return [json.loads(out.read_text()) for out in outs]


def _joined(logs) -> str:
    return "\n".join(f"--- process {i} ---\n{log[-4000:]}" for i, log in enumerate(logs))


def numpy_oracle():
    """The same steps run as plain NumPy on the whole batch, in one process."""
    w, x, y = worker.batch()
    losses = []
    for _ in range(worker.STEPS):
        w, loss = worker.logistic_step(w, x, y)
        losses.append(float(loss))
    return w, losses


def test_two_processes_agree_with_numpy(tmp_path):
    reports = run_processes(tmp_path)
    expected_w, expected_losses = numpy_oracle()
    assert [r["process_index"] for r in reports] == [0, 1]
    for report in reports:
        assert report["global_devices"] == 2 * LOCAL_DEVICES
        assert report["local_devices"] == LOCAL_DEVICES
        assert report["dtype"] == "float64" and report["all_reduce"]
        for shard in report["w"]:   # every local copy of the replicated weights
            np.testing.assert_allclose(shard, expected_w, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(report["losses"], expected_losses, rtol=1e-12)
    assert reports[0]["w"] == reports[1]["w"] and reports[0]["losses"] == reports[1]["losses"]


def test_the_readme_commands(tmp_path):
    """README's "Scaling beyond one machine": its ``train.py``, run as its commands say
    (the coordinator's port replaced by a free one), prints the same weights in both
    processes: one step of the plain NumPy computation."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Scaling beyond one machine"):]
    code = re.search(r"```python\n(# train\.py.*?)```", section, re.S).group(1)
    commands = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    (tmp_path / "train.py").write_text(code, encoding="utf-8")
    exports = re.search(r"export (.*)", commands).group(1).split()
    env = dict(os.environ, PYTHONPATH=str(ROOT), **dict(e.split("=", 1) for e in exports))
    runs = re.findall(r"\.venv/bin/python train\.py (\S+) (\d) (\d)", commands)
    assert len(runs) == 2, commands
    address = f"127.0.0.1:{free_port()}"
    procs = [subprocess.Popen([sys.executable, "train.py", address, n, i], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _, n, i in runs]
    try:
        outputs = [proc.communicate(timeout=TIMEOUT_S) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert all(proc.returncode == 0 for proc in procs), _joined([o + e for o, e in outputs])
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 5)), (rng.uniform(size=64) < 0.5) * 1.0
    expected = -0.5 * x.T @ (0.5 - y) / 64   # one step from w = 0: sigmoid(0) = 0.5
    for index, (out, _) in enumerate(outputs):
        found = re.findall(rf"^{index} \[([^\]]*)\]", out, re.M)   # (gloo logs too)
        assert len(found) == 1, out
        printed = [float(v) for v in found[0].split()]
        np.testing.assert_allclose(printed, expected, rtol=1e-6, atol=1e-8)
