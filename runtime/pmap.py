"""``pmap``, JAX's parallel map, with JAX's signature: one program on N devices.

``pmap(f, axis_name="i")(xs)`` runs ``f`` once per device on its slice of ``xs`` along the
mapped axis (``in_axes``), with the collectives of `runtime.collectives` over
``axis_name`` available inside ``f``.  Called from plain Python, ``f`` (PSC code: Python
control flow works as in ``jit_ps``) is traced on one slice's shapes into one program in
which the axis is bound to the replicas (`runtime.axes`); that program is compiled for N
replicas with a device assignment (`runtime.replicated`: the classic pmap model) and
launched once on the N devices, each argument split along its mapped axis into per-device
buffers; the results are reassembled along ``out_axes`` as NumPy arrays (float64 kept).
Programs are cached per argument signature, static arguments and devices.

Inside a PSC function being built (``jit_ps`` calling a pmapped function, ``grad`` or
``vmap`` of one) the surrounding program runs on one device, so ``pmap`` is what it means
there: ``vmap`` with the same axis name (the collectives become batch-dimension
operations) — the values are the same, as in JAX.

Semantics follow jax 0.10.2's ``pmap``: ``in_axes`` is an int, None, or a tuple with one
pytree prefix per positional argument; ``out_axes`` likewise for the output (None: the
output is the same on every device and is returned once — replica 0's);
``static_broadcasted_argnums`` are passed to ``f`` as they are (hashable; part of the
cache key); ``devices`` are the devices to run on (as many as the mapped axis is long;
default: the backend's first ones).  A mapped axis longer than the devices available, or
of another length than ``devices``, is a `PSCValueError`.
"""
from __future__ import annotations

import functools

import numpy as np
from jax import tree_util

from .axes import bind_axis
from .builder import Builder
from .cache import LRUCache
from .calls import transpiled
from .context import building, has_builder
from .errors import PSCError, PSCTypeError, PSCValueError
from .if_conversion import convert_ifs
from .ir import Value
from .replicated import Placement, check_devices, compile_replicated
from .signature import leaf_spec, static_key
from .staged import caller_location, host_results
from .tracebacks import hide_internal_frames


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


@_primitive
def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         return_device_arrays=False):
    """``fun`` mapped over an axis of its arguments, one device per slice (JAX's pmap);
    see the module docstring.  ``@pmap``, ``pmap(f, "i")`` or
    ``functools.partial(pmap, axis_name="i")`` as a decorator.  Results are NumPy arrays,
    as `jit_ps`'s; ``return_device_arrays=True`` keeps the jax arrays, sharded over the
    devices, without waiting for them (for chaining calls)."""
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, backend=backend, axis_size=axis_size,
                                 donate_argnums=donate_argnums,
                                 return_device_arrays=return_device_arrays)
    return PmapFunction(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums,
                        devices, backend, axis_size, bool(return_device_arrays))


def _error(cls, message, hint=None):
    return cls(message, location=caller_location(), hint=hint)


