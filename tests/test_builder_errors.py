"""Ill-formed builder programs raise the right `PSCError` at the builder's current location,
at build time, before anything reaches XLA."""
from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest

from runtime import (Builder, PSCError, PSCShapeError, PSCTypeError, PSCValueError,
                     SourceLocation, StagedFunction, XLACompileError, compile)

FILE, LINE, COL, SOURCE = "model.py", 12, 4, "    y = x + w"

# The modules themselves (``runtime.staged`` the attribute is the decorator function).
staged_module = importlib.import_module("runtime.staged")
client_module = importlib.import_module("runtime.client")
lowering_module = importlib.import_module("runtime.lowering")


def f32(b, index, shape):
    return b.parameter(index, shape, np.float32)


def _while_body_dtype(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: sb.constant(True), lambda sb, s: sb.convert(s, np.float64), x)


def _while_body_shape(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: sb.constant(True),
                 lambda sb, s: sb.broadcast_in_dim(s, (2, 3), (1,)), x)


def _while_body_structure(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: sb.constant(True), lambda sb, s: (s[0], s[1], s[0]), (x, x))


def _while_body_list_for_tuple(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: sb.constant(True), lambda sb, s: [s[0], s[1]], (x, x))


def _while_cond_not_bool(b):
    x = b.parameter(0, (), np.int32)
    b.while_loop(lambda sb, s: s, lambda sb, s: s, x)


def _while_cond_not_scalar(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: sb.is_finite(s), lambda sb, s: s, x)


def _while_cond_python_bool(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: True, lambda sb, s: s, x)


def _while_state_not_values(b):
    b.while_loop(lambda sb, s: sb.constant(True), lambda sb, s: s, (1.0, 2))


def _cond_branch_shapes(b):
    p, x = b.parameter(0, (), np.bool_), f32(b, 1, (3,))
    b.conditional(p, [lambda sb, v: v, lambda sb, v: sb.reshape(v, (3, 1))], x)


def _cond_branch_dtypes(b):
    p, x = b.parameter(0, (), np.bool_), f32(b, 1, (3,))
    b.conditional(p, [lambda sb, v: v, lambda sb, v: sb.convert(v, np.int32)], x)


def _cond_branch_structure(b):
    i, x = b.parameter(0, (), np.int32), f32(b, 1, (3,))
    b.conditional(i, [lambda sb, v: (v, v), lambda sb, v: (v, v), lambda sb, v: {"a": v}], x)


def _cond_float_selector(b):
    p, x = f32(b, 0, ()), f32(b, 1, (3,))
    b.conditional(p, [lambda sb, v: v, lambda sb, v: v], x)


def _cond_vector_selector(b):
    p, x = b.parameter(0, (2,), np.bool_), f32(b, 1, (3,))
    b.conditional(p, [lambda sb, v: v, lambda sb, v: v], x)


def _cond_bool_three_branches(b):
    p, x = b.parameter(0, (), np.bool_), f32(b, 1, (3,))
    b.conditional(p, [lambda sb, v: v] * 3, x)


def _switch_no_branches(b):
    i, x = b.parameter(0, (), np.int32), f32(b, 1, (3,))
    b.conditional(i, [], x)


def _escaped_from_loop_body(b):
    x = f32(b, 0, (3,))
    kept = []

    def body(sb, s):
        y = sb.exp(s)
        kept.append(y)
        return y
    b.while_loop(lambda sb, s: sb.constant(False), body, x)
    b.add(kept[0], x)


def _escaped_from_branch_into_other_branch(b):
    i, x = b.parameter(0, (), np.int32), f32(b, 1, (3,))   # branches built in list order
    kept = []

    def first(sb, v):
        kept.append(sb.neg(v))
        return kept[0]

    def second(sb, v):
        return sb.add(v, kept[0])      # a value of the first branch
    b.conditional(i, [first, second], x)


def _escaped_as_build_output(b):
    x = f32(b, 0, (3,))
    kept = []

    def body(sb, s):
        kept.append(sb.sin(s))
        return kept[-1]
    b.while_loop(lambda sb, s: sb.constant(False), body, x)
    b.build(kept[0])


