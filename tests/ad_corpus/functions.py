"""Plain Python + NumPy functions to differentiate (`tests/test_autodiff*.py`).

Nothing here is decorated: calling a function directly is the NumPy meaning that finite
differences are taken of, and the tests compare ``grad``/``jvp``/... of these functions
with JAX's on the same program written with ``jax.numpy``.  They must live at module level
in a ``.py`` file because the transpiler reads their source.

Element-wise and structural functions take one or more float arrays and return an array;
the tests reduce them to a scalar with `weighted_sum` (a non-uniform weight, so a wrong
permutation in a transpose rule cannot hide behind a cotangent of ones).
"""
import numpy as np

from transpiler import cond, fori_loop, grad, jvp, switch, while_loop


def weighted_sum(f, w, *xs):
    """A scalar from an array function: what ``grad`` differentiates."""
    return np.sum(f(*xs) * w)


# --- element-wise, one operand -----------------------------------------------------------

def ew_exp(x):
    return np.exp(x)


def ew_log(x):
    return np.log(x)


def ew_log1p(x):
    return np.log1p(x)


def ew_expm1(x):
    return np.expm1(x)


def ew_sqrt(x):
    return np.sqrt(x)


def ew_cbrt(x):
    return np.cbrt(x)


def ew_sin(x):
    return np.sin(x)


def ew_cos(x):
    return np.cos(x)


def ew_tan(x):
    return np.tan(x)


def ew_tanh(x):
    return np.tanh(x)


def ew_arcsin(x):
    return np.arcsin(x)


def ew_arccos(x):
    return np.arccos(x)


def ew_arctan(x):
    return np.arctan(x)


def ew_sinh(x):
    return np.sinh(x)


def ew_cosh(x):
    return np.cosh(x)


def ew_arcsinh(x):
    return np.arcsinh(x)


def ew_arccosh(x):
    return np.arccosh(x)


def ew_arctanh(x):
    return np.arctanh(x)


def ew_abs(x):
    return np.abs(x)


def ew_negative_square(x):
    return -np.square(x)


def ew_reciprocal(x):
    return np.reciprocal(x)


def ew_log2_log10_exp2(x):
    return np.log2(x) + np.log10(x) * np.exp2(x)


def ew_power_int(x):
    return x ** 3


def ew_power_float(x):
    return np.power(x, 2.5)


def ew_clip(x):
    return np.clip(x, -0.5, 0.7)


def ew_where(x):
    return np.where(x > 0, x ** 2, np.sin(x))


def ew_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def ew_composite(x):
    return np.tanh(np.sin(x) * np.exp(-x * x)) + np.log(1.0 + x * x)


# --- element-wise, two operands ----------------------------------------------------------

def bin_add_sub_mul(x, y):
    return (x + y) * (x - y) * y


def bin_divide(x, y):
    return x / y


def bin_power(x, y):
    return np.power(x, y)


def bin_maximum(x, y):
    return np.maximum(x, y)


def bin_minimum(x, y):
    return np.minimum(x, y)


def bin_arctan2(y, x):
    return np.arctan2(y, x)


def bin_logaddexp(x, y):
    return np.logaddexp(x, y)


def bin_hypot(x, y):
    return np.hypot(x, y)


def bin_where(x, y):
    return np.where(x > y, x * y, x - y)


# --- reductions ----------------------------------------------------------------------------

def red_sum_axis(x):
    return np.sum(x, axis=0) + x.sum(axis=1).sum()


def red_mean(x):
    return np.mean(x, axis=1) * np.mean(x)


def red_prod(x):
    return np.prod(x, axis=1)


def red_prod_all(x):
    return np.prod(x)


def red_max(x):
    return np.max(x, axis=1)


def red_min(x):
    return np.min(x)


def red_std(x):
    return np.std(x, axis=0)


def red_var(x):
    return np.var(x)


def red_logsumexp(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]


def red_cumsum(x):
    return np.cumsum(x, axis=1) * np.cumsum(x[:, ::-1], axis=0)


def red_sort(x):
    return np.sort(x) * np.arange(x.shape[0])


def red_sort_2d(x):
    return np.sort(x, axis=0)


# --- linear algebra -------------------------------------------------------------------------

def la_dot(a, b):
    return np.dot(a, b)


def la_matmul(a, b):
    return a @ b


