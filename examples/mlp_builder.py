"""The JAX paper's MLP, built directly with the runtime (what generated code will call).

``predict`` iterates over a Python list of (W, b) pairs, so the loop unrolls at build time;
``loss`` sums squared errors.  The build function runs once per signature; later calls with
the same shapes reuse the compiled executable.  Results are compared with plain NumPy.
"""
import numpy as np

from runtime import StagedFunction, translate


def build_predict(b, params, inputs):
    outputs = inputs
    for W, bias in params:
        outputs = translate(b, np.add, translate(b, np.dot, inputs, W), bias)
        inputs = translate(b, np.tanh, outputs)
    return outputs


def build_loss(b, params, batch):
    inputs, targets = batch
    preds = build_predict(b, params, inputs)
    diff = translate(b, np.subtract, preds, targets)
    return translate(b, np.sum, translate(b, np.power, diff, 2))


def numpy_loss(params, batch):
    inputs, targets = batch
    for W, bias in params:
        outputs = np.dot(inputs, W) + bias
        inputs = np.tanh(outputs)
    return np.sum((outputs - targets) ** 2)


def main():
    rng = np.random.default_rng(0)
    sizes = [8, 16, 16, 1]
    params = [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
              for m, n in zip(sizes[:-1], sizes[1:])]
    batch = (rng.normal(size=(32, 8)), rng.normal(size=(32, 1)))
    loss = StagedFunction(build_loss, name="loss")
    ours = np.asarray(loss(params, batch))
    expected = numpy_loss(params, batch)
    print(f"loss: compiled {ours:.12f}  numpy {expected:.12f}  dtype {ours.dtype}")
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
    loss(params, batch)
    print("cache:", loss.cache_info())
    assert loss.cache_info().misses == 1
    print(loss.lower(params, batch).splitlines()[2][:100], "...")


if __name__ == "__main__":
    main()
