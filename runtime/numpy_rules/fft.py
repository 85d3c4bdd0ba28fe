"""``numpy.fft`` on the ``fft`` primitive (StableHLO's FFT: `runtime.primitives.fft`).

NumPy 2's rules kept: real and complex single precision (float16, float32, complex64)
compute and give complex64/float32, everything else (float64, complex128, integers, bool)
complex128/float64; longdouble is refused.  ``n`` crops or zero-pads the transformed axis
first (``n < 1`` is NumPy's ValueError); ``norm`` is None/"backward" (the inverse scales
by ``1/n``), "ortho" (both by ``1/sqrt(n)``) or "forward" (the forward one by ``1/n``).
The n-dimensional transforms (``fftn``, ``rfftn``, ``irfftn`` and the 2-d ones) are one
1-d transform per axis in NumPy's order (``rfftn``: the real one on the last axis first;
``irfftn``: the real one last), so repeated axes transform twice, as in NumPy; ``s`` with
``axes=None`` names the last ``len(s)`` axes, and ``s[i]`` of None or -1 is the default
(NumPy 2 deprecates both and warns).  ``hfft``/``ihfft`` are ``irfft``/``rfft`` of the
conjugate with the opposite norm.  ``fftfreq``/``rfftfreq`` take a static ``n`` and a
traced spacing ``d`` (a scalar) and give float64; ``fftshift``/``ifftshift`` are rolls.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCIndexError, PSCShapeError, PSCTypeError, PSCValueError
from ..ir import Value
from ..primitives.fft import fft as _fft_op
from ..primitives.support import conj
from ..translation import register_translation_rule
from ._core import lift, normalize_axis, static_int
from .shapes import roll

_NORMS = (None, "backward", "ortho", "forward")
_SINGLE = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64))


def _real_compute_dtype(b: Builder, name: str, x: Value) -> np.dtype:
    """The real dtype NumPy's pocketfft computes ``x`` in (float32 or float64)."""
    if x.dtype in _SINGLE or x.dtype == dtypes.bfloat16:
        return np.dtype(np.float32)
    if x.dtype.kind in "fc" and x.dtype.itemsize > (8 if x.dtype.kind == "f" else 16):
        raise b.error(PSCTypeError, f"np.fft.{name}: {x.dtype} is not supported",
                      "convert to float64 or complex128 first")
    return np.dtype(np.float64)


def _complex_of(real: np.dtype) -> np.dtype:
    return np.dtype(np.complex64 if real == np.float32 else np.complex128)


def _as_complex(b: Builder, name: str, a) -> Value:
    x = lift(b, a)
    return b.convert(x, _complex_of(_real_compute_dtype(b, name, x)))


def _as_real(b: Builder, name: str, a) -> Value:
    x = lift(b, a)
    if dtypes.is_complex(x.dtype):   # NumPy 2's rfft refuses complex input
        raise b.error(PSCTypeError, f"np.fft.{name} needs a real array, got {x.dtype}",
                      "take np.real(...) first, or use np.fft.fft")
    return b.convert(x, _real_compute_dtype(b, name, x))


def _check_norm(b: Builder, norm) -> None:
    if not (norm is None or isinstance(norm, str)) or norm not in _NORMS:
        raise b.error(PSCValueError, f'Invalid norm value {norm}; should be "backward",'
                      '"ortho" or "forward".')


def _points(b: Builder, n, what: str = "n") -> int:
    n = static_int(b, n, what)
    if n < 1:
        raise b.error(PSCValueError, f"Invalid number of FFT data points ({n}) specified.")
    return n


def _axis(b: Builder, axis, ndim: int) -> int:
    try:
        return normalize_axis(b, axis, ndim)
    except PSCValueError as error:   # NumPy indexes the shape: an IndexError
        raise b.error(PSCIndexError, str(error.message)) from None


def _resize(b: Builder, x: Value, axis: int, n: int) -> Value:
    """``x`` cropped or zero-padded to ``n`` along ``axis`` (NumPy's ``n`` argument)."""
    size = x.shape[axis]
    if size == n:
        return x
    if size > n:
        limits = list(x.shape)
        limits[axis] = n
        return b.slice(x, [0] * x.ndim, limits)
    high = [0] * x.ndim
    high[axis] = n - size
    return b.pad(x, b.constant(np.zeros((), x.dtype)), [0] * x.ndim, high)


def _along(b: Builder, x: Value, axis: int, transform) -> Value:
    """``transform`` (acting on the last axis) applied along ``axis``."""
    last = x.ndim - 1
    if axis == last:
        return transform(x)
    order = list(range(x.ndim))
    order[axis], order[last] = last, axis
    return b.transpose(transform(b.transpose(x, order)), order)


def _scaled(b: Builder, x: Value, factor: float) -> Value:
    if factor == 1:
        return x
    return b.mul(x, b.broadcast_in_dim(b.constant(np.asarray(factor, x.dtype)), x.shape, ()))


