"""``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``, ``hessian``, with
JAX's signatures and options (``argnums``, ``has_aux``, ``holomorphic``, ``allow_int``) and
JAX's dtype checks (`dtype_checks`).

Inside a PSC function (while a computation is built) they trace the differentiated function
into a region and emit its derivative program into the current builder, so they compose to
any order and with control flow.  Called from plain Python, they build, compile and cache
that program per call signature, like ``jit_ps``.
"""
from __future__ import annotations

import functools

import numpy as np
from jax import tree_util

from ..context import current_builder, has_builder
from ..errors import PSCTypeError, PSCValueError
from ..ir import Value
from ..cache import LRUCache
from ..calls import transpiled
from ..staged import StagedFunction
from ..batching import batch_region
from ..primitives.support import to_front
from .bases import identity_basis, leading_blocks, trailing_blocks
from .dtype_checks import (FLOAT0, check_jacfwd_input, check_jacfwd_output,
                           check_revderiv_input, check_revderiv_output, is_integral)
from .forward import jvp_region
from .reverse import backward_pass, forward_pass
from .tangents import zeros_like
from .trace import trace

# (transform name, function, options) -> StagedFunction.  Bounded: a fresh lambda per call
# (`vmap(lambda v: ...)(x)` in a loop) makes a fresh key every time.
_staged_cache = LRUCache(maxsize=512)


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


def _lift(b, tree):
    """Python numbers and NumPy arrays in ``tree`` as Values (weak for Python numbers)."""
    def lift(leaf):
        if isinstance(leaf, Value):
            return leaf
        if type(leaf) in (bool, int, float, complex):
            return b.constant(leaf)
        return b.constant(np.asarray(leaf))
    return tree_util.tree_map(lift, tree)


def _staged_with_static_ints(key, positions, transform, args, kwargs):
    """From plain Python, Python ints and bools that are not differentiated are static
    (loop bounds stay known, as with jax.grad): they join the key, not the arguments."""
    static = {i: a for i, a in enumerate(args)
              if i not in positions and type(a) in (int, bool)}
    traced = [a for i, a in enumerate(args) if i not in static]

    def with_static(*traced_args, **k):
        it = iter(traced_args)
        full = [static[i] if i in static else next(it) for i in range(len(args))]
        return transform(*full, **k)
    return _staged(key + (tuple(sorted(static.items())),), with_static, *traced, **kwargs)


def _staged(key, transform, *args, **kwargs):
    """Run ``transform(*args)`` compiled, from plain Python: one staged function per
    ``key`` (the transform's name, the function and its options), compiled per signature.
    Results are NumPy, or jax arrays where the function was made with
    ``return_device_arrays=True`` (a ``functools.wraps`` wrapper of it carries the flag)."""
    def create():
        def build(b, *call_args, **call_kwargs):
            return transform(*call_args, **call_kwargs)

        def interface(*call_args, **call_kwargs):  # pragma: no cover - signature only
            raise NotImplementedError
        interface.__name__ = f"{key[0]}_{getattr(key[1], '__name__', 'f')}"
        device = bool(getattr(key[1], "return_device_arrays", False))
        return StagedFunction(build, interface, name=interface.__name__,
                              return_device_arrays=device)
    return _staged_cache.get_or_create(key, create)(*args, **kwargs)


# --- jvp / vjp -----------------------------------------------------------------------------------

