"""The explicit control-flow primitives with ``jax.lax``'s names and signatures.

Outside a build (plain Python calling the same function, as the tests' oracle does) each
has its reference meaning (`runtime.reference`); inside a build it stages a ``while`` or
``case`` operation.
"""
from __future__ import annotations

import builtins   # `max`/`min` below are jax.lax's (issue 15)

import numpy as np
from jax import tree_util

from . import reference
from .calls import transpiled
from .context import current_builder, has_builder
from .control_flow import truth
from .errors import PSCTypeError
from .ir import Value


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn

def _as_state(b, tree, like=None):
    """Loop state leaves as Values: Python numbers become weak constants (or take the dtype
    of the loop state they stand for)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    like_leaves = tree_util.tree_leaves(like) if like is not None else [None] * len(leaves)
    values = []
    for leaf, model in zip(leaves, like_leaves):
        if isinstance(leaf, Value):
            values.append(leaf)
        elif isinstance(model, Value) and np.ndim(leaf) == 0:
            values.append(b.constant(np.asarray(leaf, model.dtype)))
            values[-1].weak = model.weak
        else:
            values.append(b.constant(leaf) if type(leaf) in (bool, int, float, complex)
                          else b.constant(np.asarray(leaf)))
    return tree_util.tree_unflatten(treedef, values)


def _predicate(b, value, what: str) -> Value:
    if not isinstance(value, Value):
        return b.constant(bool(value))
    if value.shape != ():
        raise b.error(PSCTypeError, f"{what} must be a scalar, got shape {value.shape}",
                      "reduce it first, e.g. with .any() or .all()")
    return truth(value)


@_primitive
def while_loop(cond_fun, body_fun, init_val):
    """``lax.while_loop``: repeat ``body_fun`` while ``cond_fun`` holds, on a fixed-type
    state.  Reference: `runtime.reference.while_loop`."""
    if not has_builder():
        return reference.while_loop(cond_fun, body_fun, init_val)
    b = current_builder()
    init = _as_state(b, init_val)
    cond_call, body_call = transpiled(cond_fun), transpiled(body_fun)

    def cond(sub, state):
        return _predicate(sub, cond_call(state), "while_loop condition")

    def body(sub, state):
        return _as_state(sub, body_call(state), like=state)
    return b.while_loop(cond, body, init)


@_primitive
def fori_loop(lower, upper, body_fun, init_val):
    """``lax.fori_loop``: ``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``.
    Reference: `runtime.reference.fori_loop`."""
    if not has_builder():
        return reference.fori_loop(lower, upper, body_fun, init_val)
    b = current_builder()
    start, stop = _as_state(b, (lower, upper))
    dtype = np.result_type(start.dtype, stop.dtype)
    start, stop = b.convert(start, dtype), b.convert(stop, dtype)
    body_call = transpiled(body_fun)
    one = b.constant(np.ones((), dtype))

    def cond(sub, state):
        return sub.lt(state[0], stop)

    def body(sub, state):
        i, val = state
        return sub.add(i, one), _as_state(sub, body_call(i, val), like=val)
    trip_count = None if isinstance(lower, Value) or isinstance(upper, Value) else \
        builtins.max(int(upper) - int(lower), 0)
    _, result = b.while_loop(cond, body, (start, _as_state(b, init_val)),
                             trip_count=trip_count)
    return result


@_primitive
def cond(pred, true_fun, false_fun, *operands):
    """``lax.cond``: ``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; a
    traced ``pred`` builds both branches.  Reference: `runtime.reference.cond`."""
    if not has_builder() or not isinstance(pred, Value):
        return reference.cond(pred, true_fun, false_fun, *operands)
    b = current_builder()
    calls = [transpiled(true_fun), transpiled(false_fun)]
    return b.conditional(_predicate(b, pred, "cond predicate"),
                         [lambda sub, ops, f=f: _as_state(sub, f(*ops)) for f in calls],
                         _as_state(b, operands))


@_primitive
def switch(index, branches, *operands):
    """``lax.switch``: ``branches[clamp(index)](*operands)``.
    Reference: `runtime.reference.switch`."""
    if not has_builder() or not isinstance(index, Value):
        return reference.switch(index, branches, *operands)
    b = current_builder()
    calls = [transpiled(f) for f in branches]
    return b.conditional(index, [lambda sub, ops, f=f: _as_state(sub, f(*ops))
                                 for f in calls], _as_state(b, operands))


@_primitive
def static_range(*args):
    """``range`` that the transpiler always unrolls (the index is static in the body)."""
    return range(*args)


# jax.lax's names that `transpiler.lax` re-exports.  Each family adds its block below; keep
# the blocks apart (one blank-line-separated block per issue) so they merge cleanly.
__all__ = ["while_loop", "cond", "fori_loop", "switch", "static_range"]

# --- issue 12: scan ---
from .scan import scan  # noqa: E402  (a loop over arrays' leading axis; `runtime.scan`)
__all__ += ["scan"]


# --- issue 15: convolutions ---
from .lax_convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,  # noqa: E402
                              conv_general_dilated, conv_transpose,
                              conv_with_general_padding)
__all__ += ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
            "conv_dimension_numbers", "ConvDimensionNumbers"]


# --- issue 15: windowed reductions and reducers ---
# NB: this binds jax.lax's `max` and `min` in this module: code here uses builtins.max/min.
from .windowed import add, max, min, mul, padtype_to_pads, reduce_window  # noqa: E402,A004
__all__ += ["reduce_window", "add", "max", "min", "mul", "padtype_to_pads"]


# --- issue 15: structural primitives ---
from .lax_structural import (broadcast_in_dim, broadcasted_iota, dot_general,  # noqa: E402
                             dynamic_slice, dynamic_update_slice, iota, pad,
                             reduce_precision, select, sort)
__all__ += ["dot_general", "dynamic_slice", "dynamic_update_slice", "pad", "select",
            "broadcast_in_dim", "reduce_precision", "iota", "broadcasted_iota", "sort"]


# --- issue 12: stop_gradient ---
from .autodiff.custom import stop_gradient  # noqa: E402
__all__ += ["stop_gradient"]


# --- issue 14: collectives over a pmap's or a named vmap's axis ---
from .collectives import (all_gather, all_to_all, axis_index, pmax, pmean,  # noqa: E402
                          pmin, ppermute, psum, psum_scatter)
__all__ += ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
            "all_to_all", "axis_index"]
# --- issue 14: with_sharding_constraint (SPMD) ---
from .spmd import with_sharding_constraint  # noqa: E402
__all__ += ["with_sharding_constraint"]
