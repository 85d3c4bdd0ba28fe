"""A dense layer with the SeLU activation, as in the paper's fusion example.

The optimized HLO of the compiled executable shows what XLA fused.  On the CPU, XLA hands
the matrix multiply to its dot library and fuses the bias add and the whole SeLU into one
element-wise loop over the product (exactly as for jax.jit; see
benchmarks/RESULTS.md, "SeLU fusion").
"""
import numpy as np

from transpiler import jit_ps

ALPHA = 1.6732632423543772
SCALE = 1.0507009873554805


def selu(x):
    return SCALE * np.where(x > 0, x, ALPHA * (np.exp(x) - 1))


@jit_ps
def dense_selu(W, b, x):
    return selu(np.dot(x, W) + b)


def main():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(256, 128)).astype(np.float32)
    b = rng.normal(size=128).astype(np.float32)
    x = rng.normal(size=(64, 256)).astype(np.float32)
    ours = np.asarray(dense_selu(W, b, x))
    expected = selu(np.dot(x, W) + b)
    np.testing.assert_allclose(ours, expected, rtol=2e-5, atol=2e-5)
    assert ours.dtype == np.float32
    hlo = dense_selu.compile(W, b, x).as_hlo_text()
    fusions = [line.strip()[:90] for line in hlo.splitlines() if "fusion(" in line]
    print(f"SeLU layer matches NumPy; {len(fusions)} fusion(s) in the optimized HLO:")
    for line in fusions:
        print("   ", line)


if __name__ == "__main__":
    main()
