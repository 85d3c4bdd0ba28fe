"""The JAX paper's example: an MLP's ``predict`` and squared-error ``loss``, compiled.

``for W, b in params`` iterates a Python list, so the loop unrolls when the computation is
built; everything else becomes one XLA program per signature.  Compared with NumPy.
"""
import numpy as np

from transpiler import jit_ps


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


def numpy_loss(params, batch):
    inputs, targets = batch
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return np.sum((outputs - targets) ** 2)


def main():
    rng = np.random.default_rng(0)
    sizes = [8, 32, 32, 1]
    params = [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
              for m, n in zip(sizes[:-1], sizes[1:])]
    batch = (rng.normal(size=(64, 8)), rng.normal(size=(64, 1)))
    ours = np.asarray(loss(params, batch))
    expected = numpy_loss(params, batch)
    print(f"loss: compiled {ours:.12f}, NumPy {expected:.12f} ({ours.dtype})")
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
    assert ours.dtype == np.float64
    loss(params, batch)
    print("signature cache:", loss.cache_info())
    print("generated code for predict:")
    print(predict.generated_source)


if __name__ == "__main__":
    main()
