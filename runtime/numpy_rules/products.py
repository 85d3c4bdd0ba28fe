"""Products and signals on traced arrays: ``convolve``, ``correlate``, ``cross``, the NumPy 2
gufuncs ``matvec``, ``vecmat`` and ``vecdot``, and ``einsum_path``.

``convolve`` and ``correlate`` keep NumPy's definitions: ``correlate(a, v)[k] = sum_n
a[n + k] * conj(v[n])`` (NumPy 2's ``correlate2``: the second operand is conjugated), and
``convolve(a, v) = correlate(a, v[::-1])`` without conjugation.  Both take 1-d operands
(a 0-d one counts as length 1), refuse empty ones, and in ``'same'`` mode pick NumPy's
window, which depends on which operand is longer (NumPy swaps the operands and reverses
the result; so does the slice here).  Each is one XLA convolution (the project's
``conv_general_dilated`` primitive), with the mode's window as its padding: XLA's
convolution is a correlation, so no operand is materialised twice.  The result dtype is
``np.result_type`` of the operands as arrays (Python scalars count as strong); bool
operands are computed in int32 and compared with 0, which is NumPy's "any(a and v)".

``cross`` follows NumPy 2: vectors of 2 or 3 components along ``axisa``/``axisb`` (2-vector
operands warn with NumPy's DeprecationWarning), broadcast batch dimensions, the result
vector along ``axisc`` (a 2-by-2 product is the scalar z component).

``matvec``/``vecmat``/``vecdot`` are NumPy's gufuncs (``(m,n),(n)->(m)``, ``(n),(n,m)->(m)``,
``(n),(n)->()``): the batch dimensions broadcast, ``vecdot`` and ``vecmat`` conjugate the
vector operand, dtypes come from the ufunc's own ``resolve_dtypes``.  ``axes=``/``axis=``
are supported for ``vecdot`` (``axis``) only.

``einsum_path`` is static: only shapes matter, so NumPy's own answer for zero operands of
the same shapes and dtypes is returned (the path and its printed report).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..ir import Value
from ..primitives.convolution import conv_general_dilated
from ..primitives.support import conj
from ..translation import has_traced, register_translation_rule, translate_numpy
from ._core import _strong_operand, full_like_value, lift, normalize_axis
from .linalg import _check_kwargs, _compute_dtype, _finish, _operands

# --- convolve, correlate -----------------------------------------------------------------


def _as_vector(b: Builder, x: Value, name: str, which: str) -> Value:
    if x.ndim == 0:
        return b.reshape(x, (1,))
    if x.ndim != 1:
        raise b.error(PSCValueError, f"np.{name}: object too deep for desired array",
                      f"the {which} operand has shape {x.shape}; {name} takes 1-d arrays")
    return x


def _window(n: int, m: int, mode) -> tuple[int, int]:
    """(start in the full result, length) of NumPy's ``mode`` window; the full result has
    lags ``-(m-1) .. n-1``.  NumPy's 'same' is centred on the longer operand, rounding as
    its swapped computation does."""
    if mode == "full":
        return 0, n + m - 1
    short, long_ = min(n, m), max(n, m)
    if mode == "valid":
        return short - 1, long_ - short + 1
    centre = (short - 1) // 2
    return (centre if n >= m else short - 1 - centre), long_


_MODES = {"full": "full", "same": "same", "valid": "valid", "f": "full", "s": "same",
          "v": "valid", 2: "full", 1: "same", 0: "valid"}


def _mode(b: Builder, mode, name: str) -> str:
    try:
        return _MODES[mode.lower() if isinstance(mode, str) else mode]
    except (KeyError, TypeError):
        raise b.error(PSCValueError, f"np.{name}: mode must be one of 'valid', 'same', or "
                      f"'full' (got {mode!r})") from None


def _correlate_full_window(b: Builder, x: Value, w: Value, mode: str,
                           commutes: bool) -> Value:
    """``sum_j x[k + j] w[j]`` over NumPy's window of lags: one XLA convolution, padded.
    ``commutes``: a convolution, whose full result does not change when NumPy swaps the
    operands, so its window is the one of the longer operand first."""
    n, m = x.shape[0], w.shape[0]
    start, length = _window(max(n, m), min(n, m), mode) if commutes else _window(n, m, mode)
    low = (m - 1) - start
    high = length + m - 1 - n - low
    if dtypes.is_complex(x.dtype):
        return _complex_correlate(b, x, w, (low, high), length)
    return b.reshape(_conv(b, b.reshape(x, (1, 1, n)), b.reshape(w, (1, 1, m)), (low, high)),
                     (length,))


def _conv(b: Builder, lhs: Value, rhs: Value, padding) -> Value:
    return conv_general_dilated(b, lhs, rhs, window_strides=(1,), padding=(padding,),
                                lhs_dilation=(1,), rhs_dilation=(1,), lhs_spec=(0, 1, 2),
                                rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))


def _complex_correlate(b: Builder, x: Value, w: Value, padding, length: int) -> Value:
    """XLA's convolution is real: the real and imaginary parts are two input features, and
    the kernel [[wr, -wi], [wi, wr]] gives both parts of the product in one convolution."""
    xr, xi = _real(b, x), _imag(b, x)
    wr, wi = _real(b, w), _imag(b, w)
    n, m = x.shape[0], w.shape[0]
    lhs = b.concatenate([b.reshape(xr, (1, 1, n)), b.reshape(xi, (1, 1, n))], 1)
    rows = [[wr, b.neg(wi)], [wi, wr]]
    rhs = b.concatenate([b.concatenate([b.reshape(k, (1, 1, m)) for k in row], 1)
                         for row in rows], 0)
    out = _conv(b, lhs, rhs, padding)
    real = b.reshape(b.slice(out, (0, 0, 0), (1, 1, length)), (length,))
    imag = b.reshape(b.slice(out, (0, 1, 0), (1, 2, length)), (length,))
    return b.add(b.convert(real, x.dtype),
                 b.mul(b.convert(imag, x.dtype), full_like_value(b, 1j, real, x.dtype)))


def _real(b: Builder, z: Value) -> Value:
    return b.convert(z, dtypes.real_dtype(z.dtype))


def _imag(b: Builder, z: Value) -> Value:
    return b.convert(b.mul(z, full_like_value(b, -1j, z)), dtypes.real_dtype(z.dtype))


def _signal(name: str, conjugate: bool, reverse: bool):
    def rule(b, a, v, mode="full" if name == "convolve" else "valid"):
        mode = _mode(b, mode, name)
        (x, w), dtype = _operands(b, f"np.{name}", (a, v))
        x, w = _as_vector(b, x, name, "first"), _as_vector(b, w, name, "second")
        for value, which in ((x, "a" if name == "convolve" else "first array argument"),
                             (w, "v" if name == "convolve" else "second array argument")):
            if value.shape[0] == 0:
                raise b.error(PSCValueError, f"{which} cannot be empty")
        if conjugate and dtypes.is_complex(w.dtype):
            w = conj(b, w)
        if reverse:
            w = b.reverse(w, (0,))
        return _finish(b, _correlate_full_window(b, x, w, mode, reverse), dtype)
    rule.__name__ = name
    return rule


convolve = _signal("convolve", conjugate=False, reverse=True)
correlate = _signal("correlate", conjugate=True, reverse=False)


# --- cross --------------------------------------------------------------------------------


def _components(b: Builder, x: Value, axis: int) -> list[Value]:
    """The vector components of ``x`` along its (last, moved) ``axis``."""
    return [b.reshape(b.slice(x, [0] * (x.ndim - 1) + [i], x.shape[:-1] + (i + 1,)),
                      x.shape[:-1]) for i in range(x.shape[-1])]


def cross(b: Builder, a, c, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """np.cross of 2- or 3-component vectors (see the module docstring)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _strong(b, a), _strong(b, c)
    for v, ax, name in ((x, axisa, "axisa"), (y, axisb, "axisb")):
        if v.ndim == 0:
            raise b.error(PSCValueError, f"{name}: axis {ax} is out of bounds for array of "
                          "dimension 0")
    ax, ay = normalize_axis(b, axisa, x.ndim), normalize_axis(b, axisb, y.ndim)
    x = b.transpose(x, [d for d in range(x.ndim) if d != ax] + [ax])
    y = b.transpose(y, [d for d in range(y.ndim) if d != ay] + [ay])
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise b.error(PSCValueError, "incompatible dimensions for cross product\n"
                      "(dimension must be 2 or 3)")
    if x.shape[-1] == 2 or y.shape[-1] == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=4)
    xs, ys = _components(b, x, -1), _components(b, y, -1)
    mul = lambda p, q: translate_numpy(b, np.multiply, p, q)   # noqa: E731
    sub = lambda p, q: translate_numpy(b, np.subtract, p, q)   # noqa: E731
    z = sub(mul(xs[0], ys[1]), mul(xs[1], ys[0]))
    if len(xs) == 2 and len(ys) == 2:
        return z
    x2 = xs[2] if len(xs) == 3 else None
    y2 = ys[2] if len(ys) == 3 else None
    if x2 is None:     # a 2-vector has a zero z component
        parts = [mul(xs[1], y2), translate_numpy(b, np.negative, mul(xs[0], y2)), z]
    elif y2 is None:
        parts = [translate_numpy(b, np.negative, mul(x2, ys[1])), mul(x2, ys[0]), z]
    else:
        parts = [sub(mul(xs[1], y2), mul(x2, ys[1])), sub(mul(x2, ys[0]), mul(xs[0], y2)), z]
    shape = parts[-1].shape
    parts = [b.broadcast_in_dim(p, shape, range(len(shape) - p.ndim, len(shape)))
             for p in parts]
    result = b.concatenate([b.reshape(p, shape + (1,)) for p in parts], len(shape))
    out_axis = normalize_axis(b, axisc, result.ndim)
    return b.transpose(result, list(range(out_axis)) + [result.ndim - 1]
                       + list(range(out_axis, result.ndim - 1)))