def la_matvec(a, v):
    return np.matmul(a, v) + np.dot(v, a.T)


def la_batch_matmul(a, b):
    return np.matmul(a, b)


def la_einsum(a, b):
    return np.einsum("ij,jk->ki", a, b)


def la_einsum_batch(a, b):
    return np.einsum("bij,bjk->bik", a, b)


def la_tensordot(a, b):
    return np.tensordot(a, b, axes=([1, 2], [0, 1]))


def la_outer_inner(u, v):
    return np.outer(u, v) * np.inner(u, v)


def la_norm(x):
    return np.linalg.norm(x) + np.linalg.norm(x, axis=1)


def la_trace(x):
    return np.trace(x) * x.trace() + x[0]


# --- shapes and broadcasting ---------------------------------------------------------------

def sh_broadcast(x, y):
    return x[:, None] * y[None, :] + y


def sh_broadcast_scalar(x, s):
    return x * s + s ** 2


def sh_reshape_transpose(x):
    return x.reshape(3, 4).T.reshape(-1) * np.arange(12.0)


def sh_transpose_3d(x):
    y = np.transpose(x, (1, 2, 0)) * np.moveaxis(x, 0, -1)[..., ::-1]
    return y + x.transpose(2, 0, 1).reshape(3, 4, 2) * np.arange(24.0).reshape(3, 4, 2)


def sh_concatenate_stack(x, y):
    return np.concatenate([x, y * 2.0, x[:2]]) + np.stack([x, y], axis=1).sum(axis=1).sum()


def sh_stack_axis(x, y):
    return np.stack([x, y ** 2, x * y], axis=-1)


def sh_swap_flip(x):
    return np.flip(np.swapaxes(x, 0, 1), axis=0) * np.expand_dims(x[0, :3], 1)


def sh_tile_repeat(x):
    return np.tile(x, 2) * np.repeat(x, 2)


# --- indexing ---------------------------------------------------------------------------------

def ix_slices(x):
    return x[1::2] * x[::-2][:3] + x[-1] * x[-4:-1]


def ix_slices_2d(x):
    return x[::2, 1:] * x[1:, -1:0:-1][:2]


def ix_negative(x):
    return x[-1] * x[-2] + x[0]


def ix_gather(x):
    idx = np.array([0, 2, 2, 5, -1])
    return x[idx] * x[idx[::-1]]


def ix_gather_2d(x):
    rows = np.array([2, 0, 2])
    return x[rows] * x[rows, np.array([1, 1, 0])][:, None]


def ix_dynamic(x, i):
    return x[i] * x[i + 1] + x[i] * x + x[-1 - i]


def ix_setitem(x):
    y = x.copy()
    y[1] = x[0] ** 2
    y[3:5] = np.sin(x[:2])
    return y * x


def ix_setitem_add(x):
    y = x.copy()
    y[1:3] += x[:2] * 2.0
    y[0] *= x[-1]
    return y


def ix_setitem_dynamic(x, i):
    y = np.zeros_like(x)
    y[i] = x[i] ** 2
    y[i + 1] += np.exp(x[0])
    return y + x


# --- control flow -----------------------------------------------------------------------------

def cf_if(x):
    if np.sum(x) > 0:
        y = x * np.sin(x)
    else:
        y = np.exp(x) - x ** 2
    return np.sum(y)


def cf_cond(x, s):
    return cond(s > 0, lambda v: np.sum(v ** 3), lambda v: np.sum(np.cos(v) * s), x)


def _branch0(v):
    return np.sum(v * v)


def _branch1(v):
    return np.sum(np.tanh(v))


def _branch2(v):
    return np.prod(v)


def cf_switch(x, k):
    return switch(k, [_branch0, _branch1, _branch2], x)


def cf_range_loop(x, n):
    acc = x
    for i in range(n):
        acc = np.sin(acc) * x + i * 0.1
    return np.sum(acc ** 2)


def cf_fori(x):
    def body(i, carry):
        s, v = carry
        v = np.tanh(v * 1.5 + s)
        return s + np.sum(v) * 0.1, v
    s, v = fori_loop(0, 5, body, (0.0, x))
    return s + np.sum(v * x)


def cf_for_rows(X, w):
    total = 0.0
    for row in X:
        total = total + np.tanh(np.dot(row, w)) ** 2
    return total


