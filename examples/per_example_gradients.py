"""Per-example gradients with ``vmap(grad(loss))``: the gradient of each example's loss in
a small logistic regression, as one batched XLA program (no Python loop over examples).

``loss`` is written for *one* example; ``grad`` differentiates it and ``vmap`` maps the
gradient over the examples' axis (``in_axes=(None, 0, 0)``: the weights are shared).  The
per-example gradient norms then clip each example's contribution, as in DP-SGD.
Compared with a NumPy loop over the examples.
"""
import numpy as np

from transpiler import grad, jit_ps, vmap


def loss(w, x, y):
    """Logistic loss of one example: features ``x``, label ``y`` in {0, 1}."""
    p = 1.0 / (1.0 + np.exp(-np.dot(x, w)))
    return -(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


@jit_ps
def clipped_mean_gradient(w, X, Y, clip):
    grads = vmap(grad(loss), in_axes=(None, 0, 0))(w, X, Y)    # one row per example
    norms = np.sqrt(np.sum(grads ** 2, axis=1))
    scale = np.minimum(1.0, clip / norms)
    return grads, np.mean(grads * scale[:, None], axis=0)


def numpy_per_example(w, X, Y, clip):
    grads = np.stack([(1.0 / (1.0 + np.exp(-x @ w)) - y) * x for x, y in zip(X, Y)])
    norms = np.sqrt(np.sum(grads ** 2, axis=1))
    return grads, np.mean(grads * np.minimum(1.0, clip / norms)[:, None], axis=0)


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(32, 5))
    Y = (rng.uniform(size=32) < 0.5).astype(np.float64)
    w = rng.normal(size=5) * 0.1
    grads, step = clipped_mean_gradient(w, X, Y, 1.0)
    expected_grads, expected_step = numpy_per_example(w, X, Y, 1.0)
    error = max(np.max(np.abs(grads - expected_grads)), np.max(np.abs(step - expected_step)))
    print(f"per-example gradients: {grads.shape} {grads.dtype}; clipped mean step "
          f"{np.round(step, 6)}")
    print(f"max |compiled - NumPy loop| = {error:.2e}")
    assert grads.shape == expected_grads.shape and grads.dtype == expected_grads.dtype
    assert error < 1e-12, error
    for _ in range(20):   # a few clipped SGD steps
        w = w - 0.5 * clipped_mean_gradient(w, X, Y, 1.0)[1]
    print(f"mean loss after 20 clipped steps: "
          f"{np.mean([loss(w, x, y) for x, y in zip(X, Y)]):.6f}")


if __name__ == "__main__":
    main()
