"""``transpiler.nn``: jax.nn's activation functions, softmax, ``logsumexp``, ``one_hot``,
``standardize``, and flax's ``max_pool``/``avg_pool``, with their names and signatures.

Each is NumPy-level code (the `runtime.numpy_api` mirror) on builder Values, with the
numerics of jax.nn: the same formulas (gelu's tanh and erfc forms, softplus as
``logaddexp(x, 0)``, logsumexp shifted by the finite maximum), and the derivatives jax
chooses where the function has a kink (relu's and relu6's are 0 at the kinks, since the
value there comes from the flat side of a ``where``).  Inside PSC code they build into the
current program; from plain Python each is compiled and cached per signature (like the
transforms), its array arguments traced and the others static, and returns NumPy.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as _np

from . import numpy_api as np
from .autodiff.api import _staged
from .context import current_builder, has_builder
from .errors import PSCTypeError, PSCValueError
from .ir import Value
from .windowed import add as lax_add, max as lax_max, reduce_window


def _nn_function(fn):
    """Mark ``fn`` as called by PSC code as it is, and compile it when called from plain
    Python: array arguments are its parameters, every other argument is static."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if has_builder():
            return fn(*args, **kwargs)
        traced_args = [i for i, a in enumerate(args) if _is_array(a)]
        traced_kwargs = sorted(k for k, v in kwargs.items() if _is_array(v))
        static_args = tuple((i, _hashable(a)) for i, a in enumerate(args)
                            if i not in traced_args)
        static_kwargs = tuple(sorted((k, _hashable(v)) for k, v in kwargs.items()
                                     if k not in traced_kwargs))
        key = ("nn", fn, len(args), static_args, static_kwargs, tuple(traced_args),
               tuple(traced_kwargs))

        def transform(*traced):
            full, named = dict(static_args), dict(static_kwargs)
            full.update(zip(traced_args, traced[:len(traced_args)]))
            named.update(zip(traced_kwargs, traced[len(traced_args):]))
            return fn(*[full[i] for i in range(len(args))], **named)
        return _staged(key, transform, *[args[i] for i in traced_args],
                       *[kwargs[k] for k in traced_kwargs])
    call.__psc_primitive__ = True
    return call


def _is_array(value) -> bool:
    return isinstance(value, (_np.ndarray, _np.generic, list, Value)) or \
        type(value).__module__.split(".")[0] in ("jax", "jaxlib")


def _hashable(value):
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def _array(x) -> Value:
    """``x`` as a Value of the current build (NumPy arrays and Python numbers lifted)."""
    if isinstance(x, Value):
        return x
    b = current_builder()
    return b.constant(x) if type(x) in (bool, int, float, complex) else b.constant(_np.asarray(x))


def _inexact(x, name) -> Value:
    """jax's ``promote_args_inexact``: integers and bools become the default float."""
    x = _array(x)
    if x.dtype.kind in "biu":
        return current_builder().convert(x, _np.float64)
    if x.dtype.kind not in "fc":
        raise current_builder().error(PSCTypeError, f"nn.{name} needs a numeric array, got "
                                      f"{x.dtype}")
    return x


# --- activations ---------------------------------------------------------------------------

@_nn_function
def relu(x):
    """``jax.nn.relu``: ``max(x, 0)``, with derivative 0 at 0 (as jax)."""
    x = _array(x)
    return np.where(x <= 0, np.zeros((), x.dtype), x)   # NaN stays NaN


@_nn_function
def relu6(x):
    """``jax.nn.relu6``: ``min(max(x, 0), 6)``, with derivative 0 at 0 and 6 (as jax)."""
    x = _array(x)
    return np.where(x <= 0, np.zeros((), x.dtype),
                    np.where(x >= 6, np.full((), 6, x.dtype), x))


@_nn_function
def sigmoid(x):
    """``jax.nn.sigmoid``: the logistic function ``1 / (1 + exp(-x))``."""
    return current_builder().logistic(_inexact(x, "sigmoid"))


@_nn_function
def silu(x):
    """``jax.nn.silu`` (``swish``): ``x * sigmoid(x)``."""
    x = _inexact(x, "silu")
    return x * current_builder().logistic(x)


swish = silu


@_nn_function
def softplus(x):
    """``jax.nn.softplus``: ``log(1 + exp(x))`` as ``logaddexp(x, 0)`` (no overflow)."""
    return np.logaddexp(_inexact(x, "softplus"), 0)


@_nn_function
def log_sigmoid(x):
    """``jax.nn.log_sigmoid``: ``-softplus(-x)``."""
    return -softplus(-_inexact(x, "log_sigmoid"))


