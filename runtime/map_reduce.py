"""``iterated_map_reduce``: the seed paper's functional distributed primitive.

``iterated_map_reduce(map_fn, update_fn, init, data, num_iters, reduce=...)`` splits
``data`` (an array or a pytree of arrays) along its leading axis into one shard per device
and, ``num_iters`` times, has every device compute ``map_fn(state, shard)``, combines the
partial results (pytrees) across the devices with ``reduce`` and sets ``state =
update_fn(state, combined)``; it returns the final state, which every device holds.

The whole iteration is one program compiled for the N devices (`runtime.replicated`): a
``while`` loop whose body holds the map, one all-reduce per partial-result leaf
(``"sum"``, ``"mean"``, ``"max"``, ``"min"``: `runtime.collectives`) and the update,
launched once; the state never leaves the devices between iterations.  A ``reduce`` that is
a binary PSC function ``f(a, b)`` on pytrees is applied by gathering every device's partial
result (an ``all_gather``) and folding them in device order, ``f(f(p0, p1), p2)...``,
which is what the reference does.  ``num_iters`` is static when it is a Python int (the
loop's trip count is known), traced otherwise (an integer scalar array: one program for
every count).  The meaning is `runtime.reference.iterated_map_reduce`.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from . import collectives
from .axes import bind_axis
from .builder import Builder
from .cache import LRUCache
from .calls import transpiled
from .context import building, has_builder
from .errors import PSCError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from .lax import _as_state
from .replicated import Placement, check_devices, compile_replicated
from .signature import leaf_spec
from .staged import caller_location, host_results
from .tracebacks import hide_internal_frames

REDUCTIONS = ("sum", "mean", "max", "min")
_NAMED = {"sum": collectives.psum, "mean": collectives.pmean, "max": collectives.pmax,
          "min": collectives.pmin}
_DEVICES = "iterated_map_reduce devices"   # the axis the program's collectives run over
_programs = LRUCache(maxsize=64)


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


@_primitive
def iterated_map_reduce(map_fn, update_fn, init, data, num_iters, *, reduce="sum",
                        devices=None):
    """The final state of ``num_iters`` map-reduce-update rounds over ``data`` split
    across ``devices`` (default: every device of the default backend); see the module
    docstring."""
    if has_builder():
        raise PSCUnsupportedCallError(
            "iterated_map_reduce runs its own program on several devices: call it from "
            "plain Python, not inside a jit_ps function", hint="inside PSC code, write the "
            "loop with pmap and psum")
    try:
        program, arguments = _program(map_fn, update_fn, init, data, num_iters, reduce,
                                      devices)
        results = program.executable(*arguments)
        return host_results(tree_util.tree_unflatten(program.out_treedef, results))
    except PSCError as err:
        if err.location is None:
            err.location = caller_location()
        hide_internal_frames(err)
        raise


def _lower(map_fn, update_fn, init, data, num_iters, *, reduce="sum", devices=None) -> str:
    """The StableHLO text of the program `iterated_map_reduce` runs for these arguments."""
    return _program(map_fn, update_fn, init, data, num_iters, reduce,
                    devices)[0].executable.stablehlo


def _compile(map_fn, update_fn, init, data, num_iters, *, reduce="sum", devices=None):
    """The `runtime.replicated.ReplicatedExecutable` `iterated_map_reduce` runs for these
    arguments (``as_hlo_text()``: the HLO XLA compiled)."""
    return _program(map_fn, update_fn, init, data, num_iters, reduce, devices)[0].executable


iterated_map_reduce.lower = _lower
iterated_map_reduce.compile = _compile


class _Program:
    def __init__(self, executable, out_treedef):
        self.executable = executable
        self.out_treedef = out_treedef


def _reduce_key(reduce):
    if isinstance(reduce, str):
        if reduce not in REDUCTIONS:
            raise PSCValueError(f"iterated_map_reduce: unknown reduce {reduce!r}",
                                hint=f"one of {', '.join(map(repr, REDUCTIONS))}, or a "
                                     "binary function of two partial results")
        return reduce
    if not callable(reduce):
        raise PSCTypeError(f"iterated_map_reduce: reduce must be a name or a function, got "
                           f"{type(reduce).__name__}")
    return reduce


def _program(map_fn, update_fn, init, data, num_iters, reduce, devices):
    reduce = _reduce_key(reduce)
    if devices is None:
        from .placement import local_devices   # (late: placement imports the client)
        devices = local_devices()
    devices = check_devices(list(devices), len(list(devices)), "iterated_map_reduce")
    n = len(devices)
    init_leaves, init_tree = tree_util.tree_flatten(init)
    data_leaves, data_tree = tree_util.tree_flatten(data)
    init_specs = [leaf_spec(leaf, f"iterated_map_reduce: init leaf {k}")
                  for k, leaf in enumerate(init_leaves)]
    data_specs = [leaf_spec(leaf, f"iterated_map_reduce: data leaf {k}")
                  for k, leaf in enumerate(data_leaves)]
    for k, spec in enumerate(data_specs):
        _check_divisible(spec.shape, n, k)
    static_iters = type(num_iters) is int
    if static_iters:
        iters_key = num_iters
        traced_iters = []
    else:
        spec = leaf_spec(num_iters, "iterated_map_reduce: num_iters")
        if spec.shape != () or not np.issubdtype(spec.dtype, np.integer):
            raise PSCTypeError(f"iterated_map_reduce: num_iters must be an int or an "
                               f"integer scalar, got {spec.dtype}{list(spec.shape)}")
        iters_key = spec
        traced_iters = [num_iters]
    key = (map_fn, update_fn, reduce, init_tree, tuple(init_specs), data_tree,
           tuple(data_specs), static_iters, iters_key, tuple(d.id for d in devices))
    program = _programs.get_or_create(key, lambda: _build(
        map_fn, update_fn, reduce, init_tree, init_specs, data_tree, data_specs,
        num_iters if static_iters else None, None if static_iters else iters_key, devices))
    return program, [*init_leaves, *data_leaves, *traced_iters]


def _check_divisible(shape, n, k):
    if len(shape) == 0:
        raise PSCValueError(f"iterated_map_reduce: data leaf {k} is a scalar; data is split "
                            "along its leading axis", hint="pass arrays with a leading axis")
    if shape[0] % n:
        raise PSCValueError(
            f"iterated_map_reduce: the leading axis of data leaf {k} has length {shape[0]}, "
            f"which does not split evenly over {n} devices",
            hint="pad or trim the data to a multiple of the device count, or pass devices=")


def _build(map_fn, update_fn, reduce, init_tree, init_specs, data_tree, data_specs,
           static_iters, iters_spec, devices):
    n = len(devices)
    b = Builder("iterated_map_reduce")
    placements, index = [], 0
    init_values = []
    for spec in init_specs:
        init_values.append(b.parameter(index, spec.shape, spec.dtype, weak=spec.weak))
        placements.append(Placement(spec.shape, spec.dtype, None))
        index += 1
    shard_values = []
    for spec in data_specs:
        local = (spec.shape[0] // n,) + spec.shape[1:]
        shard_values.append(b.parameter(index, local, spec.dtype))
        placements.append(Placement(spec.shape, spec.dtype, 0))
        index += 1
    with building(b), bind_axis(_DEVICES, n, "replicas"):
        if iters_spec is None:
            bound = b.constant(np.int64(max(static_iters, 0)))
        else:
            bound = b.convert(b.parameter(index, (), iters_spec.dtype), np.int64)
            placements.append(Placement((), iters_spec.dtype, None))
        shard = tree_util.tree_unflatten(data_tree, shard_values)
        state = _as_state(b, tree_util.tree_unflatten(init_tree, init_values))
        final = _loop(b, map_fn, update_fn, reduce, state, shard, bound, n,
                      None if iters_spec is not None else max(static_iters, 0))
    out_leaves, out_tree = tree_util.tree_flatten(final)
    out_placements = [Placement(v.shape, v.dtype, None, v.weak) for v in out_leaves]
    computation = b.build(*out_leaves)
    executable = compile_replicated(computation, devices, placements, out_placements)
    return _Program(executable, out_tree)


def _loop(b, map_fn, update_fn, reduce, state, shard, bound, n, trip_count):
    mapper, updater = transpiled(map_fn), transpiled(update_fn)
    one = b.constant(np.int64(1))

    def cond(sub, carry):
        return sub.lt(carry[0], bound)

    def body(sub, carry):
        i, current = carry
        combined = _combine(sub, mapper(current, shard), reduce, n)
        return sub.add(i, one), _as_state(sub, updater(current, combined), like=current)
    _, final = b.while_loop(cond, body, (b.constant(np.int64(0)), state),
                            trip_count=trip_count)
    return final


def _combine(b, partial, reduce, n):
    """The partial results of every device combined, on every device."""
    if isinstance(reduce, str):
        return _NAMED[reduce](partial, _DEVICES)
    gathered = collectives.all_gather(partial, _DEVICES)   # each leaf: (n, *its shape)
    combine = transpiled(reduce)
    total = tree_util.tree_map(lambda g: _row(b, g, 0), gathered)
    for k in range(1, n):
        total = combine(total, tree_util.tree_map(lambda g, k=k: _row(b, g, k), gathered))
    return total


def _row(b, gathered, k):
    row = b.slice(gathered, [k] + [0] * (gathered.ndim - 1),
                  [k + 1] + list(gathered.shape[1:]))
    value = b.reshape(row, gathered.shape[1:])
    value.weak = gathered.weak
    return value


__all__ = ["iterated_map_reduce", "REDUCTIONS"]
