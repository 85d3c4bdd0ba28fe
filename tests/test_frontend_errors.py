"""Front-end errors at the user's line: unsupported syntax when `jit_ps` is applied
(tests/fixtures/unsupported.py, decorated_error.py), and errors while a signature is
built, on the first call (tests/fixtures/build_errors.py).  Expected lines and columns are
found in the fixture text (the `# ERR:<case>` markers), never hard-coded."""
from __future__ import annotations

import importlib.util
import itertools
import os
import sys

import numpy as np
import pytest

from conftest import assert_same
from transpiler import (PSCError, PSCShapeError, PSCSyntaxError, PSCTracedValueError,
                        PSCTypeError, PSCUnsupportedCallError, PSCValueError, jit_ps)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
UNSUPPORTED = os.path.join(FIXTURES, "unsupported.py")
BUILD_ERRORS = os.path.join(FIXTURES, "build_errors.py")
DECORATED_ERROR = os.path.join(FIXTURES, "decorated_error.py")
_counter = itertools.count()


def load_module(path: str):
    name = f"psc_error_fixture_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def marked(path: str, case: str, token: str | None = None):
    """(line, col, text) of the line marked ``# ERR:<case>``; ``col`` (1-based) is where
    ``token`` starts in it, or the first non-blank column."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found = [i for i, text in enumerate(lines) if text.rstrip().endswith(f"# ERR:{case}")]
    assert len(found) == 1, (case, found)
    text = lines[found[0]]
    col = text.index(token) if token else len(text) - len(text.lstrip())
    return found[0] + 1, col + 1, text


def check_report(err: PSCError, path: str, line: int, col: int | None, text: str,
                 hint: bool = True):
    """The error points at ``path:line[:col]`` and prints the source line and a caret
    under the column, then the hint."""
    assert err.location is not None
    assert err.location.file == path
    assert err.location.line == line
    message = str(err)
    parts = message.split("\n")
    head = f"{path}:{line}:{col}" if col is not None else f"{path}:{line}:"
    assert parts[0].startswith(head), parts[0]
    assert f": {err.kind}: " in parts[0]
    stripped = text.strip()
    assert parts[1] == "    " + stripped
    caret = parts[2]
    # the caret spans the culprit: from the column to the location's end column
    end = err.location.end_col
    width = 1 if end is None else end - err.location.col
    assert width >= 1 and caret.strip() == "^" * width, (caret, err.location)
    assert end is None or end <= len(text.rstrip())
    indent = len(text) - len(text.lstrip())
    assert caret.index("^") - 4 == err.location.col - indent
    if col is not None:
        assert err.location.col == col - 1
    if hint:
        assert err.hint
        assert parts[-1] == f"hint: {err.hint}"
    return message


# --- definition time: unsupported syntax -------------------------------------------------------

DEFINITION_CASES = [
    # (function in unsupported.py, marker, token the caret points at, words in the message)
    ("uses_try", "try", "try", "try"),
    ("uses_with", "with", "with", "with"),
    ("uses_global", "global", "global", "global"),
    ("make_nonlocal", "nonlocal", "nonlocal", "nonlocal"),
    ("uses_yield", "yield", "yield", "generator"),
    ("defines_class", "class", "class", "class"),
    ("uses_del", "del", "del", "del"),
    ("assigns_attribute", "attribute", "y.flags", "attribute"),
    ("mutates_argument", "inplace", "z[0]", "in place"),
    ("mutates_argument_nested", "inplace_nested", "view[0][1]", "in place"),
    ("applies_jit_ps_inside", "jit_inside", "jit_ps(", "jit_ps"),
]


@pytest.fixture(scope="module")
def unsupported():
    return load_module(UNSUPPORTED)


@pytest.mark.parametrize("name, case, token, words", DEFINITION_CASES,
                         ids=[c[1] for c in DEFINITION_CASES])
def test_unsupported_syntax_fails_when_jit_ps_is_applied(unsupported, name, case, token,
                                                         words):
    fn = getattr(unsupported, name)
    if name == "make_nonlocal":
        fn = fn()                      # the closure (indented source)
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(fn)
    err = info.value
    assert isinstance(err, PSCError)
    line, col, text = marked(UNSUPPORTED, case, token)
    check_report(err, UNSUPPORTED, line, col, text)
    assert words in err.message


def test_decorator_form_fails_at_import_time():
    with pytest.raises(PSCSyntaxError) as info:
        load_module(DECORATED_ERROR)
    line, col, text = marked(DECORATED_ERROR, "decorated", "try")
    check_report(info.value, DECORATED_ERROR, line, col, text)


def test_static_argnames_form_also_checks_at_definition(unsupported):
    decorate = jit_ps(static_argnames="x")
    with pytest.raises(PSCSyntaxError) as info:
        decorate(unsupported.uses_global)
    line, col, text = marked(UNSUPPORTED, "global", "global")
    check_report(info.value, UNSUPPORTED, line, col, text)


def test_variable_assigned_in_one_branch_of_a_traced_if(unsupported):
    """The PSC subset: a variable defined in only one branch of a traced `if` and used later
    is an error naming both places: where it is assigned and where it is used."""
    with pytest.raises(PSCError) as info:
        jit_ps(unsupported.assigned_in_one_branch)
    err = info.value
    line, col, text = marked(UNSUPPORTED, "one_branch", "z")
    check_report(err, UNSUPPORTED, line, col, text)
    assert "'z'" in err.message
    use_line, _, _ = marked(UNSUPPORTED, "one_branch_use")
    assert f"line {use_line}" in err.message, err.message


def test_traced_if_is_staged(build_errors):
    f = build_errors.traced_if
    for x in (np.array([1.0, 2.0]), np.array([-3.0, 1.0])):
        assert_same(f(x), f.__wrapped__(x))
    assert f.cache_info().misses == 1         # one executable serves both branches


def test_copy_before_update_is_allowed(unsupported):
    """The counterpart of the in-place check: a rebound argument may be updated."""
    f = jit_ps(unsupported.copies_then_updates)
    x = np.array([5.0, 6.0, 7.0])
    assert_same(f(x), np.array([2.0, 12.0, 14.0]))
    assert_same(x, np.array([5.0, 6.0, 7.0]))          # the argument is untouched


def test_source_unavailable_is_a_syntax_error_with_a_hint():
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return np.tanh(x)\n", namespace)
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(namespace["made_by_exec"])
    err = info.value
    assert "made_by_exec" in err.message and "source" in err.message
    assert err.hint and "hint: " in str(err)


# --- build time (first call): errors at the user's line ------------------------------------------

@pytest.fixture(scope="module")
def build_errors():
    return load_module(BUILD_ERRORS)


BUILD_CASES = [
    # (function, arguments, expected error class, marker, words in the message)
    # A traced `if` is staged (the PSC subset's rule); what stays an error in a Python `if` on a
    # traced value: a multi-element condition (NumPy's ambiguous truth value), branches
    # giving a variable different shapes, and a static variable the traced `if` turned
    # traced, later used where a static value is needed.
    ("ambiguous_if", (np.ones(3),), PSCValueError, "ambiguous_if", "ambiguous"),
    ("branch_shapes", (np.ones(3),), PSCShapeError, "branch_shapes", "shape"),
    ("size_from_traced_if", (np.ones(3),), PSCTracedValueError, "size_from_traced_if",
     "shape"),
    ("traced_float", (np.ones(3),), PSCTypeError, "float", "0-dimensional"),
    ("no_rule", (np.ones(4),), PSCUnsupportedCallError, "array_str", "array_str"),
    ("bad_broadcast", (np.ones(3), np.ones(4)), PSCShapeError, "shape", "(3,)"),
    ("bad_reshape", (np.ones(3),), (PSCShapeError, PSCValueError), "reshape", "reshape"),
    ("traced_shape", (np.ones(3), 3), PSCTracedValueError, "traced_shape", "shape"),
    ("recursive", (np.ones(3),), PSCSyntaxError, "recursion", "recursion"),
    ("calls_recursive_helper", (np.ones(3),), PSCSyntaxError, "helper_recursion",
     "recursion"),
]


@pytest.mark.parametrize("name, args, error, case, words", BUILD_CASES,
                         ids=[c[0] for c in BUILD_CASES])
def test_build_errors_point_at_the_users_line(build_errors, name, args, error, case, words):
    f = getattr(build_errors, name)
    with pytest.raises(PSCError) as info:
        f(*args)
    err = info.value
    assert isinstance(err, error), (type(err).__name__, str(err))
    line, _, text = marked(BUILD_ERRORS, case)
    check_report(err, BUILD_ERRORS, line, None, text, hint=False)
    assert words in err.message
    # The failure is cached (issue 18 item 20): the next call raises the same error again,
    # without building again.
    assert f.cache_info().misses == 1
    with pytest.raises(type(err)) as again:
        f(*args)
    assert str(again.value) == str(err) and f.cache_info().misses == 1


def test_numpy_function_without_rule_at_top_level(tmp_path):
    """The top-level counterpart of np.array_str: a NumPy function with no rule."""
    path = tmp_path / "psc_no_rule_top.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n"
                    "    y = x + 1.0\n    return np.array_repr(y)  # ERR:array_repr\n")
    module = load_module(str(path))
    f = jit_ps(module.f)
    with pytest.raises(PSCUnsupportedCallError) as info:
        f(np.ones(3))
    line, _, text = marked(str(path), "array_repr")
    check_report(info.value, str(path), line, None, text)
    assert "numpy.array_repr" in info.value.message


def test_build_errors_with_static_values_only_do_not_fail(build_errors):
    """The traced-shape case succeeds when the size is static (it is the tracing that is
    rejected, not the code)."""
    f = jit_ps(build_errors.traced_shape.__wrapped__, static_argnames="n")
    y, z = f(np.arange(3.0), 3)
    assert_same(y, np.arange(3.0) * 2.0)
    assert_same(z, np.zeros(3))


def test_unhashable_static_argument_is_a_type_error(build_errors):
    f = build_errors.with_options
    x = np.arange(3.0)
    for call in (lambda: f(x, [2.0, 3.0]), lambda: f(x, options=[2.0, 3.0])):
        with pytest.raises(PSCTypeError) as info:
            call()
        assert "options" in info.value.message and "hashable" in info.value.message
        assert info.value.hint
    assert f.cache_info().misses == 0
    assert_same(f(x, (2.0, 3.0)), x * 2.0)          # a tuple works
    assert f.cache_info().misses == 1