@_nn_function
def elu(x, alpha=1.0):
    """``jax.nn.elu``: ``x`` for ``x > 0``, else ``alpha * expm1(x)``."""
    x = _inexact(x, "elu")
    positive = x > 0
    return np.where(positive, x, alpha * np.expm1(np.where(positive, 0.0, x)))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_nn_function
def selu(x):
    """``jax.nn.selu``: ``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@_nn_function
def gelu(x, approximate=True):
    """``jax.nn.gelu``: ``x * Phi(x)``; ``approximate=True`` uses the tanh formula
    ``0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` for ``Phi``, else
    ``0.5 * x * erfc(-x / sqrt(2))``."""
    x = _inexact(x, "gelu")
    if approximate:
        cdf = 0.5 * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return 0.5 * x * current_builder().erfc(-x * math.sqrt(0.5))


# --- normalizations -------------------------------------------------------------------------

def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) or hasattr(axis, "__index__") else tuple(axis)
    try:
        return tuple(sorted(operator.index(a) % max(x.ndim, 1) if -x.ndim <= a < x.ndim
                            else _bad_axis(x, a) for a in axes))
    except TypeError:
        raise current_builder().error(PSCTypeError, f"axis must be static integers, got "
                                      f"{axis!r}") from None


def _bad_axis(x, a):
    raise current_builder().error(PSCValueError, f"axis {a} is out of bounds for an array "
                                  f"of rank {x.ndim}")


def _masked_max(x, axes, where):
    """``max(x, axes, keepdims=True, where=where, initial=-inf)``."""
    if where is not None:
        x = np.where(where, x, -_np.inf)
    return np.max(x, axis=axes, keepdims=True, initial=-_np.inf)


def _masked_sum(x, axes, where, keepdims=True):
    if where is not None:
        x = np.where(where, x, np.zeros((), x.dtype))
    return np.sum(x, axis=axes, keepdims=keepdims)


@_nn_function
def softmax(x, axis=-1, where=None):
    """``jax.nn.softmax``: ``exp(x - max) / sum(exp(x - max))`` along ``axis`` (0 where
    ``where`` is False)."""
    x = _inexact(x, "softmax")
    axes = _axes(x, axis)
    x_safe = x if where is None else np.where(where, x, -_np.inf)
    unnormalized = np.exp(x_safe - _masked_max(x, axes, where))
    result = unnormalized / _masked_sum(unnormalized, axes, where)
    return result if where is None else np.where(where, result, np.zeros((), result.dtype))


@_nn_function
def log_softmax(x, axis=-1, where=None):
    """``jax.nn.log_softmax``: ``x - max - log(sum(exp(x - max)))`` along ``axis``
    (-inf where ``where`` is False)."""
    x = _inexact(x, "log_softmax")
    axes = _axes(x, axis)
    x_safe = x if where is None else np.where(where, x, -_np.inf)
    shifted = x_safe - _masked_max(x, axes, where)
    result = shifted - np.log(_masked_sum(np.exp(shifted), axes, where))
    return result if where is None else np.where(where, result, -_np.inf)


@_nn_function
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``jax.nn.logsumexp`` (``jax.scipy.special.logsumexp``): ``log(sum(b * exp(a)))``
    along ``axis``, shifted by the finite maximum; with ``return_sign``, ``(log|s|,
    sign(s))``, else NaN where the weighted sum is negative."""
    a = _inexact(a, "logsumexp")
    if where is not None:
        a = np.where(where, a, np.zeros((), a.dtype))
    if b is not None:
        b = _array(b)
        # jax's promote_args_inexact: an integer or bool weight takes the float's dtype
        dtype = _np.result_type(a.dtype, b.dtype) if b.dtype.kind in "fc" else a.dtype
        a, b = a.astype(dtype), b.astype(dtype)
        a = np.where(b != 0, a, -_np.inf)
    axes = _axes(a, axis)
    amax = _masked_max(a.real if a.dtype.kind == "c" else a, axes, where)
    amax = np.where(np.isfinite(amax), amax, np.zeros((), amax.dtype))
    exp_a = np.exp(a - amax.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    sumexp = _masked_sum(exp_a, axes, where, keepdims)
    sign = np.sign(sumexp)
    if return_sign or a.dtype.kind != "c":
        sumexp = np.abs(sumexp)
    shift = amax if keepdims else np.squeeze(amax, axis=axes)
    out = np.log(sumexp) + shift.astype(sumexp.dtype)
    if return_sign:
        return out, sign
    if b is not None and out.dtype.kind != "c":
        out = np.where(sign < 0, np.full((), _np.nan, out.dtype), out)
    return out


@_nn_function
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """``jax.nn.standardize``: ``(x - mean) / sqrt(variance + epsilon)`` along ``axis``,
    the variance as ``mean(x**2) - mean**2`` clipped at 0 (jax's default "fast")."""
    x = _inexact(x, "standardize")
    axes = _axes(x, axis)

    def masked_mean(v):
        if where is None:
            return np.mean(v, axis=axes, keepdims=True)
        count = _masked_sum(np.ones(v.shape, v.dtype), axes, where)
        return _masked_sum(v, axes, where) / count
    if mean is None:
        mean = masked_mean(x)
    if variance is None:
        variance = np.maximum(masked_mean(np.square(x)) - np.square(mean), 0)
    return (x - mean) * current_builder().rsqrt(_array(variance + epsilon))


@_nn_function
def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """``jax.nn.one_hot``: ``x[..., None] == arange(num_classes)``, the new axis at
    ``axis``, as ``dtype`` (default float64)."""
    x = _array(x)
    b = current_builder()
    if not isinstance(num_classes, int) or isinstance(num_classes, bool):
        raise b.error(PSCTypeError, "one_hot's num_classes must be a static Python int",
                      "the number of classes fixes the result's shape")
    position = axis if axis >= 0 else axis + x.ndim + 1
    if not 0 <= position <= x.ndim:
        _bad_axis(x, axis)
    shape = list(x.shape)
    shape.insert(position, num_classes)
    kept = [d for d in range(len(shape)) if d != position]
    lhs = b.broadcast_in_dim(x, shape, kept)
    classes = b.iota(shape, x.dtype if x.dtype.kind in "iu" else _np.int64, position)
    if classes.dtype != x.dtype:
        classes = b.convert(classes, x.dtype)
    return b.convert(b.eq(lhs, classes), _np.float64 if dtype is None else dtype)


# --- pooling (flax.linen's max_pool and avg_pool) -------------------------------------------

def _pool(inputs, init, reducer, window_shape, strides, padding):
    """flax's ``pool``: ``reducer`` over windows of the spatial dimensions of NHWC-style
    ``inputs`` (leading batch dimensions, trailing features); without a batch dimension,
    one of 1 is added and removed."""
    b = current_builder()
    window_shape = tuple(window_shape)
    strides = tuple(strides) if strides is not None else (1,) * len(window_shape)
    if len(strides) != len(window_shape):
        raise b.error(PSCValueError, f"pool: strides {strides} must have one entry per "
                      f"window dimension {window_shape}")
    batch_dims = inputs.ndim - (len(window_shape) + 1)
    if batch_dims < 0:
        raise b.error(PSCValueError, f"pool: inputs of rank {inputs.ndim} have no room for a "
                      f"window of rank {len(window_shape)} and a feature dimension")
    if not isinstance(padding, str):
        padding = tuple(tuple(pair) for pair in padding)
        if len(padding) != len(window_shape) or any(len(p) != 2 for p in padding):
            raise b.error(PSCValueError, f"pool: padding {padding} must be one (low, high) "
                          f"pair per window dimension {window_shape}")
        padding = ((0, 0),) * batch_dims + padding + ((0, 0),)
    dims = (1,) * batch_dims + window_shape + (1,)
    strides = (1,) * batch_dims + strides + (1,)
    return reduce_window(inputs, init, reducer, dims, strides, padding)


@_nn_function
def max_pool(inputs, window_shape, strides=None, padding="VALID"):
    """flax's ``nn.max_pool``: the maximum over each window (padding never wins)."""
    return _pool(_array(inputs), -_np.inf, lax_max, window_shape, strides, padding)


@_nn_function
def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """flax's ``nn.avg_pool``: the mean over each window; padding counts as zeros unless
    ``count_include_pad=False``, which divides by the number of real elements."""
    inputs = _inexact(inputs, "avg_pool")
    summed = _pool(inputs, 0.0, lax_add, window_shape, strides, padding)
    if count_include_pad:
        return summed / float(_np.prod(window_shape))
    div_shape = inputs.shape[:-1] + (1,)
    if len(div_shape) - 2 == len(window_shape):
        div_shape = (1,) + div_shape[1:]
    ones = current_builder().broadcast_in_dim(
        current_builder().constant(_np.ones((), inputs.dtype)), div_shape, ())
    return summed / _pool(ones, 0.0, lax_add, window_shape, strides, padding)


__all__ = ["relu", "relu6", "sigmoid", "silu", "swish", "softplus", "log_sigmoid", "elu",
           "selu", "gelu", "softmax", "log_softmax", "logsumexp", "standardize", "one_hot",
           "max_pool", "avg_pool"]
