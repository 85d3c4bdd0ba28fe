"""Pure-Python reference implementations of the control-flow primitives.

These are the *meaning* of `Builder.while_loop` and `Builder.conditional` (and of the
`while_loop`/`cond`/`fori_loop`/`scan` that PSC code can call), written with ordinary Python
control flow.  Tests run a function both ways, compiled and through these, and compare.
"""
from __future__ import annotations

import operator

import numpy as np
from jax import tree_util

from .errors import PSCTypeError, PSCValueError


def while_loop(cond_fun, body_fun, init_val):
    val = init_val
    while cond_fun(val):
        val = body_fun(val)
    return val


def cond(pred, true_fun, false_fun, *operands):
    return true_fun(*operands) if pred else false_fun(*operands)


def switch(index, branches, *operands):
    index = min(max(int(index), 0), len(branches) - 1)
    return branches[index](*operands)


def fori_loop(lower, upper, body_fun, init_val):
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


def scan(f, init, xs, length=None, reverse=False, unroll=1):
    """``lax.scan``: ``carry, y = f(carry, x)`` for each ``x`` along the leading axis of the
    leaves of ``xs`` (backwards if ``reverse``); the ``y``s come back stacked, in ``xs``'s
    order.  ``unroll`` is a performance hint in JAX and means nothing here."""
    check_scan_unroll(unroll)
    leaves, treedef = tree_util.tree_flatten(xs)
    n = scan_length([np.shape(leaf) for leaf in leaves], length)
    leaves = [np.asarray(leaf) for leaf in leaves]
    carry, ys = init, []
    for i in reversed(range(n)) if reverse else range(n):
        carry, y = f(carry, tree_util.tree_unflatten(treedef, [leaf[i] for leaf in leaves]))
        ys.append(y)
    if n == 0:   # what f would stack: its result's types, from one call on zeros
        x = tree_util.tree_unflatten(treedef, [np.zeros(leaf.shape[1:], leaf.dtype)
                                               for leaf in leaves])
        return carry, tree_util.tree_map(_no_rows, f(init, x)[1])
    if reverse:
        ys.reverse()
    return carry, tree_util.tree_map(_stacked, *ys)


def _no_rows(y):
    return np.zeros((0,) + np.shape(y), np.asarray(y).dtype)


def _stacked(*rows):
    """The rows as one array, of the type they promote to (a Python number in a row is
    weak, as the carry it may come from is in a compiled scan)."""
    dtype = np.result_type(*rows)
    return np.stack([np.asarray(r, dtype) for r in rows])


def scan_length(shapes, length, location=None) -> int:
    """The number of steps of a scan over arrays of ``shapes`` (the leaves of ``xs``) with
    the ``length`` argument; a `PSCError` where they disagree, as JAX's errors say."""
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            raise PSCTypeError(f"scan's length must be a static integer, got {length!r}",
                               location, "pass a Python int (the number of steps is "
                               "fixed when the program is built)") from None
        if length < 0:
            raise PSCValueError(f"scan's length must be non-negative, got {length}", location)
    for shape in shapes:
        if len(shape) == 0:
            raise PSCValueError("scan got a value with no leading axis to scan over "
                                "(a 0-d array among xs)", location,
                                "every leaf of xs is scanned along its first axis")
    sizes = sorted({shape[0] for shape in shapes})
    if len(sizes) > 1:
        raise PSCValueError("scan got values with different leading axis sizes: "
                            + ", ".join(str(shape[0]) for shape in shapes), location,
                            "every leaf of xs must have the same length along axis 0")
    if sizes and length is not None and sizes[0] != length:
        raise PSCValueError(f"scan got `length` argument of {length} which disagrees with "
                            f"leading axis sizes {sizes}", location,
                            "drop length, or make it the leading axis size of xs")
    if not sizes and length is None:
        raise PSCValueError("scan got no values to scan over and `length` not provided",
                            location, "pass length= when xs is None")
    return sizes[0] if sizes else length


def check_scan_unroll(unroll, location=None) -> None:
    """``unroll`` as `scan` takes it: a bool or a positive int (JAX's rule)."""
    if isinstance(unroll, bool) or (isinstance(unroll, (int, np.integer)) and unroll >= 1):
        return
    raise PSCValueError(f"scan's unroll must be a bool or a positive int, got {unroll!r}",
                        location, "unroll=1 (the default) or True")


# --- issue 14: iterated_map_reduce ---

def iterated_map_reduce(map_fn, update_fn, init, data, num_iters, *, reduce="sum",
                        num_shards=1):
    """The meaning of `runtime.map_reduce.iterated_map_reduce` on ``num_shards`` devices:
    ``data``'s leaves split along their leading axis into ``num_shards`` equal shards;
    ``num_iters`` times, the partial results ``map_fn(state, shard)`` of the shards (in
    order) are combined with ``reduce`` — ``"sum"``, ``"mean"``, ``"max"``, ``"min"`` leaf
    by leaf, or a binary function folded left over the shards' pytrees — and ``state =
    update_fn(state, combined)``."""
    leaves, treedef = tree_util.tree_flatten(data)
    for k, leaf in enumerate(leaves):
        length = np.shape(leaf)[0] if np.ndim(leaf) else None
        if length is None or length % num_shards:
            raise PSCValueError(f"iterated_map_reduce: data leaf {k} (shape "
                                f"{np.shape(leaf)}) does not split evenly into "
                                f"{num_shards} shards along its leading axis")
    parts = [np.split(np.asarray(leaf), num_shards) for leaf in leaves]
    shards = [tree_util.tree_unflatten(treedef, [p[k] for p in parts])
              for k in range(num_shards)]
    state = init
    for _ in range(int(num_iters)):
        state = update_fn(state, _combined([map_fn(state, s) for s in shards], reduce))
    return state


_LEAFWISE = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}


def _combined(partials, reduce):
    if isinstance(reduce, str):
        combine = _LEAFWISE[reduce]
        total = partials[0]
        for partial in partials[1:]:
            total = tree_util.tree_map(combine, total, partial)
        if reduce == "mean":
            total = tree_util.tree_map(lambda t: t / len(partials), total)
        return total
    total = partials[0]
    for partial in partials[1:]:
        total = reduce(total, partial)
    return total
