"""Differential tests of `Builder.while_loop` and `Builder.conditional`.

Each program is written once against a small ``ops`` interface and run two ways:

* compiled: ``ops`` wraps a `Builder` (loops and branches become StableHLO while/case);
* reference: ``ops`` is NumPy, and loops and branches are `runtime.reference`'s pure-Python
  ``while_loop`` / ``cond`` / ``switch``.

Every program is compiled once and run on several inputs that take different paths.
"""
from __future__ import annotations

import numpy as np
import pytest
from jax import tree_util

from runtime import Builder, compile, reference


class BuilderOps:
    """``ops`` for the compiled program: builder calls on the current (sub-)builder."""

    def __init__(self, b: Builder):
        self.b = b

    def __getattr__(self, name):            # add, sub, mul, lt, select, tanh, ...
        return getattr(self.b, name)

    def const(self, value, dtype):
        return self.b.constant(np.asarray(value, dtype))

    def dot(self, m, v):
        return self.b.dot_general(m, v, ((1,), (0,)))

    def sum(self, x):
        return self.b.reduce(x, "sum", range(x.ndim))

    def bcast(self, s, shape):
        return self.b.broadcast_in_dim(s, shape, ())

    def while_loop(self, cond, body, init):
        return self.b.while_loop(lambda sb, s: cond(BuilderOps(sb), s),
                                 lambda sb, s: body(BuilderOps(sb), s), init)

    def cond(self, pred, true_fn, false_fn, operands=()):
        return self.b.conditional(pred, [lambda sb, o: true_fn(BuilderOps(sb), o),
                                         lambda sb, o: false_fn(BuilderOps(sb), o)], operands)

    def switch(self, index, branches, operands=()):
        return self.b.conditional(
            index, [lambda sb, o, fn=fn: fn(BuilderOps(sb), o) for fn in branches], operands)


def _trunc_div(x, y):
    if np.asarray(x).dtype.kind in "iu":
        return (np.abs(x) // np.abs(y) * np.sign(x) * np.sign(y)).astype(np.asarray(x).dtype)
    return np.divide(x, y)


class NumpyOps:
    """``ops`` for the reference: NumPy, with `runtime.reference` control flow."""

    add, sub, mul, max, min = np.add, np.subtract, np.multiply, np.maximum, np.minimum
    lt, le, gt, ge, eq, ne = np.less, np.less_equal, np.greater, np.greater_equal, \
        np.equal, np.not_equal
    and_, or_, not_ = np.bitwise_and, np.bitwise_or, np.invert
    tanh, exp, sin, neg, abs = np.tanh, np.exp, np.sin, np.negative, np.abs
    rem = staticmethod(np.fmod)
    div = staticmethod(_trunc_div)

    @staticmethod
    def const(value, dtype):
        return np.asarray(value, dtype)

    @staticmethod
    def select(pred, x, y):
        return np.where(pred, x, y)

    @staticmethod
    def convert(x, dtype):
        return np.asarray(x).astype(dtype)

    @staticmethod
    def dot(m, v):
        return m @ v

    @staticmethod
    def sum(x):
        return np.sum(x, dtype=np.asarray(x).dtype)

    @staticmethod
    def bcast(s, shape):
        return np.broadcast_to(s, shape).copy()

    def while_loop(self, cond, body, init):
        return reference.while_loop(lambda s: cond(self, s), lambda s: body(self, s), init)

    def cond(self, pred, true_fn, false_fn, operands=()):
        return reference.cond(pred, lambda o: true_fn(self, o), lambda o: false_fn(self, o),
                              operands)

    def switch(self, index, branches, operands=()):
        return reference.switch(index, [lambda o, fn=fn: fn(self, o) for fn in branches],
                                operands)


NP = NumpyOps()


def stage(program, *example):
    """Compile ``program(ops, *params)`` for the shapes/dtypes of ``example``; returns a
    function of NumPy arguments giving the program's pytree of NumPy arrays."""
    example = [np.asarray(a) for a in example]
    b = Builder(program.__name__)
    params = [b.parameter(i, a.shape, a.dtype) for i, a in enumerate(example)]
    leaves, treedef = tree_util.tree_flatten(program(BuilderOps(b), *params))
    executable = compile(b.build(*leaves))

    def call(*args):
        outs = executable(*[np.asarray(a) for a in args])
        return tree_util.tree_unflatten(treedef, [np.asarray(o) for o in outs])
    return call


def assert_tree_same(actual, expected):
    assert tree_util.tree_structure(actual) == tree_util.tree_structure(expected), \
        (tree_util.tree_structure(actual), tree_util.tree_structure(expected))
    for a, e in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, (a.shape, e.shape)
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        if e.dtype.kind == "f":
            rtol = 1e-5 if e.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, e)


