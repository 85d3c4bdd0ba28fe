"""`StagedFunction`: signature cache, pytrees, static arguments, 64-bit types, threads."""
from __future__ import annotations

import inspect
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime import (CacheInfo, Executable, PSCShapeError, PSCTypeError, StagedFunction,
                     staged, translate)

HERE = __file__


def _line():
    return inspect.currentframe().f_back.f_lineno


def build_affine(b, x, w, scale=2.0):
    """x * w + scale (NumPy rules: broadcasting, weak Python scalars)."""
    return translate(b, np.add, translate(b, np.multiply, x, w), scale)


def assert_same(actual, expected, rtol=1e-6):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


# --- the signature cache ------------------------------------------------------------------

def test_same_signature_compiles_once():
    f = StagedFunction(lambda b, x: b.exp(x))
    x = np.linspace(-1, 1, 5).astype(np.float32)
    for k in range(4):
        assert_same(f(x + k), np.exp(x + k))
    assert f.cache_info().misses == 1
    assert f.cache_info().size == 1


def test_new_shape_or_dtype_is_a_miss():
    f = StagedFunction(lambda b, x: b.neg(x))
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32) * 2)
    assert f.cache_info().misses == 1
    assert_same(f(np.ones(4, np.float32)), -np.ones(4, np.float32))
    assert f.cache_info().misses == 2
    assert_same(f(np.ones(3, np.float64)), -np.ones(3))
    assert f.cache_info().misses == 3
    assert_same(f(np.ones((3, 1), np.float32)), -np.ones((3, 1), np.float32))
    assert f.cache_info().misses == 4
    assert_same(f(np.arange(3, dtype=np.int32)), -np.arange(3, dtype=np.int32))
    assert f.cache_info().misses == 5
    f(np.ones(4, np.float32))
    f(np.ones(3, np.float64))
    assert f.cache_info().misses == 5
    assert f.cache_info().size == 5


def test_python_scalar_and_numpy_scalar_are_different_signatures():
    """A Python float is weak (adapts to float32), an np.float64 is strong (promotes)."""
    f = StagedFunction(lambda b, x, s: translate(b, np.add, x, s))
    x = np.arange(3, dtype=np.float32)
    weak = f(x, 2.5)
    assert_same(weak, np.add(x, 2.5))
    assert np.asarray(weak).dtype == np.float32
    assert f.cache_info().misses == 1
    strong = f(x, np.float64(2.5))
    assert_same(strong, np.add(x, np.float64(2.5)))
    assert np.asarray(strong).dtype == np.float64
    assert f.cache_info().misses == 2
    f(x, 7.0)
    f(x, np.float64(-1.0))
    assert f.cache_info().misses == 2
    i = np.arange(3, dtype=np.int32)
    assert_same(f(i, 3), np.add(i, 3))                  # int32 + weak int: int32
    assert_same(f(i, np.int64(3)), np.add(i, np.int64(3)))   # strong int64: int64
    assert f.cache_info().misses == 4


def test_traced_python_scalar_is_weak():
    f = StagedFunction(lambda b, x, s: translate(b, np.multiply, x, s))
    x = np.array([1.5, -2.0], np.float32)
    for s in (3.0, 0.1, -1e-3):
        out = f(x, s)
        assert np.asarray(out).dtype == np.float32
        assert_same(out, x * np.float32(s))
    assert f.cache_info().misses == 1


def test_static_argnames_are_part_of_the_key():
    f = StagedFunction(lambda b, x, shape: b.reshape(x, shape), static_argnames=("shape",))
    x = np.arange(6.0)
    assert_same(f(x, (2, 3)), x.reshape(2, 3))
    assert_same(f(x + 1, (2, 3)), (x + 1).reshape(2, 3))
    assert_same(f(x, shape=(2, 3)), x.reshape(2, 3))
    assert f.cache_info().misses == 1
    assert_same(f(x, (3, 2)), x.reshape(3, 2))
    assert f.cache_info().misses == 2
    assert_same(f(x, (6,)), x)
    assert f.cache_info().misses == 3


