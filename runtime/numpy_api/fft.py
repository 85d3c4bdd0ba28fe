"""Mirror of ``numpy.fft`` for generated code (see `runtime.numpy_api`)."""
from __future__ import annotations

import numpy as _np

from .._mirror import mirror_attribute


def __getattr__(name: str):
    value = mirror_attribute(_np.fft, "numpy.fft", name)
    globals()[name] = value
    return value
