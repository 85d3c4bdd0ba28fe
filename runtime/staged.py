"""`StagedFunction`: a build function compiled once per call signature, then dispatched fast.

A build function takes a `Builder` and the call's arguments, traced ones as pytrees of
builder `Value`s and static ones as their Python values, and returns a pytree of Values
(generated ``build_<fn>`` functions have exactly this shape).  On a call:

1. jaxlib's C++ dispatcher (``_jax.pjit``, the one ``jax.jit`` uses) looks the call up in
   its own cache keyed by argument structure, shapes, dtypes and static values.  A hit runs
   the executable without entering Python: that is how dispatch costs what jax.jit's does.
2. On a C++ miss, `_cache_miss` computes our `Signature`, finds or builds and compiles the
   executable in the `LRUCache` (the authoritative cache: its ``misses`` count
   compilations), runs it, and hands the C++ side what it needs to run that signature
   itself next time.

A program with a loop may never end; its calls run on a worker thread while the calling
thread waits in a way Ctrl-C can interrupt (`runtime.interrupt`).

The C++ dispatcher squashes 64-bit inputs to 32 bits unless x64 is on, so each call turns
x64 on *for the calling thread only* while it runs (``enable_x64.swap_local``); JAX's global
flag is never changed and float64 stays float64.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from jax._src import config as jax_config
from jax._src import tree_util as jax_tree_util
from jaxlib import _jax

from .builder import LARGE_CONSTANT_BYTES, Builder
from .cache import CacheInfo, LRUCache
from .client import Executable, compile, device_put, get_client
from .context import building
from .errors import PSCTypeError, PSCValueError
from .interrupt import has_loop, run_interruptibly
from .ir import Value
from .signature import Signature, signature_of

_X64 = jax_config.enable_x64
_swap_x64, _restore_x64 = _X64.swap_local, _X64.set_local   # bound once: on the hot path
_REGISTRY = jax_tree_util.dispatch_registry   # the flattening the C++ dispatcher uses


class _FastPathData(NamedTuple):
    """What the C++ dispatcher reads (by field name) to run a signature on its own; the
    fields of jax's ``pxla.MeshExecutableFastpathData``."""

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Sequence[Any]
    out_shardings: Sequence[Any]
    out_avals: Sequence[Any]
    out_committed: Sequence[bool]
    kept_var_bitvec: Sequence[bool]
    in_device_local_layouts: Sequence[Any]
    const_args: Sequence[Any]


class _Compiled(NamedTuple):
    executable: Executable
    out_treedef: Any
    const_buffers: list   # device arrays of the large constants, the leading parameters
    has_loop: bool        # calls wait for it interruptibly (see runtime.interrupt)


def static_parameters(fn: Callable, static_argnums=(), static_argnames=()):
    """Normalize static argument declarations against ``fn``'s parameters, as jax.jit does:
    returns (sorted positions, sorted names), each covering both ways of passing."""
    params = list(inspect.signature(fn).parameters.values())
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = set(static_argnames)
    nums = set()
    for num in static_argnums:
        if not -len(positional) <= num < len(positional):
            raise PSCValueError(f"static_argnums {num} is out of range for "
                                f"{fn.__name__}{inspect.signature(fn)}")
        nums.add(num % len(positional))
    for name in list(names):
        if name not in [p.name for p in params]:
            raise PSCValueError(f"static_argnames {name!r} is not a parameter of "
                                f"{fn.__name__}{inspect.signature(fn)}")
        if name in positional:
            nums.add(positional.index(name))
    names |= {positional[n] for n in nums}
    return sorted(nums), sorted(names)


