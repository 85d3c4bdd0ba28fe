"""The JAX paper's convolutional example: a training step of the All-CNN-C network of
Springenberg et al. (2015, "Striving for Simplicity: The All Convolutional Net") on
CIFAR-10-shaped data, the whole step (forward, softmax cross-entropy, backward, SGD update)
one compiled program, called from a plain Python loop.

All-CNN-C, NHWC float32: conv3x3 96, conv3x3 96, conv3x3 96 stride 2, conv3x3 192 x2,
conv3x3 192 stride 2, conv3x3 192 (valid: 8x8 -> 6x6), conv1x1 192, conv1x1 10, global
average pooling, softmax; ReLU after each convolution but the last, whose outputs are the
class scores (the paper's Table 1 has a ReLU there too; without it a narrow network learns
in a few dozen steps).  The paper's dropout and weight decay are left out: plain SGD.

The network is written with NumPy, ``lax.conv_general_dilated`` and ``nn.*`` only, under
jax's names and signatures, so the same functions run bound to jax's modules
(`benchmarks/allconv.py` does that: same source, ``jax.jit``).  Parameters are made inside
compiled code too (He initialisation with ``random.normal``).

The data are synthetic (nothing can be downloaded): 32x32x3 images whose class sets a
smooth colour pattern, plus noise, so a small network learns them in a few dozen steps.

    python examples/allconv_cifar.py            # small width and batch: a few seconds
    python examples/allconv_cifar.py --full     # the paper's widths (96/192), batch 128
"""
import argparse
import sys

import numpy as np

from transpiler import jit_ps, lax, nn, random, value_and_grad

CLASSES = 10
IMAGE_SHAPE = (32, 32, 3)
DIMENSIONS = ("NHWC", "HWIO", "NHWC")
# one entry per convolution: kernel size, stride, padding, and its output channels as the
# block it belongs to (1: ``width``, 96 in the paper; 2: twice that; 0: the classes)
KERNELS = (3, 3, 3, 3, 3, 3, 3, 1, 1)
STRIDES = (1, 1, 2, 1, 1, 2, 1, 1, 1)   # the strided convolutions replace max-pooling
PADDINGS = ("SAME",) * 6 + ("VALID",) * 3
BLOCKS = (1, 1, 1, 2, 2, 2, 2, 2, 0)


def layer_channels(width):
    """``(input channels, output channels)`` of each convolution for a network ``width``."""
    outs = [CLASSES if block == 0 else block * width for block in BLOCKS]
    return list(zip([IMAGE_SHAPE[-1]] + outs[:-1], outs))


@jit_ps(static_argnames=("width",))
def init_params(key, width=96):
    """He-initialised ``[(W, b)]``: W in HWIO layout, normal with variance 2 / fan-in."""
    keys = random.split(key, len(KERNELS))
    params = []
    for i, (size, (cin, cout)) in enumerate(zip(KERNELS, layer_channels(width))):
        scale = (2.0 / (size * size * cin)) ** 0.5
        W = scale * random.normal(keys[i], (size, size, cin, cout), np.float32)
        params.append((W, np.zeros(cout, np.float32)))
    return params


def convolve(x, W, b, stride, padding):
    """A layer's pre-activation: NHWC ``x`` convolved with the HWIO kernel ``W``, plus ``b``."""
    return lax.conv_general_dilated(x, W, (stride, stride), padding,
                                    dimension_numbers=DIMENSIONS) + b


def predict(params, images):
    """The class scores (logits) of a batch of NHWC images."""
    x = images
    for (W, b), stride, padding in zip(params[:-1], STRIDES, PADDINGS):
        x = nn.relu(convolve(x, W, b, stride, padding))
    W, b = params[-1]
    scores = convolve(x, W, b, STRIDES[-1], PADDINGS[-1])
    return np.mean(scores, axis=(1, 2))   # global average pooling over the 6x6 positions


def loss(params, images, labels):
    """Mean softmax cross-entropy of the batch."""
    log_probs = nn.log_softmax(predict(params, images))
    targets = nn.one_hot(labels, CLASSES, dtype=log_probs.dtype)
    return -np.mean(np.sum(targets * log_probs, axis=-1))


@jit_ps
def sgd_step(params, images, labels, lr):
    """One SGD step: the new parameters and the batch's loss before the update."""
    value, grads = value_and_grad(loss)(params, images, labels)
    new_params = [(W - lr * dW, b - lr * db) for (W, b), (dW, db) in zip(params, grads)]
    return new_params, value


