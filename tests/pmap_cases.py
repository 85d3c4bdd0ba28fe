"""`pmap` on 8 simulated CPU devices: the cases `tests/test_pmap.py` runs in a child
process (`tests/eight_devices.py`).

Oracles: the plain Python function run slice by slice (programs without collectives),
a plain-NumPy statement of the program over all slices at once (programs with them), and
``jax.pmap``/``jax.grad`` under ``jax.enable_x64(True)`` for derivatives.
"""
from __future__ import annotations

import pathlib
import re
import runpy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import transpiler as T
from conftest import assert_same
from transpiler import PSCNameError, PSCValueError, devices, grad, jit_ps, pmap, psum, vmap

N = 8
RNG = np.random.default_rng(0)
X = RNG.normal(size=(N, 5))


def per_slice(fn, *args, axes=None):
    """``fn`` run on each slice (the oracle of programs without collectives), stacked."""
    axes = axes or [0] * len(args)
    results = [fn(*[a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, axes)])
               for k in range(N)]
    if isinstance(results[0], tuple):
        return tuple(np.stack(r) for r in zip(*results))
    return np.stack(results)


# --- the control-flow corpus: loops and branches over traced values ------------------------

def halve_while_large(x):
    while np.abs(x).max() > 0.25:   # a different trip count on each device
        x = x * 0.5
    return x


