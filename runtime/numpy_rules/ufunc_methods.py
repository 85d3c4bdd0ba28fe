"""The methods of NumPy's ufuncs on traced arrays: ``reduce``, ``accumulate``, ``reduceat``
and ``at`` for every ufunc with a rule (``outer`` is `_core.ufunc_outer`, found by the
mirror for any ufunc with a rule).

NumPy's own ufunc answers what is not data: each call first runs the NumPy method on a
stand-in array of the operand's dtype, rank and emptiness (every dimension of size
``min(size, 1)``), with the same ``axis``, ``dtype``, ``keepdims`` and ``initial``.  That
gives the result dtype (``np.add.reduce`` of int8 is int64, ``np.power.reduce`` of bool is
int8, ``np.arctan2.reduce`` of int8 is float16) and NumPy's errors, as PSC errors at the
line: a dtype the loop refuses, an out-of-range axis, several axes for a ufunc that is not
reorderable (``subtract``), an empty reduction of a ufunc with no identity, ``where``
without an identity or ``initial``.

The reduction itself: add, multiply, maximum, minimum and the logical/bitwise and/or use
XLA's reduce (through the ``np.sum``/``np.prod``/``np.max``/... rules, so float16 sums
accumulate in float32 as NumPy's do); the other associative ufuncs (``logical_xor``,
``bitwise_xor``, ``fmax``, ``fmin``) combine neighbours pairwise (log-depth, in order);
the others (``subtract``, ``divide``, ``power``, ``arctan2``, ...) fold left to right as
NumPy does, one element-wise op per element of the reduced axis, which is offered up to
`MAX_UNROLLED` elements.  ``accumulate`` uses XLA's scan for add, multiply, maximum and
minimum and the same folds otherwise.  ``reduceat`` takes static indices.

``ufunc.at(a, indices, b)`` updates ``a`` in place and returns None; a traced array cannot
be written into and the front end does not rebind ``a`` for it, so it is a
`PSCUnsupportedCallError` naming the functional form (never a silent no-op).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCIndexError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule
from ._core import _strong_operand, cast, full_like_value, lift, normalize_axis, \
    reduction_axes
from .elementwise import UFUNC_RULES
from .reductions import RULES as REDUCTION_RULES

MAX_UNROLLED = 512

_NO_VALUE = np._NoValue

# ufunc -> reduction rule of reductions.py (same dtype rules as the ufunc's reduce)
_XLA_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.maximum: "max",
                   np.minimum: "min", np.logical_and: "all", np.logical_or: "any"}
_XLA_SCANS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min"}
_ASSOCIATIVE = {np.logical_xor, np.bitwise_xor, np.bitwise_and, np.bitwise_or, np.fmax,
                np.fmin}

_IDEMPOTENT = {np.maximum, np.minimum, np.fmax, np.fmin}

_ALIASES = {"divide": np.true_divide, "mod": np.remainder, "pow": np.power,
            "atan2": np.arctan2, "bitwise_left_shift": np.left_shift,
            "bitwise_right_shift": np.right_shift}


# --- NumPy's answer on a stand-in ---------------------------------------------------------


def _stand_in(x: Value) -> np.ndarray:
    return np.ones(tuple(min(s, 1) for s in x.shape), x.dtype)


def _ask_numpy(b: Builder, ufunc: np.ufunc, method: str, call) -> np.dtype:
    """The dtype of NumPy's result on the stand-in, or NumPy's error as a PSC error."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(call()).dtype
    except TypeError as err:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__}.{method}: {err}") from None
    except IndexError as err:
        raise b.error(PSCIndexError, f"np.{ufunc.__name__}.{method}: {err}") from None
    except ValueError as err:   # np.exceptions.AxisError included
        raise b.error(PSCValueError, f"np.{ufunc.__name__}.{method}: {err}") from None


def _reject_out(b: Builder, ufunc: np.ufunc, method: str, out) -> None:
    if out is not None:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__}.{method}(..., out=...) writes into "
                      "an array, which PSC functions cannot do", "use the returned value")


def _static_dtype(b: Builder, dtype):
    if has_traced(dtype):
        raise b.error(PSCTypeError, "dtype must be known when the program is built")
    return None if dtype is None else np.dtype(dtype)


# --- folds ----------------------------------------------------------------------------------


def _combine(b: Builder, ufunc: np.ufunc, x: Value, y: Value, dtype) -> Value:
    return cast(b, UFUNC_RULES[ufunc](b, x, y), dtype)


