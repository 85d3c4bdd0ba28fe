"""Linear algebra: dot, matmul (``@``), vdot, inner, outer, tensordot, einsum, kron, trace
and ``np.linalg.norm``, built on the builder's ``dot_general`` and ``reduce`` (matrix
norms of ord 2, -2 and 'nuc' on the singular values of the ``svd`` primitive,
`runtime.primitives.svd`).

Dtypes follow NumPy 2 exactly.  ``np.dot`` and its relatives convert every argument with
``asarray``, so Python scalars count as strong int64/float64 there (``np.dot(2, f32)`` is
float64); ``matmul`` is a ufunc and asks ``np.matmul.resolve_dtypes``.  XLA's dot on
``i1`` is not reliable, so bool products are computed in int32 and turned back into bool
with ``!= 0`` (NumPy's bool dot is "any(a and b)", which that gives exactly).

einsum plan (all static, from the subscripts string and the operand shapes):

1. Parse the subscripts into one label list per operand; ``...`` becomes integer labels
   ``0..E-1``, right-aligned per operand so they broadcast as NumPy does.  The output is
   the explicit ``->`` part, or (implicit mode) the ellipsis labels followed by the letters
   that appear exactly once, in ASCII order.
2. Per operand: a label repeated within it (``'ii'``) takes a diagonal: mask with an
   iota-equality and sum away the second occurrence.  A size-1 dimension whose label has a
   bigger size elsewhere is dropped (the operand does not vary along it: that is exactly
   broadcasting).  Labels found in no other operand and not in the output are summed now.
3. Contract the operands pairwise, left to right, with one ``dot_general`` each: shared
   labels still needed later (by a later operand or the output) are batch dimensions, the
   other shared labels are contracted, the rest stay free.
4. Transpose the result into the output's label order.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import (PSCShapeError, PSCTracedValueError, PSCTypeError,
                      PSCUnsupportedCallError, PSCValueError)
from ..ir import Value
from ..primitives.svd import svd
from ..translation import has_traced, register_translation_rule
from .decompositions import common_type
from ._core import (full_like_value, is_traced_sequence, lift, normalize_axis, sequence_dtype,
                    static_int)

# --- shared helpers -----------------------------------------------------------------------


def _check_kwargs(b: Builder, name: str, kwargs: dict, allowed=()) -> None:
    """``out=`` would write into an array; anything else unknown is not supported."""
    if kwargs.get("out") is not None:
        raise b.error(PSCTypeError, f"{name}(..., out=...) writes into an array, which PSC "
                      "functions cannot do", "use the returned value")
    unknown = sorted(k for k in kwargs if k not in allowed and k != "out")
    if unknown:
        raise b.error(PSCTypeError, f"{name}: unsupported keyword arguments {unknown}")


def _strong_dtype(x) -> np.dtype:
    """The dtype ``np.asarray(x)`` has: these functions treat Python scalars as strong."""
    if is_traced_sequence(x):   # a list holding traced values
        return sequence_dtype(x)
    return x.dtype if isinstance(x, Value) else np.asarray(x).dtype


def _result_dtype(b: Builder, name: str, args) -> np.dtype:
    try:
        return np.result_type(*(_strong_dtype(a) for a in args))
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise b.error(PSCTypeError, f"{name}: unsupported operand dtypes: {err}") from None


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    return dtypes.int32 if dtypes.is_bool(dtype) else dtype


def _operands(b: Builder, name: str, args) -> tuple[list[Value], np.dtype]:
    """``args`` lifted to the dtype their product is computed in, and the result dtype."""
    dtype = _result_dtype(b, name, args)
    return [lift(b, a, _compute_dtype(dtype)) for a in args], dtype


def _finish(b: Builder, x: Value, dtype: np.dtype) -> Value:
    """Back from the compute dtype: bool products are "any nonzero"."""
    if dtypes.is_bool(dtype):
        return b.ne(x, full_like_value(b, 0, x))
    return b.convert(x, dtype)


def _shape_str(shape) -> str:
    """A shape as NumPy prints it in messages: ``(2,3)``, ``(3,)``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _static(b: Builder, x, what: str):
    if has_traced(x):
        raise b.error(PSCTracedValueError, f"{what} must be known when the program is built, "
                      "but it is a traced value", "pass it as a static argument "
                      "(static_argnames)")
    return x


