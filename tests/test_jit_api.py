"""`@jit_ps`: decorator forms, static arguments, the signature cache, results, dtypes,
generated source, lowering/compilation, late binding of globals and closures, inlining of
jit_ps functions into each other, and reuse of modules written by `psc-transpile`."""
from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import itertools
import os
import re
import shutil
import sys

import jax
import numpy as np
import pytest

from conftest import assert_same
from conftest import marked_line as marker_line
from transpiler import PSCFunction, jit_ps
from transpiler import cli

HERE = os.path.abspath(__file__)
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")
_counter = itertools.count()


def line_of(path: str, snippet: str) -> int:
    """The 1-based line of ``path`` containing ``snippet`` (exactly one)."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found = [i + 1 for i, text in enumerate(lines) if snippet in text]
    assert len(found) == 1, (snippet, found)
    return found[0]


def load_module(path: str):
    """Import ``path`` under a fresh module name (each test gets its own functions and
    caches)."""
    name = f"psc_api_fixture_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


@pytest.fixture
def api():
    return load_module(os.path.join(FIXTURES, "api_funcs.py"))


# --- functions defined in this file (their source locations are this file's lines) ---------

@jit_ps
def located(x, y):
    """Multiply, then tanh."""
    z = x * y  # LOC:mul
    return np.tanh(z)  # LOC:tanh


@jit_ps()
def empty_parens(x):
    return x + 1.0


@jit_ps(static_argnames="n")
def power_names(x, n):
    y = x
    for _ in range(n - 1):
        y = y * x
    return y


@jit_ps(static_argnames=("n", "offset"))
def power_offset(x, n, offset=0.5):
    y = x
    for _ in range(n - 1):
        y = y * x
    return y + offset


@jit_ps(static_argnums=1)
def power_nums(x, n):
    y = x
    for _ in range(n - 1):
        y = y * x
    return y


@jit_ps(static_argnums=(1,))
def repeat_nums(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


@jit_ps(static_argnames="n")
def keyword_only(x, *, n):
    return x * n


def plain_scale(x, factor):
    return x * factor


# --- decorator forms ------------------------------------------------------------------------

def test_bare_decorator_gives_psc_function():
    assert isinstance(located, PSCFunction)
    x, y = np.arange(3.0), np.array([1.0, -2.0, 0.5])
    assert_same(located(x, y), np.tanh(x * y))
    assert located.__name__ == "located"
    assert located.__doc__ == "Multiply, then tanh."
    assert "located" in repr(located)


def test_traced_arguments_by_keyword_share_the_positional_signature():
    f = jit_ps(located.__wrapped__)
    x, y = np.arange(3.0), np.array([0.5, 1.0, 2.0])
    expected = np.tanh(x * y)
    assert_same(f(x, y), expected)
    assert_same(f(x, y=y), expected)
    assert_same(f(y=y, x=x), expected)
    assert f.cache_info().misses == 1
    assert_same(f(y, x), np.tanh(y * x))


def test_decorator_with_empty_parentheses():
    assert isinstance(empty_parens, PSCFunction)
    assert_same(empty_parens(np.arange(4.0)), np.arange(4.0) + 1.0)


@pytest.mark.parametrize("f", [power_names, power_nums], ids=["static_argnames",
                                                              "static_argnums"])
def test_static_argument_by_position_and_keyword(f):
    x = np.array([1.0, 2.0, -3.0])
    assert_same(f(x, 3), x ** 3)
    assert_same(f(x, n=3), x ** 3)
    # Positional and keyword passing of the same static value is one signature.
    assert f.cache_info().misses == 1


def test_static_argnames_tuple_and_default_value():
    x = np.array([1.0, 2.0])
    assert_same(power_offset(x, 2), x ** 2 + 0.5)             # default offset
    assert_same(power_offset(x, 2, offset=0.5), x ** 2 + 0.5)  # same value, same signature
    assert power_offset.cache_info().misses == 1
    assert_same(power_offset(x, 2, 1.5), x ** 2 + 1.5)
    assert power_offset.cache_info().misses == 2


def test_static_argnums_tuple():
    x = np.array([1.0, 3.0])
    assert_same(repeat_nums(x, 2), x * 4.0)
    assert_same(repeat_nums(x, 3), x * 8.0)
    assert repeat_nums.cache_info().misses == 2


def test_keyword_only_static_argument():
    x = np.arange(3.0)
    assert_same(keyword_only(x, n=4), x * 4)
    assert_same(keyword_only(x, n=4), x * 4)
    assert keyword_only.cache_info().misses == 1


def test_functional_form_with_static_argnames():
    f = jit_ps(plain_scale, static_argnames="factor")
    assert isinstance(f, PSCFunction)
    assert f.__wrapped__ is plain_scale
    x = np.arange(3.0)
    assert_same(f(x, 2.5), x * 2.5)
    assert_same(f(x, factor=2.5), x * 2.5)
    assert f.cache_info().misses == 1
    assert "def build_plain_scale(" in f.generated_source


def test_functional_form_on_fixture_function(api):
    f = jit_ps(api.undecorated_power, static_argnums=1)
    assert f.__wrapped__ is api.undecorated_power
    x = np.array([0.5, 2.0])
    assert_same(f(x, 4), api.undecorated_power(x, 4))


def test_wrapped_is_the_original_function(api):
    for f in (located, power_names, api.structures, api.outer):
        assert isinstance(f, PSCFunction)
        assert callable(f.__wrapped__) and not isinstance(f.__wrapped__, PSCFunction)
        assert f.__wrapped__.__name__ == f.__name__
        assert f.__wrapped__.__code__.co_filename == f._generated.source.file
    # The plain function still runs as Python + NumPy (the oracle).
    x, y = np.arange(3.0), np.ones(3)
    assert_same(located.__wrapped__(x, y), np.tanh(x * y))


# --- static values and the signature cache --------------------------------------------------

def test_static_values_are_part_of_the_cache_key():
    f = jit_ps(power_names.__wrapped__, static_argnames="n")
    x = np.array([1.5, -0.5])
    assert f.cache_info().misses == 0
    assert_same(f(x, 2), x ** 2)
    assert f.cache_info().misses == 1
    assert_same(f(x, 3), x ** 3)          # a different value compiles again
    assert f.cache_info().misses == 2
    assert_same(f(x, 2), x ** 2)          # an equal value reuses
    assert_same(f(x, n=3), x ** 3)
    assert f.cache_info().misses == 2


def test_new_shape_compiles_again_and_old_shapes_are_reused():
    f = jit_ps(plain_scale)
    assert_same(f(np.arange(3.0), 2.0), np.arange(3.0) * 2.0)
    assert f.cache_info().misses == 1
    assert_same(f(np.arange(5.0), 2.0), np.arange(5.0) * 2.0)
    assert f.cache_info().misses == 2
    assert_same(f(np.ones((2, 2)), 2.0), np.ones((2, 2)) * 2.0)
    assert f.cache_info().misses == 3
    for _ in range(3):
        assert_same(f(np.arange(3.0), 3.0), np.arange(3.0) * 3.0)   # traced factor
        assert_same(f(np.arange(5.0), 2.0), np.arange(5.0) * 2.0)
    assert f.cache_info().misses == 3
    # A new dtype is a new signature too.
    assert_same(f(np.arange(3.0, dtype=np.float32), 2.0),
                np.arange(3.0, dtype=np.float32) * 2.0)
    assert f.cache_info().misses == 4


# --- results: structure and dtypes -----------------------------------------------------------

def test_results_keep_the_plain_functions_structure(api):
    x, y = np.arange(3.0), np.array([2.0, -1.0, 0.0])
    result = api.structures(x, y)
    expected = api.structures.__wrapped__(x, y)
    assert type(result) is tuple and len(result) == 4
    assert type(result[1]) is list and len(result[1]) == 2
    # Same keys (like jax.jit, the keys come back sorted, not in insertion order).
    assert type(result[2]) is dict and sorted(result[2]) == ["pair", "sum"]
    assert type(result[2]["pair"]) is tuple and result[2]["pair"][1] is None
    assert result[3] is None
    assert_same(result[0], expected[0])
    assert_same(result[1], expected[1])
    assert_same(result[2]["sum"], expected[2]["sum"])
    assert_same(result[2]["pair"][0], expected[2]["pair"][0])


def test_64_bit_types_stay_64_bit_without_enabling_x64_globally(api):
    assert jax.config.jax_enable_x64 is False
    x, i = np.array([1.0, 2.5]), np.array([3, -4], dtype=np.int64)
    for _ in range(2):     # the first call builds, the second takes the fast path
        out = api.keep_dtypes(x, i)
        expected = api.keep_dtypes.__wrapped__(x, i)
        assert [np.asarray(o).dtype for o in out] == [np.float64, np.int64, np.int64]
        assert_same(out, expected)
        assert jax.config.jax_enable_x64 is False
    # Values that need 64 bits survive.
    big = np.array([2 ** 40 + 1, -(2 ** 41)], dtype=np.int64)
    assert_same(api.keep_dtypes(x, big)[1], big * 3)
    tiny = np.array([1e-300, 1.0 + 2 ** -50])
    assert_same(api.keep_dtypes(tiny, i)[0], tiny * 2.0, rtol=0, atol=0)
    # float32 stays float32 (Python scalars are weak).
    out32 = api.keep_dtypes(x.astype(np.float32), i.astype(np.int32))
    assert [np.asarray(o).dtype for o in out32] == [np.float32, np.int32, np.int32]
    assert jax.config.jax_enable_x64 is False
    assert jax.numpy.zeros(1).dtype == np.float32    # JAX itself still runs in 32-bit mode


# --- generated source, lowering, compilation ------------------------------------------------

def test_generated_source_is_a_readable_module():
    text = located.generated_source
    assert text.startswith("# Generated by psc-transpiler")
    assert "def build_located(" in text
    assert re.search(r"^# psc-function: located [0-9a-f]{16}$", text, re.MULTILINE)
    tree = ast.parse(text)                     # a module that compiles
    builds = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert [n.name for n in builds] == ["build_located"]
    # Source names are kept: parameters and locals.
    params = [a.arg for a in builds[0].args.args]
    assert params[1:] == ["x", "y"]
    assert "z = x * y" in text and "np.tanh(z)" in text
    assert f"# test_jit_api.py:{marker_line(HERE, 'LOC:mul')}" in text
    assert f"# test_jit_api.py:{marker_line(HERE, 'LOC:tanh')}" in text


def test_lower_has_source_locations_of_this_file():
    x, y = np.arange(3.0), np.ones(3)
    text = located.lower(x, y)
    assert isinstance(text, str)
    assert f'loc("{HERE}' in text
    mul_line, tanh_line = marker_line(HERE, "LOC:mul"), marker_line(HERE, "LOC:tanh")
    [mul] = [line for line in text.splitlines() if '"stablehlo.multiply"' in line]
    [tanh] = [line for line in text.splitlines() if '"stablehlo.tanh"' in line]
    assert f'loc("{HERE}":{mul_line}:' in mul
    assert f'loc("{HERE}":{tanh_line}:' in tanh
    assert "tensor<3xf64>" in mul


def test_compile_returns_an_executable_with_hlo_and_cost_analysis():
    x, y = np.arange(4.0), np.ones(4)
    executable = located.compile(x, y)
    hlo = executable.as_hlo_text()
    assert "ENTRY" in hlo
    costs = executable.cost_analysis()
    assert isinstance(costs, dict) and "flops" in costs
    assert costs["flops"] >= 4
    before = located.cache_info().misses
    located.compile(x, y)
    located.lower(x, y)
    assert located.cache_info().misses == before      # same signature: no new compilation
    assert_same(located(x, y), np.tanh(x * y))
    assert located.cache_info().misses == before


# --- late binding: globals and closures are read when a signature is built -------------------

def test_module_globals_are_read_when_a_signature_is_built(api):
    """Late binding.  A jit_ps function reads the globals (and closure cells) it uses when
    a signature is *built* -- not when it is decorated and not on every call.  So:
    changing a global before the first call with a new signature is seen; a signature
    already compiled keeps the value it was built with (its executable is reused)."""
    f = api.scaled_by_config
    x3, x4, x5 = np.arange(3.0), np.arange(4.0), np.arange(5.0)
    api.CONFIG["scale"] = 5.0          # after decoration, before the first call
    assert_same(f(x3), x3 * 5.0 + 1.0)
    api.CONFIG["scale"] = 7.0          # mutated after (3,) was built ...
    assert_same(f(x3), x3 * 5.0 + 1.0)  # ... (3,) keeps its executable
    assert_same(f(x4), x4 * 7.0 + 1.0)  # a new signature is built with the current value
    api.SHIFT = -2.0                    # rebinding a global works the same way
    assert_same(f(x5), x5 * 7.0 - 2.0)
    assert_same(f(x3), x3 * 5.0 + 1.0)
    assert f.cache_info().misses == 3


def test_closure_cells_are_read_when_a_signature_is_built(api):
    config = {"scale": 2.0}
    scaled = api.make_scaler(config)
    other = api.make_scaler({"scale": -1.0})
    x3, x4 = np.arange(3.0), np.arange(4.0)
    assert_same(scaled(x3), x3 * 2.0)
    assert_same(other(x3), x3 * -1.0)       # each closure sees its own cell
    config["scale"] = 10.0
    assert_same(scaled(x3), x3 * 2.0)       # cached signature
    assert_same(scaled(x4), x4 * 10.0)      # new signature, current value
    assert_same(other(x4), x4 * -1.0)


def test_globals_defined_after_the_function_work(api):
    x = np.linspace(-1.0, 1.0, 5)
    assert_same(api.uses_late_globals(x), (np.sin(x) + 1.0) * 3.0)
    assert_same(api.uses_late_globals(x), api.uses_late_globals.__wrapped__(x))


# --- jit_ps functions calling jit_ps functions -----------------------------------------------

def test_jit_ps_function_calling_another_is_inlined(api):
    x = np.array([0.0, 1.0, -2.0, 4.0])

    def plain_inner(v, n):
        for _ in range(n):
            v = v * 0.5 + 1.0
        return v
    expected = plain_inner(x, 3) + np.tanh(x) * 2.0
    assert_same(api.outer(x), expected)
    assert_same(api.outer(x), expected)
    assert api.outer.cache_info().misses == 1
    assert api.inner.cache_info().misses == 0     # built into outer, never compiled alone
    # One computation: the inner function's ops carry the inner function's lines.
    text = api.outer.lower(x)
    inner_line = line_of(api.__file__, "x = x * 0.5 + 1.0")
    assert f":{inner_line}:" in text
    assert "func.call" not in text and "call @" not in text
    # The inner function still works on its own.
    assert_same(api.inner(x, 3), plain_inner(x, 3))
    assert api.inner.cache_info().misses == 1


# --- modules written by psc-transpile are reused while up to date ----------------------------

@pytest.fixture
def disk_source(tmp_path, monkeypatch):
    """disk_model.py copied to tmp_path under a unique stem, importable from sys.path."""
    stem = f"psc_disk_model_{next(_counter)}"
    path = tmp_path / f"{stem}.py"
    shutil.copy(os.path.join(FIXTURES, "disk_model.py"), path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("PSC_GENERATED_DIR", raising=False)
    yield path
    for name in list(sys.modules):
        if name.startswith(stem):
            del sys.modules[name]


def _check_disk_model_results(module, double=False):
    x, w = np.array([[1.0, -0.5], [0.25, 2.0]]), np.array([0.5, 1.5])
    h = np.tanh(x * w) * (2.0 if double else 1.0)
    assert_same(module.model(x, w), h.sum(axis=0))
    v = np.arange(3.0)
    assert_same(module.repeat(v, 2), (v * 0.5 + 1.0) * 0.5 + 1.0)


def test_module_written_by_the_cli_is_used(disk_source, capsys):
    out = disk_source.parent / "__psc__"
    assert cli.main([str(disk_source), "-o", str(out)]) == 0
    generated = out / f"{disk_source.stem}_psc.py"
    assert generated.is_file()
    module = importlib.import_module(disk_source.stem)
    for f in (module.model, module.repeat):
        assert f._generated.from_disk is True
        assert f.generated_source == generated.read_text()
    _check_disk_model_results(module)


def test_a_module_on_disk_finds_the_globals_its_nested_functions_read(disk_source):
    """A reused module is not parsed: the names it reads come from its compiled code, the
    loop body's (a nested function's) included."""
    out = disk_source.parent / "__psc__"
    assert cli.main([str(disk_source), "-o", str(out)]) == 0
    module = importlib.import_module(disk_source.stem)
    assert module.scaled_loop._generated.from_disk is True
    x = np.array([1.0, -2.0])
    assert_same(module.scaled_loop(x, np.int64(3)),
                module.scaled_loop.__wrapped__(x, 3))
    assert {"SCALE", "shifted"} <= module.scaled_loop._generated.free_names


def test_the_module_on_disk_is_what_runs(disk_source):
    """Proof that the disk text is executed: an edited body (header kept, and sealed again
    as psc-transpile seals what it writes) changes results.  (Edited and not sealed again,
    it is ignored: tests/test_cli.py, test_an_edited_module_is_ignored_with_a_warning.)"""
    from emit.fileformat import seal
    out = disk_source.parent / "__psc__"
    assert cli.main([str(disk_source), "-o", str(out)]) == 0
    generated = out / f"{disk_source.stem}_psc.py"
    text = generated.read_text()
    assert text.count("return h.sum(axis=0)") == 1
    edited = text.replace("return h.sum(axis=0)", "return h.sum(axis=0) * 0.0")
    generated.write_text(seal(edited))
    module = importlib.import_module(disk_source.stem)
    assert module.model._generated.from_disk is True
    x, w = np.ones((2, 2)), np.ones(2)
    assert_same(module.model(x, w), np.zeros(2))


def test_changed_source_does_not_use_the_stale_module(disk_source):
    out = disk_source.parent / "__psc__"
    assert cli.main([str(disk_source), "-o", str(out)]) == 0
    # A new module whose `model` differs but whose generated module is the old one.
    stem = f"{disk_source.stem}_v2"
    text = disk_source.read_text()
    assert "h = np.tanh(x * w)\n" in text
    (disk_source.parent / f"{stem}.py").write_text(
        text.replace("h = np.tanh(x * w)\n", "h = np.tanh(x * w) * 2.0\n"))
    shutil.copy(out / f"{disk_source.stem}_psc.py", out / f"{stem}_psc.py")
    module = importlib.import_module(stem)
    assert module.model._generated.from_disk is False
    assert "np.tanh(x * w) * 2.0" in module.model.generated_source
    assert module.repeat._generated.from_disk is True    # unchanged function: still reused
    _check_disk_model_results(module, double=True)


def test_missing_generated_module_transpiles_in_memory(disk_source):
    module = importlib.import_module(disk_source.stem)
    assert module.model._generated.from_disk is False
    _check_disk_model_results(module)


def test_moved_function_does_not_reuse_line_comments_of_the_old_position(disk_source):
    """Lines inserted above an unchanged function: its text (and hash) is the same, but
    the generated module's `# file.py:LINE` comments now point at the wrong lines.  HLO
    locations and errors must name the function's current lines."""
    out = disk_source.parent / "__psc__"
    assert cli.main([str(disk_source), "-o", str(out)]) == 0
    stem = f"{disk_source.stem}_moved"
    text = disk_source.read_text()
    moved = text.replace("\n\n\n@jit_ps\ndef model", "\nEXTRA = 1\nMORE = 2\n\n\n@jit_ps\ndef model")
    assert moved != text
    path = disk_source.parent / f"{stem}.py"
    path.write_text(moved)
    shutil.copy(out / f"{disk_source.stem}_psc.py", out / f"{stem}_psc.py")
    module = importlib.import_module(stem)
    x, w = np.ones(3), np.ones(3)
    tanh_line = line_of(str(path), "h = np.tanh(x * w)")
    [tanh] = [line for line in module.model.lower(x, w).splitlines()
              if '"stablehlo.tanh"' in line]
    assert f'loc("{path}":{tanh_line}:' in tanh
    _check_disk_model_results(module)


