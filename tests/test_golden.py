"""Golden generated modules: `psc-transpile examples` reproduces the committed files.

A failing test here means the generated code changed.  Regenerate with
``psc-transpile examples -o examples/__psc__``, read the diff, and commit it with the
change that caused it.
"""
from __future__ import annotations

import pathlib

import pytest

from transpiler.cli import main, transpile_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = sorted((EXAMPLES / "__psc__").glob("*_psc.py"))


def test_there_are_golden_modules_for_the_paper_examples():
    names = {p.name for p in GOLDEN}
    assert {"mlp_psc.py", "selu_layer_psc.py"} <= names


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
    finally:
        sys.path.remove(str(EXAMPLES))
