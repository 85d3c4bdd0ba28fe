"""The identity basis Jacobians are built over, and the blocks cut from the batched result.

``jacfwd`` pushes every basis vector of the inputs through one batched JVP and ``jacrev``
pulls every basis vector of the outputs through one batched VJP (`runtime.batching`), as
JAX's ``vmap`` over ``_std_basis`` does.  The basis is built from ``iota`` comparisons, not
a constant, so the program's size does not grow with the number of basis vectors.
"""
from __future__ import annotations

import numpy as np


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def identity_basis(b, leaves) -> list:
    """Rows of the identity over the flattened ``leaves``, split per leaf: leaf k gets an
    array of shape ``(N,) + leaf.shape`` in its dtype, N the total size of the leaves."""
    sizes = [_size(leaf.shape) for leaf in leaves]
    total, offset, basis = sum(sizes), 0, []
    for leaf, size in zip(leaves, sizes):
        rows = b.iota((total, size), np.int32, 0)
        columns = b.add(b.iota((total, size), np.int32, 1),
                        b.broadcast_in_dim(b.constant(np.int32(offset)), (total, size), ()))
        hit = b.convert(b.eq(rows, columns), leaf.dtype)
        basis.append(b.reshape(hit, (total,) + tuple(leaf.shape)))
        offset += size
    return basis


def leading_blocks(b, stacked, shapes):
    """``stacked`` (``(N,) + rest``) cut along its first dimension into one block per
    shape in ``shapes`` (their sizes sum to N), each reshaped to ``shape + rest``."""
    rest, offset, blocks = tuple(stacked.shape[1:]), 0, []
    for shape in shapes:
        size = _size(shape)
        part = b.slice(stacked, (offset,) + (0,) * len(rest), (offset + size,) + rest)
        blocks.append(b.reshape(part, tuple(shape) + rest))
        offset += size
    return blocks


def trailing_blocks(b, stacked, shapes):
    """``stacked`` (``(N,) + lead``) moved to ``lead + (N,)`` and cut along that last
    dimension into one block per shape, each reshaped to ``lead + shape``."""
    lead = tuple(stacked.shape[1:])
    moved = b.transpose(stacked, list(range(1, len(lead) + 1)) + [0])
    offset, blocks = 0, []
    for shape in shapes:
        size = _size(shape)
        part = b.slice(moved, (0,) * len(lead) + (offset,), lead + (offset + size,))
        blocks.append(b.reshape(part, lead + tuple(shape)))
        offset += size
    return blocks