# The functions that make the network; `benchmarks/allconv.py` binds these to jax's modules.
NETWORK = ("layer_channels", "init_params", "convolve", "predict", "loss", "sgd_step")


# --- data: CIFAR-10-shaped, made here --------------------------------------------------------

def class_patterns(rng):
    """One pattern per class: a colour of its own plus, in each channel, a sinusoid of its
    own frequency, orientation and phase (amplitude 0.5)."""
    rows, cols, channels = IMAGE_SHAPE
    y, x = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    colour = rng.uniform(-2, 2, size=(CLASSES, channels))
    freq = rng.uniform(0.1, 0.5, size=(CLASSES, channels, 2))
    phase = rng.uniform(0, 2 * np.pi, size=(CLASSES, channels))
    angle = freq[..., 0, None, None] * y + freq[..., 1, None, None] * x + phase[..., None, None]
    patterns = colour[..., None, None] + 0.5 * np.sin(angle)   # (class, C, H, W)
    return patterns.transpose(0, 2, 3, 1).astype(np.float32)


def synthetic_batch(rng, patterns, batch, noise=0.5):
    """``batch`` images of random classes: the class's pattern plus Gaussian noise."""
    labels = rng.integers(0, CLASSES, size=batch).astype(np.int32)
    images = patterns[labels] + noise * rng.normal(size=(batch,) + IMAGE_SHAPE)
    return images.astype(np.float32), labels


# --- a plain NumPy forward pass, to check the compiled one against ---------------------------

def numpy_conv(x, W, stride, padding):
    """NHWC x HWIO convolution with XLA's padding rule for "SAME" and "VALID"."""
    size = W.shape[0]
    if padding == "SAME":
        pads = []
        for extent in x.shape[1:3]:
            out = -(-extent // stride)
            total = max((out - 1) * stride + size - extent, 0)
            pads.append((total // 2, total - total // 2))
        x = np.pad(x, [(0, 0), *pads, (0, 0)])
    windows = np.lib.stride_tricks.sliding_window_view(x, (size, size), axis=(1, 2))
    windows = windows[:, ::stride, ::stride]        # (N, H', W', C, kh, kw)
    return np.einsum("nhwcij,ijco->nhwo", windows, W, optimize=True)


def numpy_loss(params, images, labels):
    x = images.astype(np.float64)
    for i, ((W, b), stride, padding) in enumerate(zip(params, STRIDES, PADDINGS)):
        x = numpy_conv(x, np.asarray(W, np.float64), stride, padding) + b
        x = np.maximum(x, 0) if i < len(params) - 1 else x
    logits = x.mean(axis=(1, 2))
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels].mean()


def train(width, batch, steps, lr, seed=0, log=print):
    """Train on the synthetic task; returns the losses of every step."""
    rng = np.random.default_rng(seed)
    patterns = class_patterns(rng)
    params = init_params(random.PRNGKey(seed), width)
    losses = []
    for step in range(steps):   # plain Python orchestrating the compiled step
        images, labels = synthetic_batch(rng, patterns, batch)
        params, value = sgd_step(params, images, labels, lr)
        losses.append(float(value))
        if step % 10 == 0 or step == steps - 1:
            log(f"step {step:3d}: loss {value:.4f}")
    return params, losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true",
                        help="the paper's widths (96/192) and batch 128 (slow on a CPU)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.03)
    args = parser.parse_args(argv)
    width, batch = (96, 128) if args.full else (8, 16)

    rng = np.random.default_rng(1)
    params = init_params(random.PRNGKey(1), width)
    shapes = [(W.shape, b.shape) for W, b in params]
    assert all(W.dtype == b.dtype == np.float32 for W, b in params)
    assert shapes == [((k, k, cin, cout), (cout,)) for k, (cin, cout)
                      in zip(KERNELS, layer_channels(width))], shapes
    images, labels = synthetic_batch(rng, class_patterns(rng), batch)
    new_params, value = sgd_step(params, images, labels, args.lr)
    expected = numpy_loss(params, images, labels)
    print(f"loss: compiled {value:.6f} ({value.dtype}), NumPy {expected:.6f}")
    np.testing.assert_allclose(value, expected, rtol=1e-4)
    assert value.dtype == np.float32 and new_params[0][0].dtype == np.float32

    _, losses = train(width, batch, args.steps, args.lr)
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    print(f"SGD: mean loss of the first 5 steps {first:.4f} -> last 5 {last:.4f} "
          f"after {args.steps} steps (width {width}, batch {batch})")
    assert last < first
    assert sgd_step.cache_info().misses == 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
