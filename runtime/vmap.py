"""``vmap``, JAX's batching transform, with JAX's signature and semantics.

``vmap(f)(xs)`` is ``f`` applied to every lane of ``xs`` along its mapped axis, computed as
one program: ``f`` is traced on parameters of one lane's shapes into a region, and
`runtime.batching.batch_region` replays that region on the whole batch, each op through
its batching rule (no Python loop, no unrolling).  Each output's batch dimension is then
moved to its ``out_axes`` entry.

As with the autodiff transforms (`runtime.autodiff.api`), inside a PSC function the
batched program is emitted into the current builder, so ``vmap`` composes with ``grad``,
``jvp``, ``vjp``, itself and control flow at any depth; called from plain Python it is
compiled and cached per call signature, its results NumPy.

Semantics follow jax 0.10.2: ``in_axes`` is an int, None or a tuple (a list is read as a
tuple) with one pytree prefix per positional argument; keyword arguments are always
mapped along axis 0; an argument mapped by None is passed to ``f`` as it is (a Python int
stays a Python int); ``axis_size`` is needed when nothing is mapped; ``out_axes`` is a
pytree prefix of the output, None requiring an output that does not vary across lanes.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import threading

import numpy as np
from jax import tree_util

from .autodiff.api import _lift, _primitive, _staged
from .axes import batching_axis, bind_axis
from .batching import batch_region
from .calls import transpiled
from .context import building, current_builder, has_builder
from .errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from .ir import Value
from .staged import caller_location

_axis_names = threading.local()   # the axis names of the vmaps being traced, innermost last


def active_axis_names() -> tuple:
    """The ``axis_name``s of the vmaps whose functions are being traced now (outermost
    first; None for an unnamed one).  Collectives look their axis up in `runtime.axes`,
    where a named vmap also binds its size."""
    return tuple(getattr(_axis_names, "stack", ()))


@_primitive
def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """``fun`` mapped over an axis of its arguments, as one batched program (JAX's vmap).

    ``in_axes``: an int, None, or a tuple of pytree prefixes, one per positional argument
    (None: the argument is the same for every lane); keyword arguments are mapped along
    axis 0.  ``out_axes``: where each output's mapped axis goes (a pytree prefix of the
    output; None: the output must not depend on the lane).  ``axis_size``: the number of
    lanes, required when no argument is mapped.  ``axis_name`` is recorded for collectives
    (`active_axis_names`); ``spmd_axis_name`` is not supported."""
    in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
    _check_spec_leaves(in_axes, "in_axes")
    _check_spec_leaves(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer)) or
                                  isinstance(axis_size, bool) or axis_size < 0):
        raise _error(PSCTypeError, f"vmap axis_size must be a non-negative int, got "
                     f"{axis_size!r}")
    if spmd_axis_name is not None:
        raise _error(PSCUnsupportedCallError, "vmap's spmd_axis_name is not supported "
                     "(there is no sharding)", "leave spmd_axis_name unset")
    try:
        hash(axis_name)
    except TypeError:
        raise _error(PSCTypeError, f"vmap axis_name must be hashable, got "
                     f"{type(axis_name).__name__}") from None
    key = ("vmap", fun, _spec_key(in_axes), _spec_key(out_axes), axis_name,
           None if axis_size is None else int(axis_size))
    spec = _Spec(in_axes, out_axes, axis_name, None if axis_size is None else int(axis_size))

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if not has_builder():
            return _staged_with_static_unmapped(key, spec, fun, args, kwargs)
        return _vmap_transform(fun, spec, args, kwargs)
    vmapped.__psc_primitive__ = True
    vmapped.axis_name = axis_name
    return vmapped


@dataclasses.dataclass(frozen=True)
class _Spec:
    """A vmap's options, once checked."""
    in_axes: object
    out_axes: object
    axis_name: object
    axis_size: int | None


