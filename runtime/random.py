"""``transpiler.random``: jax.random's functional PRNG, with jax's API and jax's bits.

Keys are counters for the threefry2x32 hash (Salmon et al., "Parallel random numbers: as
easy as 1, 2, 3", SC 2011), as in jax 0.10.2 with its defaults (``threefry2x32``,
``jax_threefry_partitionable=True``): for the same key, shape and dtype every function
gives the values ``jax.random`` gives with ``jax_enable_x64`` on (PSC programs are
64-bit: the default dtypes are float64 and int64).  Nothing here calls jax: the hash and
the samplers are builder ops, so they stage into the program being built (the key and the
parameters may be traced; shapes and dtypes are static), and from plain Python each
function compiles and caches its program per signature, as the transforms do.

A key is what ``jax.random.PRNGKey`` returns: a ``uint32[2]`` array.  ``key(seed)`` returns
the same raw key (jax's typed key arrays are not modelled; ``key_data`` and
``wrap_key_data`` are the identity), so keys are ordinary arguments and results of
``jit_ps`` functions.  ``split`` gives keys of shape ``(*num, 2)``.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from . import dtypes
from .autodiff.api import _staged
from .context import current_builder, has_builder
from .errors import PSCOverflowError, PSCShapeError, PSCTypeError, PSCValueError
from .ir import Value
from .translation import has_traced

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}
U32 = UINT_DTYPES[32]
_KEY_HINT = "make keys with random.PRNGKey(seed) and derive new ones with split / fold_in"


def _primitive(fn):
    fn.__psc_primitive__ = True   # called with builder values, never transpiled
    return fn


# --- calling convention: staged inside a build, compiled from plain Python -----------------

def _call(name, impl, arrays, **static):
    """``impl(b, *arrays, **static)`` on the current builder when an argument is traced;
    otherwise compiled once per signature and run (``arrays`` are the arguments,
    ``static`` joins the cache key)."""
    if has_builder() and has_traced(arrays):
        b = current_builder()
        return impl(b, *[_value(b, a) for a in arrays], **static)
    # static inputs give a static (NumPy) draw, also while building: as NumPy calls do,
    # so what the binding-time analysis calls static is
    key = ("random." + name, impl, tuple(sorted(static.items())))
    return _staged(key, lambda *values: impl(current_builder(), *values, **static), *arrays)


def _value(b, x):
    if x is None or isinstance(x, Value):
        return x
    if type(x) in (bool, int, float):
        return b.constant(x)
    return b.constant(np.asarray(x))


def _full(b, value, shape, dtype) -> Value:
    return b.broadcast_in_dim(b.constant(np.asarray(value, dtype)), shape, ())


def _broadcast(b, x: Value, shape) -> Value:
    """``x`` broadcast to ``shape`` by NumPy's (and jax.random's) rules."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if x.ndim > len(shape) or any(s not in (1, t) for s, t in
                                  zip(x.shape, shape[len(shape) - x.ndim:])):
        raise b.error(PSCShapeError, f"parameter shape {x.shape} is not broadcast-compatible "
                      f"with shape {shape}", "pass a shape its parameters broadcast to")
    return b.broadcast_in_dim(x, shape, range(len(shape) - x.ndim, len(shape)))


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise PSCTypeError(f"a shape must be a tuple of static ints, got {shape!r}",
                           hint="shapes are static: use x.shape or Python ints") from None


def _float_dtype(dtype, name) -> np.dtype:
    dtype = np.dtype(float if dtype is None else dtype)
    if dtype.kind != "f" and dtype != ml_dtypes.bfloat16:
        raise PSCValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


def _finfo(dtype):
    return ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)


def _check_key(b, key: Value, name: str) -> Value:
    if key.dtype != U32 or key.shape != (2,):
        extra = (" (a key array from split: index one key, or map with vmap)"
                 if key.dtype == U32 and key.shape[-1:] == (2,) else "")
        raise b.error(PSCTypeError, f"{name} takes a single uint32[2] key, got "
                      f"{key.dtype.name}{list(key.shape)}{extra}", _KEY_HINT)
    return key


