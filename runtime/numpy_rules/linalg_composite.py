"""The rest of ``numpy.linalg`` that ``jax.numpy.linalg`` also has, composed from the
``numpy`` rules of `linalg` and `decompositions`: ``matrix_power``, ``multi_dot``,
``tensorsolve``, ``tensorinv``, and the array-API aliases ``cross``, ``outer``, ``trace``,
``vecdot``, ``matmul``, ``diagonal``, ``matrix_transpose`` and ``tensordot``
(``vector_norm`` and ``matrix_norm`` live with the singular values, in `svd`).

NumPy semantics kept (NumPy 2.x, ``numpy/linalg/_linalg.py``):

* ``matrix_power(a, n)``: a static integer ``n`` (else TypeError "exponent must be an
  integer"); ``n == 0`` gives the identity in ``a``'s dtype and shape (ints and bools too),
  ``n < 0`` inverts first (so integers give float64), and the products follow NumPy's own
  order (the binary decomposition, LSB first), so integer overflow and rounding match.
* ``multi_dot``: two arrays are ``np.dot``; otherwise a 1-d first/last array is a row/column,
  every array must then be 2-d, and the order of the products is NumPy's (the same cost
  model, ties resolved the same way), chosen from the static shapes.
* ``tensorsolve``/``tensorinv``: NumPy's reshapes into one square ``solve``/``inv``.
* The aliases keep their ``numpy.linalg`` signatures and checks, which differ from the
  ``numpy.*`` functions: ``cross`` takes 3-vectors only along ``axis`` (default -1, the
  same axis of both and of the result), ``outer`` only 1-d arrays, ``trace``/``diagonal``
  work on the last two axes, ``vecdot`` is the gufunc ``(n),(n)->()`` conjugating its first
  argument.

Deviation, as in `decompositions`: a singular matrix (``matrix_power`` with ``n < 0``,
``tensorsolve``, ``tensorinv``) gives NaN instead of raising ``LinAlgError``.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..ir import Value
from ..primitives.support import conj
from ..translation import lookup_rule, register_translation_rule
from . import decompositions, linalg
from ._core import (broadcast_shapes, broadcast_to, lift, normalize_axis,
                    resolve_ufunc_dtypes, static_int)
from .linalg import _check_kwargs, _compute_dtype, _finish, _static


# --- matrix_power ---------------------------------------------------------------------------


def _exponent(b: Builder, n) -> int:
    _static(b, n, "np.linalg.matrix_power exponent")
    try:
        return operator.index(n)
    except TypeError:
        raise b.error(PSCTypeError, "exponent must be an integer") from None


def matrix_power(b: Builder, a, n) -> Value:
    """np.linalg.matrix_power(a, n) for a static integer ``n``."""
    x = lift(b, a)
    decompositions._square_stack(b, "matrix_power", x)
    n = _exponent(b, n)
    if n == 0:
        eye = b.constant(np.eye(x.shape[-1], dtype=x.dtype))
        return b.broadcast_in_dim(eye, x.shape, (x.ndim - 2, x.ndim - 1))
    if n < 0:
        x, n = decompositions.inv(b, x), -n
    product = lambda p, q: linalg.matmul(b, p, q)   # noqa: E731
    if n <= 3:
        result = x
        if n >= 2:
            result = product(x, x)
        return product(result, x) if n == 3 else result
    z = result = None
    while n > 0:   # NumPy's order: powers of two from the least significant bit
        z = x if z is None else product(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else product(result, z)
    return result


# --- multi_dot ------------------------------------------------------------------------------


def _chain_order(shapes) -> dict:
    """NumPy's ``_multi_dot_matrix_chain_order``: the split ``s[i, j]`` of each sub-chain."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = {(i, i): 0.0 for i in range(n)}
    split = {}
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = np.inf
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    return split


def _chain_product(b: Builder, arrays, split, i: int, j: int) -> Value:
    if i == j:
        return arrays[i]
    k = split[i, j]
    return linalg.dot(b, _chain_product(b, arrays, split, i, k),
                      _chain_product(b, arrays, split, k + 1, j))


def _three_product(b: Builder, x: Value, y: Value, z: Value) -> Value:
    """NumPy's ``_multi_dot_three``: (xy)z when strictly cheaper, else x(yz)."""
    a0, a1b0 = x.shape
    b1c0, c1 = z.shape
    if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
        return linalg.dot(b, linalg.dot(b, x, y), z)
    return linalg.dot(b, x, linalg.dot(b, y, z))


