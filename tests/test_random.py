"""`transpiler.random` against ``jax.random`` (the oracle): the same bits for the same key,
shape and dtype, with jax's x64 on (PSC programs are 64-bit, so the default dtypes are
float64 and int64; jax 0.10.2's defaults otherwise: threefry2x32, partitionable).

Each sampler runs from plain Python (compiled per signature), inside ``jit_ps`` with a
traced key, and batched over keys through `runtime.batching.batch_region`.
"""
from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

from runtime import Builder, PSCImpureCallError, PSCTypeError, compile
from runtime import random as runtime_random
from transpiler import jit_ps, random
import transpiler.random as jr
from tests.test_batching_rules import check_batching

SEEDS = [0, 1, 42, -1, -2**40, 2**32 + 5, 2**63 - 1, -2**63, np.uint64(2**64 - 1),
         np.int32(-7)]
SHAPES = [(), (1,), (3, 4), (0,)]
FLOATS = [np.float32, np.float64, ml_dtypes.bfloat16, np.float16]
KEY_SEEDS = [0, -1, 2**40 + 3]   # the keys every sampler is checked on


def oracle(fn, *args, **kwargs):
    with jax.enable_x64(True):
        return np.asarray(fn(*args, **kwargs))


def same(ours, theirs):
    """Same dtype, shape and bits."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), \
        (ours.dtype, ours.shape, theirs.dtype, theirs.shape)
    assert ours.tobytes() == theirs.tobytes(), (ours, theirs)


def keys():
    return [(random.PRNGKey(s), oracle(jax.random.PRNGKey, s)) for s in KEY_SEEDS]


def test_the_oracle_uses_jaxs_default_implementation():
    """The bits matched are those of jax's defaults: threefry2x32, partitionable."""
    assert jax.config.jax_threefry_partitionable is True
    assert jax.config.jax_default_prng_impl == "threefry2x32"


# --- keys ------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_prng_key_is_jaxs(seed):
    same(random.PRNGKey(seed), oracle(jax.random.PRNGKey, seed))
    same(random.key_data(random.key(seed)),
         oracle(lambda s: jax.random.key_data(jax.random.key(s)), seed))


@jit_ps
def key_of(seed):
    return random.PRNGKey(seed)


@pytest.mark.parametrize("seed", [np.int64(-5), np.int64(2**40 + 1), np.int32(-5),
                                  np.uint32(2**32 - 1), np.uint64(2**64 - 2), np.int8(-3)])
def test_traced_seeds_make_jaxs_keys(seed):
    same(key_of(seed), oracle(jax.random.PRNGKey, seed))


def test_seed_errors():
    for seed in (2**63, -2**63 - 1):
        with pytest.raises(OverflowError):
            oracle(jax.random.PRNGKey, seed)
        with pytest.raises(OverflowError):
            random.PRNGKey(seed)
    with pytest.raises(TypeError):
        random.PRNGKey(1.5)


@pytest.mark.parametrize("num", [2, 3, (2, 3), (0,)])
def test_split(num):
    for ours, theirs in keys():
        same(random.split(ours, num), oracle(jax.random.split, theirs, num))


def test_fold_in():
    for ours, theirs in keys():
        for data in (0, 7, 2**32 - 1):
            same(random.fold_in(ours, data), oracle(jax.random.fold_in, theirs, data))
        same(random.fold_in(ours, np.int64(-3)),
             oracle(jax.random.fold_in, theirs, np.int64(-3)))


@jit_ps(static_argnames="n")
def chain(key, n):
    """Draws from a staged loop of splits and fold-ins: traced key, traced index."""
    draws = np.zeros((n, 2))
    for i in range(n):
        key, sub = random.split(key)
        draws[i] = random.uniform(random.fold_in(sub, i), (2,))
    return key, draws


def chain_oracle(key, n):
    draws = []
    for i in range(n):
        key, sub = jax.random.split(key)
        draws.append(jax.random.uniform(jax.random.fold_in(sub, i), (2,)))
    return key, draws