def _halves(b, key: Value):
    return [b.reshape(b.slice(key, (i,), (i + 1,)), ()) for i in (0, 1)]


# --- the threefry2x32 hash -----------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA


def _rotate_left(b, x: Value, d: int) -> Value:
    return b.or_(b.shift_left(x, _full(b, d, x.shape, U32)),
                 b.shift_right_logical(x, _full(b, 32 - d, x.shape, U32)))


def threefry2x32(b, k1: Value, k2: Value, x1: Value, x2: Value) -> tuple[Value, Value]:
    """Threefry-2x32 with 20 rounds on the counter pairs ``(x1, x2)`` (uint32 arrays of one
    shape) under the key ``(k1, k2)`` (uint32 scalars): five groups of four rounds, the
    key schedule injected after each group."""
    shape = x1.shape
    k1, k2 = (b.broadcast_in_dim(k, shape, ()) for k in (k1, k2))
    ks = [k1, k2, b.xor(b.xor(k1, k2), _full(b, _KEY_PARITY, shape, U32))]
    x = [b.add(x1, ks[0]), b.add(x2, ks[1])]
    for group in range(5):
        for rotation in _ROTATIONS[group % 2]:
            x[0] = b.add(x[0], x[1])
            x[1] = b.xor(x[0], _rotate_left(b, x[1], rotation))
        x[0] = b.add(x[0], ks[(group + 1) % 3])
        x[1] = b.add(b.add(x[1], ks[(group + 2) % 3]), _full(b, group + 1, shape, U32))
    return x[0], x[1]


def _iota_2x32(b, shape):
    """The row-major index of each element of ``shape`` as a uint64, in two uint32 halves
    (high, low): the counters jax's partitionable threefry hashes."""
    if not shape:
        zero = b.constant(np.uint32(0))
        return zero, zero
    u64 = UINT_DTYPES[64]
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    counts = None
    for d, stride in enumerate(strides):
        term = b.mul(b.iota(shape, u64, d), _full(b, stride, shape, u64))
        counts = term if counts is None else b.add(counts, term)
    high = b.shift_right_logical(counts, _full(b, 32, shape, u64))
    return b.convert(high, U32), b.convert(counts, U32)


def _hash_counters(b, key, shape):
    k1, k2 = _halves(b, key)
    return threefry2x32(b, k1, k2, *_iota_2x32(b, shape))


def random_bits(b, key: Value, bit_width: int, shape) -> Value:
    """``bit_width`` uniform random bits per element of ``shape`` (unsigned)."""
    bits1, bits2 = _hash_counters(b, key, shape)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        high = b.shift_left(b.convert(bits1, dtype), _full(b, 32, shape, dtype))
        return b.or_(high, b.convert(bits2, dtype))
    return b.convert(b.xor(bits1, bits2), dtype)


def _split(b, key: Value, shape) -> Value:
    bits1, bits2 = _hash_counters(b, key, shape)
    axes = tuple(range(len(shape)))
    pair = [b.broadcast_in_dim(v, shape + (1,), axes) for v in (bits1, bits2)]
    return b.concatenate(pair, len(shape))


def _split_pair(b, key):
    keys = _split(b, key, (2,))
    return [b.reshape(b.slice(keys, (i, 0), (i + 1, 2)), (2,)) for i in (0, 1)]


# --- keys ---------------------------------------------------------------------------------

def _seed_halves(seed: int) -> np.ndarray:
    seed %= 2**64
    return np.array([seed >> 32, seed & 0xFFFFFFFF], U32)


def _key_from_value(b, seed: Value) -> Value:
    if seed.shape != () or seed.dtype.kind not in "iu":
        raise b.error(PSCTypeError, f"PRNGKey takes a scalar integer seed, got "
                      f"{seed.dtype.name}{list(seed.shape)}")
    if seed.dtype.itemsize == 8:   # the high word (a narrower seed has none, as in jax)
        high = b.convert(b.shift_right_logical(seed, b.constant(np.asarray(32, seed.dtype))),
                         U32)
    else:
        high = b.constant(np.uint32(0))
    halves = [b.reshape(v, (1,)) for v in (high, b.convert(seed, U32))]
    return b.concatenate(halves, 0)


