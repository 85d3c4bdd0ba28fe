"""One program on N devices: the classic pmap model (N replicas, one partition).

`compile_replicated` compiles a `Computation` built for one replica (its collectives over
all replicas: `runtime.primitives.collectives`) with ``num_replicas=N`` and a device
assignment naming the N devices in order, so replica ``i`` runs on ``devices[i]``.  The
resulting `ReplicatedExecutable` takes each argument as one global NumPy array with the
dimension it is split along (one part per replica; None: every replica gets all of it),
moves the parts to their devices as one jax array sharded over a one-dimensional
`jax.sharding.Mesh` (JAX's classes: jaxlib's ``execute_sharded`` takes each parameter's
per-device buffers as one such array), runs once on all N devices, and gives each output
back as a NumPy array with the replicas' parts along its dimension (None: replica 0's).
64-bit types are kept, as on one device (`runtime.client`).

This module is separate from `runtime.client` (one device) so that the multi-device path
touches nothing on the single-device one.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from jax._src import core
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from jaxlib import _jax

from . import lowering
from .builder import Builder
from .check_threading import thread_checks
from .checks import raise_first_failure
from .client import (compile_on_devices, lowering_platform, replicated_compile_options,
                     runtime_error)
from .errors import PSCUnsupportedCallError, PSCValueError
from .ir import Computation

_AXIS = "replicas"   # the mesh axis name of the shardings (internal)


@dataclasses.dataclass(frozen=True)
class Placement:
    """How one parameter or output is laid over the replicas: its global shape and the
    dimension its per-replica parts are stacked along (None: the same on every one)."""

    shape: tuple
    dtype: np.dtype
    dimension: int | None
    weak: bool = False


def check_devices(devices, count: int, what: str, backend=None) -> list:
    """``count`` devices: ``devices`` (exactly that many) or the first ``count`` of the
    backend's; more than there are is a `PSCValueError` saying how to get more on CPU."""
    if devices is not None:
        devices = list(devices)
        if len(devices) != count:
            raise PSCValueError(
                f"{what}: the mapped axis has size {count} but {len(devices)} devices were "
                "given", hint="pass as many devices as the mapped axis is long")
        if len({d.id for d in devices}) != count:
            raise PSCValueError(f"{what}: a device is given twice: {devices}")
        return devices
    from .placement import local_devices   # (placement imports client: no cycle, late)
    available = local_devices(backend=backend)
    if count > len(available):
        raise PSCValueError(
            f"{what}: the mapped axis has size {count}, more than the {len(available)} "
            f"available devices", hint="map an axis at most as long as transpiler.devices() "
            "(on CPU, XLA_FLAGS=--xla_force_host_platform_device_count=N before jax starts "
            "gives N devices)")
    if count < 1:
        raise PSCValueError(f"{what}: the mapped axis has size 0", hint="map a non-empty axis")
    return available[:count]


def stablehlo(computation: Computation, client, replicas: int) -> str:
    """The StableHLO text of ``computation`` as a program of ``replicas`` replicas."""
    return lowering.lower_to_stablehlo(computation, lowering_platform(client),
                                       replicas=replicas)


def compile_replicated(computation: Computation, devices, in_placements, out_placements):
    """``computation`` compiled to run once per device of ``devices`` (replica i on
    devices[i])."""
    devices = list(devices)
    client = devices[0].client
    sites = _thread_checks(computation)
    if sites is not None:   # each replica's failure code, stacked
        out_placements = [*out_placements, Placement((len(devices),), np.dtype(np.int32), 0)]
    text = stablehlo(computation, client, len(devices))
    if computation.host_callbacks:
        raise PSCUnsupportedCallError(f"{computation.name}: debug_print inside pmap is not "
                                      "supported", hint="print outside the mapped function")
    loaded = compile_on_devices(computation, client, text, devices,
                                replicated_compile_options(devices))
    return ReplicatedExecutable(computation, loaded, devices, text, in_placements,
                                out_placements, sites)


