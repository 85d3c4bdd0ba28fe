"""Newton-CG on L2-regularized logistic regression (mean log-loss + 1/2 * 1e-3 * |w|^2).

The benchmark (benchmarks/table1.py) uses N = 50,000 examples of D = 500 features; this
script runs a smaller instance by default so that `make run` stays quick.
"""
import sys

import numpy as np

from newton_cg import newton_cg


def make_problem(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=1 / np.sqrt(d), size=(n, d))
    w_true = rng.normal(size=d)
    y = np.where(X @ w_true + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def logistic_objective(X, y):
    def objective(w):
        margins = y * (X @ w)
        return np.mean(np.logaddexp(0.0, -margins)) + 0.5e-3 * (w @ w)
    return objective


def main(n=5000, d=100):
    X, y = make_problem(n, d)
    objective = logistic_objective(X, y)
    w, value, products = newton_cg(objective, np.zeros(d), 10, 100)
    gradient_norm = np.linalg.norm(np.asarray(_numpy_gradient(X, y, np.asarray(w))))
    print(f"objective {float(np.asarray(value)):.10f}, {int(np.asarray(products))} "
          f"Hessian-vector products, |gradient| {gradient_norm:.2e}")
    assert gradient_norm < 1e-6


def _numpy_gradient(X, y, w):
    margins = y * (X @ w)
    weights = -y / (1 + np.exp(margins))
    return X.T @ weights / len(y) + 1e-3 * w


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))