def test_split_fold_in_chains_inside_jit_ps():
    for ours, theirs in keys():
        key, draws = chain(ours, n=3)
        with jax.enable_x64(True):
            want_key, want = chain_oracle(theirs, 3)
        same(key, np.asarray(want_key))
        same(draws, np.stack(want))


# --- continuous ------------------------------------------------------------------------------

# every shape in float32, every dtype in one shape (each case is a compilation)
SHAPES_AND_DTYPES = [(np.float32, s) for s in SHAPES] + [(d, (3, 4)) for d in FLOATS[1:]]


@pytest.mark.parametrize("dtype,shape", SHAPES_AND_DTYPES, ids=str)
def test_uniform_and_normal(dtype, shape):
    for ours, theirs in keys():
        same(random.uniform(ours, shape, dtype, -2.0, 3.5),
             oracle(jax.random.uniform, theirs, shape, dtype, -2.0, 3.5))
        same(random.normal(ours, shape, dtype), oracle(jax.random.normal, theirs, shape, dtype))


def test_defaults_are_64_bit():
    ours, theirs = keys()[0]
    same(random.uniform(ours, (3,)), oracle(jax.random.uniform, theirs, (3,)))
    same(random.normal(ours), oracle(jax.random.normal, theirs))
    same(random.randint(ours, (3,), 0, 10), oracle(jax.random.randint, theirs, (3,), 0, 10))
    same(random.bits(ours, (3,)), oracle(jax.random.bits, theirs, (3,)))


def test_uniform_with_array_bounds():
    ours, theirs = keys()[1]
    low, high = np.float32([[-1.0], [2.0]]), np.float32([0.0, 1.0, 5.0])
    same(random.uniform(ours, (2, 3), np.float32, low, high),
         oracle(jax.random.uniform, theirs, (2, 3), np.float32, low, high))


@pytest.mark.parametrize("dtype,shape", [(d, (3, 4)) for d in FLOATS] + [(np.float64, None)],
                         ids=str)
def test_truncated_normal(dtype, shape):
    lower, upper = (-1.5, 0.7) if shape else (np.float64([-1.0, 0.0]), np.float64([1.0, 3.0]))
    for ours, theirs in keys():
        same(random.truncated_normal(ours, lower, upper, shape, dtype),
             oracle(jax.random.truncated_normal, theirs, lower, upper, shape, dtype))


@pytest.mark.parametrize("mode", ["low", "high"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_gumbel(dtype, mode):
    for ours, theirs in keys():
        for shape in ((3, 4), ()) if dtype == np.float32 else ((3, 4),):
            same(random.gumbel(ours, shape, dtype, mode),
                 oracle(jax.random.gumbel, theirs, shape, dtype, mode))


# --- discrete --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,shape", [(np.uint32, s) for s in SHAPES] +
                         [(d, (3, 4)) for d in (np.uint8, np.uint16, np.uint64)], ids=str)
def test_bits(dtype, shape):
    for ours, theirs in keys():
        same(random.bits(ours, shape, dtype), oracle(jax.random.bits, theirs, shape, dtype))


# (64-bit integer remainders make XLA compile slowly: one int64 case)
RANDINT = [(np.int32, -5, 17), (np.int64, -2**40, 2**50), (np.uint8, 0, 256),
           (np.int16, -300, 300), (np.uint32, 3, 2**32), (np.int32, 5, 5), (np.int8, -200, 7)]


@pytest.mark.parametrize("dtype,low,high", RANDINT)
def test_randint(dtype, low, high):
    for ours, theirs in keys():
        for shape in ((3, 4),) if (dtype, low) != (np.int32, -5) else ((3, 4), (), (0,)):
            same(random.randint(ours, shape, low, high, dtype),
                 oracle(jax.random.randint, theirs, shape, low, high, dtype))


def test_randint_with_array_bounds():
    ours, theirs = keys()[2]
    low, high = np.int64([0, -10, 5]), np.int64([[10], [20]])
    same(random.randint(ours, (2, 3), low, high, np.int32),
         oracle(jax.random.randint, theirs, (2, 3), low, high, np.int32))


@pytest.mark.parametrize("p", [0.3, np.float32(0.7), np.float64([0.1, 0.9, 0.5])], ids=str)
@pytest.mark.parametrize("mode", ["low", "high"])
def test_bernoulli(p, mode):
    shape = (2, 3) if np.ndim(p) == 0 else None
    for ours, theirs in keys():
        same(random.bernoulli(ours, p, shape, mode),
             oracle(jax.random.bernoulli, theirs, p, shape, mode))


LOGITS = np.log(np.array([[0.1, 0.5, 0.4, 1e-9], [0.25, 0.25, 0.25, 0.25],
                          [0.7, 0.1, 0.1, 0.1]]))


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"shape": (5, 3)},
                                    {"shape": (2, 3), "replace": False},
                                    {"axis": 0, "shape": (3, 4), "replace": False}], ids=str)
