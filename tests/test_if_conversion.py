"""If-conversion (`runtime.if_conversion`): cheap two-branch conditionals become selects.

Differential: each PSC function runs as plain Python + NumPy (the oracle), compiled with
if-conversion (the default) and compiled without it (``if_conversion=False``); values,
dtypes and structure must agree, and the StableHLO shows which form each compiled to.
Builder-level programs are checked against `runtime.reference`'s ``cond``/``switch``.
"""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

from runtime import Builder, compile, reference
from runtime.if_conversion import MAX_ELEMENTS, cheap_branch, convert_ifs
from runtime.errors import PSCError
from transpiler import grad, jit_ps


def clip_scale(x, s):
    if x.sum() > 0:
        y = x * s
    else:
        y = -x
    return y


def _golden_source(stem: str, name: str):
    """The plain function of a golden construct (``tests/golden/sources``)."""
    path = pathlib.Path(__file__).parent / "golden" / "sources" / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(f"if_conversion_{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name).__wrapped__


sum_until_negative = _golden_source("break_continue", "sum_until_negative")


def nested(x, t):
    if t > 0:
        if t > 1:
            y = x + 1
        else:
            y = x * 2
    else:
        y = x - 3
    return y


def counts(x):
    n = 0
    k = 0
    for v in x:
        if v > 0.5:
            n = n + 1
        elif v < -0.5:
            k = k + 2
    return n, k


def untaken_nan_and_zero_division(x, d, k):
    # the untaken branch computes sqrt of a negative number and divides an integer by zero
    if x >= 0:
        y = np.sqrt(x)
        q = d // k
    else:
        y = x * 0.0
        q = d
    return y, q


def cg_like(x, steps):
    r = x.copy()
    p = np.zeros_like(x)
    rs = r @ r
    for i in range(steps):
        curvature = r @ r + 1.0
        if curvature <= 0:
            break
        alpha = rs / curvature
        p = p + alpha * r
        r = r * 0.5
        rs_next = r @ r
        if np.sqrt(rs_next) <= 1e-3:
            break
        rs = rs_next
    return p, rs


CASES = [
    (clip_scale, lambda rng: (rng.normal(size=5), 2.5)),
    (clip_scale, lambda rng: (rng.normal(size=5).astype(np.float32), np.float32(0.5))),
    (sum_until_negative, lambda rng: (np.array([1.0, np.nan, 2.0, -1.0, 5.0]),)),
    (sum_until_negative, lambda rng: (rng.random(7),)),
    (nested, lambda rng: (rng.normal(size=3), 2.0)),
    (nested, lambda rng: (rng.normal(size=3), 0.5)),
    (nested, lambda rng: (rng.normal(size=3), -1.0)),
    (counts, lambda rng: (rng.normal(size=20),)),
    (untaken_nan_and_zero_division, lambda rng: (-2.0, np.int64(7), np.int64(0))),
    (untaken_nan_and_zero_division, lambda rng: (4.0, np.int64(7), np.int64(2))),
    (cg_like, lambda rng: (rng.normal(size=50), 30)),
]


def _same(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
        return
    assert type(got) is type(expected) or np.asarray(got).dtype == np.asarray(expected).dtype
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-12, atol=0)


@pytest.mark.parametrize("fn, make", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_converted_and_kept_agree_with_numpy(fn, make):
    args = make(np.random.default_rng(0))
    static = ("steps",) if fn is cg_like else ()
    converted = jit_ps(fn, static_argnames=static)
    kept = jit_ps(fn, static_argnames=static, if_conversion=False)
    expected = fn(*args)
    _same(converted(*args), expected)
    _same(kept(*args), expected)


@pytest.mark.parametrize("fn, make", [c for c in CASES if c[0] is not cg_like][::2],
                         ids=lambda c: getattr(c, "__name__", ""))
def test_cheap_branches_compile_to_selects(fn, make):
    args = make(np.random.default_rng(0))
    assert "stablehlo.case" in jit_ps(fn, if_conversion=False).lower(*args)
    text = jit_ps(fn).lower(*args)
    assert "stablehlo.case" not in text and "stablehlo.select" in text


def big_branch(A, x):
    if x.sum() > 0:
        y = A @ x
    else:
        y = x
    return y


def scale_large(x):
    if x[0] > 0:
        y = x * 2.0
    else:
        y = x
    return y


def looping_branch(x, n):
    if n > 0:
        i = 0
        while i < n:
            x = x * 1.5
            i = i + 1
    return x


@pytest.mark.parametrize("fn, args", [
    (big_branch, (np.ones((100, 100)), np.ones(100))),        # a 10 000-element operand
    (scale_large, (np.ones(MAX_ELEMENTS + 1),)),             # a result too large to select
    (looping_branch, (np.ones(3), 4)),                        # a loop in a branch
])
def test_costly_branches_stay_conditionals(fn, args):
    compiled = jit_ps(fn)
    assert "stablehlo.case" in compiled.lower(*args)
    _same(compiled(*args), fn(*args))


def test_a_branch_with_a_run_time_check_stays_a_conditional():
    def pick(x, i):
        if i >= 0:
            y = x[i]
        else:
            y = x[0]
        return y
    checked = jit_ps(pick, checks=("index",))
    assert "stablehlo.case" in checked.lower(np.arange(3.0), 1)
    assert checked(np.arange(3.0), 1) == 1.0
    with pytest.raises(PSCError):
        checked(np.arange(3.0), 7)   # only the taken branch's check may fire
    assert checked(np.arange(3.0), -5) == 0.0   # the untaken branch's index is not checked


def test_gradients_through_converted_branches_stay_finite():
    import jax
    import jax.numpy as jnp

    def safe_sqrt(x):
        if x > 0:
            y = np.sqrt(x)
        else:
            y = 0.0 * x
        return y

    def jax_safe_sqrt(x):
        return jax.lax.cond(x > 0, jnp.sqrt, lambda v: 0.0 * v, x)

    ours = jit_ps(grad(safe_sqrt))
    assert "stablehlo.case" not in ours.lower(-1.0)   # converted, after differentiation
    for x in (-1.0, 0.0, 4.0):
        got = ours(x)
        assert np.isfinite(got)
        with jax.enable_x64(True):   # (JAX's flag: only for the oracle, and restored)
            expected = float(jax.grad(jax_safe_sqrt)(x))
        np.testing.assert_allclose(got, expected, rtol=1e-15)


# --- builder level: against runtime.reference -----------------------------------------------

def _switch_program(b, index, x):
    return b.conditional(index, [lambda sb, v: sb.mul(v, v),
                                 lambda sb, v: sb.add(v, sb.constant(np.ones(4)))], x)


@pytest.mark.parametrize("index", [-3, 0, 1, 5])
def test_two_branch_switch_matches_the_reference(index):
    b = Builder("switch2")
    computation = b.build(_switch_program(b, b.parameter(0, (), np.int32),
                                          b.parameter(1, (4,), np.float64)))
    assert convert_ifs(computation) == 1
    assert not any(op.name == "case" for op in computation.region.operations)
    x = np.arange(4.0)
    got = np.asarray(compile(computation)(np.int32(index), x)[0])
    expected = reference.switch(index, [lambda v: v * v, lambda v: v + 1.0], x)
    np.testing.assert_array_equal(got, expected)


def _branchy(size, true_fn):
    b = Builder("costs")
    x = b.parameter(0, (size,), np.float64)
    s = b.parameter(1, (), np.float64)
    computation = b.build(b.conditional(b.compare(s, b.constant(0.0), "GT"),
                                        [true_fn, lambda sb, v: v], x))
    return computation, next(op for op in computation.region.operations if op.name == "case")


def test_cost_model():
    computation, case = _branchy(8, lambda sb, v: sb.neg(v))
    assert [cheap_branch(r) for r in case.regions] == [0, 8]   # identity, then negate
    assert convert_ifs(computation) == 1
    computation, case = _branchy(MAX_ELEMENTS + 1, lambda sb, v: sb.neg(v))
    assert cheap_branch(case.regions[1]) is None   # more elements than MAX_ELEMENTS
    assert convert_ifs(computation) == 0
    computation, case = _branchy(8, lambda sb, v: sb.cumsum(v, 0))
    assert cheap_branch(case.regions[1]) is None   # not an element-wise primitive
    assert convert_ifs(computation) == 0