def cf_while_traced(x):
    # the trip count depends on x: forward mode only
    while np.sum(x * x) < 10.0:
        x = x * 1.5 + np.sin(x)
    return x


def cf_while_reverse(x):
    while np.sum(x * x) < 10.0:
        x = x * 1.5 + np.sin(x)
    return np.sum(x)


def cf_while_loop_primitive(x):
    def test(c):
        return np.sum(c[1] * c[1]) < 10.0

    def body(c):
        return c[0] + 1, c[1] * 1.5 + 0.1

    return while_loop(test, body, (0, x))[1]


def cf_early_return(x):
    acc = x
    for i in range(6):
        acc = acc * 1.3 + np.sin(acc)
        if np.sum(acc) > 8.0:
            return np.sum(acc ** 2)
    return np.sum(acc)


def cf_early_return_unrolled(x):
    for i in range(4):
        if i == 2:
            return np.sum(np.exp(x) * i)
        x = np.tanh(x) + x
    return np.sum(x)


# --- scalar functions for Jacobians, Hessians and higher order -------------------------------

def vec_fn(x):
    return np.sin(x) * np.sum(x ** 2) + np.cumsum(x)


def mat_fn(X):
    return np.tanh(X @ X.T)[:, :2] + X[:, 0:1]


def mat_to_vec(X):
    return np.sum(np.exp(X) * X, axis=0)


def scalar_rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def scalar_mixed(x):
    return np.sum(np.sin(x) * np.exp(0.3 * x)) * np.log(1.0 + np.sum(x * x))


def scalar_matrix(X):
    return np.sum(np.tanh(X @ X.T)) + np.linalg.norm(X) ** 3


def scalar_1d(x):
    return np.sin(x) * x ** 3 + np.exp(-x)


def quartic(x):
    return np.sum(x ** 4) + np.prod(np.cos(x))


def two_args(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.sum(x * x)


def with_aux(x, y):
    loss = np.sum((x * y - 1.0) ** 2)
    return loss, {"residual": x * y - 1.0, "n": x.shape[0]}


def pytree_loss(params, data):
    total = 0.0
    h = data
    for W, b in params:
        h = np.tanh(h @ W + b)
        total = total + np.sum(W * W) * 0.01
    return np.sum(h ** 2) + total


def dict_loss(p, x):
    return np.sum((x * p["scale"] + p["shift"]) ** 2) + p["scale"] * p["scale"]


def int_arg(x, k):
    return np.sum(x * k)


def float32_fn(x):
    return np.sum(np.exp(x) * x)


# --- functions that differentiate inside themselves ------------------------------------------

def hvp_of(f, x, v):
    return jvp(grad(f), (x,), (v,))[1]


def grad_of_local(x, y):
    def inner(z):
        return np.sum(np.sin(z) * y)   # closes over the traced y
    return grad(inner)(x) + grad(lambda z: np.sum(z ** 3))(x)


def grad_of_grad_sum(x):
    g = grad(lambda z: np.sum(np.exp(z) * z))
    return np.sum(g(x) * x)


# --- more control flow, nesting and composition ----------------------------------------------

def cf_nested_loops(x, w):
    for i in range(3):
        for j in range(2):
            x = np.tanh(x * w + j * 0.5)
    return np.sum(x * w)


def cf_if_in_loop(x):
    for i in range(4):
        if np.sum(x) > 1.0:
            x = x * 0.5
        else:
            x = x * 2.0 + np.sin(x)
    return np.sum(x ** 2)


def const_fn(x):
    return 2.0


def independent(x, y):
    return np.sum(y * y)


def astype_mix(x):
    return np.sum(x.astype(np.float32) ** 2).astype(np.float64) + np.sum(np.floor(x) * x)


def bowl(x):
    return np.sum(x ** 4) + np.sum(np.cos(x) * x)


def descend(x, steps):
    for _ in range(steps):
        x = x - 0.05 * grad(bowl)(x)
    return x


def meta_loss(x0, steps):
    return np.sum(descend(x0, steps) ** 2)


def grad_wrt_closed_over(y, x0):
    return np.sum(grad(lambda x: np.sum(np.sin(x) * y))(x0))


def nested_jvp(x, y):
    # d/dy of (d/dx x*y*y along 1) = 2*y: the inner and outer perturbations must not mix
    return jvp(lambda y2: jvp(lambda x2: x2 * y2 * y2, (x,), (np.ones_like(x),))[1],
               (y,), (np.ones_like(y),))[1]


# --- models (tests/test_autodiff_models.py) --------------------------------------------------

STEP = 0.01


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def mlp_loss(params, batch):
    inputs, targets = batch
    return np.sum((predict(params, inputs) - targets) ** 2)


def sgd_update(params, batch):
    grads = grad(mlp_loss)(params, batch)
    return [(W - STEP * dW, b - STEP * db) for (W, b), (dW, db) in zip(params, grads)]


def log_softmax_rows(z):
    m = np.max(z, axis=-1, keepdims=True)
    return z - (m + np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True)))