def test_categorical(kwargs):
    logits = LOGITS.astype(np.float32) if kwargs.get("axis") == 0 else LOGITS
    for ours, theirs in keys():
        same(random.categorical(ours, logits, **kwargs),
             oracle(jax.random.categorical, theirs, logits, **kwargs))


MATRIX = np.arange(24.0).reshape(4, 6)


@pytest.mark.parametrize("x,kwargs", [(10, {}), (1, {}), (MATRIX, {}), (MATRIX, {"axis": 1}),
                                      (MATRIX, {"axis": 1, "independent": True}),
                                      (np.arange(7, dtype=np.int32), {})],
                         ids=["int", "one", "rows", "columns", "independent", "vector"])
def test_permutation(x, kwargs):
    for ours, theirs in keys():
        same(random.permutation(ours, x, **kwargs),
             oracle(jax.random.permutation, theirs, x, **kwargs))


P = np.array([0.1, 0.2, 0.0, 0.3, 0.4])


@pytest.mark.parametrize("a,kwargs", [
    (5, {}), (5, {"replace": False}), (5, {"p": P}), (5, {"replace": False, "p": P}),
    (MATRIX, {"axis": 1}), (MATRIX, {"replace": False}),
    (MATRIX, {"p": P[:4] / P[:4].sum()}),
    (MATRIX, {"axis": 1, "replace": False, "p": np.float32([1, 2, 3, 0, 1, 1]) / 8})],
    ids=["int", "int-no-replace", "int-p", "int-p-no-replace", "columns", "rows-no-replace",
         "rows-p", "columns-p-no-replace"])
def test_choice(a, kwargs):
    shapes = ((), (2, 2), (0,)) if np.ndim(a) == 0 and not kwargs else ((2, 2),)
    for ours, theirs in keys()[:2]:
        for shape in shapes:
            same(random.choice(ours, a, shape, **kwargs),
                 oracle(jax.random.choice, theirs, a, shape, **kwargs))


def test_plain_python_calls_compile_once_per_signature():
    from runtime.autodiff.api import _staged_cache
    ours = [k for k, _ in keys()]
    for name, call in [("split", lambda k: random.split(k)),
                       ("choice", lambda k: random.choice(k, 5, (2,), p=P)),
                       ("permutation", lambda k: random.permutation(k, 4))]:
        call(ours[0])
        entries = [s for key, s in _staged_cache.items() if key[0] == "random." + name]
        misses = sum(s.cache_info().misses for s in entries)
        for k in ours:
            call(k)
        entries = [s for key, s in _staged_cache.items() if key[0] == "random." + name]
        assert sum(s.cache_info().misses for s in entries) == misses, name


# --- inside jit_ps ---------------------------------------------------------------------------