def _scalar_product(b: Builder, x: Value, y: Value, dtype: np.dtype) -> Value:
    """``x * y`` broadcast (one of them 0-d), in the result dtype (and for bool)."""
    shape = x.shape if x.ndim else y.shape
    x, y = (b.broadcast_in_dim(v, shape, range(len(shape) - v.ndim, len(shape)))
            for v in (x, y))
    return _finish(b, b.mul(x, y), dtype)


def _diagonal_mask(b: Builder, shape, dim1: int, dim2: int, offset: int = 0) -> Value:
    """Bool mask of ``shape``: true where index[dim2] == index[dim1] + offset."""
    rows = b.iota(shape, np.int32, dim1)
    cols = b.iota(shape, np.int32, dim2)
    if offset:
        rows = b.add(rows, full_like_value(b, offset, rows))
    return b.eq(rows, cols)


def _masked_sum(b: Builder, x: Value, mask: Value, dims) -> Value:
    """Sum of ``x`` where ``mask`` holds, over ``dims`` (select, not multiply: an inf off the
    diagonal must not turn into NaN)."""
    kept = b.select(mask, x, full_like_value(b, 0, x))
    if dtypes.is_bool(x.dtype):
        return b.reduce(kept, "or", dims)
    return b.reduce(kept, "sum", dims)


# --- dot, vdot, inner, outer, tensordot, kron --------------------------------------------


def _not_aligned(b: Builder, x: Value, y: Value, dx: int, dy: int):
    return b.error(PSCShapeError, f"shapes {_shape_str(x.shape)} and {_shape_str(y.shape)} "
                   f"not aligned: {x.shape[dx]} (dim {dx}) != {y.shape[dy]} (dim {dy})")


def _contract(b: Builder, x: Value, y: Value, dx: int, dy: int, dtype) -> Value:
    """Sum over dimension ``dx`` of ``x`` and ``dy`` of ``y``: x's free dims, then y's."""
    if x.shape[dx] != y.shape[dy]:
        raise _not_aligned(b, x, y, dx, dy)
    return _finish(b, b.dot_general(x, y, ((dx,), (dy,))), dtype)


def dot(b: Builder, a, c, **kwargs) -> Value:
    """np.dot: the last axis of ``a`` with the second-to-last of ``c`` (its only one if
    1-d); a 0-d operand multiplies."""
    _check_kwargs(b, "np.dot", kwargs)
    (x, y), dtype = _operands(b, "np.dot", (a, c))
    if x.ndim == 0 or y.ndim == 0:
        return _scalar_product(b, x, y, dtype)
    return _contract(b, x, y, x.ndim - 1, max(y.ndim - 2, 0), dtype)


def vdot(b: Builder, a, c) -> Value:
    """np.vdot: the dot product of the flattened arguments (conjugating the first)."""
    (x, y), dtype = _operands(b, "np.vdot", (a, c))
    if dtypes.is_complex(dtype):
        raise b.error(PSCUnsupportedCallError, "np.vdot of complex arrays is not supported "
                      "(it conjugates, and the builder has no conj)",
                      "use np.dot on real arrays, or split real and imaginary parts")
    if x.size != y.size:
        raise b.error(PSCShapeError, f"cannot reshape array of size {y.size} into shape "
                      f"({x.size},)", "np.vdot flattens both arguments, which must have "
                      "the same number of elements")
    x, y = b.reshape(x, (x.size,)), b.reshape(y, (y.size,))
    return _contract(b, x, y, 0, 0, dtype)


def inner(b: Builder, a, c) -> Value:
    """np.inner: the last axes of both; a 0-d operand multiplies."""
    (x, y), dtype = _operands(b, "np.inner", (a, c))
    if x.ndim == 0 or y.ndim == 0:
        return _scalar_product(b, x, y, dtype)
    return _contract(b, x, y, x.ndim - 1, y.ndim - 1, dtype)


def outer(b: Builder, a, c, **kwargs) -> Value:
    """np.outer: ``ravel(a)[:, None] * ravel(c)[None, :]``."""
    _check_kwargs(b, "np.outer", kwargs)
    (x, y), dtype = _operands(b, "np.outer", (a, c))
    shape = (x.size, y.size)
    x = b.broadcast_in_dim(b.reshape(x, (x.size,)), shape, (0,))
    y = b.broadcast_in_dim(b.reshape(y, (y.size,)), shape, (1,))
    return _finish(b, b.mul(x, y), dtype)


