"""Golden generated modules: `psc-transpile examples` reproduces the committed files.

A failing test here means the generated code changed.  Regenerate with
``psc-transpile examples -o examples/__psc__``, read the diff, and commit it with the
change that caused it.
"""
from __future__ import annotations

import copy
import pathlib

import numpy as np
import pytest

from transpiler.cli import main, transpile_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = sorted((EXAMPLES / "__psc__").glob("*_psc.py"))


def test_there_are_golden_modules_for_the_paper_examples():
    names = {p.name for p in GOLDEN}
    assert {"mlp_psc.py", "selu_layer_psc.py", "newton_cg_psc.py",
            "power_iteration_psc.py"} <= names


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda p: p.name)
def test_generated_module_matches_golden_file(golden):
    source = EXAMPLES / golden.name.replace("_psc.py", ".py")
    assert transpile_file(str(source)) == golden.read_text()


def test_cli_check_passes_on_committed_modules(capsys):
    assert main([str(EXAMPLES), "-o", str(EXAMPLES / "__psc__"), "--check"]) == 0


def test_examples_use_the_committed_modules():
    import importlib
    import sys
    sys.path.insert(0, str(EXAMPLES))
    try:
        mlp = importlib.import_module("mlp")
        assert mlp.predict._generated.from_disk and mlp.loss._generated.from_disk
        assert mlp.predict.generated_source == (EXAMPLES / "__psc__" / "mlp_psc.py").read_text()
        # the function form (`compiled = jit_ps(power_iteration, ...)`) too
        power_iteration = importlib.import_module("power_iteration")
        assert power_iteration.compiled._generated.from_disk
        # and a helper's build function (selu, called by dense_selu) comes from the module
        from transpiler.api import _helpers
        selu_layer = importlib.import_module("selu_layer")
        x = np.linspace(-2.0, 2.0, 6).reshape(2, 3)
        W, b = np.eye(3), np.zeros(3)
        np.testing.assert_allclose(np.asarray(selu_layer.dense_selu(W, b, x)),
                                   selu_layer.selu(x), rtol=1e-12)
        assert _helpers[selu_layer.selu].from_disk
    finally:
        sys.path.remove(str(EXAMPLES))


# --- one golden module per control-flow construct ------------------------------------------

CONSTRUCTS = ROOT / "tests" / "golden"
CONSTRUCT_SOURCES = sorted((CONSTRUCTS / "sources").glob("*.py"))


@pytest.mark.parametrize("source", CONSTRUCT_SOURCES, ids=lambda p: p.stem)
def test_construct_golden_file(source):
    golden = CONSTRUCTS / "generated" / f"{source.stem}_psc.py"
    assert transpile_file(str(source)) == golden.read_text()


CONSTRUCT_INPUTS = {
    "halve_until_small": [(np.array([3.0, -8.0]),), (np.array([0.25]),)],
    "power_iteration": [(np.diag([3.0, 1.0, 0.5]), np.ones(3), 20)],
    "prefix_sum": [(np.arange(5.0), 3), (np.arange(5.0, dtype=np.float32), 1)],
    "positive_rows": [(np.array([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.5]]),)],
    "leaky": [(np.array([1.0, 2.0]), 0.1), (np.array([-0.2, 0.1]), 0.1),
              (np.array([-3.0, 1.0]), 0.1)],
    "sum_until_negative": [(np.array([1.0, np.nan, 2.0, -1.0, 5.0]),), (np.arange(3.0),)],
    "first_above": [(np.array([1.0, 5.0, 3.0]), 2.0), (np.array([1.0, 1.0]), 2.0)],
    "in_band": [(np.array([1.0, 2.0]), 0.0, 3.0), (np.array([1.0, np.nan]), 0.0, 3.0),
                (np.array([5.0]), 0.0, 3.0)],
    "newton_sqrt": [(np.array([2.0, 9.0]),)],
    "smooth_steps": [(np.array([1.0, 4.0, -2.0, 3.0, 0.5]), np.zeros(()), 0.5)],
}


@pytest.mark.parametrize("source", CONSTRUCT_SOURCES, ids=lambda p: p.stem)
def test_construct_runs_like_python(source):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"golden_{source.stem}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    functions = [v for v in vars(module).values() if hasattr(v, "__psc_build__")]
    assert functions
    for f in functions:
        assert f._generated.from_disk is False   # generated_dir is not next to the source
        for args in CONSTRUCT_INPUTS[f.__name__]:
            copies = copy.deepcopy(args)   # for functions that update their arguments
            expected = f.__wrapped__(*args)
            actual = f(*copies)
            for a, e in zip(copies, args):
                np.testing.assert_allclose(np.asarray(a), e, rtol=1e-12)
            if not isinstance(expected, tuple):
                expected, actual = (expected,), (actual,)
            for a, e in zip(actual, expected):
                np.testing.assert_allclose(np.asarray(a), e, rtol=1e-12)
                assert np.asarray(a).dtype == np.asarray(e).dtype or isinstance(e, (int, float))


# --- both forms of a traced `if`: StableHLO with and without if-conversion ------------------

IF_CONVERSION_GOLDEN = {   # construct -> (function, arguments it is lowered for)
    "if_else": ("leaky", (np.array([1.0, 2.0]), 0.1)),
    "break_continue": ("sum_until_negative", (np.arange(3.0),)),
}


def _lowered(stem: str, converted: bool) -> str:
    import importlib.util
    import re

    from transpiler import jit_ps
    source = CONSTRUCTS / "sources" / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(f"golden_hlo_{stem}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    name, args = IF_CONVERSION_GOLDEN[stem]
    compiled = jit_ps(getattr(module, name).__wrapped__, if_conversion=converted)
    # locations name the source file by its path on this machine: keep its name only
    return re.sub(r'loc\("[^"]*/([^"/]+)"', r'loc("\1"', compiled.lower(*args))


@pytest.mark.parametrize("converted", [True, False], ids=["selects", "conditionals"])
@pytest.mark.parametrize("stem", sorted(IF_CONVERSION_GOLDEN))
def test_if_conversion_golden_stablehlo(stem, converted):
    """Regenerate with ``PSC_REGENERATE_GOLDEN=1 pytest tests/test_golden.py -k stablehlo``
    and review the diff."""
    import os
    text = _lowered(stem, converted)
    golden = CONSTRUCTS / "stablehlo" / f"{stem}_{'selects' if converted else 'cases'}.mlir"
    if os.environ.get("PSC_REGENERATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()
    assert ("stablehlo.case" in text) is not converted
