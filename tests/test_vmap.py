"""``vmap`` (`runtime/vmap.py`): JAX's batching transform on the graph IR.

The oracle is a Python loop over the mapped axis that stacks the plain function's results
(values, dtypes, shapes), and ``jax.vmap`` of the same math for per-example gradients.
The control-flow corpus (`cf_corpus`) and the autodiff corpus (`test_autodiff.CASES`) are
re-run under ``vmap`` over three lanes of their inputs.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

from ad_corpus.oracles import jax_x64  # noqa: F401  (JAX in float64 while this module runs)
from conftest import assert_same
from transpiler import (PSCError, PSCTypeError, PSCUnsupportedCallError, PSCValueError, grad,
                        jit_ps, jvp, vjp, vmap)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))          # 3 lanes of 4
Y = RNG.standard_normal((4, 3))          # 3 lanes along axis 1 / -1


def loop(fn, args, in_axes, out_axes=0, size=None):
    """The oracle: ``fn`` on each lane of ``args`` (mapped along ``in_axes``), the results
    stacked along ``out_axes`` (None: the first lane's result, checked equal in all)."""
    size = size or next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    lanes = [fn(*[a if ax is None else np.take(a, k, axis=ax)
                  for a, ax in zip(args, in_axes)]) for k in range(size)]
    if out_axes is None:
        return lanes[0]
    return tree_util.tree_map(lambda *r: np.stack([np.asarray(v) for v in r], out_axes),
                              *lanes)


# --- per-lane functions (module level: the transpiler reads their source) --------------------

def branchy(x, y):
    if x.sum() > 0:              # a traced test that differs between lanes
        return x * y + 1.0
    return x - y


def halve_until_small(x):
    k = 0
    while np.abs(x).max() > 1.0:   # a lane-dependent trip count
        x = x * 0.5
        k = k + 1
    return x, k


def first_negative(x):
    found = -1
    for i in range(x.shape[0]):
        if x[i] < 0:
            found = i
            break
    return found


def scaled_rows(x, n):
    total = np.zeros_like(x)
    for _ in range(n):             # n: a Python int, unmapped (static)
        total = total + x
    return total


def tree_fn(p):
    return {"sum": p["a"] + p["b"][0], "prod": (p["a"] * p["b"][1],)}


def loss(w, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return -(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def jax_loss(w, x, y):
    p = 1.0 / (1.0 + jnp.exp(-(x @ w)))
    return -(y * jnp.log(p) + (1.0 - y) * jnp.log(1.0 - p))


def cube_sum(x):
    return np.sum(x ** 3)


def jvp_inside(x, t):
    return jvp(np.sin, (x,), (t,))[1]


def vjp_inside(x, ct):
    _, pullback = vjp(np.tanh, x)
    return pullback(ct)[0]


# --- in_axes / out_axes against the loop ---------------------------------------------------------

@pytest.mark.parametrize("in_axes, out_axes", [(0, 0), (0, 1), (0, -1), (1, 0), (-1, 1),
                                               (1, -1)])
def test_axes_against_the_loop(in_axes, out_axes):
    x = X if in_axes == 0 else Y
    y = X[0] if in_axes == 0 else Y[:, 0]     # unmapped: in_axes None
    got = vmap(branchy, in_axes=(in_axes, None), out_axes=out_axes)(x, y)
    assert_same(got, loop(branchy, (x, y), (in_axes, None), out_axes))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_dtypes_are_the_loop_s(dtype):
    x = (X * 10).astype(dtype)
    got = vmap(lambda a: (a * 2, a.sum(), a > 0))(x)
    assert_same(got, loop(lambda a: (a * 2, a.sum(), a > 0), (x,), (0,)))


def test_out_axes_none_for_an_unmapped_output():
    f = vmap(lambda a, c: (a + c, c * 2.0), in_axes=(0, None), out_axes=(0, None))
    got = f(X, X[1])
    assert_same(got, (X + X[1], X[1] * 2.0))


def test_constant_outputs_are_broadcast():
    got = vmap(lambda a: (1.0, np.ones(2)), out_axes=(0, 1))(X)
    assert_same(got, (np.ones(3), np.ones((2, 3))))


def test_axis_size_without_mapped_arguments():
    got = vmap(lambda c: c * 2.0, in_axes=None, axis_size=5)(X[0])
    assert_same(got, np.stack([X[0] * 2.0] * 5))


def test_pytrees_in_and_out():
    p = {"a": X, "b": (Y.T.copy(), X * 3)}
    got = vmap(tree_fn, in_axes=({"a": 0, "b": (0, 0)},))(p)
    expected = loop(lambda a, b0, b1: tree_fn({"a": a, "b": (b0, b1)}),
                    (p["a"], p["b"][0], p["b"][1]), (0, 0, 0))
    assert_same(got, expected)
    got = vmap(tree_fn, in_axes=({"a": 1, "b": None},), out_axes={"sum": 0, "prod": (1,)})(
        {"a": Y, "b": (X[0], X[1])})
    expected = tree_fn({"a": Y.T, "b": (X[0], X[1])})
    assert_same(got, {"sum": expected["sum"], "prod": (expected["prod"][0].T,)})


def test_list_in_axes_and_keyword_arguments_mapped_along_0():
    got = vmap(branchy, in_axes=[1, None])(Y, X[0, :4])   # a list is read as a tuple
    assert_same(got, loop(branchy, (Y, X[0, :4]), (1, None)))
    got = vmap(branchy, in_axes=(0,))(X, y=X * 2)        # JAX: kwargs map along axis 0
    assert_same(got, loop(branchy, (X, X * 2), (0, 0)))


def test_python_scalars():
    got = vmap(scaled_rows, in_axes=(0, None))(X, 3)     # a static Python int
    assert_same(got, loop(scaled_rows, (X, 3), (0, None)))
    got = vmap(lambda a, s: a * s, in_axes=(0, None))(X, 2.5)
    assert_same(got, X * 2.5)


def test_traced_if_while_for_break():
    x = np.array([[0.5, -0.2], [4.0, 3.0], [40.0, -1.0]])
    assert_same(vmap(halve_until_small)(x), loop(halve_until_small, (x,), (0,)))
    z = np.array([[1.0, 2.0, -3.0], [-1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    assert_same(vmap(first_negative)(z), loop(first_negative, (z,), (0,)))
    assert_same(vmap(first_negative, in_axes=1)(z.T.copy()), loop(first_negative, (z,), (0,)))


def test_compiled_once_per_signature():
    f = vmap(lambda a: a * 2.0)
    for _ in range(3):
        f(X)
    f(Y)
    from runtime.autodiff.api import _staged_cache
    staged = [s for k, s in _staged_cache.items() if k[0] == "vmap" and k[1] is f.__wrapped__]
    assert len(staged) == 1 and staged[0].cache_info().misses == 2


# --- inside PSC code and compositions ------------------------------------------------------------

@jit_ps
def per_example_grads(w, x, y):
    return vmap(grad(loss), in_axes=(None, 0, 0))(w, x, y)


@jit_ps
def grad_of_vmapped_mean(w, x, y):
    return grad(lambda v: np.mean(vmap(loss, in_axes=(None, 0, 0))(v, x, y)))(w)


@jit_ps
def vmap_in_jit(x, y):
    return vmap(branchy, in_axes=(1, None), out_axes=1)(x, y)


W = RNG.standard_normal(4) * 0.3
LABELS = np.array([0.0, 1.0, 1.0])


def test_per_example_gradients_match_jax():
    expected = jax.vmap(jax.grad(jax_loss), in_axes=(None, 0, 0))(W, X, LABELS)
    assert_same(per_example_grads(W, X, LABELS), np.asarray(expected), rtol=1e-10)
    assert_same(vmap(grad(loss), in_axes=(None, 0, 0))(W, X, LABELS), np.asarray(expected),
                rtol=1e-10)
    assert_same(jit_ps(vmap(grad(loss), in_axes=(None, 0, 0)))(W, X, LABELS),
                np.asarray(expected), rtol=1e-10)


def test_grad_of_vmap_matches_jax():
    expected = jax.grad(lambda v: jnp.mean(jax.vmap(jax_loss, (None, 0, 0))(v, X, LABELS)))(W)
    assert_same(grad_of_vmapped_mean(W, X, LABELS), np.asarray(expected), rtol=1e-10)
    mean_loss = lambda v, x, y: np.mean(vmap(loss, in_axes=(None, 0, 0))(v, x, y))  # noqa
    assert_same(grad(mean_loss)(W, X, LABELS), np.asarray(expected), rtol=1e-10)


def test_vmap_of_vmap_and_inside_jit():
    x = RNG.standard_normal((2, 3, 4))
    got = vmap(vmap(branchy, in_axes=(0, None)), in_axes=(0, None))(x, X[0])
    expected = np.stack([loop(branchy, (xi, X[0]), (0, None)) for xi in x])
    assert_same(got, expected)
    # [j, k]: inner lane j (axis 1), outer lane k (axis 2)
    got = vmap(vmap(cube_sum, in_axes=1), in_axes=2, out_axes=1)(x)
    assert_same(got, np.sum(x ** 3, axis=0))
    assert_same(vmap_in_jit(Y, X[0, :4]), loop(branchy, (Y, X[0, :4]), (1, None), 1))
    nested = jit_ps(vmap(vmap(branchy, in_axes=(0, None)), in_axes=(0, None)))
    assert_same(nested(x, X[0]), expected)


def test_jvp_and_vjp_inside_vmap():
    assert_same(vmap(jvp_inside)(X, Y.T.copy()), np.cos(X) * Y.T)
    assert_same(jit_ps(vmap(vjp_inside, in_axes=(1, 0)))(Y, X), (1 - np.tanh(Y.T) ** 2) * X)


def test_hessian_vector_products_per_lane():
    # per-lane Hessian-vector products of cube_sum: forward over reverse, then vmap
    hvp = lambda x, v: jvp(grad(cube_sum), (x,), (v,))[1]   # noqa: E731
    got = vmap(hvp)(X, Y.T.copy())
    assert_same(got, 6 * X * Y.T)


# --- errors ---------------------------------------------------------------------------------

def test_inconsistent_sizes_list_each_argument():
    with pytest.raises(PSCValueError) as info:
        vmap(branchy)(X, Y)
    message = str(info.value)
    assert "inconsistent sizes" in message
    assert "axis 0 of argument x of type float64[3,4]" in message
    assert "axis 0 of argument y of type float64[4,3]" in message
    with pytest.raises(PSCValueError, match="the `axis_size` argument was 5"):
        vmap(cube_sum, axis_size=5)(X)
    with pytest.raises(PSCValueError, match=r"kwargs\['y'\]"):
        vmap(branchy, in_axes=(0,))(X, y=Y)


def test_axes_out_of_range_and_scalars():
    with pytest.raises(PSCValueError, match="along axis 2, which implies that its rank "
                                            "should be at least 3, but is only 2"):
        vmap(cube_sum, in_axes=2)(X)
    with pytest.raises(PSCValueError, match="axis -3"):
        vmap(cube_sum, in_axes=-3)(X)
    with pytest.raises(PSCValueError, match="rank should be at least 1, but is only 0"):
        vmap(cube_sum)(1.5)
    with pytest.raises(PSCValueError, match="but is only 0"):
        vmap(cube_sum)(np.float64(2.0))
    with pytest.raises(PSCValueError, match="out of bounds"):
        vmap(lambda a: a, out_axes=2)(X)
    with pytest.raises(PSCValueError, match="out of bounds"):
        vmap(lambda a: a, out_axes=-3)(X)


def test_in_axes_tree_must_match_the_arguments():
    with pytest.raises(PSCValueError, match=r"len\(in_axes\)=2, len\(args\)=1"):
        vmap(cube_sum, in_axes=(0, 0))(X)
    with pytest.raises(PSCValueError, match=r"tree prefix.*in_axes\[0\]"):
        vmap(cube_sum, in_axes=((0, 0),))(X)
    with pytest.raises(PSCValueError, match="tree prefix"):
        vmap(tree_fn, in_axes=({"a": 0, "c": 0},))({"a": X, "b": (X, X)})
    with pytest.raises(PSCValueError, match="out_axes specification must be a tree prefix"):
        vmap(lambda a: (a, a), out_axes=(0, 0, 0))(X)
    with pytest.raises(PSCTypeError, match="got 1.0"):
        vmap(cube_sum, in_axes=1.0)
    with pytest.raises(PSCTypeError, match="a tuple of entries"):
        vmap(cube_sum, in_axes={"x": 0})
    with pytest.raises(PSCTypeError, match="leaves, but got"):
        vmap(cube_sum, in_axes=((0, "a"),))
    with pytest.raises(PSCTypeError, match="out_axes must be"):
        vmap(cube_sum, out_axes=[0.5])


def test_mapped_output_with_out_axes_none_and_unsupported_options():
    with pytest.raises(PSCValueError, match="got axis spec None but output 0 was batched "
                                            "on axis 0"):
        vmap(lambda a: a, out_axes=None)(X)
    with pytest.raises(PSCValueError, match="at least one non-None value in in_axes"):
        vmap(cube_sum, in_axes=None)(X)
    with pytest.raises(PSCUnsupportedCallError, match="spmd_axis_name"):
        vmap(cube_sum, spmd_axis_name="d")
    assert vmap(cube_sum, axis_name="i").axis_name == "i"


@jit_ps
def bad_sizes_in_jit(x, y):
    return vmap(branchy)(x, y)   # the vmap line


def test_errors_inside_jit_name_the_line():
    with pytest.raises(PSCValueError) as info:
        bad_sizes_in_jit(X, Y)
    location = info.value.location
    import inspect
    lines, start = inspect.getsourcelines(bad_sizes_in_jit.__wrapped__)
    assert location.line == start + 2, location
    assert isinstance(info.value, PSCError)


# --- the corpora under vmap ----------------------------------------------------------------------

from test_autodiff import CASES as AD_CASES           # noqa: E402
from test_control_flow_corpus import CASES as CF_CASES  # noqa: E402

LANES = 3


def _signature(args, static_values):
    def key(v):
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(key(x) for x in v))
        if isinstance(v, dict):
            return ("dict", tuple((k, key(v[k])) for k in sorted(v)))
        if type(v) in (bool, int, float):
            return ("py", type(v).__name__)
        return (np.shape(v), np.asarray(v).dtype.str)
    return key(args), repr(static_values)


def _stack_lanes(lanes):
    """Per-argument pytrees whose leaves stack the lanes' leaves (Python scalars become
    arrays of NumPy's dtype for them)."""
    return tree_util.tree_map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]),
                              *lanes)


def _lane(stacked, k):
    return tree_util.tree_map(lambda a: a[k], stacked)


def _cf_lanes(c):
    """Three lanes of one signature, taking different paths where the case has them."""
    import inspect
    names = list(inspect.signature(c.fn).parameters)
    groups: dict = {}
    for args in c.inputs:
        traced = tuple(a for n, a in zip(names, args) if n not in c.static)
        static = tuple((n, a) for n, a in zip(names, args) if n in c.static)
        groups.setdefault(_signature(traced, static), []).append((traced, dict(static)))
    group = max(groups.values(), key=len)
    if len(group) == 1:   # inputs of one signature each: vary the one input's values
        traced, static = group[0]
        return [(tree_util.tree_map(functools.partial(_varied, k=k), traced), static)
                for k in range(LANES)]
    return [group[k % len(group)] for k in range(LANES)]


def _varied(a, k):
    """Lane ``k``'s version of an input leaf: scaled floats, shifted ints, flipped bools
    (lane 0 is the input itself)."""
    a = np.asarray(a)
    if k == 0:
        return a
    if a.dtype.kind == "b":
        return ~a if k == 1 else a
    if a.dtype.kind in "iu":
        return (a + k).astype(a.dtype)
    return (a * (0.25 if k == 1 else 3.0)).astype(a.dtype)


def _compare_lanes(fn, stacked, rtol, atol):
    got = vmap(fn)(*stacked)
    expected = _stack_lanes([fn(*_lane(stacked, k)) for k in range(LANES)])
    assert_same(got, expected, rtol, atol)


# Corpus entries vmap cannot take, each with the reason (nothing is skipped silently).
CF_NOT_BATCHABLE: dict = {}


@pytest.mark.parametrize("c", CF_CASES, ids=lambda c: c.id)
def test_control_flow_corpus_under_vmap(c):
    lanes = _cf_lanes(c)
    static = lanes[0][1]
    fn = functools.partial(c.fn, **static) if static else c.fn
    stacked = _stack_lanes([traced for traced, _ in lanes])
    if c.id in CF_NOT_BATCHABLE:
        with pytest.raises(PSCError, match=CF_NOT_BATCHABLE[c.id]):
            vmap(fn)(*stacked)
        return
    _compare_lanes(fn, stacked, c.rtol, c.atol)


@pytest.mark.parametrize("case", AD_CASES, ids=repr)
def test_autodiff_corpus_under_vmap(case):
    def lane_args(k):
        return tuple(a * (1 + 0.05 * k) if a.dtype.kind == "f" else a + k % 2 for a in case.args)
    stacked = _stack_lanes([lane_args(k) for k in range(LANES)])
    _compare_lanes(case.fn, stacked, 1e-10, 1e-12)


@jit_ps
def jitted_branchy(x, y):
    return branchy(x, y)


@jit_ps
def vmap_in_a_staged_loop(x, n):
    acc = np.zeros_like(x)
    for i in range(n):                    # a traced bound: a staged loop around the vmap
        acc = acc + vmap(halve_until_small)(x * (i + 1))[0]
    return acc


def test_vmap_of_a_jit_ps_function_and_inside_a_staged_loop():
    assert_same(vmap(jitted_branchy, in_axes=(0, None))(X, X[0]),
                loop(branchy, (X, X[0]), (0, None)))
    x = np.array([[0.5, -0.2], [4.0, 3.0], [40.0, -1.0]])
    expected = sum(loop(halve_until_small, (x * (i + 1),), (0,))[0] for i in range(3))
    assert_same(vmap_in_a_staged_loop(x, 3), expected)


def test_errors_from_plain_python_name_the_call_line():
    import inspect
    with pytest.raises(PSCValueError) as info:
        vmap(branchy)(X, Y)   # the call
    line = inspect.currentframe().f_lineno - 1
    assert info.value.location is not None and info.value.location.line == line, \
        info.value.location


def test_axis_name_is_recorded_while_tracing():
    from runtime.vmap import active_axis_names
    from transpiler import pure
    seen = []
    note = pure(lambda: seen.append(active_axis_names()))   # runs while the program builds

    def record(a):
        note()
        return a * 2.0
    outer = vmap(vmap(record, axis_name="j"), axis_name="i")
    assert_same(outer(np.ones((2, 3))), np.full((2, 3), 2.0))
    assert seen[-1] == ("i", "j") and active_axis_names() == ()


def bump_first(x):
    x[0] += 1.0          # updates its argument in place
    return x.sum()


def test_vmap_of_a_function_updating_its_argument_is_refused():
    from transpiler import PSCSyntaxError
    with pytest.raises(PSCSyntaxError, match="updates its parameter"):
        vmap(bump_first)(X.copy())


def test_transforms_from_plain_python_keep_a_bounded_cache(monkeypatch):
    """A fresh lambda per call is a fresh key: the staged functions behind transforms called
    from plain Python stay bounded (least recently used evicted)."""
    from runtime.autodiff import api
    monkeypatch.setattr(api._staged_cache, "maxsize", 2)
    x = np.arange(3.0)
    def scaled(k):
        return lambda v: v * k
    for k in range(4):
        np.testing.assert_allclose(vmap(scaled(k))(x), x * k)
    assert api._staged_cache.info().size <= 2
