"""Control flow over traced values on a corpus of plain functions (`cf_corpus.functions`).

Each function is plain Python + NumPy, so calling it is the oracle: ``jit_ps(fn)(*args)``
must give the same values, dtypes and structure on every input.  The inputs of a case are
chosen to take *different* paths (a branch taken and not taken, zero trips and several, an
early exit and none).  Every result leaf comes back as an array, so a Python number the
plain function returns is compared as ``np.asarray(number)`` (a Python int is int64, a
float float64, a bool bool).

Each function is wrapped by `jit_ps` once (`_jitted`), so a signature compiles once; the
cache test checks ``misses`` equals the number of distinct signatures of its inputs.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Callable

import numpy as np
import pytest

from cf_corpus import functions as C
from conftest import assert_same
from transpiler import jit_ps


# --- inputs ---------------------------------------------------------------------------------

def f64(*values):
    return np.array(values, dtype=np.float64)


def f32(*values):
    return np.array(values, dtype=np.float32)


def i32(*values):
    return np.array(values, dtype=np.int32)


def i64(*values):
    return np.array(values, dtype=np.int64)


def u8(*values):
    return np.array(values, dtype=np.uint8)


def bools(*values):
    return np.array(values, dtype=np.bool_)


def m64(rows):
    return np.array(rows, dtype=np.float64)


def m32(rows):
    return np.array(rows, dtype=np.float32)


SYM3 = m64([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]])
DIAG = m64([[3.0, 0.0], [0.0, 1.0]])


@dataclasses.dataclass
class Case:
    fn: Callable
    inputs: list            # argument tuples, each taking a different path
    static: tuple = ()      # static_argnames
    rtol: float = 1e-6
    atol: float = 1e-12

    @property
    def id(self):
        return self.fn.__name__


def case(fn, *inputs, static=(), rtol=1e-6, atol=1e-12):
    return Case(fn, [tuple(i) if isinstance(i, tuple) else (i,) for i in inputs], static,
                rtol, atol)


CASES = [
    # --- if / elif / else ---
    case(C.if_both_branches, f64(1, 2, -0.5), f64(-1, -2, 0.5), f32(1, 2, 3), f32(-3, 0, 1)),
    case(C.if_modify_one_branch, f64(1, 2), f64(-1, -2)),
    case(C.if_elif_else, f64(1, 1), f64(0.2, 0.3), f64(-3, -4)),
    case(C.if_nested, (f64(1, 2, 3), 1.5), (f64(-1, 2, 3), 1.5), (f64(0.1, 0.2), 1.0),
         (f64(-1, -2), 1.0)),
    case(C.if_promote_int, f64(1.0), f64(-1.0)),
    case(C.if_two_outputs, (f64(1, 2), f64(3, 4)), (f64(1, 2), f64(-3, -4))),
    case(C.if_size1_element, f64(2, -1, 3), f64(-2, 1, 3), f32(0.5, 1), f32(-0.5, 1)),
    case(C.if_equals_true, i32(1, 2), i32(-5, 2)),
    case(C.if_size1_array, (f64(0.5), f64(1, 2, 3)), (f64(-0.5), f64(1, 2, 3)),
         (np.float64(2.0), f64(1, 2)), (np.float64(-2.0), f64(1, 2))),
    case(C.if_traced_and_static, (f64(1, 2), True), (f64(-1, -2), True), (f64(1, 2), False),
         static=("flag",)),
    case(C.if_int_array, i32(2, 4), i32(1, 2), i64(3, 3), i64(7, 0)),
    case(C.if_bool_array, (bools(True, False, True), f64(1, 2, 3)),
         (bools(False, False, False), f64(1, 2, 3))),
    case(C.loop_inside_if, f64(1, 2), f64(-2.5, -1), f64(0.0, 0.0)),
    case(C.if_then_static_loop, f64(1, 2), f64(-1, 0), f64(10, 0)),
    # --- while ---
    case(C.while_halve_count, f64(4, -3), f64(0.5, 0.2), f32(10, 1)),
    case(C.while_float_acc, (f32(0.5, 1, 2), 3.0), (f32(0.5, 1, 2), 0.2),
         (f32(0.25), 1.0), rtol=1e-5),
    case(C.while_true_break, f64(8, 1), f64(0.5, 0.1), f32(3, 2)),
    case(C.while_else, (f64(1, 5, 2), 3.0), (f64(1, 2), 3.0), (f64(7, 1), 3.0)),
    case(C.while_continue, f64(1, -2, 3), f64(-1, -1), f64(2, 2)),
    case(C.while_traced_bound, 0, 5, 1),
    case(C.while_and_test, (f64(8, 1), 0.5), (f64(1e9), 0.5), (f64(0.1), 0.5)),
    case(C.while_zero_trip, f64(1, 2), f64(60, 60)),
    case(C.while_tuple_state, f64(4, 4), f64(0.5, 0.2)),
    case(C.while_dict_state, f64(1.0, 0.5), f64(0.05)),
    case(C.while_list_state, f64(2, 1), f64(-1.0)),
    case(C.while_int32_counter, np.int32(37), np.int32(1), np.int32(2)),
    # --- algorithms ---
    case(C.gcd, (48, 18), (7, 0), (np.int32(12), np.int32(8)), (17, 5)),
    case(C.collatz_steps, 1, 6, 27),
    case(C.bisection, (2.0, 0.0, 2.0), (27.0, 0.0, 5.0), (1.0, 1.0, 1.0)),
    case(C.newton_sqrt, f64(2, 9, 0.25), f64(1.0)),
    case(C.newton_iters, (f64(2, 9), 1e-10), (f64(1, 1), 1e-10)),
    case(C.running_max, f64(1, 3, 2, 5, 4), f64(5, 4, 3), i32(-1, 7, 3, 9)),
    case(C.argmax_loop, f64(1, 3, 2, 5, 4), f64(5, 4, 3), i32(-1, 7, 3, 9)),
    case(C.bubble_sort_static, f64(3, 1, 2), f64(1, 2, 3), i32(5, -1, 4, 0)),
    case(C.bubble_sort_range, f64(3, 1, 2), f64(1, 2, 3), i32(5, -1, 4, 0)),
    case(C.power_iteration, (DIAG, 1e-10), (SYM3, 1e-10), (SYM3, 1e3)),
    case(C.cumprod_early_stop, (f64(1, 2, 3, 4), 100.0), (f64(2, 3, 4, 5), 10.0),
         (f64(20, 1), 10.0)),
    case(C.fib_traced, 0, 1, 10),
    case(C.int_sqrt, 0, 15, 16),
    case(C.digit_sum, 0, 12345, np.int32(907)),
    # --- for over range ---
    case(C.for_static_range_traced_state, f64(1, 2, 3, 4), f32(1, 2, 3, 4, 5)),
    case(C.for_traced_bound, (f64(1, 2, 3), 0), (f64(1, 2, 3), 3)),
    case(C.for_start_stop, (f64(1, 2, 3, 4), 1, 4), (f64(1, 2, 3, 4), 3, 3),
         (f64(1, 2, 3, 4), 4, 2)),
    case(C.for_negative_step, (f64(1, 2, 3, 4), 4), (f64(1, 2, 3, 4), 0),
         (f64(1, 2, 3, 4), 2)),
    case(C.for_negative_step_two, f64(1, -2, 3, 4, -5), f64(-1, -1)),
    case(C.for_zero_trip_keeps_var, (f64(1, 2, 3), 0), (f64(1, 2, 3), 3)),
    case(C.for_var_after_loop, (f64(1, 2, 3), 1), (f64(1, 2, 3), 3)),
    case(C.for_array_rows, m64([[1, 2], [-3, 1], [0.5, 0.5]]), m64([[-1, -1], [-2, 0]]),
         m32([[1, 1], [2, 2]])),
    case(C.for_array_rows_break, m64([[1, 2], [3, 1]]), m64([[1, 2], [-3, 1], [1, 1]]),
         m64([[-1, 2]]), np.zeros((0, 2))),
    case(C.for_array_elements_last, f64(1, -2, 3, -4), f64(-1, -2)),
    case(C.for_python_list, ([f64(1, 0), f64(0, 1)], f64(1, 1)), ([f64(-1, -1)], f64(1, 1)),
         ([f64(1, 0), f64(0, 1)], f64(-5, 1))),
    case(C.for_zip_arrays, (f64(3, 1, 2), f64(1, 2, 0)), (f64(0, 0), f64(1, 1))),
    case(C.for_enumerate_array, f64(1, 5, 3), f64(5, 1)),
    case(C.for_static_range_branch, f64(5, 5), f64(-1, 0), f64(0.5, 0.8)),
    case(C.for_continue, f64(1, -2, 3), f64(-1, -2)),
    case(C.nested_break_inner, (m64([[0, 1, 0], [0, 0, 0], [2, 0, 0]]), 0.5),
         (m64([[0, 1, 0], [0, 0, 0], [2, 0, 0]]), 100.0)),
    case(C.nested_continue_outer_state, m64([[1, 2], [-5, 1], [3, 3]]), m64([[-1, -1]])),
    case(C.for_loop_in_while, f64(4, 2), f64(0.1, 0.2)),
    case(C.for_over_rows_float_acc, m32([[1, 2, 3], [-1, 0, -2]]), m32([[5, 4]]), rtol=1e-5),
    case(C.for_traced_bound_int_array, (i32(1, 2), 0), (i32(1, 2), 4)),
    # --- return in every nesting ---
    case(C.return_in_for_in_if, (f64(1, 5, 2), 3.0), (f64(1, 2, 2), 3.0),
         (f64(-9, 5, -1), 3.0)),
    case(C.return_in_nested_loops, (m64([[0, 1], [5, 0]]), 2.0), (m64([[0, 1], [5, 0]]), 9.0),
         (m64([[3, 1], [5, 0]]), 2.0)),
    case(C.return_elif_chain, f64(2, 2), f64(0.5, 0.5), f64(-0.5, -0.5), f64(-3, -3)),
    case(C.return_both_branches, f64(1, -2), f64(-1, -2)),
    case(C.return_tuple_early, f64(-1, -2), f64(1, 2)),
    case(C.return_dict_early, f64(1, 2), f64(-1, 2)),
    case(C.return_in_while, f64(3, 3), f64(0.1, 0.1), f64(0, 0)),
    case(C.return_in_while_true, (48, 18), (5, 0), (0, 3)),
    case(C.return_after_loop_var, f64(1, 0, 2), f64(1, 2), f64(0, 0)),
    case(C.return_in_for_over_rows, m64([[-1, 2], [1, 2], [3, 3]]), m64([[-1, 2], [0, 1]])),
    # --- traced and / or / not / ifexp / chained comparisons ---
    case(C.traced_and, (f64(1), f64(1)), (f64(1), f64(-1)), (f64(-1), f64(1))),
    case(C.traced_or_value, (f64(1), f64(-5)), (f64(-1), f64(1)), (f64(-1), f64(-1))),
    case(C.traced_not, f64(1.0), f64(-2.0)),
    case(C.traced_ifexp, f64(1, 2), f64(-1, -2)),
    case(C.chained_in_band, (f64(1, 2), 0.0, 3.0), (f64(1, 2), 2.0, 3.0),
         (f64(np.nan, 1), 0.0, 3.0), (f64(5.0), 0.0, 3.0)),
    case(C.chained_three, f64(1, 2, 3), f64(3, 2, 1), f64(1, 3, 2)),
    case(C.ifexp_in_loop, f64(1, -2, 3), f64(-1.0)),
    # --- pytrees ---
    case(C.tuple_in_for, f64(1, 2, 3), f32(0.5, 2)),
    case(C.dict_in_branch, f64(1, 2), f64(-1, -2)),
    case(C.list_in_for_with_update, f64(3, 1, 4, 1, 5), f64(2.0)),
    case(C.nested_pytree_loop, f64(2, 1), f64(-1.0)),
    # --- helpers inside loops and branches ---
    case(C.helper_in_loop, (f64(0.5, 0.5), 3.0), (f64(0.1, -0.2), 1.0)),
    case(C.helper_with_loop_in_branch, f64(4, 3), f64(-1, -2)),
    case(C.helper_with_return_in_while, f64(3, 1), f64(0.5, 0.5), f64(-3, 0.2)),
    case(C.helper_tuple_in_loop, (f64(1, 2), f64(0.5, 0.5), 0), (f64(1, 2), f64(0.5, 0.5), 3)),
    # --- the explicit primitives ---
    case(C.prim_while_loop, f64(4, 1), f64(0.5)),
    case(C.prim_cond, f64(1.0), f64(-1.0)),
    case(C.prim_fori_loop, (f64(1, 2, 3), 0), (f64(1, 2, 3), 3)),
    case(C.prim_switch, (0, f64(1, 2)), (1, f64(1, 2)), (2, f64(1, 2)), (5, f64(1, 2)),
         (-1, f64(1, 2))),
    case(C.prim_static_range, f64(1, 2), f32(0.5, 3)),
    case(C.prim_cond_in_loop, f64(5, 5), f64(-1, 0)),
    case(C.prim_fori_static_bounds, f64(1, 2), f32(1, 2)),
    # --- dtypes ---
    case(C.int_running_sum_until, (i32(1, 2, 3, 4), 5), (i32(1, 2), 100), (i32(3, 10), 5)),
    case(C.bool_any_loop, bools(False, False), bools(False, True, False)),
    case(C.bool_count_loop, bools(False, False), bools(True, True, False)),
    case(C.float32_promoted_acc, f32(1, 2, 3), f32(0.5), rtol=1e-5),
    case(C.float64_mixed, (f64(1, 2), f32(0.5)), (f64(-1, -2), f32(0.5))),
    case(C.int_to_float_bound, (f64(1, 2, 3), 0), (f64(1, 2, 3), 3)),
    case(C.uint8_loop, u8(3, 7, 2), u8(9, 1)),
    # --- variables set under a traced decision, then tested again ---
    case(C.count_then_branch, f64(1, 2, -3), f64(1, -2, -3)),
    case(C.flag_then_while, f64(1, 2), f64(-1, -2)),
    # --- static containers ---
    case(C.for_local_tuple, f64(1, 2), f64(-1, -2), f64(0.1, 0.2)),
    case(C.for_zip_static_lists, f64(1, 2), f64(-1, -2), f64(0.1, -0.3)),
]

assert len(CASES) >= 80, len(CASES)


# --- running --------------------------------------------------------------------------------

_JITTED: dict = {}


def _jitted(c: Case):
    if c.id not in _JITTED:
        _JITTED[c.id] = jit_ps(c.fn, static_argnames=c.static)
    return _JITTED[c.id]


def _expected(value):
    """The plain result with Python numbers as the arrays the compiled code returns."""
    if isinstance(value, (tuple, list)):
        return type(value)(_expected(v) for v in value)
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    return np.asarray(value)


def _copy(args):
    """Inputs the plain function cannot disturb (the comparison uses fresh copies)."""
    if isinstance(args, (tuple, list)):
        return type(args)(_copy(a) for a in args)
    if isinstance(args, dict):
        return {k: _copy(v) for k, v in args.items()}
    return args.copy() if isinstance(args, np.ndarray) else args


def _signature_key(c: Case, args):
    """What makes a signature differ: structure, shape/dtype/weakness per leaf, statics."""
    names = list(inspect.signature(c.fn).parameters)

    def key(value):
        if isinstance(value, (tuple, list)):
            return (type(value).__name__, tuple(key(v) for v in value))
        if isinstance(value, dict):
            return ("dict", tuple((k, key(value[k])) for k in sorted(value)))
        if type(value) in (bool, int, float, complex):
            return ("weak", type(value).__name__)
        return (np.shape(value), np.asarray(value).dtype.str)
    return tuple(("static", a) if n in c.static else key(a) for n, a in zip(names, args))


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_matches_plain_python(c: Case):
    assert len(c.inputs) >= 2
    f = _jitted(c)
    for args in c.inputs:
        expected = c.fn(*_copy(args))
        actual = f(*_copy(args))
        try:
            assert_same(actual, _expected(expected), c.rtol, c.atol)
        except AssertionError as err:
            raise AssertionError(f"{c.id}{args!r}: got {actual!r}, expected "
                                 f"{expected!r}: {err}") from None


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_compiles_once_per_signature(c: Case):
    f = _jitted(c)
    for args in c.inputs + c.inputs:
        f(*_copy(args))
    distinct = {_signature_key(c, args) for args in c.inputs}
    assert f.cache_info().misses == len(distinct)


def test_inputs_take_different_paths():
    """The table's point: inputs of one case do not all give the same result."""
    for c in CASES:
        results = [repr(_expected(c.fn(*_copy(args)))) for args in c.inputs]
        assert len(set(results)) > 1, c.id


