"""Compiling and running computations with jaxlib's PJRT client.

`compile(computation)` lowers to StableHLO text, compiles it with the backend client of
`jax.extend.backend`, and wraps the loaded executable in an `Executable` that accepts
NumPy arrays, Python scalars and jax arrays.  Arguments are moved with jaxlib's
``batched_device_put`` with 64-bit types kept, so float64 stays float64 without touching
JAX's global ``jax_enable_x64`` flag.  On CPU a large NumPy array goes through
`runtime.staging` first: PJRT uses 64-byte-aligned host memory in place and copies other
arrays slowly, so those are copied into an aligned buffer fast and that one is used in place.
"""
from __future__ import annotations

import functools

import numpy as np
from jax._src import core
from jax.extend import backend as jax_backend
from jax.sharding import SingleDeviceSharding
from jaxlib import _jax

from . import executable_cache, lowering, staging, xla_options
from .errors import (PSCError, PSCResourceError, PSCShapeError, PSCTypeError,
                     PSCUnsupportedCallError, PSCValueError)
from .ir import Computation


def get_client(platform: str | None = None):
    """The PJRT client for ``platform`` (``"cpu"``, ``"gpu"``...; None: JAX's default)."""
    try:
        return _client(platform)
    except RuntimeError as err:   # jax's "Unknown backend", "failed to initialize"
        raise PSCValueError(f"backend {platform!r} is not available: {err}",
                            hint="leave backend=None for the default one") from None


@functools.lru_cache(maxsize=None)
def _client(platform: str | None):
    return jax_backend.get_backend(platform)


def lowering_platform(client) -> str:
    """The platform to lower for: the client's, with jaxlib's ``"gpu"`` (what it reports for
    its CUDA and ROCm clients) resolved to ``"cuda"`` or ``"rocm"``."""
    if client.platform != "gpu":
        return client.platform
    return "rocm" if "rocm" in str(client.platform_version).lower() else "cuda"


class XLACompileError(PSCError, RuntimeError):
    """XLA rejected a program the builder accepted: a bug in this project, not the user's."""

    kind = "internal compiler error"


class XLARuntimeError(PSCError, RuntimeError):
    """XLA failed while running a program (other than by running out of memory)."""

    kind = "runtime error"


def _out_of_memory(err: Exception) -> bool:
    return "RESOURCE_EXHAUSTED" in str(err)


def runtime_error(name: str, err: Exception) -> PSCError:
    """The `PSCError` for a ``JaxRuntimeError`` raised running (or moving data for) the
    program of function ``name``."""
    if _out_of_memory(err):
        return PSCResourceError(
            f"{name}: XLA ran out of memory running the program: {err}",
            hint="smaller arrays (or batches of them) may fit; f.compile(...).run_bytes() "
                 "is what a run allocates")
    return XLARuntimeError(f"{name}: XLA failed running the program: {err}")


@functools.lru_cache(maxsize=None)
def single_device_sharding(device) -> SingleDeviceSharding:
    """The (one, cached) ``SingleDeviceSharding`` of ``device``."""
    return SingleDeviceSharding(device)


def device_put(value, shape: tuple, dtype: np.dtype, device):
    """``value`` (array-like) on ``device`` with exactly ``dtype``; 64-bit types are kept."""
    if isinstance(value, _jax.ArrayImpl) and value.dtype == dtype and \
            value.sharding == single_device_sharding(device):
        return value
    if isinstance(value, np.ndarray) and device.platform == "cpu":
        value = np.asarray(value)   # (a memmap as a plain ndarray, no copy)
        if staging.needs_staging(value) and value.dtype.newbyteorder("=") == dtype:
            value = staging.stage(value, dtype)   # aligned: PJRT uses it in place
    array = np.asarray(value, dtype=dtype)
    return _jax.batched_device_put(core.ShapedArray(shape, dtype),
                                   single_device_sharding(device), [array], [device], True,
                                   False, _jax.HostBufferSemantics.ZERO_COPY, True)


def to_device(value, platform: str | None = None):
    """``value`` (array-like) as a jax array on the first device of ``platform``, with its
    dtype kept (float64 stays float64, as ``jax.device_put`` does only with x64 on): for
    inputs passed to many calls, which then copy nothing.  A NumPy array is copied (on CPU
    into aligned memory of the jax array's own, fast), so mutating it later leaves the
    jax array alone; a jax array already there is returned as it is."""
    device = get_client(platform).devices()[0]
    if isinstance(value, _jax.ArrayImpl):
        return device_put(value, value.shape, value.dtype, device)
    return private_device_copy(value, device)


