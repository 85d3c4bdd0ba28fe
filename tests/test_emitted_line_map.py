"""The emitter's line map (`emit.emit_mapped_module`) is what `emit.line_map` reads back
from the comments of the text it printed (the oracle), for every function of the corpora,
one module per function and one per file."""
from __future__ import annotations

import pathlib

import gast
import pytest

from emit import line_map
from runtime.errors import PSCError
from transpiler.pipeline import generated_mapped_module, transpile_function
from transpiler.source import module_function_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS_FILES = sorted([
    ROOT / "tests" / "corpus" / "straightline.py",
    ROOT / "tests" / "cf_corpus" / "functions.py",
    ROOT / "tests" / "ad_corpus" / "functions.py",
    *(ROOT / "tests" / "golden" / "sources").glob("*.py"),
])


def _transpiled(path):
    text = path.read_text()
    module = gast.parse(text)
    for _, source in module_function_sources(str(path), text, module):
        try:
            yield transpile_function(source, module_ast=module, module_name="corpus")
        except PSCError:
            continue


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_emitted_line_map_is_what_the_comments_say(path):
    functions = list(_transpiled(path))
    assert functions
    for group in [[f] for f in functions] + [functions]:
        emitted = generated_mapped_module(str(path), group)
        assert emitted.line_map == line_map(emitted.text)
        assert emitted.line_map   # every statement has its comment


def test_an_unreadable_file_name_gives_no_line_map():
    path = ROOT / "tests" / "corpus" / "straightline.py"
    function = next(_transpiled(path))
    function.source = type(function.source)("dir/my file.py", function.source.first_line,
                                            function.source.text, function.source.indent)
    emitted = generated_mapped_module("dir/my file.py", [function])
    assert emitted.line_map is None and line_map(emitted.text) == {}
