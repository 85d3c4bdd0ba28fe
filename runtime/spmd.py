"""SPMD: one logical program partitioned over a mesh of devices by XLA's SPMD partitioner.

``jit_ps(f, in_shardings=..., out_shardings=...)`` takes JAX's own sharding classes
(``jax.sharding.NamedSharding`` over a ``Mesh`` with a ``PartitionSpec``, and
``SingleDeviceSharding``).  A call's `SpmdLayout` — the mesh, one sharding per traced leaf,
the requested output shardings, and the partitioner — joins its `Signature`.  The program
is built once, as for one device; its StableHLO carries the shardings as attributes of
``@main``'s arguments and results (and of ``with_sharding_constraint``'s op), and XLA
partitions it (`runtime.client.compile_partitioned`: ``num_partitions`` = the mesh's size,
``use_spmd_partitioning``, the mesh's devices as the device assignment).

Two attribute dialects, as jax picks them (``jax_use_shardy_partitioner``, on by default
in jax 0.10.2): Shardy's ``sdy`` (a ``sdy.mesh`` symbol, ``sdy.sharding`` attributes,
``sdy.sharding_constraint``) or GSPMD's ``mhlo.sharding`` strings (jax's own
``HloSharding`` text) with the ``@Sharding`` custom call.  Both are plain text, so both
fit the text-StableHLO path; XLA parses either.

Inputs are put per their sharding: a NumPy array (the *global* value: under several
processes each passes the same array) is cut into the shards of this process's devices; a
jax array already with that sharding is passed as it is; one with another sharding is
gathered and cut again (single process only).  Results are jax arrays with their
shardings: the requested ``out_shardings``, or what the partitioner chose, read back from
the executable as a ``NamedSharding`` on the mesh.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from typing import Any

import numpy as np
from jax._src import config as jax_config
from jax._src import core
from jax._src import tree_util as jax_tree_util
from jax._src.sharding_impls import parse_flatten_op_sharding
from jax.sharding import (Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
                          get_mesh)
from jaxlib import _hlo, _jax

from . import lowering, staging
from .client import Executable, compile_partitioned, lowering_platform
from .context import current_builder, has_builder
from .errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from .ir import Value

_ArrayImpl = _jax.ArrayImpl
_MESH_NAME = "mesh"
_NAMED_HINT = "shard over a Mesh: NamedSharding(Mesh(devices, axis_names), PartitionSpec(...))"


class _Unspecified:
    """An argument or result without a requested sharding (``None`` in a shardings tree)."""

    def __repr__(self):
        return "UNSPECIFIED"


UNSPECIFIED = _Unspecified()


@dataclasses.dataclass(frozen=True)
class ShardingsSpec:
    """The ``in_shardings``/``out_shardings`` a function was given, as a hashable prefix
    tree: its structure and its leaves (a ``Sharding``, or `UNSPECIFIED`)."""

    treedef: Any
    leaves: tuple

    def broadcast(self, full_tree, what: str, of: str) -> list:
        """One leaf per leaf of ``full_tree`` (this tree is its prefix, as in jax.jit);
        ``what`` names the shardings and ``of`` what they are for, in errors."""
        prefix = self.treedef.unflatten(self.leaves)
        if self.treedef.num_nodes == 1 and self.treedef.num_leaves == 1:
            return list(self.leaves) * len(jax_tree_util.tree_leaves(full_tree))
        try:
            return jax_tree_util.broadcast_prefix(
                prefix, full_tree, is_leaf=lambda x: x is UNSPECIFIED)
        except ValueError as err:
            raise PSCValueError(
                f"{what} does not match the structure of the {of}: {err}",
                hint=f"give one sharding per {of[:-1]} (a tuple), a pytree prefix of "
                     "them, or one sharding for all") from None


# The mesh of the SPMD program being built: what a bare PartitionSpec given to
# with_sharding_constraint refers to when no jax.set_mesh context names one.
_PROGRAM_MESH = contextvars.ContextVar("psc_program_mesh", default=None)


@contextlib.contextmanager
def building_on(mesh: Mesh):
    """Within: an SPMD program over ``mesh`` is being built."""
    token = _PROGRAM_MESH.set(mesh)
    try:
        yield
    finally:
        _PROGRAM_MESH.reset(token)


def named(spec: PartitionSpec, what: str, program_mesh: Mesh | None = None) -> NamedSharding:
    """A bare ``PartitionSpec`` on the mesh of jax's ``jax.set_mesh`` context (as jax reads
    one), else on ``program_mesh``."""
    mesh = get_mesh()
    if mesh.empty:
        mesh = program_mesh
    if mesh is None:
        raise PSCTypeError(f"{what}: a bare PartitionSpec names no mesh",
                           hint=f"wrap it: NamedSharding(mesh, {spec}), or apply it inside "
                                "`with jax.set_mesh(mesh):`")
    return NamedSharding(mesh, spec)


def shardings_spec(value, what: str,
                   program_mesh: Mesh | None = None) -> ShardingsSpec | None:
    """``in_shardings``/``out_shardings`` as given to ``jit_ps`` (or the shardings of a
    constraint), checked and frozen; a bare ``PartitionSpec`` is put on the mesh `named`
    finds now."""
    if value is None:
        return None
    leaves, treedef = jax_tree_util.tree_flatten(
        value, is_leaf=lambda x: x is None or isinstance(x, (Sharding, PartitionSpec)))
    checked = []
    for leaf in leaves:
        if leaf is None:
            checked.append(UNSPECIFIED)
        elif isinstance(leaf, PartitionSpec):
            checked.append(named(leaf, what, program_mesh))
        elif isinstance(leaf, (NamedSharding, SingleDeviceSharding)):
            checked.append(leaf)
        else:
            raise PSCTypeError(f"{what}: expected jax.sharding.NamedSharding "
                               f"or SingleDeviceSharding objects, got {type(leaf).__name__}",
                               hint=_NAMED_HINT)
    return ShardingsSpec(treedef, tuple(checked))


def single_device(*specs) -> Any:
    """The device when every sharding given is a ``SingleDeviceSharding`` of one device
    (the call is then placed as with ``jit_ps(device=...)``), else None."""
    shardings = [s for spec in specs if spec is not None for s in spec.leaves
                 if s is not UNSPECIFIED]
    if not shardings or not all(isinstance(s, SingleDeviceSharding) for s in shardings):
        return None
    found = {next(iter(s.device_set)) for s in shardings}
    if len(found) != 1:
        raise PSCValueError(f"the shardings name {len(found)} different devices: "
                            f"{sorted(str(d) for d in found)}", hint=_NAMED_HINT)
    return found.pop()


@dataclasses.dataclass(frozen=True)
class SpmdLayout:
    """The SPMD part of a `Signature`: the mesh, one ``NamedSharding`` per traced leaf, the
    requested output shardings, and the attribute dialect (Shardy or GSPMD)."""

    mesh: Mesh
    in_shardings: tuple
    out_spec: ShardingsSpec | None
    shardy: bool

    @property
    def devices(self) -> list:
        return list(self.mesh.devices.flat)

    def replicated(self) -> NamedSharding:
        return NamedSharding(self.mesh, PartitionSpec())


def is_sharded(leaf) -> bool:
    """A jax array spread over more than one device."""
    return type(leaf) is _ArrayImpl and len(leaf.sharding.device_set) > 1


def call_layout(in_spec, out_spec, traced, leaves, specs, describe) -> SpmdLayout:
    """The layout of a call with traced arguments ``traced`` (flattened: ``leaves``, whose
    `LeafSpec`s are ``specs``); ``describe(i)`` names leaf ``i`` in errors."""
    wanted = [UNSPECIFIED] * len(leaves) if in_spec is None else \
        in_spec.broadcast(tuple(traced), "in_shardings", "traced arguments")
    mesh = _common_mesh(in_spec, out_spec, leaves, describe)
    shardings = []
    for i, (sharding, leaf, spec) in enumerate(zip(wanted, leaves, specs)):
        if sharding is UNSPECIFIED:
            sharding = _inferred(leaf, mesh)
        sharding = on_mesh(sharding, mesh, describe(i))
        check_fits(sharding, spec.shape, describe(i))
        shardings.append(sharding)
    return SpmdLayout(mesh, tuple(shardings), out_spec,
                      bool(jax_config.use_shardy_partitioner.value))


def _common_mesh(in_spec, out_spec, leaves, describe) -> Mesh:
    """The one mesh of the given shardings (else of the sharded arguments)."""
    meshes = {}
    for spec, what in ((in_spec, "in_shardings"), (out_spec, "out_shardings")):
        for s in (spec.leaves if spec is not None else ()):
            if isinstance(s, NamedSharding):
                meshes.setdefault(s.mesh, what)
    if not meshes:
        for i, leaf in enumerate(leaves):
            if is_sharded(leaf):
                if not isinstance(leaf.sharding, NamedSharding):
                    raise PSCTypeError(f"{describe(i)} has a {type(leaf.sharding).__name__}",
                                       hint=_NAMED_HINT)
                meshes.setdefault(leaf.sharding.mesh, describe(i))
    if len(meshes) != 1:
        raise PSCValueError(
            f"the shardings are over {len(meshes)} different meshes"
            if meshes else "no sharding names a mesh",
            hint="use one Mesh for every NamedSharding of a function")
    return next(iter(meshes))


def _inferred(leaf, mesh: Mesh) -> Sharding:
    """An argument without a requested sharding: a jax array sharded on the mesh keeps its
    sharding; anything else is replicated."""
    if is_sharded(leaf) and isinstance(leaf.sharding, NamedSharding) and \
            leaf.sharding.mesh == mesh:
        return leaf.sharding
    return NamedSharding(mesh, PartitionSpec())


def on_mesh(sharding: Sharding, mesh: Mesh, what: str) -> NamedSharding:
    """``sharding`` as a ``NamedSharding`` of ``mesh`` (a ``SingleDeviceSharding`` fits
    only a one-device mesh of that device)."""
    if isinstance(sharding, NamedSharding):
        if sharding.mesh != mesh:
            raise PSCValueError(f"{what}: its sharding is over another mesh "
                                f"({dict(sharding.mesh.shape)}) than the program's "
                                f"({dict(mesh.shape)})",
                                hint="use one Mesh for every NamedSharding of a function")
        return sharding
    if set(sharding.device_set) == set(mesh.devices.flat):
        return NamedSharding(mesh, PartitionSpec())
    raise PSCValueError(f"{what}: a SingleDeviceSharding on {next(iter(sharding.device_set))}"
                        f" does not fit a program over {mesh.size} devices", hint=_NAMED_HINT)


def check_fits(sharding: NamedSharding, shape: tuple, what: str) -> None:
    """A clear error for a sharding that cannot split an array of ``shape``: more
    partitioned dimensions than the array has, a mesh axis the mesh lacks, or a dimension
    the axes' sizes do not divide."""
    spec = tuple(sharding.spec)
    if len(spec) > len(shape):
        raise PSCValueError(
            f"{what}: {sharding.spec} partitions {len(spec)} dimensions, but the array has "
            f"rank {len(shape)} (shape {shape})",
            hint="give at most one PartitionSpec entry per dimension")
    sizes = dict(sharding.mesh.shape)
    for dim, entry in enumerate(spec):
        axes = axis_names(entry)
        unknown = [a for a in axes if a not in sizes]
        if unknown:
            raise PSCValueError(f"{what}: mesh axis {unknown[0]!r} is not one of the mesh's "
                                f"axes {tuple(sizes)}", hint="name an axis of the Mesh")
        parts = math.prod(sizes[a] for a in axes)
        if shape[dim] % parts:
            raise PSCValueError(
                f"{what}: dimension {dim} of shape {shape} has size {shape[dim]}, which "
                f"the {parts} devices of mesh axes {axes} do not divide",
                hint="pad the array, or shard another dimension")