def _strong(b: Builder, x) -> Value:
    """``np.asarray(x)``: a weak traced scalar as NumPy's default dtype of its kind."""
    return _strong_operand(b, x)


# --- matvec, vecmat, vecdot ----------------------------------------------------------------


def _gufunc_operands(b: Builder, ufunc: np.ufunc, x1, x2, kwargs):
    _check_kwargs(b, f"np.{ufunc.__name__}", kwargs, allowed=("dtype",))
    x, y = _strong(b, x1), _strong(b, x2)
    out = kwargs.get("dtype")
    try:
        loop = ufunc.resolve_dtypes((x.dtype, y.dtype, None if out is None else
                                     np.dtype(out)), casting="same_kind")
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__} does not support {x.dtype} and "
                      f"{y.dtype}: {err}") from None
    compute = _compute_dtype(loop[0])
    return b.convert(x, compute), b.convert(y, compute), loop[2]


def _core_check(b: Builder, ufunc: np.ufunc, operands, core_ndims) -> None:
    for i, (v, n) in enumerate(zip(operands, core_ndims)):
        if v.ndim < n:
            raise b.error(PSCValueError, f"{ufunc.__name__}: Input operand {i} does not have "
                          f"enough dimensions (has {v.ndim}, gufunc core with signature "
                          f"{ufunc.signature} requires {n})")


