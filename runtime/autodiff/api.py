"""``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``, ``hessian``, with
JAX's signatures.

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
from ..calls import transpiled
from ..staged import StagedFunction
from .forward import jvp_region
from .reverse import backward_pass, forward_pass
from .tangents import is_float, zeros, zeros_like
from .trace import trace

_staged_cache: dict = {}   # (transform name, function, options) -> StagedFunction


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
    staged = _staged_cache.get(key)
    if staged is None:
        def build(b, *call_args, **call_kwargs):
            return transform(*call_args, **call_kwargs)

        def interface(*call_args, **call_kwargs):  # pragma: no cover - signature only
            raise NotImplementedError
        interface.__name__ = f"{key[0]}_{getattr(key[1], '__name__', 'f')}"
        device = bool(getattr(key[1], "return_device_arrays", False))
        staged = _staged_cache[key] = StagedFunction(build, interface,
                                                     name=interface.__name__,
                                                     return_device_arrays=device)
    return staged(*args, **kwargs)


def _float_check(b, leaves, what):
    for leaf in leaves:
        if not is_float(leaf):
            raise b.error(PSCTypeError, f"{what} requires real- or complex-valued inputs "
                          f"(input dtype that is a sub-dtype of np.inexact), but got "
                          f"{leaf.dtype.name}", "convert integer inputs with astype first")


# --- jvp / vjp -----------------------------------------------------------------------------------

@_primitive
def jvp(fun, primals, tangents):
    """``(fun(*primals), directional derivative of fun at primals along tangents)``."""
    if not has_builder():
        return _staged(("jvp", fun), lambda p, t: _jvp_transform(fun, p, t),
                       tuple(primals), tuple(tangents))
    return _jvp_transform(fun, tuple(primals), tuple(tangents))


def _jvp_transform(fun, primals, tangents):
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
    return (tree_util.tree_unflatten(traced.out_treedef, out_leaves),
            tree_util.tree_unflatten(traced.out_treedef, tangent_leaves))


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


# --- grad ------------------------------------------------------------------------------------------

def _positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


@_primitive
def value_and_grad(fun, argnums=0, has_aux=False):
    """``(fun(*args), gradient of fun with respect to args[argnums])``; ``fun`` must return
    a real scalar (or ``(scalar, aux)`` with ``has_aux``).  With a tuple ``argnums`` the
    gradient is a tuple."""
    key = (fun, argnums if isinstance(argnums, int) else tuple(argnums), has_aux)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        if not has_builder():
            return _staged_with_static_ints(
                ("value_and_grad",) + key, _positions(key[1]),
                lambda *a, **k: _value_and_grad_transform(fun, key[1], has_aux, *a, **k),
                args, kwargs)
        return _value_and_grad_transform(fun, key[1], has_aux, *args, **kwargs)
    value_and_grad_f.__psc_primitive__ = True
    return value_and_grad_f


def _value_and_grad_transform(fun, argnums, has_aux, *args, **kwargs):
    b = current_builder()
    positions = _positions(argnums)
    for p in positions:
        if not -len(args) <= p < len(args):
            raise b.error(PSCValueError, f"argnums {p} is out of range for {len(args)} "
                          "positional arguments")
    diff = _lift(b, tuple(args[p] for p in positions))
    _float_check(b, tree_util.tree_leaves(diff), "grad")

    def partial(*diff_args):
        full = list(args)
        for p, value in zip(positions, diff_args):
            full[p] = value
        return transpiled(fun)(*full, **kwargs)
    result = vjp(partial, *diff, has_aux=has_aux)
    value, vjp_fn = result[0], result[1]
    if not isinstance(value, Value) and np.ndim(value) == 0 and \
            np.asarray(value).dtype.kind == "f":
        # the output does not depend on the inputs: the gradient is zero (as JAX)
        value = b.constant(np.asarray(value))
        zeros = tree_util.tree_map(lambda leaf: zeros_like(b, leaf), diff)
        grads = zeros[0] if isinstance(argnums, int) else tuple(zeros)
        return ((value, result[2]) if has_aux else value), grads
    if not isinstance(value, Value) or value.shape != () or not is_float(value):
        raise b.error(PSCTypeError, "grad requires a function returning a real scalar, got "
                      f"{getattr(value, 'dtype', type(value).__name__)}"
                      f"{list(getattr(value, 'shape', ()))}", "sum or index the output")
    grads = vjp_fn(b.constant(np.ones((), value.dtype)))
    grads = grads[0] if isinstance(argnums, int) else tuple(grads)
    return ((value, result[2]) if has_aux else value), grads


@_primitive
def grad(fun, argnums=0, has_aux=False):
    """The gradient of scalar ``fun`` with respect to ``args[argnums]`` (with ``has_aux``:
    ``(gradient, aux)``)."""
    value_and_grad_f = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        value, grads = value_and_grad_f(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    grad_f.__psc_primitive__ = True
    return grad_f


# --- Jacobians and Hessians --------------------------------------------------------------------

def _basis_loop(b, size, column_fn, out_shape, dtype):
    """``J[..., i] = column_fn(e_i)`` for i < size, as one staged loop (constant program
    size, however many columns): returns J with shape ``out_shape + (size,)``."""
    flat = zeros(b, (size,) + out_shape, dtype)

    def cond(sub, carry):
        return sub.lt(carry[0], sub.constant(np.int32(size)))

    def body(sub, carry):
        i, jac = carry
        column = column_fn(sub, i)
        jac = sub.dynamic_update_slice(
            jac, sub.reshape(sub.convert(column, dtype), (1,) + out_shape),
            [i] + [sub.constant(np.int32(0))] * len(out_shape))
        return sub.add(i, sub.constant(np.int32(1))), jac
    _, jac = b.while_loop(cond, body, (b.constant(np.int32(0)), flat), trip_count=size)
    return b.transpose(jac, list(range(1, len(out_shape) + 1)) + [0])


def _one_hot(sub, i, shape, dtype):
    size = int(np.prod(shape, dtype=np.int64))
    hit = sub.eq(sub.iota((size,), np.int32, 0),
                 sub.broadcast_in_dim(i, (size,), ()))
    return sub.reshape(sub.convert(hit, dtype), shape)


def _single_array_argument(b, args, argnums, what):
    if not isinstance(argnums, int):
        raise b.error(PSCValueError, f"{what} supports one argnums (an int)")
    x = _lift(b, args[argnums])
    if not isinstance(x, Value):
        raise b.error(PSCTypeError, f"{what} differentiates with respect to one array")
    _float_check(b, [x], what)
    return x


def _with_argument(fun, args, argnums):
    def partial(value):
        full = list(args)
        full[argnums] = value
        return transpiled(fun)(*full)
    return partial


@_primitive
def jacfwd(fun, argnums=0):
    """The Jacobian of array-valued ``fun`` by forward mode: shape ``out.shape + x.shape``."""
    @functools.wraps(fun)
    def jacobian(*args):
        if not has_builder():
            return _staged(("jacfwd", fun, argnums),
                           lambda *a: _jacfwd_transform(fun, argnums, *a), *args)
        return _jacfwd_transform(fun, argnums, *args)
    jacobian.__psc_primitive__ = True
    return jacobian


def _jacfwd_transform(fun, argnums, *args):
    b = current_builder()
    x = _single_array_argument(b, args, argnums, "jacfwd")
    partial = _with_argument(fun, args, argnums)
    out = trace(b, transpiled(partial), (x,)).outputs[0]
    if not isinstance(out, Value):
        raise b.error(PSCTypeError, "jacfwd needs a function returning one array")

    def column(sub, i):
        return jvp(partial, (x,), (_one_hot(sub, i, x.shape, x.dtype),))[1]
    jac = _basis_loop(b, max(x.size, 0), column, out.shape, out.dtype)
    return b.reshape(jac, out.shape + x.shape)


@_primitive
def jacrev(fun, argnums=0):
    """The Jacobian of array-valued ``fun`` by reverse mode: shape ``out.shape + x.shape``."""
    @functools.wraps(fun)
    def jacobian(*args):
        if not has_builder():
            return _staged(("jacrev", fun, argnums),
                           lambda *a: _jacrev_transform(fun, argnums, *a), *args)
        return _jacrev_transform(fun, argnums, *args)
    jacobian.__psc_primitive__ = True
    return jacobian


def _jacrev_transform(fun, argnums, *args):
    b = current_builder()
    x = _single_array_argument(b, args, argnums, "jacrev")
    partial = _with_argument(fun, args, argnums)
    out, vjp_fn = vjp(partial, x)
    if not isinstance(out, Value):
        raise b.error(PSCTypeError, "jacrev needs a function returning one array")

    def row(sub, i):
        return vjp_fn(_one_hot(sub, i, out.shape, out.dtype))[0]
    rows = _basis_loop(b, max(out.size, 0), row, x.shape, x.dtype)   # x.shape + (out.size,)
    moved = b.transpose(rows, [x.ndim] + list(range(x.ndim)))
    return b.reshape(moved, out.shape + x.shape)


@_primitive
def hessian(fun, argnums=0):
    """``jacfwd(jacrev(fun))``: the Hessian of scalar ``fun``, forward-over-reverse."""
    return jacfwd(jacrev(fun, argnums), argnums)
