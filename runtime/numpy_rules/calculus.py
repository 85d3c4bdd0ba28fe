"""``gradient`` and ``geomspace`` on traced arrays, NumPy 2's algorithms step for step (so
dtypes, promotions and roundings are NumPy's).

* ``gradient(f, *varargs, axis=None, edge_order=1)``: second-order central differences
  inside, first- or second-order one-sided differences at the edges; spacing given as
  nothing (unit), one scalar, one scalar per axis or 1-d coordinates per axis (mixed),
  static or traced.  NumPy uses its uniform formulas when coordinates turn out evenly
  spaced; for traced coordinates that is data-dependent, so both forms are computed and
  selected.  Integer ``f`` gives float64; one axis gives an array, several a tuple.
* ``geomspace(start, stop, num, endpoint, dtype, axis)``: ``start`` rotated to the
  positive real axis by its sign, ``logspace`` of the log10 end points, the end points set
  to ``start``/``stop`` exactly, the rotation undone.  NumPy raises ValueError when a start
  or stop is zero; with traced end points that is data-dependent, so the whole result is
  NaN instead (the documented deviation).
"""
from __future__ import annotations

import numpy as np

from ..builder import Builder
from ..errors import PSCIndexError, PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule
from ._values_namespace import NP
from ._core import (_strong_operand, is_traced_sequence, lift, normalize_axis, result_dtype,
                    static_int)

COVERAGE_NOTES = {
    "numpy.geomspace": "partial: a zero start or stop gives NaN (NumPy: ValueError); values "
                       "agree with NumPy's to a few ulps (XLA's log10/pow are not libm's), so "
                       "an integer dtype, which truncates, can differ by one",
}


def _ndim(x) -> int:
    return x.ndim if isinstance(x, Value) else np.ndim(x)


def _along(ndim: int, axis: int, index) -> tuple:
    where = [slice(None)] * ndim
    where[axis] = index
    return tuple(where)


def _coordinate_steps(b: Builder, distances, length: int):
    """NumPy's per-axis spacing from 1-d coordinates: a scalar step when evenly spaced,
    else the differences; for traced coordinates (uniform, differences, is_uniform)."""
    mirror = _mirror()
    if not isinstance(distances, Value):
        distances = np.asanyarray(distances)
    if distances.ndim != 1:
        raise b.error(PSCValueError, "distances must be either scalars or 1d")
    if len(distances) != length:
        raise b.error(PSCValueError, "when 1d, distances must match the length of the "
                      "corresponding dimension")
    if np.issubdtype(distances.dtype, np.integer):
        distances = distances.astype(np.float64)
    diffx = mirror.diff(distances)
    if diffx.shape[0] == 0:
        raise b.error(PSCIndexError, "index 0 is out of bounds for axis 0 with size 0")
    if not isinstance(diffx, Value):
        return diffx[0] if (diffx == diffx[0]).all() else diffx
    return (diffx[0], diffx, mirror.all(diffx == diffx[0]))


def _mirror():
    """NumPy's namespace on traced values (the mirror's behaviour, without importing it)."""
    return NP


def _interior(f, axis: int, ax_dx, uniform: bool):
    n = f.ndim
    s2, s3, s4 = (_along(n, axis, slice(None, -2)), _along(n, axis, slice(1, -1)),
                  _along(n, axis, slice(2, None)))
    if uniform:
        return (f[s4] - f[s2]) / (2. * ax_dx)
    dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
    a = -(dx2) / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    shape = [1] * n
    shape[axis] = -1
    a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
    return a * f[s2] + b * f[s3] + c * f[s4]


def _edges(f, axis: int, ax_dx, uniform: bool, edge_order: int):
    n = f.ndim
    at = [_along(n, axis, slice(i, i + 1 if i != -1 else None)) for i in (0, 1, 2)]
    back = [_along(n, axis, slice(i, i + 1 if i != -1 else None)) for i in (-3, -2, -1)]
    if edge_order == 1:
        dx_0 = ax_dx if uniform else ax_dx[0]
        dx_n = ax_dx if uniform else ax_dx[-1]
        return (f[at[1]] - f[at[0]]) / dx_0, (f[back[2]] - f[back[1]]) / dx_n
    if uniform:
        a, b, c = -1.5 / ax_dx, 2. / ax_dx, -0.5 / ax_dx
    else:
        dx1, dx2 = ax_dx[0], ax_dx[1]
        a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = - dx1 / (dx2 * (dx1 + dx2))
    first = a * f[at[0]] + b * f[at[1]] + c * f[at[2]]
    if uniform:
        a, b, c = 0.5 / ax_dx, -2. / ax_dx, 1.5 / ax_dx
    else:
        dx1, dx2 = ax_dx[-2], ax_dx[-1]
        a = (dx2) / (dx1 * (dx1 + dx2))
        b = - (dx2 + dx1) / (dx1 * dx2)
        c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
    return first, a * f[back[0]] + b * f[back[1]] + c * f[back[2]]