def _error(cls, message, hint=None):
    """A located error: at the builder's current line inside PSC code, at the caller's
    line from plain Python (the builder reads it from the stack)."""
    if has_builder():
        return current_builder().error(cls, message, hint)
    return cls(message, location=caller_location(), hint=hint)


def _is_axis(spec) -> bool:
    return spec is None or (isinstance(spec, (int, np.integer)) and not isinstance(spec, bool))


def _check_spec_leaves(spec, what) -> None:
    """JAX's TypeErrors: ``in_axes`` is an int, None or a tuple at the top; every leaf of
    an axes specification is an int or None."""
    if what == "in_axes" and not (_is_axis(spec) or isinstance(spec, tuple)):
        raise _error(PSCTypeError, "vmap in_axes must be an int, None, or a tuple of entries "
                     "corresponding to the positional arguments passed to the function, "
                     f"but got {spec!r}.")
    leaves = tree_util.tree_leaves(spec, is_leaf=lambda x: x is None)
    if not all(_is_axis(leaf) for leaf in leaves):
        raise _error(PSCTypeError, f"vmap {what} must be an int, None, or (nested) "
                     f"container with those types as leaves, but got {spec!r}.")


def _spec_key(spec):
    """A hashable form of an axes specification (dicts and lists included)."""
    leaves, treedef = tree_util.tree_flatten(spec, is_leaf=lambda x: x is None)
    return treedef, tuple(None if a is None else int(a) for a in leaves)


# --- from plain Python ---------------------------------------------------------------------------

def _staged_with_static_unmapped(key, spec, fun, args, kwargs):
    """From plain Python, compiled per signature.  A Python int or bool argument mapped by
    None is static (JAX hands it to ``fun`` unchanged, so it may bound a loop)."""
    axes = _per_argument_axes(spec.in_axes, args)
    static = {i: a for i, a in enumerate(args)
              if axes[i] is None and type(a) in (int, bool)}
    traced = [a for i, a in enumerate(args) if i not in static]

    def with_static(*traced_args, **k):
        it = iter(traced_args)
        full = [static[i] if i in static else next(it) for i in range(len(args))]
        return _vmap_transform(fun, spec, full, k)
    return _staged(key + (len(args), tuple(sorted(static.items()))), with_static,
                   *traced, **kwargs)


# --- the transform -------------------------------------------------------------------------------

def _per_argument_axes(in_axes, args):
    """One axes prefix per positional argument."""
    if not isinstance(in_axes, tuple):
        return [in_axes] * len(args)
    if len(in_axes) != len(args):
        raise _error(PSCValueError, "vmap in_axes must be an int, None, or a tuple of "
                     "entries corresponding to the positional arguments passed to the "
                     f"function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
    return list(in_axes)


def _vmap_transform(fun, spec, args, kwargs):
    b = current_builder()
    args = list(args)
    named = _argument_names(fun, len(args))
    mapped = []   # (leaf, axis, description): every mapped leaf of the arguments
    slots = []    # per argument: its leaves, each a Value to trace or a value passed as is
    for i, (arg, axes) in enumerate(zip(args, _per_argument_axes(spec.in_axes, args))):
        slots.append(_mapped_leaves(b, arg, axes, f"argument {named[i]}", "vmap in_axes"
                                    f"[{i}]", mapped))
    kw_slots = {k: _mapped_leaves(b, v, 0, f"kwargs[{k!r}]", f"kwargs[{k!r}]", mapped)
                for k, v in kwargs.items()}
    size = _axis_size(b, spec.axis_size, mapped)
    per_lane = [_lane_spec(leaf, axis) for leaf, axis, _ in mapped]

    def per_lane_fun(*lane_values):
        it = iter(lane_values)
        call_args = [_rebuild(slot, it) for slot in slots]
        call_kwargs = {k: _rebuild(slot, it) for k, slot in kw_slots.items()}
        return transpiled(fun)(*call_args, **call_kwargs)

    region, outputs, out_tree = _trace_lane(b, per_lane_fun, per_lane, spec.axis_name, size)
    with batching_axis(spec.axis_name):   # collectives over it act on the batch dimension
        values, dims = batch_region(b, region, [leaf for leaf, _, _ in mapped],
                                    [axis for _, axis, _ in mapped])
    batched = iter(zip(values, dims))
    out_leaves = [next(batched) if isinstance(v, Value) else (v, None) for v in outputs]
    out_axes = _output_axes(b, spec.out_axes, out_tree, len(out_leaves))
    moved = [_move_output(b, value, dim, axis, size, k)
             for k, ((value, dim), axis) in enumerate(zip(out_leaves, out_axes))]
    return tree_util.tree_unflatten(out_tree, moved)


def _argument_names(fun, count):
    """Names for error messages: the parameter's name where the signature gives one."""
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else str(i) for i in range(count)]


