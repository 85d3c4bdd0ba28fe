"""Collectives with ``jax.lax``'s names and signatures: ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``, ``all_to_all``, ``axis_index``.

They are called from PSC code inside a `pmap` (the axis is its replicas) or a `vmap` with
an ``axis_name`` (the axis is its lanes), and take pytrees as JAX's do.  Each emits the
primitive of `runtime.primitives.collectives` with the name and size of the axis it names
(`runtime.axes`); naming an axis nothing binds is a `PSCNameError` at the user's line.
JAX's untiled forms are built here from the tiled primitives with reshapes.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from .axes import bound_names, find_axis
from .context import current_builder, has_builder
from .errors import PSCNameError, PSCShapeError, PSCTypeError, PSCUnsupportedCallError
from .ir import Value
from .primitives.collectives import collective


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


def _caller():
    from .staged import caller_location   # (staged imports the primitives: late)
    return caller_location()


def _bound(axis_name, what: str):
    """(builder, axis frame) for a collective ``what`` over ``axis_name``."""
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            error = PSCUnsupportedCallError(
                f"{what} over several axes {tuple(axis_name)!r} is not supported",
                hint="name one axis; nest the collectives for several")
            raise _located(error)
        axis_name = axis_name[0]
    if not has_builder():
        raise PSCNameError(f"{what}: unbound axis name {axis_name!r}: collectives run only "
                           "inside a pmap or a vmap with that axis_name",
                           location=_caller(), hint=_HINT)
    b = current_builder()
    frame = find_axis(axis_name)
    if frame is None:
        bound = bound_names()
        known = f" (bound here: {', '.join(map(repr, bound))})" if bound else ""
        raise b.error(PSCNameError, f"{what}: unbound axis name {axis_name!r}{known}", _HINT)
    return b, frame


_HINT = "call it inside pmap(f, axis_name=...) or vmap(f, axis_name=...) with that name"


def _located(error):
    if has_builder():
        error.location = current_builder().location
    else:
        error.location = _caller()
    return error


def _lift(b, leaf) -> Value:
    if isinstance(leaf, Value):
        return leaf
    if type(leaf) in (bool, int, float, complex):
        return b.constant(leaf)
    return b.constant(np.asarray(leaf))


def _each_leaf(x, fn):
    return tree_util.tree_map(fn, x)


def _no_groups(groups, what):
    if groups is not None:
        raise _located(PSCUnsupportedCallError(f"{what}: axis_index_groups is not supported",
                                               hint="leave axis_index_groups=None"))


def _axis_in(b, axis, bound, what):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or \
            not -bound <= axis < bound:
        raise b.error(PSCTypeError if not isinstance(axis, (int, np.integer)) else
                      PSCShapeError, f"{what} {axis!r} is out of range (rank {bound})")
    return int(axis) % bound


def _static_reduction(name: str, leaf, size: int):
    """``psum``/``pmean`` of a value every member holds alike, known while building: as
    JAX does for a non-traced operand (``psum(1, axis)`` is the axis size, a Python
    number), no collective is emitted.  (JAX sends ``pmax``/``pmin`` of a constant through
    the collective, whose result is not weakly typed: so do we.)"""
    if name == "psum":
        return leaf * size
    return leaf * size / size


def _is_static(leaf) -> bool:
    return not isinstance(leaf, Value) and isinstance(leaf, (bool, int, float, complex,
                                                             np.ndarray, np.generic))


def _reducing(name):
    def reduce(x, axis_name, *, axis_index_groups=None):
        _no_groups(axis_index_groups, name)
        b, frame = _bound(axis_name, name)

        def one(leaf):
            if name == "psum" and _is_static(leaf):
                return _static_reduction(name, leaf, frame.size)
            return collective(b, name, _lift(b, leaf), frame.name, frame.size)
        return _each_leaf(x, one)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"``lax.{name}``: the {name[1:]} of ``x`` (a pytree) over the "
                      "members of axis ``axis_name``, the same on each.")
    return _primitive(reduce)


psum = _reducing("psum")
pmax = _reducing("pmax")
pmin = _reducing("pmin")


@_primitive
def pmean(x, axis_name, *, axis_index_groups=None):
    """``lax.pmean``: ``psum(x) / axis size`` (true division, as NumPy's mean)."""
    _no_groups(axis_index_groups, "pmean")
    b, frame = _bound(axis_name, "pmean")

    def one(leaf):
        if _is_static(leaf):
            return _static_reduction("pmean", leaf, frame.size)
        return collective(b, "psum", _lift(b, leaf), frame.name, frame.size) / frame.size
    return _each_leaf(x, one)


@_primitive
def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """``lax.all_gather``: every member's ``x`` stacked along a new dimension ``axis``
    (``tiled``: concatenated along the existing dimension ``axis``)."""
    _no_groups(axis_index_groups, "all_gather")
    b, frame = _bound(axis_name, "all_gather")

    def gather(leaf):
        leaf = _lift(b, leaf)
        if tiled:
            if leaf.ndim == 0:
                raise b.error(PSCShapeError, "all_gather(tiled=True) of a scalar",
                              "tiled gathers concatenate along an existing dimension")
            dim = _axis_in(b, axis, leaf.ndim, "all_gather axis")
            return collective(b, "all_gather", leaf, frame.name, frame.size, dimension=dim)
        dim = _axis_in(b, axis, leaf.ndim + 1, "all_gather axis")
        one = b.reshape(leaf, leaf.shape[:dim] + (1,) + leaf.shape[dim:])
        one.weak = leaf.weak
        return collective(b, "all_gather", one, frame.name, frame.size, dimension=dim)
    return _each_leaf(x, gather)


@_primitive
def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``lax.psum_scatter``: ``psum(x)`` split along ``scatter_dimension``, member ``i``
    keeping part ``i`` (untiled: that dimension's size is the axis size, and is removed)."""
    _no_groups(axis_index_groups, "psum_scatter")
    b, frame = _bound(axis_name, "psum_scatter")

    def scatter(leaf):
        leaf = _lift(b, leaf)
        dim = _axis_in(b, scatter_dimension, max(leaf.ndim, 1),
                       "psum_scatter scatter_dimension")
        if not tiled and (leaf.ndim == 0 or leaf.shape[dim] != frame.size):
            raise b.error(PSCShapeError, f"psum_scatter: dimension {dim} of an array of "
                          f"shape {leaf.shape} must have the axis size {frame.size}",
                          "or pass tiled=True to split it into axis-size parts")
        part = collective(b, "psum_scatter", leaf, frame.name, frame.size, dimension=dim)
        if tiled:
            return part
        squeezed = b.reshape(part, part.shape[:dim] + part.shape[dim + 1:])
        squeezed.weak = leaf.weak
        return squeezed
    return _each_leaf(x, scatter)


@_primitive
def ppermute(x, axis_name, perm):
    """``lax.ppermute``: member ``dst`` gets member ``src``'s ``x`` for each ``(src,
    dst)`` of ``perm``; members no pair sends to get zeros."""
    b, frame = _bound(axis_name, "ppermute")
    try:
        pairs = tuple((int(s), int(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise b.error(PSCTypeError, f"ppermute: perm must be (source, destination) pairs "
                      f"of ints, got {perm!r}") from None

    def permute(leaf):
        leaf = _lift(b, leaf)
        if not pairs:
            return b.broadcast_in_dim(b.constant(np.zeros((), leaf.dtype)), leaf.shape, ())
        return collective(b, "ppermute", leaf, frame.name, frame.size, pairs=pairs)
    return _each_leaf(x, permute)


@_primitive
def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """``lax.all_to_all``: ``x`` split along ``split_axis`` into one part per member,
    part ``i`` sent to member ``i``, the parts received stacked (``tiled``: concatenated)
    along ``concat_axis``.  Untiled, ``split_axis`` has the axis size and the result has
    it at ``concat_axis`` instead."""
    _no_groups(axis_index_groups, "all_to_all")
    b, frame = _bound(axis_name, "all_to_all")

    def exchange(leaf):
        leaf = _lift(b, leaf)
        if leaf.ndim == 0:
            raise b.error(PSCShapeError, "all_to_all of a scalar")
        split = _axis_in(b, split_axis, leaf.ndim, "all_to_all split_axis")
        concat = _axis_in(b, concat_axis, leaf.ndim, "all_to_all concat_axis")
        if tiled:
            return collective(b, "all_to_all", leaf, frame.name, frame.size,
                              split_dimension=split, concat_dimension=concat)
        if leaf.shape[split] != frame.size:
            raise b.error(PSCShapeError, f"all_to_all: split_axis {split} of an array of "
                          f"shape {leaf.shape} must have the axis size {frame.size}",
                          "or pass tiled=True")
        swapped = collective(b, "all_to_all", leaf, frame.name, frame.size,
                             split_dimension=split, concat_dimension=split)
        order = [d for d in range(leaf.ndim) if d != split]
        order.insert(concat, split)
        moved = b.transpose(swapped, order) if order != sorted(order) else swapped
        moved.weak = leaf.weak
        return moved
    return _each_leaf(x, exchange)


@_primitive
def axis_index(axis_name):
    """``lax.axis_index``: this member's index along ``axis_name`` (an int32 scalar)."""
    b, frame = _bound(axis_name, "axis_index")
    return collective(b, "axis_index", None, frame.name, frame.size)


COLLECTIVE_FUNCTIONS = ("psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter",
                        "ppermute", "all_to_all", "axis_index")
__all__ = list(COLLECTIVE_FUNCTIONS)
