"""``lax.reduce_window`` and its reducers ``lax.add``/``max``/``min``/``mul``, with jax.lax's
names, signatures and strict dtype rules.

Inside a build they stage builder ops; from plain Python ``reduce_window`` is compiled and
cached per call signature (like the transforms: `autodiff.api._staged`) and the reducers
run NumPy.  A reducer of jax.lax's with its identity as the init value is the monoid
primitive ``reduce_window`` (differentiable for sum, max, min); with another init value a
sum/max/min is that primitive combined with the init value (still differentiable); any
other computation (``lax.mul`` with a non-unit init, a Python function ``(a, b) -> c``) is
traced into the reducer region of ``reduce_window_region``.
"""
from __future__ import annotations

import builtins   # this module's `max` and `min` are jax.lax's

import numpy as np
from jax import tree_util

from .autodiff.api import _staged
from .calls import transpiled
from .context import building, current_builder, has_builder
from .errors import PSCShapeError, PSCTypeError, PSCValueError
from .ir import Value
from .lax_functions import hashable
from .primitives import windows
from .primitives.reductions import reduction_identity

PYTHON_SCALAR_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int64),
                        float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


def _error(cls, message, hint=None):
    if has_builder():
        return current_builder().error(cls, message, hint)
    return cls(message, hint=hint)


# --- the reducers: element-wise, strict dtypes ---------------------------------------------

def _dtype_of(x) -> np.dtype:
    if isinstance(x, Value):
        return x.dtype
    if type(x) in PYTHON_SCALAR_DTYPES:
        return PYTHON_SCALAR_DTYPES[type(x)]
    return np.asarray(x).dtype


def _strict_operands(name, x, y):
    """jax.lax's rule: one dtype (a Python float is float64, an int int64), one shape or a
    rank-0 operand."""
    dx, dy = _dtype_of(x), _dtype_of(y)
    if dx != dy:
        raise _error(PSCTypeError, f"lax.{name} requires arguments to have the same dtypes, "
                     f"got {dx}, {dy}", f"np.{name} is a similar function that promotes "
                     "its inputs; or convert one with astype")
    sx, sy = np.shape(x), np.shape(y)
    if sx and sy and sx != sy:
        raise _error(PSCShapeError, f"lax.{name} got incompatible shapes {sx}, {sy}",
                     "lax ops broadcast only rank-0 operands")
    return dx, sx or sy


def _reducer(name, numpy_fn, method):
    @_primitive
    def reducer(x, y):
        dtype, shape = _strict_operands(name, x, y)
        if not has_builder() or not (isinstance(x, Value) or isinstance(y, Value)):
            return numpy_fn(np.asarray(x, dtype), np.asarray(y, dtype))
        b = current_builder()

        def lifted(v):
            v = v if isinstance(v, Value) else b.constant(np.asarray(v, dtype))
            return v if v.shape == shape else b.broadcast_in_dim(v, shape, ())
        return getattr(b, method)(lifted(x), lifted(y))
    reducer.__name__ = reducer.__qualname__ = name
    reducer.__doc__ = (f"``jax.lax.{name}``: element-wise {numpy_fn.__name__} of operands of "
                       "one dtype (no promotion; rank-0 operands broadcast).")
    return reducer


add = _reducer("add", np.add, "add")
max = _reducer("max", np.maximum, "max")   # noqa: A001 - jax.lax's name
min = _reducer("min", np.minimum, "min")   # noqa: A001 - jax.lax's name
mul = _reducer("mul", np.multiply, "mul")
MONOIDS = {add: "sum", max: "max", min: "min", mul: "prod"}


# --- padding ------------------------------------------------------------------------------

