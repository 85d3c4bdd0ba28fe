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

A call runs where ``jax.jit`` would run it (`runtime.placement`): on the device its
committed arguments share, else on the pinned device (``device=``/``backend=``), else on
the backend's first device with uncommitted results.  The device is part of the
`Signature`; the C++ dispatcher keys calls by their arguments' devices and commitment
itself, so the default path pays nothing for it.

A program with a loop may never end; its calls run on a worker thread while the calling
thread waits in a way Ctrl-C can interrupt (`runtime.interrupt`).

The C++ dispatcher squashes 64-bit inputs to 32 bits unless x64 is on, so each call turns
x64 on *for the calling thread only* while it runs (``enable_x64.swap_local``); JAX's global
flag is never changed and float64 stays float64.

The C++ side keys a NumPy array by its element type only: it would run a big-endian array's
bytes, or a masked array's data without its mask, with the executable compiled for a plain
array.  So calls whose arguments are anything but plain arrays and scalars are checked
first (`_plain_arguments`), and those with such leaves take the Python path, where
`runtime.signature` converts or refuses them.  It compares static arguments by type and
``==``, which tells ``1`` from ``1.0`` but not ``(1, 2)`` from ``(1.0, 2)``: static tuples
travel to it wrapped in `_TypedStatic`, equal only when `static_key` is.

On CPU, a large NumPy argument that PJRT would copy (slowly: it is not 64-byte aligned)
is replaced by an aligned copy from `runtime.staging` before the C++ dispatcher sees it,
which then uses that copy in place; aligned arrays are used in place as they are.