class StagedFunction:
    """Calls ``build_fn`` through the builder and XLA, once per signature.

    ``interface`` is the function whose parameters the caller sees (the user's function);
    ``build_fn(b, *args, **kwargs)`` takes the same parameters after the builder.
    """

    def __init__(self, build_fn: Callable, interface: Callable | None = None, *,
                 name: str | None = None, static_argnums=(), static_argnames=(),
                 platform: str | None = None, maxsize: int = 256, fast_path: bool = True):
        self.build_fn = build_fn
        self.interface = interface or _drop_first_parameter(build_fn)
        self.name = name or getattr(self.interface, "__name__", "staged")
        self._pysig = inspect.signature(self.interface)
        self.static_argnums, self.static_argnames = static_parameters(
            self.interface, static_argnums, static_argnames)
        self.platform = platform
        self._cache = LRUCache(maxsize)
        self._fast_path = fast_path
        self._interruptible = False   # set once a signature's program has a loop
        self._cpp = _jax.pjit(self.name, None, self._cache_miss, self.static_argnums,
                              self.static_argnames, (self.name, id(self)), _REGISTRY,
                              self._shard_arg_fallback, _jax.PjitFunctionCache(maxsize))

    # --- calling --------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if self._interruptible:   # a program with a loop: Ctrl-C must be able to stop it
            return run_interruptibly(self._dispatch, args, kwargs)
        return self._dispatch(args, kwargs)

    def _dispatch(self, args, kwargs):
        previous = _swap_x64(True)
        try:
            return self._cpp(*args, **kwargs)
        except ValueError:
            # The C++ dispatcher hashes static arguments first; name the culprit instead.
            if self.static_argnames:
                self._signature(args, kwargs)
            raise
        finally:
            _restore_x64(previous)

    def _cache_miss(self, *args, **kwargs):
        signature, leaves = self._signature(args, kwargs)
        compiled = self._compiled(signature)
        executable = compiled.executable
        buffers = compiled.const_buffers + [
            device_put(leaf, spec.shape, spec.dtype, executable.device)
            for leaf, spec in zip(leaves, signature.leaves)]
        if compiled.has_loop:
            self._interruptible = True
            outputs = run_interruptibly(executable.execute, buffers)
        else:
            outputs = executable.execute(buffers)
        result = compiled.out_treedef.unflatten(outputs)
        return result, self._fast_path_data(compiled, args, kwargs, leaves), False

    def _fast_path_data(self, compiled: _Compiled, args, kwargs, leaves):
        """Fast-path data, or None where the C++ side would pass leaves in another order
        than our parameters (keyword arguments, defaults) or would squash 64-bit types."""
        if not self._fast_path or not _X64.value:
            return None
        _, cpp_leaves = _jax.jax_jit.parse_arguments(
            args, tuple(kwargs.values()), tuple(kwargs), self.static_argnums,
            self.static_argnames, _REGISTRY)
        if len(cpp_leaves) != len(leaves) or any(a is not b for a, b in
                                                 zip(cpp_leaves, leaves)):
            return None
        executable = compiled.executable
        sharding, out_avals = executable.sharding, executable.out_shaped_arrays
        n, m = len(compiled.const_buffers) + len(leaves), len(out_avals)
        # As jax does for closed-over constants: they come first, passed by the C++ side.
        return _FastPathData(executable.loaded, compiled.out_treedef, [sharding] * n,
                             [sharding] * m, out_avals, [True] * m, [True] * n, [None] * n,
                             list(compiled.const_buffers))

    @staticmethod
    def _shard_arg_fallback(value, sharding, layout):
        """Called by the C++ side for leaves it cannot move itself."""
        dtype = getattr(value, "dtype", None)
        array = np.asarray(value, dtype=dtype)
        device = next(iter(sharding.device_set))
        return device_put(array, array.shape, array.dtype, device)

    # --- signatures and compilation -------------------------------------------------------

    def _signature(self, args, kwargs) -> tuple[Signature, list]:
        try:
            bound = self._pysig.bind(*args, **kwargs)
        except TypeError as err:
            raise PSCTypeError(f"{self.name}(): {err}") from None
        bound.apply_defaults()
        static, traced = [], []
        for name, value in bound.arguments.items():
            if name in self.static_argnames:
                _check_hashable(self.name, name, value)
                static.append((name, value))
            else:
                traced.append(value)
        signature, _ = signature_of(tuple(traced), tuple(static))
        leaves, _ = _REGISTRY.flatten(tuple(traced))
        return signature, leaves

    def _compiled(self, signature: Signature) -> _Compiled:
        return self._cache.get_or_create(signature, lambda: self._build(signature))

    def _build(self, signature: Signature) -> _Compiled:
        b = Builder(self.name)
        params = [b.parameter(i, spec.shape, spec.dtype, weak=spec.weak)
                  for i, spec in enumerate(signature.leaves)]
        traced = iter(signature.treedef.unflatten(params))
        static = dict(signature.static)
        call_args, call_kwargs = [], {}
        for param in self._pysig.parameters.values():
            value = static[param.name] if param.name in static else next(traced)
            if param.kind is param.VAR_POSITIONAL:
                call_args.extend(value)
            elif param.kind is param.VAR_KEYWORD:
                call_kwargs.update(value)
            elif param.kind is param.KEYWORD_ONLY:
                call_kwargs[param.name] = value
            else:
                call_args.append(value)
        with building(b):
            result = self.build_fn(b, *call_args, **call_kwargs)
        out_leaves, out_treedef = _REGISTRY.flatten(result)
        outputs = [_as_output(b, leaf, i) for i, leaf in enumerate(out_leaves)]
        computation = b.build(*outputs)
        constants = _hoist_large_constants(computation)
        executable = compile(computation, self.platform)
        const_buffers = [device_put(c, c.shape, c.dtype, executable.device) for c in constants]
        return _Compiled(executable, out_treedef, const_buffers, has_loop(computation.region))

    # --- inspection -----------------------------------------------------------------------

    def lower(self, *args, **kwargs) -> str:
        """The StableHLO text compiled for these arguments' signature."""
        signature, _ = self._signature(args, kwargs)
        return self._compiled(signature).executable.stablehlo

    def compile(self, *args, **kwargs) -> Executable:
        """The compiled executable for these arguments' signature."""
        signature, _ = self._signature(args, kwargs)
        return self._compiled(signature).executable

    def cache_info(self) -> CacheInfo:
        """The signature cache's counters.  ``misses`` counts compilations; ``hits`` counts
        lookups that found an executable (``lower``, ``compile``, or a call the C++
        dispatcher had not seen yet); calls the C++ dispatcher serves itself count neither."""
        return self._cache.info()

    def clear_cache(self) -> None:
        self._cache.clear()
        self._cpp._clear_cache()


