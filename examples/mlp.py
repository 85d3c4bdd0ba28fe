"""The JAX paper's example: an MLP's ``predict`` and squared-error ``loss``, compiled,
and an SGD training loop whose step differentiates ``loss`` with ``grad``.

``for W, b in params`` iterates a Python list, so the loop unrolls when the computation is
built; everything else becomes one XLA program per signature.  Compared with NumPy.
"""
import numpy as np

from transpiler import grad, jit_ps, random


@jit_ps
def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


@jit_ps
def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return np.sum((preds - targets) ** 2)


@jit_ps
def sgd_step(params, batch, learning_rate):
    grads = grad(loss)(params, batch)
    return [(W - learning_rate * dW, b - learning_rate * db)
            for (W, b), (dW, db) in zip(params, grads)]


# The parameters are drawn inside a compiled program with transpiler.random (jax.random's
# functional PRNG and its bits), as the JAX tutorial does: one key per layer, split again
# for the weights and the biases.
def layer_params(key, m, n):
    w_key, b_key = random.split(key)
    return random.normal(w_key, (m, n)) / np.sqrt(m), 0.1 * random.normal(b_key, (n,))


@jit_ps(static_argnames="sizes")
def init_params(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [layer_params(keys[i], sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1)]


def numpy_loss(params, batch):
    inputs, targets = batch
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return np.sum((outputs - targets) ** 2)


def main():
    rng = np.random.default_rng(0)
    sizes = (8, 32, 32, 1)
    params = init_params(random.PRNGKey(0), sizes=sizes)
    # the same draws from plain Python (each call compiled on its own)
    w_key, _ = random.split(random.split(random.PRNGKey(0), len(sizes) - 1)[0])
    np.testing.assert_allclose(params[0][0], random.normal(w_key, (8, 32)) / np.sqrt(8),
                               rtol=1e-15)
    print("init_params: shapes", [(W.shape, b.shape) for W, b in params])
    batch = (rng.normal(size=(64, 8)), rng.normal(size=(64, 1)))
    ours = np.asarray(loss(params, batch))
    expected = numpy_loss(params, batch)
    print(f"loss: compiled {ours:.12f}, NumPy {expected:.12f} ({ours.dtype})")
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
    assert ours.dtype == np.float64
    loss(params, batch)
    print("signature cache:", loss.cache_info())
    losses = [float(ours)]
    for _ in range(50):   # plain Python orchestrating a compiled step, as in the paper
        params = sgd_step(params, batch, 0.001)
        losses.append(float(np.asarray(loss(params, batch))))
    print(f"SGD: loss {losses[0]:.4f} -> {losses[-1]:.4f} after 50 steps")
    assert losses[-1] < losses[0]
    assert sgd_step.cache_info().misses == 1
    print("generated code for predict:")
    print(predict.generated_source)


if __name__ == "__main__":
    main()