def axis_names(entry) -> tuple:
    """The mesh axes one ``PartitionSpec`` entry names."""
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


# --- lowering ----------------------------------------------------------------------------

class SpmdLowering:
    """What `runtime.lowering` prints for an SPMD program: the module's partition count,
    the mesh declaration (Shardy), and each sharding's attribute text."""

    def __init__(self, mesh: Mesh, shardy: bool):
        self.mesh, self.shardy = mesh, shardy

    def module_attrs(self) -> str:
        return f"mhlo.num_partitions = {self.mesh.size} : i32, mhlo.num_replicas = 1 : i32"

    def preamble(self) -> list:
        if not self.shardy:
            return []
        axes = ", ".join(f'"{name}"={size}' for name, size in self.mesh.shape.items())
        return [f"  sdy.mesh @{_MESH_NAME} = <[{axes}]>"]

    def sharding_text(self, sharding: NamedSharding, ndim: int) -> str:
        """Shardy's ``#sdy.sharding<...>``, or GSPMD's quoted ``HloSharding`` string."""
        if self.shardy:
            entries = tuple(sharding.spec) + (None,) * (ndim - len(sharding.spec))
            text = ", ".join("{?}" if entry is PartitionSpec.UNCONSTRAINED else
                             "{" + ", ".join(f'"{a}"' for a in axis_names(entry)) + "}"
                             for entry in entries)
            return f"#sdy.sharding<@{_MESH_NAME}, [{text}]>"
        return '"' + str(sharding._to_xla_hlo_sharding(ndim)) + '"'

    def attribute(self, sharding: NamedSharding, ndim: int) -> str:
        """The attribute of a function argument or result."""
        key = "sdy.sharding" if self.shardy else "mhlo.sharding"
        return f"{key} = {self.sharding_text(sharding, ndim)}"


