"""Issue 18, items 8, 9a, 17 and 19: generated modules on disk, array extents XLA cannot
address, deeply nested source, and source files in other encodings.

* 8: a module written by ``psc-transpile`` is used only while its hash covers everything
  the generated code depends on (the module's imports included), and only from where the
  CLI writes for the user's project (never from a folder anyone may write to, like /tmp,
  nor above the project's root).
* 9a: an array whose element count or byte size overflows int64 is a `PSCShapeError` at
  the user's line, not an abort inside XLA (checked in a subprocess: an abort must not
  take pytest with it).
* 17: an expression Python compiles (hundreds of ``+`` terms, 170 nested calls) is
  transpiled like any other; what cannot be is a `PSCSyntaxError` at the ``def``.
* 19: ``psc-transpile`` reads files as Python does (PEP 263) and reports an undecodable
  file on one line, going on with the others.
"""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
import pathlib
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from runtime import Builder
from runtime.errors import PSCShapeError, PSCSyntaxError
from tests.conftest import assert_same
from emit.fileformat import seal
from transpiler import cli, pipeline

ROOT = pathlib.Path(__file__).resolve().parent.parent
_counter = itertools.count()


def _load(path: pathlib.Path):
    """Import the file at ``path`` under a fresh module name (its functions are decorated
    now, so they look for generated modules now)."""
    name = f"psc_issue18_{path.stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _no_generated_dir_variable(monkeypatch):
    monkeypatch.delenv("PSC_GENERATED_DIR", raising=False)


def _run_cli(*argv) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PSC_GENERATED_DIR", None)
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, argv)],
                          capture_output=True, text=True, env=env, timeout=180)


# --- 8: the hash covers the imports ---------------------------------------------------------

TRIG_MODULE = """\
import numpy as np
from numpy import {name} as trig
from transpiler import jit_ps


@jit_ps
def wave(x):
    return trig(x) + np.float64(0.0)
"""


def test_a_changed_import_makes_the_module_on_disk_stale(tmp_path):
    """`from numpy import sin as trig` -> `cos as trig`, the function untouched: the
    module generated for `sin` must not be used (Python gives cos(0) == 1.0)."""
    path = tmp_path / "trig.py"
    path.write_text(TRIG_MODULE.format(name="sin"))
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__")]) == 0
    unchanged = _load(path)
    assert unchanged.wave._generated.from_disk is True          # control: reused as is
    assert_same(unchanged.wave(0.0), unchanged.wave.__wrapped__(0.0))

    path.write_text(TRIG_MODULE.format(name="cos"))
    changed = _load(path)
    assert changed.wave._generated.from_disk is False
    assert "from runtime.numpy_api import cos as trig" in changed.wave.generated_source
    expected = changed.wave.__wrapped__(0.0)
    assert expected == 1.0
    assert_same(changed.wave(0.0), expected)
    # The CLI computes the same hash: it calls the module stale, and once regenerated the
    # decorator uses it again.
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__"), "--check"]) == 1
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__")]) == 0
    again = _load(path)
    assert again.wave._generated.from_disk is True
    assert_same(again.wave(0.0), expected)


def test_every_form_of_import_hashes_alike_in_the_cli_and_the_decorator(tmp_path):
    path = tmp_path / "imports.py"
    path.write_text(textwrap.dedent("""\
        import math, os.path
        from math import *   # noqa
        import numpy as np, numpy.linalg as la
        from numpy import (sin as trig,
                           cos)
        from transpiler import jit_ps


        @jit_ps
        def f(x):
            return trig(x) + cos(x) + la.norm(x) * math.pi
    """))
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__")]) == 0
    module = _load(path)
    assert module.f._generated.from_disk is True
    x = np.array([0.5, -1.0])
    assert_same(module.f(x), module.f.__wrapped__(x))


def test_an_edited_unused_import_also_invalidates(tmp_path):
    """The whole set of the module's imports is hashed (the generated module copies
    those of all its functions): conservative, never stale."""
    path = tmp_path / "extra.py"
    path.write_text(TRIG_MODULE.format(name="sin"))
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__")]) == 0
    path.write_text("import os\n" + TRIG_MODULE.format(name="sin"))
    module = _load(path)
    assert module.wave._generated.from_disk is False
    assert_same(module.wave(0.5), module.wave.__wrapped__(0.5))