def _norm_factor(norm, n: int, forward: bool) -> float:
    """What the result is multiplied by, given that XLA's inverse divides by ``n``."""
    if norm == "ortho":
        return 1 / math.sqrt(n) if forward else math.sqrt(n)
    if norm == "forward":
        return 1 / n if forward else n
    return 1.0


def _zeros(b: Builder, shape, dtype) -> Value:
    return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), tuple(shape), ())


def _c2c(b: Builder, x: Value, n: int, axis: int, norm, forward: bool) -> Value:
    x = _resize(b, x, axis, n)
    if x.size == 0:
        return x
    kind = "FFT" if forward else "IFFT"
    y = _along(b, x, axis, lambda v: _fft_op(b, v, kind, (n,)))
    return _scaled(b, y, _norm_factor(norm, n, forward))


def _r2c(b: Builder, x: Value, n: int, axis: int, norm) -> Value:
    x = _resize(b, x, axis, n)
    if x.size == 0:
        shape = list(x.shape)
        shape[axis] = n // 2 + 1
        return _zeros(b, shape, _complex_of(x.dtype))
    y = _along(b, x, axis, lambda v: _fft_op(b, v, "RFFT", (n,)))
    return _scaled(b, y, _norm_factor(norm, n, True))


def _c2r(b: Builder, x: Value, n: int, axis: int, norm) -> Value:
    x = _resize(b, x, axis, n // 2 + 1)
    if x.size == 0:
        shape = list(x.shape)
        shape[axis] = n
        return _zeros(b, shape, dtypes.real_dtype(x.dtype))
    y = _along(b, x, axis, lambda v: _fft_op(b, v, "IRFFT", (n,)))
    return _scaled(b, y, _norm_factor(norm, n, False))


def _unsupported_out(b: Builder, name: str, out) -> None:
    if out is not None:
        raise b.error(PSCTypeError, f"np.fft.{name}(..., out=...) writes into an array, "
                      "which PSC functions cannot do", "use the returned value")


# --- 1-d transforms ---------------------------------------------------------------------------


def _one_d(name: str, kind: str):
    def rule(b: Builder, a, n=None, axis=-1, norm=None, out=None):
        _unsupported_out(b, name, out)
        _check_norm(b, norm)
        x = _as_real(b, name, a) if kind == "r2c" else _as_complex(b, name, a)
        ax = _axis(b, axis, x.ndim)
        if kind == "c2r":
            n = 2 * (x.shape[ax] - 1) if n is None else n
        n = _points(b, x.shape[ax] if n is None else n)
        if kind == "r2c":
            return _r2c(b, x, n, ax, norm)
        if kind == "c2r":
            return _c2r(b, x, n, ax, norm)
        return _c2c(b, x, n, ax, norm, forward=kind == "forward")
    rule.__name__ = name
    rule.__doc__ = f"``np.fft.{name}``."
    return rule


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(b: Builder, a, n=None, axis=-1, norm=None, out=None) -> Value:
    """``np.fft.hfft``: the real spectrum of a Hermitian signal (``irfft`` of the
    conjugate, the norm's direction swapped)."""
    _check_norm(b, norm)
    x = _as_complex(b, "hfft", a)
    return _one_d("hfft", "c2r")(b, conj(b, x), n, axis, _SWAPPED[norm], out)


def ihfft(b: Builder, a, n=None, axis=-1, norm=None, out=None) -> Value:
    """``np.fft.ihfft``: the conjugate of ``rfft`` with the norm's direction swapped."""
    _check_norm(b, norm)
    return conj(b, _one_d("ihfft", "r2c")(b, a, n, axis, _SWAPPED[norm], out))


# --- n-d transforms ---------------------------------------------------------------------------


def _cook_nd(b: Builder, x: Value, s, axes, inverse_real: bool):
    """NumPy's ``_cook_nd_args``: the (sizes, axes) of an n-d transform; a size of None
    is the 1-d transform's default (``2 * (m - 1)`` for the last of an inverse real one),
    -1 the input's length."""
    if isinstance(s, Value) or isinstance(axes, Value):
        static_int(b, s if isinstance(s, Value) else axes, "s and axes")
    shapeless = s is None
    if axes is not None:
        axes = list(axes)
    if shapeless:
        s = list(x.shape) if axes is None else [x.shape[_axis(b, ax, x.ndim)] for ax in axes]
    s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    if len(s) != len(axes):
        raise b.error(PSCValueError, "Shape and axes have different lengths.")
    if not axes:
        return [], []
    axes = [_axis(b, ax, x.ndim) for ax in axes]
    if inverse_real and shapeless:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    sizes = []
    for i, (size, ax) in enumerate(zip(s, axes)):
        if size is None:
            size = (x.shape[ax] - 1) * 2 if inverse_real and i == len(s) - 1 else x.shape[ax]
        elif not isinstance(size, Value) and size == -1:
            size = x.shape[ax]
        sizes.append(_points(b, size, "s"))
    return sizes, axes


def _n_d(name: str, kind: str, default_axes=None):
    def rule(b: Builder, a, s=None, axes=default_axes, norm=None, out=None):
        _unsupported_out(b, name, out)
        _check_norm(b, norm)
        x = _as_real(b, name, a) if kind == "r2c" else _as_complex(b, name, a)
        sizes, axes_ = _cook_nd(b, x, s, axes, kind == "c2r")
        if not axes_:   # NumPy: the input unchanged, or s[-1] of an empty list
            if kind in ("r2c", "c2r"):
                raise b.error(PSCIndexError, "list index out of range",
                              f"np.fft.{name} needs at least one axis")
            return lift(b, a)
        if kind == "r2c":
            x = _r2c(b, x, sizes[-1], axes_[-1], norm)
            pairs = list(zip(sizes[:-1], axes_[:-1]))
        elif kind == "c2r":
            pairs = list(zip(sizes[:-1], axes_[:-1]))
        else:
            pairs = list(zip(sizes, axes_))
        forward = kind in ("forward", "r2c")
        for n, ax in reversed(pairs) if kind != "c2r" else pairs:
            x = _c2c(b, x, n, ax, norm, forward)
        if kind == "c2r":
            x = _c2r(b, x, sizes[-1], axes_[-1], norm)
        return x
    rule.__name__ = name
    rule.__doc__ = f"``np.fft.{name}``."
    return rule


# --- frequencies and shifts -------------------------------------------------------------------


def _frequencies(b: Builder, name: str, n, d, values) -> Value:
    """``values(n) * (1.0 / (n * d))`` as NumPy computes it: ``1.0 / (n * d)`` in the
    dtype NumPy gives that scalar, then the product with int64 integers."""
    if isinstance(n, Value):
        static_int(b, n, "n")
    if not isinstance(n, (int, np.integer)):
        raise b.error(PSCValueError, "n should be an integer")
    n = int(n)
    d = lift(b, d)
    if d.shape != ():
        raise b.error(PSCShapeError, f"np.fft.{name}: a traced spacing d must be a scalar, "
                      f"got shape {d.shape}")
    one = np.ones((), d.dtype)[()]
    with np.errstate(all="ignore"):
        scale_dtype = np.result_type(1.0 / (1 * one))
        dtype = np.result_type(np.zeros(1, np.int64) * np.ones((), scale_dtype)[()])
    d = b.convert(d, scale_dtype)
    scale = b.div(b.constant(np.asarray(1.0, scale_dtype)),
                  b.mul(b.constant(np.asarray(n, scale_dtype)), d))
    ints = b.constant(np.asarray(values(n), dtype))
    return b.mul(ints, b.broadcast_in_dim(b.convert(scale, dtype), ints.shape, ()))


def _fft_integers(n: int) -> np.ndarray:
    return np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])


