"""``custom_jvp``, ``custom_vjp`` and ``stop_gradient`` against JAX's (the oracle): the
numerically stable functions of JAX's custom-derivative tutorial, values and gradients,
the naive versions' nan/inf, nondiff_argnums, higher order, forward and reverse mode and
Jacobians, use under traced control flow, the errors, and the CLI's static resolver."""
from __future__ import annotations

import ast
import functools
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import transpiler
from ad_corpus.oracles import jax_x64  # noqa: F401  (JAX's oracle in float64)
from conftest import assert_same
from transpiler import (PSCTypeError, PSCValueError, custom_jvp, custom_vjp, grad, jacfwd,
                        jacrev, jit_ps, jvp, stop_gradient, value_and_grad, vjp)


def close(actual, expected, rtol=1e-6):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-7)


# --- the functions, ours (NumPy source) and JAX's -------------------------------------------

@custom_jvp
def log1pexp(x):
    return np.log(1.0 + np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return log1pexp(x), (1.0 - 1.0 / (1.0 + np.exp(x))) * x_dot


def naive_log1pexp(x):
    return np.log(1.0 + np.exp(x))


@jax.custom_jvp
def jax_log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@jax_log1pexp.defjvp
def _jax_log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return jax_log1pexp(x), (1.0 - 1.0 / (1.0 + jnp.exp(x))) * x_dot


@custom_jvp
def safe_sqrt(x):
    return np.sqrt(x)


@safe_sqrt.defjvp
def safe_sqrt_jvp(primals, tangents):
    x, = primals
    t, = tangents
    positive = x > 0
    slope = np.where(positive, 0.5 / np.sqrt(np.where(positive, x, 1.0)), 0.0)
    return np.sqrt(x), slope * t


@jax.custom_jvp
def jax_safe_sqrt(x):
    return jnp.sqrt(x)


@jax_safe_sqrt.defjvp
def _jax_safe_sqrt_jvp(primals, tangents):
    x, = primals
    t, = tangents
    positive = x > 0
    slope = jnp.where(positive, 0.5 / jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)
    return jnp.sqrt(x), slope * t


@custom_jvp
def logsumexp(x):
    top = np.max(x)
    return top + np.log(np.sum(np.exp(x - top)))


@logsumexp.defjvp
def logsumexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    out = logsumexp(x)
    return out, np.sum(np.exp(x - out) * t)


@custom_vjp
def clip_gradient(lo, hi, x):
    return x


def clip_gradient_fwd(lo, hi, x):
    return x, (lo, hi)


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (None, None, np.clip(g, lo, hi))


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


@jax.custom_vjp
def jax_clip_gradient(lo, hi, x):
    return x


jax_clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                         lambda res, g: (None, None, jnp.clip(g, res[0], res[1])))


@jit_ps
def log1pexp_loss(x):
    return log1pexp(x).sum()


@jit_ps
def naive_loss(x):
    return naive_log1pexp(x).sum()


X32 = np.float32([-3.0, 0.5, 10.0, 100.0])   # exp(100) overflows float32


def test_log1pexp_values_and_gradients_match_jax_where_the_naive_gradient_is_nan():
    close(log1pexp_loss(X32), jax_log1pexp(X32).sum())
    close(grad(log1pexp_loss)(X32), jax.grad(lambda x: jax_log1pexp(x).sum())(X32))
    assert np.isnan(grad(naive_loss)(X32)[-1])          # inf / inf
    assert np.all(np.isfinite(grad(log1pexp_loss)(X32)))
    close(log1pexp(X32), jax_log1pexp(X32))             # from plain Python: compiled


def test_safe_sqrt_gradient_at_zero_is_finite_as_with_jax():
    x = np.array([0.0, 0.25, 4.0])

    @jit_ps
    def loss(v):
        return safe_sqrt(v).sum()

    @jit_ps
    def naive(v):
        return np.sqrt(v).sum()
    close(loss(x), jax_safe_sqrt(x).sum())
    close(grad(loss)(x), jax.grad(lambda v: jax_safe_sqrt(v).sum())(jnp.asarray(x)))
    assert np.isinf(grad(naive)(x)[0])