def check_program(program, inputs):
    """Compile once, run every input tuple, compare with the NumPy/reference run."""
    fn = stage(program, *inputs[0])
    for args in inputs:
        args = [np.asarray(a) for a in args]
        assert_tree_same(fn(*args), program(NP, *args))


def _i32(v):
    return np.asarray(v, np.int32)


# --- while_loop ---------------------------------------------------------------------------

def sum_of_squares(ops, n):
    """i = 0; acc = 0; while i < n: i += 1; acc += i * i"""
    dt = n.dtype

    def cond(o, s):
        return o.lt(s[0], n)

    def body(o, s):
        i = o.add(s[0], o.const(1, dt))
        return i, o.add(s[1], o.mul(i, i))
    return ops.while_loop(cond, body, (ops.const(0, dt), ops.const(0, dt)))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_counter_loop(dtype):
    check_program(sum_of_squares, [(np.asarray(v, dtype),) for v in (5, 0, 1, 37)])


def test_counter_loop_negative_bound_is_zero_trip():
    check_program(sum_of_squares, [(_i32(-3),), (_i32(4),), (_i32(-2**31),)])


def pytree_state(ops, n, x, m):
    """A nested dict/tuple/list state with arrays of several dtypes."""
    def cond(o, s):
        return o.lt(s["i"], n)

    def body(o, s):
        i = o.add(s["i"], o.const(1, np.int32))
        vec, (mat, flag) = s["data"]
        vec = o.add(o.mul(vec, o.const([0.5, 1.0, 2.0], np.float64)),
                    o.bcast(o.convert(i, np.float64), (3,)))
        mat = o.sub(mat, o.bcast(o.const(0.25, np.float32), (2, 2)))
        flag = o.not_(flag)
        big = o.add(s["big"], o.const(2**33, np.int64))
        bits = o.mul(s["bits"], o.const(3, np.uint32))
        return {"i": i, "data": (vec, [mat, flag]), "big": big, "bits": bits}
    init = {"i": ops.const(0, np.int32), "data": (x, [m, ops.const(True, np.bool_)]),
            "big": ops.const(-2**40, np.int64), "bits": ops.const(2**31 + 1, np.uint32)}
    return ops.while_loop(cond, body, init)


def test_pytree_state_with_several_dtypes(rng):
    x = rng.standard_normal(3)
    m = rng.standard_normal((2, 2)).astype(np.float32)
    check_program(pytree_state, [(_i32(n), x, m) for n in (3, 0, 1, 8)])


def test_zero_trip_returns_init_unchanged(rng):
    def program(ops, x, flag):
        def cond(o, s):
            return o.and_(s[1], o.const(False, np.bool_))

        def body(o, s):
            return o.exp(s[0]), o.not_(s[1])
        return ops.while_loop(cond, body, (x, flag))
    x = np.array([[np.nan, -0.0, 3.5]], np.float32)
    check_program(program, [(x, np.bool_(True)), (x, np.bool_(False))])