def _parameter_twice(b):
    f32(b, 0, (3,))
    f32(b, 0, (3,))


def _parameter_in_loop_body(b):
    x = f32(b, 0, (3,))
    b.while_loop(lambda sb, s: sb.constant(False), lambda sb, s: sb.parameter(1, (3,)), x)


def _parameters_not_numbered(b):
    x = f32(b, 0, (3,))
    f32(b, 2, (3,))
    b.build(x)


def _parameter_bad_dtype(b):
    b.parameter(0, (3,), np.dtype("U3"))


def _constant_bad(b):
    b.constant("hello")


def _constant_python_int_too_big(b):
    b.constant(2**70)


def _iota_bool(b):
    b.iota((3,), np.bool_)


def _iota_dimension(b):
    b.iota((3,), np.int32, dimension=1)


def _argmax_empty(b):
    b.argmax(f32(b, 0, (0, 3)), 0)


def _reduce_kind(b):
    b.reduce(f32(b, 0, (3,)), "mean", (0,))


def _reduce_and_float(b):
    b.reduce(f32(b, 0, (3,)), "and", (0,))


def _reduce_dims(b):
    b.reduce(f32(b, 0, (3,)), "sum", (1,))


def _compare_direction(b):
    x = f32(b, 0, (3,))
    b.compare(x, x, "LTE")


def _select_pred_dtype(b):
    x = f32(b, 0, (3,))
    b.select(x, x, x)


def _select_pred_shape(b):
    x, p = f32(b, 0, (3,)), b.parameter(1, (2,), np.bool_)
    b.select(p, x, x)


def _concatenate_shapes(b):
    b.concatenate([f32(b, 0, (2, 3)), f32(b, 1, (2, 4))], 0)


def _pad_negative(b):
    x = f32(b, 0, (3,))
    b.pad(x, b.constant(np.float32(0)), (-2,), (-2,))


def _dynamic_slice_float_index(b):
    x = f32(b, 0, (5,))
    b.dynamic_slice(x, [f32(b, 1, ())], (2,))


def _dynamic_slice_too_big(b):
    x = f32(b, 0, (5,))
    b.dynamic_slice(x, [b.parameter(1, (), np.int32)], (6,))


def _dynamic_update_slice_too_big(b):
    x, u = f32(b, 0, (3,)), f32(b, 1, (4,))
    b.dynamic_update_slice(x, u, [b.parameter(2, (), np.int32)])


def _sort_num_keys(b):
    b.sort([f32(b, 0, (3,))], num_keys=2)


def _sort_shapes(b):
    b.sort([f32(b, 0, (3,)), f32(b, 1, (4,))])


def _gather_float_indices(b):
    x = f32(b, 0, (5, 3))
    b.gather(x, f32(b, 1, (2,)), offset_dims=(1,), collapsed_slice_dims=(0,),
             start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 3))


def _gather_slice_sizes(b):
    x = f32(b, 0, (5, 3))
    b.gather(x, b.parameter(1, (2,), np.int32), offset_dims=(1,), collapsed_slice_dims=(0,),
             start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 4))


def _scatter_updates_shape(b):
    x = f32(b, 0, (5, 3))
    b.scatter(x, b.parameter(1, (2,), np.int32), f32(b, 2, (3, 3)), update_window_dims=(1,),
              inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), index_vector_dim=1)


def _unary_dtype(b):
    b.exp(b.parameter(0, (3,), np.int32))


def _shift_float(b):
    x = f32(b, 0, (3,))
    b.shift_left(x, x)


def _cumulative_axis(b):
    b.cumulative(f32(b, 0, (3,)), "sum", 1)


def _non_value_in_state_leaf_of_branch(b):
    p, x = b.parameter(0, (), np.bool_), f32(b, 1, (3,))
    b.conditional(p, [lambda sb, v: v, lambda sb, v: np.zeros(3, np.float32)], x)