@_primitive
def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), directional derivative of fun at primals along tangents)``; with
    ``has_aux`` (``fun`` returns ``(output, aux)``) also ``aux``, not differentiated."""
    if not has_builder():
        return _staged(("jvp", fun, has_aux),
                       lambda p, t: _jvp_transform(fun, p, t, has_aux),
                       tuple(primals), tuple(tangents))
    return _jvp_transform(fun, tuple(primals), tuple(tangents), has_aux)


def _jvp_transform(fun, primals, tangents, has_aux=False):
    b = current_builder()
    primals, tangents = _lift(b, tuple(primals)), _lift(b, tuple(tangents))
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if p_tree != t_tree:
        raise b.error(PSCTypeError, f"jvp: primal structure {p_tree} does not match the "
                      f"tangent structure {t_tree}")
    for p, t in zip(p_leaves, t_leaves):
        if p.shape != t.shape:
            raise b.error(PSCTypeError, f"jvp: primal shape {p.shape} and tangent shape "
                          f"{t.shape} differ")
    traced = trace(b, transpiled(fun), primals)
    outs, outs_t = jvp_region(b, traced.region, p_leaves, t_leaves)
    out_leaves, tangent_leaves = _outputs(b, traced, outs, outs_t)
    out = tree_util.tree_unflatten(traced.out_treedef, out_leaves)
    tangent = tree_util.tree_unflatten(traced.out_treedef, tangent_leaves)
    if not has_aux:
        return out, tangent
    _check_aux_pair(b, out, "jvp")
    return out[0], tangent[0], out[1]   # aux: its tangents are dropped (dead code to XLA)


def _check_aux_pair(b, out, what):
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise b.error(PSCTypeError, f"{what} with has_aux=True needs a function returning a "
                      f"pair (output, aux), got {type(out).__name__}")


def _outputs(b, traced, values, tangents):
    """Output leaves (static ones kept) and their tangents (zeros where none)."""
    it = iter(zip(values, tangents))
    leaves, derivs = [], []
    for out in traced.outputs:
        if isinstance(out, Value):
            value, tangent = next(it)
            leaves.append(value)
            derivs.append(tangent if tangent is not None else zeros_like(b, value))
        else:
            leaves.append(out)
            derivs.append(np.zeros_like(out))
    return leaves, derivs


@_primitive
def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` gives the cotangents of the
    primals (a tuple, one per primal).  Inside PSC code only (the result holds a function)."""
    if not has_builder():
        raise PSCValueError("vjp returns a function over traced values, so it is only "
                            "available inside a jit_ps function",
                            hint="use grad or value_and_grad from plain Python, or call "
                                 "vjp inside a jit_ps function")
    b = current_builder()
    primals = _lift(b, primals)
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    call = transpiled(fun)
    traced = trace(b, (lambda *a: call(*a)[0]) if has_aux else call, primals)
    env = forward_pass(b, traced.region, p_leaves, save_loops=True)
    values = [env[v] if isinstance(v, Value) else v for v in traced.outputs]
    out = tree_util.tree_unflatten(traced.out_treedef, values)

    def vjp_fn(cotangent):
        sub = current_builder()
        ct_leaves, ct_tree = tree_util.tree_flatten(_lift(sub, cotangent))
        if ct_tree != traced.out_treedef:
            raise sub.error(PSCTypeError, f"vjp: cotangent structure {ct_tree} does not "
                            f"match the output structure {traced.out_treedef}")
        region_cts = [ct for ct, v in zip(ct_leaves, traced.outputs) if isinstance(v, Value)]
        param_cts, _ = backward_pass(sub, traced.region, env, region_cts)
        grads = [ct if ct is not None else zeros_like(sub, p)
                 for ct, p in zip(param_cts, p_leaves)]
        return tree_util.tree_unflatten(p_tree, grads)
    vjp_fn.__psc_primitive__ = True   # called from PSC code as it is, not transpiled
    if has_aux:
        aux = call(*primals)[1]
        return out, vjp_fn, aux
    return out, vjp_fn


# --- arguments, options, float0 --------------------------------------------------------------

def _positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _argnums_key(argnums):
    return argnums if isinstance(argnums, int) else tuple(argnums)


def _argnums_partial(b, fun, argnums, args, kwargs):
    """``(partial, dyn)``: ``fun`` as a function of the arguments at ``argnums`` only (the
    others fixed, keyword arguments passed on) and those arguments, lifted to Values."""
    positions = _positions(argnums)
    for p in positions:
        if not -len(args) <= p < len(args):
            raise b.error(PSCValueError, f"argnums {p} is out of range for {len(args)} "
                          "positional arguments")
    dyn = _lift(b, tuple(args[p] for p in positions))

    @_primitive   # builder code already: called as it is, not transpiled
    def partial(*diff_args):
        full = list(args)
        for p, value in zip(positions, diff_args):
            full[p] = value
        return transpiled(fun)(*full, **kwargs)
    return partial, dyn


class _Float0Slot:
    """Stands for a float0 gradient in a compiled program's result (no array can be one):
    a pytree node without leaves that keeps the shape, made into the NumPy array after the
    call (`_float0_on_host`)."""

    def __init__(self, shape):
        self.shape = tuple(shape)


tree_util.register_pytree_node(_Float0Slot, lambda slot: ((), slot.shape),
                               lambda shape, _: _Float0Slot(shape))


def _float0_zeros(shape):
    """JAX's gradient of an integer input: zeros of dtype float0 (a NumPy array)."""
    return np.zeros(shape, FLOAT0)


def _is_float0(leaf):
    return isinstance(leaf, np.ndarray) and leaf.dtype == FLOAT0


def _float0_slots(tree):
    return tree_util.tree_map(lambda l: _Float0Slot(l.shape) if _is_float0(l) else l, tree)


def _float0_on_host(tree):
    return tree_util.tree_map(lambda l: _float0_zeros(l.shape) if isinstance(l, _Float0Slot)
                              else l, tree, is_leaf=lambda l: isinstance(l, _Float0Slot))


# --- grad ------------------------------------------------------------------------------------------