def _mapped_leaves(b, arg, axes, what, spec_path, mapped):
    """``arg``'s leaves matched against the prefix ``axes``: a list holding, per leaf,
    either a marker to trace (the leaf is mapped; it is appended to ``mapped``) or the leaf
    itself (mapped by None: passed to the function unchanged).  Returns (treedef, list)."""
    leaves, treedef = tree_util.tree_flatten(arg, is_leaf=lambda x: x is None)
    leaf_axes = _broadcast_prefix(b, axes, arg, spec_path)
    slot = []
    for k, (leaf, axis) in enumerate(zip(leaves, leaf_axes)):
        if axis is None or leaf is None:
            slot.append((False, leaf))
            continue
        value = _lift(b, leaf)
        where = what if len(leaves) == 1 else f"{what}{_key_path(arg, k)}"
        axis = _canonical_in_axis(b, value, axis)
        mapped.append((value, axis, f"axis {axis} of {where} of type {value.dtype}"
                                    f"[{','.join(map(str, value.shape))}]"))
        slot.append((True, None))
    return treedef, slot


def _key_path(tree, k):
    paths = tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: x is None)[0]
    return tree_util.keystr(paths[k][0])


def _broadcast_prefix(b, axes, tree, path):
    """One axis per leaf of ``tree`` (None leaves included), ``axes`` being a prefix of
    it; a mismatch is JAX's "tree prefix" ValueError, naming where."""
    if _is_axis(axes):
        return [axes] * len(tree_util.tree_leaves(tree, is_leaf=lambda x: x is None))
    kind = type(axes)
    if isinstance(axes, dict):
        if not isinstance(tree, dict) or set(tree) != set(axes):
            raise _prefix_error(b, path, axes, tree)
        out = []
        for key in sorted(tree):   # (the order tree_flatten gives dict leaves)
            out += _broadcast_prefix(b, axes[key], tree[key], f"{path}[{key!r}]")
        return out
    if type(tree) is not kind or len(tree) != len(axes):
        raise _prefix_error(b, path, axes, tree)
    out = []
    for k, (a, t) in enumerate(zip(axes, tree)):
        out += _broadcast_prefix(b, a, t, f"{path}[{k}]")
    return out


def _prefix_error(b, path, axes, tree):
    def describe(v):
        if isinstance(v, (tuple, list, dict)):
            return f"a {type(v).__name__} of length {len(v)}" + (
                f" with keys {sorted(v, key=repr)}" if isinstance(v, dict) else "")
        return "an array leaf" if v is not None else "None"
    head = path.split("[")[0]
    return b.error(PSCValueError, f"vmap {head} specification must be a tree prefix of the "
                   f"corresponding value: at {path} the specification is {describe(axes)} "
                   f"({axes!r}) but the value is {describe(tree)}",
                   "give one axis (or None) per argument, or a tuple/list/dict shaped like "
                   "the argument")


