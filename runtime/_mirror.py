"""Building blocks of the NumPy mirror (`runtime.numpy_api`)."""
from __future__ import annotations

import functools
import types

import numpy as np

from .context import current_builder, has_builder
from .translation import has_traced, lookup_rule, translate_numpy
from .errors import PSCImpureCallError, PSCUnsupportedCallError
from .purity import NUMPY_RANDOM, impure_qualname


def mirror_function(fn, qualified_name: str):
    """``fn`` as generated code sees it: NumPy when nothing is traced, else its rule."""
    @functools.wraps(fn)
    def staged(*args, **kwargs):
        if not has_traced((args, kwargs)):
            return fn(*args, **kwargs)
        if lookup_rule(qualified_name) is None and lookup_rule(fn) is None:
            builder = current_builder()
            raise builder.error(PSCUnsupportedCallError,
                                f"{qualified_name} has no translation rule, so it cannot "
                                "take traced arrays", "use a supported NumPy function, or "
                                "register a rule with register_translation_rule")
        rule_key = qualified_name if lookup_rule(qualified_name) is not None else fn
        # A NumPy function returns NumPy values: strong even for Python-scalar operands.
        return translate_numpy(current_builder(), rule_key, *args, **kwargs)
    staged.__psc_mirror_of__ = fn
    if isinstance(fn, np.ufunc):
        _mirror_ufunc_attributes(staged, fn, qualified_name)
    return staged


_UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")
_UFUNC_ATTRIBUTES = ("nin", "nout", "nargs", "ntypes", "types", "identity", "signature")


def _mirror_ufunc_attributes(staged, ufunc: np.ufunc, qualified_name: str) -> None:
    """``np.add.reduce`` & co. through the mirror: NumPy's method for static arguments,
    the rule registered as ``numpy.add.reduce`` for traced ones (else a PSCError)."""
    for method in _UFUNC_METHODS:
        setattr(staged, method, mirror_function(getattr(ufunc, method),
                                                f"{qualified_name}.{method}"))
    for attribute in _UFUNC_ATTRIBUTES:
        setattr(staged, attribute, getattr(ufunc, attribute))


def _dtype_constructor(scalar_type, qualified_name: str):
    """``np.float32(x)``: a NumPy scalar for static ``x``, a conversion for traced ``x``."""
    def convert(value=0, *args, **kwargs):
        if not has_traced(value):
            return scalar_type(value, *args, **kwargs)
        return translate_numpy(current_builder(), "numpy.ndarray.astype", value, scalar_type)
    convert.__name__ = scalar_type.__name__
    convert.__qualname__ = qualified_name
    convert.__psc_mirror_of__ = scalar_type
    # NumPy reads `.dtype` from any object it is asked to interpret as a dtype, so
    # `x.astype(np.float32)`, `dtype=np.float32` and `x.dtype == np.float32` keep working.
    convert.dtype = np.dtype(scalar_type)
    return convert


class _MirrorModule(types.ModuleType):
    """A NumPy submodule (``np.fft``...) seen through the mirror, built on first use."""

    def __init__(self, module, qualified: str):
        super().__init__(f"runtime.numpy_api:{qualified}")
        self._module, self._qualified = module, qualified

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        value = mirror_attribute(self._module, self._qualified, name)
        setattr(self, name, value)
        return value


@functools.lru_cache(maxsize=None)
def mirror_module(module, qualified: str):
    """The mirror of NumPy submodule ``module`` (named ``qualified``)."""
    return _MirrorModule(module, qualified)


def mirror_attribute(module, module_name: str, name: str):
    value = getattr(module, name)   # AttributeError for names NumPy does not have
    qualified = f"{module_name}.{name}"
    if isinstance(value, type) and issubclass(value, np.generic):
        try:
            np.dtype(value)
        except TypeError:   # abstract (np.integer, np.floating): for issubdtype/isinstance
            return value
        return _dtype_constructor(value, qualified)
    if isinstance(value, types.ModuleType):
        try:
            return __import__(f"runtime.numpy_api.{name}", fromlist=["_"])
        except ImportError:
            return mirror_module(value, qualified)
    if module_name == NUMPY_RANDOM or module_name.startswith(NUMPY_RANDOM + "."):
        if callable(value) and not isinstance(value, type):   # (types: for isinstance)
            return _refused_while_building(value, qualified)
        return value
    if callable(value) and not isinstance(value, type):
        return mirror_function(value, qualified)
    return value


def _refused_while_building(fn, qualified_name: str):
    """``np.random.*`` as generated code sees it, however it was reached (``r =
    np.random; r.normal()``): a random draw made while building would be frozen into the
    program, so it is a `PSCImpureCallError` at the line (the front end refuses the calls
    it can resolve before anything runs)."""
    @functools.wraps(fn)
    def refused(*args, **kwargs):
        if not has_builder():
            return fn(*args, **kwargs)
        why, hint = impure_qualname(qualified_name)
        raise current_builder().error(
            PSCImpureCallError, f"{why}: PSC functions run once, while their program is "
            "built, so the call would not happen again on later calls", hint)
    refused.__psc_mirror_of__ = fn
    return refused
