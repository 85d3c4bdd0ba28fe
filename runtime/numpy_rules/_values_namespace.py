"""NumPy's namespace for rules written as NumPy code: ``NP.sum(x, axis=0)`` applies the
rule registered for ``np.sum`` (NumPy itself when nothing is traced), as the mirror
`runtime.numpy_api` does for generated code.  Rule modules use this instead of the mirror,
which imports them (the project's import graph stays acyclic)."""
from __future__ import annotations

import functools
import types

import numpy as np

from ..context import current_builder
from ..translation import translate_numpy


class _Namespace:
    def __init__(self, module):
        self._module = module

    def __getattr__(self, name: str):
        value = getattr(self._module, name)
        if isinstance(value, types.ModuleType):
            value = _Namespace(value)
        elif callable(value) and not isinstance(value, type):
            value = _applying(value)
        setattr(self, name, value)   # looked up once per name
        return value


def _applying(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        return translate_numpy(current_builder(), fn, *args, **kwargs)
    return call


NP = _Namespace(np)