def test_generated_dir_argument(disk_source, tmp_path):
    gen = tmp_path / "elsewhere"
    assert cli.main([str(disk_source), "-o", str(gen)]) == 0
    module = importlib.import_module(disk_source.stem)
    assert module.model._generated.from_disk is False       # not in __psc__/ next to it
    f = jit_ps(module.model.__wrapped__, generated_dir=str(gen))
    assert f._generated.from_disk is True
    assert f.generated_source == (gen / f"{disk_source.stem}_psc.py").read_text()
    r = jit_ps(module.repeat.__wrapped__, static_argnames="k", generated_dir=str(gen))
    assert r._generated.from_disk is True
    x, w = np.ones((2, 3)), np.arange(3.0)
    assert_same(f(x, w), np.tanh(x * w).sum(axis=0))
    assert_same(r(w, 1), w * 0.5 + 1.0)


def test_generated_dir_environment_variable(disk_source, tmp_path, monkeypatch):
    gen = tmp_path / "from_env"
    assert cli.main([str(disk_source), "-o", str(gen)]) == 0
    monkeypatch.setenv("PSC_GENERATED_DIR", str(gen))
    module = importlib.import_module(disk_source.stem)
    assert module.model._generated.from_disk is True
    assert module.repeat._generated.from_disk is True
    _check_disk_model_results(module)
    # An explicit generated_dir wins over the variable.
    f = jit_ps(module.model.__wrapped__, generated_dir=str(tmp_path / "nothing_here"))
    assert f._generated.from_disk is False