@_primitive
def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """``(fun(*args), gradient of fun with respect to args[argnums])``; ``fun`` must return
    a real scalar (complex with ``holomorphic``; ``(scalar, aux)`` with ``has_aux``).  With a
    tuple ``argnums`` the gradient is a tuple; with ``allow_int`` integer arguments get
    float0 zeros, as in JAX."""
    options = (_argnums_key(argnums), has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        if not has_builder():
            return _float0_on_host(_staged_with_static_ints(
                ("value_and_grad", fun) + options, _positions(options[0]),
                lambda *a, **k: _float0_slots(_value_and_grad_transform(fun, *options,
                                                                        *a, **k)),
                args, kwargs))
        return _value_and_grad_transform(fun, *options, *args, **kwargs)
    value_and_grad_f.__psc_primitive__ = True
    return value_and_grad_f


def _value_and_grad_transform(fun, argnums, has_aux, holomorphic, allow_int, *args, **kwargs):
    b = current_builder()
    partial, diff = _argnums_partial(b, fun, argnums, args, kwargs)
    diff_leaves = tree_util.tree_leaves(diff)
    for leaf in diff_leaves:
        check_revderiv_input(b, "grad", holomorphic, allow_int, leaf)
    result = vjp(partial, *diff, has_aux=has_aux)
    value, vjp_fn = result[0], result[1]
    if not isinstance(value, Value) and np.ndim(value) == 0 and \
            np.asarray(value).dtype.kind in "fc":
        # the output does not depend on the inputs: the gradient is zero (as JAX)
        value = b.constant(np.asarray(value))
        check_revderiv_output(b, "grad", holomorphic, value)
        grads = tree_util.tree_map(lambda leaf: zeros_like(b, leaf), diff)
    else:
        _check_scalar(b, value)
        check_revderiv_output(b, "grad", holomorphic, value)
        grads = vjp_fn(b.constant(np.ones((), value.dtype)))
    grads = _ints_to_float0(diff, grads)
    grads = grads[0] if isinstance(argnums, int) else tuple(grads)
    return ((value, result[2]) if has_aux else value), grads


def _check_scalar(b, value):
    if not isinstance(value, Value) or value.shape != ():
        shape = getattr(value, "shape", None)
        what = f"had shape: {shape}" if shape is not None else f"was {type(value).__name__}"
        raise b.error(PSCTypeError, f"Gradient only defined for scalar-output functions "
                      f"(grad requires a function returning a real scalar). Output {what}.",
                      "sum or index the output")


def _ints_to_float0(diff, grads):
    leaves, tree = tree_util.tree_flatten(grads)
    return tree_util.tree_unflatten(tree, [
        _float0_zeros(x.shape) if is_integral(x) else g
        for x, g in zip(tree_util.tree_leaves(diff), leaves)])


@_primitive
def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of scalar ``fun`` with respect to ``args[argnums]`` (with ``has_aux``:
    ``(gradient, aux)``); options as `value_and_grad`."""
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        value, grads = value_and_grad_f(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    grad_f.__psc_primitive__ = True
    return grad_f


# --- Jacobians and Hessians --------------------------------------------------------------------
# As JAX: jacfwd is vmap(jvp) over the inputs' identity basis, jacrev vmap(vjp_fn) over the
# outputs'.  The JVP (VJP) is traced once into a region and `batch_region` runs it on all
# basis vectors at once: one batched program, whatever the number of columns (rows).

def _jacobian(kind, transform, fun, options):
    @functools.wraps(fun)
    def jacobian(*args, **kwargs):
        if not has_builder():
            return _staged_with_static_ints(
                (kind, fun) + options, _positions(options[0]),
                lambda *a, **k: transform(fun, *options, *a, **k), args, kwargs)
        return transform(fun, *options, *args, **kwargs)
    jacobian.__psc_primitive__ = True
    return jacobian


def _lifted(fun):
    """``fun`` with its output leaves as Values (a constant output has a zero Jacobian)."""
    @_primitive   # builder code already: called as it is, not transpiled
    def lifted(*args):
        return _lift(current_builder(), fun(*args))
    return lifted


def _batched(b, fn, examples, basis):
    """``fn`` traced on arguments like ``examples`` and run on every lane of ``basis`` (one
    array per argument, lanes along dimension 0): its output tree, each leaf a pair
    (Value, batch dimension or None)."""
    traced = trace(b, _lifted(fn), tuple(examples))   # every output leaf is a Value
    outs, dims = batch_region(b, traced.region, basis, [0] * len(basis))
    return tree_util.tree_unflatten(traced.out_treedef, list(zip(outs, dims)))


def _unbatched(b, pair):
    """A value no lane changed (a primal output, aux) from its (Value, dim) pair."""
    value, dim = pair
    if dim is None:
        return value
    index = [0] * value.ndim
    limit = list(value.shape)
    limit[dim] = 1
    lane = b.slice(value, index, limit)
    return b.reshape(lane, value.shape[:dim] + value.shape[dim + 1:])


def _is_pair(x):
    return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], Value)


def _example_tree(argnums, dyn):
    return dyn[0] if isinstance(argnums, int) else dyn


@_primitive
def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode, with JAX's structure: the output's pytree
    outside, the differentiated arguments' inside (a tuple for a tuple ``argnums``), each
    leaf of shape ``out.shape + x.shape`` and the output's dtype; with ``has_aux``:
    ``(jacobian, aux)``."""
    return _jacobian("jacfwd", _jacfwd_transform, fun,
                     (_argnums_key(argnums), has_aux, holomorphic))


def _jacfwd_transform(fun, argnums, has_aux, holomorphic, *args, **kwargs):
    b = current_builder()
    partial, dyn = _argnums_partial(b, fun, argnums, args, kwargs)
    in_leaves, in_tree = tree_util.tree_flatten(dyn)
    for leaf in in_leaves:
        check_jacfwd_input(b, holomorphic, leaf)

    @_primitive   # builder code already: called as it is, not transpiled
    def pushforward(*tangent_leaves):
        return jvp(partial, dyn, tree_util.tree_unflatten(in_tree, tangent_leaves),
                   has_aux=has_aux)
    result = _batched(b, pushforward, in_leaves, identity_basis(b, in_leaves))
    count = sum(int(np.prod(x.shape, dtype=np.int64)) for x in in_leaves)
    y = tree_util.tree_map(lambda p: _unbatched(b, p), result[0], is_leaf=_is_pair)
    y_leaves, y_tree = tree_util.tree_flatten(y)
    for leaf in y_leaves:
        check_jacfwd_output(b, holomorphic, leaf)
    example_leaves, example_tree = tree_util.tree_flatten(_example_tree(argnums, dyn))
    shapes = [x.shape for x in example_leaves]
    blocks = []
    for out, (tangent, dim) in zip(y_leaves, tree_util.tree_leaves(result[1],
                                                                    is_leaf=_is_pair)):
        stacked = b.convert(to_front(b, tangent, dim, count), out.dtype)
        blocks.append(tree_util.tree_unflatten(example_tree,
                                               trailing_blocks(b, stacked, shapes)))
    jac = tree_util.tree_unflatten(y_tree, blocks)
    if not has_aux:
        return jac
    return jac, tree_util.tree_map(lambda p: _unbatched(b, p), result[2], is_leaf=_is_pair)


@_primitive
def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode, with JAX's structure (as `jacfwd`), each
    leaf in the differentiated argument's dtype (zeros for an integer one with
    ``allow_int``, as JAX); with ``has_aux``: ``(jacobian, aux)``."""
    return _jacobian("jacrev", _jacrev_transform, fun,
                     (_argnums_key(argnums), has_aux, holomorphic, allow_int))


def _jacrev_transform(fun, argnums, has_aux, holomorphic, allow_int, *args, **kwargs):
    b = current_builder()
    partial, dyn = _argnums_partial(b, fun, argnums, args, kwargs)
    in_leaves = tree_util.tree_leaves(dyn)
    for leaf in in_leaves:
        check_revderiv_input(b, "jacrev", holomorphic, allow_int, leaf)
    result = vjp(_lifted(partial), *dyn, has_aux=has_aux)
    y, pullback = result[0], result[1]
    y_leaves, y_tree = tree_util.tree_flatten(y)
    for leaf in y_leaves:
        check_revderiv_output(b, "jacrev", holomorphic, leaf)

    @_primitive   # builder code already: called as it is, not transpiled
    def pull(*cotangent_leaves):
        return pullback(tree_util.tree_unflatten(y_tree, cotangent_leaves))
    cts = _batched(b, pull, y_leaves, identity_basis(b, y_leaves))
    count = sum(int(np.prod(v.shape, dtype=np.int64)) for v in y_leaves)
    example_leaves, example_tree = tree_util.tree_flatten(_example_tree(argnums, dyn))
    shapes = [v.shape for v in y_leaves]
    per_input = []    # per input leaf: its block for each output leaf
    for x, (ct, dim) in zip(example_leaves, tree_util.tree_leaves(cts, is_leaf=_is_pair)):
        stacked = b.convert(to_front(b, ct, dim, count), x.dtype)
        per_input.append(leading_blocks(b, stacked, shapes))
    jac = tree_util.tree_unflatten(y_tree, [
        tree_util.tree_unflatten(example_tree, [blocks[i] for blocks in per_input])
        for i in range(len(y_leaves))])
    return (jac, result[2]) if has_aux else jac


@_primitive
def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """``jacfwd(jacrev(fun))``: the Hessian, forward-over-reverse, with JAX's structure
    (output tree, then the inputs' tree twice)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
                  argnums, has_aux=has_aux, holomorphic=holomorphic)
