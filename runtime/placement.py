"""Devices and placement, with JAX's names and meaning: `devices`, `local_devices`,
`device_put`, and `call_device` (where a call runs).

As with ``jax.jit``: a call runs on the device its *committed* arguments are on (arrays
`device_put` to a device, and results of calls that ran on one), and its results are
committed there; a function pinned with ``jit_ps(device=...)`` (or ``backend=...``: the
backend's first device) runs on that device and moves its arguments there; a call with
neither runs on the default backend's first device and its results are uncommitted (a
later call may move them).  Arguments committed to
two different devices are an error: XLA runs a program on one device, and guessing which
copy the user meant would hide a mistake.

`device_put` keeps 64-bit types (float64 stays float64) without JAX's ``jax_enable_x64``
flag, like the arguments of calls (`runtime.client`).
"""
from __future__ import annotations

from jax._src import tree_util as jax_tree_util
from jax.sharding import NamedSharding, Sharding
from jaxlib import _jax

from .client import get_client, private_device_copy, single_device_sharding
from .errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from .signature import leaf_spec
from .spmd import check_fits, put

_REGISTRY = jax_tree_util.dispatch_registry
_ArrayImpl = _jax.ArrayImpl
_PUT_HINT = "move them to one device first: transpiler.device_put(x, device)"


def devices(backend: str | None = None) -> list:
    """The devices of ``backend`` (``"cpu"``, ``"gpu"``...; None: JAX's default), as
    ``jax.devices`` lists them."""
    return list(get_client(backend).devices())


def local_devices(process_index: int | None = None, backend: str | None = None) -> list:
    """The devices of ``backend`` attached to process ``process_index`` (None: this one),
    as ``jax.local_devices`` lists them."""
    client = get_client(backend)
    if process_index is None:
        process_index = client.process_index()
    return [d for d in client.devices() if d.process_index == process_index]


def as_device(device_or_sharding, what: str = "device_put"):
    """The one device that ``device_or_sharding`` (a jax ``Device`` or a single-device
    ``jax.sharding.Sharding``) names."""
    if isinstance(device_or_sharding, _jax.Device):
        return device_or_sharding
    if isinstance(device_or_sharding, Sharding):
        found = device_or_sharding.device_set
        if len(found) == 1:
            return next(iter(found))
        raise PSCUnsupportedCallError(
            f"{what}: a sharding over {len(found)} devices names no single device",
            hint="use one device, e.g. transpiler.devices()[0]; for several, give "
                 "jit_ps in_shardings/out_shardings (SPMD)")
    raise PSCTypeError(f"{what}: expected a jax Device or Sharding, got "
                       f"{type(device_or_sharding).__name__}",
                       hint="pick one from transpiler.devices()")


def device_put(x, device=None):
    """``x`` (an array, a scalar, or a pytree of them) as jax arrays on ``device`` (a jax
    ``Device`` or a single-device ``Sharding``), committed there: calls taking them run
    on that device; a ``NamedSharding`` over several devices splits each leaf as it
    says (`runtime.spmd`).  With ``device=None``, as ``jax.device_put(x)``: jax arrays stay as
    they are, others go to the default backend's first device uncommitted.  Dtypes are
    kept (float64 stays float64; a Python scalar becomes a 0-d array of NumPy's type for
    it), and a NumPy array is copied, so mutating it later leaves the result alone."""
    if isinstance(device, NamedSharding) or (isinstance(device, Sharding) and
                                             len(device.device_set) > 1):
        # (a mesh of one device too: the arrays keep its NamedSharding, as jax's do, so
        # an SPMD function over that mesh takes them as they are)
        return _put_sharded(x, device)
    committed = device is not None
    target = as_device(device) if committed else get_client(None).local_devices()[0]
    leaves, treedef = _REGISTRY.flatten(x)
    for i, leaf in enumerate(leaves):
        leaf_spec(leaf, f"device_put: leaf {i}")   # refuses what no array can hold
    return treedef.unflatten([_put_leaf(leaf, target, committed) for leaf in leaves])


def _put_sharded(x, sharding):
    """``x``'s leaves as global jax arrays split as ``sharding`` says (`runtime.spmd`)."""
    if not isinstance(sharding, NamedSharding):
        raise PSCTypeError(f"device_put: expected a NamedSharding, got "
                           f"{type(sharding).__name__}")
    leaves, treedef = _REGISTRY.flatten(x)
    out = []
    for i, leaf in enumerate(leaves):
        spec = leaf_spec(leaf, f"device_put: leaf {i}")
        check_fits(sharding, spec.shape, f"device_put: leaf {i}")
        out.append(put(leaf, sharding, spec.dtype))
    return treedef.unflatten(out)


def _put_leaf(leaf, device, committed: bool):
    if isinstance(leaf, _ArrayImpl):
        # An array asked to go nowhere in particular, or already where it is asked to
        # be, stays as it is (arrays are immutable: no copy is needed).
        if not committed or leaf.committed and leaf.sharding == single_device_sharding(device):
            return leaf
        if len(leaf.sharding.device_set) != 1:
            raise PSCUnsupportedCallError(
                f"device_put: an array sharded over {len(leaf.sharding.device_set)} "
                "devices is not supported yet", hint="gather it with np.asarray(x) first")
        return _jax.batched_copy_array_to_devices_with_sharding(
            [leaf], [_jax.DeviceList((device,))], [single_device_sharding(device)],
            [_jax.ArrayCopySemantics.ALWAYS_COPY])[0]
    return private_device_copy(leaf, device, committed)


def call_device(leaves, describe, pinned, default):
    """``(device, committed)`` for a call with traced ``leaves``: the ``pinned`` device if
    there is one, else the device the committed leaves share, else ``default`` (a
    callable giving the backend's first device) uncommitted.  ``describe(i)`` names leaf
    ``i`` in errors."""
    if pinned is not None:
        return pinned, True
    found, first = None, None
    for i, leaf in enumerate(leaves):
        if type(leaf) is not _ArrayImpl or not leaf.committed:
            continue
        device = _single_device(leaf, describe, i)
        if found is None:
            found, first = device, i
        elif device != found:
            raise PSCValueError(
                f"{describe(first)} is committed to {found} and {describe(i)} to "
                f"{device}: a call runs on one device", hint=_PUT_HINT)
    if found is None:
        return default(), False
    return found, True


def _single_device(leaf, describe, i):
    device_set = leaf.sharding.device_set
    if len(device_set) != 1:
        raise PSCUnsupportedCallError(
            f"{describe(i)} is sharded over {len(device_set)} devices", hint=_PUT_HINT)
    return next(iter(device_set))


__all__ = ["devices", "local_devices", "device_put", "as_device", "call_device"]