# --- compiling and running -----------------------------------------------------------------

class SpmdExecutable(Executable):
    """A partitioned executable: takes and returns global jax arrays with their
    shardings (`SpmdLayout`); its large constants are replicated on every device.
    `Executable`'s inspection methods (``as_hlo_text``, ``run_bytes``,
    ``cost_analysis``) serve as they are; its constructor's one-device set-up does not,
    so this one sets every field itself (``device`` and ``sharding`` are None)."""

    def __init__(self, computation, loaded, client, layout: SpmdLayout, requested,
                 out_shardings):
        self.computation, self.loaded, self.client = computation, loaded, client
        self.layout = layout
        self.requested = list(requested)   # the out_shardings asked for, or UNSPECIFIED
        self.device = None
        n_const = len(computation.constants)
        replicated = layout.replicated()
        self.param_shardings = [replicated] * n_const + list(layout.in_shardings)
        self.const_buffers = [put(c, replicated) for c in computation.constants]
        self.in_avals = [(v.shape, v.dtype) for v in computation.params[n_const:]]
        self.out_avals = [(v.shape, v.dtype) for v in computation.outputs]
        self.out_weak = [v.weak for v in computation.outputs]
        self.out_shardings = list(out_shardings)
        self.sharding = None
        self.out_shaped_arrays = [core.ShapedArray(shape, dtype, weak_type=weak)
                                  for (shape, dtype), weak in zip(self.out_avals, self.out_weak)]
        self._handlers = [_jax.array_result_handler(aval, sharding, committed=True,
                                                    _skip_checks=True)
                          for aval, sharding in zip(self.out_shaped_arrays, out_shardings)]
        self._uncommitted_handlers = self._handlers

    def put_arguments(self, leaves, specs) -> list:
        """The traced leaves as jax arrays with their shardings, constants first."""
        return self.const_buffers + [
            put(leaf, sharding, spec.dtype)
            for leaf, spec, sharding in zip(leaves, specs, self.layout.in_shardings)]

    def _put(self, i, arg, shape, dtype):
        return put(arg, self.layout.in_shardings[i], dtype)

    @property
    def stablehlo(self) -> str:
        return lower(self.computation, self.client, self.layout, self.requested)

    def __repr__(self) -> str:
        return f"SpmdExecutable({self.computation!r} on mesh {dict(self.layout.mesh.shape)})"