def test_sub_folder_modules_written_by_a_directory_run_are_found(tmp_path, monkeypatch):
    """`psc-transpile SRC_DIR -o GEN` keeps sub-folders (GEN/sub/deeper/x_psc.py).  With
    PSC_GENERATED_DIR=GEN, a jit_ps function of SRC_DIR/sub/deeper/x.py must find its
    up-to-date module there, as one of SRC_DIR/x.py does."""
    stem = f"psc_deep_model_{next(_counter)}"
    root = tmp_path / "project"
    deep = root / "sub" / "deeper"
    deep.mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, "disk_model.py"), deep / f"{stem}.py")
    shutil.copy(os.path.join(FIXTURES, "disk_model.py"), root / f"{stem}_top.py")
    gen = tmp_path / "gen"
    assert cli.main([str(root), "-o", str(gen)]) == 0
    assert (gen / "sub" / "deeper" / f"{stem}_psc.py").is_file()
    monkeypatch.setenv("PSC_GENERATED_DIR", str(gen))
    monkeypatch.syspath_prepend(str(deep))
    monkeypatch.syspath_prepend(str(root))
    try:
        top = importlib.import_module(f"{stem}_top")
        deep_module = importlib.import_module(stem)
    finally:
        sys.modules.pop(stem, None)
        sys.modules.pop(f"{stem}_top", None)
    assert top.model._generated.from_disk is True
    _check_disk_model_results(deep_module)
    assert deep_module.model._generated.from_disk is True