Results come back as NumPy, so the caller's next line keeps NumPy's semantics (float64
stays float64 with JAX's x64 flag off): each result array is viewed without a copy on CPU
(read-only: the memory is XLA's), a 0-d result is a NumPy scalar, or a Python scalar where
the program computed it from Python numbers (a weak value), as plain NumPy returns them.
``return_device_arrays=True`` keeps jax arrays, for chaining calls on an accelerator
(`host_results`).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import os
import sys
import traceback
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from jax._src import config as jax_config
from jax._src import tree_util as jax_tree_util
from jaxlib import _jax

from .argument_updates import ArgumentUpdates, write_back
from .builder import Builder
from .cache import CacheInfo, LRUCache
from .check_threading import thread_checks
from .checks import SETTINGS as _CHECK_SETTINGS
from .checks import enabled as _checks_enabled
from .checks import normalize as _normalize_checks
from .checks import raise_first_failure
from .client import Executable, compile, device_put, get_client, runtime_error
from .context import building
from .dtypes import SUPPORTED_DTYPES
from .errors import (PSCError, PSCResourceError, PSCTypeError, PSCValueError,
                     SourceLocation)
from .if_conversion import convert_ifs
from .interrupt import may_run_long, run_interruptibly
from .loop_batching import batch_out_of_loops
from .loop_unrolling import unroll_loops
from .placement import as_device, call_device
from .tracebacks import hide_internal_frames
from .ir import Value
from .signature import Signature, signature_of, static_key
from . import spmd
from .staging import STAGE_BYTES as _STAGE_BYTES
from .staging import stage_arguments
from .staging import zero_copyable as _zero_copyable

_X64 = jax_config.enable_x64
_swap_x64, _restore_x64 = _X64.swap_local, _X64.set_local   # bound once: on the hot path
_REGISTRY = jax_tree_util.dispatch_registry   # the flattening the C++ dispatcher uses
_parse_arguments = _jax.jax_jit.parse_arguments
_ArrayImpl = _jax.ArrayImpl   # what both dispatch paths return
_asarray = np.asarray
_ndarray = np.ndarray   # module-level names: the per-call checks read them

# Leaf types the C++ dispatcher handles exactly as our signatures do (NumPy arrays need a
# look at their byte order; an out-of-range Python int falls back to `_cache_miss`).
# str and None are no arrays to the C++ side either (as static arguments they are fine).
_PLAIN_TYPES = frozenset({_jax.ArrayImpl, bool, int, float, complex, str, type(None)} |
                         {dtype.type for dtype in SUPPORTED_DTYPES})
_CONTAINERS = (tuple, frozenset)   # static values whose == ignores their elements' types


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


# A program whose outputs and temporaries take this much memory is run on the Python path
# and waited for: an allocation XLA cannot make surfaces only when the results are read,
# and reading such a result aborts the process in jaxlib's C++ (``Check failed:
# buffer_.IsConcrete()``), where waiting raises a catchable RESOURCE_EXHAUSTED.  Below it,
# the C++ fast path (asynchronous) is kept: its dispatch cost matters, an allocation that
# small failing does not happen in practice, and touching 64 MB takes far longer than
# the Python path costs.
CHECKED_RUN_BYTES = 64 << 20


class _Compiled(NamedTuple):
    executable: Executable
    out_treedef: Any
    const_buffers: list   # the executable's large constants, its leading parameters
    may_run_long: bool    # calls wait for it interruptibly (see runtime.interrupt)
    checked_run: bool     # needs CHECKED_RUN_BYTES or more: run and wait on the Python path
    # run-time checks and prints (runtime.check_threading): None, or the site table of the
    # failure code that is then the last output
    check_sites: tuple | None = None


class _Failure(NamedTuple):
    """A signature whose build failed with a `PSCError`: raised again without rebuilding
    (the build would fail the same way: its inputs are the signature and the source)."""

    error: PSCError

    def raise_again(self):
        """A fresh copy of the error (the cached one stays as it was), with the build's
        traceback."""
        original = self.error
        fresh = copy.copy(original)   # (PSCError.__reduce__: every field, any base class)
        if "__notes__" in original.__dict__:   # notes added to the copy stay the copy's
            fresh.__notes__ = list(original.__notes__)
        raise fresh.with_traceback(original.__traceback__) from original.__cause__


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
                 platform: str | None = None, maxsize: int = 256, fast_path: bool = True,
                 checks=None, return_device_arrays: bool = False, device=None,
                 if_conversion: bool = True, in_shardings=None, out_shardings=None):
        self.build_fn = build_fn
        self.interface = interface or _drop_first_parameter(build_fn)
        self.name = name or getattr(self.interface, "__name__", "staged")
        self._pysig = inspect.signature(self.interface)
        self.static_argnums, self.static_argnames = static_parameters(
            self.interface, static_argnums, static_argnames)
        if device is not None and platform is not None:
            raise PSCValueError(f"{self.name}: pass a device or a backend, not both (got "
                                f"device={device} and backend={platform!r})",
                                hint="the device names its backend")
        # A device or a backend given pins every call to that device, or to the backend's
        # first one, as jax.jit's ``device=`` and ``backend=`` do (`runtime.placement`).
        # SPMD (`runtime.spmd`): shardings over a mesh; all on one device is a placement.
        self._in_spec = spmd.shardings_spec(in_shardings, "jit_ps(in_shardings=...)")
        self._out_spec = spmd.shardings_spec(out_shardings, "jit_ps(out_shardings=...)")
        sole = spmd.single_device(self._in_spec, self._out_spec)
        if (self._in_spec or self._out_spec) and (device is not None or platform is not None):
            raise PSCValueError(f"{self.name}: pass shardings or a device/backend, not both",
                                hint="the shardings name the devices")
        if sole is not None:
            device, self._in_spec, self._out_spec = sole, None, None
        self._spmd = self._in_spec is not None or self._out_spec is not None
        self.device = None if device is None else as_device(device, "jit_ps(device=...)")
        self.platform = platform if device is None else self.device.platform
        self._pinned = device is not None or platform is not None
        self._default_device = self.device   # the backend's first device, once asked
        self._cache = LRUCache(maxsize)
        self._fast_path = fast_path
        # run-time checks (runtime.checks): a frozenset of kinds, or None to follow the
        # process-wide setting
        self._checks = _normalize_checks(checks)
        # False: results as NumPy (`host_results`); True: the jax arrays XLA made.
        self.return_device_arrays = bool(return_device_arrays)
        # cheap two-branch conditionals become selects (`runtime.if_conversion`)
        self.if_conversion = bool(if_conversion)
        self._interruptible = False   # set once a signature's program has a loop
        self._on_cpu = None   # the backend is CPU (`_stages_inputs`), once asked
        self._static_slots = bool(self.static_argnums or self.static_argnames)
        # Calls the C++ dispatcher completed, and those of them it handed to `_cache_miss`:
        # the difference is its own cache hits (it keeps no count of them).
        self._cpp_calls = 0
        self._cpp_misses = 0
        self._cpp = _jax.pjit(self.name, None, self._cache_miss, self.static_argnums,
                              self.static_argnames, (self.name, id(self)), _REGISTRY,
                              self._shard_arg_fallback, _jax.PjitFunctionCache(maxsize))

    # --- calling --------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        try:
            if self._interruptible:   # a program with a loop: Ctrl-C must be able to stop it
                result = run_interruptibly(self._dispatch, args, kwargs)
            else:
                result = self._dispatch(args, kwargs)
            if type(result) is ArgumentUpdates:   # it updated arguments in place
                result = self._write_back(result, args, kwargs)
            if self.return_device_arrays or self._spmd:   # SPMD: global arrays, sharded
                return result
            # Inside the try: reading a result waits for it, and XLA reports a failed run
            # then.  One array is the common case and converted here, without a call.
            if type(result) is _ArrayImpl:
                return _host_leaf(result)
            return host_results(result)
        except PSCError as err:
            if err.location is None:   # an error in the call itself: point at the call
                err.location = caller_location()
            hide_internal_frames(err)   # the message names the user's line
            raise
        except _jax.JaxRuntimeError as err:   # XLA failed running it, e.g. out of memory
            raise runtime_error(self.name, err).with_location(caller_location()) from None

    def _write_back(self, updates: ArgumentUpdates, args, kwargs):
        """Copy the parameters' final values into the caller's arrays
        (`runtime.argument_updates`); the function's result."""
        bound = self._pysig.bind(*args, **kwargs)
        bound.apply_defaults()
        traced = [name for name in bound.arguments if name not in self.static_argnames]
        return write_back(self.name, updates, bound.arguments, traced)

    def _dispatch(self, args, kwargs):
        if self._checks or (self._checks is None and _CHECK_SETTINGS.kinds):
            return self._run(args, kwargs)[0]   # checked calls read the failure code
        if not _plain_arguments(args, kwargs):
            if self._stages_inputs():   # large NumPy arrays: aligned copies, used in place
                args, kwargs = stage_arguments(args, kwargs)
            if not _plain_arguments(args, kwargs) and not self._cpp_can_take(args, kwargs):
                return self._run(args, kwargs)[0]
        if self._static_slots:
            args, kwargs = self._wrap_statics(args, kwargs)
        previous = _swap_x64(True)
        try:
            # (no ``**{}`` when there are no keywords: building it costs on every call)
            result = self._cpp(*args, **kwargs) if kwargs else self._cpp(*args)
        except (ValueError, TypeError) as err:
            # The C++ dispatcher hashes static arguments first; name the culprit instead.
            if self._static_slots and not isinstance(err, PSCError):
                self._signature(*_unwrap_statics(args, kwargs))
            raise
        finally:
            _restore_x64(previous)
        self._cpp_calls += 1
        return result

    def _stages_inputs(self) -> bool:
        """Whether large NumPy arguments are staged (`runtime.staging`): on CPU only, where
        PJRT can use host memory in place.  Asked only when a call has such an argument."""
        if self._on_cpu is None:
            self._on_cpu = get_client(self.platform).platform == "cpu"
        return self._on_cpu

    def _cpp_can_take(self, args, kwargs) -> bool:
        """Whether every traced leaf is one the C++ side handles as we do: not an ndarray
        subclass, not in a non-native byte order (see the module docstring)."""
        try:
            _, leaves = _parse_arguments(args, tuple(kwargs.values()), tuple(kwargs),
                                         self.static_argnums, self.static_argnames,
                                         _REGISTRY)
        except Exception:   # e.g. an unhashable static argument: the Python path names it
            return False
        for leaf in leaves:
            if isinstance(leaf, np.ndarray) and (type(leaf) is not np.ndarray or
                                                 not leaf.dtype.isnative):
                return False
        return True

    def _wrap_statics(self, args, kwargs):
        """Static tuples and frozensets as `_TypedStatic`s, for the C++ dispatcher's key."""
        for n in self.static_argnums:
            if n < len(args) and isinstance(args[n], _CONTAINERS):
                args = list(args)
                for m in self.static_argnums:
                    if m < len(args):
                        args[m] = _TypedStatic.of(args[m])
                args = tuple(args)
                break
        if kwargs:
            for name in self.static_argnames:
                if isinstance(kwargs.get(name), _CONTAINERS):
                    kwargs = dict(kwargs)
                    kwargs[name] = _TypedStatic.of(kwargs[name])
        return args, kwargs

    def _cache_miss(self, *args, **kwargs):
        if self._static_slots:
            args, kwargs = _unwrap_statics(args, kwargs)
        result, compiled, leaves, committed = self._run(args, kwargs)
        self._cpp_misses += 1
        return result, self._fast_path_data(compiled, args, kwargs, leaves, committed), False

    def _run(self, args, kwargs):
        """The Python path: signature, executable (built on a miss), run.  Returns
        (result, compiled, traced leaves, whether the results are committed)."""
        signature, leaves, committed = self._signature(args, kwargs)
        compiled = self._compiled(signature)
        executable = compiled.executable
        if signature.layout is not None:   # SPMD: each leaf cut into its shards
            buffers = executable.put_arguments(leaves, signature.leaves)
        else:
            buffers = compiled.const_buffers + [
                device_put(leaf, spec.shape, spec.dtype, executable.device)
                for leaf, spec in zip(leaves, signature.leaves)]
        if compiled.may_run_long:
            self._interruptible = True
            outputs = run_interruptibly(executable.execute, buffers, committed)
        else:
            outputs = executable.execute(buffers, committed)
            if compiled.checked_run:
                for output in outputs:
                    output.block_until_ready()   # raises RESOURCE_EXHAUSTED, see above
        if compiled.check_sites is not None:
            if compiled.check_sites:
                raise_first_failure(compiled.check_sites, outputs[-1])
            outputs = outputs[:-1]
        return compiled.out_treedef.unflatten(outputs), compiled, leaves, committed

    def _fast_path_data(self, compiled: _Compiled, args, kwargs, leaves, committed):
        """Fast-path data, or None where the C++ side would pass leaves in another order
        than our parameters (keyword arguments, defaults), would squash 64-bit types,
        must not run the program without waiting for it (`CHECKED_RUN_BYTES`), or would
        pass a jax array sharded otherwise than the SPMD program wants as it is."""
        if (not self._fast_path or not _X64.value or compiled.checked_run
                or compiled.check_sites is not None):
            return None
        _, cpp_leaves = _jax.jax_jit.parse_arguments(
            args, tuple(kwargs.values()), tuple(kwargs), self.static_argnums,
            self.static_argnames, _REGISTRY)
        if len(cpp_leaves) != len(leaves) or any(a is not b for a, b in
                                                 zip(cpp_leaves, leaves)):
            return None
        executable = compiled.executable
        if executable.device is None and any(
                type(leaf) is _ArrayImpl and not spmd.laid_out_as(leaf, sharding)
                for leaf, sharding in zip(leaves, executable.layout.in_shardings)):
            return None   # (the C++ side would pass such an array as it is: resharded here)
        out_avals = executable.out_shaped_arrays
        n, m = len(compiled.const_buffers) + len(leaves), len(out_avals)
        if executable.device is None:   # SPMD: a sharding per parameter and per result
            in_shardings, out_shardings = executable.param_shardings, executable.out_shardings
        else:
            in_shardings, out_shardings = [executable.sharding] * n, [executable.sharding] * m
        # As jax does for closed-over constants: they come first, passed by the C++ side.
        # (The C++ side keys calls by their arguments' devices and commitment too, so
        # this entry serves only calls placed as this one was.)
        return _FastPathData(executable.loaded, compiled.out_treedef, list(in_shardings),
                             list(out_shardings), out_avals, [committed] * m, [True] * n,
                             [None] * n, list(compiled.const_buffers))

    @staticmethod
    def _shard_arg_fallback(value, sharding, layout):
        """Called by the C++ side for leaves it cannot move itself."""
        dtype = getattr(value, "dtype", None)
        array = np.asarray(value, dtype=dtype)
        if len(sharding.device_set) > 1:   # SPMD: cut into the shards of this process
            return spmd.put(array, sharding, array.dtype)
        device = next(iter(sharding.device_set))
        return device_put(array, array.shape, array.dtype, device)

    # --- signatures and compilation -------------------------------------------------------

    def _signature(self, args, kwargs) -> tuple[Signature, list, bool]:
        """The call's signature, its traced leaves, and whether it is committed to its
        device (`runtime.placement.call_device`)."""
        try:
            bound = self._pysig.bind(*args, **kwargs)
        except TypeError as err:
            raise PSCTypeError(f"{self.name}{self._pysig}: {err}") from None
        bound.apply_defaults()
        static, traced, traced_names = [], [], []
        for name, value in bound.arguments.items():
            if name in self.static_argnames:
                _check_hashable(self.name, name, value)
                static.append((name, value))
            else:
                traced.append(value)
                traced_names.append(name)
        leaves, _ = _REGISTRY.flatten(tuple(traced))
        describe = functools.partial(_leaf_name, traced_names, traced)
        if self._spmd or any(map(spmd.is_sharded, leaves)):
            return self._spmd_signature(traced, static, leaves, describe)
        device, committed = call_device(leaves, describe,
                                        self._first_device() if self._pinned else None,
                                        self._first_device)
        signature, _ = signature_of(tuple(traced), tuple(static), describe, device)
        checks = self._checks if self._checks is not None else _CHECK_SETTINGS.kinds
        if checks:
            signature = dataclasses.replace(signature, checks=checks)
        return signature, leaves, committed

    def _spmd_signature(self, traced, static, leaves, describe):
        """An SPMD call's signature: its `runtime.spmd.SpmdLayout` in place of a device."""
        signature, _ = signature_of(tuple(traced), tuple(static), describe)
        layout = spmd.call_layout(self._in_spec, self._out_spec, traced, leaves,
                                  signature.leaves, describe)
        checks = self._checks if self._checks is not None else _CHECK_SETTINGS.kinds
        return dataclasses.replace(signature, layout=layout, checks=checks or frozenset()), \
            leaves, True

    def _first_device(self):
        """The backend's first device: where calls with nothing committed run."""
        if self._default_device is None:
            self._default_device = get_client(self.platform).local_devices()[0]
        return self._default_device

    def _compiled(self, signature: Signature) -> _Compiled:
        entry = self._cache.get_or_create(signature, lambda: self._build_or_failure(signature))
        if type(entry) is _Failure:
            entry.raise_again()
        return entry

    def _build_or_failure(self, signature: Signature):
        try:
            return self._build(signature)
        except PSCResourceError:   # depends on the memory free now: try again next time
            raise
        except PSCError as err:
            traceback.clear_frames(err.__traceback__)   # keep the lines, not the builder
            return _Failure(err)

    def _build(self, signature: Signature) -> _Compiled:
        b = Builder(self.name)
        params = [b.parameter(i, spec.shape, spec.dtype, weak=spec.weak)
                  for i, spec in enumerate(signature.leaves)]
        traced = iter(signature.treedef.unflatten(params))
        static = signature.static_values()
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
        program_mesh = signature.layout.mesh if signature.layout is not None else None
        with building(b), _checks_enabled(signature.checks), spmd.building_on(program_mesh):
            result = self.build_fn(b, *call_args, **call_kwargs)
        out_leaves, out_treedef = _REGISTRY.flatten(result)
        outputs = [_as_output(b, leaf, i) for i, leaf in enumerate(out_leaves)]
        computation = b.build(*outputs)
        if self.if_conversion:   # after every transform: see runtime.if_conversion
            convert_ifs(computation)
        sites = thread_checks(computation)
        batch_out_of_loops(computation)   # before unrolling: its loops may become cheap
        unroll_loops(computation)   # last: the loops as they will run
        if signature.layout is not None:
            executable = spmd.compile(computation, signature.layout, out_treedef)
        else:
            executable = compile(computation, self.platform, signature.device)
        return _Compiled(executable, out_treedef, executable.const_buffers,
                         may_run_long(computation.region),
                         executable.run_bytes() >= CHECKED_RUN_BYTES, sites)

    # --- inspection -----------------------------------------------------------------------

    def lower(self, *args, **kwargs) -> str:
        """The StableHLO text compiled for these arguments' signature."""
        signature = self._signature(args, kwargs)[0]
        return self._compiled(signature).executable.stablehlo

    def compile(self, *args, **kwargs) -> Executable:
        """The compiled executable for these arguments' signature."""
        signature = self._signature(args, kwargs)[0]
        return self._compiled(signature).executable

    def cache_info(self) -> CacheInfo:
        """The signature cache's counters.  ``misses`` counts builds (compilations, and
        builds that failed: a failure is cached too); ``hits`` counts calls served by a
        cached executable, by the C++ dispatcher or ours, ``lower``/``compile`` lookups
        that found one, and calls answered by a cached failure.  The C++ side's hits are
        its completed calls less those it handed to `_cache_miss` (one counter increment
        per call: it keeps no count itself)."""
        info = self._cache.info()
        cpp_hits = self._cpp_calls - self._cpp_misses
        return CacheInfo(info.hits + cpp_hits, info.misses, info.size, info.maxsize)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._cpp._clear_cache()
        self._cpp_calls = self._cpp_misses = 0


def host_results(result):
    """The results of a call as NumPy returns them: every jax array leaf of the pytree
    ``result`` as a read-only NumPy view of its buffer (a copy off CPU), a 0-d one as a
    NumPy scalar, or as a Python scalar when it is weak (the program computed it from
    Python numbers only: the plain function returns a Python number there)."""
    leaves, treedef = _REGISTRY.flatten(result)
    return treedef.unflatten([_host_leaf(leaf) for leaf in leaves])


def _host_leaf(leaf):
    if type(leaf) is not _ArrayImpl:   # not a result array (no such leaf is made today)
        return leaf
    array = _asarray(leaf)   # zero-copy on CPU (the buffer protocol)
    if array.ndim:
        return array
    return array.item() if leaf.weak_type else array[()]


def _plain_arguments(args, kwargs=None) -> bool:
    """A quick check, made on every call: all arguments are plain leaves the C++ dispatcher
    handles as we do, or lists, tuples and dicts of them, and no large array PJRT would
    copy slowly.  False means: stage those, then look closer
    (`StagedFunction._cpp_can_take`)."""
    for arg in args:
        kind = type(arg)
        if kind is _ndarray:
            if not arg.dtype.isnative or (arg.nbytes >= _STAGE_BYTES and
                                          not _zero_copyable(arg)):
                return False   # (a large array PJRT would copy: staged first)
        elif kind not in _PLAIN_TYPES:
            if kind is dict:
                if not _plain_arguments(arg.values()):
                    return False
            elif isinstance(arg, (tuple, list)):   # named tuples too
                if not _plain_arguments(arg):
                    return False
            else:
                return False
    if kwargs:
        return _plain_arguments(kwargs.values())
    return True


class _TypedStatic:
    """A static argument as the C++ dispatcher sees it: hashed and compared by
    `static_key`, so ``(1, 2)`` and ``(1.0, 2)`` are different keys."""

    __slots__ = ("value", "key", "_hash")

    def __init__(self, value, key):
        self.value, self.key, self._hash = value, key, hash(key)

    @classmethod
    def of(cls, value):
        try:
            return cls(value, static_key(value))
        except TypeError:   # unhashable: left as it is, for the error message
            return value

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return type(other) is _TypedStatic and self.key == other.key


def _unwrap_statics(args, kwargs):
    if any(type(a) is _TypedStatic for a in args):
        args = tuple(a.value if type(a) is _TypedStatic else a for a in args)
    if any(type(v) is _TypedStatic for v in kwargs.values()):
        kwargs = {k: v.value if type(v) is _TypedStatic else v for k, v in kwargs.items()}
    return args, kwargs


def _leaf_name(names: list, traced: list, index: int) -> str:
    """Leaf ``index`` of the traced arguments as the user wrote it: ``argument 'x'``,
    ``argument 'params'['W']``."""
    paths = [path for path, _ in jax_tree_util.tree_flatten_with_path(tuple(traced))[0]]
    path = paths[index]
    name = names[path[0].idx]
    return f"argument {name!r}{jax_tree_util.keystr(path[1:])}"


# Frames in these folders are this project's, not the caller's.
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
_OWN_DIRS = tuple(os.path.join(os.path.dirname(_RUNTIME_DIR), name) + os.sep
                  for name in ("runtime", "transpiler"))


def caller_location() -> SourceLocation | None:
    """Where user code called in: the innermost frame outside this project's runtime and
    transpiler packages (the line, and the column of the call expression)."""
    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        if not file.startswith(_OWN_DIRS):
            col, end_col = _columns(frame)
            return SourceLocation(file, frame.f_lineno, col, None, end_col)
        frame = frame.f_back
    return None


def _columns(frame) -> tuple[int, int | None]:
    """The column range of the call expression running in ``frame`` (its end only when
    the expression is on one line)."""
    try:
        line, end_line, col, end_col = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError, ValueError):
        return 0, None
    return col or 0, end_col if line == end_line and end_col else None


def _drop_first_parameter(build_fn: Callable) -> Callable:
    """An interface for ``build_fn(b, ...)``: the same parameters without the builder."""
    sig = inspect.signature(build_fn)
    params = list(sig.parameters.values())[1:]

    def interface(*args, **kwargs):  # pragma: no cover - only its signature is used
        raise NotImplementedError
    interface.__signature__ = sig.replace(parameters=params)
    interface.__name__ = getattr(build_fn, "__name__", "staged")
    return interface


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
    if hasattr(leaf, "__psc_escape__"):  # a `numpy_rules.masked.Masked`: says what it lacks
        leaf.__psc_escape__("returning it from the compiled function")
    raise PSCTypeError(f"result leaf {index} is a {type(leaf).__name__}, which is not an "
                       "array", hint="return arrays, numbers, or tuples/lists/dicts of them")


def staged(build_fn: Callable | None = None, **options):
    """Decorator form of `StagedFunction`: ``@staged`` or ``@staged(static_argnames=...)``."""
    if build_fn is None:
        return lambda fn: StagedFunction(fn, **options)
    return StagedFunction(build_fn, **options)


__all__ = ["StagedFunction", "staged", "static_parameters", "get_client", "host_results"]