# An import whose name the module binds again: the generated module must not copy it
# (its imports run after the names read from the user's globals are filled in).
REBINDINGS = {
    "def_after": "def trig(x):\n    return x * 0.0 + 7.0\n",
    "assignment": "trig = np.cos\n",
    "second_import": "from numpy import cos as trig\n",
    "in_an_if": "if True:\n    trig = np.tanh\n",
    "global_in_a_function": ("def _rebind():\n    global trig\n    trig = np.cos\n\n\n"
                             "_rebind()\n"),
    "star_import": "from math import *\ncos = np.exp\n",
    "for_loop": "for trig in (np.cos, np.tanh):\n    pass\n",
}


@pytest.mark.parametrize("case", sorted(REBINDINGS))
def test_an_import_the_module_rebinds_is_not_copied(tmp_path, case):
    path = tmp_path / f"rebound_{case}.py"
    path.write_text(TRIG_MODULE.format(name="sin").replace(
        "\n\n@jit_ps", "\n" + REBINDINGS[case] + "\n\n@jit_ps").replace(
        "return trig(x)", "return trig(x) + cos(x)").replace(
        "from numpy import sin as trig", "from numpy import sin as trig, cos"))
    x = np.array([0.25, -1.5])
    in_memory = _load(path)
    assert in_memory.wave._generated.from_disk is False
    expected = in_memory.wave.__wrapped__(x)
    assert_same(in_memory.wave(x), expected)
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__")]) == 0
    reused = _load(path)
    assert reused.wave._generated.from_disk is True
    assert_same(reused.wave(x), reused.wave.__wrapped__(x))
    assert "import sin as trig" not in reused.wave.generated_source


# --- 8: where generated modules are looked for ----------------------------------------------

PLAIN_MODULE = """\
import numpy as np
from transpiler import jit_ps


@jit_ps
def double(x):
    return x * 2.0
"""


def _tampered_directory_run(top: pathlib.Path, source: pathlib.Path) -> pathlib.Path:
    """Run `psc-transpile TOP -o TOP/__psc__` and make the module it wrote for ``source``
    compute something else (header kept), so that using it shows."""
    assert cli.main([str(top), "-o", str(top / "__psc__")]) == 0
    relative = source.relative_to(top).with_name(source.stem + "_psc.py")
    generated = top / "__psc__" / relative
    text = generated.read_text()
    assert text.count("return x * 2.0") == 1
    # sealed again, as psc-transpile seals what it writes: an edit that is not is ignored
    generated.write_text(seal(text.replace("return x * 2.0", "return x * 0.0")))
    return generated


def _project(tmp_path, *parts) -> pathlib.Path:
    source = tmp_path.joinpath(*parts, "model.py")
    source.parent.mkdir(parents=True)
    source.write_text(PLAIN_MODULE)
    return source


def test_a_directory_run_in_the_users_own_folder_is_found(tmp_path):
    """Control for the next tests: `psc-transpile TOP -o TOP/__psc__` keeps sub-folders,
    and a function of TOP/pkg/sub/model.py finds TOP/__psc__/pkg/sub/model_psc.py."""
    top = tmp_path / "top"
    source = _project(top, "pkg", "sub")
    _tampered_directory_run(top, source)
    module = _load(source)
    assert module.double._generated.from_disk is True
    assert_same(module.double(np.ones(2)), np.zeros(2))    # the tampered module ran