def _tensordot_axes(b: Builder, axes, x: Value, y: Value):
    """NumPy's ``axes``: an int N (last N of x with first N of y) or a pair of axis lists."""
    _static(b, axes, "np.tensordot axes")
    if not isinstance(axes, (tuple, list)):
        n = operator.index(axes)
        if n < 0 or n > min(x.ndim, y.ndim):
            raise b.error(PSCValueError, f"np.tensordot: axes={n} does not fit operands of "
                          f"shapes {x.shape} and {y.shape}")
        return list(range(x.ndim - n, x.ndim)), list(range(n))
    if len(axes) != 2:
        raise b.error(PSCValueError, "np.tensordot axes must be an int or a pair of axis "
                      f"sequences, got {axes!r}")
    pair = [list(ax) if isinstance(ax, (tuple, list)) else [ax] for ax in axes]
    for ax in pair:
        if len(set(ax)) != len(ax):
            raise b.error(PSCValueError, "duplicate axes are not allowed in tensordot")
    if len(pair[0]) != len(pair[1]):
        raise b.error(PSCShapeError, "shape-mismatch for sum")
    return ([normalize_axis(b, ax, x.ndim) for ax in pair[0]],
            [normalize_axis(b, ax, y.ndim) for ax in pair[1]])


def tensordot(b: Builder, a, c, axes=2) -> Value:
    """np.tensordot: result dims are x's free axes, then y's, each in order."""
    (x, y), dtype = _operands(b, "np.tensordot", (a, c))
    ax, ay = _tensordot_axes(b, axes, x, y)
    if any(x.shape[i] != y.shape[j] for i, j in zip(ax, ay)):
        raise b.error(PSCShapeError, "shape-mismatch for sum",
                      f"axes {ax} of {x.shape} and {ay} of {y.shape} must have equal sizes")
    return _finish(b, b.dot_general(x, y, (ax, ay)), dtype)


def kron(b: Builder, a, c) -> Value:
    """np.kron: the outer product with x's and y's dims interleaved, then merged pairwise."""
    (x, y), dtype = _operands(b, "np.kron", (a, c))
    ndim = max(x.ndim, y.ndim)
    x = b.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    y = b.reshape(y, (1,) * (ndim - y.ndim) + y.shape)
    pairs = [s for dims in zip(x.shape, y.shape) for s in dims]
    x = b.broadcast_in_dim(x, pairs, range(0, 2 * ndim, 2))
    y = b.broadcast_in_dim(y, pairs, range(1, 2 * ndim, 2))
    product = _finish(b, b.mul(x, y), dtype)
    return b.reshape(product, [p * q for p, q in zip(pairs[::2], pairs[1::2])])


# --- matmul -------------------------------------------------------------------------------

_MATMUL_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def _matmul_dtypes(b: Builder, x: Value, y: Value, dtype) -> tuple[np.dtype, np.dtype]:
    """(loop input dtype, output dtype) from NumPy's own resolution for the matmul ufunc."""
    try:
        out = None if dtype is None else np.dtype(dtype)
        loop = np.matmul.resolve_dtypes((x.dtype, y.dtype, None), signature=(None, None, out),
                                        casting="same_kind")
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise b.error(PSCTypeError, f"np.matmul does not support {x.dtype} and {y.dtype}"
                      + (f" with dtype={dtype}" if dtype is not None else "")
                      + f": {err}") from None
    return loop[0], loop[2]


def _matmul_batch_shape(b: Builder, x: Value, y: Value) -> tuple:
    bx, by = x.shape[:-2], y.shape[:-2]
    ndim = max(len(bx), len(by))
    bx, by = (1,) * (ndim - len(bx)) + bx, (1,) * (ndim - len(by)) + by
    if any(p != q and 1 not in (p, q) for p, q in zip(bx, by)):
        remapped = [_shape_str(v.shape) + "->(" + ",".join([*map(str, v.shape[:-2]),
                                                            "newaxis", "newaxis"]) + ")"
                    for v in (x, y)]
        raise b.error(PSCShapeError, "matmul: operands could not be broadcast together with "
                      "remapped shapes [original->remapped]: " + " ".join(remapped))
    return tuple(max(p, q) for p, q in zip(bx, by))