def test_static_argnums_are_part_of_the_key():
    def build(b, x, power):
        y = x
        for _ in range(power - 1):
            y = b.mul(y, x)
        return y
    f = StagedFunction(build, static_argnums=(1,))
    x = np.array([1.0, 2.0, -3.0])
    assert_same(f(x, 3), x ** 3)
    assert_same(f(x * 2, 3), (x * 2) ** 3)
    assert f.cache_info().misses == 1
    assert_same(f(x, 2), x ** 2)
    assert_same(f(x, power=2), x ** 2)
    assert f.cache_info().misses == 2
    assert_same(f(x, 5), x ** 5)
    assert f.cache_info().misses == 3


def test_static_values_hash_by_equality():
    f = StagedFunction(
        lambda b, x, k: b.add(x, b.broadcast_in_dim(b.constant(np.float64(k)), x.shape, ())),
        static_argnames=("k",))
    x = np.zeros(2)
    assert_same(f(x, 3 / 2), x + 1.5)
    assert_same(f(x, 1.5), x + 1.5)          # an equal value: a hit
    assert f.cache_info().misses == 1
    assert_same(f(x, 2.5), x + 2.5)
    assert f.cache_info().misses == 2


@pytest.mark.parametrize("bad", [[2, 3], {"a": 1}, np.arange(2)])
def test_unhashable_static_argument(bad):
    f = StagedFunction(lambda b, x, shape: b.reshape(x, shape), static_argnames=("shape",))
    with pytest.raises(PSCTypeError) as info:
        f(np.arange(6.0), bad)
    assert "shape" in str(info.value)
    assert f.cache_info().misses == 0


def test_lru_eviction():
    f = StagedFunction(lambda b, x: b.abs(x), maxsize=2)
    a, b, c = np.ones(1), np.ones(2), np.ones(3)
    f(a)
    f(b)
    assert f.cache_info() == CacheInfo(0, 2, 2, 2)
    f(c)                      # evicts the signature of a
    info = f.cache_info()
    assert (info.misses, info.size, info.maxsize) == (3, 2, 2)
    assert_same(f(-a), a)     # compiled again
    assert f.cache_info().misses == 4
    assert f.cache_info().size == 2


def test_clear_cache_resets_counters():
    f = StagedFunction(lambda b, x: b.sqrt(x), maxsize=8)
    x = np.array([4.0, 9.0])
    f(x)
    f(np.ones(3))
    f.lower(x)                # a Python-level hit
    assert f.cache_info().misses == 2 and f.cache_info().hits == 1
    f.clear_cache()
    assert f.cache_info() == CacheInfo(0, 0, 0, 8)
    assert_same(f(x), np.sqrt(x))
    assert f.cache_info().misses == 1
    assert f.cache_info().size == 1


def test_lower_and_compile_use_the_cache():
    f = StagedFunction(lambda b, x: b.cos(x))
    x = np.zeros(4, np.float32)
    f.lower(x)
    f.compile(x)
    f(x)
    info = f.cache_info()
    assert info.misses == 1
    assert info.hits >= 1


def test_failed_build_is_cached_per_signature():
    # Issue 18 item 20: a signature whose build fails is not built again on every call.
    builds = []

    def build(b, x, y):
        builds.append(1)
        return b.add(x, y)
    f = StagedFunction(build)
    messages = []
    for _ in range(3):
        with pytest.raises(PSCShapeError) as info:
            f(np.ones(3), np.ones(4))
        messages.append(str(info.value))
    assert len(builds) == 1 and f.cache_info().misses == 1
    assert messages[0] == messages[1] == messages[2]
    assert_same(f(np.ones(3), np.ones(3)), np.full(3, 2.0))


# --- pytrees, keywords, defaults ----------------------------------------------------------