def rnn(ops, n, w, bias, x0, threshold):
    """Loop capturing outer values: ``w``/``bias`` in the body, ``threshold`` in the cond
    only (neither is part of the state)."""
    def cond(o, s):
        return o.and_(o.lt(s[0], n), o.lt(o.sum(o.abs(s[1])), threshold))

    def body(o, s):
        return o.add(s[0], o.const(1, np.int32)), o.tanh(o.add(o.dot(w, s[1]), bias))
    return ops.while_loop(cond, body, (ops.const(0, np.int32), x0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loop_capturing_outer_values(dtype, rng):
    w = (rng.standard_normal((4, 4)) * 0.8).astype(dtype)
    bias = rng.standard_normal(4).astype(dtype)
    x0 = rng.standard_normal(4).astype(dtype)
    check_program(rnn, [(_i32(n), w, bias, x0, np.asarray(t, dtype))
                        for n, t in ((5, 100.0), (0, 100.0), (12, 100.0), (12, 2.5),
                                     (12, -1.0))])


def test_loop_state_replaced_by_outer_value(rng):
    """The body returns an outer value (and a state leaf unchanged) as the new state."""
    def program(ops, n, w, x):
        def cond(o, s):
            return o.lt(s[0], n)

        def body(o, s):
            return o.add(s[0], o.const(1, np.int64)), w, s[2]
        return ops.while_loop(cond, body, (ops.const(0, np.int64), x, x))
    w, x = rng.standard_normal(3), rng.standard_normal(3)
    check_program(program, [(np.int64(0), w, x), (np.int64(2), w, x)])


def nested_loops(ops, n, scale):
    """for i in range(n): for j in range(i): acc += i * j * scale  (inner loop captures
    the outer body's ``i`` and the top-level ``scale``)."""
    def outer_cond(o, s):
        return o.lt(s[0], n)

    def outer_body(o, s):
        i, acc = s

        def inner_cond(o2, t):
            return o2.lt(t[0], i)

        def inner_body(o2, t):
            j, a = t
            term = o2.mul(o2.mul(i, j), scale)
            return o2.add(j, o2.const(1, np.int32)), o2.add(a, term)
        _, acc = o.while_loop(inner_cond, inner_body, (o.const(0, np.int32), acc))
        return o.add(i, o.const(1, np.int32)), acc
    return ops.while_loop(outer_cond, outer_body, (ops.const(0, np.int32),
                                                   ops.const(0, np.int32)))


def test_nested_while():
    check_program(nested_loops, [(_i32(n), _i32(k)) for n, k in ((6, 1), (0, 5), (1, 3),
                                                                 (9, -2))])


def collatz(ops, x, limit):
    """A conditional inside a while body: the Collatz map, counting steps."""
    def cond(o, s):
        return o.and_(o.ne(s[0], o.const(1, np.int64)), o.lt(s[1], limit))

    def body(o, s):
        x, steps = s
        even = o.eq(o.rem(x, o.const(2, np.int64)), o.const(0, np.int64))
        x = o.cond(even, lambda ob, v: ob.div(v, ob.const(2, np.int64)),
                   lambda ob, v: ob.add(ob.mul(v, ob.const(3, np.int64)),
                                        ob.const(1, np.int64)), x)
        return x, o.add(steps, o.const(1, np.int32))
    return ops.while_loop(cond, body, (x, ops.const(0, np.int32)))


def test_conditional_inside_while():
    check_program(collatz, [(np.int64(v), _i32(1000)) for v in (27, 1, 6, 7, 2**40 + 1)]
                  + [(np.int64(27), _i32(10))])


def loop_in_branch(ops, pred, n, x, y):
    """A while loop inside a conditional branch, capturing values from outside the cond."""
    def looping(o, v):
        def cond(o2, s):
            return o2.lt(s[0], n)

        def body(o2, s):
            return o2.add(s[0], o2.const(1, np.int32)), o2.add(s[1], o2.mul(s[1], y))
        return o.while_loop(cond, body, (o.const(0, np.int32), v))[1]

    def plain(o, v):
        return o.sub(v, y)
    return ops.cond(pred, looping, plain, x)


def test_while_inside_conditional(rng):
    x = rng.standard_normal(5)
    y = np.full(5, 0.5)
    check_program(loop_in_branch, [(np.bool_(p), _i32(n), x, y)
                                   for p, n in ((True, 3), (False, 3), (True, 0))])


def fori(ops, lo, hi, x):
    """fori_loop written with while_loop, against reference.fori_loop semantics."""
    def cond(o, s):
        return o.lt(s[0], hi)

    def body(o, s):
        i, v = s
        return o.add(i, o.const(1, np.int32)), o.add(o.mul(v, o.const(2.0, np.float64)),
                                                     o.convert(i, np.float64))
    return ops.while_loop(cond, body, (lo, x))[1]


def test_fori_loop_matches_reference_fori_loop():
    fn = stage(fori, _i32(0), _i32(0), np.float64(0))
    for lo, hi in ((0, 5), (3, 3), (2, 9), (5, 1)):
        expected = reference.fori_loop(lo, hi, lambda i, v: v * 2.0 + float(i), 1.5)
        got = fn(_i32(lo), _i32(hi), np.float64(1.5))
        assert got.dtype == np.float64
        assert float(got) == expected


# --- conditional --------------------------------------------------------------------------

def cond_on_sum(ops, x, w):
    """lax.cond order: (true_fn, false_fn); branches capture ``w`` and return pytrees."""
    def true_fn(o, v):
        return {"y": o.mul(v, o.bcast(o.const(2.0, np.float32), (3,))),
                "n": (o.const(1, np.int32), o.sum(v))}

    def false_fn(o, v):
        return {"y": o.sub(v, w), "n": (o.const(-1, np.int32), o.sum(w))}
    return ops.cond(ops.gt(ops.sum(x), ops.const(0.0, np.float32)), true_fn, false_fn, x)


def test_bool_cond_takes_both_paths():
    w = np.array([0.5, -1.0, 2.0], np.float32)
    inputs = [(np.array(v, np.float32), w) for v in ([1, 2, 3], [-1, -2, -3], [0, 0, 0],
                                                      [5, -5, 0.5])]
    check_program(cond_on_sum, inputs)


def test_cond_with_pred_argument_and_no_operands():
    def program(ops, pred, a, b):
        return ops.cond(pred, lambda o, _: (a, o.const(1, np.int8)),
                        lambda o, _: (b, o.const(2, np.int8)))
    a, b = np.arange(4.0).reshape(2, 2), np.ones((2, 2))
    check_program(program, [(np.bool_(True), a, b), (np.bool_(False), a, b)])


def test_cond_branch_returning_its_operand():
    def program(ops, pred, x, y):
        return ops.cond(pred, lambda o, v: v[1], lambda o, v: o.add(v[0], y), (x, y))
    x, y = np.array([1, 2, 3], np.int64), np.array([10, 20, 30], np.int64)
    check_program(program, [(np.bool_(True), x, y), (np.bool_(False), x, y)])


def three_way(ops, index, x, w0, w1, w2):
    """lax.switch-style with 3 branches, each capturing a different outer value and
    returning a pytree."""
    def b0(o, v):
        return [o.add(v, w0), {"k": o.const(0, np.int32)}]

    def b1(o, v):
        return [o.mul(v, w1), {"k": o.const(1, np.int32)}]

    def b2(o, v):
        return [o.sub(w2, v), {"k": o.const(2, np.int32)}]
    return ops.switch(index, [b0, b1, b2], x)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint32])