@jit_ps
def samplers(key, logits, x):
    """Every sampler on keys split from a traced key, parameters traced too."""
    ks = jr.split(key, 9)
    return (jr.uniform(ks[0], (3,), np.float32, minval=-1.0, maxval=x[:3]),
            jr.normal(ks[1], (2, 2)),
            jr.truncated_normal(ks[2], -x[0], x[1], (4,)),
            jr.bernoulli(ks[3], x[:3] / 4),
            jr.randint(ks[4], (5,), 0, 10, np.int32),
            jr.gumbel(ks[5], (2,), np.float32),
            jr.categorical(ks[6], logits),
            jr.permutation(ks[7], x),
            jr.choice(ks[8], x, (2,), replace=False))


def samplers_oracle(key, logits, x):
    ks = jax.random.split(key, 9)
    return (jax.random.uniform(ks[0], (3,), np.float32, minval=-1.0, maxval=x[:3]),
            jax.random.normal(ks[1], (2, 2)),
            jax.random.truncated_normal(ks[2], -x[0], x[1], (4,)),
            jax.random.bernoulli(ks[3], x[:3] / 4),
            jax.random.randint(ks[4], (5,), 0, 10, np.int32),
            jax.random.gumbel(ks[5], (2,), np.float32),
            jax.random.categorical(ks[6], logits),
            jax.random.permutation(ks[7], x),
            jax.random.choice(ks[8], x, (2,), replace=False))


def test_samplers_inside_jit_ps_with_traced_keys_and_parameters():
    x = np.array([0.5, 1.5, 2.0, 3.0])
    for ours, theirs in keys():
        got = samplers(ours, LOGITS, x)
        with jax.enable_x64(True):
            want = samplers_oracle(theirs, LOGITS, x)
        for g, w in zip(got, want):
            same(g, np.asarray(w))


@jit_ps
def static_key_draw(x):
    k1, k2 = random.split(random.PRNGKey(3))   # static: drawn while building
    return x + random.normal(k1, x.shape), random.fold_in(k2, 4)


def test_static_keys_draw_the_same_numbers():
    k1, k2 = oracle(jax.random.split, oracle(jax.random.PRNGKey, 3))
    y, k = static_key_draw(np.zeros(3))
    same(y, oracle(jax.random.normal, k1, (3,)))
    same(k, oracle(jax.random.fold_in, k2, 4))


@jit_ps
def draw_with_batched_key(key):
    return random.normal(key, (2,))


def test_key_errors():
    with pytest.raises(PSCTypeError, match="single uint32"):
        draw_with_batched_key(random.split(random.PRNGKey(0)))
    with pytest.raises(PSCTypeError, match="single uint32"):
        random.normal(np.zeros(2, np.int32))


# --- batched keys (the mechanism of vmap) ----------------------------------------------------

def _key_draw(rng):
    return rng.integers(0, 2**32, (2,), dtype=np.uint32)


def _batched_samplers(b, key):
    f32 = np.dtype(np.float32)
    return [runtime_random._split(b, key, (3,)),
            runtime_random._normal(b, key, (2, 3), f32),
            runtime_random._uniform(b, key, b.constant(-1.0), b.constant(2.0), (4,), f32),
            runtime_random._randint_any_width(b, key, b.constant(0), b.constant(9), (3,),
                                              np.dtype(np.int32)),
            runtime_random._shuffle(b, key, b.iota((6,), np.int64, 0), 0)]


@pytest.mark.parametrize("dim", [0, -1])
def test_batched_keys_match_a_loop_over_keys(dim):
    check_batching(_batched_samplers, [_key_draw], [dim])


def test_batched_keys_match_jax_vmap():
    stacked = np.stack([random.PRNGKey(s) for s in KEY_SEEDS])
    b = Builder("lane")
    lane = b.parameter(0, (2,), np.uint32)
    lane_program = b.build(runtime_random._normal(b, lane, (3,), np.dtype(np.float64)))
    batched = Builder("batched")
    keys_param = batched.parameter(0, stacked.shape, np.uint32)
    (out,), (dim,) = runtime_random_batch(batched, lane_program, keys_param)
    got = np.asarray(compile(batched.build(out))(stacked)[0])
    want = oracle(jax.vmap(lambda k: jax.random.normal(k, (3,))), stacked)
    same(np.moveaxis(got, dim, 0), want)


