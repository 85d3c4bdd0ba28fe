"""The public region API of `Builder` (`child`, `add_parameter`, `capture`, `emit`,
`finish_region`, `region`, `build` with its large constants), and that nothing outside
`runtime/builder.py` reaches into the builder's private members."""
from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

from conftest import assert_same
from runtime import (Builder, PSCShapeError, PSCTypeError, PSCValueError, SourceLocation,
                     StagedFunction, compile, translate)
from runtime.builder import LARGE_CONSTANT_BYTES
from runtime.lowering import lower_to_stablehlo

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIG = np.random.default_rng(1).normal(size=(LARGE_CONSTANT_BYTES // 8 + 10,))
BIG2 = np.random.default_rng(2).normal(size=(LARGE_CONSTANT_BYTES // 8 + 20,))
# Large as float64, but under the threshold once converted to float32.
BIG_AS_F32 = np.random.default_rng(3).normal(size=(LARGE_CONSTANT_BYTES // 8 + 30,))


def run(computation, *args):
    return [np.asarray(r) for r in compile(computation)(*args)]


# --- child builders and captures ------------------------------------------------------------

def test_child_captures_an_outer_value_once():
    b = Builder("outer")
    x = b.parameter(0, (3,), np.float64)
    y = b.exp(x)
    child = b.child("inner")
    assert child.region.parent is b.region
    inner = child.capture(y)
    assert inner is not y and inner.region is child.region
    assert (inner.shape, inner.dtype) == (y.shape, y.dtype)
    assert child.capture(y) is inner            # one capture per outer value
    assert child.capture(inner) is inner        # a value of its own region is itself
    assert child.region.captures == {y: inner}
    assert b.region.captures == {}              # the outer region is untouched


def test_grandchild_captures_through_its_parents_values():
    b = Builder("outer")
    x = b.parameter(0, (2,), np.float32)
    child = b.child("a")
    grandchild = child.child("b")
    assert grandchild.region.parent is child.region
    inner = grandchild.capture(x)
    assert inner.region is grandchild.region and list(grandchild.region.captures) == [x]


def test_capture_of_a_sibling_value_is_an_error_at_the_location():
    b = Builder("outer")
    x = b.parameter(0, (2,), np.float32)
    first, second = b.child("first"), b.child("second")
    inside = first.neg(first.capture(x))
    with pytest.raises(PSCValueError) as info:
        with b.at("model.py", 4, 2):
            second.capture(inside)
    assert info.value.location == SourceLocation("model.py", 4, 2)
    assert "return it from that body or branch" in info.value.hint


def test_capture_of_a_non_value_is_a_type_error():
    child = Builder("outer").child("inner")
    with pytest.raises(PSCTypeError, match="must be Values"):
        child.capture(1.0)


def test_child_parameters_and_outputs():
    b = Builder("outer")
    w = b.parameter(0, (3,), np.float64)
    child = b.child("body")
    s = child.add_parameter((3,), np.float64)
    t = child.add_parameter((), np.int32, weak=True)
    assert child.region.params == [s, t] and t.weak and s.region is child.region
    out = child.mul(s, w)                       # the op captures w itself
    region = child.finish_region([out, w])
    assert region is child.region
    assert region.outputs == [out, region.captures[w]]


def test_region_is_read_only():
    b = Builder("outer")
    with pytest.raises(AttributeError):
        b.region = b.child("x").region


@pytest.mark.parametrize("method,args", [("add_parameter", ((), np.float32)),
                                         ("finish_region", ([],))])
def test_child_only_methods_refuse_the_top_level_builder(method, args):
    with pytest.raises(PSCValueError):
        getattr(Builder("top"), method)(*args)


def test_add_parameter_refuses_a_dtype_xla_cannot_hold():
    child = Builder("outer").child("inner")
    with pytest.raises(PSCTypeError, match="no XLA element type"):
        child.add_parameter((), np.dtype("U3"))


def test_branches_built_with_the_public_api_against_numpy():
    """A `case` whose branches capture outer values through `child`/`capture`/`emit`."""
    b = Builder("branches")
    x = b.parameter(0, (4,), np.float64)
    p = b.parameter(1, (), np.bool_)
    scale = b.exp(x)                            # an outer value both branches read
    true_branch, false_branch = b.branch_builder(0), b.branch_builder(1)
    on_true = true_branch.emit("multiply", [x, scale])[0]
    on_false = false_branch.emit("subtract", [false_branch.capture(scale), x])[0]
    out = b.conditional_from_branches(p, [(true_branch, on_true), (false_branch, on_false)])
    computation = b.build(out)
    values = np.array([0.5, -1.0, 2.0, 0.0])
    for pred in (True, False):
        expected = values * np.exp(values) if pred else np.exp(values) - values
        assert_same(run(computation, values, np.bool_(pred))[0], expected)


# --- emit -----------------------------------------------------------------------------------

def test_emit_by_name_matches_numpy():
    b = Builder("emit")
    x = b.parameter(0, (2, 3), np.float32)
    y = b.parameter(1, (2, 3), np.float32)
    total, = b.emit("add", [x, y])
    flat, = b.emit("reshape", [total], shape=(6,))
    s, c = b.emit("sine", [flat])[0], b.emit("cosine", [flat])[0]
    xs = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    ys = np.full((2, 3), 0.25, np.float32)
    got = run(b.build(flat, s, c), xs, ys)
    assert_same(got, [(xs + ys).reshape(6), np.sin((xs + ys).reshape(6)),
                      np.cos((xs + ys).reshape(6))])


@pytest.mark.parametrize("operands,cls,phrase", [
    (lambda b: [b.parameter(0, (3,), np.float32), b.parameter(1, (3,), np.float64)],
     PSCTypeError, "one dtype"),
    (lambda b: [b.parameter(0, (3,), np.float32), b.parameter(1, (4,), np.float32)],
     PSCShapeError, "one shape"),
])
def test_emit_raises_the_op_checks_error_at_the_location_and_records_nothing(operands, cls,
                                                                            phrase):
    b = Builder("bad")
    args = operands(b)
    before = list(b.region.operations)
    with pytest.raises(cls) as info:
        with b.at("model.py", 9, 4, source_line="    z = x + y"):
            b.emit("add", args)
    assert type(info.value) is cls and phrase in info.value.message
    assert info.value.location == SourceLocation("model.py", 9, 4, "    z = x + y")
    assert "model.py:9:5" in str(info.value)
    assert b.region.operations == before


def test_emit_in_a_child_checks_its_captured_operands():
    b = Builder("outer")
    x = b.parameter(0, (3,), np.float32)
    child = b.child("inner")
    n = child.add_parameter((3,), np.int32)
    with pytest.raises(PSCTypeError, match="one dtype"):
        child.emit("add", [x, n])
    assert child.region.operations == []


# --- build and large constants --------------------------------------------------------------

def test_build_gives_the_large_constants_as_leading_parameters():
    b = Builder("big")
    x = b.parameter(0, (), np.float64)
    top = b.constant(BIG)
    assert b.constant(BIG) is top               # one parameter per array object
    child = b.child("inner")
    inner = child.constant(BIG)                 # recorded at the top, captured here
    assert child.region.captures == {top: inner}
    other = b.constant(BIG2)
    total = b.add(b.reduce(b.mul(top, b.broadcast_in_dim(x, top.shape, ())), "sum", (0,)),
                  b.reduce(other, "sum", (0,)))
    computation = b.build(total)
    assert len(computation.constants) == 2
    # snapshots, taken when recorded: later in-place updates of BIG cannot reach them
    assert computation.constants[0] is not BIG and computation.constants[1] is not BIG2
    assert np.array_equal(computation.constants[0], BIG)
    assert np.array_equal(computation.constants[1], BIG2)
    assert computation.params == [top, other, x]
    assert top.producer is None and other.producer is None
    assert not any(op.name == "constant" and op.attrs["value"].nbytes >= LARGE_CONSTANT_BYTES
                   for op in computation.region.operations)
    assert "large_constants" not in vars(computation.region)
    text = lower_to_stablehlo(computation)
    assert len(text) < 20_000
    # the executable passes the constants itself: it takes only the parameter x
    assert_same(run(computation, 0.5)[0], np.float64(np.sum(BIG * 0.5) + np.sum(BIG2)),
                rtol=1e-12)


def test_build_again_gives_the_same_parameters():
    b = Builder("big")
    x = b.parameter(0, BIG.shape, np.float64)
    c = b.constant(BIG)
    first = b.build(b.add(x, c))
    second = b.build(b.sub(x, c))
    assert first.params == second.params == [c, x]
    assert len(second.constants) == 1 and second.constants[0] is first.constants[0]
    assert np.array_equal(second.constants[0], BIG)
    got = run(second, np.ones_like(BIG))[0]
    assert_same(got, 1.0 - BIG)


def test_build_without_large_constants_has_none():
    b = Builder("small")
    x = b.parameter(0, (3,), np.float32)
    computation = b.build(b.add(x, b.constant(np.ones(3, np.float32))))
    assert computation.constants == () and computation.params == [x]


def _big_program(b, x, flag):
    # A converted large array, two arrays read in a loop body and in a branch.
    converted = translate(b, np.sum, b.constant(BIG_AS_F32, dtype=np.float32))

    def body(sub, state):
        i, acc = state
        dot = translate(sub, np.sum, translate(sub, np.multiply, BIG, x))
        return sub.add(i, sub.constant(np.int32(1))), sub.add(acc, dot)

    def cond(sub, state):
        return sub.lt(state[0], sub.constant(np.int32(2)))

    _, looped = b.while_loop(cond, body, (b.constant(np.int32(0)), b.constant(0.0)))
    branched = b.conditional(flag, [lambda sub, _: sub.reduce(sub.constant(BIG2), "max", (0,)),
                                    lambda sub, _: sub.reduce(sub.constant(BIG), "min", (0,))])
    return looped, branched, converted


def _big_oracle(x, flag):
    return (np.float64(2 * np.sum(BIG * x)), np.max(BIG2) if flag else np.min(BIG),
            np.sum(BIG_AS_F32.astype(np.float32)))


@pytest.mark.parametrize("flag", [True, False])
def test_staged_function_with_large_constants_against_numpy(flag):
    f = StagedFunction(_big_program, name="big")
    for _ in range(3):   # the first call builds; the next ones go through the C++ path
        got = f(0.25, np.bool_(flag))
        expected = _big_oracle(0.25, flag)
        assert_same(got[:2], expected[:2], rtol=1e-12)
        assert_same(got[2], expected[2], rtol=1e-5)   # float32 sums in another order
    assert f.cache_info().misses == 1
    text = f.lower(0.25, np.bool_(flag))
    assert len(text) < 40_000
    signature = text.split("func.func public @main(")[1].split(")")[0]
    assert signature.count("%arg") == 5   # BIG_AS_F32 (converted), BIG, BIG2, x, flag


# --- no private Builder members outside builder.py ------------------------------------------

PRIVATE = {"_sub_builder", "_region", "_resolve", "_op", "_op1", "_params", "_locations",
           "_shared", "_emit1", "_large_constant", "_run_region", "_close_regions"}


def _python_files():
    for folder in ("runtime", "transpiler", "emit", "tests", "benchmarks", "examples"):
        yield from (ROOT / folder).rglob("*.py")


def test_no_module_outside_the_builder_uses_its_private_members():
    builder = ROOT / "runtime" / "builder.py"
    found = []
    files = [p for p in _python_files() if p != builder and "__psc__" not in p.parts]
    assert len(files) > 50   # the scan sees the project
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except SyntaxError:   # fixtures of the CLI's error tests: not code that runs
            continue
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}"
                  for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr in PRIVATE]
    assert not found, "\n".join(found)


def test_the_scan_finds_a_private_use():
    tree = ast.parse("sub = b._sub_builder('x')\nsub._region.outputs = []\n")
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert {"_sub_builder", "_region"} <= names & PRIVATE
