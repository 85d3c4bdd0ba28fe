"""SPMD programs on 8 simulated CPU devices: the cases `tests/test_spmd.py` runs.

They need ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` before jax starts its CPU
client, so `tests/test_spmd.py` runs this file with pytest in a child process (its name
keeps the main suite from collecting it).  Oracles: plain NumPy for values and dtypes (the
same function run as Python), ``jax.jit`` with the same shardings for where the
partitioner puts results that were not requested.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

from conftest import assert_same
from transpiler import (PSCTypeError, PSCUnsupportedCallError, PSCValueError, debug_print,
                        device_put, grad, jit_ps, vmap, with_sharding_constraint)

N_DEVICES = 8


@pytest.fixture(scope="module")
def mesh1():
    assert len(jax.devices()) == N_DEVICES, "run with --xla_force_host_platform_device_count=8"
    return Mesh(np.array(jax.devices()), ("batch",))


@pytest.fixture(scope="module")
def mesh2():
    return Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


@pytest.fixture(params=[True, False], ids=["shardy", "gspmd"])
def partitioner(request):
    """Each case under both of jax's partitioners (and so both attribute dialects)."""
    previous = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", request.param)
    yield request.param
    jax.config.update("jax_use_shardy_partitioner", previous)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logistic_step(w, x, y):
    """One gradient step of logistic regression (the data-parallel benchmark's step)."""
    p = sigmoid(x @ w)
    g = x.T @ (p - y) / x.shape[0]
    return w - 0.5 * g, np.mean(-y * np.log(p) - (1.0 - y) * np.log(1.0 - p))


def mlp(w1, w2, x):
    return np.tanh(x @ w1) @ w2


def halve_until_small(x):
    steps = 0
    while np.abs(x).max() > 1.0:   # traced condition: a while loop over sharded data
        x = x * 0.5
        steps += 1
    if x.sum() > 0:
        x = x - 0.25
    return x, steps


def constrained(x, w, sharding):
    h = with_sharding_constraint(np.tanh(x @ w), sharding)
    return (h * h).sum(axis=1)


def data(rng, n=32, d=6):
    x = rng.standard_normal((n, d))
    y = (rng.uniform(size=n) < sigmoid(x @ np.linspace(-1, 1, d))).astype(np.float64)
    return np.zeros(d), x, y


def test_data_parallel_step_equals_numpy(mesh1, partitioner):
    w, x, y = data(np.random.default_rng(0))
    rows, replicated = NamedSharding(mesh1, P("batch")), NamedSharding(mesh1, P())
    step = jit_ps(logistic_step, in_shardings=(replicated, rows, rows),
                  out_shardings=replicated)
    for _ in range(3):   # results (replicated jax arrays) fed back as they are
        expected = logistic_step(np.asarray(w), x, y)
        w, loss = step(w, x, y)
        assert w.sharding == replicated and loss.sharding == replicated
        assert_same((np.asarray(w), np.asarray(loss)), expected, rtol=1e-12)
    assert step.cache_info().misses == 1
    hlo = step.compile(w, x, y).as_hlo_text()
    assert "all-reduce" in hlo   # the batch's partial sums are combined across devices