def fftfreq(b: Builder, n, d=1.0, device=None) -> Value:
    """``np.fft.fftfreq`` with a traced spacing ``d``."""
    return _frequencies(b, "fftfreq", n, d, _fft_integers)


def rfftfreq(b: Builder, n, d=1.0, device=None) -> Value:
    """``np.fft.rfftfreq`` with a traced spacing ``d``."""
    return _frequencies(b, "rfftfreq", n, d, lambda n: np.arange(n // 2 + 1))


def _shift(name: str, sign: int):
    def rule(b: Builder, x, axes=None) -> Value:
        x = lift(b, x)
        axes_ = list(range(x.ndim)) if axes is None else \
            list(axes) if isinstance(axes, (tuple, list)) else [axes]
        shifts = [sign * (x.shape[_axis(b, ax, x.ndim)] // 2) for ax in axes_]
        return roll(b, x, shifts, axes_) if axes_ else x
    rule.__name__ = name
    rule.__doc__ = f"``np.fft.{name}``: a roll by half of each axis."
    return rule


RULES = {
    "fft": _one_d("fft", "forward"), "ifft": _one_d("ifft", "inverse"),
    "rfft": _one_d("rfft", "r2c"), "irfft": _one_d("irfft", "c2r"),
    "hfft": hfft, "ihfft": ihfft,
    "fftn": _n_d("fftn", "forward"), "ifftn": _n_d("ifftn", "inverse"),
    "rfftn": _n_d("rfftn", "r2c"), "irfftn": _n_d("irfftn", "c2r"),
    "fft2": _n_d("fft2", "forward", (-2, -1)), "ifft2": _n_d("ifft2", "inverse", (-2, -1)),
    "rfft2": _n_d("rfft2", "r2c", (-2, -1)), "irfft2": _n_d("irfft2", "c2r", (-2, -1)),
    "fftfreq": fftfreq, "rfftfreq": rfftfreq,
    "fftshift": _shift("fftshift", 1), "ifftshift": _shift("ifftshift", -1),
}

for _name, _rule in RULES.items():
    register_translation_rule(f"numpy.fft.{_name}", _rule)