def _mismatch(b: Builder, ufunc: np.ufunc, operand: int, dim: int, got: int, want: int):
    return b.error(PSCValueError, f"{ufunc.__name__}: Input operand {operand} has a mismatch "
                   f"in its core dimension {dim}, with gufunc signature {ufunc.signature} "
                   f"(size {got} is different from {want})")


def _conjugated(b: Builder, x: Value) -> Value:
    return conj(b, x) if dtypes.is_complex(x.dtype) else x


def _batched_matmul(b: Builder, x: Value, y: Value) -> Value:
    """(..., n, k) @ (..., k, m) with broadcast batch dimensions."""
    return translate_numpy(b, np.matmul, x, y)


def matvec(b: Builder, x1, x2, **kwargs):
    x, y, dtype = _gufunc_operands(b, np.matvec, x1, x2, kwargs)
    _core_check(b, np.matvec, (x, y), (2, 1))
    if x.shape[-1] != y.shape[-1]:
        raise _mismatch(b, np.matvec, 1, 0, y.shape[-1], x.shape[-1])
    result = _batched_matmul(b, x, b.reshape(y, y.shape + (1,)))
    return _finish(b, b.reshape(result, result.shape[:-1]), dtype)


def vecmat(b: Builder, x1, x2, **kwargs):
    x, y, dtype = _gufunc_operands(b, np.vecmat, x1, x2, kwargs)
    _core_check(b, np.vecmat, (x, y), (1, 2))
    if y.shape[-2] != x.shape[-1]:
        raise _mismatch(b, np.vecmat, 1, 0, y.shape[-2], x.shape[-1])
    row = b.reshape(_conjugated(b, x), x.shape[:-1] + (1, x.shape[-1]))
    result = _batched_matmul(b, row, y)
    return _finish(b, b.reshape(result, result.shape[:-2] + result.shape[-1:]), dtype)