def runtime_random_batch(b, lane_program, keys_param):
    from runtime.batching import batch_region
    return batch_region(b, lane_program.region, [keys_param], [0])


# --- the front end: transpiler.random is the runtime's, Python's random stays impure ---------

def test_generated_modules_import_runtime_random(tmp_path):
    from transpiler.cli import transpile_file
    source = tmp_path / "noisy.py"
    source.write_text("import numpy as np\nfrom transpiler import jit_ps, random\n"
                      "import transpiler.random as jr\n\n\n@jit_ps\ndef noisy(key, x):\n"
                      "    k1, k2 = random.split(key)\n"
                      "    return x + random.normal(k1, x.shape) * jr.uniform(k2)\n")
    text = transpile_file(str(source))
    assert "from runtime import random" in text and "import runtime.random as jr" in text
    assert "transpiler" not in text.split("psc-text")[1]


# --- impure random calls name the transpiler.random equivalent -------------------------------

def numpy_noise(x):
    return x + np.random.normal(size=x.shape)


def test_numpy_random_hint_names_transpiler_random():
    with pytest.raises(PSCImpureCallError) as info:
        jit_ps(numpy_noise)
    hint = info.value.hint
    assert "transpiler.random" in hint and "random.normal(key, shape)" in hint
    assert "random.split(key)" in hint and "pass them in as an argument" in hint


# --- derivatives through the parameters ------------------------------------------------------

def uniform_sum(low, high):
    return random.uniform(random.PRNGKey(1), (3,), minval=low, maxval=high).sum()


def test_gradients_through_parameters_match_jax():
    from transpiler import grad
    key = oracle(jax.random.PRNGKey, 1)
    want = oracle(lambda: jnp_stack(jax.grad(
        lambda lo, hi: jax.random.uniform(key, (3,), minval=lo, maxval=hi).sum(),
        argnums=(0, 1))(-1.0, 2.0)))
    got = grad(uniform_sum, argnums=(0, 1))(-1.0, 2.0)
    np.testing.assert_allclose(np.stack(got), want, rtol=1e-15)


def jnp_stack(values):
    return np.stack([np.asarray(v) for v in values])


# --- under vmap: a batch of keys gives each lane jax's draws ------------------------------

def _draws(key, logits):
    k1, k2, k3 = random.split(key, 3)
    return (random.normal(k1, (3,)), random.randint(k2, (2,), 0, 10),
            random.categorical(k3, logits))


def _draws_oracle(key, logits):
    k1, k2, k3 = jax.random.split(key, 3)
    return (jax.random.normal(k1, (3,)), jax.random.randint(k2, (2,), 0, 10),
            jax.random.categorical(k3, logits))


@pytest.mark.parametrize("in_axes", [(0, None), (1, None), (0, 0)])
def test_vmap_of_samplers_over_keys(in_axes):
    from transpiler import vmap
    keys_ = np.asarray(jr.split(jr.PRNGKey(7), 4))
    logits = np.log(np.array([[0.1, 0.6, 0.3]] * 4)) if in_axes[1] == 0 else \
        np.log(np.array([0.1, 0.6, 0.3]))
    keys_in = keys_.T if in_axes[0] == 1 else keys_
    ours = jit_ps(vmap(_draws, in_axes=in_axes))(keys_in, logits)
    with jax.enable_x64(True):
        theirs = jax.vmap(_draws_oracle, in_axes=in_axes)(keys_in, logits)
    assert len(ours) == len(theirs)
    for mine, jaxs in zip(ours, theirs):
        same(mine, np.asarray(jaxs))