def test_pytree_arguments_and_results():
    def build(b, tree, pair):
        x, (y, z) = tree["x"], tree["yz"]
        u, w = pair
        return {"sum": b.add(x, y), "nested": (b.mul(z, z), [u, None, {"w": b.neg(w)}]),
                "none": None, "empty": ()}
    f = StagedFunction(build)
    x, y = np.arange(3.0), np.ones(3)
    z = np.array([[1, 2], [3, 4]], np.int32)
    u, w = np.float32(1.5), np.arange(2, dtype=np.int64)
    out = f({"x": x, "yz": (y, z)}, [u, w])
    assert set(out) == {"sum", "nested", "none", "empty"}
    assert out["none"] is None and out["empty"] == ()
    assert isinstance(out["nested"], tuple) and isinstance(out["nested"][1], list)
    assert out["nested"][1][1] is None
    assert_same(out["sum"], x + y)
    assert_same(out["nested"][0], z * z)
    assert_same(out["nested"][1][0], u)
    assert_same(out["nested"][1][2]["w"], -w)
    # A different structure of the same leaves is a different signature.
    f({"x": x, "yz": [y, z]}, [u, w])
    assert f.cache_info().misses == 2


def test_none_leaves_in_arguments():
    f = StagedFunction(lambda b, x, extra: b.add(x, x) if extra is None else b.add(x, extra))
    x = np.arange(4, dtype=np.int64)
    assert_same(f(x, None), x + x)
    assert_same(f(x, x * 3), x + x * 3)
    assert f.cache_info().misses == 2


def test_keywords_and_defaults_match_positional():
    f = StagedFunction(build_affine)
    x = np.array([1.0, -2.0, 3.5], np.float32)
    w = np.array([2.0, 0.5, -1.0], np.float32)
    expected = x * w + np.float32(2.0)
    for out in (f(x, w), f(x, w, 2.0), f(x, w=w), f(x=x, w=w), f(w=w, x=x),
                f(x, w, scale=2.0), f(scale=2.0, w=w, x=x)):
        assert_same(out, expected)
    assert_same(f(x, w, scale=-1.0), x * w - np.float32(1.0))
    assert f.cache_info().misses == 1


def test_staged_decorator_and_interface():
    @staged(static_argnames=("axis",))
    def total(b, x, axis):
        return b.reduce(x, "sum", (axis,))
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_same(total(x, axis=1), x.sum(1, dtype=np.int32))
    assert_same(total(x, 0), x.sum(0, dtype=np.int32))
    with pytest.raises(PSCTypeError):
        total(x, 0, 1)


# --- dtypes end to end --------------------------------------------------------------------

def test_64_bit_types_stay_64_bit_without_enabling_x64():
    assert jax.config.jax_enable_x64 is False
    f = StagedFunction(lambda b, x, i: (b.mul(x, x), b.add(i, i)))
    x = np.array([1 + 2.0 ** -40, 0.1, 1e60])
    i = np.array([2**40 + 1, -2**62, 3], np.int64)
    for _ in range(2):        # the compiling call, then the C++ fast path
        y, j = f(x, i)
        assert np.asarray(y).dtype == np.float64 and np.asarray(j).dtype == np.int64
        assert_same(y, x * x, rtol=0)
        assert_same(j, i + i)
        assert jax.config.jax_enable_x64 is False
    # 64-bit jax arrays returned by one call feed the next one, still 64-bit.
    y2, j2 = f(y, j)
    assert_same(y2, (x * x) * (x * x), rtol=0)
    assert_same(j2, (i + i) * 2)
    assert f.cache_info().misses == 1
    assert jax.config.jax_enable_x64 is False
    assert jnp.asarray(np.float64(1.0)).dtype == jnp.float32   # jax itself still 32-bit


def test_python_scalars_are_64_bit_when_alone():
    f = StagedFunction(lambda b, s, n: (b.add(s, s), b.add(n, n)))
    s, n = f(0.1, 2**40)
    assert_same(s, np.float64(0.2))
    assert_same(n, np.int64(2**41))