def logsumexp_first_axis(a):
    m = np.max(a, axis=0)
    return m + np.log(np.sum(np.exp(a - m), axis=0))


def hmm_log_likelihood(params, obs):
    """log p(obs) of an HMM with unconstrained logits, by the forward algorithm in log
    space over a ``for`` loop with a static trip count and a traced index."""
    init_logits, trans_logits, emit_logits = params
    log_pi = log_softmax_rows(init_logits)
    log_A = log_softmax_rows(trans_logits)
    log_B = log_softmax_rows(emit_logits)
    alpha = log_pi + log_B[:, obs[0]]
    for t in range(1, obs.shape[0]):
        alpha = logsumexp_first_axis(alpha[:, None] + log_A) + log_B[:, obs[t]]
    m = np.max(alpha)
    return m + np.log(np.sum(np.exp(alpha - m)))


def hmm_log_likelihood_fori(params, obs):
    """The same with ``fori_loop`` (static bounds)."""
    init_logits, trans_logits, emit_logits = params
    log_pi = log_softmax_rows(init_logits)
    log_A = log_softmax_rows(trans_logits)
    log_B = log_softmax_rows(emit_logits)

    def step(t, alpha):
        return logsumexp_first_axis(alpha[:, None] + log_A) + log_B[:, obs[t]]

    alpha = fori_loop(1, obs.shape[0], step, log_pi + log_B[:, obs[0]])
    m = np.max(alpha)
    return m + np.log(np.sum(np.exp(alpha - m)))


def logistic_loss(w, X, y, lam):
    z = X @ w
    return np.mean(np.logaddexp(0.0, -y * z)) + lam * np.sum(w * w)


def logistic_hvp(w, X, y, lam, v):
    return jvp(lambda u: grad(logistic_loss)(u, X, y, lam), (w,), (v,))


def quadratic(x, A, b):
    return 0.5 * x @ A @ x - b @ x


# --- second order on every primitive case -------------------------------------------------

def hvp_two_ways(f, diff, w, args, vs):
    """H v of ``sum(f(*args) * w)`` with respect to ``args[p] for p in diff``, by
    forward-over-reverse and by reverse-over-reverse (the gradient of <grad, v>): every
    VJP rule's output is differentiated again."""
    def scalar(*ys):
        full = list(args)
        for p, y in zip(diff, ys):
            full[p] = y
        return weighted_sum(f, w, *full)

    def gradient(*ys):
        return grad(scalar, argnums=tuple(range(len(ys))))(*ys)

    def directional(*ys):
        total = 0.0
        for g, v in zip(gradient(*ys), vs):
            total = total + np.sum(g * v)
        return total
    xs = tuple(args[p] for p in diff)
    forward = jvp(gradient, xs, vs)[1]
    backward = grad(directional, argnums=tuple(range(len(xs))))(*xs)
    return forward, backward


# --- more loops ----------------------------------------------------------------------------

def cf_fori_dynamic_bound(x, k):
    return np.sum(fori_loop(0, k, lambda i, v: np.sin(v) * 1.1, x) * x)


def cf_setitem_in_loop(x):
    y = np.zeros_like(x)
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc * 0.5 + x[i] ** 2
        y[i] = acc
    return np.sum(y * np.arange(x.shape[0]))


def cf_cond_mixed(x, flag):
    k, v = cond(flag > 0, lambda z: (1, z * 2.0), lambda z: (2, np.sin(z)), x)
    return np.sum(v) * k


def jac_two_args(x, y):
    return np.outer(np.sin(x), y)


def compiled_once(x):
    """Differentiated by one test only (it counts compilations)."""
    return np.sum(np.sin(x) * x)
