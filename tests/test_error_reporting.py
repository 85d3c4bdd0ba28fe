"""Errors at the culprit (issue 11, item 5).

* Python's own errors raised while a program is built (``[1.0, 2.0] ** 2``, ``(1, 2)[3]``)
  are PSCErrors at the user's line that still derive from the original class, chained to
  it; the plain function raises the same class (the oracle).
* Carets span the failing sub-expression, found from the instruction's column range.
* Tracebacks hide this project's frames (``PSC_TRACEBACK=full`` shows them).
* Python lists and tuples (of numbers, of traced values) are accepted wherever NumPy
  accepts them, with NumPy's dtypes.
* Ufunc methods and attributes: NumPy's where a rule exists (``.outer`` of every ufunc
  with a rule), else a PSCError at the line.

Expected lines and columns are read from the fixtures (``# ERR:<case>`` markers and the
culprit's text), never hard-coded.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import traceback

import numpy as np
import pytest

from conftest import assert_same
from fixtures import list_operands as L
from fixtures import python_errors as P
from runtime.errors import (PSCError, PSCIndexError, PSCKeyError, PSCTypeError,
                            PSCZeroDivisionError, SourceLocation, from_python_error,
                            psc_class_for)
from runtime.tracebacks import FILTERED_NOTE, TRACEBACK_ENV
from transpiler import (PSCSyntaxError, PSCTracedValueError,
                        PSCUnsupportedCallError, jit_ps)

FIXTURE = os.path.abspath(P.__file__)
with open(FIXTURE, encoding="utf-8") as _handle:
    _LINES = _handle.read().splitlines()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_DIRS = tuple(os.path.join(ROOT, d) + os.sep for d in ("runtime", "transpiler", "emit"))


def marked(case: str) -> int:
    found = [i + 1 for i, text in enumerate(_LINES) if text.rstrip().endswith(f"# ERR:{case}")]
    assert len(found) == 1, (case, found)
    return found[0]


def check_at(err: PSCError, case: str, culprit: str, line: int | None = None,
             hint: bool = True):
    """``err`` points at ``culprit`` on the line marked ``case`` (or at ``line``): file,
    line, columns, the source line and a caret spanning the culprit, then the hint."""
    line = line or marked(case)
    text = _LINES[line - 1]
    start = text.index(culprit)
    loc = err.location
    assert loc is not None and os.path.abspath(loc.file) == FIXTURE, str(err)
    assert (loc.line, loc.col, loc.end_col) == (line, start, start + len(culprit)), str(err)
    report = str(err).split("\n")
    assert report[0].startswith(f"{loc.file}:{line}:{start + 1}: {err.kind}: "), report[0]
    indent = len(text) - len(text.lstrip())
    assert report[1] == "    " + text.strip()
    assert report[2] == "    " + " " * (start - indent) + "^" * len(culprit)
    if hint:
        assert err.hint and report[3] == f"hint: {err.hint}"


def raised(fn, *args):
    with pytest.raises(Exception) as info:
        jit_ps(fn)(*args)
    return info.value


def plain_raises(fn, *args) -> type:
    try:
        fn(*args)
    except Exception as err:   # the oracle: what plain Python raises
        return type(err)
    raise AssertionError("the plain function raised nothing")


# --- Python errors while building ------------------------------------------------------------

PYTHON_ERRORS = [
    # (function, case, culprit, PSC class, the built-in class plain Python raises)
    (P.pow_list, "pow_list", "y ** 2", PSCTypeError, TypeError),
    (P.tuple_index, "tuple_index", "t[3]", PSCIndexError, IndexError),
    (P.zero_division, "zero_division", "1 / n", PSCZeroDivisionError, ZeroDivisionError),
    (P.missing_key, "missing_key", 'd["b"]', PSCKeyError, KeyError),
    (P.static_attribute, "static_attribute", '"abc".width', None, AttributeError),
    (P.bad_literal, "bad_literal", 'int("x1")', None, ValueError),
]


@pytest.mark.parametrize("fn, case, culprit, psc_class, builtin", PYTHON_ERRORS,
                         ids=[c[1] for c in PYTHON_ERRORS])
def test_python_errors_are_psc_errors_at_the_line(fn, case, culprit, psc_class, builtin):
    x = np.ones(3)
    assert plain_raises(fn, x) is builtin
    err = raised(fn, x)
    assert isinstance(err, PSCError) and isinstance(err, builtin)
    if psc_class is not None:
        assert type(err) is psc_class
    assert type(err.__cause__) is builtin   # chained: raise ... from the original
    check_at(err, case, culprit)


def test_error_in_a_helper_points_into_the_helper_and_notes_the_call():
    x = np.ones(3)
    assert plain_raises(P.calls_helper, x) is IndexError
    err = raised(P.calls_helper, x)
    assert isinstance(err, PSCIndexError)
    check_at(err, "in_helper", "t[5]")
    chain = [n for n in err.__notes__ if "in the user's source" in n]
    assert len(chain) == 1
    rows = chain[0].splitlines()[1:]
    assert [r.split(": ", 1)[0].strip().rsplit(":", 2)[1] for r in rows] == [
        str(marked("helper_call")), str(marked("in_helper"))]


def test_the_same_failing_signature_raises_the_same_report_again():
    f = jit_ps(P.tuple_index)
    reports = []
    for _ in range(3):
        with pytest.raises(PSCIndexError) as info:
            f(np.ones(3))
        reports.append((str(info.value), list(info.value.__notes__)))
    assert reports[0] == reports[1] == reports[2]
    assert reports[0][1].count(FILTERED_NOTE) == 1


@pytest.mark.parametrize("original", [TypeError, IndexError, KeyError, ZeroDivisionError,
                                      UnboundLocalError, RecursionError, LookupError,
                                      FloatingPointError])
def test_converted_classes_derive_from_the_original_and_pickle(original):
    location = SourceLocation("model.py", 3, 4, "    y = a + b", 9)
    err = from_python_error(original("boom"), location)
    assert isinstance(err, PSCError) and isinstance(err, original)
    assert psc_class_for(original) is type(err)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err) and str(again) == str(err)
    assert again.location == location


# --- carets ------------------------------------------------------------------------------------

def test_caret_spans_the_failing_call_not_the_assignment():
    err = raised(P.float_of_traced, np.ones(3))
    assert isinstance(err, PSCTracedValueError)
    check_at(err, "float_of_traced", "np.sum(x).item()")


def test_caret_found_whatever_the_spacing():
    err = raised(P.odd_spacing, np.ones(3))
    assert isinstance(err, PSCError) and isinstance(err, ValueError)   # as NumPy
    check_at(err, "odd_spacing", "np.reshape(x,(4,  4))", hint=False)


def test_caret_on_the_second_line_of_a_statement():
    err = raised(P.second_line, np.ones(3))
    assert isinstance(err, PSCError) and isinstance(err, ValueError)   # as NumPy
    check_at(err, "second_line", "np.reshape(x, (2, 2))", hint=False)


def test_caret_drawing():
    err = PSCError("m", SourceLocation("f.py", 1, 8, "    y = a + b  # c", 13), "h")
    assert str(err).split("\n")[1:3] == ["    y = a + b  # c", "        ^^^^^"]
    err = PSCError("m", SourceLocation("f.py", 1, 8, "    y = a + b"), "h")
    assert str(err).split("\n")[2] == "        ^"


# --- tracebacks --------------------------------------------------------------------------------

def _frames(err) -> list[str]:
    return [frame.filename for frame in traceback.extract_tb(err.__traceback__)]


def test_internal_frames_are_hidden(monkeypatch):
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    err = raised(P.float_of_traced, np.ones(3))
    assert not [f for f in _frames(err) if f.startswith(OWN_DIRS) or f.startswith("<psc")]
    assert FILTERED_NOTE in err.__notes__
    # the rendered traceback: the caller's line, the message; a few lines in all
    text = "".join(traceback.format_exception(err))
    assert __file__ in text and len(text.splitlines()) < 15, text


def test_full_tracebacks_on_request(monkeypatch):
    monkeypatch.setenv(TRACEBACK_ENV, "full")
    err = raised(P.float_of_traced, np.ones(3))
    assert [f for f in _frames(err) if f.startswith(OWN_DIRS)]
    assert FILTERED_NOTE not in getattr(err, "__notes__", [])


def test_definition_errors_are_filtered_too(monkeypatch):
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    from fixtures import unsupported
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(unsupported.uses_try)
    assert not [f for f in _frames(info.value) if f.startswith(OWN_DIRS)]


def test_uncaught_error_prints_the_users_frames_only(tmp_path):
    script = tmp_path / "uncaught.py"
    script.write_text("import numpy as np\nfrom transpiler import jit_ps\n\n"
                      "@jit_ps\ndef f(x):\n    t = (1, 2)\n    return x * t[3]\n\n"
                      "f(np.ones(3))\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop(TRACEBACK_ENV, None)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 1
    err = result.stderr
    assert f'File "{script}", line 9' in err
    assert "PSCIndexError" in err and f"{script}:7:16: index error" in err
    assert not any(d in err for d in OWN_DIRS), err
    full = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=dict(env, **{TRACEBACK_ENV: "full"}), timeout=120)
    assert any(d in full.stderr for d in OWN_DIRS)


# --- lists and tuples as NumPy operands --------------------------------------------------------

@pytest.mark.parametrize("name", sorted(L.CASES))
def test_lists_wherever_numpy_takes_them(name):
    fn = L.CASES[name]
    x = np.array([0.5, 1.5, 2.5])
    assert_same(jit_ps(fn)(x), fn(x))


@pytest.mark.parametrize("name", sorted(L.DTYPE_CASES))
def test_lists_follow_numpy_array_coercion_dtypes(name):
    fn = L.DTYPE_CASES[name]
    k = np.array([3, -2, 5], np.int8)
    assert_same(jit_ps(fn)(k), fn(k))


def test_weak_traced_scalar_in_a_list_counts_as_a_python_number():
    def f(x, s):
        return np.array([x[0], s]), np.sin([s, 1.0])
    args = (np.array([1.0, 2.0], np.float32), 2.5)
    assert_same(jit_ps(f)(*args), f(*args))


# --- ufunc methods and attributes --------------------------------------------------------------

UFUNC_OUTER = [np.add, np.subtract, np.multiply, np.maximum, np.arctan2, np.greater,
               np.power]


@pytest.mark.parametrize("ufunc", UFUNC_OUTER, ids=lambda u: u.__name__)
def test_outer_of_every_ufunc_with_a_rule(ufunc):
    from fixtures import ufunc_outer
    fn = getattr(ufunc_outer, ufunc.__name__)
    x, y = np.array([0.5, 1.5], np.float32), np.array([[1.0, 2.0, 3.0]])
    assert_same(jit_ps(fn)(x, y), fn(x, y))


def test_outer_takes_numpy_arrays_of_python_scalars():
    from fixtures import ufunc_outer
    for fn in (ufunc_outer.scalar_outer, ufunc_outer.list_outer):
        x = np.array([0.5, 1.5], np.float32)
        assert_same(jit_ps(fn)(x), fn(x))


def test_ufunc_reached_without_the_mirror():
    from fixtures import ufunc_outer
    for fn in (ufunc_outer.global_ufunc_call, ufunc_outer.global_ufunc_reduce):
        x = np.array([0.5, 1.5, 2.5])
        assert_same(jit_ps(fn)(x), fn(x))


def test_attribute_probing_keeps_numpys_answers():
    x = np.ones(3)
    assert_same(jit_ps(P.probes_with_hasattr)(x), P.probes_with_hasattr(x))


def test_unsupported_ufunc_method_is_a_psc_error_at_the_line():
    x = np.array([1.0, 2.0, 3.0])
    P.ufunc_method(x)   # NumPy has it: refused here, clearly
    err = raised(P.ufunc_method, x)
    assert isinstance(err, PSCUnsupportedCallError)
    check_at(err, "ufunc_method", "np.heaviside.reduce(x)")
    assert "add.reduce" in err.hint and "outer" in err.hint


@pytest.mark.parametrize("fn, case, culprit", [
    (P.ufunc_attribute, "ufunc_attribute", "np.add.nonexistent"),
    (P.numpy_name, "numpy_name", "np.nonexistent_function"),
    (P.unsupported_method, "unsupported_method", "x.byteswap"),
], ids=["ufunc_attribute", "numpy_name", "unsupported_method"])
def test_unsupported_attributes_are_psc_errors_at_the_line(fn, case, culprit):
    x = np.ones(3)
    if fn is not P.unsupported_method:
        assert plain_raises(fn, x) is AttributeError
    err = raised(fn, x)
    assert isinstance(err, PSCError) and isinstance(err, AttributeError)
    check_at(err, case, culprit)


def test_numpy_values_on_the_left_of_traced_ones():
    from fixtures import ufunc_outer
    for fn in (ufunc_outer.numpy_values_meet_traced, ufunc_outer.inplace_on_static_arrays):
        args = (np.array([0.5, 1.5, 2.5]), 2.5)
        assert_same(jit_ps(fn)(*args), fn(*args))
