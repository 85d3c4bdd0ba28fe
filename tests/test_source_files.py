"""The per-file caches (`transpiler.file_outline`): a module's imports
(`transpiler.loading.module_imports_of`) and a module-level function's source
(`transpiler.source.function_source`), reused while the file is unchanged, read again
after an edit; the source is what `inspect.getsourcelines` finds."""
from __future__ import annotations

import importlib
import inspect
import os
import pathlib
import textwrap
import types

import pytest

from transpiler.loading import module_imports_of
from transpiler.source import FunctionSource, _module_level_source, function_source

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _bound(module) -> list[str]:
    return [alias.asname or alias.name for node in module.body for alias in node.names]


def _write(path, text: str, mtime_ns: int) -> None:
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_only_top_level_imports_are_kept(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import numpy as np\nfrom math import pi\n\n\ndef f(x):\n"
                    "    import os\n    return np.sin(x) * pi\n")
    assert _bound(module_imports_of(str(path))) == ["np", "pi"]


def test_an_unchanged_file_is_parsed_once(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import numpy as np\n")
    assert module_imports_of(str(path)) is module_imports_of(str(path))


def test_an_edit_is_seen_by_its_time_or_its_size(tmp_path):
    path = tmp_path / "mod.py"
    start = os.stat(tmp_path).st_mtime_ns
    _write(path, "import numpy as np\n", start)
    assert _bound(module_imports_of(str(path))) == ["np"]
    _write(path, "import numpy as xp\n", start + 10**9)          # same size, newer
    assert _bound(module_imports_of(str(path))) == ["xp"]
    _write(path, "import numpy as xp\nimport math\n", start + 10**9)   # same time, longer
    assert _bound(module_imports_of(str(path))) == ["xp", "math"]


def test_a_missing_or_broken_file_gives_none(tmp_path):
    assert module_imports_of(str(tmp_path / "missing.py")) is None
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    assert module_imports_of(str(broken)) is None


# --- a function's source, from the outline or from inspect ---------------------------------

def _by_inspect(fn) -> FunctionSource:
    lines, first_line = inspect.getsourcelines(fn.__code__)
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    return FunctionSource(inspect.getsourcefile(fn.__code__), first_line, dedented, indent)


def _functions(namespace: dict) -> list:
    return [value for value in namespace.values() if isinstance(value, types.FunctionType)]


def _load(path, text: str) -> dict:
    """Run ``text`` as the file at ``path`` (its functions' code names that file)."""
    path.write_text(text)
    namespace = {"__name__": "loaded"}
    exec(compile(text, str(path), "exec"), namespace)
    return namespace


CORPORA = ["corpus.straightline", "cf_corpus.functions", "cf_corpus.illegal",
           "ad_corpus.functions", "fixtures.api_funcs"]


@pytest.mark.parametrize("module_name", CORPORA)
def test_module_level_sources_are_what_inspect_finds(module_name):
    module = importlib.import_module(module_name)
    checked = 0
    for fn in _functions(vars(module)):
        if fn.__module__ == module_name and fn.__code__.co_name != "<lambda>":
            found = _module_level_source(fn.__code__)
            if fn.__qualname__ == fn.__name__:
                assert found == _by_inspect(fn), fn.__name__
                checked += 1
            else:
                assert found is None
    assert checked > 0


EDGE_CASES = """\
def identity(fn):
    return fn

def body_on_the_def_line(x): return x
    # not part of it: inspect ends a one-line body at its line


@identity
@identity
def decorated(x):
    return x   # a comment on the last line
    # an indented comment after the body belongs to the function
# a comment at the margin does not end it
        # and a deeper one still belongs to it

def signature_on_several_lines(
        x,
        y):
    \"\"\"A docstring
    on two lines.\"\"\"
    return (x +
            y)
if True:
    def in_an_if(x):
        return x


def nested(x):
    def inner(y):
        return y
    return inner
"""


def test_edge_cases_match_inspect(tmp_path):
    namespace = _load(tmp_path / "edges.py", EDGE_CASES)
    functions = _functions(namespace) + [namespace["nested"](0)]
    for fn in functions:
        assert function_source(fn) == _by_inspect(fn), fn.__qualname__
    for name in ("body_on_the_def_line", "decorated", "signature_on_several_lines"):
        assert _module_level_source(namespace[name].__code__) is not None, name
    assert _module_level_source(namespace["in_an_if"].__code__) is None   # inspect's
    assert _module_level_source(namespace["nested"](0).__code__) is None


def test_a_function_source_follows_edits(tmp_path):
    path = tmp_path / "mod.py"
    start = os.stat(tmp_path).st_mtime_ns
    first = _load(path, "def f(x):\n    return x + 1\n")["f"]
    os.utime(path, ns=(start, start))
    assert function_source(first).text == "def f(x):\n    return x + 1\n"
    second = _load(path, "def f(x):\n    return x - 1\n")["f"]   # same size, newer
    os.utime(path, ns=(start + 10**9, start + 10**9))
    assert function_source(second).text == "def f(x):\n    return x - 1\n"
    third = _load(path, "\ndef f(x):\n    return x - 1\n")["f"]   # longer, moved
    os.utime(path, ns=(start + 10**9, start + 10**9))
    assert function_source(third) == FunctionSource(str(path), 2, "def f(x):\n"
                                                    "    return x - 1\n", 0)


def test_a_function_whose_file_changed_under_it_falls_back_to_inspect(tmp_path):
    path = tmp_path / "mod.py"
    fn = _load(path, "def f(x):\n    return x\n")["f"]
    path.write_text("def g(x):\n    return x\n")   # `f` is no longer at its line
    assert _module_level_source(fn.__code__) is None
