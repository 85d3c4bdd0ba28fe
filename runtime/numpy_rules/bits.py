"""``np.packbits`` and ``np.unpackbits``: bits of integer arrays packed into uint8 and back.

NumPy's semantics kept: ``packbits`` takes an integer or bool array (any non-zero element
is a 1 bit), flattens it when ``axis`` is None, pads the axis with zero bits up to a
multiple of 8 and gives uint8; ``bitorder`` is "big" (the first element is the most
significant bit) or "little".  ``unpackbits`` takes uint8 only and gives uint8 with 8 times
the length on ``axis``; a static ``count`` keeps the first ``count`` bits (negative: drops
``-count`` from the end; beyond the available bits: zero bits are appended).
Written with NumPy-level code on traced values (`_values_namespace.NP`).
"""
from __future__ import annotations

import numpy as _np

from ..builder import Builder
from ..errors import PSCTypeError, PSCValueError
from ..translation import register_translation_rule
from ._core import lift, normalize_axis, static_int
from ._values_namespace import NP


def _bit_weights(bitorder: str, b: Builder, name: str):
    if bitorder not in ("big", "little"):
        raise b.error(PSCValueError, f"np.{name}: 'order' must be either 'little' or 'big'",
                      'pass bitorder="big" or bitorder="little"')
    weights = 1 << _np.arange(8, dtype=_np.uint8)
    return weights[::-1].copy() if bitorder == "big" else weights


def _flattened(b: Builder, x, axis):
    if axis is None:
        return b.reshape(x, (x.size,)), 0
    return x, normalize_axis(b, axis, x.ndim)


def _zero_padded(np, x, extra: int):
    """``x`` with ``extra`` zeros appended on its last axis."""
    return np.concatenate([x, np.zeros(x.shape[:-1] + (extra,), x.dtype)], axis=-1)


def packbits(b: Builder, a, axis=None, bitorder="big"):
    np = NP
    x = lift(b, a)
    if x.dtype.kind not in "biu":
        raise b.error(PSCTypeError, "Expected an input array of integer or boolean data "
                      f"type, got {x.dtype}", "np.packbits packs integer or bool arrays")
    weights = _bit_weights(bitorder, b, "packbits")
    x, axis = _flattened(b, x, axis)
    x = np.moveaxis(x != 0, axis, -1).astype(np.uint8)
    length = x.shape[-1]
    padded = -(-length // 8) * 8
    if padded != length:
        x = _zero_padded(np, x, padded - length)
    groups = np.reshape(x, x.shape[:-1] + (padded // 8, 8))
    packed = np.sum(groups * weights, axis=-1, dtype=np.uint8)
    return np.moveaxis(packed, -1, axis)


def unpackbits(b: Builder, a, axis=None, count=None, bitorder="big"):
    np = NP
    x = lift(b, a)
    if x.dtype != _np.uint8:
        raise b.error(PSCTypeError, f"Expected an input array of unsigned byte data type, "
                      f"got {x.dtype}", "np.unpackbits takes uint8 arrays (x.astype(np.uint8))")
    weights = _bit_weights(bitorder, b, "unpackbits")
    x, axis = _flattened(b, x, axis)
    x = np.moveaxis(x, axis, -1)
    bits = ((x[..., None] & weights) != 0).astype(np.uint8)
    bits = np.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = static_int(b, count, "np.unpackbits: count")
        available = bits.shape[-1]
        if available + count < 0:
            raise b.error(PSCValueError, "-count larger than number of elements",
                          f"np.unpackbits can drop at most {available} bits here")
        keep = count if count >= 0 else available + count
        if keep <= available:
            bits = bits[..., :keep]
        else:
            bits = _zero_padded(np, bits, keep - available)
    return np.moveaxis(bits, -1, axis)


register_translation_rule(_np.packbits, packbits)
register_translation_rule(_np.unpackbits, unpackbits)