def lower(computation, client, layout: SpmdLayout, out_shardings) -> str:
    """The StableHLO text of ``computation`` with its arguments' shardings and the
    requested ``out_shardings`` (one per output, or `UNSPECIFIED`) as attributes."""
    spmd = SpmdLowering(layout.mesh, layout.shardy)
    n_const = len(computation.constants)
    args = [layout.replicated()] * n_const + list(layout.in_shardings)
    arg_attrs = [spmd.attribute(s, len(v.shape)) for s, v in zip(args, computation.params)]
    out_attrs = [None if s is UNSPECIFIED else spmd.attribute(s, len(v.shape))
                 for s, v in zip(out_shardings, computation.outputs)]
    return lowering.lower_to_stablehlo(computation, lowering_platform(client),
                                       spmd=spmd, arg_attrs=arg_attrs, out_attrs=out_attrs)


def requested_out_shardings(layout: SpmdLayout, computation, out_treedef) -> list:
    """One requested sharding (or `UNSPECIFIED`) per output of ``computation``, whose
    results have the pytree structure ``out_treedef``."""
    n_out = out_treedef.num_leaves
    extra = [layout.replicated()] * (len(computation.outputs) - n_out)   # (checks' code)
    if layout.out_spec is None:
        return [UNSPECIFIED] * n_out + extra
    outputs = out_treedef.unflatten([0] * n_out)
    wanted = layout.out_spec.broadcast(outputs, "out_shardings", "results")
    return [s if s is UNSPECIFIED else on_mesh(s, layout.mesh, f"result {i}")
            for i, s in enumerate(wanted)] + extra


