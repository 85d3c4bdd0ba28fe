"""How a jax.lax-named function works both inside PSC code and from plain Python.

`lax_function` turns ``impl(b, *arrays, **options)`` (builder code on Values) into a
function with jax.lax's signature: inside a build it lifts the array arguments to Values
and builds into the current computation; from plain Python it compiles the same build
once per (function, options) and call signature and returns NumPy, as the transforms do
(`runtime.autodiff.api`).  Errors the options raise get the caller's location.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from .autodiff.api import _lift, _staged
from .context import current_builder, has_builder
from .errors import PSCError


def _primitive(fn):
    fn.__psc_primitive__ = True   # called from PSC code as it is, never transpiled
    return fn


def hashable(value):
    """``value`` with lists made tuples (and arrays their bytes), for a cache key."""
    if type(value) in (list, tuple):
        return tuple(hashable(v) for v in value)
    if isinstance(value, tuple):   # a named tuple: its type is part of its meaning
        return (type(value),) + tuple(hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, hashable(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    return value


def lax_function(*array_params: str):
    """Decorator: ``impl(b, ...)`` with the parameters ``array_params`` holding arrays (or
    pytrees of them) and the others static options, made dual-use (module docstring)."""
    def wrap(impl):
        signature = inspect.signature(impl)
        public = signature.replace(parameters=list(signature.parameters.values())[1:])

        @functools.wraps(impl)
        def fn(*args, **kwargs):
            bound = public.bind(*args, **kwargs)
            bound.apply_defaults()
            arrays = [bound.arguments[name] for name in array_params]
            options = {k: v for k, v in bound.arguments.items() if k not in array_params}
            if has_builder():
                return _located(current_builder(), impl, arrays, options)
            key = (f"lax.{impl.__name__}", fn, hashable(options))
            return _staged(key, lambda *values: _located(current_builder(), impl,
                                                         values, options), *arrays)
        del fn.__wrapped__   # the signature is jax.lax's, without the builder
        fn.__signature__ = public
        return _primitive(fn)
    return wrap


def _located(b, impl, arrays, options):
    try:
        return impl(b, *[_lift(b, a) for a in arrays], **options)
    except PSCError as err:
        raise err.with_location(b.location) from None
