"""Every collective against its NumPy meaning on 8 simulated CPU devices: the cases
`tests/test_collectives.py` runs in a child process (`tests/eight_devices.py`).

Each collective runs inside `pmap` (StableHLO collectives over 8 replicas) and inside
`vmap` with the same ``axis_name`` (batch-dimension operations); both are compared with
the same plain-NumPy meaning, written over the stacked per-device inputs ``X`` (``X[d]``
is device ``d``'s), values and dtypes.  ``jax.pmap`` is a second oracle for the shapes of
JAX's conventions (``axis``, ``tiled``, ``split_axis``/``concat_axis``).
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import transpiler as T
from conftest import assert_same
from transpiler import pmap, vmap

N = 8
DTYPES = [np.float64, np.float32, np.int64, np.int32]


def draw(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.normal(size=shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


def total(X, axis=0):
    """The sum along ``axis`` in ``X``'s own dtype (element-wise additions, as the
    all-reduce does; ``np.sum`` widens small integers)."""
    return np.add.reduce(X, axis=axis, dtype=X.dtype)


def every_device(value):
    """``value`` as each of the N devices holds it (stacked)."""
    return np.stack([value] * N)


def both_ways(fn, *args, **kwargs):
    """``fn`` over axis 'i' run by pmap and by vmap with that axis name."""
    return pmap(fn, "i", **kwargs)(*args), vmap(fn, axis_name="i", **kwargs)(*args)


def check(fn, expected, *args, **kwargs):
    for got in both_ways(fn, *args, **kwargs):
        assert_same(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_psum_pmax_pmin(dtype):
    X = draw((N, 3, 4), dtype)
    check(lambda x: (T.psum(x, "i"), T.pmax(x, "i"), T.pmin(x, "i")),
          (every_device(total(X)), every_device(X.max(0)), every_device(X.min(0))), X)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pmean_is_true_division(dtype):
    X = draw((N, 5), dtype)
    check(lambda x: T.pmean(x, "i"), every_device(total(X) / N), X)


def test_psum_of_a_pytree_and_of_python_numbers():
    X, Y = draw((N, 2), np.float64), draw((N,), np.int64, 1)
    check(lambda x, y: T.psum({"a": x, "b": (y, 1)}, "i"),
          {"a": every_device(total(X)), "b": (every_device(total(Y)),
                                              np.full(N, N, np.int64))}, X, Y)


def test_psum_and_pmean_of_python_numbers_need_no_collective():
    """As JAX: ``psum(1, axis)`` is the axis size while building; ``pmean(3)`` is 3.0."""
    X = draw((N, 2), np.float64)

    def sizes(x):
        return x * T.psum(1, "i"), T.pmean(3, "i") + x
    check(sizes, (X * N, 3.0 + X), X)
    assert '"stablehlo.all_reduce"' not in pmap(sizes, "i").lower(X)
    with jax.enable_x64(True):
        theirs = jax.pmap(lambda x: (x * jax.lax.psum(1, "i"), jax.lax.pmean(3, "i") + x),
                          "i")(X)
    assert_same(pmap(sizes, "i")(X), tuple(np.asarray(v) for v in theirs))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_all_gather_stacks(dtype, axis):
    X = draw((N, 3, 2), dtype)
    check(lambda x: T.all_gather(x, "i", axis=axis), every_device(np.stack(X, axis=axis)), X)


@pytest.mark.parametrize("axis", [0, 1])
def test_all_gather_tiled_concatenates(axis):
    X = draw((N, 3, 2), np.float64)
    check(lambda x: T.all_gather(x, "i", axis=axis, tiled=True),
          every_device(np.concatenate(list(X), axis=axis)), X)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
@pytest.mark.parametrize("dim", [0, 1])
def test_psum_scatter_keeps_this_devices_part(dtype, dim):
    X = draw((N, N, N + 1) if dim == 0 else (N, 3, N), dtype)
    summed = total(X)
    check(lambda x: T.psum_scatter(x, "i", scatter_dimension=dim),
          np.stack([np.take(summed, d, axis=dim) for d in range(N)]), X)


def test_psum_scatter_tiled():
    X = draw((N, 3, 2 * N), np.float64)
    parts = np.split(total(X), N, axis=1)
    check(lambda x: T.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
          np.stack(parts), X)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ppermute_moves_values_and_zeros_the_rest(dtype):
    X = draw((N, 3), dtype)
    perm = [(0, 3), (3, 5), (5, 0), (7, 7), (1, 2)]
    expected = np.zeros_like(X)
    for source, target in perm:
        expected[target] = X[source]
    check(lambda x: T.ppermute(x, "i", perm), expected, X)


def test_ppermute_ring():
    X = draw((N, 2, 2), np.float64)
    ring = [(k, (k + 1) % N) for k in range(N)]
    check(lambda x: T.ppermute(x, "i", ring), np.roll(X, 1, axis=0), X)


@pytest.mark.parametrize("split,concat", [(0, 0), (0, 1), (1, 0), (1, 2), (2, 1)])
def test_all_to_all(split, concat):
    shape = [3, 2, 4]
    shape[split] = N
    X = draw((N, *shape), np.float64)
    expected = np.stack([np.stack([np.take(X[j], d, axis=split) for j in range(N)],
                                  axis=concat) for d in range(N)])
    check(lambda x: T.all_to_all(x, "i", split, concat), expected, X)


@pytest.mark.parametrize("split,concat", [(0, 1), (1, 0), (1, 1)])
def test_all_to_all_tiled(split, concat):
    shape = [2 * N, 3]
    shape[split] = 2 * N
    X = draw((N, *shape), np.int64)
    expected = np.stack([np.concatenate([np.split(X[j], N, axis=split)[d] for j in range(N)],
                                        axis=concat) for d in range(N)])
    check(lambda x: T.all_to_all(x, "i", split, concat, tiled=True), expected, X)


def test_axis_index():
    X = draw((N, 2), np.float64)
    check(lambda x: T.axis_index("i"), np.arange(N, dtype=np.int32), X)
    check(lambda x: x * T.axis_index("i"), X * np.arange(N)[:, None], X)


def test_the_conventions_are_jaxs():
    X = draw((N, N, 2 * N), np.float64)
    L = jax.lax

    def ours(x):
        return (T.all_gather(x, "i", axis=1), T.psum_scatter(x, "i", scatter_dimension=1,
                                                             tiled=True),
                T.all_to_all(x, "i", 0, 1), T.all_to_all(x, "i", 1, 0, tiled=True),
                T.pmean(x, "i"))

    def theirs(x):
        return (L.all_gather(x, "i", axis=1), L.psum_scatter(x, "i", scatter_dimension=1,
                                                             tiled=True),
                L.all_to_all(x, "i", 0, 1), L.all_to_all(x, "i", 1, 0, tiled=True),
                L.pmean(x, "i"))
    with jax.enable_x64(True):
        expected = [np.asarray(v) for v in jax.pmap(theirs, "i")(X)]
    for got in both_ways(ours, X):
        assert_same(list(got), expected)


def test_the_program_holds_stablehlo_collectives_over_the_replicas():
    X = draw((N, N), np.float64)
    f = pmap(lambda x: (T.psum(x, "i"), T.all_gather(x, "i"), T.ppermute(x, "i", [(0, 1)]),
                        T.psum_scatter(x, "i", tiled=True), T.all_to_all(x, "i", 0, 0, tiled=True),
                        T.axis_index("i")), "i")
    text = f.lower(X)
    assert "mhlo.num_replicas = 8 : i32" in text
    for op in ("all_reduce", "all_gather", "collective_permute", "reduce_scatter",
               "all_to_all", "replica_id"):
        assert f'"stablehlo.{op}"' in text, op
    assert "replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]>" in text
    hlo = f.compile(X).as_hlo_text()
    assert "all-reduce" in hlo and "all-gather" in hlo


def test_vmap_collectives_over_an_outer_axis_inside_pmap():
    """pmap over 'i' of vmap over 'j': each collective reduces over its own axis."""
    X = draw((N, 3, 2), np.float64)

    def inner(x):
        return T.psum(x, "i"), T.psum(x, "j"), T.psum(x, ("i",)) * 0 + T.axis_index("j")
    got = pmap(vmap(inner, axis_name="j"), "i")(X)
    assert_same(got[0], np.broadcast_to(X.sum(0), X.shape).copy())
    assert_same(got[1], np.broadcast_to(X.sum(1, keepdims=True), X.shape).copy())
    assert_same(got[2], np.broadcast_to(np.arange(3.0)[None, :, None], X.shape).copy())


def test_an_unbound_axis_inside_pmap_is_named():
    with pytest.raises(T.PSCNameError, match="unbound axis name 'j'.*bound here: 'i'"):
        pmap(lambda x: T.psum(x, "j"), "i")(np.ones((N, 2)))