def compile(computation, layout: SpmdLayout, out_treedef) -> SpmdExecutable:
    """Partition and compile ``computation`` over the layout's mesh; its results (after
    any the compiler added, such as run-time checks' failure code) have the pytree
    structure ``out_treedef``."""
    client = layout.devices[0].client
    wanted = requested_out_shardings(layout, computation, out_treedef)
    for sharding, value, i in zip(wanted, computation.outputs, range(len(wanted))):
        if sharding is not UNSPECIFIED:
            check_fits(sharding, value.shape, f"result {i}")
    text = lower(computation, client, layout, wanted)
    if computation.host_callbacks:   # (set by the lowering)
        raise PSCUnsupportedCallError(f"{computation.name}: debug_print inside an SPMD "
                                      "program is not supported",
                                      hint="return the value instead")
    loaded = compile_partitioned(computation, client, text, layout.devices,
                                 [s is UNSPECIFIED for s in wanted], layout.shardy)
    chosen = loaded.get_output_shardings()   # (None for a one-device program)
    out_shardings = [s if s is not UNSPECIFIED else
                     layout.replicated() if chosen is None else _named(chosen[i], layout.mesh)
                     for i, s in enumerate(wanted)]
    return SpmdExecutable(computation, loaded, client, layout, wanted, out_shardings)


def _named(op_sharding, mesh: Mesh) -> NamedSharding:
    """The partitioner's choice for a result, as a ``NamedSharding`` on the mesh."""
    hlo = _hlo.HloSharding.from_proto(op_sharding)
    return NamedSharding(mesh, parse_flatten_op_sharding(hlo, mesh)[0])


def laid_out_as(array, sharding) -> bool:
    """Whether the jax array ``array`` already lies as ``sharding`` says (that sharding,
    or an equivalent one: a one-device array for a mesh of that one device)."""
    return array.sharding == sharding or array.sharding.is_equivalent_to(sharding, array.ndim)


def put(value, sharding: NamedSharding, dtype=None):
    """``value`` as a global jax array with ``sharding``, 64-bit types kept: a jax array
    with that sharding as it is; otherwise the shards of this process's devices are cut
    from the global value (a jax array on another sharding is gathered first)."""
    if type(value) is _ArrayImpl:
        if (dtype is None or value.dtype == dtype) and laid_out_as(value, sharding):
            return value
        if not value.is_fully_addressable:
            raise PSCValueError(
                f"an argument sharded as {value.sharding} is needed as {sharding}, which "
                "across processes is not done implicitly",
                hint="pass it with the sharding the function asks for")
    array = np.asarray(value, dtype=dtype)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    indices = sharding.addressable_devices_indices_map(array.shape)
    devices = list(indices)
    # Each shard a copy of its own (PJRT may use it in place: never the caller's memory).
    shards = [staging.private_copy(array[indices[d]], array.dtype)
              if d.platform == "cpu" else np.ascontiguousarray(array[indices[d]])
              for d in devices]
    return _jax.batched_device_put(core.ShapedArray(array.shape, array.dtype), sharding,
                                   shards, devices, True, False,
                                   _jax.HostBufferSemantics.ZERO_COPY, True)


__all__ = ["ShardingsSpec", "SpmdLayout", "SpmdExecutable", "SpmdLowering", "shardings_spec",
           "single_device", "call_layout", "check_fits", "compile", "put", "is_sharded",
           "laid_out_as"]


# --- with_sharding_constraint ------------------------------------------------------------

def with_sharding_constraint(x, shardings):
    """``x`` (a pytree), constrained to be laid out as ``shardings`` (one ``NamedSharding``
    for every leaf, or a pytree prefix of ``x``), as ``jax.lax.with_sharding_constraint``:
    in a partitioned program it tells XLA's partitioner where to split; its values are
    ``x``'s.  Outside a program, the arrays are put with those shardings."""
    spec = shardings_spec(shardings, "with_sharding_constraint", _PROGRAM_MESH.get())
    leaves, treedef = jax_tree_util.tree_flatten(x)
    wanted = spec.broadcast(x, "with_sharding_constraint", "operands")
    for s in wanted:
        if not isinstance(s, NamedSharding):
            raise PSCTypeError("with_sharding_constraint: expected NamedSharding objects, "
                               f"got {s}", hint=_NAMED_HINT)
    if not has_builder():
        return treedef.unflatten([put(leaf, s, getattr(leaf, "dtype", None))
                                  for leaf, s in zip(leaves, wanted)])
    b = current_builder()
    return treedef.unflatten([
        b.emit("sharding_constraint", [leaf], sharding=s)[0] if isinstance(leaf, Value)
        else leaf for leaf, s in zip(leaves, wanted)])


with_sharding_constraint.__psc_primitive__ = True