class PmapFunction:
    """A pmapped function: call it like ``fun``; compiled per signature for N devices."""

    __psc_primitive__ = True   # PSC code calls it as it is (inside a build: vmap)

    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, backend,
                 axis_size, return_device_arrays=False):
        if not callable(fun):
            raise _error(PSCTypeError, f"pmap needs a function, got {type(fun).__name__}")
        try:
            hash(axis_name)
        except TypeError:
            raise _error(PSCTypeError, f"pmap axis_name must be hashable, got "
                         f"{type(axis_name).__name__}") from None
        if devices is not None and backend is not None:
            raise _error(PSCValueError, "pmap: pass devices or a backend, not both",
                         "the devices name their backend")
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self.out_axes = out_axes
        static = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
        self.static_argnums = tuple(sorted({int(i) for i in static}))
        self.devices = None if devices is None else list(devices)
        self.backend = backend
        self.axis_size = axis_size
        self.return_device_arrays = return_device_arrays
        self.name = getattr(fun, "__name__", "pmapped")
        self._cache = LRUCache(64)
        functools.update_wrapper(self, fun, updated=())

    def __repr__(self) -> str:
        return f"<pmap of {self.name} over {self.axis_name!r}>"

    # --- calling --------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if has_builder():
            return self._as_vmap(args, kwargs)
        try:
            compiled, leaves = self._compiled(args, kwargs)
            results = compiled.executable(*compiled.arguments(leaves),
                                          wait=not self.return_device_arrays)
            results = tree_util.tree_unflatten(compiled.out_treedef, results)
            return results if self.return_device_arrays else host_results(results)
        except PSCError as err:
            if err.location is None:
                err.location = caller_location()
            hide_internal_frames(err)
            raise

    def lower(self, *args, **kwargs) -> str:
        """The StableHLO text compiled for these arguments (a program of N replicas)."""
        return self._compiled(args, kwargs)[0].executable.stablehlo

    def compile(self, *args, **kwargs):
        """The `runtime.replicated.ReplicatedExecutable` for these arguments."""
        return self._compiled(args, kwargs)[0].executable

    def _as_vmap(self, args, kwargs):
        """Inside a build: the vmap with this axis name (one device runs the program)."""
        from .vmap import vmap   # (vmap imports the autodiff transforms: late)
        if kwargs:
            raise _error(PSCTypeError, f"pmap of {self.name}: pass the mapped arguments "
                         "positionally")
        axes = list(_per_argument(self.in_axes, len(args), self.name))
        for i in self.static_argnums:
            if i < len(axes):
                axes[i] = None
        return vmap(self.fun, in_axes=tuple(axes), out_axes=self.out_axes,
                    axis_name=self.axis_name, axis_size=self.axis_size)(*args)

    # --- signatures -----------------------------------------------------------------------

    def _compiled(self, args, kwargs):
        if kwargs:
            raise _error(PSCTypeError, f"pmap of {self.name}: pass the mapped arguments "
                         "positionally", "keyword arguments are not mapped")
        statics = {}
        for i in self.static_argnums:
            if i >= len(args):
                raise _error(PSCValueError, f"pmap of {self.name}: "
                             f"static_broadcasted_argnums {i} is out of range for "
                             f"{len(args)} arguments")
            try:
                statics[i] = (args[i], static_key(args[i]))
            except TypeError:
                raise _error(PSCTypeError, f"pmap of {self.name}: static argument {i} must "
                             f"be hashable, got {type(args[i]).__name__}") from None
        traced = tuple(a for i, a in enumerate(args) if i not in statics)
        axes = [a for i, a in enumerate(_per_argument(self.in_axes, len(args), self.name))
                if i not in statics]
        leaves, treedef = tree_util.tree_flatten(traced)
        leaf_axes = []
        for arg, arg_axes in zip(traced, axes):
            leaf_axes += _leaf_axes(arg_axes, arg, self.name)
        specs = [leaf_spec(leaf, f"pmap of {self.name}: argument leaf {k}")
                 for k, leaf in enumerate(leaves)]
        leaf_axes = [_canonical_axis(spec, axis, k, self.name)
                     for k, (spec, axis) in enumerate(zip(specs, leaf_axes))]
        size = self._mapped_size(specs, leaf_axes)
        devices = check_devices(self.devices, size, f"pmap of {self.name}", self.backend)
        key = (treedef, tuple((s.shape, s.dtype, s.weak, a) for s, a in zip(specs, leaf_axes)),
               tuple((i, k) for i, (_, k) in sorted(statics.items())),
               tuple(d.id for d in devices), devices[0].platform)
        compiled = self._cache.get_or_create(
            key, lambda: _Compiled.build(self, treedef, specs, leaf_axes,
                                         {i: v for i, (v, _) in statics.items()},
                                         len(args), size, devices))
        return compiled, leaves

    def _mapped_size(self, specs, leaf_axes) -> int:
        sizes = {s.shape[a] for s, a in zip(specs, leaf_axes) if a is not None}
        if self.axis_size is not None:
            sizes.add(int(self.axis_size))
        if not sizes:
            raise _error(PSCValueError, f"pmap of {self.name}: no argument is mapped",
                         "map at least one argument (in_axes) or pass axis_size")
        if len(sizes) > 1:
            raise _error(PSCValueError, f"pmap of {self.name}: the mapped axes have "
                         f"different sizes {sorted(sizes)}",
                         "every mapped axis must have the same length")
        return sizes.pop()