def _drop_first_parameter(build_fn: Callable) -> Callable:
    """An interface for ``build_fn(b, ...)``: the same parameters without the builder."""
    sig = inspect.signature(build_fn)
    params = list(sig.parameters.values())[1:]

    def interface(*args, **kwargs):  # pragma: no cover - only its signature is used
        raise NotImplementedError
    interface.__signature__ = sig.replace(parameters=params)
    interface.__name__ = getattr(build_fn, "__name__", "staged")
    return interface


def _hoist_large_constants(computation) -> list:
    """Turn the top-level large constants (see `Builder.constant`) into the computation's
    leading parameters: the program text stays small and XLA receives the data as a buffer.
    Returns their values, in parameter order."""
    region = computation.region
    large = [op for op in region.operations if op.name == "constant" and
             op.attrs["value"].nbytes >= LARGE_CONSTANT_BYTES]
    if not large:
        return []
    region.operations = [op for op in region.operations if op not in large]
    hoisted = []
    for op in large:
        value = op.results[0]
        value.producer = None
        hoisted.append(value)
    region.params = hoisted + region.params
    return [op.attrs["value"] for op in large]


def _check_hashable(fn_name: str, arg_name: str, value) -> None:
    try:
        hash(value)
    except TypeError:
        raise PSCTypeError(
            f"{fn_name}(): static argument {arg_name!r} must be hashable, got "
            f"{type(value).__name__}", hint="pass a tuple instead of a list, or make the "
            "argument traced") from None


def _as_output(b: Builder, leaf, index: int) -> Value:
    if isinstance(leaf, Value):
        return leaf
    if isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)):
        return b.constant(leaf)
    raise PSCTypeError(f"result leaf {index} is a {type(leaf).__name__}, which is not an "
                       "array", hint="return arrays, numbers, or tuples/lists/dicts of them")


def staged(build_fn: Callable | None = None, **options):
    """Decorator form of `StagedFunction`: ``@staged`` or ``@staged(static_argnames=...)``."""
    if build_fn is None:
        return lambda fn: StagedFunction(fn, **options)
    return StagedFunction(build_fn, **options)


__all__ = ["StagedFunction", "staged", "static_parameters", "get_client"]
