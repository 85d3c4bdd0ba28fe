"""Illegal control flow over traced values: the exact error class, words of the message
and hint, and the exact source line (and column) in `cf_corpus/illegal.py`.

Expected lines are found in the fixture text by their markers (``# ERROR-HERE:<case>`` on
the line the error points at, ``# NAMED:<case>`` on other lines the message must name).
Definition-time errors are raised by ``jit_ps(fn)`` itself; the others by the first call.
Each case also runs the plain function where Python accepts it, to show the error is the
PSC subset's and not the program's.
"""
from __future__ import annotations

import dataclasses
import os
import re

import numpy as np
import pytest

from cf_corpus import illegal as I
from transpiler import (PSCError, PSCNameError, PSCShapeError, PSCTracedValueError,
                        PSCTypeError, PSCValueError, jit_ps)

FIXTURE = os.path.abspath(I.__file__)
with open(FIXTURE, encoding="utf-8") as _handle:
    _LINES = _handle.read().splitlines()


def marked(tag: str, case: str) -> list[int]:
    """1-based lines ending with ``# <tag>:<case>``."""
    return [k + 1 for k, text in enumerate(_LINES)
            if re.search(rf"# {tag}:{re.escape(case)}$", text.rstrip())]


@dataclasses.dataclass
class Illegal:
    case: str                 # marker name
    fn: object
    args: tuple
    error: type
    words: tuple              # substrings of the message
    hint: tuple = ()          # substrings of the hint (any one of each inner tuple)
    at_definition: bool = False
    plain_ok: bool = True     # plain Python runs the function without raising
    span: str | None = None   # the sub-expression the caret spans (else: the statement)

    @property
    def id(self):
        return self.case


def ones(*shape, dtype=np.float64):
    return np.ones(shape, dtype)


CASES = [
    Illegal("one_branch", I.defined_in_one_branch, (ones(3),), PSCNameError,
            ("'y'", "one branch", "else"), ("y",), at_definition=True),
    Illegal("else_only", I.defined_in_else_only, (-ones(3),), PSCNameError,
            ("'w'", "one branch"), ("w",), at_definition=True, plain_ok=False),
    Illegal("append", I.list_grows_append, (ones(3),), PSCTypeError,
            ("seen",), ("static_range",), at_definition=True),
    Illegal("append_for", I.list_grows_append_for, (np.array([1.0, -1.0]),), PSCTypeError,
            ("positives",), ("static_range",), at_definition=True),
    Illegal("append_len", I.list_grows_len_only, (8 * ones(3),), PSCTypeError,
            ("seen",), ("static_range",), at_definition=True),
    Illegal("concat", I.list_grows_concat, (ones(3),), PSCTypeError,
            ("seen", "structure", "container"), ("static_range",)),
    Illegal("dtype", I.dtype_changes, (np.arange(20, dtype=np.int32),), PSCTypeError,
            ("k ", "int32", "float64"), ("astype", "static_range")),
    Illegal("dtype_for", I.dtype_changes_in_for, (np.arange(3, dtype=np.int32), 3),
            PSCTypeError, ("k ", "int32", "float64"), ("astype",)),
    Illegal("shape", I.shape_changes, (ones(3),), PSCShapeError,
            ("x ", "(3,)", "(6,)"), ("shape",)),
    Illegal("branch_shapes", I.branch_shapes, (ones(3),), PSCShapeError,
            ("y ", "(2,)", "(3,)", "if branch", "else branch"), ("shape",)),
    Illegal("branch_dtypes", I.branch_dtypes, (ones(3, dtype=np.int32),), PSCTypeError,
            ("r ", "float32", "int32", "if branch", "else branch"), ("astype",)),
    Illegal("carried_string", I.carried_string, (ones(3),), PSCTypeError,
            ("str", "cannot be carried"), ("arrays",)),
    Illegal("list_index", I.traced_list_index, ([1.5, 2.0, 3.0], ones(3)),
            PSCTracedValueError, ("traced",), ("static",), span="params[i]"),
    Illegal("list_index_for", I.traced_list_index_for, ([1.0, 2.0], ones(2), 2),
            PSCTracedValueError, ("traced",), ("static",), span="params[i]"),
    Illegal("traced_shape", I.traced_shape, (ones(3), 3), PSCTracedValueError,
            ("shape", "traced"), ("static",), span="np.zeros(n)"),
    Illegal("traced_step", I.traced_step, (ones(4), 2), PSCTracedValueError,
            ("step", "static"), ("static",)),
    Illegal("ambiguous_if", I.ambiguous_if, (ones(3),), PSCValueError,
            ("ambiguous", "3 elements"), ("a.any()", "a.all()"), plain_ok=False),
    Illegal("ambiguous_while", I.ambiguous_while, (ones(3),), PSCValueError,
            ("ambiguous",), ("a.any()", "a.all()"), plain_ok=False),
    Illegal("ambiguous_and", I.ambiguous_and, (ones(3), ones(3)), PSCValueError,
            ("ambiguous",), ("a.any()", "a.all()"), plain_ok=False),
    Illegal("iterate_0d", I.iterate_0d, (ones(3),), PSCTypeError, ("0-d",),
            plain_ok=False),
]