def _take(b: Builder, x: Value, axis: int, start: int, stop: int, step: int = 1) -> Value:
    starts = [0] * x.ndim
    stops = list(x.shape)
    strides = [1] * x.ndim
    starts[axis], stops[axis], strides[axis] = start, stop, step
    return b.slice(x, starts, stops, strides)


def _drop_axis(b: Builder, x: Value, axis: int) -> Value:
    return b.reshape(x, x.shape[:axis] + x.shape[axis + 1:])


def _pairwise_fold(b: Builder, ufunc: np.ufunc, x: Value, axis: int, dtype) -> Value:
    """An associative ufunc over ``axis`` (size >= 1): neighbours combined, in order."""
    while x.shape[axis] > 1:
        n = x.shape[axis]
        pairs = _combine(b, ufunc, _take(b, x, axis, 0, n - 1, 2), _take(b, x, axis, 1, n, 2),
                         dtype)
        x = b.concatenate([pairs, _take(b, x, axis, n - 1, n)], axis) if n % 2 else pairs
    return _drop_axis(b, x, axis)


def _prefix_scan(b: Builder, ufunc: np.ufunc, x: Value, axis: int, dtype) -> Value:
    """Every prefix of an associative ufunc over ``axis``, in ``ceil(log2 n)`` steps
    (Hillis–Steele): step k combines each element with the one ``2**k`` before it, the
    earlier one on the left, as NumPy's left-to-right loop combines them."""
    n, shift = x.shape[axis], 1
    while shift < n:
        later = _combine(b, ufunc, _take(b, x, axis, 0, n - shift), _take(b, x, axis, shift, n),
                         dtype)
        x = b.concatenate([_take(b, x, axis, 0, shift), later], axis)
        shift *= 2
    return x


def _is_associative(ufunc: np.ufunc, dtype) -> bool:
    """Exactly associative for ``dtype``: rounding makes float sums and products not."""
    if ufunc in _ASSOCIATIVE or ufunc in _IDEMPOTENT:
        return True
    return ufunc in (np.add, np.multiply) and (dtypes.is_bool(dtype) or
                                               dtype.kind in "iu")


def _check_unrollable(b: Builder, ufunc: np.ufunc, method: str, n: int) -> None:
    if n > MAX_UNROLLED:
        raise b.error(PSCUnsupportedCallError, f"np.{ufunc.__name__}.{method} over an axis of "
                      f"{n} elements is not supported: {ufunc.__name__} is not associative, "
                      f"so it is folded one element at a time (at most {MAX_UNROLLED})",
                      "write the loop with a for loop over the axis, or rephrase it with an "
                      "associative ufunc (a - b - c == a - (b + c))")


def _left_fold(b: Builder, ufunc: np.ufunc, x: Value, axis: int, dtype, initial=None,
               prefixes: bool = False):
    """``ufunc(...ufunc(ufunc(initial, x0), x1)..., xn)`` over ``axis``, as NumPy loops;
    with ``prefixes`` every partial result, stacked along ``axis``."""
    n = x.shape[axis]
    _check_unrollable(b, ufunc, "accumulate" if prefixes else "reduce", n)
    items = [_take(b, x, axis, i, i + 1) for i in range(n)]
    acc = items[0] if initial is None else _combine(b, ufunc, initial, items[0], dtype)
    partial = [acc]
    for item in items[1:]:
        acc = _combine(b, ufunc, acc, item, dtype)
        partial.append(acc)
    return b.concatenate(partial, axis) if prefixes else _drop_axis(b, acc, axis)


# --- reduce -----------------------------------------------------------------------------------


def _masked(b: Builder, ufunc: np.ufunc, x: Value, where, initial) -> Value:
    """``where=``: masked-out elements replaced by the identity (or ``initial``)."""
    if ufunc.identity is not None:
        fill = full_like_value(b, ufunc.identity, x)
    elif ufunc in _IDEMPOTENT:   # max(initial, initial, x...) is max(initial, x...)
        fill = b.broadcast_in_dim(initial, x.shape, ())
    else:
        raise b.error(PSCUnsupportedCallError, f"np.{ufunc.__name__}.reduce(..., where=...) "
                      "is not supported: the ufunc has no identity to put in place of the "
                      "masked-out elements", "select the elements first")
    mask = cast(b, lift(b, where), dtypes.bool_)
    mask = b.broadcast_in_dim(mask, x.shape, range(x.ndim - mask.ndim, x.ndim))
    return b.select(mask, x, fill)