def matmul(b: Builder, a, c, **kwargs) -> Value:
    """np.matmul / ``@``: stacks of matrices with broadcast batch dims; a 1-d operand is a
    row (left) or column (right) vector whose dimension is removed from the result."""
    _check_kwargs(b, "np.matmul", kwargs, allowed=("dtype",))
    x, y = lift(b, a), lift(b, c)
    for i, v in enumerate((x, y)):
        if v.ndim == 0:
            raise b.error(PSCValueError, f"matmul: Input operand {i} does not have enough "
                          f"dimensions (has 0, gufunc core with signature {_MATMUL_SIGNATURE}"
                          " requires 1)", "use * (np.multiply) to scale by a scalar")
    loop_dtype, dtype = _matmul_dtypes(b, x, y, kwargs.get("dtype"))
    if x.shape[-1] != y.shape[max(y.ndim - 2, 0)]:
        raise b.error(PSCShapeError, "matmul: Input operand 1 has a mismatch in its core "
                      f"dimension 0, with gufunc signature {_MATMUL_SIGNATURE} (size "
                      f"{y.shape[max(y.ndim - 2, 0)]} is different from {x.shape[-1]})")
    x_vec, y_vec = x.ndim == 1, y.ndim == 1
    x = b.reshape(x, (1,) + x.shape) if x_vec else x
    y = b.reshape(y, y.shape + (1,)) if y_vec else y
    x, y = (b.convert(v, _compute_dtype(loop_dtype)) for v in (x, y))
    result = _matmul_2d(b, x, y)
    shape = result.shape[:-2] + result.shape[-2:-1] * (not x_vec) + result.shape[-1:] * (
        not y_vec)
    return _finish(b, b.reshape(result, shape), dtype)


def _matmul_2d(b: Builder, x: Value, y: Value) -> Value:
    """Both at least 2-d: (..., n, k) @ (..., k, m) -> (..., n, m)."""
    if y.ndim == 2:
        # x's batch dims are free dims of one plain contraction: no broadcast copies.
        return b.dot_general(x, y, ((x.ndim - 1,), (0,)))
    batch = _matmul_batch_shape(b, x, y)
    nb = len(batch)
    x, y = (b.broadcast_in_dim(v, batch + v.shape[-2:],
                               range(nb + 2 - v.ndim, nb + 2)) for v in (x, y))
    return b.dot_general(x, y, ((nb + 1,), (nb,)), (range(nb), range(nb)))


# --- einsum -------------------------------------------------------------------------------

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _parse_term(b: Builder, term: str, where: str) -> tuple[str, str | None]:
    """A term as (letters before '...', letters after) or (letters, None) without one."""
    head, sep, tail = term.partition("...")
    for char in head + tail:
        if char == ".":
            raise b.error(PSCValueError, "einstein sum subscripts string contains a '.' that "
                          f"is not part of an ellipsis ('...') in {where}")
        if char not in _LETTERS:
            raise b.error(PSCValueError, f"invalid subscript '{char}' in einstein sum "
                          "subscripts string, subscripts must be letters")
    return (head, tail) if sep else (head, None)


def _operand_labels(b: Builder, term, ndim: int, i: int) -> list:
    """Labels of one operand's dims: letters, and ints for its right-aligned ellipsis dims
    (numbered from the end: -1 is the last ellipsis dim)."""
    head, tail = term
    letters = len(head) + len(tail or "")
    if letters > ndim:
        raise b.error(PSCValueError, "einstein sum subscripts string contains too many "
                      f"subscripts for operand {i}")
    if tail is None:
        if letters < ndim:
            raise b.error(PSCValueError, f"operand {i} has more dimensions than subscripts "
                          "given in einstein sum, but no '...' ellipsis provided to "
                          "broadcast the extra dimensions.")
        return list(head)
    ellipsis = list(range(letters - ndim, 0))
    return list(head) + ellipsis + list(tail)