def multi_dot(b: Builder, arrays, *, out=None) -> Value:
    """np.linalg.multi_dot: a chain of ``dot``s in the cheapest order."""
    _check_kwargs(b, "np.linalg.multi_dot", {"out": out})
    arrays = list(_static(b, arrays, "the list of arrays") if isinstance(arrays, Value)
                  else arrays)
    if len(arrays) < 2:
        raise b.error(PSCValueError, "Expecting at least two arrays.")
    if len(arrays) == 2:
        return linalg.dot(b, arrays[0], arrays[1])
    arrays = [lift(b, a) for a in arrays]
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = b.reshape(arrays[0], (1,) + arrays[0].shape)
    if last == 1:
        arrays[-1] = b.reshape(arrays[-1], arrays[-1].shape + (1,))
    for x in arrays:
        if x.ndim != 2:
            raise b.error(PSCShapeError, f"multi_dot: {x.ndim}-dimensional array given. "
                          "Array must be two-dimensional")
    if len(arrays) == 3:
        result = _three_product(b, *arrays)
    else:
        split = _chain_order([x.shape for x in arrays])
        result = _chain_product(b, arrays, split, 0, len(arrays) - 1)
    if first == 1 and last == 1:
        return b.reshape(result, ())
    if first == 1 or last == 1:
        return b.reshape(result, (result.size,))
    return result


# --- tensorsolve, tensorinv ------------------------------------------------------------------


