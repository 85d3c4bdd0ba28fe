"""A mirror of NumPy's namespace for generated code: ``import runtime.numpy_api as np``.

Generated modules keep the source's NumPy calls word for word (``np.tanh(x)``), but bind
``np`` to this mirror.  Each function here calls NumPy itself when none of its arguments is
traced (the result is a build-time constant), and otherwise the translation rule registered
for it.  A NumPy function without a rule, called with a traced argument, is a clear
`PSCUnsupportedCallError` at the user's line: never a silent call of NumPy on a traced value.
Non-callable attributes (``np.pi``, ``np.float32``, ``np.newaxis``) are NumPy's own, except
dtype constructors, which convert traced values.
"""
from __future__ import annotations

import numpy as _np

from .._mirror import mirror_attribute

_numpy = _np


def __getattr__(name: str):
    value = mirror_attribute(_np, "numpy", name)
    globals()[name] = value    # cache: the next lookup is a plain module attribute
    return value