# name -> (builds the ill-formed program, error class, a phrase of the message)
CASES = {
    "add_shapes": (lambda b: b.add(f32(b, 0, (3,)), f32(b, 1, (4,))), PSCShapeError,
                   "must have one shape"),
    "add_dtypes": (lambda b: b.add(f32(b, 0, (3,)), b.parameter(1, (3,), np.float64)),
                   PSCTypeError, "must have one dtype"),
    "add_non_value": (lambda b: b.add(f32(b, 0, (3,)), 1.0), PSCTypeError, "must be Values"),
    "add_numpy_array": (lambda b: b.add(f32(b, 0, (3,)), np.ones(3, np.float32)),
                        PSCTypeError, "must be Values"),
    "dot_general_contracting": (
        lambda b: b.dot_general(f32(b, 0, (2, 3)), f32(b, 1, (4, 5)), ((1,), (0,))),
        PSCShapeError, "does not match"),
    "dot_general_batch": (
        lambda b: b.dot_general(f32(b, 0, (2, 3, 4)), f32(b, 1, (5, 4, 2)), ((2,), (1,)),
                                ((0,), (0,))), PSCShapeError, "does not match"),
    "dot_general_dims": (
        lambda b: b.dot_general(f32(b, 0, (2, 3)), f32(b, 1, (3, 2)), ((2,), (0,))),
        PSCValueError, "do not fit"),
    "reshape_size": (lambda b: b.reshape(f32(b, 0, (2, 3)), (4, 2)), PSCShapeError,
                     "cannot reshape"),
    "transpose_permutation": (lambda b: b.transpose(f32(b, 0, (2, 3)), (0, 0)), PSCValueError,
                              "not a permutation"),
    "transpose_rank": (lambda b: b.transpose(f32(b, 0, (2, 3)), (1, 0, 2)), PSCValueError,
                       "not a permutation"),
    "reverse_dims": (lambda b: b.reverse(f32(b, 0, (2, 3)), (2,)), PSCValueError, "do not fit"),
    "slice_out_of_bounds": (lambda b: b.slice(f32(b, 0, (4,)), (1,), (5,)), PSCValueError,
                            "out of bounds"),
    "slice_start_after_limit": (lambda b: b.slice(f32(b, 0, (4,)), (3,), (2,)),
                                PSCValueError, "out of bounds"),
    "slice_zero_stride": (lambda b: b.slice(f32(b, 0, (4,)), (0,), (4,), (0,)),
                          PSCValueError, "out of bounds"),
    "slice_rank": (lambda b: b.slice(f32(b, 0, (4, 2)), (0,), (4,)), PSCShapeError,
                   "start/limit/stride"),
    "broadcast_incompatible": (
        lambda b: b.broadcast_in_dim(f32(b, 0, (3,)), (2, 4), (1,)), PSCShapeError,
        "cannot broadcast"),
    "broadcast_rank": (lambda b: b.broadcast_in_dim(f32(b, 0, (3,)), (2, 3), ()),
                       PSCShapeError, "broadcast dimensions"),
    "broadcast_dims_repeated": (
        lambda b: b.broadcast_in_dim(f32(b, 0, (1, 1)), (2, 3), (1, 1)), PSCShapeError,
        "bad broadcast dimensions"),
    "while_body_dtype": (_while_body_dtype, PSCTypeError, "while_loop body result"),
    "while_body_shape": (_while_body_shape, PSCShapeError, "while_loop body result"),
    "while_body_structure": (_while_body_structure, PSCTypeError, "structure"),
    "while_body_list_for_tuple": (_while_body_list_for_tuple, PSCTypeError, "structure"),
    "while_cond_not_bool": (_while_cond_not_bool, PSCTypeError, "bool scalar"),
    "while_cond_not_scalar": (_while_cond_not_scalar, PSCTypeError, "bool scalar"),
    "while_cond_python_bool": (_while_cond_python_bool, PSCTypeError, "bool scalar"),
    "while_state_not_values": (_while_state_not_values, PSCTypeError, "must hold builder"),
    "cond_branch_shapes": (_cond_branch_shapes, PSCShapeError, "conditional branch result"),
    "cond_branch_dtypes": (_cond_branch_dtypes, PSCTypeError, "conditional branch result"),
    "cond_branch_structure": (_cond_branch_structure, PSCTypeError, "structure"),
    "cond_branch_not_value": (_non_value_in_state_leaf_of_branch, PSCTypeError,
                              "must hold builder"),
    "cond_float_selector": (_cond_float_selector, PSCTypeError, "selector"),
    "cond_vector_selector": (_cond_vector_selector, PSCTypeError, "selector"),
    "cond_bool_three_branches": (_cond_bool_three_branches, PSCValueError, "exactly two"),
    "switch_no_branches": (_switch_no_branches, PSCValueError, "at least one branch"),
    "escaped_from_loop_body": (_escaped_from_loop_body, PSCValueError, "outside of it"),
    "escaped_into_other_branch": (_escaped_from_branch_into_other_branch, PSCValueError,
                                  "outside of it"),
    "escaped_as_build_output": (_escaped_as_build_output, PSCValueError, "outside of it"),
    "parameter_twice": (_parameter_twice, PSCValueError, "defined twice"),
    "parameter_in_loop_body": (_parameter_in_loop_body, PSCValueError, "top-level"),
    "parameters_not_numbered": (_parameters_not_numbered, PSCValueError, "not numbered"),
    "parameter_bad_dtype": (_parameter_bad_dtype, PSCTypeError, "no XLA element type"),
    "constant_bad": (_constant_bad, PSCTypeError, "cannot make a constant"),
    "constant_python_int_too_big": (_constant_python_int_too_big, PSCTypeError,
                                    "cannot make a constant"),
    "iota_bool": (_iota_bool, PSCTypeError, "bool"),
    "iota_dimension": (_iota_dimension, PSCValueError, "out of range"),
    "argmax_empty": (_argmax_empty, PSCValueError, "empty"),
    "reduce_kind": (_reduce_kind, PSCValueError, "unknown reduction"),
    "reduce_and_float": (_reduce_and_float, PSCTypeError, "integer or bool"),
    "reduce_dims": (_reduce_dims, PSCValueError, "do not fit"),
    "compare_direction": (_compare_direction, PSCValueError, "direction"),
    "select_pred_dtype": (_select_pred_dtype, PSCTypeError, "bool predicate"),
    "select_pred_shape": (_select_pred_shape, PSCShapeError, "predicate"),
    "concatenate_shapes": (_concatenate_shapes, PSCShapeError, "must match"),
    "pad_negative": (_pad_negative, PSCValueError, "negative"),
    "dynamic_slice_float_index": (_dynamic_slice_float_index, PSCTypeError,
                                  "integer scalars"),
    "dynamic_slice_too_big": (_dynamic_slice_too_big, PSCShapeError, "do not fit"),
    "dynamic_update_slice_too_big": (_dynamic_update_slice_too_big, PSCShapeError,
                                     "does not fit"),
    "sort_num_keys": (_sort_num_keys, PSCValueError, "key operands"),
    "sort_shapes": (_sort_shapes, PSCShapeError, "one shape"),
    "gather_float_indices": (_gather_float_indices, PSCTypeError, "integers"),
    "gather_slice_sizes": (_gather_slice_sizes, PSCShapeError, "slice sizes"),
    "scatter_updates_shape": (_scatter_updates_shape, PSCShapeError, "do not match"),
    "unary_dtype": (_unary_dtype, PSCTypeError, "floating or complex"),
    "shift_float": (_shift_float, PSCTypeError, "integer"),
    "cumulative_axis": (_cumulative_axis, PSCValueError, "out of range"),
}


