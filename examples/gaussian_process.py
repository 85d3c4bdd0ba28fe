"""Gaussian-process regression, written as a NumPy/SciPy user would: an RBF kernel, its
Cholesky factor, ``scipy.linalg.solve_triangular`` for the log marginal likelihood, and
``grad`` of it with respect to the hyper-parameters (log length-scale, log signal
variance, log noise variance), maximized by plain gradient ascent in a Python loop under
``jit_ps``.  Predictions use ``scipy.linalg.cho_factor``/``cho_solve``.

Run as plain Python the functions are their own oracle (NumPy and SciPy); the compiled
versions are checked against them, and the gradient against central differences.
"""
import numpy as np
import scipy.linalg

from transpiler import grad, jit_ps


def rbf_kernel(x1, x2, log_length, log_signal):
    squared = (x1[:, None] - x2[None, :]) ** 2
    return np.exp(2.0 * log_signal) * np.exp(-0.5 * squared / np.exp(2.0 * log_length))


def log_marginal_likelihood(params, x, y):
    log_length, log_signal, log_noise = params[0], params[1], params[2]
    n = x.shape[0]
    K = rbf_kernel(x, x, log_length, log_signal) + np.exp(2.0 * log_noise) * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = scipy.linalg.solve_triangular(L, y, lower=True)
    log_det = 2.0 * np.sum(np.log(np.linalg.diagonal(L)))
    return -0.5 * (alpha @ alpha) - 0.5 * log_det - 0.5 * n * np.log(2.0 * np.pi)


@jit_ps(static_argnames=("steps",))
def fit(params, x, y, steps, learning_rate):
    for _ in range(steps):
        params = params + learning_rate * grad(log_marginal_likelihood)(params, x, y)
    return params, log_marginal_likelihood(params, x, y)


def predict(params, x, y, x_new):
    """The posterior mean at ``x_new``."""
    log_length, log_signal, log_noise = params[0], params[1], params[2]
    K = rbf_kernel(x, x, log_length, log_signal) + np.exp(2.0 * log_noise) * np.eye(x.shape[0])
    factor = scipy.linalg.cho_factor(K, lower=True)
    return rbf_kernel(x_new, x, log_length, log_signal) @ scipy.linalg.cho_solve(factor, y)


compiled_likelihood = jit_ps(log_marginal_likelihood)
compiled_gradient = jit_ps(grad(log_marginal_likelihood))
compiled_predict = jit_ps(predict)


def central_difference(f, params, *args, step=1e-6):
    g = np.zeros_like(params)
    for i in range(params.shape[0]):
        e = np.zeros_like(params)
        e[i] = step
        g[i] = (f(params + e, *args) - f(params - e, *args)) / (2 * step)
    return g


def main():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3.0, 3.0, 40))
    y = np.sin(2.0 * x) + 0.1 * rng.standard_normal(40)
    params = np.array([0.5, 0.0, -1.0])   # log length-scale, log signal, log noise

    value = float(compiled_likelihood(params, x, y))
    expected = log_marginal_likelihood(params, x, y)
    np.testing.assert_allclose(value, expected, rtol=1e-10)
    print(f"log marginal likelihood {value:.6f} (NumPy/SciPy {expected:.6f}): ok")

    gradient = np.asarray(compiled_gradient(params, x, y))
    np.testing.assert_allclose(gradient, central_difference(log_marginal_likelihood,
                                                            params, x, y), rtol=1e-5)
    print("gradient", np.round(gradient, 4), "matches central differences: ok")

    fitted, best = fit(params, x, y, 200, 0.01)
    fitted, best = np.asarray(fitted), float(best)
    np.testing.assert_allclose(best, log_marginal_likelihood(fitted, x, y), rtol=1e-10)
    assert best > value, (best, value)
    print(f"after 200 ascent steps: {best:.6f}, hyper-parameters {np.round(fitted, 4)}: ok")

    x_new = np.linspace(-3.0, 3.0, 7)
    mean = np.asarray(compiled_predict(fitted, x, y, x_new))
    np.testing.assert_allclose(mean, predict(fitted, x, y, x_new), rtol=1e-9, atol=1e-12)
    print("posterior mean", np.round(mean, 3), "(sin(2x):", np.round(np.sin(2 * x_new), 3),
          "): ok")


if __name__ == "__main__":
    main()