@_primitive
def PRNGKey(seed):
    """A key from an integer seed, as ``jax.random.PRNGKey``: ``uint32[2]`` holding the
    seed's two 32-bit halves (a Python int is read as int64; a 32-bit seed has a zero
    high word).  The seed may be traced."""
    if isinstance(seed, Value):
        return _key_from_value(current_builder(), seed)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) and \
            not (isinstance(seed, np.ndarray) and seed.shape == () and seed.dtype.kind in "iu"):
        raise PSCTypeError(f"PRNGKey takes a scalar integer seed, got {seed!r}",
                           hint="pass an int")
    if isinstance(seed, int) and not -2**63 <= seed < 2**63:   # read as int64, as jax
        raise PSCOverflowError(f"seed {seed} does not fit in int64",
                               hint="use a seed in [-2**63, 2**63), or a np.uint64")
    if not isinstance(seed, int) and np.asarray(seed).dtype.itemsize < 8:
        return np.array([0, np.asarray(seed).astype(U32)], U32)
    return _seed_halves(int(seed))


@_primitive
def key(seed):
    """``jax.random.key``: here the same raw ``uint32[2]`` key as `PRNGKey` (no typed key
    arrays); `key_data` reads it back unchanged."""
    return PRNGKey(seed)


@_primitive
def key_data(keys):
    """The ``uint32`` data of keys: keys are raw already, so ``keys`` itself."""
    return keys


@_primitive
def wrap_key_data(key_bits_array):
    """Keys from their ``uint32`` data: raw keys, so the array itself."""
    return key_bits_array


@_primitive
def split(key, num=2):
    """``num`` new keys (an int or a shape), shape ``(*num, 2)``, as ``jax.random.split``."""
    shape = _shape(num)
    return _call("split", _split_checked, (key,), shape=shape)


def _split_checked(b, key, shape):
    return _split(b, _check_key(b, key, "split"), shape)


def _fold_in(b, key, data):
    key = _check_key(b, key, "fold_in")
    if data.shape != () or data.dtype.kind not in "iub":
        raise b.error(PSCTypeError, f"fold_in takes a scalar integer, got "
                      f"{data.dtype.name}{list(data.shape)}")
    k1, k2 = _halves(b, key)
    zero = b.constant(np.zeros((1,), U32))
    out1, out2 = threefry2x32(b, k1, k2, zero, b.reshape(b.convert(data, U32), (1,)))
    return b.concatenate([out1, out2], 0)


@_primitive
def fold_in(key, data):
    """A new key from ``key`` and a 32-bit integer ``data`` (taken modulo 2**32)."""
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        data = np.uint32(int(data) % 2**32)
    return _call("fold_in", _fold_in, (key, data))


@_primitive
def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint64 by default)."""
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise PSCValueError(f"dtype argument to `bits` must be an unsigned int dtype, "
                            f"got {dtype}")
    return _call("bits", _bits, (key,), shape=_shape(shape), width=dtype.itemsize * 8)


def _bits(b, key, shape, width):
    return random_bits(b, _check_key(b, key, "bits"), width, shape)


# --- uniform and normal --------------------------------------------------------------------

def _uniform(b, key, minval, maxval, shape, dtype):
    """Random mantissa bits under the exponent of 1.0 give a float in [1, 2); minus 1,
    scaled to [minval, maxval)."""
    key = _check_key(b, key, "uniform")
    info = _finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint = UINT_DTYPES[nbits]
    raw = b.convert(random_bits(b, key, rng_bits, shape), uint)
    mantissa = b.shift_right_logical(raw, _full(b, rng_bits - nmant, shape, uint))
    one_bits = np.array(1.0, dtype).view(uint)
    floats = b.sub(b.bitcast_convert(b.or_(mantissa, _full(b, one_bits, shape, uint)), dtype),
                   _full(b, 1.0, shape, dtype))
    minval, maxval = (_broadcast(b, b.convert(v, dtype), shape) for v in (minval, maxval))
    return b.max(minval, b.add(b.mul(floats, b.sub(maxval, minval)), minval))


@_primitive
def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in [minval, maxval) (float64 by default)."""
    return _call("uniform", _uniform, (key, minval, maxval), shape=_shape(shape),
                 dtype=_float_dtype(dtype, "uniform"))


