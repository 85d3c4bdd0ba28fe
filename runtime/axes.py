"""Named axes: which ``axis_name``s collectives (`runtime.collectives`) may name now.

A `pmap` binds its axis name to its replicas while its function is traced (kind
``"replicas"``: the collectives become StableHLO collectives over them); a `vmap` with an
``axis_name`` binds it to its lanes (kind ``"lanes"``: the collectives become operations
on the batch dimension when `runtime.batching` batches the traced region).  A collective
records the name and size it was bound to in its operation's attributes
(`COLLECTIVE_AXIS`, ``axis_size``), so later transforms (derivatives, batching) need no
environment but the one batching axis `batching_axis` names while a region is batched.

Thread-local, innermost last, as `runtime.context`'s builders are.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading

_state = threading.local()

# The attribute of a collective operation naming its axis.
COLLECTIVE_AXIS = "collective_axis"


@dataclasses.dataclass(frozen=True)
class AxisFrame:
    """One bound axis: its name, its size, and what it maps over (``"replicas"`` or
    ``"lanes"``)."""

    name: object
    size: int
    kind: str


def _frames() -> list:
    frames = getattr(_state, "frames", None)
    if frames is None:
        frames = _state.frames = []
    return frames


@contextlib.contextmanager
def bind_axis(name, size: int, kind: str):
    """Bind ``name`` (None: nothing is bound) to an axis of ``size`` for the block."""
    if name is None:
        yield
        return
    frames = _frames()
    frames.append(AxisFrame(name, int(size), kind))
    try:
        yield
    finally:
        frames.pop()


def find_axis(name) -> AxisFrame | None:
    """The innermost frame binding ``name``, or None."""
    for frame in reversed(_frames()):
        if frame.name == name:
            return frame
    return None


def bound_names() -> list:
    return [frame.name for frame in _frames()]


@contextlib.contextmanager
def batching_axis(name):
    """While a vmap with axis name ``name`` batches its region: collectives naming it
    become operations on the batch dimension (`runtime.primitives.collectives`)."""
    previous = getattr(_state, "batching", None)
    _state.batching = name
    try:
        yield
    finally:
        _state.batching = previous


def binds_batching_axis(op) -> bool:
    """Whether ``op`` is a collective over the axis being batched now: its batching rule
    runs even when no operand is batched (``psum(1, 'i')`` is the axis size)."""
    name = getattr(_state, "batching", None)
    return name is not None and op.attrs.get(COLLECTIVE_AXIS, None) == name and \
        COLLECTIVE_AXIS in op.attrs