def _raise(case):
    build, cls, phrase = CASES[case]
    b = Builder("bad")
    with pytest.raises(PSCError) as info:
        with b.at(FILE, LINE, COL, source_line=SOURCE):
            build(b)
    return info.value, cls, phrase


@pytest.mark.parametrize("case", list(CASES))
def test_error_class_and_location(case):
    err, cls, phrase = _raise(case)
    assert type(err) is cls, (type(err), err)
    assert phrase in err.message, err.message
    assert err.location == SourceLocation(FILE, LINE, COL, SOURCE)
    text = str(err)
    lines = text.splitlines()
    assert lines[0].startswith(f"model.py:12:5: {cls.kind}: "), lines[0]
    assert "model.py:12:5" in text
    assert lines[1] == "    y = x + w"
    assert lines[2] == "    ^"
    if err.hint is not None:
        assert lines[-1] == f"hint: {err.hint}"


@pytest.mark.parametrize("case,hint", [
    ("add_shapes", "broadcast_in_dim"), ("add_dtypes", "convert operands first"),
    ("add_non_value", "b.constant"), ("while_body_dtype", "keep shapes and dtypes fixed"),
    ("cond_branch_shapes", "keep shapes and dtypes fixed"),
    ("escaped_from_loop_body", "return it from that body or branch"),
    ("while_state_not_values", "b.constant"),
])
def test_error_hints(case, hint):
    err, _, _ = _raise(case)
    assert err.hint is not None and hint in err.hint
    assert f"hint: {err.hint}" in str(err)


