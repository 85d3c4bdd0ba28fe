"""Fast Fourier transforms: ``fft`` (StableHLO's ``fft`` op) over the trailing dimensions.

Attributes: ``fft_type`` in FFT/IFFT (complex -> complex), RFFT (real -> complex, the
trailing dimension becomes ``n // 2 + 1``) and IRFFT (complex -> real, the trailing
dimension becomes ``n``), and ``fft_length``: the sizes of the 1 to 3 transformed trailing
dimensions (for IRFFT, of the real result).  IFFT and IRFFT include the ``1 / prod(n)``
factor, as XLA's.

The op is linear, so its JVP is the op on the tangent.  The VJP uses the transpose (not the
adjoint, the convention of ``dot_general``): the DFT matrix is symmetric, so FFT's
transpose is FFT and IFFT's is IFFT.  RFFT is FFT of the real input followed by dropping
the redundant half, so its transpose pads the cotangent with zeros back to ``n``, applies
FFT and keeps the real part.  IRFFT's transpose is RFFT of the cotangent scaled by
``1 / prod(n)``, with the entries that stand for two bins of the full spectrum (all but the
first and, for even ``n``, the last) doubled, then conjugated (the cotangent convention
jax uses for complex values).  Batching moves the batch dimension to the front, which the
op treats as one more leading dimension.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autodiff.tangents import is_float
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..lowering import i64_array
from ..primitive import batching_rule, checks, lowers, vjp_rule
from .support import conj, fmt, linear_jvp, require, to_front

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def fft(b, x, fft_type: str, fft_length):
    """``x`` transformed over its ``len(fft_length)`` trailing dimensions."""
    return b.emit("fft", [x], fft_type=fft_type,
                  fft_length=tuple(int(n) for n in fft_length))[0]


@checks("fft")
def _check_fft(operands, attrs):
    (x,), kind, lengths = operands, attrs["fft_type"], tuple(attrs["fft_length"])
    require(kind in FFT_TYPES, PSCValueError, f"fft: unknown fft_type {kind!r}")
    require(1 <= len(lengths) <= 3 and len(lengths) <= x.ndim, PSCShapeError,
            f"fft: 1 to 3 transformed dimensions, at most the rank of {fmt(x)}, got "
            f"fft_length {list(lengths)}")
    require(all(n >= 0 for n in lengths), PSCValueError,
            f"fft: negative fft_length {list(lengths)}")
    lead, trail = x.shape[:-len(lengths)], x.shape[-len(lengths):]
    if kind == "RFFT":
        require(x.dtype in _COMPLEX, PSCTypeError,
                f"fft RFFT needs a float32 or float64 operand, got {fmt(x)}")
        require(trail == lengths, PSCShapeError,
                f"fft RFFT of {fmt(x)}: trailing dimensions must be {list(lengths)}")
        return [(lead + lengths[:-1] + (lengths[-1] // 2 + 1,), _COMPLEX[x.dtype])]
    require(dtypes.is_complex(x.dtype) and x.dtype.itemsize in (8, 16), PSCTypeError,
            f"fft {kind} needs a complex64 or complex128 operand, got {fmt(x)}")
    if kind == "IRFFT":
        expected = lengths[:-1] + (lengths[-1] // 2 + 1,)
        require(trail == expected, PSCShapeError,
                f"fft IRFFT of {fmt(x)}: trailing dimensions must be {list(expected)}")
        return [(lead + lengths, dtypes.real_dtype(x.dtype))]
    require(trail == lengths, PSCShapeError,
            f"fft {kind} of {fmt(x)}: trailing dimensions must be {list(lengths)}")
    return [(x.shape, x.dtype)]


@lowers("fft")
def _lower_fft(p, op):
    a = op.attrs
    p.generic(op, "fft", f"fft_type = #stablehlo<fft_type {a['fft_type']}>, "
                         f"fft_length = {i64_array(a['fft_length'])}")


linear_jvp("fft")


def _rfft_transpose(b, ct, lengths):
    missing = lengths[-1] - ct.shape[-1]
    zero = b.constant(np.zeros((), ct.dtype))
    padded = b.pad(ct, zero, [0] * ct.ndim, [0] * (ct.ndim - 1) + [missing])
    return b.convert(fft(b, padded, "FFT", lengths), dtypes.real_dtype(ct.dtype))


def _irfft_transpose(b, ct, lengths):
    x = fft(b, ct, "RFFT", lengths)
    bins, n = x.shape[-1], lengths[-1]
    weights = np.full(bins, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights = weights / math.prod(lengths)
    scale = b.broadcast_in_dim(b.constant(weights.astype(x.dtype)), x.shape, (x.ndim - 1,))
    return conj(b, b.mul(scale, x))


@vjp_rule("fft")
def _fft_vjp(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    if not is_float(x):
        return [None]
    kind, lengths = op.attrs["fft_type"], tuple(op.attrs["fft_length"])
    if kind == "RFFT":
        return [_rfft_transpose(b, ct, lengths)]
    if kind == "IRFFT":
        return [_irfft_transpose(b, ct, lengths)]
    return [fft(b, ct, kind, lengths)]


@batching_rule("fft")
def _batch_fft(b, op, operands, dims):
    (x,), (d,) = operands, dims
    if d is None:
        return [fft(b, x, op.attrs["fft_type"], op.attrs["fft_length"])], [None]
    return [fft(b, to_front(b, x, d), op.attrs["fft_type"], op.attrs["fft_length"])], [0]