# --- the generated code ---------------------------------------------------------------------

def _line_of(fn, pattern: str, occurrence: int = 0) -> int:
    """The file line of the ``occurrence``-th line of ``fn`` matching ``pattern``."""
    lines, start = inspect.getsourcelines(fn)
    found = [start + k for k, text in enumerate(lines) if re.search(pattern, text)]
    return found[occurrence]


def _generated(fn, static=()):
    return jit_ps(fn, static_argnames=static).generated_source


def test_staged_while_has_named_body_functions():
    text = _generated(C.while_halve_count)
    line = _line_of(C.while_halve_count, r"^\s*while ")
    assert "psc.while_stmt(" in text
    assert f"def while_test_L{line}(" in text
    assert f"def while_body_L{line}(" in text
    assert "psc.for_stmt(" not in text and "psc.if_stmt(" not in text


def test_staged_if_has_named_branch_functions():
    text = _generated(C.if_both_branches)
    line = _line_of(C.if_both_branches, r"^\s*if ")
    assert "psc.if_stmt(" in text
    assert f"def if_true_L{line}(" in text and f"def if_false_L{line}(" in text
    assert "psc.while_stmt(" not in text


def test_staged_for_over_traced_bound_and_rows():
    text = _generated(C.for_traced_bound)
    line = _line_of(C.for_traced_bound, r"^\s*for ")
    assert f"def for_body_L{line}(" in text
    assert "psc.for_stmt(psc.range_(n)" in text
    text = _generated(C.for_array_rows)
    for_line = _line_of(C.for_array_rows, r"^\s*for ")
    if_line = _line_of(C.for_array_rows, r"^\s*if ")
    assert f"def for_body_L{for_line}(" in text
    assert f"def if_true_L{if_line}(" in text


