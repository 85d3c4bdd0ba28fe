"""XLA:CPU compiles loops with small iterations into one function (`runtime.xla_options`).

Differential: results against the plain function; structural: the optimized HLO says
whether XLA hoisted the loop into a ``xla_cpu_small_call`` (never timed).
"""
import numpy as np
import pytest

from runtime import xla_options
from transpiler import jit_ps


def decay(x, steps):
    """A loop over a 4096-element vector: tens of KiB per iteration, under the threshold."""
    for i in range(steps):
        x = x * 0.5 + np.sin(x[i % x.shape[0]])
    return x


def wide_decay(x, steps):
    """The same loop over 2**20 elements: megabytes per iteration, over every default."""
    for i in range(steps):
        x = x * 0.5 + np.sin(x[i % x.shape[0]])
    return x


def particles(pos, vel, steps):
    """Array-level drift, then a scalar neighbour loop with an ``if`` (loops.py's shape)."""
    n = pos.shape[0]
    for _ in range(steps):
        pos = pos + 0.01 * vel
        vel = np.where((pos < 0.0) | (pos > 1.0), -vel, vel)
        for j in range(n - 1):
            if pos[j] > pos[j + 1]:
                vj = vel[j]
                vel[j] = vel[j + 1]
                vel[j + 1] = vj
    return pos, vel


def hoisted(fn, *args, **kwargs) -> bool:
    text = jit_ps(fn, static_argnums=kwargs.pop("static_argnums", ())).compile(
        *args).as_hlo_text()
    return "xla_cpu_small_call" in text


def test_small_loop_matches_numpy_and_is_one_function():
    x = np.linspace(0.0, 1.0, 4096)
    np.testing.assert_allclose(jit_ps(decay)(x, 50), decay(x, 50), rtol=1e-13)
    assert hoisted(decay, x, 50)


def test_large_loop_keeps_the_thunk_runtime():
    x = np.linspace(0.0, 1.0, 1 << 20)
    np.testing.assert_allclose(jit_ps(wide_decay)(x, 3), wide_decay(x, 3), rtol=1e-13)
    assert not hoisted(wide_decay, x, 3)


def test_nested_scalar_loop_matches_numpy():
    rng = np.random.default_rng(0)
    pos, vel = rng.random(64), rng.standard_normal(64)
    got = jit_ps(particles)(pos, vel, 20)
    want = particles(pos.copy(), vel.copy(), 20)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
        assert g.dtype == w.dtype


def test_environment_restores_xla_default(monkeypatch):
    monkeypatch.setenv("PSC_SMALL_LOOP_BYTES", "1024")
    assert xla_options.small_loop_bytes() == 1024
    x = np.linspace(0.0, 1.0, 4096)
    assert not hoisted(decay, x, 50)   # XLA's 1 KiB: a thunk per operation again
    np.testing.assert_allclose(jit_ps(decay)(x, 50), decay(x, 50), rtol=1e-13)


@pytest.mark.parametrize("value", ["", "lots", "-5"])
def test_unusable_environment_value_means_the_default(monkeypatch, value):
    monkeypatch.setenv("PSC_SMALL_LOOP_BYTES", value)
    assert xla_options.small_loop_bytes() == xla_options.default_small_loop_bytes()


def test_default_shrinks_with_the_cores(monkeypatch):
    low, high = xla_options.SMALL_LOOP_BYTES_RANGE
    for cores, expected in [(1, high), (2, 4 << 20), (16, 512 << 10), (256, low)]:
        monkeypatch.setattr(xla_options.os, "cpu_count", lambda: cores)
        assert xla_options.default_small_loop_bytes() == expected


def test_options_keep_xla_defaults_elsewhere():
    """Only the backend option is added: the rest of the serialized defaults is a prefix."""
    from jaxlib import _jax
    defaults = _jax.CompileOptions().SerializeAsString()
    cpu = xla_options.base_options("cpu").SerializeAsString()
    assert len(cpu) > len(defaults)
    assert xla_options.base_options("cuda").SerializeAsString() == defaults


def test_backend_extra_options_encoding():
    # field 3 { field 3 { field 500 { 1: "a", 2: "b" } } } in protobuf's wire format
    assert xla_options.backend_extra_options({"a": "b"}).hex() == "1a0b1a09a21f060a0161120162"