def test_logsumexp_gradient_is_the_softmax_and_stable_for_large_inputs():
    x = np.array([1000.0, 999.0, -3.0])
    close(logsumexp(x), jax.nn.logsumexp(x))
    close(grad(logsumexp)(x), jax.grad(jax.nn.logsumexp)(jnp.asarray(x)))
    close(jvp(logsumexp, (x,), (np.array([1.0, 2.0, 3.0]),))[1],
          jax.jvp(jax.nn.logsumexp, (jnp.asarray(x),), (jnp.array([1.0, 2.0, 3.0]),))[1])


def test_custom_vjp_clips_the_gradient_as_jax_does():
    @jit_ps
    def loss(x):
        return np.sin(clip_gradient(-0.75, 0.75, x)).sum()
    x = np.array([0.1, 2.0, -0.4, 3.0])
    close(loss(x), np.sin(x).sum())
    close(grad(loss)(x),
          jax.grad(lambda v: jnp.sin(jax_clip_gradient(-0.75, 0.75, v)).sum())(jnp.asarray(x)))
    close(jacrev(lambda v: clip_gradient(-0.5, 0.5, v * 3.0))(x),
          jax.jacrev(lambda v: jax_clip_gradient(-0.5, 0.5, v * 3.0))(jnp.asarray(x)))


def test_forward_reverse_and_jacobians_of_a_custom_jvp_function():
    x, t = np.array([0.3, -1.2, 50.0]), np.array([1.0, -2.0, 0.5])
    out, out_t = jvp(log1pexp, (x,), (t,))
    want, want_t = jax.jvp(jax_log1pexp, (jnp.asarray(x),), (jnp.asarray(t),))
    close(out, want)
    close(out_t, want_t)
    close(jacfwd(log1pexp)(x), jax.jacfwd(jax_log1pexp)(jnp.asarray(x)))
    close(jacrev(log1pexp)(x), jax.jacrev(jax_log1pexp)(jnp.asarray(x)))

    @jit_ps
    def pulled(v, ct):
        y, back = vjp(log1pexp, v)
        return y, back(ct)[0]
    y, g = pulled(x, t)
    jy, jback = jax.vjp(jax_log1pexp, jnp.asarray(x))
    close(y, jy)
    close(g, jback(jnp.asarray(t))[0])


def test_second_derivative_through_a_custom_jvp_function():
    for x in (2.0, -1.5):
        close(grad(grad(log1pexp))(x), jax.grad(jax.grad(jax_log1pexp))(x))
    v = np.array([0.5, -2.0])
    close(transpiler.hessian(lambda z: log1pexp(z).sum())(v),
          jax.hessian(lambda z: jax_log1pexp(z).sum())(jnp.asarray(v)))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def apply_twice(f, x):
    return f(f(x))


@apply_twice.defjvp
def apply_twice_jvp(f, primals, tangents):
    x, = primals
    t, = tangents
    return apply_twice(f, x), 2.0 * t   # a deliberately "wrong" rule: it must be used


@functools.partial(custom_vjp, nondiff_argnums=(1,))
def power(x, n):
    return x ** n


def power_fwd(x, n):
    return x ** n, x


def power_bwd(n, x, g):
    return (n * x ** (n - 1) * g,)


power.defvjp(power_fwd, power_bwd)


def test_nondiff_argnums_pass_python_values_to_the_rules():
    @jit_ps
    def loss(x):
        return apply_twice(np.sin, x).sum() + power(x, 3).sum()
    x = np.array([0.2, 1.5])

    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def j_apply(f, v):
        return f(f(v))
    j_apply.defjvp(lambda f, p, t: (j_apply(f, p[0]), 2.0 * t[0]))
    close(loss(x), np.sin(np.sin(x)).sum() + (x ** 3).sum())
    close(grad(loss)(x),
          jax.grad(lambda v: j_apply(jnp.sin, v).sum() + (v ** 3).sum())(jnp.asarray(x)))
    close(power(x, 2), x ** 2)   # from plain Python: the int is static