def test_results_convert_with_np_asarray():
    f = StagedFunction(lambda b, x: (b.convert(x, np.int32), b.convert(x, np.bool_),
                                     b.convert(x, np.float32)))
    x = np.array([0.0, 1.5, -2.0])
    outs = f(x)
    for out, dtype in zip(outs, (np.int32, np.bool_, np.float32)):
        array = np.asarray(out)
        assert isinstance(array, np.ndarray) and array.dtype == dtype
        assert_same(array, x.astype(dtype))
    assert np.asarray(outs[0], dtype=np.float64).dtype == np.float64


def test_jax_arrays_as_inputs():
    f = StagedFunction(lambda b, x, y: b.sub(x, y))
    x = jnp.arange(4, dtype=jnp.float32)
    y = np.ones(4, np.float32)
    assert_same(f(x, y), np.arange(4, dtype=np.float32) - 1)
    assert_same(f(y, x), 1 - np.arange(4, dtype=np.float32))
    assert_same(f(x, x), np.zeros(4, np.float32))
    assert_same(f(np.asarray(x), y), np.arange(4, dtype=np.float32) - 1)
    assert f.cache_info().misses == 1
    i = jnp.arange(3, dtype=jnp.int32)
    assert_same(f(i, i), np.zeros(3, np.int32))


def test_wrong_argument_count_is_psc_type_error():
    f = StagedFunction(lambda b, x: b.neg(x))
    with pytest.raises(PSCTypeError):
        f()
    with pytest.raises(PSCTypeError):
        f(np.ones(2), np.ones(2))


def test_untraceable_argument_is_psc_type_error():
    f = StagedFunction(lambda b, x: b.neg(x))
    with pytest.raises(PSCTypeError):
        f("not an array")


# --- threads ------------------------------------------------------------------------------

def test_calls_from_four_threads():
    f = StagedFunction(lambda b, x, s: translate(b, np.multiply, x, s))
    barrier = threading.Barrier(4)
    errors, done = [], []

    def worker(k):
        try:
            barrier.wait()
            for r in range(12):
                n = 2 + (k + r) % 3                  # three shapes shared by all threads
                dtype = np.float64 if k % 2 else np.float32
                x = np.arange(n, dtype=dtype) + k
                out = f(x, float(r))
                assert np.asarray(out).dtype == dtype
                np.testing.assert_allclose(np.asarray(out), x * dtype(r), rtol=1e-6)
            done.append(k)
            assert jax.config.jax_enable_x64 is False
        except Exception as err:                     # pragma: no cover - reported below
            errors.append((k, err))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(done) == [0, 1, 2, 3]
    info = f.cache_info()
    assert info.size == 6                            # 3 shapes x 2 dtypes
    assert 6 <= info.misses <= 12     # two threads racing on a signature may both compile
    assert jax.config.jax_enable_x64 is False


# --- inspection ---------------------------------------------------------------------------

def test_lower_has_user_locations():
    def build(b, x):
        b.at(HERE, _line(), 8)
        return b.tanh(x)
    f = StagedFunction(build)
    text = f.lower(np.ones((2, 2), np.float32))
    assert 'loc("' in text
    assert f'loc("{HERE}":' in text
    assert "stablehlo.tanh" in text
    assert "tensor<2x2xf32>" in text
    assert f.cache_info().misses == 1


def test_compile_returns_executable():
    f = StagedFunction(lambda b, x, y: b.dot_general(x, y, ((1,), (0,))))
    x, y = np.ones((2, 3)), np.ones((3, 4))
    ex = f.compile(x, y)
    assert isinstance(ex, Executable)
    hlo = ex.as_hlo_text()
    assert "ENTRY" in hlo
    cost = ex.cost_analysis()
    assert isinstance(cost, dict)
    out = ex(x, y)
    assert_same(out[0], x @ y)
    assert f.compile(x, y) is ex
    assert_same(f(x, y), x @ y)
    assert f.cache_info().misses == 1
