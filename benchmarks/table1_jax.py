"""The ``jax.jit`` baseline of Table 1: the same truncated Newton-CG, written by hand the
way a JAX user must — ``lax.fori_loop``/``lax.while_loop``/``lax.cond`` instead of Python
``for``/``break``/``if``, ``jax.numpy`` instead of NumPy, Hessian-vector products by
``jax.jvp(jax.grad(f))`` — and the three objectives in ``jax.numpy`` (the data are the
examples' own arrays).

This module turns JAX's 64-bit mode on globally when imported (benchmarks run in their own
process); the psc-transpiler product path never relies on it.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_enable_x64", True)


def hessian_vector_product(objective, x, v):
    return jax.jvp(jax.grad(objective), (x,), (v,))[1]


def conjugate_gradient(objective, x, g, cg_iters):
    """Approximately solve H p = -g; returns (p, number of Hessian-vector products)."""
    g_norm = jnp.linalg.norm(g)
    tolerance = jnp.minimum(0.5, jnp.sqrt(g_norm)) * g_norm
    r = -g

    def test(state):
        i, done = state[0], state[-1]
        return (i < cg_iters) & ~done

    def body(state):
        i, p, r, d, rs, products, _ = state
        Hd = hessian_vector_product(objective, x, d)
        curvature = d @ Hd

        def nonpositive(_):   # take -g on the first step, else keep p; stop
            return jnp.where(i == 0, -g, p), r, d, rs, jnp.array(True)

        def positive(_):
            alpha = rs / curvature
            p_next = p + alpha * d
            r_next = r - alpha * Hd
            rs_next = r_next @ r_next
            d_next = r_next + (rs_next / rs) * d
            return p_next, r_next, d_next, rs_next, jnp.sqrt(rs_next) <= tolerance

        p, r, d, rs, done = lax.cond(curvature <= 0, nonpositive, positive, None)
        return i + 1, p, r, d, rs, products + 1, done

    init = (0, jnp.zeros_like(x), r, r, r @ r, 0, jnp.array(False))
    _, p, _, _, _, products, _ = lax.while_loop(test, body, init)
    return p, products


def armijo_step(objective, x, g, p):
    value = objective(x)
    slope = g @ p

    def test(state):
        k, _, done = state
        return (k < 20) & ~done

    def body(state):
        k, step, _ = state
        accept = objective(x + step * p) <= value + 1e-4 * step * slope
        return k + 1, jnp.where(accept, step, step * 0.5), accept

    _, step, _ = lax.while_loop(test, body, (0, jnp.asarray(1.0, x.dtype), jnp.array(False)))
    return x + step * p


def newton_cg_unjitted(objective, x, newton_steps, cg_iters, line_search=False):
    def newton_step(_, state):
        x, products = state
        g = jax.grad(objective)(x)
        p, used = conjugate_gradient(objective, x, g, cg_iters)
        x = armijo_step(objective, x, g, p) if line_search else x + p
        return x, products + used

    x, products = lax.fori_loop(0, newton_steps, newton_step, (x, 0))
    return x, objective(x), products


STATIC_ARGNAMES = ("objective", "newton_steps", "cg_iters", "line_search")


def make_newton_cg():
    """A fresh ``jax.jit`` of the solver (nothing traced or compiled yet)."""
    return jax.jit(newton_cg_unjitted, static_argnames=STATIC_ARGNAMES)


newton_cg = make_newton_cg()


# --- the three objectives, in jax.numpy -------------------------------------------------

def quadratic_objective(A, B):
    A, B = jnp.asarray(A), jnp.asarray(B)

    def quadratic(x):
        return 0.5 * x @ (A @ x) - B @ x
    return quadratic


def logistic_objective(X, y):
    X, y = jnp.asarray(X), jnp.asarray(y)

    def objective(w):
        margins = y * (X @ w)
        return jnp.mean(jnp.logaddexp(0.0, -margins)) + 0.5e-3 * (w @ w)
    return objective


def _log_softmax(z):
    shifted = z - jnp.max(z, axis=-1, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


def _logsumexp(z, axis):
    top = jnp.max(z, axis=axis, keepdims=True)
    return jnp.squeeze(top, axis=axis) + jnp.log(jnp.sum(jnp.exp(z - top), axis=axis))


def hmm_objective(observations, states, symbols):
    observations = jnp.asarray(observations)
    steps = observations.shape[0]

    def objective(x):
        initial = _log_softmax(x[:states])
        transition = _log_softmax(x[states:states + states * states].reshape(states, states))
        emission = _log_softmax(x[states + states * states:].reshape(states, symbols))
        alpha = initial + emission[:, observations[0]]

        def forward(t, alpha):
            return (_logsumexp(alpha[:, None] + transition, axis=0)
                    + emission[:, observations[t]])
        alpha = lax.fori_loop(1, steps, forward, alpha)
        return -_logsumexp(alpha, axis=0) / steps
    return objective