def test_custom_functions_under_traced_if_and_loops():
    @jit_ps
    def loss(x):
        total = 0.0
        if x.sum() > 0:
            y = log1pexp(x)
        else:
            y = clip_gradient(-0.1, 0.1, x) * 2.0
        for i in range(3):
            total = total + log1pexp(y * i).sum()
        return total

    def oracle(x):
        y = jax_log1pexp(x) if x.sum() > 0 else jax_clip_gradient(-0.1, 0.1, x) * 2.0
        return sum(jax_log1pexp(y * i).sum() for i in range(3))
    for x in (np.array([0.5, 2.0]), np.array([-3.0, 0.5])):
        close(loss(x), oracle(jnp.asarray(x)))
        close(grad(loss)(x), jax.grad(oracle)(jnp.asarray(x)))


def test_stop_gradient_in_forward_and_reverse_mode():
    def f(x):
        return (stop_gradient(x) * x + transpiler.lax.stop_gradient(np.sin(x))).sum()

    def jf(x):
        return (jax.lax.stop_gradient(x) * x + jax.lax.stop_gradient(jnp.sin(x))).sum()
    x, t = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.0])
    close(value_and_grad(f)(x)[1], jax.grad(jf)(jnp.asarray(x)))
    close(jvp(f, (x,), (t,))[1], jax.jvp(jf, (jnp.asarray(x),), (jnp.asarray(t),))[1])
    close(grad(jit_ps(f))(x), jax.grad(jf)(jnp.asarray(x)))
    assert_same(stop_gradient(x), x)


# --- errors -------------------------------------------------------------------------------------

@custom_jvp
def no_rule(x):
    return x * 2.0


@custom_jvp
def bad_shape(x):
    return x * 2.0


@bad_shape.defjvp
def bad_shape_jvp(primals, tangents):
    return primals[0] * 2.0, np.sum(tangents[0])


@custom_jvp
def bad_structure(x):
    return x * 2.0


@bad_structure.defjvp
def bad_structure_jvp(primals, tangents):
    return primals[0] * 2.0, (tangents[0], tangents[0])


def test_differentiating_without_a_rule_names_the_missing_defjvp():
    x = np.array([1.0, 2.0])
    close(no_rule(x), x * 2.0)   # undifferentiated: fine
    with pytest.raises(PSCTypeError, match="no JVP rule") as err:
        grad(lambda v: no_rule(v).sum())(x)
    assert "no_rule.defjvp" in err.value.hint


def test_a_rule_returning_the_wrong_shape_or_structure_points_to_the_rule():
    x = np.array([1.0, 2.0])
    with pytest.raises(PSCTypeError, match="shape") as err:
        jvp(bad_shape, (x,), (x,))
    assert err.value.location.line == bad_shape_jvp.__code__.co_firstlineno
    with pytest.raises(PSCTypeError, match="structure") as err:
        grad(lambda v: bad_structure(v).sum())(x)
    assert err.value.location.line == bad_structure_jvp.__code__.co_firstlineno


def test_forward_mode_of_a_custom_vjp_function_is_refused_as_in_jax():
    with pytest.raises(PSCTypeError, match="forward-mode"):
        jvp(lambda v: clip_gradient(-1.0, 1.0, v), (np.ones(2),), (np.ones(2),))


def test_a_closure_over_a_differentiated_value_is_refused():
    def f(x):
        @custom_jvp
        def scaled(v):
            return v * x
        scaled.defjvp(lambda p, t: (scaled(p[0]), t[0] * x))
        return scaled(np.ones(2)).sum()
    with pytest.raises(PSCValueError, match="enclosing function") as err:
        grad(jit_ps(f))(3.0)
    assert "as an argument" in err.value.hint


# --- the CLI's static resolver ---------------------------------------------------------------

