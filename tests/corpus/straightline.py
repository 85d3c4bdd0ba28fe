"""A corpus of plain Python + NumPy functions, as users write them for ``@jit_ps``.

Nothing here is decorated: calling a function directly is the pure-NumPy oracle, and
``tests/test_frontend_corpus.py`` compares it with ``jit_ps(function)``.  Helpers
(``_``-prefixed or used by several functions) are plain too.  Control flow only ever
depends on *static* values (static arguments, shapes, Python containers); the explicit
primitives have their reference meaning when this module runs as plain Python.
"""
import numpy as np

from transpiler import cond, fori_loop, static_range, switch, while_loop

# --- module-level constants ---------------------------------------------------------------

SCALE = 2.5
OFFSET = 0.5
EPS = 1e-6
SHIFTS = (1.0, -2.0, 0.25)
COEFFS = (0.5, -1.0, 2.0, 3.0)                  # Horner: highest degree first
BASIS = np.array([[1.0, 0.0], [0.5, 2.0]])      # a float64 constant array
MASK3 = np.array([True, False, True])
IDX = np.array([2, 0, 1])
SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805
MAX_ITERS = 25


# --- helpers (plain functions the corpus calls) -------------------------------------------

def relu(x):
    return np.maximum(x, 0.0)


def _center(x):
    return x - x.mean(axis=0)


def _scale(x):
    return x / (x.std(axis=0) + EPS)


def standardize(x):
    return _scale(_center(x))


def selu(x, alpha=SELU_ALPHA, lmbda=SELU_SCALE):
    return lmbda * np.where(x > 0, x, alpha * (np.exp(x) - 1))


def softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def stable_sigmoid(x):
    return np.where(x >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))


# --- closures and lambdas made at module level --------------------------------------------

def make_scaler(scale):
    def scaled(x):
        return x * scale + OFFSET
    return scaled


def make_affine(W, b):
    def affine(x):
        return x @ W + b
    return affine


def make_residual(fn):
    def residual(x):
        return x + fn(x)
    return residual


scale_by_3 = make_scaler(3.0)
halve = make_scaler(0.5)
affine_2d = make_affine(BASIS, np.array([0.1, -0.2]))
residual_tanh = make_residual(np.tanh)

SQUARE = lambda v: v * v  # noqa: E731
SOFTPLUS = lambda v: np.logaddexp(0.0, v)  # noqa: E731
PLUS_ONE, MINUS_ONE = (lambda v: v + 1.0), (lambda v: v - 1.0)  # two lambdas, one line

residual_square = make_residual(SQUARE)


# --- operators ----------------------------------------------------------------------------

def arithmetic(x, y):
    return x + y, x - y, x * y, x / y, -x, +x, abs(x), x ** 2, abs(x) ** y, 2.0 ** y


def integer_arithmetic(a, b):
    return (a // b, a % b, -a // 3, a % -3, ~a, a ** 2, a & b, a | b, a ^ b, a << 2,
            a >> 1, abs(a), a * 3 - b)


def bool_operators(m, n):
    return ~m, m & n, m | n, m ^ n, m == n, m != n, m.sum(), m.any(), m.all(axis=0)


def float_floordiv_mod(x, y):
    return x // y, x % y, np.fmod(x, y), np.floor_divide(x, 0.5), x % 1.0


def matmul_operator(A, B, v):
    return A @ B, A @ v, v @ B, (A @ B).T @ A


def comparisons(x, y):
    return x < y, x <= y, x > y, x >= y, x == y, x != y, x > 0.5, 0.5 < x


def augmented_names(x, y):
    z = 0.5 * x
    z += y
    z *= 2.0
    z -= x
    z /= 3.0
    z **= 2
    count = 0
    count += 2
    w = y.copy()
    w //= 0.5
    w %= 0.75
    return z * count, w


def augmented_alias(x, y):
    # NumPy: `z += y` writes into x (z is x), so the result is all zeros
    z = x
    z += y
    return z - x


def integer_augmented(a):
    r = a.copy()
    r += 1
    r *= 3
    r //= 2
    r %= 5
    r <<= 1
    r |= 1
    r ^= 2
    r &= 7
    r >>= 1
    return r