def test_a_world_writable_ancestor_is_not_searched(tmp_path):
    """/tmp/__psc__ must not serve /tmp/a/b/model.py: anyone can write there."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO | stat.S_ISVTX)   # like /tmp
    source = _project(shared, "a", "b")
    _tampered_directory_run(shared, source)
    module = _load(source)
    assert module.double._generated.from_disk is False
    x = np.arange(3.0)
    assert_same(module.double(x), module.double.__wrapped__(x))


def test_a_world_writable_source_folder_has_no_default_lookup(tmp_path):
    shared = tmp_path / "shared"
    source = _project(tmp_path, "shared")
    shared.chmod(0o1777)
    assert cli.main([str(source), "-o", str(shared / "__psc__")]) == 0
    module = _load(source)
    assert module.double._generated.from_disk is False


def test_the_lookup_stops_at_the_projects_root(tmp_path):
    outer = tmp_path / "outer"
    source = _project(outer, "project", "pkg")
    (outer / "project" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    _tampered_directory_run(outer, source)       # outer/__psc__/project/pkg/model_psc.py
    module = _load(source)
    assert module.double._generated.from_disk is False
    x = np.arange(3.0)
    assert_same(module.double(x), module.double.__wrapped__(x))
    # The project's own root is still searched: `psc-transpile . -o __psc__` there.
    _tampered_directory_run(outer / "project", source)
    assert _load(source).double._generated.from_disk is True


def test_an_explicit_generated_dir_is_trusted_wherever_it_is(tmp_path, monkeypatch):
    """The user named it: `generated_dir=` and $PSC_GENERATED_DIR are used even in a
    world-writable folder, with the sub-folders a directory run keeps."""
    from transpiler import jit_ps
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    top = tmp_path / "top"
    source = _project(top, "pkg")
    out = shared / "gen"
    assert cli.main([str(top), "-o", str(out)]) == 0
    assert (out / "pkg" / "model_psc.py").is_file()
    module = _load(source)
    assert module.double._generated.from_disk is False
    assert jit_ps(module.double.__wrapped__, generated_dir=str(out))._generated.from_disk
    monkeypatch.setenv("PSC_GENERATED_DIR", str(out))
    module = _load(source)
    assert module.double._generated.from_disk is True
    assert_same(module.double(np.ones(2)), np.full(2, 2.0))


# --- 9a: extents XLA cannot address ---------------------------------------------------------

EXTENT_CASES = {
    # name: (function body, argument expression)
    "broadcast_2_62": ("return np.broadcast_to(x, (2**62,)).sum()", "1.0"),
    "broadcast_2_31_squared": ("return np.broadcast_to(x, (2**31, 2**31)).sum()", "1.0"),
    "broadcast_1e10_squared": ("return np.broadcast_to(x, (10**10, 10**10)).sum()", "1.0"),
    "reshape_of_huge": ("return np.broadcast_to(x, (10**10, 10**10)).reshape(-1)", "1.0"),
    "reshape_2_31": ("return np.broadcast_to(x, (2**31, 2**31)).reshape(-1).sum()", "1.0"),
    "int8_sum_widens": ("return np.broadcast_to(x, (2**62,)).sum()", "np.int8(1)"),
    "argmax_indices": ("return np.broadcast_to(x, (2**61,)).argmax()", "np.bool_(True)"),
    "outer_product": ("return np.outer(np.broadcast_to(x, (2**31,)), "
                      "np.broadcast_to(x, (2**31,))).sum()", "1.0"),
    "dot_result": ("return np.dot(np.broadcast_to(x, (2**31, 1)), "
                   "np.broadcast_to(x, (1, 2**31))).sum()", "1.0"),
    "concatenate": ("return np.concatenate([np.broadcast_to(x, (2**59,)), "
                    "np.broadcast_to(x, (2**59,))]).sum()", "1.0"),
    "concatenate_past_the_limit": ("return np.concatenate([np.broadcast_to(x, (2**60 - 1,)), "
                                   "np.ones(1)]).sum()", "1.0"),
    "gather_rows": ("return (np.ones((3, 2)) * x)[np.broadcast_to(np.int64(1) * np.int64(x), "
                    "(2**59,))].sum()", "1.0"),
    "zero_dim_does_not_hide_it": ("return np.broadcast_to(x, (2**62, 2**62, 0)).sum()",
                                  "1.0"),
}
# At the limit: 2**63 - 8 bytes of float64 is an array XLA accepts (no error, no abort).
EXTENT_ACCEPTED = {"largest_float64": "return np.broadcast_to(x, (2**60 - 1,)).sum()"}

EXTENT_SCRIPT = """\
import json, sys
import numpy as np
from transpiler import jit_ps
from runtime.errors import PSCError
{functions}
for name, mode, fn, arg in CASES:
    try:
        result = fn.lower(arg) if mode == "lower" else fn(arg)
        report = {{"name": name, "mode": mode, "error": None}}
    except PSCError as err:
        report = {{"name": name, "mode": mode, "error": type(err).__name__,
                   "line": err.location.line if err.location else None,
                   "message": str(err)}}
    print(json.dumps(report), flush=True)
