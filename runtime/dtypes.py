"""Dtype facts the builder and the lowering need: MLIR element types and comparison kinds."""
from __future__ import annotations

import numpy as np

try:  # bfloat16 comes with jaxlib's companion package; optional for the builder itself.
    import ml_dtypes
    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes ships with jaxlib
    _BFLOAT16 = None

bool_ = np.dtype(np.bool_)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
bfloat16 = _BFLOAT16

_MLIR_ELEMENT_TYPES = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}
if _BFLOAT16 is not None:
    _MLIR_ELEMENT_TYPES[_BFLOAT16] = "bf16"

SUPPORTED_DTYPES = frozenset(_MLIR_ELEMENT_TYPES)


def canonical(dtype) -> np.dtype:
    """``np.dtype(dtype)``, rejecting dtypes XLA has no element type for."""
    dt = np.dtype(dtype)
    if dt not in _MLIR_ELEMENT_TYPES:
        raise TypeError(f"dtype {dt} has no XLA element type")
    return dt


def mlir_element_type(dtype: np.dtype) -> str:
    return _MLIR_ELEMENT_TYPES[np.dtype(dtype)]


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == bool_


def is_integer(dtype) -> bool:
    """Signed or unsigned integer, not bool."""
    return np.dtype(dtype).kind in "iu"


def is_unsigned(dtype) -> bool:
    return np.dtype(dtype).kind == "u"


def is_inexact(dtype) -> bool:
    """Floating or complex: the dtypes transcendental functions accept."""
    return np.dtype(dtype).kind in "fcV" or np.dtype(dtype) == _BFLOAT16


def is_floating(dtype) -> bool:
    dt = np.dtype(dtype)
    return dt.kind == "f" or dt == _BFLOAT16


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def comparison_type(dtype) -> str:
    """The StableHLO ``compare_type`` that gives NumPy's ordering for ``dtype``."""
    if is_bool(dtype) or is_unsigned(dtype):
        return "UNSIGNED"
    if is_integer(dtype):
        return "SIGNED"
    return "FLOAT"


def real_dtype(dtype) -> np.dtype:
    """The component dtype of a complex dtype; the dtype itself otherwise."""
    dt = np.dtype(dtype)
    return np.dtype(np.float32) if dt == np.complex64 else (
        np.dtype(np.float64) if dt == np.complex128 else dt)