def weak_scalar_promotion(x):
    return x * 2.0, x + 1, x / 3, 1 - x, x ** 2, 0.5 * x + 1


def traced_python_scalar(x, s):
    # s is a traced argument: a Python float stays weak, a NumPy scalar does not
    return x * s, s * 2, x + s


def mixed_precision(a, b):
    return a + b, a * 2.0 + b, np.maximum(a, b)


# --- array methods and attributes ---------------------------------------------------------

def array_method_reductions(x):
    return (x.sum(axis=0), x.sum(), x.mean(), x.mean(axis=1), x.max(), x.min(axis=1),
            x.argmax(), x.argmin(axis=0), x.std(), x.var(axis=0), x.prod(axis=1),
            x.cumsum(), x.cumsum(axis=1), x.sum(axis=1, keepdims=True), x.all(),
            x.any(axis=0))


def array_attributes(x):
    n, m = x.shape
    scale = 1.0 / x.size
    centered = x - x.mean(axis=0)
    return centered * scale * x.ndim + n - m, np.zeros(x.shape[1], dtype=x.dtype), x.size, \
        x.shape


def array_method_shapes(x, w):
    return (x.T, x.reshape(-1), x.reshape(3, 4), x.reshape((4, -1)), x.clip(-0.5, 0.5),
            x.dot(w), x.copy(), x.ravel(), x.flatten(), x.swapaxes(0, 1), x.transpose(),
            x.transpose(1, 0), x.reshape(1, 12).squeeze(), x.repeat(2, axis=0),
            x[:, :2].trace())


def astype_casts(x):
    return (x.astype(np.float32), x.astype(np.int32), (x > 0).astype(x.dtype),
            x.astype("float64"), x.astype(float), np.float32(x))


# --- subscripts ---------------------------------------------------------------------------

def basic_indexing(x):
    return (x[1], x[-1], x[1:3], x[::2], x[::-1], x[1:-1:2], x[:, 0], x[..., -1], x[None],
            x[:, None, :], x[0, 1], x[-1, -2], x[1:, ::-2], x[..., None], x[2:2])


def traced_scalar_index(x, i):
    return x[i], x[i] * 2.0, x[i, 1:], x[-1, i], x[:, i], x[i + 1]


def integer_array_index(x, idx):
    return x[idx], x[idx, 0], x[:, idx], x[IDX], x[MASK3], x[idx][..., idx]


def traced_mask_where(x, m):
    return np.where(m, x, 0.0), np.where(m, x, -x).sum(axis=0), (x * m).max()


def local_setitem(x, t):
    y = x.copy()
    y[0] = 5.0
    y[1:3] += t
    y[-1] *= 2.0
    y[::2] -= 1.0
    z = np.zeros(3)
    z[1] = t
    z[2] += t * 2
    return y, z


def setitem_traced_index(x, i, v):
    y = x.copy()
    y[i] = v
    y[i - 1] += 1.0
    return y


def setitem_2d(x):
    m = np.eye(3)
    m[0, 1] = x.sum()
    m[:, 2] = x
    m[1][0] = x[0]
    m[2] += x
    counts = np.zeros(4, dtype=int)
    counts[IDX] += 1
    return m, counts


def setitem_fancy(x, idx, vals):
    y = x.copy()
    y[idx] = vals
    y[idx[0]] -= 1
    return y


# --- pytrees in arguments and results -----------------------------------------------------

def mlp_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def mlp_loss(params, batch):
    inputs, targets = batch
    preds = mlp_predict(params, inputs)
    return -np.mean(np.sum(preds * targets, axis=1))


def dict_params_layer(params, x):
    h = x @ params["w"] + params["b"]
    return {"out": relu(h), "norm": np.linalg.norm(params["w"]), "mean": h.mean(axis=0)}


def nested_pytree(tree):
    x, y = tree["a"]
    z, w = tree["b"]
    return {"sum": x + y, "pair": (z * 2, w - 1), "list": [x.sum(), y.mean(), z.max()]}


def list_in_list_out(xs):
    return [x * 2.0 for x in xs], tuple(x.sum() for x in xs)


