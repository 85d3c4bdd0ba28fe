"""Truncated Newton-CG, written the natural way: ``for``, ``while``-style ``break``, ``if``,
``grad``, and Hessian-vector products by forward-over-reverse (``jvp`` of ``grad``).

The algorithm of the JAX paper's Table 1, as this project defines it: outer Newton steps;
inner conjugate gradient until ``|r| <= min(0.5, sqrt(|g|)) * |g|`` or ``cg_iters``
iterations; on non-positive curvature, take ``-g`` if it is the first CG step, else keep the
current ``p``, and stop; a unit step, or Armijo backtracking (c = 1e-4, halving, at most 20
times).  The objective is a static argument: one compiled program per objective.
"""
import numpy as np

from transpiler import grad, jit_ps, jvp


def hessian_vector_product(objective, x, v):
    return jvp(grad(objective), (x,), (v,))[1]


def conjugate_gradient(objective, x, g, cg_iters):
    """Approximately solve H p = -g; returns (p, number of Hessian-vector products)."""
    g_norm = np.linalg.norm(g)
    tolerance = np.minimum(0.5, np.sqrt(g_norm)) * g_norm
    p = np.zeros_like(x)
    r = -g
    d = r
    rs = r @ r
    products = 0
    for i in range(cg_iters):
        Hd = hessian_vector_product(objective, x, d)
        products += 1
        curvature = d @ Hd
        if curvature <= 0:
            if i == 0:
                p = -g
            break
        alpha = rs / curvature
        p = p + alpha * d
        r = r - alpha * Hd
        rs_next = r @ r
        if np.sqrt(rs_next) <= tolerance:
            break
        d = r + (rs_next / rs) * d
        rs = rs_next
    return p, products


def armijo_step(objective, x, g, p):
    step = 1.0
    value = objective(x)
    slope = g @ p
    for _ in range(20):
        if objective(x + step * p) <= value + 1e-4 * step * slope:
            break
        step = step * 0.5
    return x + step * p


@jit_ps(static_argnames=("objective", "newton_steps", "cg_iters", "line_search"))
def newton_cg(objective, x, newton_steps, cg_iters, line_search=False):
    products = 0
    for _ in range(newton_steps):
        g = grad(objective)(x)
        p, used = conjugate_gradient(objective, x, g, cg_iters)
        products += used
        if line_search:
            x = armijo_step(objective, x, g, p)
        else:
            x = x + p
    return x, objective(x), products