def _parse_einsum(b: Builder, subscripts, operands):
    """(label list per operand, output labels) for the subscripts and operand ranks."""
    _static(b, subscripts, "np.einsum subscripts")
    if not isinstance(subscripts, str):
        raise b.error(PSCTypeError, "np.einsum needs a subscripts string as its first "
                      f"argument, got {type(subscripts).__name__}",
                      "the sublist form einsum(op, [0, 1], ...) is not supported")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = [_parse_term(b, t, f"operand {i}") for i, t in enumerate(inputs.split(","))]
    if len(terms) != len(operands):
        # NumPy's own message swaps "more" and "fewer"; this one says what happened.
        more = "more" if len(operands) > len(terms) else "fewer"
        raise b.error(PSCValueError, f"{more} operands provided to einstein sum function "
                      f"than specified in the subscripts string ({len(operands)} given, "
                      f"{len(terms)} specified)")
    labels = [_operand_labels(b, t, v.ndim, i) for i, (t, v) in enumerate(zip(terms, operands))]
    n_ellipsis = max((-min((l for l in ls if isinstance(l, int)), default=0) for ls in labels),
                     default=0)
    if not arrow:
        counts = {}
        for ls in labels:
            for label in ls:
                counts[label] = counts.get(label, 0) + 1
        once = sorted(l for l, n in counts.items() if n == 1 and isinstance(l, str))
        return labels, list(range(-n_ellipsis, 0)) + once
    head, tail = _parse_term(b, output, "the output")
    if tail is None and n_ellipsis:
        raise b.error(PSCValueError, "output has more dimensions than subscripts given in "
                      "einstein sum, but no '...' ellipsis provided to broadcast the extra "
                      "dimensions.")
    out = list(head) + list(range(-n_ellipsis, 0)) * (tail is not None) + list(tail or "")
    seen = {l for ls in labels for l in ls}
    for label in head + (tail or ""):
        if out.count(label) > 1:
            raise b.error(PSCValueError, "einstein sum subscripts string includes output "
                          f"subscript '{label}' multiple times")
        if label not in seen:
            raise b.error(PSCValueError, "einstein sum subscripts string included output "
                          f"subscript '{label}' which never appeared in an input")
    return labels, out


def _label_sizes(b: Builder, operands, labels) -> dict:
    """Each label's size: equal across operands, or 1 (which broadcasts)."""
    sizes, where = {}, {}
    for i, (v, ls) in enumerate(zip(operands, labels)):
        for label, size in zip(ls, v.shape):
            if sizes.get(label, 1) == 1:
                sizes[label], where[label] = size, i
            elif size not in (1, sizes[label]):
                shown = f"'{label}'" if isinstance(label, str) else "'...'"
                raise b.error(PSCShapeError, "operands could not be broadcast together: "
                              f"subscript {shown} has size {sizes[label]} in operand "
                              f"{where[label]} but size {size} in operand {i}")
    return sizes


def _take_diagonals(b: Builder, x: Value, labels: list, i: int) -> tuple[Value, list]:
    """Collapse each label repeated within one operand onto its diagonal."""
    labels = list(labels)
    for pos, label in enumerate(labels):
        while label in labels[pos + 1:]:
            other = labels.index(label, pos + 1)
            if x.shape[pos] != x.shape[other]:
                raise b.error(PSCShapeError, f"dimensions in operand {i} for collapsing "
                              f"index '{label}' don't match ({x.shape[pos]} != "
                              f"{x.shape[other]})")
            x = _masked_sum(b, x, _diagonal_mask(b, x.shape, pos, other), (other,))
            del labels[other]
    return x, labels


def _drop_broadcast_dims(b: Builder, x: Value, labels: list, sizes: dict):
    """Remove size-1 dims whose label is bigger elsewhere: x is constant along them."""
    keep = [d for d, l in enumerate(labels) if not (x.shape[d] == 1 and sizes[l] != 1)]
    x = b.reshape(x, [x.shape[d] for d in keep])
    return x, [labels[d] for d in keep]


def _contract_pair(b: Builder, x: Value, lx: list, y: Value, ly: list, needed: set):
    """One dot_general: shared labels still needed are batch, other shared ones summed."""
    shared = [l for l in lx if l in ly]
    batch = [l for l in shared if l in needed]
    summed = [l for l in shared if l not in needed]
    dims = ([lx.index(l) for l in summed], [ly.index(l) for l in summed])
    bdims = ([lx.index(l) for l in batch], [ly.index(l) for l in batch])
    result = b.dot_general(x, y, dims, bdims)
    return result, batch + [l for l in lx if l not in ly] + [l for l in ly if l not in lx]