def test_caret_points_at_column():
    b = Builder("t")
    x = f32(b, 0, (3,))
    w = f32(b, 1, (4,))
    with pytest.raises(PSCShapeError) as info:
        with b.at("model.py", 7, 10, source_line="    y = x + w\n"):
            b.add(x, w)
    source, caret = str(info.value).splitlines()[1:3]
    assert "model.py:7:11" in str(info.value)
    assert source[caret.index("^")] == "+"


def test_location_read_from_file_with_linecache(tmp_path):
    path = tmp_path / "user_model.py"
    path.write_text("import numpy as np\ndef f(x, w):\n    return np.dot(x, w)\n")
    b = Builder("t")
    x, w = f32(b, 0, (2, 3)), f32(b, 1, (4, 5))
    with pytest.raises(PSCShapeError) as info:
        with b.at(str(path), 2, 6):
            b.dot_general(x, w, ((1,), (0,)))
    lines = str(info.value).splitlines()
    assert lines[0].startswith(f"{path}:2:7: shape error: ")
    assert lines[1] == "    def f(x, w):"
    assert lines[2] == "    " + " " * 6 + "^"
    assert lines[1][lines[2].index("^")] == "x"
    assert lines[-1].startswith("hint: ") or len(lines) == 3


def test_location_is_restored_after_with_block():
    b = Builder("t")
    x, w = f32(b, 0, (3,)), f32(b, 1, (4,))
    b.at("outer.py", 1, 0, source_line="z = 1")
    with b.at("inner.py", 5, 2, source_line="  y = x + w"):
        assert b.location == SourceLocation("inner.py", 5, 2, "  y = x + w")
    assert b.location == SourceLocation("outer.py", 1, 0, "z = 1")
    with pytest.raises(PSCShapeError) as info:
        b.add(x, w)
    assert info.value.location.file == "outer.py"
    assert str(info.value).startswith("outer.py:1:1: shape error: ")


def test_error_without_location():
    b = Builder("t")
    with pytest.raises(PSCShapeError) as info:
        b.add(f32(b, 0, (3,)), f32(b, 1, (4,)))
    assert info.value.location is None
    assert str(info.value).startswith("shape error: operands of add")


def test_error_inside_loop_body_points_at_body_line():
    """A sub-builder shares the location of its builder: ``at`` inside a body works."""
    b = Builder("t")
    x = f32(b, 0, (3,))
    w = f32(b, 1, (4,))

    def body(sb, s):
        with sb.at("model.py", 30, 8, source_line="        s = s + w"):
            return sb.add(s, w)
    with b.at("model.py", 28, 4, source_line="    while cond(s):"):
        with pytest.raises(PSCShapeError) as info:
            b.while_loop(lambda sb, s: sb.constant(True), body, x)
        assert b.location.line == 28      # restored after the body's ``with``
    assert "model.py:30:9" in str(info.value)
    assert str(info.value).splitlines()[1] == "    s = s + w"


def test_failed_op_records_nothing_and_builder_stays_usable():
    b = Builder("t")
    x, w = f32(b, 0, (3,)), f32(b, 1, (4,))
    before = len(b.region.operations)
    with pytest.raises(PSCShapeError):
        b.add(x, w)
    assert len(b.region.operations) == before
    out = compile(b.build(b.add(x, x), w))(np.arange(3, dtype=np.float32),
                                           np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(out[0]), np.arange(3, dtype=np.float32) * 2)


