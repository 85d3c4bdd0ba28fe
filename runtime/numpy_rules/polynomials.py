"""NumPy's legacy polynomial functions on traced coefficients: ``polyval``, ``polyder``,
``polyint``, ``polyadd``, ``polysub`` and ``vander``.

Each rule runs NumPy's own algorithm (``numpy/lib/_polynomial_impl.py``) step by step on
traced values with the lengths static, so the dtypes follow NumPy's promotion exactly
(``polyval`` is Horner's rule from ``zeros_like(x)``, each coefficient a strong NumPy
scalar; ``polyder`` multiplies by ``arange(n, 0, -1)``; ``polyint`` divides by
``arange(len(p), 0, -1)`` and appends the integration constant; ``polyadd``/``polysub``
pad the shorter operand with zeros of its dtype and never trim).

Not supported (see `UNSUPPORTED`): the functions whose result *length* or *dtype* depends
on the data.  ``polymul`` and ``polydiv`` trim leading zero coefficients (``poly1d``,
``allclose(r[0], 0)``); ``poly`` of complex roots is real only when they pair up into
conjugates.  ``polyfit`` is in `runtime.numpy_rules.fitting`.
"""
from __future__ import annotations

import numpy as np

from ..builder import Builder
from ..errors import PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule, translate_numpy
from ._core import _strong_operand, cast, lift, static_int


def _asarray(b: Builder, x) -> Value:
    return _strong_operand(b, x)


def _atleast_1d(b: Builder, x) -> Value:
    v = _asarray(b, x)
    return b.reshape(v, (1,)) if v.ndim == 0 else v


def _item(b: Builder, p: Value, i: int) -> Value:
    """``p[i]`` of a 1-d (or more) ``p``: a strong value, as NumPy's scalar is."""
    row = b.slice(p, (i,) + (0,) * (p.ndim - 1), (i + 1,) + p.shape[1:])
    return b.reshape(row, p.shape[1:])


def _np(b: Builder, fn, *args):
    return translate_numpy(b, fn, *args)


def polyval(b: Builder, p, x):
    p, x = _asarray(b, p), _asarray(b, x)
    if p.ndim == 0:
        raise b.error(PSCValueError, "polyval: p must be a sequence of coefficients",
                      "NumPy iterates over p, which a 0-d array cannot be")
    y = b.broadcast_in_dim(lift(b, 0, x.dtype), x.shape, ())   # zeros_like(x)
    for i in range(p.shape[0]):
        y = _np(b, np.add, _np(b, np.multiply, y, x), _item(b, p, i))
    return y


def polyder(b: Builder, p, m=1):
    m = static_int(b, m, "np.polyder order m")
    if m < 0:
        raise b.error(PSCValueError, "Order of derivative must be positive (see polyint)")
    p = _asarray(b, p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = _np(b, np.multiply, b.slice(p, (0,) * p.ndim, (max(n, 0),) + p.shape[1:]),
                np.arange(n, 0, -1))
    return p


def polyint(b: Builder, p, m=1, k=None):
    m = static_int(b, m, "np.polyint order m")
    if m < 0:
        raise b.error(PSCValueError, "Order of integral must be positive (see polyder)")
    k = np.zeros(m, float) if k is None else k
    k = _atleast_1d(b, k)
    if k.shape[0] == 1 and m > 1:
        k = _np(b, np.multiply, _item(b, k, 0), np.ones(m, float))
    if k.shape[0] < m:
        raise b.error(PSCValueError, "k must be a scalar or a rank-1 array of length 1 or >m.")
    p = _asarray(b, p)
    for j in range(m):
        scaled = _np(b, np.true_divide, p, np.arange(p.shape[0], 0, -1))
        constant = b.reshape(_item(b, k, j), (1,))
        p = _np(b, np.concatenate, (scaled, constant))
    return p


def _padded_op(ufunc):
    def rule(b: Builder, a1, a2):
        x, y = _atleast_1d(b, a1), _atleast_1d(b, a2)
        diff = y.shape[0] - x.shape[0]
        if diff > 0:
            x = _np(b, np.concatenate, (np.zeros(diff, x.dtype), x))
        elif diff < 0:
            y = _np(b, np.concatenate, (np.zeros(-diff, y.dtype), y))
        return _np(b, ufunc, x, y)
    rule.__name__ = f"poly_{ufunc.__name__}"
    return rule


def vander(b: Builder, x, N=None, increasing=False):
    x = _asarray(b, x)
    if x.ndim != 1:
        raise b.error(PSCValueError, "x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else static_int(b, N, "np.vander N")
    dtype = np.promote_types(x.dtype, int)
    rows = x.shape[0]
    if n <= 0:
        return b.constant(np.empty((rows, max(n, 0)), dtype))
    xs = cast(b, x, dtype)
    ones = b.broadcast_in_dim(lift(b, 1, dtype), (rows, 1), ())
    columns = [ones]
    if n > 1:   # NumPy: multiply.accumulate of copies of x along the row
        repeated = b.broadcast_in_dim(xs, (rows, n - 1), (0,))
        columns.append(translate_numpy(b, "numpy.multiply.accumulate", repeated, 1))
    powers = b.concatenate(columns, 1)
    return powers if increasing else b.reverse(powers, (1,))


def _unsupported(name: str, why: str, hint: str):
    def rule(b: Builder, *args, **kwargs):
        raise b.error(PSCUnsupportedCallError, f"np.{name} on traced arrays is not "
                      f"supported: {why}", hint)
    rule.__name__ = name
    return rule


_TRIMS = "NumPy trims leading zero coefficients, so the result's length depends on the data"
UNSUPPORTED = {
    "numpy.polymul": _TRIMS,
    "numpy.polydiv": _TRIMS + " (the remainder: allclose(r[0], 0))",
    "numpy.poly": "the result is real or complex depending on whether the roots pair up "
                  "into conjugates (and a matrix argument needs eigvals)",
}
_HINTS = {
    "numpy.polymul": "np.convolve(a1, a2) is polymul without the trimming",
    "numpy.polydiv": "divide with a loop of known length (synthetic division)",
    "numpy.poly": "build the coefficients with np.convolve(c, [1, -root]) per root",
}

for _name, _rule in [("numpy.polyval", polyval), ("numpy.polyder", polyder),
                     ("numpy.polyint", polyint), ("numpy.polyadd", _padded_op(np.add)),
                     ("numpy.polysub", _padded_op(np.subtract)), ("numpy.vander", vander)]:
    register_translation_rule(_name, _rule)
for _name, _why in UNSUPPORTED.items():
    register_translation_rule(_name, _unsupported(_name.split(".")[1], _why, _HINTS[_name]))
