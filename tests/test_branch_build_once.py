"""A traced ``if`` builds each branch once (issue: nested traced ``if``s took time
exponential in their depth, each branch being built twice: a probe, then for real).

Counted, not timed: generated code calls ``psc.if_stmt`` with one function per branch,
and the test counts how often those functions run.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import runtime
from transpiler import jit_ps

from conftest import assert_same


def _nested_ifs_source(depth: int) -> str:
    """``depth`` traced ifs nested in each other's true branch, each with an else; the
    innermost adds to ``y``, so every level carries it out of both branches."""
    def block(d: int, indent: str) -> list[str]:
        if d == depth:
            return [f"{indent}y = y + 1.5"]
        return [f"{indent}if x[{d % 3}] > {d * 0.05}:",
                f"{indent}    x = x + {d + 1}.0",
                *block(d + 1, indent + "    "),
                f"{indent}else:",
                f"{indent}    x = x * {d + 2}"]
    lines = ["def nested(x):", "    y = 0.0", *block(0, "    "), "    return x, y"]
    return "\n".join(lines) + "\n"


def _load(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def branch_builds(monkeypatch):
    """Which branch functions generated code hands to ``psc.if_stmt`` ran, in order
    (0: the if branch, 1: the else branch)."""
    calls = []
    original = runtime.if_stmt

    def counted(index, fn):
        def branch(*state):
            calls.append(index)
            return fn(*state)
        return branch

    def if_stmt(test, true_fn, false_fn, state, names):
        return original(test, counted(0, true_fn), counted(1, false_fn), state, names)
    monkeypatch.setattr(runtime, "if_stmt", if_stmt)
    return calls


@pytest.mark.parametrize("depth", [1, 3, 8, 14])
def test_nested_traced_ifs_build_each_branch_once(tmp_path, branch_builds, depth):
    module = _load(tmp_path, f"nested_{depth}", _nested_ifs_source(depth))
    f = jit_ps(module.nested)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 2.0, 3.0]), np.zeros(3)):
        assert_same(f(x), module.nested(x))
    assert len(branch_builds) == 2 * depth   # one signature: each if's two branches, once


def test_branch_results_unify_after_one_build(tmp_path, branch_builds):
    """The types unify from the single build of each branch: a Python number carried out
    of one branch adopts the array dtype the other branch gives (the documented rule for
    branches, where Python's result type would depend on the path taken)."""
    module = _load(tmp_path, "unify_once", (
        "import numpy as np\n\n\n"
        "def f(x):\n"
        "    acc = 0.0\n"
        "    if x.sum() > 0:\n"
        "        acc = x[0] * np.float32(2)\n"
        "    else:\n"
        "        acc = acc + 1\n"
        "    return acc\n"))
    f = jit_ps(module.f)
    for x in (np.ones(2, np.float32), -np.ones(2, np.float32)):
        result = f(x)
        assert result.dtype == np.float32
        np.testing.assert_allclose(np.asarray(result), module.f(x))
    assert branch_builds == [0, 1]