def einsum(b: Builder, subscripts, *operands, optimize=False, **kwargs) -> Value:
    """np.einsum with a static subscripts string; see the module docstring for the plan."""
    _check_kwargs(b, "np.einsum", kwargs)
    values, dtype = _operands(b, "np.einsum", operands)
    labels, out = _parse_einsum(b, subscripts, values)
    pairs = [_take_diagonals(b, v, ls, i) for i, (v, ls) in enumerate(zip(values, labels))]
    sizes = _label_sizes(b, [v for v, _ in pairs], [ls for _, ls in pairs])
    pairs = [_drop_broadcast_dims(b, v, ls, sizes) for v, ls in pairs]
    reduced = []
    for i, (v, ls) in enumerate(pairs):
        elsewhere = {l for j, (_, other) in enumerate(pairs) if j != i for l in other}
        alone = [d for d, l in enumerate(ls) if l not in elsewhere and l not in out]
        reduced.append((b.reduce(v, "sum", alone), [l for l in ls if l in elsewhere or
                                                     l in out]))
    x, lx = reduced[0]
    for k in range(1, len(reduced)):
        needed = set(out).union(*(ls for _, ls in reduced[k + 1:]))
        x, lx = _contract_pair(b, x, lx, *reduced[k], needed)
    x = b.transpose(x, [lx.index(l) for l in out])
    return _finish(b, x, dtype)


# --- trace --------------------------------------------------------------------------------


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's sum/trace accumulator: bool and small ints go to the default int."""
    if dtypes.is_bool(dtype) or (dtype.kind == "i" and dtype.itemsize < 8):
        return dtypes.int64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def trace(b: Builder, a, offset=0, axis1=0, axis2=1, dtype=None, **kwargs) -> Value:
    """np.trace: the sum of the ``offset`` diagonal of the (axis1, axis2) planes."""
    _check_kwargs(b, "np.trace", kwargs)
    x = lift(b, a)
    if x.ndim < 2:
        raise b.error(PSCValueError, "diag requires an array of at least two dimensions")
    offset = static_int(b, offset, "np.trace offset")
    d1 = normalize_axis(b, static_int(b, axis1, "np.trace axis1"), x.ndim)
    d2 = normalize_axis(b, static_int(b, axis2, "np.trace axis2"), x.ndim)
    if d1 == d2:
        raise b.error(PSCValueError, "axis1 and axis2 cannot be the same")
    out_dtype = _sum_dtype(x.dtype) if dtype is None else np.dtype(_static(b, dtype, "dtype"))
    x = b.convert(x, out_dtype)
    return _masked_sum(b, x, _diagonal_mask(b, x.shape, d1, d2, offset), (d1, d2))


# --- norm ---------------------------------------------------------------------------------


def _max(b: Builder, x: Value, dims) -> Value:
    """max over ``dims`` of non-negative ``x``, NaN if any is NaN, 0 when empty (NumPy's
    ``initial=0``); XLA's NaN behaviour in max varies by backend, so it is spelled out."""
    if any(x.shape[d] == 0 for d in dims):
        return b.reduce(full_like_value(b, 0, x), "sum", dims)
    result = b.reduce(x, "max", dims)
    has_nan = b.reduce(b.ne(x, x), "or", dims)
    return b.select(has_nan, full_like_value(b, np.nan, result), result)


def _min(b: Builder, x: Value, dims) -> Value:
    if any(x.shape[d] == 0 for d in dims):
        raise b.error(PSCValueError, "zero-size array to reduction operation minimum which "
                      "has no identity")
    result = b.reduce(x, "min", dims)
    has_nan = b.reduce(b.ne(x, x), "or", dims)
    return b.select(has_nan, full_like_value(b, np.nan, result), result)


def _abs_squared(b: Builder, x: Value) -> Value:
    if dtypes.is_complex(x.dtype):
        x = b.abs(x)
    return b.mul(x, x)


def _vector_norm(b: Builder, x: Value, ord, dims) -> Value:
    real = dtypes.real_dtype(x.dtype)
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return b.sqrt(b.reduce(_abs_squared(b, x), "sum", dims))
    if isinstance(ord, str):
        raise b.error(PSCValueError, f"Invalid norm order '{ord}' for vectors")
    if ord == 0:
        nonzero = b.ne(x, full_like_value(b, 0, x))
        return b.reduce(b.convert(nonzero, real), "sum", dims)
    absx = b.abs(x)
    if ord == np.inf:
        return _max(b, absx, dims)
    if ord == -np.inf:
        return _min(b, absx, dims)
    if ord == 1:
        return b.reduce(absx, "sum", dims)
    powered = b.pow(absx, full_like_value(b, ord, absx))
    total = b.reduce(powered, "sum", dims)
    return b.pow(total, full_like_value(b, np.reciprocal(ord, dtype=real), total))