def _axis_gradient(f, axis: int, ax_dx, edge_order: int, otype):
    """One axis's ``out`` as NumPy fills it (each part cast to ``otype`` on assignment)."""
    mirror = _mirror()
    uniform = _ndim(ax_dx) == 0
    first, last = _edges(f, axis, ax_dx, uniform, edge_order)
    parts = [first, _interior(f, axis, ax_dx, uniform), last]
    parts = [mirror.asarray(p).astype(otype) for p in parts]
    parts = [p for p in parts if p.shape[axis]] or parts[:1]
    return mirror.concatenate(parts, axis=axis)


def gradient(b: Builder, f, *varargs, axis=None, edge_order=1):
    mirror = _mirror()
    f = _strong_operand(b, f)
    n = f.ndim
    if axis is None:
        axes = tuple(range(n))
    else:
        axes = tuple(normalize_axis(b, a, n) for a in
                     (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if len(set(axes)) != len(axes):
            raise b.error(PSCValueError, "repeated axis")
    edge_order = static_int(b, edge_order, "np.gradient's edge_order")
    varargs = [lift(b, d) if is_traced_sequence(d) else d for d in varargs]
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and _ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        dx = [d if _ndim(d) == 0 else _coordinate_steps(b, d, f.shape[ax])
              for d, ax in zip(varargs, axes)]
    else:
        raise b.error(PSCTypeError, "invalid number of arguments")
    if edge_order > 2:
        raise b.error(PSCValueError, "'edge_order' greater than 2 not supported")
    otype = f.dtype
    if otype.kind in "mM":
        raise b.error(PSCTypeError, "np.gradient of datetime/timedelta data is not supported")
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = f.astype(np.float64)
        otype = np.dtype(np.float64)
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise b.error(PSCValueError, "Shape of array too small to calculate a numerical "
                          "gradient, at least (edge_order + 1) elements are required.")
        if edge_order < 1 and f.shape[ax] < 3:   # NumPy's second-order edges index 2
            raise b.error(PSCIndexError, f"index {f.shape[ax]} is out of bounds for axis "
                          f"{ax} with size {f.shape[ax]}")
        if isinstance(ax_dx, tuple):   # traced coordinates: NumPy's uniform test, staged
            step, steps, is_uniform = ax_dx
            out = mirror.where(is_uniform, _axis_gradient(f, ax, step, edge_order, otype),
                               _axis_gradient(f, ax, steps, edge_order, otype))
        else:
            out = _axis_gradient(f, ax, ax_dx, edge_order, otype)
        outvals.append(out)
    if len(axes) == 1:
        return outvals[0]
    return tuple(outvals)


# --- geomspace ---------------------------------------------------------------------------


def _linspace(start, stop, num: int, endpoint: bool, dt):
    """NumPy's ``linspace`` on axis 0 (the denormal-step branch selected, not branched)."""
    mirror = _mirror()
    div = (num - 1) if endpoint else num
    delta = stop - start
    y = np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * _ndim(delta))
    if div > 0:
        step = delta / div
        y = mirror.where(mirror.any(step == 0), y / div * delta, y * step)
    else:
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y = _with_row(y, -1, stop)
    return y


def _with_row(y, index: int, value):
    """``y`` with ``y[index] = value`` (broadcast and cast as NumPy's assignment)."""
    mirror = _mirror()
    row = mirror.broadcast_to(mirror.asarray(value).astype(y.dtype), (1,) + y.shape[1:])
    rest = y[1:] if index == 0 else y[:-1]
    return mirror.concatenate([row, rest] if index == 0 else [rest, row], axis=0)


def geomspace(b: Builder, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    mirror = _mirror()
    num = static_int(b, num, "num")
    if num < 0:
        raise b.error(PSCValueError, f"Number of samples, {num}, must be non-negative.")
    if not isinstance(endpoint, (bool, np.bool_)) or not isinstance(axis, int):
        raise b.error(PSCTypeError, "np.geomspace: endpoint and axis must be static")
    start, stop = _strong_operand(b, start), _strong_operand(b, stop)
    dt = result_dtype(b, [start, stop, float(num), np.zeros((), dtype)])
    dtype = dt if dtype is None else np.dtype(dtype)
    start, stop = start.astype(dt), stop.astype(dt)
    has_zero = mirror.any(start == 0) | mirror.any(stop == 0)
    out_sign = mirror.sign(start)
    start = start / out_sign
    stop = stop / out_sign
    y = _linspace(mirror.log10(start), mirror.log10(stop), num, bool(endpoint), dt)
    result = mirror.power(10.0, y).astype(dt)
    if num > 0:
        result = _with_row(result, 0, start)
        if num > 1 and endpoint:
            result = _with_row(result, -1, stop)
    result = (result * out_sign).astype(dt)
    result = mirror.where(has_zero, np.array(np.nan, dt), result)   # NumPy: ValueError
    if axis != 0:
        result = mirror.moveaxis(result, 0, normalize_axis(b, axis, result.ndim))
    return result.astype(dtype)


register_translation_rule("numpy.gradient", gradient)
register_translation_rule("numpy.geomspace", geomspace)