def sign_branch(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def running_products(x, steps):
    acc = np.ones_like(x)
    for k in range(steps):   # static bound: an argument broadcast to every device
        acc = acc * (x + k)
    return acc


def cumulative_until(x):
    total = 0.0
    i = 0
    while i < x.shape[0] and total < 1.0:
        total += np.abs(x[i])
        i += 1
    return total, i


@pytest.mark.parametrize("fn", [halve_while_large, sign_branch, cumulative_until])
def test_control_flow_over_traced_values(fn):
    assert_same(pmap(fn)(X), per_slice(fn, X))


def test_a_static_broadcast_argument_bounds_a_loop():
    f = pmap(running_products, static_broadcasted_argnums=(1,))
    assert_same(f(X, 3), np.stack([running_products(x, 3) for x in X]))
    assert_same(f(X, 1), np.stack([running_products(x, 1) for x in X]))


def shrink_until_small(x):
    while psum(np.sum(x * x), "i") > 1.0:   # the same condition on every device
        x = x * 0.5
    return x


def test_a_loop_on_a_collective():
    expected = X.copy()
    while np.sum(expected * expected) > 1.0:
        expected = expected * 0.5
    assert_same(pmap(shrink_until_small, "i")(X), expected)


def normalized(x):
    if psum(x.sum(), "i") > 0:
        return x / psum(np.sum(x * x), "i")
    return x - T.pmax(x.max(), "i")


def test_a_branch_on_a_collective():
    for data in (X, -np.abs(X), np.abs(X)):
        total = data.sum()
        expected = data / np.sum(data * data) if total > 0 else data - data.max()
        assert_same(pmap(normalized, "i")(data), expected)


# --- axes, pytrees, dtypes ------------------------------------------------------------------

def affine(w, x):
    return {"y": x @ w["a"] + w["b"], "n": x.shape[0]}


def test_in_axes_none_and_pytrees():
    w = {"a": RNG.normal(size=(5, 2)), "b": np.float64(0.5)}
    got = pmap(affine, in_axes=(None, 0))(w, X)
    assert_same(got["y"], X @ w["a"] + 0.5)
    assert_same(got["n"], np.full(N, 5))


def test_in_axes_and_out_axes_one():
    data = RNG.normal(size=(3, N, 2))
    got = pmap(lambda x: np.tanh(x) * 2.0, in_axes=1, out_axes=1)(data)
    assert_same(got, np.tanh(data) * 2.0)
    got = pmap(lambda x: x.T, in_axes=1, out_axes=2)(data)
    assert_same(got, np.stack([data[:, k].T for k in range(N)], axis=2))


def test_out_axes_none_for_a_replicated_result():
    total, scaled = pmap(lambda x: (psum(x, "i"), x * 2), "i", out_axes=(None, 0))(X)
    assert_same(total, X.sum(0))
    assert_same(scaled, X * 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
def test_dtypes_are_kept(dtype):
    data = (RNG.normal(size=(N, 3)) * 10).astype(dtype)
    assert_same(pmap(lambda x: x)(data), data)
    if dtype != np.bool_:
        assert_same(pmap(lambda x: psum(x, "i"), "i")(data),
                    np.stack([np.add.reduce(data, axis=0, dtype=data.dtype)] * N))


def test_fewer_devices_than_available_and_given_devices():
    four = devices()[4:]
    data = X[:4]
    assert_same(pmap(lambda x: psum(x, "i"), "i", devices=four)(data),
                np.stack([data.sum(0)] * 4))
    assert_same(pmap(lambda x: x + T.axis_index("i"), "i")(data),
                data + np.arange(4)[:, None])


def test_device_arrays_are_returned_sharded_and_can_be_fed_back():
    f = pmap(lambda w, x: (w + psum(x, "i"), x * 2.0), "i", in_axes=(None, 0),
             out_axes=(None, 0), return_device_arrays=True)
    w, doubled = f(np.zeros(5), X)
    assert isinstance(w, jax.Array) and isinstance(doubled, jax.Array)
    assert len(doubled.sharding.device_set) == N and w.dtype == np.float64
    assert_same(np.asarray(doubled), X * 2.0)
    w2, _ = f(w, X)   # a result fed back in
    assert_same(np.asarray(w2), 2 * X.sum(0))


def test_programs_are_cached_per_signature():
    f = pmap(lambda x: psum(x, "i"), "i")
    f(X)
    f(X + 1)
    f(X[:2])
    assert f._cache.info().misses == 2


# --- composition: jit_ps, grad, vmap ---------------------------------------------------------

@jit_ps
def smooth(x):
    return np.sin(x) + x * x


def test_pmap_of_a_jit_ps_function():
    assert_same(pmap(smooth)(X), np.sin(X) + X * X)


def centre(x):
    return x - T.pmean(x, "rows")


centred = pmap(centre, "rows")


@jit_ps
def centred_twice(x):
    return centred(centred(x) * 2.0)   # inside a build: pmap means vmap over "rows"


def test_jit_ps_calling_a_pmapped_function():
    once = X - X.mean(0)
    assert_same(centred(X), once)
    assert_same(centred_twice(X), 2.0 * once - (2.0 * once).mean(0))


def loss(w, x):
    return np.sum(psum(np.tanh(x @ w), "i") ** 2)


def jax_loss(w, x):
    return jnp.sum(jax.lax.psum(jnp.tanh(x @ w), "i") ** 2)


def test_grad_through_psum_inside_pmap_agrees_with_jax():
    data = RNG.normal(size=(N, 4, 3))
    w = RNG.normal(size=(3, 2))
    got = pmap(grad(loss), "i", in_axes=(None, 0))(w, data)
    with jax.enable_x64(True):
        want = np.asarray(jax.pmap(jax.grad(jax_loss), "i", in_axes=(None, 0))(w, data))
    assert_same(got, want, rtol=1e-10)


def gathered_loss(x):
    return np.sum(T.all_gather(x, "i") * np.arange(N)[:, None]) + \
        np.sum(T.ppermute(x, "i", [(k, (k + 3) % N) for k in range(N)]) ** 2)


def test_grad_through_all_gather_and_ppermute_agrees_with_jax():
    def theirs(x):
        return jnp.sum(jax.lax.all_gather(x, "i") * jnp.arange(N)[:, None]) + \
            jnp.sum(jax.lax.ppermute(x, "i", [(k, (k + 3) % N) for k in range(N)]) ** 2)
    got = pmap(grad(gathered_loss), "i")(X)
    with jax.enable_x64(True):
        want = np.asarray(jax.pmap(jax.grad(theirs), "i")(X))
    assert_same(got, want, rtol=1e-10)


def test_grad_of_pmax_is_split_between_the_devices_holding_it():
    def peak(x):
        return np.sum(T.pmax(x, "i") * np.arange(1.0, 6.0))
    data = X.copy()
    data[3, 0] = data[5, 0] = 10.0   # a tie on two devices
    got = pmap(grad(peak), "i")(data)
    # N devices each add the same replicated sum: d/dx of N * sum(max(x) * k)
    expected = np.zeros_like(data)
    holders = data == data.max(0)
    expected[holders] = (N * np.arange(1.0, 6.0)[None, :] *
                         holders / holders.sum(0))[holders]
    assert_same(got, expected)


def test_value_and_grad_and_vmap_inside_pmap():
    data = RNG.normal(size=(N, 3, 4))

    def inner(x):   # vmap over 'j' (the rows of each device's slice) inside pmap over 'i'
        return T.psum(x, "j") * T.psum(x.sum(), "i")
    got = pmap(vmap(inner, axis_name="j"), "i")(data)
    assert_same(got, data.sum(1, keepdims=True) * data.sum(axis=(0, 2))[None, :, None])
    value, g = pmap(T.value_and_grad(lambda x: np.sum(psum(x, "i") ** 2)), "i")(X)
    assert_same(value, np.full(N, np.sum(X.sum(0) ** 2)))
    assert_same(g, np.stack([2 * N * X.sum(0)] * N))


def test_vmap_and_grad_of_a_pmapped_function_from_plain_python():
    batch = RNG.normal(size=(3, N, 5))
    assert_same(vmap(centred)(batch), batch - batch.mean(1, keepdims=True))
    g = grad(lambda x: np.sum(centred(x) ** 3))(X)
    cx = X - X.mean(0)
    assert_same(g, 3 * cx ** 2 - (3 * cx ** 2).mean(0), rtol=1e-10)


# --- mistakes -------------------------------------------------------------------------------

def test_a_mapped_axis_longer_than_the_devices_is_refused():
    with pytest.raises(PSCValueError, match="size 9, more than the 8 available devices"):
        pmap(lambda x: x)(np.ones((9, 2)))


def test_a_mapped_axis_of_another_length_than_the_devices_given_is_refused():
    with pytest.raises(PSCValueError, match="size 8 but 2 devices were given"):
        pmap(lambda x: x, devices=devices()[:2])(X)


def test_mapped_axes_of_different_sizes_are_refused():
    with pytest.raises(PSCValueError, match=r"different sizes \[4, 8\]"):
        pmap(lambda x, y: x + y.sum())(X, np.ones((4, 2)))


def test_an_unbound_axis_name_is_named():
    with pytest.raises(PSCNameError, match="unbound axis name 'j'"):
        pmap(lambda x: psum(x, "j"), "i")(X)


def test_mapping_a_scalar_is_refused():
    with pytest.raises(PSCValueError, match="cannot be mapped along axis 0"):
        pmap(lambda x, s: x * s)(X, 2.0)
    assert_same(pmap(lambda x, s: x * s, in_axes=(0, None))(X, 2.0), X * 2.0)


def window(x, start):
    return x[start:start + 3]


def test_a_guard_that_fails_on_one_device_raises():
    starts = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    assert_same(pmap(window)(X, starts), np.stack([x[s:s + 3] for x, s in zip(X, starts)]))
    with pytest.raises(T.PSCRuntimeIndexError):
        pmap(window)(X, np.array([0, 1, 2, 3, 0, 1, 2, 0]))


def test_the_readmes_data_parallel_step(tmp_path):
    """The README's example ("`pmap` and collectives") against the full-batch NumPy step."""
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("### `pmap` and collectives"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    xs = RNG.normal(size=(N, 6, 3))
    ys = (RNG.random((N, 6)) > 0.5).astype(np.float64)
    w = np.array([0.1, -0.2, 0.3])
    x, y = xs.reshape(-1, 3), ys.reshape(-1)
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    expected = w - 0.1 * (x.T @ (p - y))
    script = tmp_path / "readme_pmap_step.py"   # (a file: jit_ps reads functions' source)
    script.write_text("import functools\nimport numpy as np\n" + code)
    namespace = runpy.run_path(str(script), init_globals={"w": w, "xs": xs, "ys": ys})
    assert_same(namespace["w"], expected, rtol=1e-10)


def test_pmap_of_pmap_maps_the_inner_axis_on_each_device():
    data = RNG.normal(size=(N, 3, 2))
    inner = pmap(lambda x: x - T.pmean(x, "j"), "j")
    got = pmap(lambda x: inner(x) * T.psum(1, "i"), "i")(data)
    assert_same(got, (data - data.mean(1, keepdims=True)) * N)


def test_axes_as_pytree_prefixes():
    params = {"scale": RNG.normal(size=(N,)), "table": RNG.normal(size=(4, 2))}
    got = pmap(lambda p: ({"a": p["table"] * p["scale"]}, p["scale"]),
               in_axes=({"scale": 0, "table": None},), out_axes=({"a": 1}, 0))(params)
    assert_same(got[0]["a"], np.stack([params["table"] * s for s in params["scale"]], axis=1))
    assert_same(got[1], params["scale"])


def test_axes_mistakes_are_psc_errors():
    with pytest.raises(PSCValueError, match="in_axes has 1 entries but 2"):
        pmap(lambda x, y: x, in_axes=(0,))(X, X)
    with pytest.raises(T.PSCTypeError, match="positionally"):
        pmap(lambda x: x)(x=X)
    with pytest.raises(PSCValueError, match="not a tree prefix"):
        pmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": X})