def tuple_unpacking(pair, triple):
    a, b = pair
    c, (d, e) = triple[0], triple[1:]
    a, b = b, a
    first, *rest = triple
    return a - b, c + d * e, first, rest


# --- comprehensions over static containers ------------------------------------------------

def list_comprehensions(xs):
    squares = [x * x for x in xs]
    shifted = [x + s for x, s in zip(xs, SHIFTS)]
    vectors = [x for x in xs if x.ndim > 0]
    total = sum(x.sum() for x in xs)
    return squares, shifted, total, len(vectors)


def dict_comprehensions(params):
    scaled = {k: v * SCALE for k, v in params.items()}
    norms = {name: np.sqrt(np.sum(p ** 2)) for name, p in sorted(params.items())}
    keys = [k for k in params if k.startswith("w")]
    return scaled, norms, {k: params[k] for k in keys}


def gram_matrix(rows):
    return np.array([[a @ b for b in rows] for a in rows])


# --- helpers, closures, lambdas, static functions -----------------------------------------

def standardize_pair(x, y):
    return standardize(x), standardize(y) + OFFSET


def selu_dense(W, b, x):
    return selu(x @ W + b)


def selu_keywords(W, b, x):
    return selu(np.dot(x, W) + b, lmbda=1.0), selu(x, alpha=1.0)


def apply_closures(x):
    return scale_by_3(x) - halve(x), affine_2d(x), BASIS @ affine_2d(x).T, residual_tanh(x)


def local_lambdas(x):
    sq = lambda v: v * v  # noqa: E731
    affine = lambda v, a=2.0: a * v + OFFSET  # noqa: E731
    return sq(x) + affine(x), (lambda v: v - 1)(x), affine(x, 0.5)


def local_function(x, y):
    def combine(u, v):
        return np.tanh(u) * v + u
    return combine(x, y), combine(y, x)


def apply_static_fn(fn, x):
    return fn(x) + fn(2.0 * x)


def compose(f, g, x):
    return f(g(x))


def map_fns(fns, x):
    return [fn(x) for fn in fns]


# --- module constants ---------------------------------------------------------------------

def module_constants(x):
    return x * SCALE + OFFSET, x + SHIFTS[1], BASIS @ x, x * np.pi, x.T + BASIS[0], \
        x * COEFFS[-1] - EPS


# --- `if` on static values ----------------------------------------------------------------

def static_flag(x, normalize):
    if normalize:
        x = x / np.linalg.norm(x)
    else:
        x = x * 2
    return x


def static_mode(x, mode):
    if mode == "relu":
        return relu(x)
    elif mode == "tanh":
        return np.tanh(x)
    return x


def shape_dispatch(x):
    if x.ndim == 1:
        x = x[None, :]
    if x.shape[0] > 2:
        return x[:2].sum(axis=0)
    return x.sum(axis=0)


def optional_bias(x, W, bias=None):
    y = x @ W
    if bias is not None:
        y = y + bias
    return y


def dtype_dispatch(x):
    if np.issubdtype(x.dtype, np.integer):
        return x // 2
    return x / 2


def dtype_compare(x):
    if x.dtype == np.float32:
        return x * np.float32(2)
    return x * 3


# --- `for` over static containers and ranges ----------------------------------------------

def sum_over_list(xs):
    total = 0.0
    for x in xs:
        total = total + x.sum()
    return total


def range_over_shape(x):
    acc = np.zeros(x.shape[1:], dtype=x.dtype)
    for i in range(x.shape[0]):
        acc = acc + x[i] * (i + 1)
    return acc


def power_iteration(A, v, n):
    for _ in range(n):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v, v @ A @ v


def enumerate_zip(xs, ys):
    out = []
    for i, (a, b) in enumerate(zip(xs, ys)):
        out.append(a * i + b)
    return out


def static_range_loop(x):
    for i in static_range(3):
        x = x + i * x[i]
    return x


def running_means(x):
    means = []
    for i in range(1, x.shape[0] + 1):
        means.append(x[:i].mean(axis=0))
    return np.stack(means)


def horner(x):
    acc = np.zeros_like(x)
    for c in COEFFS:
        acc = acc * x + c
    return acc