def private_device_copy(value, device, committed: bool = True):
    """``value`` on ``device`` in memory of its own (never the caller's, even where PJRT
    could use that in place), dtype kept, in native byte order; ``committed`` there
    (calls taking it run there) or not."""
    array = np.asarray(value)
    dtype = array.dtype.newbyteorder("=")
    if device.platform == "cpu":
        array = staging.private_copy(array, dtype)   # the jax array's alone: used in place
    else:
        array = np.asarray(array, dtype=dtype)
    return _jax.batched_device_put(core.ShapedArray(array.shape, dtype),
                                   single_device_sharding(device), [array], [device],
                                   committed, False, _jax.HostBufferSemantics.ZERO_COPY, True)


class Executable:
    """A compiled computation: call it with one array-like per parameter after its large
    constants (`Computation.constants`, moved to the device once, here: `const_buffers`).

    Returns a list of jax arrays (``np.asarray`` gives NumPy arrays without a copy on CPU).
    """

    def __init__(self, computation: Computation, loaded, client, device):
        self.computation = computation
        self.loaded = loaded
        self.client = client
        self.device = device
        # Memory of their own, held as long as the executable: not the staging pool's
        # (which keeps warm buffers for calls), nor the builder's snapshot.
        self.const_buffers = [private_device_copy(c, device) for c in computation.constants]
        self.in_avals = [(v.shape, v.dtype)
                         for v in computation.params[len(computation.constants):]]
        self.out_avals = [(v.shape, v.dtype) for v in computation.outputs]
        self.out_weak = [v.weak for v in computation.outputs]
        self.sharding = single_device_sharding(device)
        # The outputs' abstract values as jax sees them (dtype, shape, weak type).
        self.out_shaped_arrays = [core.ShapedArray(shape, dtype, weak_type=weak)
                                  for (shape, dtype), weak in zip(self.out_avals, self.out_weak)]
        self._handlers = self._result_handlers(committed=True)
        # Results of calls with no argument committed anywhere: uncommitted, as jax.jit's
        # are, so a later call may move them to the device its other arguments are on.
        self._uncommitted_handlers = self._result_handlers(committed=False)

    def _result_handlers(self, committed: bool) -> list:
        return [_jax.array_result_handler(aval, self.sharding, committed=committed,
                                          _skip_checks=True)
                for aval in self.out_shaped_arrays]

    def __call__(self, *args):
        if len(args) != len(self.in_avals):
            raise PSCTypeError(f"{self.computation.name} takes {len(self.in_avals)} "
                               f"arguments, got {len(args)}")
        buffers = [self._put(i, arg, shape, dtype)
                   for i, (arg, (shape, dtype)) in enumerate(zip(args, self.in_avals))]
        return self.execute(self.const_buffers + buffers)

    def execute(self, buffers, committed: bool = True):
        """Run on one buffer per parameter (as `device_put` returns them), the large
        constants' `const_buffers` first; the results are ``committed`` to the device."""
        handlers = self._handlers if committed else self._uncommitted_handlers
        return self.loaded.execute_sharded(buffers).consume_with_handlers(handlers)

    def _put(self, i, arg, shape, dtype):
        arg_shape = tuple(np.shape(arg))
        if arg_shape != shape:
            raise PSCShapeError(f"argument {i} has shape {arg_shape}, but the computation "
                                f"was built for {shape}")
        arg_dtype = getattr(arg, "dtype", None)
        if arg_dtype is not None and np.dtype(arg_dtype).newbyteorder("=") != dtype:
            raise PSCTypeError(f"argument {i} has dtype {arg_dtype}, but the computation "
                               f"was built for {dtype}")
        return device_put(arg, shape, dtype, self.device)

    @property
    def stablehlo(self) -> str:
        return lowering.lower_to_stablehlo(self.computation, lowering_platform(self.client))

    def as_hlo_text(self) -> str:
        """The optimized HLO XLA compiled (after fusion)."""
        return "\n\n".join(m.to_string() for m in self.loaded.hlo_modules())

    def run_bytes(self) -> int:
        """The memory a run allocates: outputs and temporaries, as XLA planned them."""
        try:
            stats = self.loaded.get_compiled_memory_stats()
        except Exception:   # a backend without statistics: assume the worst
            return 1 << 62
        return stats.output_size_in_bytes + stats.temp_size_in_bytes

    def cost_analysis(self) -> dict:
        return dict(self.loaded.cost_analysis())

    def __repr__(self) -> str:
        return f"Executable({self.computation!r} on {self.device})"


def _compile_with_callbacks(client, device, text: str, computation: Computation):
    """A program with host callbacks (`runtime.primitives.callbacks`): jaxlib takes the
    Python functions only with a parsed MLIR module (jaxlib's own MLIR bindings: a parser,
    no tracing), and keeps them registered with the executable."""
    if client.platform != "cpu":
        raise PSCUnsupportedCallError(
            f"{computation.name}: debug_print runs on the CPU backend only (this program is "
            f"compiled for {client.platform})", hint="run on CPU to print from compiled code")
    from jaxlib.mlir import ir   # loaded only by programs that print  # noqa: PLC0415
    with _mlir_context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as err:
            raise XLACompileError(f"the program built for {computation.name} does not "
                                  f"parse: {err}", hint="this is a bug in psc-transpiler; "
                                  "please report it") from None
        return client.compile_and_load(module, _jax.DeviceList((device,)),
                                       _compile_options(device),
                                       host_callbacks=list(computation.host_callbacks))