def test_model_parallel_weights_sharded(mesh2, partitioner):
    rng = np.random.default_rng(1)
    w1, w2 = rng.standard_normal((8, 16)), rng.standard_normal((16, 4))
    x = rng.standard_normal((12, 8))

    def shard(*spec):
        return NamedSharding(mesh2, P(*spec))
    f = jit_ps(mlp, in_shardings=(shard(None, "model"), shard("model", None),
                                  shard("data", None)),
               out_shardings=shard("data", "model"))
    out = f(w1, w2, x)
    assert out.sharding == shard("data", "model")
    assert out.addressable_shards[0].data.shape == (3, 2)   # each device: its block
    assert_same(np.asarray(out), mlp(w1, w2, x), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_dtypes_are_kept(mesh1, dtype):
    x = (np.arange(16) - 5).astype(dtype)
    f = jit_ps(lambda x: x * 3 + x, in_shardings=NamedSharding(mesh1, P("batch")))
    out = f(x)
    assert out.dtype == dtype
    assert_same(np.asarray(out), x * 3 + x)


def test_unrequested_output_shardings_follow_the_partitioner_as_jax_does(mesh2):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((8, 4)), rng.standard_normal((4, 6))
    ins = (NamedSharding(mesh2, P("data", None)), NamedSharding(mesh2, P(None, "model")))
    ours = jit_ps(lambda x, w: (x @ w, (x @ w).sum(0)), in_shardings=ins)(x, w)
    theirs = jax.jit(lambda x, w: (x @ w, (x @ w).sum(0)), in_shardings=ins)(
        x.astype(np.float32), w.astype(np.float32))
    for a, b in zip(ours, theirs):
        assert isinstance(a.sharding, NamedSharding) and a.sharding.mesh == mesh2
        assert a.sharding.is_equivalent_to(b.sharding, a.ndim)
    assert_same([np.asarray(a) for a in ours], [x @ w, (x @ w).sum(0)], rtol=1e-12)


def test_with_sharding_constraint_steers_the_partitioner(mesh2, partitioner):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((8, 4)), rng.standard_normal((4, 16))
    ins = (NamedSharding(mesh2, P("data", None)), NamedSharding(mesh2, P()))
    by_columns = NamedSharding(mesh2, P(None, ("data", "model")))

    def fn(x, w):
        return constrained(x, w, by_columns)
    f = jit_ps(fn, in_shardings=ins)
    out = f(x, w)
    assert_same(np.asarray(out), (np.tanh(x @ w) ** 2).sum(axis=1), rtol=1e-12)
    text = f.lower(x, w)
    if partitioner:
        assert 'sdy.sharding_constraint' in text and '{}, {"data", "model"}' in text
    else:
        assert 'call_target_name = "Sharding"' in text and "mhlo.sharding" in text
    # jax.jit of the same program with the same constraint: the same collectives
    theirs = jax.jit(lambda x, w: (jax.lax.with_sharding_constraint(
        jnp.tanh(x @ w), by_columns) ** 2).sum(axis=1), in_shardings=ins)
    ours_hlo = f.compile(x, w).as_hlo_text()
    their_hlo = theirs.lower(x.astype(np.float32), w.astype(np.float32)).compile().as_text()
    for collective in ("all-to-all", "all-gather", "all-reduce", "collective-permute"):
        assert (collective in ours_hlo) == (collective in their_hlo), collective


def test_with_sharding_constraint_under_grad_and_vmap(mesh2):
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((8, 4)), rng.standard_normal((4, 6))
    rows = NamedSharding(mesh2, P("data", None))

    def loss(w, x):
        return np.sum(constrained(x, w, rows))
    g = jit_ps(grad(loss), in_shardings=(NamedSharding(mesh2, P()), rows))(w, x)
    expected = jax.grad(lambda w, x: jnp.sum((jnp.tanh(x @ w) ** 2).sum(axis=1)))
    with jax.enable_x64(True):
        assert_same(np.asarray(g), np.asarray(expected(w, x)), rtol=1e-10)
    xs = rng.standard_normal((3, 8, 4))
    batched = jit_ps(vmap(lambda x: constrained(x, w, rows)),
                     in_shardings=NamedSharding(mesh2, P(None, "data")))(xs)
    assert_same(np.asarray(batched), np.stack([(np.tanh(b @ w) ** 2).sum(1) for b in xs]),
                rtol=1e-12)


def test_control_flow_inside(mesh1, partitioner):
    x = np.linspace(-40.0, 30.0, 16)
    f = jit_ps(halve_until_small, in_shardings=NamedSharding(mesh1, P("batch")))
    out, steps = f(x)
    expected = halve_until_small(x)
    assert_same((np.asarray(out), np.asarray(steps)), (expected[0], np.int64(expected[1])))


def test_sharded_arrays_are_passed_as_they_are_and_can_be_put(mesh1):
    rows = NamedSharding(mesh1, P("batch"))
    x = device_put(np.arange(16.0), rows)
    assert x.sharding == rows and x.dtype == np.float64
    assert_same(np.asarray(x), np.arange(16.0))
    from runtime.spmd import put
    assert put(x, rows) is x   # already as wanted: passed as it is, no copy
    f = jit_ps(lambda x: x + 1.0, in_shardings=rows, out_shardings=rows)
    y = f(x)
    assert y.sharding == rows
    plain = jit_ps(lambda x: x * 2.0)   # no shardings given: the argument's are used
    assert_same(plain(y), (np.arange(16.0) + 1) * 2)


def test_a_mesh_of_one_device_takes_its_arrays_as_they_are():
    """As jax: device_put on a one-device mesh keeps the NamedSharding, and the SPMD
    function over that mesh takes such arrays (and its own results) without a copy, on the
    C++ dispatcher from the second call."""
    from runtime.spmd import put
    one = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("batch",)), P("batch"))
    x = device_put(np.arange(8.0), one)
    assert x.sharding == one and x.dtype == np.float64
    assert put(x, one) is x
    on_device = jax.device_put(np.arange(8.0), jax.devices()[0])
    assert put(on_device, one) is on_device   # an equivalent sharding: no copy either
    f = jit_ps(lambda x: x * 2.0 + 1.0, in_shardings=one, out_shardings=one)
    y = x
    for _ in range(4):
        y = f(y)
        assert y.sharding == one
    assert_same(np.asarray(y), ((((np.arange(8.0) * 2 + 1) * 2 + 1) * 2 + 1) * 2 + 1))
    assert f._cpp_misses == 1 and f._cpp_calls == 4