def test_nested_constructs_name_each_line():
    text = _generated(C.nested_break_inner)
    outer = _line_of(C.nested_break_inner, r"^\s*for ", 0)
    inner = _line_of(C.nested_break_inner, r"^\s*for ", 1)
    assert outer != inner
    assert f"def for_body_L{outer}(" in text and f"def for_body_L{inner}(" in text
    assert f"break_L{inner}" in text and f"break_L{outer}" not in text


def test_break_and_return_become_flags():
    text = _generated(C.while_true_break)
    line = _line_of(C.while_true_break, r"^\s*while ")
    assert f"break_L{line} = False" in text and "psc.while_stmt(" in text
    text = _generated(C.return_in_nested_loops)
    assert "do_return = False" in text and "retval = psc.UNDEFINED" in text
    assert text.count("psc.for_stmt(") == 2


@pytest.mark.parametrize("fn", [C.for_local_tuple, C.for_zip_static_lists, C.bubble_sort_static,
                                C.for_static_range_branch, C.prim_static_range,
                                C.for_zip_arrays, C.for_enumerate_array,
                                C.if_then_static_loop])
def test_static_containers_are_not_staged(fn):
    text = _generated(fn)
    assert "psc.for_stmt(" not in text
    assert re.search(r"^\s*for .* in ", text, re.MULTILINE)   # still a Python loop


def test_list_argument_unrolls_at_run_time():
    """A list *argument* is traced for the analysis, so its loop is written as for_stmt;
    the runtime then unrolls it (one iteration per element, no staged loop)."""
    f = jit_ps(C.for_python_list)
    assert "psc.for_stmt(xs," in f.generated_source
    assert "while" not in f.lower([f64(1, 0), f64(0, 1)], f64(1, 1))


def test_static_test_stays_python():
    text = _generated(C.if_traced_and_static, ("flag",))
    # `flag and x.sum() > 0`: the `and` has a traced operand, so it is converted, and the
    # if on its result is staged
    assert "psc.and_(flag" in text and "psc.if_stmt(" in text
    text = _generated(C.bubble_sort_static)
    assert "psc.if_stmt(" in text      # the swap is a traced if inside static loops