def test_switch_three_branches_clamps_index(index_dtype, rng):
    x, w0, w1, w2 = (rng.standard_normal(4) for _ in range(4))
    indices = [0, 1, 2, 3, 100, np.iinfo(np.int32).max]
    if np.dtype(index_dtype).kind == "i":
        indices += [-1, -5, np.iinfo(np.int32).min]
    check_program(three_way, [(np.asarray(i, index_dtype), x, w0, w1, w2) for i in indices])


def test_switch_wide_index_clamps():
    """Indices that do not fit in int32 still clamp into range (reference.switch: index 2**32
    is past the end, so the last branch; -2**32 + 1 is negative, so the first)."""
    x = np.full(4, 0.5)
    ws = [np.full(4, 1.0), np.full(4, 2.0), np.full(4, 3.0)]
    check_program(three_way, [(np.int64(i), x, *ws) for i in (1, 2**32, 2**31, 2**32 + 1,
                                                               -2**32 + 1, -2**63)])
    check_program(three_way, [(np.uint32(i), x, *ws) for i in (1, 2**31, 2**32 - 1)])


def test_switch_single_branch():
    def program(ops, index, x):
        return ops.switch(index, [lambda o, v: o.neg(v)], x)
    check_program(program, [(_i32(i), np.arange(3.0)) for i in (-1, 0, 7)])


def test_switch_inside_while_with_captures(rng):
    """Each iteration picks a branch from the loop counter; branches capture outer values
    of different dtypes and a value of the enclosing loop body."""
    def program(ops, n, a, b):
        def cond(o, s):
            return o.lt(s[0], n)

        def body(o, s):
            i, acc, hits = s
            k = o.rem(i, o.const(4, np.int32))   # 3 -> clamped to the last branch
            step = o.add(acc, o.const(1.0, np.float64))
            acc, hits = o.switch(k, [
                lambda ob, v: (ob.add(v[0], a), ob.add(v[1], ob.const(1, np.int64))),
                lambda ob, v: (ob.mul(v[0], step), v[1]),
                lambda ob, v: (ob.sub(v[0], ob.convert(b, np.float64)),
                               ob.sub(v[1], ob.convert(b, np.int64))),
            ], (acc, hits))
            return o.add(i, o.const(1, np.int32)), acc, hits
        return ops.while_loop(cond, body, (ops.const(0, np.int32), ops.const(0.5, np.float64),
                                           ops.const(0, np.int64)))
    a = np.float64(0.75)
    b = np.int32(3)
    check_program(program, [(_i32(n), a, b) for n in (0, 1, 4, 9)])


def test_compiled_loops_keep_their_computation_separate(rng):
    """Two loops over the same outer value in one computation each get their own capture."""
    def program(ops, n, w):
        def cond(o, s):
            return o.lt(s[0], n)

        def body_add(o, s):
            return o.add(s[0], o.const(1, np.int32)), o.add(s[1], w)

        def body_mul(o, s):
            return o.add(s[0], o.const(1, np.int32)), o.mul(s[1], w)
        first = ops.while_loop(cond, body_add, (ops.const(0, np.int32), w))[1]
        second = ops.while_loop(cond, body_mul, (ops.const(0, np.int32), w))[1]
        return first, second
    w = rng.standard_normal(2)
    check_program(program, [(_i32(n), w) for n in (0, 3)])