def vecdot(b: Builder, x1, x2, axis=None, **kwargs):
    axis = -1 if axis is None else axis
    x, y, dtype = _gufunc_operands(b, np.vecdot, x1, x2, kwargs)
    _core_check(b, np.vecdot, (x, y), (1, 1))
    x = b.transpose(x, _axis_last(b, axis, x.ndim))
    y = b.transpose(y, _axis_last(b, axis, y.ndim))
    if x.shape[-1] != y.shape[-1]:
        raise _mismatch(b, np.vecdot, 1, 0, y.shape[-1], x.shape[-1])
    row = b.reshape(_conjugated(b, x), x.shape[:-1] + (1, x.shape[-1]))
    result = _batched_matmul(b, row, b.reshape(y, y.shape + (1,)))
    return _finish(b, b.reshape(result, result.shape[:-2]), dtype)


def _axis_last(b: Builder, axis, ndim: int) -> list[int]:
    axis = normalize_axis(b, axis, ndim)
    return [d for d in range(ndim) if d != axis] + [axis]


# --- einsum_path ------------------------------------------------------------------------


def einsum_path(b: Builder, subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's path for zero operands of the operands' shapes and dtypes (static)."""
    stand_ins = [np.zeros(lift(b, o).shape, lift(b, o).dtype) if _has_value(o) else o
                 for o in operands]
    try:
        return np.einsum_path(subscripts, *stand_ins, optimize=optimize,
                              einsum_call=einsum_call)
    except (ValueError, TypeError) as err:
        cls = PSCShapeError if "shape" in str(err) or "broadcast" in str(err) else \
            PSCValueError
        raise b.error(cls, f"np.einsum_path: {err}") from None


def _has_value(x) -> bool:
    return has_traced(x)


for _name, _rule in [("numpy.convolve", convolve), ("numpy.correlate", correlate),
                     ("numpy.cross", cross), ("numpy.matvec", matvec),
                     ("numpy.vecmat", vecmat), ("numpy.vecdot", vecdot),
                     ("numpy.einsum_path", einsum_path)]:
    if hasattr(np, _name.split(".")[1]):
        register_translation_rule(_name, _rule)

COVERAGE_NOTES = {"numpy.vecdot": "partial: axis= only (no axes=)",
                  "numpy.matvec": "partial: no axes=", "numpy.vecmat": "partial: no axes="}
