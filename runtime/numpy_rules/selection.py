"""Element-wise choice among arrays: ``np.select`` and ``np.choose``.

Both broadcast every operand together and give the dtype NumPy's promotion gives the
choices (Python scalars weak, as NumPy 2 promotes them here).  ``select`` takes the first
true condition, ``default`` where none is; ``choose`` picks ``choices[a]``.

``choose(mode='raise')`` with a traced ``a`` cannot raise when an index is out of range:
as for traced indexing (`indexing`), the pick is clamped into range, and the opt-in
``index`` run-time check (``jit_ps(..., checks=True)``) raises `PSCRuntimeIndexError`.
A static ``a`` is checked while building, as NumPy does.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..checks import guard
from ..errors import PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule
from ._core import broadcast_shapes, broadcast_to, full_like_value, lift, result_dtype
from ._core import rule_table

RULES, _rule = rule_table()


def _rows(b: Builder, x) -> list:
    """A sequence of operands: a list, or the rows of a traced array."""
    if isinstance(x, Value):
        if x.ndim == 0:
            raise b.error(PSCTypeError, "expected a sequence of arrays, got a 0-d array")
        return [b.reshape(b.slice(x, [i] + [0] * (x.ndim - 1), [i + 1] + list(x.shape[1:])),
                          x.shape[1:]) for i in range(x.shape[0])]
    return list(x)


@_rule("numpy.select")
def select(b, condlist, choicelist, default=0):
    conds, choices = _rows(b, condlist), _rows(b, choicelist)
    if len(conds) != len(choices):
        raise b.error(PSCValueError, "list of cases must be same length as list of conditions")
    if not conds:
        raise b.error(PSCValueError, "select with an empty condition list is not possible")
    dtype = result_dtype(b, choices + [default])
    cond_values = [lift(b, c) for c in conds]
    for i, c in enumerate(cond_values):
        if c.dtype != dtypes.bool_:
            raise b.error(PSCTypeError, f"invalid entry {i} in condlist: should be boolean "
                          "ndarray")
    values = [lift(b, c, dtype) for c in choices]
    fallback = lift(b, default, dtype)
    shape = broadcast_shapes(b, *(v.shape for v in cond_values + values + [fallback]))
    result = broadcast_to(b, fallback, shape)
    for cond, value in reversed(list(zip(cond_values, values))):   # the first true wins
        result = b.select(broadcast_to(b, cond, shape), broadcast_to(b, value, shape), result)
    return result


@_rule("numpy.choose", "numpy.ndarray.choose")
def choose(b, a, choices, out=None, mode="raise"):
    if out is not None:
        raise b.error(PSCTypeError, "np.choose(..., out=...) is not supported",
                      "use the returned value")
    if mode not in ("raise", "wrap", "clip"):
        raise b.error(PSCValueError, f"clipmode must be one of 'clip', 'raise', or 'wrap' "
                      f"(got {mode!r})")
    options = _rows(b, choices)
    if not options:
        raise b.error(PSCValueError, "0-length sequence.")
    n = len(options)
    dtype = result_dtype(b, options)
    values = [lift(b, c, dtype) for c in options]
    index = lift(b, a)
    if not (dtypes.is_integer(index.dtype) or dtypes.is_bool(index.dtype)):
        raise b.error(PSCTypeError, f"Cannot cast array data from dtype('{index.dtype}') to "
                      "dtype('int64') according to the rule 'safe'")
    if not isinstance(a, Value) and mode == "raise":
        static = np.asarray(a)
        if static.size and (static.min() < 0 or static.max() >= n):
            raise b.error(PSCValueError, "invalid entry in choice array")
    shape = broadcast_shapes(b, index.shape, *(v.shape for v in values))
    index = broadcast_to(b, b.convert(index, np.int64), shape)
    index = _in_range(b, index, n, mode)
    result = broadcast_to(b, values[0], shape)
    for k in range(1, n):
        result = b.select(b.eq(index, full_like_value(b, k, index)),
                          broadcast_to(b, values[k], shape), result)
    return result


def _in_range(b: Builder, index: Value, n: int, mode: str) -> Value:
    low, high = full_like_value(b, 0, index), full_like_value(b, n - 1, index)
    if mode == "wrap":   # Python's modulo: always in [0, n)
        size = full_like_value(b, n, index)
        rem = b.rem(index, size)
        return b.select(b.lt(rem, low), b.add(rem, size), rem)
    if mode == "raise":
        guard(b, "index", b.or_(b.lt(index, low), b.gt(index, high)),
              f"np.choose: an index is out of range for {n} choices")
    return b.max(b.min(index, high), low)


for _name, _rule_fn in RULES.items():
    register_translation_rule(_name, _rule_fn)
