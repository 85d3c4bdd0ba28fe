"""Counted loops over a few scalar ops run their body several times per iteration
(`runtime.loop_unrolling`): results against plain Python/NumPy, and bit for bit against
the same program not unrolled (the same operations in the same order); derivatives against
jax; which loops the program text shows unrolled.  Never timed."""
import jax
import numpy as np
import pytest

from runtime import loop_unrolling, reference
from transpiler import grad, jit_ps, lax

from ad_corpus.oracles import jax_x64  # noqa: F401  (the fixture)
from conftest import assert_same

FACTOR = loop_unrolling.FACTOR


def max_drawdown(prices):
    peak = prices[0]
    worst = 0.0
    for i in range(prices.shape[0]):
        p = prices[i]
        if p > peak:
            peak = p
        drawdown = (peak - p) / peak
        if drawdown > worst:
            worst = drawdown
    return worst


def compound(rate, n):
    value = 1.0
    for _ in range(n):
        value = value * (1.0 + rate) - 0.01 * value * value
    return value


def cumulative_into(x):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i]
        out[i] = total      # an element write per iteration: left as it is
    return out


def wide(x, n):
    for _ in range(n):
        x = np.sin(x) + 0.5   # 64 elements per iteration: left as it is
    return x


def until_small(x):
    steps = 0
    while x > 1e-3:          # no count known when the program is built: left as it is
        x = x * 0.5
        steps += 1
    return steps


def whiles(text: str) -> int:
    return text.count('"stablehlo.while"')


def body_copies(text: str, op: str) -> int:
    return text.count(f'"stablehlo.{op}"')


LENGTHS = [0, 1, 2 * FACTOR - 1, 2 * FACTOR, 2 * FACTOR + 3, 1000]


def programs(n, rng):
    prices = np.cumprod(1.0 + rng.normal(0.0, 0.02, max(n, 1)))
    return [(jit_ps(max_drawdown), max_drawdown, (prices,)),
            (jit_ps(compound, static_argnums=(1,)), compound, (0.03, n)),
            (jit_ps(fori_sum_of_squares, static_argnums=(0,)), None, (n, 0.37))]


@pytest.mark.parametrize("n", LENGTHS)
def test_scalar_recurrences_match_python(n, rng):
    for compiled, plain, args in programs(n, rng):
        if plain is not None:
            assert_same(compiled(*args), plain(*args), rtol=1e-13)


@pytest.mark.parametrize("n", LENGTHS)
def test_unrolling_changes_no_bit(n, monkeypatch):
    unrolled = [compiled(*args) for compiled, _, args in programs(n, np.random.default_rng(n))]
    monkeypatch.setattr(loop_unrolling, "FACTOR", 10**9)   # nothing is unrolled
    rolled = [compiled(*args) for compiled, _, args in programs(n, np.random.default_rng(n))]
    for a, b in zip(unrolled, rolled):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_a_counted_scalar_loop_is_unrolled(rng):
    prices = np.cumprod(1.0 + rng.normal(0.0, 0.02, 8 * FACTOR + 5))
    text = jit_ps(max_drawdown).lower(prices)
    assert whiles(text) == 1
    # the body's one division, FACTOR times in the loop and 5 times after it
    assert body_copies(text, "divide") == FACTOR + 5


def rolled_text(fn, args, static, monkeypatch) -> str:
    """The program text with nothing unrolled."""
    with monkeypatch.context() as patch:
        patch.setattr(loop_unrolling, "FACTOR", 10**9)
        return jit_ps(fn, static_argnums=static).lower(*args)


@pytest.mark.parametrize("fn,args,static", [
    (cumulative_into, (np.arange(100.0),), ()),
    (wide, (np.linspace(0, 1, 64), 50), (1,)),
    (until_small, (np.float64(1e3),), ()),
    (compound, (0.03, 2 * FACTOR - 1), (1,)),   # too short
])
def test_other_loops_are_left_alone(fn, args, static, monkeypatch):
    f = jit_ps(fn, static_argnums=static)
    assert_same(f(*args), fn(*args), rtol=1e-13)
    assert f.lower(*args) == rolled_text(fn, args, static, monkeypatch)


def test_the_left_alone_check_sees_an_unrolled_loop(monkeypatch):
    args = (0.03, 2 * FACTOR)
    text = jit_ps(compound, static_argnums=(1,)).lower(*args)
    assert text != rolled_text(compound, args, (1,), monkeypatch)


def fori_sum_of_squares(n, x):
    return lax.fori_loop(0, n, lambda i, acc: acc + (x * i) ** 2, 0.0)


@pytest.mark.parametrize("n", [0, 5, 16, 17, 43])
def test_reference_semantics(n):
    x = 0.37
    expected = reference.fori_loop(0, n, lambda i, acc: acc + (x * i) ** 2, 0.0)
    actual = jit_ps(fori_sum_of_squares, static_argnums=(0,))(n, x)
    assert_same(np.float64(actual), np.float64(expected), rtol=1e-13)


def test_gradient_of_an_unrolled_loop_matches_jax(jax_x64):
    def jax_compound(rate):
        value = 1.0
        for _ in range(37):
            value = value * (1.0 + rate) - 0.01 * value * value
        return value
    expected = jax.grad(jax_compound)(0.03)
    actual = grad(compound)(0.03, 37)
    assert_same(np.float64(actual), np.float64(expected), rtol=1e-12)