def test_cli_sees_custom_functions_as_primitives(tmp_path, capsys, monkeypatch):
    from test_cli import build_functions, import_from, run_cli, write_source
    path = write_source(tmp_path / "src", "stable.py", '''\
        from functools import partial
        import numpy as np
        import transpiler
        from transpiler import custom_jvp, grad, jit_ps

        @custom_jvp
        def softplus(x):
            return np.log(1.0 + np.exp(x))

        @softplus.defjvp
        def softplus_jvp(primals, tangents):
            return softplus(primals[0]), tangents[0] / (1.0 + np.exp(-primals[0]))

        @partial(transpiler.custom_vjp, nondiff_argnums=(1,))
        def scale(x, k):
            return x * k

        scale.defvjp(lambda x, k: (x * k, None), lambda k, res, g: (g * k,))

        @jit_ps
        def loss(x):
            return softplus(scale(x, 2.0)).sum()

        @jit_ps
        def loss_grad(x):
            return grad(loss)(x)
        ''')
    code, _, err = run_cli([path, "-o", tmp_path / "src" / "__psc__"], capsys)
    assert code == 0, err
    text = (tmp_path / "src" / "__psc__" / "stable_psc.py").read_text()
    built = ast.unparse(build_functions(text)["build_loss"])
    assert "softplus(scale(x, 2.0))" in built and "transpiled" not in built
    assert "build_softplus" not in text   # not a helper: its rules are transpiled on use
    module = import_from(path, monkeypatch)
    assert module.loss._generated.from_disk
    decorated = ast.unparse(build_functions(module.loss.generated_source)["build_loss"])
    assert decorated == built
    x = np.array([0.5, 400.0])
    want = jax.grad(lambda v: jax.nn.softplus(2.0 * v).sum())(jnp.asarray(x))
    close(module.loss_grad(x), want)
    assert textwrap.dedent(text)   # (the module text is what ran)


# --- custom rules under vmap (the batched custom ops keep the user's rule) ------------------

