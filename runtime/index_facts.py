"""What is known, while a program is built, of a traced integer scalar: an affine form
``root * scale + offset`` over another traced value, and the bounds of that root.

A staged ``for i in range(n)`` gives its body a traced index ``i``; ``x[i:i + K]`` then has
traced bounds, but its *length* ``(i + K) - i = K`` is static.  NumPy indexing
(`runtime.numpy_rules.indexing`) reads the length from these facts to make the slice one
``dynamic_slice`` instead of refusing it (which made the loop unroll).  The facts are
recorded where the values are made, at run time of the build, so they hold however the
source spells the bounds (``lo = i - 1; x[lo:lo + 3]``, ``x[2 * i:2 * i + 2]``, a ``K``
that is a static argument or a shape): a transpile-time pattern would see only the
spelling, and could not tell a static ``K`` from a traced one.

* ``v = u + c``, ``u - c``, ``c + u``, ``u * c``, ``c * u`` (``u`` a traced integer
  scalar, ``c`` a static Python or NumPy integer, the result of ``u``'s dtype) gives ``v``
  the form of ``u`` shifted or scaled (`note_arithmetic`, called by `runtime.array_api`'s
  operators), and so does ``-u`` (`note_negated`).  The form is exact over the integers only while nothing wraps; the indexing
  rule accepts it only where its guard or its bounds rule wrapping out.
* A staged loop over a static ``range`` marks its index with the range's bounds
  (`note_bounds`); a value captured into a nested region keeps the bounds of the value it
  stands for (`note_captured`), as a new root.

Facts live on `Value.facts` (None: nothing known, the value is its own root).
"""
from __future__ import annotations

import dataclasses
import operator

import numpy as np

from .ir import Value


@dataclasses.dataclass(frozen=True)
class Affine:
    """``value == root * scale + offset``; ``low``/``high``: inclusive bounds of ``root``
    (None where unknown)."""

    root: Value
    scale: int = 1
    offset: int = 0
    low: int | None = None
    high: int | None = None

    def interval(self) -> tuple[int, int] | None:
        """Inclusive bounds of the value itself, when the root's are known and nothing
        computing it can have wrapped (the bounds lie in its dtype's range: arithmetic
        modulo 2**bits is then exact)."""
        if self.low is None or self.high is None:
            return None
        ends = (self.low * self.scale + self.offset, self.high * self.scale + self.offset)
        info = np.iinfo(self.root.dtype)
        if min(ends) < info.min or max(ends) > info.max:
            return None
        return min(ends), max(ends)


def affine(v: Value) -> Affine:
    """``v``'s affine form (``v`` itself, scale 1, offset 0, when nothing is known)."""
    return v.facts if v.facts is not None else Affine(v)


def _is_index_scalar(v) -> bool:
    return isinstance(v, Value) and v.ndim == 0 and v.dtype.kind in "iu"


def _static_integer(c) -> int | None:
    if isinstance(c, (bool, np.bool_)):
        return None
    if isinstance(c, (int, np.integer)):
        return int(c)
    return None


def note_arithmetic(op, left, right, result) -> None:
    """Record the form of ``result = op(left, right)`` for ``+``, ``-`` and ``*`` of a
    traced integer scalar and a static integer (nothing for anything else)."""
    if not _is_index_scalar(result) or op not in (operator.add, operator.sub, operator.mul):
        return
    if _is_index_scalar(left) and left.dtype == result.dtype:
        traced, c, traced_first = left, _static_integer(right), True
    elif _is_index_scalar(right) and right.dtype == result.dtype:
        traced, c, traced_first = right, _static_integer(left), False
    else:
        return
    if c is None:
        return
    form = affine(traced)
    if op is operator.add:
        new = dataclasses.replace(form, offset=form.offset + c)
    elif op is operator.sub and traced_first:
        new = dataclasses.replace(form, offset=form.offset - c)
    elif op is operator.sub:   # c - u
        new = dataclasses.replace(form, scale=-form.scale, offset=c - form.offset)
    else:
        new = dataclasses.replace(form, scale=form.scale * c, offset=form.offset * c)
    result.facts = new


def note_negated(operand, result) -> None:
    """Record ``result = -operand`` for a traced integer scalar."""
    if _is_index_scalar(result) and _is_index_scalar(operand) and \
            operand.dtype == result.dtype:
        form = affine(operand)
        result.facts = dataclasses.replace(form, scale=-form.scale, offset=-form.offset)


def note_bounds(v: Value, low: int, high: int) -> None:
    """``v`` (a fresh traced integer scalar: a loop index) lies in ``[low, high]``."""
    v.facts = Affine(v, 1, 0, low, high)


def note_captured(outer: Value, inner: Value) -> None:
    """``inner`` stands for ``outer`` in a nested region: it is its own root, with the
    bounds ``outer`` has."""
    if outer.facts is None or not _is_index_scalar(inner):
        return
    bounds = outer.facts.interval()
    if bounds is not None:
        note_bounds(inner, *bounds)


__all__ = ["Affine", "affine", "note_arithmetic", "note_bounds", "note_captured",
           "note_negated"]