"""


@pytest.fixture(scope="module")
def extent_reports(tmp_path_factory):
    """Run every case in one subprocess (each, called and lowered), one JSON line each:
    an abort shows as a missing line, never as a dead pytest."""
    folder = tmp_path_factory.mktemp("extents")
    functions, cases, lines = [], [], {}
    line = EXTENT_SCRIPT.count("\n", 0, EXTENT_SCRIPT.index("{functions}")) + 1
    all_cases = {**{k: v for k, v in EXTENT_CASES.items()},
                 **{k: (body, "1.0") for k, body in EXTENT_ACCEPTED.items()}}
    for name, (body, arg) in all_cases.items():
        functions.append(f"@jit_ps\ndef {name}(x):\n    {body}\n")
        lines[name] = line + 2
        line += 3
        cases += [f"({name!r}, 'lower', {name}, {arg})"]
        if name in EXTENT_CASES:
            cases += [f"({name!r}, 'call', {name}, {arg})"]
    text = EXTENT_SCRIPT.format(functions="".join(functions)
                                + "CASES = [" + ", ".join(cases) + "]\n")
    script = folder / "extents.py"
    script.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=folder)
    reports = {(r["name"], r["mode"]): r for r in map(json.loads, proc.stdout.splitlines())}
    return reports, lines, script, proc


@pytest.mark.parametrize("mode", ["lower", "call"])
@pytest.mark.parametrize("name", sorted(EXTENT_CASES))
def test_an_array_too_large_for_xla_is_a_shape_error_at_the_line(extent_reports, name,
                                                                   mode):
    reports, lines, script, proc = extent_reports
    report = reports.get((name, mode))
    assert report is not None, f"no result (the process died?): rc={proc.returncode}\n" \
                               f"{proc.stderr[-2000:]}"
    assert report["error"] == "PSCShapeError", report
    assert report["line"] == lines[name], report
    assert f"{script}:{lines[name]}:" in report["message"]
    assert EXTENT_CASES[name][0] in report["message"]          # the source line
    assert "2**63 - 1 bytes" in report["message"]              # the hint


@pytest.mark.parametrize("name", sorted(EXTENT_ACCEPTED))
def test_the_largest_addressable_array_is_accepted(extent_reports, name):
    reports, _, _, proc = extent_reports
    assert reports.get((name, "lower")) == {"name": name, "mode": "lower", "error": None}, \
        proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_builder_leaves_check_their_extent_too():
    """Parameters and iota make shapes without an operand: the same check, located."""
    b = Builder("leaves")
    b.at("user.py", 7, 4)
    with pytest.raises(PSCShapeError, match="more than XLA can address") as info:
        b.parameter(0, (2**62,), np.float64)
    assert str(info.value.location) == "user.py:7:5"
    with pytest.raises(PSCShapeError) as info:
        b.iota((2**31, 2**31), np.int64)
    assert info.value.location.line == 7
    with pytest.raises(PSCShapeError, match="negative dimension"):
        b.iota((-1,), np.int32)
    # (Constants are NumPy arrays, views included: NumPy itself keeps their byte size
    # within its intp.)
    with pytest.raises(ValueError):
        np.broadcast_to(np.float32(1.0), (2**62,))
    # At the limit and below: fine.
    largest = b.parameter(1, (2**60 - 1,), np.float64)
    assert largest.shape == (2**60 - 1,)
    assert b.iota((2**62 - 1,), np.int8).size == 2**62 - 1
    # One element more, by padding: the op's result is checked.
    b.at("user.py", 9, 0)
    with pytest.raises(PSCShapeError) as info:
        b.pad(largest, b.constant(0.0, np.float64), [0], [1])
    assert info.value.location.line == 9


# --- 17: deeply nested source ---------------------------------------------------------------

def _deep_module(tmp_path, name: str, expression: str) -> pathlib.Path:
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\nfrom transpiler import jit_ps\n\n\n@jit_ps\n"
                    f"def {name}(x):\n    return {expression}\n")
    return path


DEEP_EXPRESSIONS = {
    "plus_250": " + ".join(["x"] * 250),
    "nested_calls_170": "np.abs(" * 170 + "x" + ")" * 170,
    "plus_1000": " + ".join(["x"] * 1000),
    "negations_1000": "-" * 1000 + "x",
    "method_chain_600": "x" + ".reshape(-1)" * 600,
    # CPython compiles a left-nested sum of up to about 3 x its recursion limit terms,
    # less what the stack already holds (pytest's frames)
    "plus_2500": " + ".join(["x"] * 2500),
}


@pytest.mark.parametrize("name", sorted(DEEP_EXPRESSIONS))
def test_deeply_nested_expressions_transpile_and_run_like_python(tmp_path, name):
    limit = sys.getrecursionlimit()
    path = _deep_module(tmp_path, name, DEEP_EXPRESSIONS[name])
    module = _load(path)                       # Python compiles it: so must we
    f = getattr(module, name)
    assert sys.getrecursionlimit() == limit    # restored
    for x in (np.float64(1.5), np.array([0.5, -2.0], dtype=np.float32)):
        assert_same(f(x), f.__wrapped__(x))


def test_the_cli_transpiles_deep_code_and_the_decorator_reuses_it(tmp_path):
    path = _deep_module(tmp_path, "deep_cli", DEEP_EXPRESSIONS["plus_1000"])
    assert cli.main([str(path), "-o", str(tmp_path / "__psc__")]) == 0
    module = _load(path)
    assert module.deep_cli._generated.from_disk is True
    x = np.array([1.0, 2.0])
    assert_same(module.deep_cli(x), module.deep_cli.__wrapped__(x))


def test_code_too_deep_even_for_the_deep_stack_is_a_syntax_error_at_the_def(tmp_path,
                                                                            monkeypatch):
    """What the raised limit still cannot walk is reported at the def, with a hint (the
    limit is lowered here to reach that path with a sum Python compiles)."""
    monkeypatch.setattr(pipeline, "DEEP_RECURSION_LIMIT", 0)
    path = _deep_module(tmp_path, "too_deep", DEEP_EXPRESSIONS["plus_1000"])
    with pytest.raises(PSCSyntaxError, match="nests expressions too deeply") as info:
        _load(path)
    assert f"{path}:5:" in str(info.value)                 # the decorated def
    assert "intermediate variables" in str(info.value)
    assert not isinstance(info.value.__cause__, RecursionError)
    # The CLI reports it on its stderr, naming the file, and exits 2.
    assert cli.main([str(path), "-o", str(tmp_path / "out")]) == 2


# --- 19: source encodings -------------------------------------------------------------------

LATIN1_MODULE = """\
# -*- coding: latin-1 -*-
# caf\xe9: a comment only latin-1 decodes
import numpy as np
from transpiler import jit_ps