def _stable_log1pexp(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def _jax_stable_log1pexp(x):
    return jnp.maximum(x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


@custom_jvp
def scaled_softplus(x, s):
    return s * np.log(1.0 + np.exp(x))   # its own derivative is nan where exp overflows


@scaled_softplus.defjvp
def _scaled_softplus_jvp(primals, tangents):
    x, s = primals
    tx, ts = tangents
    sigmoid = 1.0 - 1.0 / (1.0 + np.exp(x))
    return s * _stable_log1pexp(x), s * sigmoid * tx + _stable_log1pexp(x) * ts


@jax.custom_jvp
def jax_scaled_softplus(x, s):
    return s * jnp.log(1.0 + jnp.exp(x))


@jax_scaled_softplus.defjvp
def _jax_scaled_softplus_jvp(primals, tangents):
    x, s = primals
    tx, ts = tangents
    sigmoid = 1.0 - 1.0 / (1.0 + jnp.exp(x))
    return s * _jax_stable_log1pexp(x), s * sigmoid * tx + _jax_stable_log1pexp(x) * ts


@custom_vjp
def scaled_softplus_v(x, s):
    return s * np.log(1.0 + np.exp(x))


def _scaled_softplus_fwd(x, s):
    return s * np.log(1.0 + np.exp(x)), (x, s)


def _scaled_softplus_bwd(res, g):
    x, s = res
    return g * s * (1.0 - 1.0 / (1.0 + np.exp(x))), g * _stable_log1pexp(x)


scaled_softplus_v.defvjp(_scaled_softplus_fwd, _scaled_softplus_bwd)


@jax.custom_vjp
def jax_scaled_softplus_v(x, s):
    return s * jnp.log(1.0 + jnp.exp(x))


jax_scaled_softplus_v.defvjp(
    lambda x, s: (s * jnp.log(1.0 + jnp.exp(x)), (x, s)),
    lambda res, g: (g * res[1] * (1.0 - 1.0 / (1.0 + jnp.exp(res[0]))),
                    g * _jax_stable_log1pexp(res[0])))

PAIRS = {"custom_jvp": (scaled_softplus, jax_scaled_softplus),
         "custom_vjp": (scaled_softplus_v, jax_scaled_softplus_v)}
XB = np.float32([[-3.0, 0.5, 100.0], [2.0, 100.0, -1.0]])   # 2 lanes of 3; exp(100) = inf


def _scale(axis):
    s = np.float32([[0.5, 2.0, 1.5], [3.0, 0.25, 1.0]])
    return {0: s, 1: s.T.copy(), None: s[0]}[axis]


def _vmap_loss(vmap_fn, f, axis, total):
    return lambda x, s: total(vmap_fn(f, in_axes=(0, axis))(x, s))


@pytest.mark.parametrize("kind", sorted(PAIRS))
@pytest.mark.parametrize("axis", [0, 1, None])
def test_grad_of_vmap_runs_the_custom_rule_like_jax(kind, axis):
    ours, theirs = PAIRS[kind]
    s = _scale(axis)
    got = grad(_vmap_loss(transpiler.vmap, ours, axis, np.sum), argnums=(0, 1))(XB, s)
    want = jax.grad(_vmap_loss(jax.vmap, theirs, axis, jnp.sum), argnums=(0, 1))(XB, s)
    naive = jax.grad(_vmap_loss(jax.vmap, lambda x, s: s * jnp.log(1.0 + jnp.exp(x)),
                                axis, jnp.sum))(XB, s)
    assert not np.all(np.isfinite(naive))   # the primal's own derivative is nan there
    for g, w in zip(got, want):
        assert np.all(np.isfinite(g))
        close(g, w)


@pytest.mark.parametrize("kind", sorted(PAIRS))
@pytest.mark.parametrize("axis", [1, None])
def test_vmap_of_grad_and_jacrev_of_vmap_match_jax(kind, axis):
    ours, theirs = PAIRS[kind]
    s = _scale(axis)
    got = transpiler.vmap(grad(lambda x, s: ours(x, s).sum(), argnums=(0, 1)),
                          in_axes=(0, axis))(XB, s)
    want = jax.vmap(jax.grad(lambda x, s: theirs(x, s).sum(), argnums=(0, 1)),
                    in_axes=(0, axis))(XB, s)
    for g, w in zip(got, want):
        assert np.all(np.isfinite(g))
        close(g, w)
    jac = jacrev(transpiler.vmap(ours, in_axes=(0, axis)))(XB, s)
    jax_jac = jax.jacrev(jax.vmap(theirs, in_axes=(0, axis)))(XB, s)
    assert np.all(np.isfinite(jac))
    close(jac, jax_jac)


@custom_jvp
def lane_safe_sqrt(x):
    return np.sqrt(x)


lane_safe_sqrt.defjvp(safe_sqrt_jvp)


@jit_ps
def _jitted_grad_of_vmap(x):
    return grad(lambda x: transpiler.vmap(lane_safe_sqrt)(x).sum())(x)


@jit_ps
def _jitted_vmap_of_vmap_grad(x):
    return grad(lambda x: transpiler.vmap(transpiler.vmap(scaled_softplus_v, in_axes=(0, None)),
                                          in_axes=(1, None))(x, x[0, 0]).sum())(x)


def test_grad_of_vmap_inside_jit_ps_matches_jax():
    x = np.float32([[0.0, 4.0], [1.0, 0.0]])
    close(_jitted_grad_of_vmap(x),
          jax.jit(jax.grad(lambda x: jax.vmap(jax_safe_sqrt)(x).sum()))(x))
    assert not np.all(np.isfinite(jax.grad(lambda x: jnp.sqrt(x).sum())(x)))
    want = jax.grad(lambda x: jax.vmap(jax.vmap(jax_scaled_softplus_v, in_axes=(0, None)),
                                       in_axes=(1, None))(x, x[0, 0]).sum())(XB)
    got = _jitted_vmap_of_vmap_grad(XB)
    assert np.all(np.isfinite(got))
    close(got, want)


def test_nondiff_argnums_and_scalar_arguments_under_vmap_match_jax():
    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def j_apply(f, v):
        return f(f(v))
    j_apply.defjvp(lambda f, p, t: (j_apply(f, p[0]), 2.0 * t[0]))

    @functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
    def j_power(v, n):
        return v ** n
    j_power.defvjp(lambda v, n: (v ** n, v), lambda n, v, g: (n * v ** (n - 1) * g,))

    def ours(x):
        lane = lambda r: (apply_twice(np.sin, r) + power(r, 3) + clip_gradient(-0.1, 0.1, r))
        return transpiler.vmap(lane, in_axes=1)(x).sum()

    def theirs(x):
        lane = lambda r: (j_apply(jnp.sin, r) + j_power(r, 3) + jax_clip_gradient(-0.1, 0.1, r))
        return jax.vmap(lane, in_axes=1)(x).sum()
    x = np.float32([[0.2, 1.5, -0.3], [0.7, -1.0, 2.0]])
    close(grad(ours)(x), jax.grad(theirs)(x))
    close(jacfwd(lambda x: transpiler.vmap(scaled_softplus, in_axes=(0, None))(x, x[0]))(XB),
          jax.jacfwd(lambda x: jax.vmap(jax_scaled_softplus, in_axes=(0, None))(x, x[0]))(XB))