def gram_schmidt(V):
    basis = []
    for j in range(V.shape[1]):
        v = V[:, j]
        for u in basis:
            v = v - (u @ v) * u
        basis.append(v / np.linalg.norm(v))
    return np.stack(basis, axis=1)


def conv1d_valid(x, kernel):
    K = kernel.shape[0]
    n = x.shape[0] - K + 1
    return sum(kernel[j] * x[j:j + n] for j in range(K))


def rnn_unrolled(params, xs, h):
    W, U, bias = params
    hs = []
    for x in xs:
        h = np.tanh(W @ h + U @ x + bias)
        hs.append(h)
    return h, np.stack(hs)


# --- explicit primitives ------------------------------------------------------------------

def halving_count(x):
    def keep_going(state):
        v, n = state
        return v.max() > 1.0

    def halve_all(state):
        v, n = state
        return v / 2, n + 1
    return while_loop(keep_going, halve_all, (x, 0))


def newton_sqrt(a):
    def cond_fun(state):
        x, i = state
        return np.logical_and(i < MAX_ITERS, np.max(np.abs(x * x - a) / a) > 1e-3)

    def body_fun(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1
    return while_loop(cond_fun, body_fun, (a + 1.0, 0))


def fori_power(A, v, n):
    def body(i, v):
        w = A @ v
        return w / np.linalg.norm(w)
    return fori_loop(0, n, body, v)


def fori_traced_bound(x, n):
    return fori_loop(0, n, lambda i, acc: acc * 0.5 + x, np.zeros_like(x))


def fori_uses_index(x):
    return fori_loop(0, 4, lambda i, acc: acc + x * i, np.zeros_like(x))


def cond_branches(x):
    return cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)


def cond_two_operands(x, y):
    return cond(x.mean() > y.mean(), lambda a, b: (a + b, a), lambda a, b: (a - b, b), x, y)


def cond_static_pred(x, flag):
    return cond(flag, np.sin, np.cos, x)


def switch_activation(i, x):
    return switch(i, [np.tanh, relu, lambda v: v * 0.5], x)


# --- NumPy coverage -----------------------------------------------------------------------

def ufuncs(x, y):
    return (np.logaddexp(x, y), np.arctan2(x, y), np.maximum(x, y), np.minimum(x, y),
            np.clip(x, -0.5, 0.5), np.sign(x), np.floor(x * 3), np.ceil(x * 3),
            np.power(np.abs(x), y), np.exp(x), np.log1p(np.abs(y)), np.sqrt(np.abs(x)),
            np.sin(x), np.cos(y), np.tanh(x), np.square(x), np.hypot(x, y), np.trunc(x * 3))


def logical_functions(m, n, x):
    return (np.logical_and(m, n), np.logical_or(m, n), np.logical_not(m),
            np.logical_xor(m, n), np.greater(x, 0), np.less_equal(x, 0.25), np.equal(m, n),
            np.isfinite(x / x), np.logical_and(x > 0, m))


def where_select(x, y):
    return np.where(x > y, x, y), np.where(x > 0, x, 0.0), np.where(x > 0, 1, -1)


def products(A, B, u, v):
    return (np.dot(A, B), np.matmul(A, B), np.outer(u, v), np.tensordot(A, B, axes=1),
            np.tensordot(A, A, axes=([0, 1], [0, 1])), np.trace(A @ B), np.inner(u, u),
            np.dot(u, u), np.dot(A, u), np.matmul(u, B))


def einsums(A, B, C, u):
    return (np.einsum("ij,jk->ik", A, B), np.einsum("ij->ji", A), np.einsum("ij,j->i", A, u),
            np.einsum("i,i->", u, u), np.einsum("i,j->ij", u, u),
            np.einsum("bij,jk->bik", C, B), np.einsum("ii->", A @ A.T),
            np.einsum("ij->", A), np.einsum("ij->j", A), np.einsum("bij,bkj->bik", C, C))


def norms_and_traces(A, v):
    return (np.linalg.norm(v), np.linalg.norm(A), np.linalg.norm(A, axis=1),
            np.linalg.norm(v, ord=1), np.linalg.norm(A, ord="fro"), np.trace(A), A.trace(),
            np.linalg.norm(A, axis=0, keepdims=True))