def _normal(b, key, shape, dtype):
    key = _check_key(b, key, "normal")
    low = np.nextafter(np.array(-1., dtype), np.array(0., dtype))
    u = _uniform(b, key, b.constant(low), b.constant(np.array(1., dtype)), shape, dtype)
    return b.mul(_full(b, np.sqrt(2), shape, dtype), b.erf_inv(u))


@_primitive
def normal(key, shape=(), dtype=None):
    """Standard normal floats: √2·erf⁻¹ of a uniform draw in (-1, 1)."""
    return _call("normal", _normal, (key,), shape=_shape(shape),
                 dtype=_float_dtype(dtype, "normal"))


def _truncated_normal(b, key, lower, upper, shape, dtype):
    key = _check_key(b, key, "truncated_normal")
    if shape is None:
        shape = np.broadcast_shapes(lower.shape, upper.shape)
    lower, upper = b.convert(lower, dtype), b.convert(upper, dtype)
    a, c = (b.erf(b.div(v, _full(b, np.sqrt(2), v.shape, dtype))) for v in (lower, upper))
    u = _uniform(b, key, a, c, shape, dtype)
    out = b.mul(_full(b, np.sqrt(2), shape, dtype), b.erf_inv(u))
    # kept inside the open interval, whatever rounding (or u == a) gives
    above = b.next_after(lower, _full(b, np.inf, lower.shape, dtype))
    below = b.next_after(upper, _full(b, -np.inf, upper.shape, dtype))
    return b.min(_broadcast(b, below, shape), b.max(_broadcast(b, above, shape), out))