def _thread_checks(computation: Computation):
    """The guards of ``computation`` (`runtime.check_threading`) as one more output: each
    replica's failure code, as a one-element array (stacked over the replicas); the site
    table, or None where there are no guards."""
    sites = thread_checks(computation)
    if sites is not None:
        root = computation.region
        root.outputs[-1] = Builder.resume(root).reshape(root.outputs[-1], (1,))
    return sites


class ReplicatedExecutable:
    """A program compiled for N replicas; call it with one global array per parameter
    (the computation's large constants are passed to every replica by it)."""

    def __init__(self, computation, loaded, devices, text, in_placements, out_placements,
                 check_sites=None):
        self.computation = computation
        self.check_sites = check_sites
        self.loaded = loaded
        self.devices = devices
        self.stablehlo = text
        self.mesh = Mesh(np.array(devices, dtype=object), (_AXIS,))
        self.in_placements = list(in_placements)
        self.out_placements = list(out_placements)
        self._device_list = list(devices)
        constants = [Placement(c.shape, c.dtype, None) for c in computation.constants]
        self._const_arrays = [self._put(c, p, self._layout(p)) for c, p in
                              zip(computation.constants, constants)]
        # (per parameter: its abstract value and sharding, made once, not per call)
        self._in_layouts = [self._layout(p) for p in self.in_placements]
        self._handlers = [
            _jax.array_result_handler(
                core.ShapedArray(p.shape, p.dtype, weak_type=p.weak), self._sharding(p),
                committed=True, _skip_checks=True)
            for p in self.out_placements]

    def _sharding(self, placement: Placement) -> NamedSharding:
        if placement.dimension is None:
            return NamedSharding(self.mesh, PartitionSpec())
        return NamedSharding(self.mesh,
                             PartitionSpec(*([None] * placement.dimension), _AXIS))

    def _layout(self, placement: Placement):
        return core.ShapedArray(placement.shape, placement.dtype), self._sharding(placement)

    def _put(self, value, placement: Placement, layout):
        array = np.asarray(value, dtype=placement.dtype)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        n = len(self._device_list)
        if placement.dimension is None:
            parts = [array] * n
        else:   # n equal parts along the dimension (views; contiguous copies if needed)
            step = array.shape[placement.dimension] // n
            lead = (slice(None),) * placement.dimension
            parts = [array[lead + (slice(k * step, (k + 1) * step),)] for k in range(n)]
        parts = [np.ascontiguousarray(part) for part in parts]
        aval, sharding = layout
        return _jax.batched_device_put(aval, sharding, parts, self._device_list, True, False,
                                       _jax.HostBufferSemantics.ZERO_COPY, True)

    def __call__(self, *args, wait: bool = True) -> list:
        """The outputs as jax arrays laid out as `out_placements` say (``np.asarray``
        of one gives the global NumPy array); computed, unless ``wait`` is False (then
        a failed run is reported when a result is read, as with jax's asynchronous
        dispatch; programs with run-time checks are always waited for)."""
        arrays = [self._put(arg, p, layout) for arg, p, layout in
                  zip(args, self.in_placements, self._in_layouts)]
        try:
            outputs = self.loaded.execute_sharded(self._const_arrays + arrays)
            results = outputs.consume_with_handlers(self._handlers)
            if wait or self.check_sites is not None:
                for result in results:
                    result.block_until_ready()
        except _jax.JaxRuntimeError as err:
            raise runtime_error(self.computation.name, err) from None
        if self.check_sites is not None:   # the first replica's failure that happened
            codes = np.asarray(results.pop())
            failed = codes[codes != 0]
            raise_first_failure(self.check_sites, failed[0] if failed.size else 0)
        return results

    def as_hlo_text(self) -> str:
        """The optimized HLO XLA compiled."""
        return "\n\n".join(m.to_string() for m in self.loaded.hlo_modules())

    def __repr__(self) -> str:
        return f"ReplicatedExecutable({self.computation!r} on {len(self.devices)} devices)"