def _raise(c: Illegal) -> PSCError:
    if c.at_definition:
        with pytest.raises(c.error) as info:
            jit_ps(c.fn)
        return info.value
    f = jit_ps(c.fn)          # legal syntax: wrapping succeeds
    with pytest.raises(c.error) as info:
        f(*c.args)
    return info.value


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_error_class_message_and_line(c: Illegal):
    lines = marked("ERROR-HERE", c.case)
    assert len(lines) == 1, (c.case, lines)
    line = lines[0]
    err = _raise(c)
    assert type(err) is c.error
    for word in c.words:
        assert word in err.message, (word, err.message)
    for word in c.hint:
        assert err.hint is not None and word in err.hint, (word, err.hint)
    # the user's line, in the user's file, at the culprit sub-expression's columns, or at
    # the statement's (from its first column; to its end when the error is raised while
    # it runs, at the column alone when the definition is refused)
    assert err.location is not None, f"{c.case}: no location: {err}"
    assert os.path.abspath(err.location.file) == FIXTURE
    assert err.location.line == line, (err.location.line, line, str(err))
    text = _LINES[line - 1]
    indent = len(text) - len(text.lstrip())
    code = text.split("  #")[0]
    if c.span is not None:
        start, end = code.index(c.span), code.index(c.span) + len(c.span)
    else:
        start, end = indent, None if c.at_definition else len(code.rstrip())
    assert (err.location.col, err.location.end_col) == (start, end), str(err)
    report = str(err).split("\n")
    assert report[0].startswith(f"{err.location.file}:{line}:{start + 1}: {err.kind}: ")
    assert report[1] == "    " + text.strip()
    assert report[2] == "    " + " " * (start - indent) + "^" * ((end or start + 1) - start)
    for other in marked("NAMED", c.case):
        assert f"line {other}" in err.message, (other, err.message)


def test_branch_errors_name_both_branches():
    """Both branches' lines appear: the if's own line and the else branch's line."""
    for fn, case, arg in [(I.branch_shapes, "branch_shapes", ones(3)),
                          (I.branch_dtypes, "branch_dtypes", ones(3, dtype=np.int32))]:
        with pytest.raises(PSCError) as info:
            jit_ps(fn)(arg)
        (if_line,), (else_line,) = marked("ERROR-HERE", case), marked("NAMED", case)
        message = info.value.message
        assert f"if branch (line {if_line})" in message
        assert f"else branch (line {else_line})" in message


@pytest.mark.parametrize("c", [c for c in CASES if c.plain_ok], ids=lambda c: c.id)
def test_plain_python_accepts_it(c: Illegal):
    """The oracle: these programs are fine Python, only outside the PSC subset."""
    c.fn(*c.args)


@pytest.mark.parametrize("c", [c for c in CASES if not c.plain_ok], ids=lambda c: c.id)
def test_plain_python_rejects_it_too(c: Illegal):
    with pytest.raises(Exception):
        c.fn(*c.args)


def test_definition_errors_do_not_wait_for_a_call():
    """A name undefined on one path is reported when jit_ps is applied, before any
    signature is built."""
    for c in CASES:
        if c.at_definition:
            with pytest.raises(c.error):
                jit_ps(c.fn)


def test_legal_neighbours_compile():
    """The same shapes of code, written legally, run and match plain Python (so each error
    above is about the illegal part, not the construct)."""
    from conftest import assert_same

    def both_branches(x):
        if x.sum() > 0:
            y = x * 2.0
        else:
            y = x
        return y

    def preallocated(x):
        out = np.zeros(3)
        i = 0
        while x.sum() > 1.0 and i < 3:
            out[i] = x.sum()
            x = x * 0.5
            i += 1
        return out

    def kept_dtype(k):
        while k.sum() > 10:
            k = k // 2
        return k

    for fn, arg in [(both_branches, ones(3)), (both_branches, -ones(3)),
                    (preallocated, ones(3)), (kept_dtype, np.arange(20, dtype=np.int32))]:
        assert_same(jit_ps(fn)(arg), fn(arg))