def _compile_options(device) -> _jax.CompileOptions:
    """Options that run the program on ``device``: XLA's default device assignment is
    the client's first device, whichever device list the program is loaded for."""
    options = xla_options.base_options(device.platform)
    options.executable_build_options.device_assignment = _jax.DeviceAssignment.create(
        np.array([[device.id]]))
    return options


@functools.lru_cache(maxsize=1)
def _mlir_context():
    from jaxlib.mlir import ir   # noqa: PLC0415
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext   # noqa: PLC0415
    from jaxlib.mlir.dialects import chlo, stablehlo   # noqa: PLC0415
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    chlo.register_dialect(context)
    return context


def compile(computation: Computation, platform: str | None = None,
            device=None) -> Executable:
    """Compile ``computation`` for ``device`` (None: the first device of ``platform``)."""
    if device is None:
        client = get_client(platform)
        device = client.devices()[0]
    else:
        client = device.client
    text = lowering.lower_to_stablehlo(computation, lowering_platform(client))
    if computation.host_callbacks:   # its Python callbacks cannot be serialized
        loaded = _compile_or_raise(computation, lambda: _compile_with_callbacks(
            client, device, text, computation))
    else:
        loaded = _cached_or_compiled(client, device, text, computation)
    return Executable(computation, loaded, client, device)


def _cached_or_compiled(client, device, text: str, computation: Computation):
    """The executable of ``text``: from the persistent cache (`runtime.executable_cache`)
    when an earlier process compiled it, else compiled by XLA and stored there."""
    options = _compile_options(device)
    key = None
    if executable_cache.STORE.enabled():
        key = executable_cache.executable_key(client, device, text, options)
        loaded = executable_cache.load(client, device, key, options)
        if loaded is not None:
            return loaded
    loaded = _compile_or_raise(computation, lambda: client.compile_and_load(
        text, _jax.DeviceList((device,)), options))
    if key is not None:
        executable_cache.store(key, loaded)
    return loaded


def _compile_or_raise(computation: Computation, compile_it):
    """``compile_it()``, with XLA's errors as `PSCError`s."""
    try:
        return compile_it()
    except _jax.JaxRuntimeError as err:
        if _out_of_memory(err):
            raise PSCResourceError(f"{computation.name}: XLA ran out of memory compiling "
                                   f"the program: {err}") from None
        raise XLACompileError(
            f"XLA rejected the program built for {computation.name}: {err}",
            hint="this is a bug in psc-transpiler; please report it with the StableHLO "
                 "from f.lower(...)") from None


# --- SPMD (runtime.spmd): one program partitioned over several devices ------------------

def partitioned_compile_options(devices, propagate_to_outputs, shardy: bool):
    """Options for XLA's SPMD partitioner over ``devices`` (a mesh's, in its order: the
    device assignment of partitions 0..n-1); ``propagate_to_outputs`` says, per result,
    whether the partitioner chooses its sharding (no ``out_shardings`` entry for it)."""
    options = xla_options.base_options(devices[0].platform)
    options.num_replicas = 1
    options.num_partitions = len(devices)
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    build.allow_spmd_sharding_propagation_to_output = list(propagate_to_outputs)
    options.device_assignment = _jax.DeviceAssignment.create(
        np.array([[d.id for d in devices]]))
    return options


def compile_partitioned(computation: Computation, client, text: str, devices,
                        propagate_to_outputs, shardy: bool):
    """The loaded executable of the SPMD program ``text`` over ``devices``."""
    options = partitioned_compile_options(devices, propagate_to_outputs, shardy)
    return compile_on_devices(computation, client, text, devices, options)


# --- replicated programs (runtime.replicated, pmap): one program run once per device -----

def replicated_compile_options(devices):
    """Options for a program of ``len(devices)`` replicas, replica i on ``devices[i]``."""
    options = xla_options.base_options(devices[0].platform)
    build = options.executable_build_options
    build.num_replicas = len(devices)
    build.num_partitions = 1
    build.device_assignment = _jax.DeviceAssignment.create(
        np.array([[d.id] for d in devices]))
    return options


def compile_on_devices(computation: Computation, client, text: str, devices, options):
    """The loaded executable of the multi-device program ``text`` (XLA's refusals as our
    bug report, as for one device)."""
    return _compile_or_raise(computation, lambda: client.compile_and_load(
        text, _jax.DeviceList(tuple(devices)), options))