def _matrix_norm(b: Builder, x: Value, ord, row: int, col: int) -> Value:
    if isinstance(ord, str) and ord in ("fro", "f") or ord is None:
        return b.sqrt(b.reduce(_abs_squared(b, x), "sum", (row, col)))
    if ord in (2, -2, "nuc"):
        return _singular_value_norm(b, x, ord, row, col)
    if isinstance(ord, str) or ord not in (1, -1, np.inf, -np.inf):
        raise b.error(PSCValueError, "Invalid norm order for matrices.")
    # ord 1 sums down the rows then picks a column; inf sums along rows and picks a row.
    summed, other = (row, col) if abs(ord) == 1 else (col, row)
    sums = b.reduce(b.abs(x), "sum", (summed,))
    other -= other > summed
    return _max(b, sums, (other,)) if ord > 0 else _min(b, sums, (other,))


def _singular_value_norm(b: Builder, x: Value, ord, row: int, col: int) -> Value:
    """ord 2, -2, 'nuc': the largest, smallest or summed singular values of the
    (row, col) planes (NumPy's ``_multi_svd_norm``: max and sum start at 0)."""
    rest = [d for d in range(x.ndim) if d not in (row, col)]
    x = b.convert(b.transpose(x, rest + [row, col]), common_type(b, "norm", (x,)))
    k = min(x.shape[-2:])
    last = (x.ndim - 2,)
    if 0 in x.shape:
        values = b.broadcast_in_dim(b.constant(np.zeros((), dtypes.real_dtype(x.dtype))),
                                    x.shape[:-2] + (k,), ())
    else:
        values = svd(b, x, compute_uv=False)[0]
    if ord == "nuc":
        return b.reduce(values, "sum", last)
    return _max(b, values, last) if ord == 2 else _min(b, values, last)


def _norm_axes(b: Builder, axis, ndim: int) -> tuple[int, ...]:
    _static(b, axis, "np.linalg.norm axis")
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise b.error(PSCTypeError, "'axis' must be None, an integer or a tuple of "
                          "integers") from None
    axes = tuple(normalize_axis(b, a, ndim) for a in axis)
    if len(axes) == 2 and axes[0] == axes[1]:
        raise b.error(PSCValueError, "Duplicate axes given.")
    return axes


def norm(b: Builder, x, ord=None, axis=None, keepdims=False) -> Value:
    """np.linalg.norm: vector norms over one axis, matrix norms over two; with no axis and
    no ord, the 2-norm of the flattened array."""
    _static(b, ord, "np.linalg.norm ord")
    v = lift(b, x)
    if not dtypes.is_inexact(v.dtype):
        v = b.convert(v, dtypes.float64)    # as NumPy: x.astype(float)
    if axis is None and ord is None:
        axes = tuple(range(v.ndim))
        result = b.sqrt(b.reduce(_abs_squared(b, v), "sum", axes))
    else:
        axes = _norm_axes(b, axis, v.ndim)
        if len(axes) == 1:
            result = _vector_norm(b, v, ord, axes)
        elif len(axes) == 2:
            result = _matrix_norm(b, v, ord, *axes)
        else:
            raise b.error(PSCValueError, "Improper number of dimensions to norm.")
    if keepdims:
        result = b.reshape(result, [1 if d in axes else s for d, s in enumerate(v.shape)])
    return result


# --- registration -------------------------------------------------------------------------

for _names, _rule in [
    (("numpy.dot", "numpy.ndarray.dot"), dot),
    (("numpy.matmul", "operator.matmul"), matmul),
    (("numpy.vdot",), vdot),
    (("numpy.inner",), inner),
    (("numpy.outer",), outer),
    (("numpy.tensordot",), tensordot),
    (("numpy.einsum",), einsum),
    (("numpy.kron",), kron),
    (("numpy.trace", "numpy.ndarray.trace"), trace),
    (("numpy.linalg.norm",), norm),
]:
    for _name in _names:
        register_translation_rule(_name, _rule)