def _reduce(ufunc: np.ufunc):
    def rule(b, a, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
             where=True):
        _reject_out(b, ufunc, "reduce", out)
        x = _strong_operand(b, a)
        dtype = _static_dtype(b, dtype)
        static_where = True if has_traced(where) else where
        probe_where = static_where if isinstance(static_where, bool) else True
        if where is not True and initial is _NO_VALUE and ufunc.identity is None:
            raise b.error(PSCValueError, f"reduction operation '{ufunc.__name__}' does not "
                          "have an identity, so to use a where mask one has to specify "
                          "'initial'")
        out_dtype = _ask_numpy(b, ufunc, "reduce", lambda: ufunc.reduce(
            _stand_in(x), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
            where=probe_where))
        axes = reduction_axes(b, axis, x.ndim)
        if initial is not _NO_VALUE:   # NumPy casts it to the result dtype (unsafely)
            initial = cast(b, _strong_operand(b, initial), out_dtype)
        x = cast(b, x, out_dtype) if ufunc not in _XLA_REDUCTIONS else x
        if where is not True:
            x = _masked(b, ufunc, cast(b, x, out_dtype), where, initial)
        result = _reduced(b, ufunc, x, axes, out_dtype, dtype, initial)
        if keepdims:
            result = b.reshape(result, [1 if d in axes else s for d, s in enumerate(x.shape)])
        return cast(b, result, out_dtype)
    rule.__name__ = f"{ufunc.__name__}_reduce"
    return rule


def _reduced(b: Builder, ufunc: np.ufunc, x: Value, axes, out_dtype, dtype, initial):
    if ufunc in _XLA_REDUCTIONS:
        kwargs = {} if _XLA_REDUCTIONS[ufunc] in ("all", "any", "max", "min") else \
            {"dtype": dtype}
        if initial is not _NO_VALUE and _XLA_REDUCTIONS[ufunc] not in ("all", "any"):
            kwargs["initial"] = initial
        result = REDUCTION_RULES[_XLA_REDUCTIONS[ufunc]](b, x, tuple(axes), **kwargs)
        if initial is not _NO_VALUE and _XLA_REDUCTIONS[ufunc] in ("all", "any"):
            result = _combine(b, ufunc, result, initial, out_dtype)
        return result
    if not axes:
        return x if initial is _NO_VALUE else _combine(b, ufunc, initial, x, out_dtype)
    # the reduced axes last, merged into one (only reorderable ufuncs take several)
    kept = [d for d in range(x.ndim) if d not in axes]
    x = b.transpose(x, kept + list(axes))
    size = int(np.prod([x.shape[d] for d in range(len(kept), x.ndim)], dtype=np.int64))
    x = b.reshape(x, x.shape[:len(kept)] + (size,))
    axis = len(kept)
    initial = None if initial is _NO_VALUE else initial
    if size == 0:   # NumPy allowed it: there is an identity or an initial value
        fill = lift(b, ufunc.identity, out_dtype) if initial is None else initial
        return b.broadcast_in_dim(fill, x.shape[:axis], ())
    if ufunc in _ASSOCIATIVE:
        result = _pairwise_fold(b, ufunc, x, axis, out_dtype)
        return result if initial is None else _combine(b, ufunc, initial, result, out_dtype)
    return _left_fold(b, ufunc, x, axis, out_dtype, initial)


# --- accumulate, reduceat, at ---------------------------------------------------------------


def _accumulate(ufunc: np.ufunc):
    def rule(b, a, axis=0, dtype=None, out=None):
        _reject_out(b, ufunc, "accumulate", out)
        x = _strong_operand(b, a)
        dtype = _static_dtype(b, dtype)
        if x.ndim == 0:
            raise b.error(PSCValueError, "cannot accumulate on a scalar")
        out_dtype = _ask_numpy(b, ufunc, "accumulate", lambda: ufunc.accumulate(
            _stand_in(x), axis=axis, dtype=dtype))
        axis = normalize_axis(b, axis, x.ndim)
        x = cast(b, x, out_dtype)
        if x.shape[axis] == 0:
            return x
        kind = _XLA_SCANS.get(ufunc)
        if kind is not None and not dtypes.is_bool(out_dtype) and not (
                dtypes.is_floating(out_dtype) and out_dtype.itemsize == 2) and not (
                kind in ("max", "min") and dtypes.is_inexact(out_dtype)):
            return b.cumulative(x, kind, axis)
        if _is_associative(ufunc, out_dtype):
            return _prefix_scan(b, ufunc, x, axis, out_dtype)
        return _left_fold(b, ufunc, x, axis, out_dtype, prefixes=True)
    rule.__name__ = f"{ufunc.__name__}_accumulate"
    return rule