def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """``jax.lax.padtype_to_pads``: 'VALID', 'SAME' (the odd element at the end) or
    'SAME_LOWER' (at the start) as (low, high) pairs."""
    mode = padding.upper() if isinstance(padding, str) else None
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise _error(PSCValueError, f"unrecognized padding type {padding!r}",
                     "use 'VALID', 'SAME', 'SAME_LOWER' or (low, high) pairs")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = builtins.max((out - 1) * stride + window - size, 0)
        pads.append((total // 2, total - total // 2) if mode == "SAME" else
                    (total - total // 2, total // 2))
    return pads


def _window(shape, window_dimensions, window_strides, padding, base_dilation,
            window_dilation):
    n = len(window_dimensions)
    strides = tuple(window_strides) if window_strides is not None else (1,) * n
    if isinstance(padding, str):
        extent = window_dimensions if window_dilation is None else \
            [windows.dilate(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(shape, extent, strides, padding)
    try:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise _error(PSCValueError, f"reduce_window padding {padding!r} is neither a padding "
                     "type nor (low, high) pairs") from None
    return dict(window_dimensions=tuple(int(w) for w in window_dimensions),
                window_strides=tuple(int(s) for s in strides), padding=padding,
                base_dilation=None if base_dilation is None else tuple(base_dilation),
                window_dilation=None if window_dilation is None else tuple(window_dilation))


# --- reduce_window ------------------------------------------------------------------------

@_primitive
def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """``jax.lax.reduce_window``: ``computation`` over each (padded, dilated) window of
    ``operand`` (an array or a tree of arrays, with one scalar init value each)."""
    options = (tuple(window_dimensions), hashable(window_strides), hashable(padding),
               hashable(base_dilation), hashable(window_dilation))
    if not has_builder():
        key = ("reduce_window", computation, _static_key(init_value)) + options
        return _staged(key, lambda ops: reduce_window(ops, init_value, computation, *options),
                       operand)
    b = current_builder()
    xs, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree or not xs:
        raise b.error(PSCValueError, f"reduce_window operands {tree} and init values "
                      f"{init_tree} must have one (non-empty) tree structure")
    xs = [x if isinstance(x, Value) else b.constant(np.asarray(x)) for x in xs]
    window = _window(xs[0].shape, *options)
    kind = MONOIDS.get(computation)
    if kind is not None and len(xs) == 1:
        result = _monoid(b, xs[0], inits[0], kind, window)
        if result is not None:
            return tree_util.tree_unflatten(tree, [result])
    init_values = [_init_value(b, v, x) for v, x in zip(inits, xs)]
    region = _reducer_region(b, computation, tree, init_values)
    return tree_util.tree_unflatten(tree, windows.reduce_window_region(
        b, xs, init_values, region, **window))


def _static_key(init_value):
    """From plain Python the (scalar) init values are static: they key the compiled
    function (the identity makes the differentiable monoid)."""
    return tuple((type(v).__name__, str(np.asarray(v).dtype), np.asarray(v).item())
                 for v in tree_util.tree_leaves(init_value))


def _init_value(b, value, x) -> Value:
    if isinstance(value, Value):
        if value.dtype != x.dtype:
            raise b.error(PSCTypeError, f"reduce_window init value dtype {value.dtype} "
                          f"differs from the operand's {x.dtype}", "convert it with astype")
        return value
    if type(value) in PYTHON_SCALAR_DTYPES:
        return b.constant(np.asarray(value, x.dtype))   # a Python number takes its dtype
    array = np.asarray(value)
    if array.dtype != x.dtype:
        raise b.error(PSCTypeError, f"reduce_window init value dtype {array.dtype} "
                      f"differs from the operand's {x.dtype}", "convert it with astype")
    return b.constant(array)


def _is_identity(value, kind, dtype) -> bool:
    if isinstance(value, Value) or np.ndim(value) != 0:
        return False
    try:
        return bool(np.asarray(value, dtype) == reduction_identity(kind, dtype))
    except (TypeError, ValueError, OverflowError):
        return False


def _monoid(b, x, init_value, kind, window):
    """The monoid primitive, combined with a non-identity init value (each window starts
    from it once; padding and holes contribute nothing); None where the general reducer
    must be traced (a product with a non-unit init)."""
    if _is_identity(init_value, kind, x.dtype):
        return windows.reduce_window(b, x, kind, **window)
    if kind == "prod":
        return None
    init = _init_value(b, init_value, x)
    if init.shape != ():
        raise b.error(PSCShapeError, "reduce_window init values must be scalars")
    reduced = windows.reduce_window(b, x, kind, **window)
    if kind in ("max", "min"):
        spread = b.broadcast_in_dim(init, reduced.shape, ())
        return b.max(reduced, spread) if kind == "max" else b.min(reduced, spread)
    # XLA starts each window from the init value once; padding and holes add nothing
    return b.add(reduced, b.broadcast_in_dim(init, reduced.shape, ()))


def _reducer_region(b, computation, tree, init_values):
    """``computation(accumulators, elements)`` traced on scalars into a closed region."""
    sub = b.child("reducer")
    accs = [sub.add_parameter((), v.dtype) for v in init_values]
    elems = [sub.add_parameter((), v.dtype) for v in init_values]
    with building(sub):
        out = transpiled(computation)(tree_util.tree_unflatten(tree, accs),
                                      tree_util.tree_unflatten(tree, elems))
    leaves, out_tree = tree_util.tree_flatten(out)
    if out_tree != tree:
        raise b.error(PSCValueError, f"reduce_window computation returned {out_tree}, not "
                      f"the operands' structure {tree}")
    outputs = []
    for leaf, init in zip(leaves, init_values):
        value = leaf if isinstance(leaf, Value) else sub.constant(np.asarray(leaf, init.dtype))
        if value.shape != () or value.dtype != init.dtype:
            raise b.error(PSCTypeError, "reduce_window computation must return scalars of "
                          f"the operands' dtypes ({init.dtype}), got {value.dtype}"
                          f"{list(value.shape)}")
        outputs.append(value)
    region = sub.finish_region(outputs)
    if region.captures:
        raise b.error(PSCValueError, "reduce_window computation reads a traced value from "
                      "outside it", "a reducer sees only its two arguments; pass other "
                      "values as operands")
    return region


__all__ = ["reduce_window", "add", "max", "min", "mul", "padtype_to_pads"]