def tensorsolve(b: Builder, a, c, axes=None) -> Value:
    """np.linalg.tensorsolve: ``x`` with ``tensordot(a, x, x.ndim) == c``."""
    x, y = lift(b, a), lift(b, c)
    _static(b, axes, "np.linalg.tensorsolve axes")
    an = x.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            if k not in order:   # NumPy's list.remove(k) fails the same way
                raise b.error(PSCValueError, f"tensorsolve: axis {k!r} is not one of the "
                              f"axes {list(range(an))} of a (or is given twice)")
            order.remove(k)
            order.insert(an, k)
        x = b.transpose(x, order)
    old_shape = x.shape[-(an - y.ndim):]
    size = int(np.prod(old_shape, dtype=np.int64))
    if x.size != size ** 2:
        raise b.error(PSCShapeError, "Input arrays must satisfy the requirement "
                      "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = b.reshape(x, (size, size))
    y = b.reshape(y, (y.size,))
    return b.reshape(decompositions.solve(b, x, y), old_shape)


def tensorinv(b: Builder, a, ind=2) -> Value:
    """np.linalg.tensorinv: the inverse of ``a`` seen as a (prod(shape[:ind]),
    prod(shape[ind:])) matrix, reshaped to ``shape[ind:] + shape[:ind]``."""
    x = lift(b, a)
    ind = static_int(b, ind, "np.linalg.tensorinv ind")
    if ind <= 0:
        raise b.error(PSCValueError, "Invalid ind argument.")
    shape = x.shape
    rows = int(np.prod(shape[ind:], dtype=np.int64))
    if rows == 0 or x.size % rows:
        raise b.error(PSCValueError, f"cannot reshape array of size {x.size} into shape "
                      f"({rows},newaxis)")
    inverse = decompositions.inv(b, b.reshape(x, (rows, x.size // rows)))
    return b.reshape(inverse, shape[ind:] + shape[:ind])


# --- the array-API aliases ----------------------------------------------------------------


def _to_last(b: Builder, x: Value, axis: int) -> Value:
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    return b.transpose(x, order)


def _from_last(b: Builder, x: Value, axis: int) -> Value:
    order = list(range(x.ndim - 1))
    order.insert(axis, x.ndim - 1)
    return b.transpose(x, order)


def _component(b: Builder, x: Value, i: int) -> Value:
    """``x[..., i]``."""
    start = [0] * (x.ndim - 1) + [i]
    part = b.slice(x, start, x.shape[:-1] + (i + 1,))
    return b.reshape(part, x.shape[:-1])


def cross(b: Builder, x1, x2, /, *, axis=-1) -> Value:
    """np.linalg.cross: the cross product of 3-vectors along ``axis`` of both arguments."""
    x, y = lift(b, x1), lift(b, x2)
    axis = static_int(b, axis, "np.linalg.cross axis")
    for v in (x, y):
        if v.ndim == 0:
            raise b.error(PSCValueError, "np.linalg.cross needs arrays of 3-vectors, got a "
                          "0-dimensional array")
    ax, ay = normalize_axis(b, axis, x.ndim), normalize_axis(b, axis, y.ndim)
    if x.shape[ax] != 3 or y.shape[ay] != 3:
        raise b.error(PSCValueError, "Both input arrays must be (arrays of) 3-dimensional "
                      f"vectors, but they are {x.shape[ax]} and {y.shape[ay]} dimensional "
                      "instead.")
    dtype = np.promote_types(x.dtype, y.dtype)
    if dtypes.is_bool(dtype):
        raise b.error(PSCTypeError, "numpy boolean subtract, the `-` operator, is not "
                      "supported (np.linalg.cross of bool arrays)",
                      "convert the arrays to a numeric dtype first")
    x, y = _to_last(b, b.convert(x, dtype), ax), _to_last(b, b.convert(y, dtype), ay)
    shape = broadcast_shapes(b, x.shape[:-1], y.shape[:-1])
    xs = [broadcast_to(b, _component(b, x, i), shape) for i in range(3)]
    ys = [broadcast_to(b, _component(b, y, i), shape) for i in range(3)]
    parts = [b.sub(b.mul(xs[i], ys[j]), b.mul(xs[j], ys[i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    stacked = b.concatenate([b.reshape(p, shape + (1,)) for p in parts], len(shape))
    return _from_last(b, stacked, normalize_axis(b, axis, len(shape) + 1))


def outer(b: Builder, x1, x2, /) -> Value:
    """np.linalg.outer: np.outer of two 1-d arrays (n-d ones are refused, as NumPy)."""
    x, y = lift(b, x1), lift(b, x2)
    if x.ndim != 1 or y.ndim != 1:
        raise b.error(PSCValueError, "Input arrays must be one-dimensional, but they are "
                      f"x1.ndim={x.ndim} and x2.ndim={y.ndim}.")
    return linalg.outer(b, x1, x2)


def trace(b: Builder, x, /, *, offset=0, dtype=None) -> Value:
    """np.linalg.trace: np.trace over the last two axes."""
    return linalg.trace(b, x, offset, -2, -1, dtype)


def diagonal(b: Builder, x, /, *, offset=0) -> Value:
    """np.linalg.diagonal: the ``offset`` diagonal of the last two axes, as a last axis.
    Taken by reshaping, not by a masked sum: the elements are copied exactly (a -0.0
    stays -0.0)."""
    v = lift(b, x)
    if v.ndim < 2:
        raise b.error(PSCValueError, "diag requires an array of at least two dimensions")
    offset = static_int(b, offset, "np.linalg.diagonal offset")
    batch, (rows, cols) = v.shape[:-2], v.shape[-2:]
    first_row, first_col = min(max(-offset, 0), rows), min(max(offset, 0), cols)
    length = max(0, min(rows - first_row, cols - first_col))
    r = v.ndim
    square = b.slice(v, [0] * (r - 2) + [first_row, first_col],
                     batch + (first_row + length, first_col + length))
    # (L, L) -> flat (L*L,) padded to L*(L+1) -> (L, L+1): column 0 is the diagonal
    flat = b.reshape(square, batch + (length * length,))
    zero = b.constant(np.zeros((), v.dtype))
    padded = b.pad(flat, zero, [0] * (r - 1), [0] * (r - 2) + [length])
    rows_ = b.reshape(padded, batch + (length, length + 1))
    column = b.slice(rows_, [0] * r, batch + (length, 1))
    return b.reshape(column, batch + (length,))


def _vecdot_error(b: Builder, message: str):
    return b.error(PSCValueError, f"vecdot: {message}, with gufunc signature (n),(n)->()")


def vecdot(b: Builder, x1, x2, /, *, axis=-1) -> Value:
    """np.linalg.vecdot: ``sum(conj(x1) * x2)`` along ``axis`` of each (broadcast)."""
    (in1, in2), (out_dtype,) = resolve_ufunc_dtypes(b, np.vecdot, (x1, x2))
    x, y = lift(b, x1), lift(b, x2)
    axis = static_int(b, axis, "np.linalg.vecdot axis")
    for i, v in enumerate((x, y)):
        if v.ndim == 0:
            raise _vecdot_error(b, f"Input operand {i} does not have enough dimensions "
                                "(has 0, gufunc core requires 1)")
    x = _to_last(b, x, normalize_axis(b, axis, x.ndim))
    y = _to_last(b, y, normalize_axis(b, axis, y.ndim))
    if x.shape[-1] != y.shape[-1]:
        raise _vecdot_error(b, "Input operand 1 has a mismatch in its core dimension 0 "
                            f"(size {y.shape[-1]} is different from {x.shape[-1]})")
    batch = broadcast_shapes(b, x.shape[:-1], y.shape[:-1])
    compute = _compute_dtype(out_dtype)
    x = broadcast_to(b, b.convert(b.convert(x, in1), compute), batch + x.shape[-1:])
    y = broadcast_to(b, b.convert(b.convert(y, in2), compute), batch + y.shape[-1:])
    if dtypes.is_complex(compute):
        x = conj(b, x)
    dims = tuple(range(len(batch)))
    result = b.dot_general(x, y, ((len(batch),), (len(batch),)), (dims, dims))
    return _finish(b, result, out_dtype)


def matmul(b: Builder, x1, x2, /) -> Value:
    """np.linalg.matmul: np.matmul without its ufunc keywords."""
    return linalg.matmul(b, x1, x2)


def matrix_transpose(b: Builder, x, /) -> Value:
    return lookup_rule("numpy.matrix_transpose")(b, x)


def tensordot(b: Builder, x1, x2, /, *, axes=2) -> Value:
    return linalg.tensordot(b, x1, x2, axes)


for _name, _rule in [
    ("matrix_power", matrix_power), ("multi_dot", multi_dot), ("tensorsolve", tensorsolve),
    ("tensorinv", tensorinv), ("cross", cross), ("outer", outer), ("trace", trace),
    ("diagonal", diagonal), ("vecdot", vecdot), ("matmul", matmul),
    ("matrix_transpose", matrix_transpose), ("tensordot", tensordot),
]:
    register_translation_rule(f"numpy.linalg.{_name}", _rule)