class _Compiled:
    """One signature's program: the executable and how arguments and results are laid
    over the replicas."""

    def __init__(self, executable, leaf_axes, out_treedef):
        self.executable = executable
        self.leaf_axes = leaf_axes
        self.out_treedef = out_treedef

    def arguments(self, leaves):
        return [np.asarray(leaf, dtype=p.dtype) for leaf, p in
                zip(leaves, self.executable.in_placements)]

    @classmethod
    def build(cls, pm: PmapFunction, treedef, specs, leaf_axes, statics, n_args, size,
              devices):
        b = Builder(f"pmap_{pm.name}")
        values, placements = [], []
        for k, (spec, axis) in enumerate(zip(specs, leaf_axes)):
            if axis is None:
                values.append(b.parameter(k, spec.shape, spec.dtype, weak=spec.weak))
                placements.append(Placement(spec.shape, spec.dtype, None))
                continue
            local = spec.shape[:axis] + (1,) + spec.shape[axis + 1:]
            part = b.parameter(k, local, spec.dtype)
            values.append(b.reshape(part, spec.shape[:axis] + spec.shape[axis + 1:]))
            placements.append(Placement(spec.shape, spec.dtype, axis))
        traced = iter(tree_util.tree_unflatten(treedef, values))
        call = [statics[i] if i in statics else next(traced) for i in range(n_args)]
        with building(b), bind_axis(pm.axis_name, size, "replicas"):
            out = transpiled(pm.fun)(*call)
        out_leaves, out_treedef = tree_util.tree_flatten(out)
        out_axes = _output_axes(pm.out_axes, out, len(out_leaves), pm.name)
        outputs, out_placements = [], []
        for k, (leaf, axis) in enumerate(zip(out_leaves, out_axes)):
            value = _as_value(b, leaf, k, pm.name)
            if axis is None:
                outputs.append(value)
                out_placements.append(Placement(value.shape, value.dtype, None, value.weak))
                continue
            axis = _out_axis(axis, value, k, pm.name)
            shape = value.shape[:axis] + (1,) + value.shape[axis:]
            outputs.append(b.reshape(value, shape))
            out_placements.append(Placement(value.shape[:axis] + (size,) + value.shape[axis:],
                                            value.dtype, axis))
        computation = b.build(*outputs)
        convert_ifs(computation)
        executable = compile_replicated(computation, devices, placements, out_placements)
        return cls(executable, leaf_axes, out_treedef)


# --- axes specifications ---------------------------------------------------------------------

def _is_axis(spec) -> bool:
    return spec is None or (isinstance(spec, (int, np.integer)) and not isinstance(spec, bool))


def _per_argument(in_axes, count, name):
    if _is_axis(in_axes):
        return [in_axes] * count
    if not isinstance(in_axes, tuple):
        raise _error(PSCTypeError, f"pmap of {name}: in_axes must be an int, None, or a "
                     f"tuple with one entry per positional argument, got {in_axes!r}")
    if len(in_axes) != count:
        raise _error(PSCValueError, f"pmap of {name}: in_axes has {len(in_axes)} entries "
                     f"but {count} positional arguments were passed")
    return list(in_axes)


def _leaf_axes(prefix, tree, name) -> list:
    """One axis per leaf of ``tree``, ``prefix`` being a pytree prefix of it."""
    count = len(tree_util.tree_leaves(tree))
    if _is_axis(prefix):
        return [prefix] * count
    structure = tree_util.tree_structure(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = structure.flatten_up_to(tree)
    except (ValueError, TypeError) as err:
        raise _error(PSCValueError, f"pmap of {name}: the axes specification {prefix!r} is "
                     f"not a tree prefix of the argument: {err}") from None
    axes = tree_util.tree_leaves(prefix, is_leaf=lambda x: x is None)
    found = []
    for axis, sub in zip(axes, subtrees):
        if not _is_axis(axis):
            raise _error(PSCTypeError, f"pmap of {name}: axes must be ints or None, got "
                         f"{axis!r}")
        found += [axis] * len(tree_util.tree_leaves(sub))
    return found


def _canonical_axis(spec, axis, k, name):
    if axis is None:
        return None
    rank = len(spec.shape)
    if not -rank <= axis < rank:
        raise _error(PSCValueError, f"pmap of {name}: argument leaf {k} of shape "
                     f"{spec.shape} cannot be mapped along axis {axis}",
                     "a scalar is not mapped: pass in_axes None for it" if rank == 0 else
                     "check in_axes against the argument's shape")
    return int(axis) % rank


def _output_axes(out_axes, out, count, name):
    if _is_axis(out_axes):
        return [out_axes] * count
    return _leaf_axes(tuple(out_axes) if isinstance(out_axes, list) and
                      not isinstance(out, list) else out_axes, out, name)


def _out_axis(axis, value, k, name):
    rank = value.ndim + 1
    if not -rank <= axis < rank:
        raise _error(PSCValueError, f"pmap of {name}: out_axes {axis} is out of range for "
                     f"output {k} (rank {value.ndim} plus the mapped axis)")
    return int(axis) % rank


def _as_value(b, leaf, k, name) -> Value:
    if isinstance(leaf, Value):
        return leaf
    if isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)):
        return b.constant(leaf)
    raise _error(PSCTypeError, f"pmap of {name}: result leaf {k} is a "
                 f"{type(leaf).__name__}, which is not an array")


__all__ = ["pmap", "PmapFunction"]