def reductions(x):
    return (np.sum(x, axis=0, keepdims=True), np.mean(x, axis=(0, 1)), np.prod(x, axis=1),
            np.max(x, axis=-1), np.min(x), np.argmax(x, axis=0), np.argmin(x, axis=1),
            np.all(x > 0, axis=1), np.any(x > 0), np.std(x, axis=0, keepdims=True),
            np.var(x), np.var(x, ddof=1), np.amax(x, axis=0))


def scans_and_sorts(x):
    return (np.cumsum(x, axis=0), np.cumsum(x), np.sort(x), np.sort(x, axis=0),
            np.argsort(x, axis=-1), np.cumprod(x, axis=1), x.cumsum(axis=0))


def shape_functions(x):
    return (np.reshape(x, (6, 4)), np.reshape(x, (-1,)), np.transpose(x),
            np.transpose(x, (2, 0, 1)), np.swapaxes(x, 0, 2), np.moveaxis(x, 0, -1),
            np.expand_dims(x, 1), np.squeeze(np.expand_dims(x, 0), axis=0),
            np.squeeze(x[:, :1, :]), x.reshape(2, -1).T, np.flip(x, axis=1),
            np.roll(x, 1, axis=2), np.broadcast_to(x[:, :, :1], (2, 3, 4)))


def joining(a, b):
    return (np.concatenate([a, b]), np.concatenate((a, b), axis=1), np.stack([a, b]),
            np.stack([a, b], axis=-1), np.vstack([a, b]), np.hstack([a, b]),
            np.concatenate([a.ravel(), b[0]]))


def creation(x):
    return (np.zeros(x.shape), np.ones_like(x), np.zeros_like(x), np.full((2, 3), 7.0),
            np.full_like(x, 2), np.eye(3), np.arange(5), np.linspace(0.0, 1.0, 5),
            np.arange(x.shape[0]) * x, np.eye(x.shape[0]) @ x, np.ones(3) + x.sum())


def creation_with_dtype(x):
    return (np.zeros(3, dtype=np.float32), np.ones(x.shape, dtype=np.int32),
            np.arange(4, dtype=np.float64), np.eye(2, dtype=np.float32) * x.sum())


# --- small models -------------------------------------------------------------------------

def softmax_rows(x, axis):
    return softmax(x, axis=axis), logsumexp(x, axis=axis)


def cross_entropy(logits, labels):
    logp = logits - logsumexp(logits, axis=1)[:, None]
    n = logits.shape[0]
    return -logp[np.arange(n), labels].mean()


def sigmoid_and_grad(x):
    s = stable_sigmoid(x)
    return s, s * (1 - s)


def logistic_regression_grad(w, X, y):
    p = stable_sigmoid(X @ w)
    return X.T @ (p - y) / X.shape[0]


def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + EPS) + beta


def attention(q, k, v):
    scale = 1.0 / np.sqrt(q.shape[-1])
    weights = softmax(q @ k.T * scale, axis=-1)
    return weights @ v


def pairwise_rbf(X, Y, gamma):
    d2 = np.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)
    return np.exp(-gamma * d2)


def kmeans_assign(X, centers):
    d = ((X[:, None, :] - centers[None]) ** 2).sum(-1)
    return d.argmin(axis=1), d.min(axis=1)


def adam_update(params, grads, m, v, t):
    b1, b2, lr = 0.9, 0.999, 1e-3
    new_m = {k: b1 * m[k] + (1 - b1) * grads[k] for k in params}
    new_v = {k: b2 * v[k] + (1 - b2) * grads[k] ** 2 for k in params}
    new_params = {}
    for k in params:
        m_hat = new_m[k] / (1 - b1 ** t)
        v_hat = new_v[k] / (1 - b2 ** t)
        new_params[k] = params[k] - lr * m_hat / (np.sqrt(v_hat) + EPS)
    return new_params, new_m, new_v


def finite_differences(x):
    return x[1:] - x[:-1], x[2:] - 2 * x[1:-1] + x[:-2]


def one_hot(labels, k):
    return (labels[:, None] == np.arange(k)).astype(float)