@_primitive
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats conditioned on (lower, upper), by inverting the CDF."""
    return _call("truncated_normal", _truncated_normal, (key, lower, upper),
                 shape=None if shape is None else _shape(shape),
                 dtype=_float_dtype(dtype, "truncated_normal"))


# --- discrete ------------------------------------------------------------------------------

def _bernoulli(b, key, p, shape, mode):
    key = _check_key(b, key, "bernoulli")
    if not dtypes.is_inexact(p.dtype) or dtypes.is_complex(p.dtype):
        raise b.error(PSCTypeError, f"bernoulli probability `p` must have a floating dtype, "
                      f"got {p.dtype.name}")
    shape = p.shape if shape is None else shape
    p = _broadcast(b, p, shape)
    if mode == "high":
        both = _uniform(b, key, b.constant(0.), b.constant(1.), (2, *shape), p.dtype)
        u1, u2 = (b.reshape(b.slice(both, (i,) + (0,) * len(shape), (i + 1,) + shape), shape)
                  for i in (0, 1))
        u2 = b.mul(u2, _full(b, 2.0 ** -_finfo(p.dtype).nmant, shape, p.dtype))
        return b.lt(u2, b.sub(p, u1))
    return b.lt(_uniform(b, key, b.constant(0.), b.constant(1.), shape, p.dtype), p)


@_primitive
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """True with probability ``p`` (``mode="high"`` uses twice the bits)."""
    if mode not in ("high", "low"):
        raise PSCValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    return _call("bernoulli", _bernoulli, (key, p),
                 shape=None if shape is None else _shape(shape), mode=mode)


def _clip_convert(b, x: Value, dtype) -> Value:
    """``x`` in ``dtype``, clipped to what both dtypes hold (no wrap-around)."""
    a, t = np.iinfo(x.dtype), np.iinfo(dtype)
    low, high = (b.constant(np.asarray(v, x.dtype)) for v in (max(a.min, t.min),
                                                               min(a.max, t.max)))
    return b.convert(b.min(b.max(x, _broadcast(b, low, x.shape)), _broadcast(b, high, x.shape)),
                     dtype)


def _integer(b, x: Value) -> Value:
    return x if x.dtype.kind in "iu" else b.convert(x, np.int64)


def _randint(b, key, minval, maxval, shape, dtype):
    """Two words of random bits per element, reduced modulo the span (as jax: slightly
    biased when the span is not a power of two)."""
    key = _check_key(b, key, "randint")
    minval, maxval = _integer(b, minval), _integer(b, maxval)
    limit = _clip_convert(b, b.constant(np.asarray(np.iinfo(dtype).max, dtype)), maxval.dtype)
    out_of_range = b.gt(maxval, _broadcast(b, limit, maxval.shape))
    minval, maxval = _clip_convert(b, minval, dtype), _clip_convert(b, maxval, dtype)
    minval, maxval, out_of_range = (_broadcast(b, v, shape)
                                    for v in (minval, maxval, out_of_range))
    nbits = np.iinfo(dtype).bits
    k1, k2 = _split_pair(b, key)
    higher, lower = random_bits(b, k1, nbits, shape), random_bits(b, k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    one = _full(b, 1, shape, unsigned)
    span = b.select(b.le(maxval, minval), one, b.convert(b.sub(maxval, minval), unsigned))
    span = b.select(b.and_(out_of_range, b.gt(maxval, minval)), b.add(span, one), span)
    # 2**nbits % span without overflow: (a*b) % n == ((a % n) * (b % n)) % n
    multiplier = b.rem(_full(b, 2 ** (nbits // 2), shape, unsigned), span)
    multiplier = b.rem(b.mul(multiplier, multiplier), span)
    offset = b.add(b.mul(b.rem(higher, span), multiplier), b.rem(lower, span))
    return b.add(minval, b.convert(b.rem(offset, span), dtype))


def _randint_any_width(b, key, minval, maxval, shape, dtype):
    info = np.iinfo(dtype)
    if info.bits >= 32:
        return _randint(b, key, minval, maxval, shape, dtype)
    # narrow dtypes sample in int32 (less bias), then narrow
    i32 = np.dtype(np.int32)
    bounds = []
    for v, high in ((minval, info.max), (maxval, info.max + 1)):
        v = b.convert(v, i32)
        lo, hi = (_broadcast(b, b.constant(np.int32(c)), v.shape) for c in (info.min, high))
        bounds.append(b.min(b.max(v, lo), hi))
    return b.convert(_randint(b, key, *bounds, shape, i32), dtype)


@_primitive
def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval) (int64 by default)."""
    dtype = np.dtype(int if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise PSCTypeError(f"randint only accepts integer dtypes, got {dtype}")
    return _call("randint", _randint_any_width, (key, minval, maxval), shape=_shape(shape),
                 dtype=dtype)


# --- Gumbel, categorical -------------------------------------------------------------------

def _gumbel(b, key, shape, dtype, mode):
    key = _check_key(b, key, "gumbel")
    info = _finfo(dtype)
    if mode == "high":
        both = _uniform(b, key, b.constant(0.), b.constant(1.), (2, *shape), dtype)
        high, low = (b.reshape(b.slice(both, (i,) + (0,) * len(shape), (i + 1,) + shape),
                               shape) for i in (0, 1))
        fine = b.add(b.add(high, b.mul(_full(b, 2.0 ** -info.nmant, shape, dtype), low)),
                     _full(b, info.tiny, shape, dtype))
        x = b.select(b.ge(high, _full(b, 0.5, shape, dtype)), high, fine)
        return b.neg(b.log(b.neg(b.log1p(b.neg(x)))))
    u = _uniform(b, key, b.constant(np.asarray(info.tiny, dtype)), b.constant(1.), shape,
                 dtype)
    return b.neg(b.log(b.neg(b.log(u))))


def _gumbel_mode(mode):
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise PSCValueError(f"gumbel mode must be 'high' or 'low', got {mode!r}",
                            hint="jax's 'highest' mode is not supported")
    return mode


@_primitive
def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel floats: ``-log(-log(u))``."""
    return _call("gumbel", _gumbel, (key,), shape=_shape(shape),
                 dtype=_float_dtype(dtype, "gumbel"), mode=_gumbel_mode(mode))


def _top_k_indices(b, x: Value, k: int) -> Value:
    """The indices of the ``k`` largest along the last axis, largest first, the lower
    index first among equals (XLA's TopK), as int32."""
    last = x.ndim - 1
    positions = b.iota(x.shape, np.int32, last)
    _, order = b.sort([b.neg(x), positions], last, 1, True)
    return b.slice(order, (0,) * x.ndim, x.shape[:-1] + (k,))


def _moveaxis(b, x, source, destination):
    order = [d for d in range(x.ndim) if d != source]
    order.insert(destination, source)
    return b.transpose(x, order)


def _categorical(b, key, logits, axis, shape, replace, mode):
    key = _check_key(b, key, "categorical")
    axis = axis % logits.ndim
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch_shape if shape is None else shape
    if np.broadcast_shapes(shape, batch_shape) != shape:
        raise b.error(PSCShapeError, f"categorical shape {shape} must be broadcast-compatible "
                      f"with the logits' batch shape {batch_shape}")
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        full = list(shape[len(prefix):])
        full.insert(axis, logits.shape[axis])
        full = tuple(prefix) + tuple(full)
        g = _gumbel(b, key, full, logits.dtype, mode)
        return b.argmax(b.add(g, _broadcast(b, logits, full)), len(prefix) + axis, np.int64)
    noisy = b.add(logits, _gumbel(b, key, logits.shape, logits.dtype, mode))
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise b.error(PSCValueError, f"Number of samples without replacement ({k}) cannot "
                      f"exceed number of categories ({logits.shape[axis]}).")
    indices = _top_k_indices(b, _moveaxis(b, noisy, axis, logits.ndim - 1), k)
    indices = _moveaxis(b, indices, indices.ndim - 1, 0)
    return b.reshape(indices, shape)


@_primitive
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Samples of the categories along ``axis`` of ``logits`` (Gumbel-max; without
    replacement, Gumbel top-k).  int64 indices with replacement, int32 without (as jax)."""
    return _call("categorical", _categorical, (key, logits), axis=int(axis),
                 shape=None if shape is None else _shape(shape), replace=bool(replace),
                 mode=_gumbel_mode(mode))


# --- permutation, choice -------------------------------------------------------------------

def _take(b, x: Value, indices: Value, axis: int) -> Value:
    """``np.take(x, indices, axis)`` for indices in bounds."""
    batch = indices.ndim
    offset = tuple(range(axis)) + tuple(range(axis + batch, x.ndim - 1 + batch))
    sizes = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    return b.gather(x, b.reshape(indices, indices.shape + (1,)), offset_dims=offset,
                    collapsed_slice_dims=(axis,), start_index_map=(axis,),
                    index_vector_dim=batch, slice_sizes=sizes)


def _shuffle(b, key, x: Value, axis: int) -> Value:
    """Sort by fresh 32-bit random keys, in enough rounds that ties are unlikely."""
    rounds = int(np.ceil(3 * np.log(max(1, math.prod(x.shape))) / np.log(2**32 - 1)))
    for _ in range(rounds):
        key, subkey = _split_pair(b, key)
        x = b.sort([random_bits(b, subkey, 32, x.shape), x], axis, 1, True)[1]
    return x


def _arange(b, n):
    return b.iota((n,), np.int64, 0)


def _permutation(b, key, x, axis, independent):
    key = _check_key(b, key, "permutation")
    if isinstance(x, int):
        return _shuffle(b, key, _arange(b, x), 0)
    axis = axis % max(x.ndim, 1)
    if independent or x.ndim == 1:
        return _shuffle(b, key, x, axis)
    return _take(b, x, _shuffle(b, key, _arange(b, x.shape[axis]), 0), axis)


@_primitive
def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (an int) or of ``x`` along ``axis``."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return _call("permutation", _permutation, (key,), x=int(x), axis=0,
                     independent=False)
    if np.ndim(x) == 0:
        raise PSCTypeError("x must be an integer or at least 1-dimensional")
    return _call("permutation", _permutation, (key, x), axis=int(axis),
                 independent=bool(independent))


def _searchsorted(b, sorted_1d: Value, v: Value) -> Value:
    """``np.searchsorted(sorted_1d, v)`` (side left): how many entries are below each v."""
    n = sorted_1d.shape[0]
    full = v.shape + (n,)
    below = b.lt(b.broadcast_in_dim(sorted_1d, full, (v.ndim,)),
                 b.broadcast_in_dim(v, full, tuple(range(v.ndim))))
    return b.reduce(b.convert(below, np.int64), "sum", (v.ndim,))


def _choice(b, key, a, p, shape, replace, axis, mode):
    key = _check_key(b, key, "choice")
    n_inputs = a if isinstance(a, int) else a.shape[axis]
    n_draws = math.prod(shape)
    out_dtype = np.dtype(np.int64) if isinstance(a, int) else a.dtype
    out_shape = shape if isinstance(a, int) else a.shape[:axis] + shape + a.shape[axis + 1:]
    if n_draws == 0:   # jax's result: zeros of `shape`, whatever the axis
        return _full(b, 0, shape, out_dtype)
    if n_inputs <= 0:
        raise b.error(PSCValueError, "a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise b.error(PSCValueError, f"Cannot take a larger sample (size {n_draws}) than "
                      f"population (size {n_inputs}) when 'replace=False'")
    if p is None and not replace:
        shuffled = _permutation(b, key, a, axis, False)
        start = (0,) * (1 if isinstance(a, int) else a.ndim)
        limit = list((n_inputs,) if isinstance(a, int) else a.shape)
        limit[0 if isinstance(a, int) else axis] = n_draws
        return b.reshape(b.slice(shuffled, start, limit), out_shape)
    if p is None:
        zero, top = b.constant(np.int64(0)), b.constant(np.int64(n_inputs))
        ind = _randint(b, key, zero, top, shape, np.dtype(np.int64))
    else:
        if p.dtype.kind in "biu":
            p = b.convert(p, np.float64)
        if p.shape != (n_inputs,):
            raise b.error(PSCValueError, "p must be None or a 1D vector with the same size "
                          f"as a.shape[axis]. p has shape {p.shape} and a.shape[axis] is "
                          f"{n_inputs}.")
        if replace:
            cumulative = b.cumsum(p, 0)
            total = b.reshape(b.slice(cumulative, (n_inputs - 1,), (n_inputs,)), ())
            u = _uniform(b, key, b.constant(0.), b.constant(1.), shape, p.dtype)
            r = b.mul(b.broadcast_in_dim(total, shape, ()),
                      b.sub(_full(b, 1, shape, p.dtype), u))
            ind = _searchsorted(b, cumulative, r)
        else:
            g = b.add(_gumbel(b, key, (n_inputs,), p.dtype, mode), b.log(p))
            ind = b.convert(_top_k_indices(b, g, n_draws), np.int64)
            ind = b.reshape(ind, shape)
    return ind if isinstance(a, int) else b.reshape(_take(b, a, ind, axis), out_shape)


@_primitive
def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample of ``range(a)`` (an int) or of ``a`` along ``axis``, with or without
    replacement, uniform or with probabilities ``p``."""
    if not isinstance(shape, (tuple, list)):
        raise PSCTypeError(f"shape argument of random.choice must be a sequence, got {shape}")
    static = dict(shape=_shape(shape), replace=bool(replace), mode=_gumbel_mode(mode))
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        return _call("choice", _choice_of_range, (key, p), a=int(a), axis=0, **static)
    return _call("choice", _choice, (key, a, p), axis=int(axis) % max(np.ndim(a), 1),
                 **static)


def _choice_of_range(b, key, p, a, **static):
    return _choice(b, key, a, p, **static)


# jax.random's names that `transpiler.random` exports.
__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "truncated_normal", "bernoulli", "randint", "gumbel",
           "categorical", "permutation", "choice"]