def test_errors_raised_before_compilation(monkeypatch):
    """A staged function whose build fails raises the PSCError itself: XLA is never called
    (compile would raise XLACompileError, or worse, abort)."""
    calls = []

    def no_compile(*args, **kwargs):
        calls.append(args)
        raise AssertionError("compile must not be reached")
    monkeypatch.setattr(staged_module, "compile", no_compile)

    def build(b, x, w):
        b.at("model.py", 3, 4, source_line="    return x @ w")
        return b.dot_general(x, w, ((1,), (0,)))
    f = StagedFunction(build)
    with pytest.raises(PSCShapeError) as info:
        f(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))
    assert not isinstance(info.value, XLACompileError)
    assert "model.py:3:5" in str(info.value)
    assert calls == []


@pytest.mark.parametrize("case", ["reshape_size", "while_body_shape", "cond_branch_dtypes",
                                  "escaped_from_loop_body"])
def test_compile_never_sees_bad_programs(case, monkeypatch):
    """The error comes from the op call; neither lowering nor the PJRT client runs."""
    touched = []
    monkeypatch.setattr(lowering_module, "lower_to_stablehlo",
                        lambda *a, **k: touched.append("lower"))
    monkeypatch.setattr(client_module, "get_client", lambda *a, **k: touched.append("client"))
    err, cls, _ = _raise(case)
    assert type(err) is cls
    assert touched == []


@functools.lru_cache(maxsize=None)
def _negate_executable():
    b = Builder("t")
    return compile(b.build(b.neg(f32(b, 0, (3,)))))


@pytest.mark.parametrize("args,cls", [
    ((np.ones(4, np.float32),), PSCShapeError),
    ((np.ones(3, np.float64),), PSCTypeError),
    ((np.ones(3, np.float32), np.ones(3, np.float32)), PSCTypeError),
    ((), PSCTypeError),
])
def test_executable_checks_arguments(args, cls):
    ex = _negate_executable()
    with pytest.raises(cls):
        ex(*args)
    np.testing.assert_array_equal(np.asarray(ex(np.ones(3, np.float32))[0]),
                                  -np.ones(3, np.float32))


def test_error_classes_are_pscerrors():
    for cls in (PSCShapeError, PSCTypeError, PSCValueError, XLACompileError):
        assert issubclass(cls, PSCError)
    assert len({PSCShapeError.kind, PSCTypeError.kind, PSCValueError.kind}) == 3


# --- gather/scatter dimension numbers are validated before XLA sees them -------------------

def _gather(b, x, idx, **overrides):
    kwargs = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                  index_vector_dim=1, slice_sizes=(1, 3))
    kwargs.update(overrides)
    return b.gather(x, idx, **kwargs)


@pytest.mark.parametrize("overrides", [dict(collapsed_slice_dims=(5,)),
                                       dict(offset_dims=(1, 1), slice_sizes=(1, 3)),
                                       dict(start_index_map=(4,)),
                                       dict(index_vector_dim=7)])
def test_bad_gather_dimension_numbers(overrides):
    b = Builder("g")
    x = b.parameter(0, (4, 3), np.float32)
    idx = b.parameter(1, (2, 1), np.int32)
    with pytest.raises(PSCError):
        _gather(b, x, idx, **overrides)


@pytest.mark.parametrize("overrides", [dict(scatter_dims_to_operand_dims=(5,)),
                                       dict(inserted_window_dims=(3,)),
                                       dict(update_window_dims=(4,)),
                                       dict(index_vector_dim=9)])
def test_bad_scatter_dimension_numbers(overrides):
    b = Builder("s")
    x = b.parameter(0, (4, 3), np.float32)
    idx = b.parameter(1, (2, 1), np.int32)
    upd = b.parameter(2, (2, 3), np.float32)
    kwargs = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    kwargs.update(overrides)
    with pytest.raises(PSCError):
        b.scatter(x, idx, upd, **kwargs)
