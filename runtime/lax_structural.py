"""jax.lax's structural functions over the builder's primitives: ``dot_general``,
``dynamic_slice``, ``dynamic_update_slice``, ``pad``, ``select``, ``broadcast_in_dim``,
``reduce_precision``, ``iota``, ``broadcasted_iota``, ``sort``.

Thin wrappers with jax.lax's signatures and rules, usable inside PSC code and from plain
Python (`runtime.lax_functions`).  As jax.lax: start indices may be negative (counted from
the end) and are then clamped so the slice stays inside the operand; ``dot_general``
promotes operands of different dtypes (and converts to ``preferred_element_type``).  Where
jax.lax would refuse a Python scalar of another dtype (``pad``'s padding value) it takes
the operand's dtype, as a weak scalar does elsewhere.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .errors import PSCTypeError
from .ir import Value
from .lax_functions import lax_function


def _like(b, value: Value, model: Value) -> Value:
    """A weak (Python scalar) ``value`` in ``model``'s dtype; a strong one as it is."""
    return b.convert(value, model.dtype) if value.weak else value


@lax_function("lhs", "rhs")
def dot_general(b, lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """``jax.lax.dot_general``: ``dimension_numbers = ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))``; result dimensions batch, lhs free, rhs free."""
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = preferred_element_type or np.result_type(lhs.dtype, rhs.dtype)
    lhs, rhs = b.convert(lhs, dtype), b.convert(rhs, dtype)
    return b.dot_general(lhs, rhs, (tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))


def _start_indices(b, operand, start_indices) -> list:
    """Scalar int64 start indices, negative ones counted from the end of their dimension."""
    if isinstance(start_indices, Value):   # one array of indices
        if start_indices.ndim != 1:
            raise PSCTypeError(f"start indices must be a 1-D array or a sequence of "
                               f"scalars, got shape {start_indices.shape}")
        start_indices = [b.reshape(b.slice(start_indices, (i,), (i + 1,)), ())
                         for i in range(start_indices.shape[0])]
    indices = []
    for index, size in zip(start_indices, operand.shape):
        if index.shape != () or not dtypes.is_integer(index.dtype):
            raise PSCTypeError(f"start indices must be integer scalars, got "
                               f"{index.dtype}{list(index.shape)}")
        index = b.convert(index, np.int64)
        wrapped = b.add(index, b.constant(np.int64(size)))
        indices.append(b.select(b.lt(index, b.constant(np.int64(0))), wrapped, index))
    if len(indices) != operand.ndim:
        raise PSCTypeError(f"{operand.ndim} start indices needed for an operand of shape "
                           f"{list(operand.shape)}, got {len(start_indices)}")
    return indices


@lax_function("operand", "start_indices")
def dynamic_slice(b, operand, start_indices, slice_sizes):
    """``jax.lax.dynamic_slice``: ``operand[start:start + size]`` per dimension at traced
    starts, clamped so the slice stays in bounds."""
    return b.dynamic_slice(operand, _start_indices(b, operand, start_indices), slice_sizes)


@lax_function("operand", "update", "start_indices")
def dynamic_update_slice(b, operand, update, start_indices):
    """``jax.lax.dynamic_update_slice``: ``operand`` with ``update`` written at traced
    starts, clamped so the update stays in bounds."""
    return b.dynamic_update_slice(operand, _like(b, update, operand),
                                  _start_indices(b, operand, start_indices))


@lax_function("operand", "padding_value")
def pad(b, operand, padding_value, padding_config):
    """``jax.lax.pad``: ``padding_config`` holds (low, high, interior) per dimension;
    negative low/high crop."""
    low, high, interior = zip(*padding_config) if padding_config else ((), (), ())
    return b.pad(operand, _like(b, padding_value, operand), low, high, interior)


@lax_function("pred", "on_true", "on_false")
def select(b, pred, on_true, on_false):
    """``jax.lax.select``: ``on_true`` where ``pred`` holds, else ``on_false`` (``pred`` a
    bool array of their shape, or a scalar)."""
    return b.select(pred, on_true, on_false)


@lax_function("operand")
def broadcast_in_dim(b, operand, shape, broadcast_dimensions):
    """``jax.lax.broadcast_in_dim``: operand dimension i becomes result dimension
    ``broadcast_dimensions[i]``."""
    return b.broadcast_in_dim(operand, shape, broadcast_dimensions)


@lax_function("operand")
def reduce_precision(b, operand, exponent_bits, mantissa_bits):
    """``jax.lax.reduce_precision``: each element rounded to the nearest value of a float
    format with ``exponent_bits`` and ``mantissa_bits`` (kept in the operand's dtype)."""
    if not dtypes.is_floating(operand.dtype):   # a Python float is float64, as in jax
        operand = b.convert(operand, np.float64)
    return b.emit("reduce_precision", [operand], exponent_bits=int(exponent_bits),
                  mantissa_bits=int(mantissa_bits))[0]


@lax_function()
def iota(b, dtype, size):
    """``jax.lax.iota``: ``[0, 1, ..., size - 1]`` of ``dtype``."""
    return b.iota((int(size),), dtypes.canonical(dtype), 0)


@lax_function()
def broadcasted_iota(b, dtype, shape, dimension):
    """``jax.lax.broadcasted_iota``: indices counting along ``dimension`` of ``shape``."""
    return b.iota(tuple(shape), dtypes.canonical(dtype), int(dimension))


@lax_function("operand")
def sort(b, operand, dimension=-1, is_stable=True, num_keys=1):
    """``jax.lax.sort``: one array, or a sequence sorted together (a tuple back), ordered
    by the first ``num_keys`` of them lexicographically."""
    if isinstance(operand, Value):
        return b.sort([operand], dimension, 1, is_stable)[0]
    return tuple(b.sort(list(operand), dimension, num_keys, is_stable))