def test_bad_static_declarations_fail_at_definition():
    from transpiler import PSCValueError
    with pytest.raises(PSCValueError, match="not_a_parameter"):
        jit_ps(plain_scale, static_argnames="not_a_parameter")
    with pytest.raises(PSCValueError, match="static_argnums 5"):
        jit_ps(plain_scale, static_argnums=5)
    f = jit_ps(plain_scale, static_argnums=-1)      # negative positions count from the end
    assert_same(f(np.arange(2.0), 3.0), np.arange(2.0) * 3.0)
    assert_same(f(np.arange(2.0), factor=3.0), np.arange(2.0) * 3.0)
    assert f.cache_info().misses == 1


# --- jit_ps of transforms and of wrapped functions ----------------------------------------------

def _sine_total(x):
    return np.sum(np.sin(x) * SCALE)


SCALE = 1.5


def _doubled(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(x) * 2.0
    return wrapper


@_doubled
def _doubled_sine_total(x):
    return np.sum(np.sin(x))


@pytest.mark.parametrize("transform,oracle", [
    ("grad", lambda x: np.cos(x) * SCALE),
    ("value_and_grad", lambda x: (np.sum(np.sin(x) * SCALE), np.cos(x) * SCALE)),
    ("jacfwd", lambda x: np.cos(x) * SCALE),
    ("jacrev", lambda x: np.cos(x) * SCALE),
    ("hessian", lambda x: np.diag(-np.sin(x) * SCALE)),
])
def test_jit_ps_of_a_transform_compiles_the_transform(transform, oracle):
    """``jit_ps(grad(f))`` is jax.jit(jax.grad(f)): the derivative, not ``f`` (the
    transform's wrapper says it wraps ``f``; its source must not be taken for ``f``'s)."""
    import transpiler
    x = np.array([0.1, -0.7, 1.3], np.float32)
    compiled = jit_ps(getattr(transpiler, transform)(_sine_total))
    ours, expected = compiled(x), oracle(x)
    for got, want in zip(ours if isinstance(ours, tuple) else [ours],
                         expected if isinstance(expected, tuple) else [expected]):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
        assert np.asarray(got).dtype == np.float32
    assert compiled(x + 1) is not None and compiled.cache_info().misses == 1


def test_jit_ps_of_a_functools_wraps_wrapper_runs_the_wrapper():
    x = np.array([0.1, 0.2])
    compiled = jit_ps(_doubled_sine_total)
    assert_same(compiled(x), _doubled_sine_total(x))
    assert compiled.__name__ == "_doubled_sine_total"


@jit_ps
def _doubling(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


def test_jit_ps_of_a_jit_ps_function_takes_the_new_options():
    x = np.array([1.0, 3.0])
    static = jit_ps(_doubling, static_argnames="n")
    assert_same(static(x, 3), _doubling.__wrapped__(x, 3))
    assert_same(_doubling(x, 3), _doubling.__wrapped__(x, 3))
    assert static.static_argnames == ["n"] and not _doubling.static_argnames
