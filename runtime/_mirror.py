"""Building blocks of the NumPy mirror (`runtime.numpy_api`)."""
from __future__ import annotations

import functools
import types

import numpy as np

from .context import current_builder, has_builder
from .errors import PSCAttributeError, PSCImpureCallError, PSCUnsupportedCallError
from .numpy_rules._core import ufunc_outer
from .purity import NUMPY_RANDOM, impure_qualname
from .translation import has_traced, lookup_rule, registered_names, translate_numpy


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
        return MirrorUfunc(fn, qualified_name, staged)
    return staged


class MirrorUfunc:
    """A NumPy ufunc as generated code sees it: called, it is `mirror_function`'s staged
    call; its methods (``np.add.reduce``, ``.accumulate``, ``.outer``...) run NumPy's for
    static arguments and the rule registered as ``numpy.add.reduce`` & co. for traced
    ones; ``.outer`` of any binary ufunc with a rule is built from that rule.  Any other
    attribute is the ufunc's own (``nin``, ``types``, ``__name__``), so a name NumPy's
    ufuncs lack is NumPy's ``AttributeError`` ('numpy.ufunc' object has no attribute...),
    which generated code reports at the user's line."""

    def __init__(self, ufunc: np.ufunc, qualified_name: str, staged):
        self.__psc_mirror_of__ = ufunc
        self.__wrapped__ = ufunc
        self.__name__ = ufunc.__name__
        self.__qualname__ = ufunc.__name__
        self.__doc__ = ufunc.__doc__
        self._call = staged
        self._qualified = qualified_name
        for method in _UFUNC_METHODS:
            setattr(self, method, _ufunc_method(ufunc, qualified_name, method))

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            return getattr(self.__psc_mirror_of__, name)
        except AttributeError:
            raise _no_attribute(f"'numpy.ufunc' object has no attribute '{name}'",
                                f"np.{self.__name__} has the attributes of NumPy's ufuncs") \
                from None

    def __repr__(self) -> str:
        return f"<PSC mirror of {self.__psc_mirror_of__!r}>"


_UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")


def _ufunc_method(ufunc: np.ufunc, qualified_name: str, method: str):
    """``ufunc.method`` through the mirror: NumPy's for static arguments, else the rule
    registered under ``numpy.<ufunc>.<method>`` (``outer`` from the ufunc's own rule)."""
    numpy_method = getattr(ufunc, method)
    name = f"{qualified_name}.{method}"

    def staged(*args, **kwargs):
        if not has_traced((args, kwargs)):
            return numpy_method(*args, **kwargs)
        return apply_ufunc_method(current_builder(), ufunc, method, name, *args, **kwargs)
    staged.__name__ = method
    staged.__qualname__ = name
    staged.__psc_mirror_of__ = numpy_method
    return staged


def apply_ufunc_method(b, ufunc: np.ufunc, method: str, name: str, *args, **kwargs):
    """``ufunc.method(*args)`` on traced arguments, or a PSCError saying what is offered."""
    if lookup_rule(name) is not None:
        return translate_numpy(b, name, *args, **kwargs)
    if method == "outer" and lookup_rule(ufunc) is not None and len(args) == 2:
        return ufunc_outer(b, ufunc, *args, **kwargs)
    offered = sorted(n.removeprefix("numpy.") for n in registered_names()
                     if n.count(".") == 2 and n.startswith("numpy.") and
                     n.rsplit(".", 1)[1] in _UFUNC_METHODS)
    raise b.error(PSCUnsupportedCallError,
                  f"np.{ufunc.__name__}.{method} is not supported on traced arrays",
                  f"supported ufunc methods: {', '.join(offered)}, and .outer of every "
                  "ufunc with a rule (runtime.registered_names() lists them)")


def _no_attribute(message: str, hint: str) -> PSCAttributeError:
    """At the user's line when a computation is being built (else located by the caller)."""
    error = PSCAttributeError(message, hint=hint)
    return error.with_location(current_builder().location) if has_builder() else error


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
    try:
        value = getattr(module, name)
    except AttributeError:   # an AttributeError still, for hasattr and `from ... import`
        raise _no_attribute(f"module '{module.__name__}' has no attribute '{name}'",
                            f"NumPy {np.__version__} has no {module_name}.{name}") from None
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