def _canonical_in_axis(b, value, axis):
    if not -value.ndim <= axis < value.ndim:
        raise b.error(PSCValueError, f"vmap was requested to map its argument along axis "
                      f"{axis}, which implies that its rank should be at least "
                      f"{axis + 1 if axis >= 0 else -axis}, but is only {value.ndim} (its "
                      f"shape is {tuple(value.shape)})",
                      "a scalar cannot be mapped: pass it with in_axes None" if
                      value.ndim == 0 else "check in_axes against the argument's shape")
    return axis % value.ndim


def _axis_size(b, axis_size, mapped):
    sizes = [leaf.shape[axis] for leaf, axis, _ in mapped]
    if not mapped and axis_size is None:
        raise b.error(PSCValueError, "vmap must have at least one non-None value in in_axes "
                      "or axis_size must be specified")
    wanted = set(sizes) | ({axis_size} if axis_size is not None else set())
    if len(wanted) > 1:
        lines = ([f"  * the `axis_size` argument was {axis_size};"]
                 if axis_size is not None else [])
        lines += [f"  * one axis had size {s}: {what}" for s, (_, _, what) in
                  zip(sizes, mapped)]
        raise b.error(PSCValueError, "vmap got inconsistent sizes for array axes to be "
                      "mapped:\n" + ";\n".join(lines),
                      "every mapped axis must have the same length")
    return axis_size if axis_size is not None else sizes[0]


def _lane_spec(leaf, axis):
    shape = leaf.shape[:axis] + leaf.shape[axis + 1:]
    return shape, leaf.dtype, leaf.weak


def _rebuild(slot, lane_values):
    treedef, leaves = slot
    return tree_util.tree_unflatten(treedef, [next(lane_values) if is_mapped else leaf
                                              for is_mapped, leaf in leaves])


def _trace_lane(b, fn, specs, axis_name, size):
    """``fn`` run on one lane's parameters in a child region: (the region, the output
    leaves — region outputs or static values — and the output treedef)."""
    sub = b.child("vmapped")
    params = [sub.add_parameter(shape, dtype, weak) for shape, dtype, weak in specs]
    stack = _axis_names.__dict__.setdefault("stack", [])
    stack.append(axis_name)
    try:
        with building(sub), bind_axis(axis_name, size, "lanes"):
            out = fn(*params)
    finally:
        stack.pop()
    out_leaves, out_tree = tree_util.tree_flatten(out)
    region = sub.finish_region([v for v in out_leaves if isinstance(v, Value)])
    returned = iter(region.outputs)
    return region, [next(returned) if isinstance(v, Value) else v for v in out_leaves], \
        out_tree


def _output_axes(b, out_axes, out_tree, count):
    """One out axis per output leaf, ``out_axes`` being a prefix of the output tree."""
    if _is_axis(out_axes):
        return [out_axes] * count
    shaped = tree_util.tree_unflatten(out_tree, [0] * count)
    return _broadcast_prefix(b, out_axes, shaped, "vmap out_axes")


def _move_output(b, value, dim, axis, size, k):
    """An output with its batch dimension ``dim`` (None: the same in every lane) moved to
    ``axis`` (None: kept unbatched)."""
    if axis is None:
        if dim is not None:
            raise b.error(PSCValueError, f"at vmap out_axes, got axis spec None but output "
                          f"{k} was batched on axis {dim}",
                          "an output with out_axes None must not depend on the mapped "
                          "arguments")
        return value
    value = _lift(b, value) if not isinstance(value, Value) else value
    rank = value.ndim + (1 if dim is None else 0)
    if not -rank <= axis < rank:
        raise b.error(PSCValueError, f"vmap out_axes: axis {axis} is out of bounds for "
                      f"output {k}, an array of dimension {rank} (with its mapped axis)")
    axis %= rank
    if dim is None:
        lane_dims = [d for d in range(rank) if d != axis]
        shape = value.shape[:axis] + (size,) + value.shape[axis:]
        result = b.broadcast_in_dim(value, shape, lane_dims)
    elif dim == axis:
        return value
    else:
        order = [d for d in range(rank) if d != dim]
        order.insert(axis, dim)
        result = b.transpose(value, order)
    result.weak = value.weak
    return result