@jit_ps
def label_scale(x):
    unit = "\xb0C"
    return x * len(unit)
"""


def test_a_declared_encoding_is_honoured(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1_MODULE.encode("latin-1"))
    proc = _run_cli(path, "-o", tmp_path / "__psc__")
    assert proc.returncode == 0, proc.stderr
    module = _load(path)
    assert module.label_scale._generated.from_disk is True       # same hash both ways
    x = np.array([1.0, 2.5])
    assert_same(module.label_scale(x), module.label_scale.__wrapped__(x))


def test_a_utf8_bom_is_honoured(tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + PLAIN_MODULE.encode())
    proc = _run_cli(path, "-o", tmp_path / "__psc__")
    assert proc.returncode == 0, proc.stderr
    assert _load(path).double._generated.from_disk is True


UNDECODABLE = {
    # a latin-1 byte after the first two lines: the text does not decode as UTF-8
    "late": PLAIN_MODULE + 'NAME = "caf\xe9"\n',
    # in the first two lines, where Python looks for a declaration
    "early": 'NAME = "caf\xe9"\n' + PLAIN_MODULE,
}


@pytest.mark.parametrize("check", [False, True])
@pytest.mark.parametrize("where", sorted(UNDECODABLE))
def test_an_undecodable_file_is_one_line_and_nothing_is_written(tmp_path, check, where):
    """All or nothing (issue 11): the good file is not written (nor checked) either."""
    bad = tmp_path / "src" / "a_bad.py"
    good = tmp_path / "src" / "b_good.py"
    bad.parent.mkdir()
    bad.write_bytes(UNDECODABLE[where].encode("latin-1"))
    good.write_text(PLAIN_MODULE)
    with pytest.raises(SyntaxError):          # Python cannot import it either
        compile(bad.read_bytes(), str(bad), "exec")
    out = tmp_path / "out"
    proc = _run_cli(tmp_path / "src", "-o", out, *(["--check"] if check else []))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "a_bad.py" in line]
    assert line.startswith(f"{bad}: error: ")
    assert "0xe9" in line or "encoding" in line
    assert proc.stderr.splitlines()[-1] == \
        f"psc-transpile: 1 error; nothing {'checked' if check else 'written'}"
    assert "missing: " not in proc.stderr and not out.exists()


def test_an_unknown_declared_encoding_is_one_line(tmp_path):
    path = tmp_path / "unknown.py"
    path.write_text("# -*- coding: no-such-codec -*-\n" + PLAIN_MODULE)
    proc = _run_cli(path, "-o", tmp_path / "out")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith(f"{path}: error: ")
    # one line, and the summary
    assert "no-such-codec" in proc.stderr and len(proc.stderr.strip().splitlines()) == 2
    assert proc.stderr.strip().splitlines()[1] == "psc-transpile: 1 error; nothing written"