def gram_plus_column_sums(x):
    return x @ x.T + x.sum(axis=0)


def test_arrays_sharded_otherwise_are_resharded_on_every_call(mesh2):
    rows = NamedSharding(mesh2, P("data"))
    f = jit_ps(gram_plus_column_sums, in_shardings=rows)
    x = np.arange(64.0).reshape(8, 8)
    for spec in (P(), P(None, "model"), P("model", "data"), P("data")):
        put = device_put(x, NamedSharding(mesh2, spec))
        for _ in range(3):   # the C++ dispatcher's later calls too
            out = f(put)
            assert out.sharding.mesh == mesh2
            assert_same(np.asarray(out), gram_plus_column_sums(x))
    assert f.cache_info().misses == 1


def prints(x):
    debug_print("x = {}", x)
    return x * 2.0


def test_debug_print_in_an_spmd_program_is_refused(mesh1):
    f = jit_ps(prints, in_shardings=NamedSharding(mesh1, P("batch")))
    with pytest.raises(PSCUnsupportedCallError, match="debug_print inside an SPMD program"):
        f(np.arange(8.0))


def test_signatures_key_the_shardings(mesh2):
    f = jit_ps(lambda x: x * 2.0, in_shardings=NamedSharding(mesh2, P("data")))
    g = jit_ps(lambda x: x * 2.0, in_shardings=NamedSharding(mesh2, P("model")))
    x = np.ones((8, 2))
    f(x), f(x + 1)
    assert f.cache_info().misses == 1 and f.cache_info().hits == 1
    assert g(x).sharding == NamedSharding(mesh2, P("model"))
    h = jit_ps(lambda x: x * 2.0)   # the arguments' shardings key the signature
    h(device_put(x, NamedSharding(mesh2, P("data"))))
    h(device_put(x, NamedSharding(mesh2, P())))
    assert h.cache_info().misses == 2


def test_single_device_shardings_place_the_call():
    d = jax.devices()[3]
    out = jit_ps(lambda x: x + 1.0, in_shardings=SingleDeviceSharding(d),
                 return_device_arrays=True)(np.zeros(3))
    assert set(out.devices()) == {d}


def gather_twice(x, i):
    return x[i] * 2.0 + x


def doubles_the_tail(x):
    x[1:] = x[1:] * 2.0   # written back into the caller's array, as plain NumPy does
    return x.sum()


def test_run_time_checks_and_argument_updates(mesh1):
    rows = NamedSharding(mesh1, P("batch"))
    f = jit_ps(gather_twice, in_shardings=(rows, None), checks=True)
    assert_same(np.asarray(f(np.arange(8.0), 3)), gather_twice(np.arange(8.0), 3))
    with pytest.raises(IndexError, match="out of bounds for an axis of size 8"):
        f(np.arange(8.0), 11)
    ours, theirs = np.arange(8.0), np.arange(8.0)
    total = jit_ps(doubles_the_tail, in_shardings=rows)(ours)
    assert_same((np.asarray(total), ours), (doubles_the_tail(theirs), theirs))


BIG = np.linspace(0.0, 1.0, 1 << 18)   # 2 MiB: an executable argument, not program text


def with_large_constant(x):
    return BIG * x


def test_large_constants_are_replicated_parameters(mesh1):
    rows = NamedSharding(mesh1, P("batch"))
    f = jit_ps(with_large_constant, in_shardings=rows, out_shardings=rows)
    x = np.linspace(-1.0, 1.0, BIG.size)
    assert_same(np.asarray(f(x)), BIG * x)
    constants = f.compile(x).const_buffers
    assert len(constants) == 1 and constants[0].sharding == NamedSharding(mesh1, P())


def test_a_mesh_in_any_device_order(partitioner):
    order = [jax.devices()[i] for i in (5, 2, 7, 0, 1, 6, 3, 4)]
    mesh = Mesh(np.array(order).reshape(2, 4), ("a", "b"))
    blocks = NamedSharding(mesh, P("a", "b"))
    x = np.arange(64.0).reshape(8, 8)
    out = jit_ps(lambda x: x * 2.0 + 1.0, in_shardings=blocks, out_shardings=blocks)(x)
    assert_same(np.asarray(out), x * 2.0 + 1.0)
    for shard in out.addressable_shards:   # each block on the device the mesh names
        assert_same(np.asarray(shard.data), x[shard.index] * 2.0 + 1.0)
    placed = {shard.device: shard.index for shard in out.addressable_shards}
    assert placed == dict(blocks.devices_indices_map(x.shape))