def _reduceat(ufunc: np.ufunc):
    def rule(b, a, indices, axis=0, dtype=None, out=None):
        _reject_out(b, ufunc, "reduceat", out)
        if has_traced(indices):
            raise b.error(PSCUnsupportedCallError, f"np.{ufunc.__name__}.reduceat with traced "
                          "indices is not supported: they must be known when the program "
                          "is built", "pass them as a static argument (static_argnames)")
        x = _strong_operand(b, a)
        dtype = _static_dtype(b, dtype)
        idx = np.asarray(indices)
        out_dtype = _ask_numpy(b, ufunc, "reduceat", lambda: ufunc.reduceat(
            np.ones(x.shape, x.dtype) if x.size <= 4096 else _stand_in(x), idx, axis=axis,
            dtype=dtype))
        if idx.ndim != 1:
            raise b.error(PSCValueError, "index must be 1-d")
        axis = normalize_axis(b, axis, x.ndim)
        n = x.shape[axis]
        for i in idx.tolist():
            if not 0 <= i < n:
                raise b.error(PSCIndexError, f"index {i} out-of-bounds in "
                              f"{ufunc.__name__}.reduceat [0, {n})")
        x = cast(b, x, out_dtype)
        reduce_rule = _reduce(ufunc)
        pieces = []
        for k, start in enumerate(idx.tolist()):
            stop = idx[k + 1] if k + 1 < len(idx) else n
            if stop > start:
                pieces.append(reduce_rule(b, _take(b, x, axis, start, int(stop)), axis,
                                          out_dtype, keepdims=True))
            else:
                pieces.append(_take(b, x, axis, start, start + 1))
        if not pieces:
            return _take(b, x, axis, 0, 0)
        return cast(b, b.concatenate(pieces, axis), out_dtype)
    rule.__name__ = f"{ufunc.__name__}_reduceat"
    return rule


def _at(ufunc: np.ufunc):
    def rule(b, a, indices, *args, **kwargs):
        raise b.error(PSCUnsupportedCallError, f"np.{ufunc.__name__}.at(a, indices, ...) "
                      "updates a in place and returns None; a traced array cannot be "
                      "updated in place", _at_hint(ufunc))
    rule.__name__ = f"{ufunc.__name__}_at"
    return rule


def _at_hint(ufunc: np.ufunc) -> str:
    if ufunc is np.add:
        return ("rebind a instead: a = a + np.bincount(indices, weights=b, "
                "minlength=len(a)) for 1-d a (repeated indices add up, as in np.add.at); "
                "a[indices] = a[indices] + b when indices do not repeat")
    return (f"rebind a instead: a[indices] = np.{ufunc.__name__}(a[indices], b) (equal to "
            f"np.{ufunc.__name__}.at when indices do not repeat)")


def _not_binary(ufunc: np.ufunc, method: str):
    def rule(b, *args, **kwargs):
        raise b.error(PSCValueError, f"{method} only supported for binary functions",
                      f"np.{ufunc.__name__} takes {ufunc.nin} argument(s)")
    rule.__name__ = f"{ufunc.__name__}_{method}"
    return rule


def _register(name: str, ufunc: np.ufunc) -> None:
    if ufunc.nin == 2 and ufunc.nout == 1:
        methods = {"reduce": _reduce(ufunc), "accumulate": _accumulate(ufunc),
                   "reduceat": _reduceat(ufunc), "at": _at(ufunc)}
    else:
        methods = {m: _not_binary(ufunc, m) for m in ("reduce", "accumulate", "reduceat")}
        methods["at"] = _at(ufunc)
    for method, rule in methods.items():
        register_translation_rule(f"numpy.{name}.{method}", rule)


for _ufunc in UFUNC_RULES:
    _register(_ufunc.__name__, _ufunc)
for _alias, _ufunc in _ALIASES.items():
    if hasattr(np, _alias):
        _register(_alias, _ufunc)

COVERAGE_NOTES = {
    "numpy.ufunc.reduce": "partial: non-associative ufuncs fold at most MAX_UNROLLED "
                          "elements; where= needs an identity (or max/min with initial)",
    "numpy.ufunc.reduceat": "partial: static indices only",
}
UNSUPPORTED = {"numpy.ufunc.at": "updates its operand in place and returns None; the "
                                 "front end does not rebind the operand"}