def constrained_rows(x):
    return with_sharding_constraint(x * 2.0, P("batch"))   # the program's mesh


def test_bare_partition_specs_take_the_mesh_jax_set_mesh_names(mesh1):
    with jax.set_mesh(mesh1):   # where jit_ps is applied
        f = jit_ps(lambda x: x + 1.0, in_shardings=P("batch"), out_shardings=P())
    out = f(np.arange(16.0))
    assert out.sharding == NamedSharding(mesh1, P())
    assert_same(np.asarray(out), np.arange(16.0) + 1.0)
    g = jit_ps(constrained_rows, in_shardings=NamedSharding(mesh1, P()))
    assert_same(np.asarray(g(np.arange(8.0))), np.arange(8.0) * 2.0)
    assert '[{"batch"}]' in g.lower(np.arange(8.0))
    with pytest.raises(PSCTypeError, match="bare PartitionSpec names no mesh"):
        jit_ps(constrained_rows)(np.arange(8.0))


# --- mistakes ----------------------------------------------------------------------------------

def test_a_rank_mismatch_is_a_clear_error(mesh2):
    f = jit_ps(lambda x: x + 1.0, in_shardings=NamedSharding(mesh2, P("data", "model")))
    with pytest.raises(PSCValueError, match="partitions 2 dimensions, but the array has "
                                            "rank 1") as info:
        f(np.ones(8))
    assert info.value.hint and info.value.location.file == __file__


def test_an_indivisible_dimension_is_a_clear_error(mesh1):
    f = jit_ps(lambda x: x + 1.0, in_shardings=NamedSharding(mesh1, P("batch")))
    with pytest.raises(PSCValueError, match="size 6, which the 8 devices of mesh axes "
                                            r"\('batch',\) do not divide"):
        f(np.ones(6))


def test_shardings_over_another_mesh_are_refused(mesh1, mesh2):
    f = jit_ps(lambda x, y: x + y, in_shardings=(NamedSharding(mesh1, P("batch")),
                                                 NamedSharding(mesh2, P("data"))))
    with pytest.raises(PSCValueError, match="2 different meshes"):
        f(np.ones(8), np.ones(8))
    g = jit_ps(lambda x: with_sharding_constraint(x, NamedSharding(mesh1, P("batch"))),
               in_shardings=NamedSharding(mesh2, P("data")))
    with pytest.raises(PSCValueError, match="over mesh {'batch': 8} in a program over mesh"):
        g(np.ones(8))


def test_an_unknown_mesh_axis_is_refused_by_jax_and_by_us(mesh2):
    with pytest.raises(ValueError, match="not found in mesh"):   # jax's own check
        NamedSharding(mesh2, P("rows"))
    from runtime.spmd import check_fits
    unbuildable = type("Odd", (), {"spec": P("rows"), "mesh": mesh2})()   # jax refuses it
    with pytest.raises(PSCValueError, match="mesh axis 'rows' is not one of"):
        check_fits(unbuildable, (8,), "x")


def test_constraint_in_a_program_without_shardings(mesh1):
    f = jit_ps(lambda x: with_sharding_constraint(x * 2.0, NamedSharding(mesh1, P("batch"))))
    with pytest.raises(PSCValueError, match="in a program on one device") as info:
        f(np.ones(8))
    assert "in_shardings" in info.value.hint


def test_wrong_sharding_types_and_structures(mesh1):
    with pytest.raises(PSCTypeError, match="bare PartitionSpec"):
        jit_ps(lambda x: x, in_shardings=P("batch"))
    with pytest.raises(PSCTypeError, match="NamedSharding"):
        jit_ps(lambda x: x, in_shardings="batch")
    rows = NamedSharding(mesh1, P("batch"))
    with pytest.raises(PSCValueError, match="not both"):
        jit_ps(lambda x: x, in_shardings=rows, device=jax.devices()[0])
    f = jit_ps(lambda x, y: x + y, in_shardings=(rows, rows, rows))
    with pytest.raises(PSCValueError, match="in_shardings does not match"):
        f(np.ones(8), np.ones(8))
    g = jit_ps(lambda x: (x, x), out_shardings=(rows, rows, rows), in_shardings=rows)
    with pytest.raises(PSCValueError, match="out_shardings does not match"):
        g(np.ones(8))
