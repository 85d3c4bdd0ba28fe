"""Differential tests: every `Builder` op, compiled with XLA, against its NumPy equivalent.

Each test builds a computation, runs it, and compares with a reference computed here with
NumPy (or ``math``).  To keep the suite fast, one computation often carries several cases
(one parameter and one output per case), and computations shared by several parametrized
tests are compiled once and cached.
"""
from __future__ import annotations

import functools
import math
import zlib

import numpy as np
import pytest

from runtime import Builder, StagedFunction, Value, compile

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I32, I64 = np.dtype(np.int32), np.dtype(np.int64)
U32, BOOL = np.dtype(np.uint32), np.dtype(np.bool_)
FLOATS = (F32, F64)
INTS = (I32, I64)
NUMERIC = (F32, F64, I32, I64)
ALL = (F32, F64, I32, I64, BOOL)

SHAPES = ((), (0,), (2, 0), (7,), (2, 3))


# --- helpers ------------------------------------------------------------------------------

def run(build, *args):
    """Build ``build(b, *params)`` with one parameter per argument, compile it and run it.

    ``build`` returns a Value or a list/tuple of Values; the result is one NumPy array or
    a list of them."""
    args = [np.asarray(a) for a in args]
    b = Builder("test")
    params = [b.parameter(i, a.shape, a.dtype) for i, a in enumerate(args)]
    outs = build(b, *params)
    single = isinstance(outs, Value)
    outs = [outs] if single else list(outs)
    results = [np.asarray(r) for r in compile(b.build(*outs))(*args)]
    return results[0] if single else results


def check(actual, expected, rtol=0.0, atol=0.0):
    """Same shape, same dtype, values equal (floats within tolerance, NaNs equal)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def same_bits(actual, expected):
    """Bit-for-bit equality (signed zeros and NaN payloads included)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.tobytes() == expected.tobytes(), (actual, expected)


def ids(values):
    return [str(np.dtype(v)) if isinstance(v, (type, np.dtype)) else str(v) for v in values]


def sample(rng, shape, dtype, low, high, extra=()):
    """Random values of ``dtype`` in [low, high], with ``extra`` values placed first."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == BOOL:
        flat = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind in "iu":
        low = max(low, 0) if dtype.kind == "u" else low
        flat = rng.integers(low, high, n, endpoint=True).astype(dtype)
    else:
        flat = rng.uniform(low, high, n).astype(dtype)
    with np.errstate(invalid="ignore"):
        extra = np.asarray(extra).astype(dtype).ravel()[:n]   # -1 wraps for unsigned
    flat[:extra.size] = extra
    return flat.reshape(shape)


def ref_in_f64(fn):
    """Evaluate ``fn`` in float64 and round to the input's dtype (a tight float32 oracle)."""
    def ref(x):
        return np.asarray(fn(np.asarray(x, np.float64))).astype(x.dtype)
    return ref


_ERF = np.vectorize(math.erf, otypes=[np.float64])
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])
_LGAMMA = np.vectorize(math.lgamma, otypes=[np.float64])


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# --- unary ops ----------------------------------------------------------------------------

HALVES = (-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.0, 3.0, -3.0, 0.49, -0.51, 7.5)
# method -> (dtypes, (low, high, extra values), reference, exact?)
UNARY = {
    "neg": (NUMERIC, (-50, 50, ()), np.negative, True),
    "abs": (NUMERIC, (-50, 50, (-0.0, -7)), np.abs, True),
    "sign": (NUMERIC, (-5, 5, (0, -3, 3, 0)), np.sign, True),
    "exp": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.exp), False),
    "log": (FLOATS, (0.1, 10, (1.0,)), ref_in_f64(np.log), False),
    "log1p": (FLOATS, (-0.9, 5, (1e-8, 0.0)), ref_in_f64(np.log1p), False),
    "expm1": (FLOATS, (-3, 3, (1e-8, 0.0)), ref_in_f64(np.expm1), False),
    "sqrt": (FLOATS, (0, 10, (0.0, 4.0)), ref_in_f64(np.sqrt), False),
    "rsqrt": (FLOATS, (0.1, 10, (4.0,)), ref_in_f64(lambda x: 1 / np.sqrt(x)), False),
    "cbrt": (FLOATS, (-10, 10, (-8.0, 27.0)), ref_in_f64(np.cbrt), False),
    "sin": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.sin), False),
    "cos": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.cos), False),
    "tan": (FLOATS, (-1.4, 1.4, (0.0,)), ref_in_f64(np.tan), False),
    "tanh": (FLOATS, (-5, 5, (0.0, 1e-4)), ref_in_f64(np.tanh), False),
    "logistic": (FLOATS, (-10, 10, (0.0,)), ref_in_f64(lambda x: 1 / (1 + np.exp(-x))), False),
    "floor": (FLOATS, (-5, 5, HALVES), np.floor, True),
    "ceil": (FLOATS, (-5, 5, HALVES), np.ceil, True),
    "round": (FLOATS, (-5, 5, HALVES), ref_in_f64(_round_half_away), True),
    "round_nearest_even": (FLOATS, (-5, 5, HALVES), np.rint, True),
    "not_": ((BOOL, I32, I64, U32), (-100, 100, (0, -1)), np.invert, True),
    "is_finite": (FLOATS, (-5, 5, (np.nan, np.inf, -np.inf, 0.0)), np.isfinite, True),
    "asin": (FLOATS, (-1, 1, (-1.0, 1.0, 0.0)), ref_in_f64(np.arcsin), False),
    "acos": (FLOATS, (-1, 1, (-1.0, 1.0, 0.0)), ref_in_f64(np.arccos), False),
    "atan": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.arctan), False),
    "sinh": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.sinh), False),
    "cosh": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.cosh), False),
    "asinh": (FLOATS, (-5, 5, (0.0,)), ref_in_f64(np.arcsinh), False),
    "acosh": (FLOATS, (1, 10, (1.0,)), ref_in_f64(np.arccosh), False),
    "atanh": (FLOATS, (-0.99, 0.99, (0.0,)), ref_in_f64(np.arctanh), False),
    "erf": (FLOATS, (-3, 3, (0.0,)), ref_in_f64(_ERF), False),
    "erfc": (FLOATS, (-3, 3, (0.0,)), ref_in_f64(_ERFC), False),
    "lgamma": (FLOATS, (0.1, 10, (1.0, 2.0, 0.5, -0.5, -2.5)), ref_in_f64(_LGAMMA), False),
}
UNARY_CASES = [(op, dt) for op, (dts, *_) in UNARY.items() for dt in dts]


def _tolerance(dtype, exact):
    if exact:
        return dict(rtol=0.0, atol=0.0)
    return dict(rtol=2e-6, atol=1e-6) if dtype == F32 else dict(rtol=1e-13, atol=1e-14)


def run_split(groups, build_one):
    """``groups``: {key: [input arrays]}; ``build_one(b, key, params) -> [Values]``.
    Builds all groups into one computation (XLA fuses same-shape element-wise work, so
    this compiles much faster than one computation per group); returns
    {key: (inputs, outputs)}."""
    keys = list(groups)
    flat = [a for k in keys for a in groups[k]]
    counts = []

    def build(b, *ps):
        outs, it = [], iter(ps)
        for k in keys:
            mine = [next(it) for _ in groups[k]]
            got = build_one(b, k, mine)
            counts.append(len(got))
            outs += got
        return outs
    outs = run(build, *flat)
    result, pos = {}, 0
    for k, n in zip(keys, counts):
        result[k] = (groups[k], outs[pos:pos + n])
        pos += n
    return result


@functools.lru_cache(maxsize=None)
def _unary_for_op(op):
    """One computation applying ``op`` to one input per dtype and shape in SHAPES."""
    dts, (low, high, extra), _, _ = UNARY[op]
    groups = {}
    for dtype in dts:
        rng = np.random.default_rng(zlib.crc32(f"{op}-{dtype}".encode()))
        groups[dtype] = [sample(rng, shape, dtype, low, high, extra) for shape in SHAPES]
    return run_split(groups, lambda b, dtype, xs: [getattr(b, op)(x) for x in xs])


def _unary_run(op, dtype):
    return _unary_for_op(op)[dtype]


@pytest.mark.parametrize("op,dtype", UNARY_CASES, ids=[f"{o}-{d}" for o, d in UNARY_CASES])
def test_unary(op, dtype):
    _, _, ref, exact = UNARY[op]
    inputs, outputs = _unary_run(op, dtype)
    for x, out in zip(inputs, outputs):
        check(out, ref(x), **_tolerance(dtype, exact))


def test_unary_special_float_values():
    """NaN and infinities flow through as NumPy has them."""
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float64)
    ops = ["neg", "abs", "exp", "floor", "ceil", "round", "round_nearest_even", "tanh",
           "sign", "sqrt"]
    refs = [np.negative, np.abs, np.exp, np.floor, np.ceil, _round_half_away, np.rint,
            np.tanh, np.sign, None]
    outs = run(lambda b, x: [getattr(b, op)(x) for op in ops], x)
    for op, out, ref in zip(ops, outs, refs):
        with np.errstate(invalid="ignore"):
            expected = np.sqrt(x) if ref is None else ref(x)
        check(out, expected)


@pytest.mark.parametrize("op,bad", [("exp", I32), ("sqrt", BOOL), ("floor", I64),
                                    ("neg", BOOL), ("not_", F32), ("is_finite", I32),
                                    ("erf", I32), ("sign", BOOL)])
def test_unary_rejects_dtype(op, bad):
    from runtime import PSCTypeError
    b = Builder("t")
    x = b.parameter(0, (3,), bad)
    with pytest.raises(PSCTypeError):
        getattr(b, op)(x)


# --- binary ops ---------------------------------------------------------------------------

def _int_div(x, y):
    """Integer division truncating toward zero (C / XLA)."""
    q = np.abs(x) // np.abs(y)
    return (q * np.sign(x) * np.sign(y)).astype(x.dtype)


def _shift_right_logical(x, s):
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return (x.view(unsigned) >> s.astype(unsigned)).view(x.dtype)


def _shift_right_arithmetic(x, s):
    """Sign-filling shift of the bits, whatever the signedness (StableHLO: ``ashr``)."""
    signed = np.dtype(f"i{x.dtype.itemsize}")
    return (x.view(signed) >> s.astype(signed)).view(x.dtype)


def _pow_ref(x, y):
    if x.dtype.kind == "f":
        return ref_in_f64(lambda a: np.power(a, y.astype(np.float64)))(x)
    return np.power(x, y)


SHIFT_DTYPES = (I32, I64, U32)

# method -> (dtypes, x domain, y domain, reference, exact)
BINARY = {
    "add": (ALL + (U32,), (-1000, 1000), (-1000, 1000), np.add, True),
    "sub": (NUMERIC, (-1000, 1000), (-1000, 1000), np.subtract, True),
    "mul": (ALL, (-1000, 1000), (-1000, 1000), np.multiply, True),
    "div": (NUMERIC, (-1000, 1000), (1, 30), None, False),
    "rem": (NUMERIC, (-1000, 1000), (1, 30), np.fmod, False),
    "pow": (NUMERIC, (0, 5), (0, 5), _pow_ref, False),
    "max": (ALL + (U32,), (-1000, 1000), (-1000, 1000), np.maximum, True),
    "min": (ALL + (U32,), (-1000, 1000), (-1000, 1000), np.minimum, True),
    "atan2": (FLOATS, (-5, 5), (-5, 5), None, False),
    "and_": ((BOOL, I32, I64, U32), (-1000, 1000), (-1000, 1000), np.bitwise_and, True),
    "or_": ((BOOL, I32, I64, U32), (-1000, 1000), (-1000, 1000), np.bitwise_or, True),
    "xor": ((BOOL, I32, I64, U32), (-1000, 1000), (-1000, 1000), np.bitwise_xor, True),
    "shift_left": (SHIFT_DTYPES, (-1000, 1000), None, np.left_shift, True),
    "shift_right_arithmetic": (SHIFT_DTYPES, (-1000, 1000), None, _shift_right_arithmetic,
                               True),
    "shift_right_logical": (SHIFT_DTYPES, (-1000, 1000), None, _shift_right_logical, True),
    "next_after": (FLOATS, (-5, 5), (-5, 5), np.nextafter, True),
}
BINARY_CASES = [(op, dt) for op, (dts, *_) in BINARY.items() for dt in dts]


def _binary_inputs(op, dtype, shape, rng):
    dtypes_, (xl, xh), ydom, _, _ = BINARY[op]
    if dtype == U32:
        xl, xh = 0, 2**32 - 1
    x = sample(rng, shape, dtype, xl, xh)
    if ydom is None:   # shift amounts in range
        y = sample(rng, shape, dtype, 0, dtype.itemsize * 8 - 1,
                   extra=(0, dtype.itemsize * 8 - 1, 1))
    else:
        yl, yh = ydom
        if dtype == U32 and op not in ("div", "rem", "pow"):
            yl, yh = 0, 2**32 - 1
        y = sample(rng, shape, dtype, yl, yh)
        if op in ("div", "rem") and dtype.kind in "iu":
            # Negative divisors too, never zero.
            sign = np.where(sample(rng, shape, BOOL, 0, 1), 1, -1).astype(dtype)
            y = (y * sign).astype(dtype)
        if op == "pow" and dtype.kind == "f":
            x = sample(rng, shape, dtype, 0.5, 3)
            y = sample(rng, shape, dtype, -2, 2)
    if op in ("max", "min") and dtype.kind == "f" and x.size >= 3:
        x.flat[0], y.flat[1], x.flat[2], y.flat[2] = np.nan, np.nan, 1.0, 1.0
    if op in ("add", "sub", "mul") and dtype.kind in "iu" and dtype != U32:
        x, y = x % 46, y % 46    # no overflow in products
        x, y = x.astype(dtype), y.astype(dtype)
    return x, y


@functools.lru_cache(maxsize=None)
def _binary_for_op(op):
    groups = {}
    for dtype in BINARY[op][0]:
        rng = np.random.default_rng(zlib.crc32(f"{op}-{dtype}".encode()))
        groups[dtype] = [a for shape in SHAPES for a in _binary_inputs(op, dtype, shape, rng)]

    def build_one(b, dtype, ps):
        return [getattr(b, op)(ps[2 * i], ps[2 * i + 1]) for i in range(len(ps) // 2)]
    return {k: (list(zip(ins[::2], ins[1::2])), outs)
            for k, (ins, outs) in run_split(groups, build_one).items()}


def _binary_run(op, dtype):
    return _binary_for_op(op)[dtype]


def _binary_ref(op, x, y):
    ref = BINARY[op][3]
    if op == "div":
        if x.dtype.kind in "iu":
            return _int_div(x, y)
        return ref_in_f64(lambda a: a / y.astype(np.float64))(x)
    if op == "atan2":
        return ref_in_f64(lambda a: np.arctan2(a, y.astype(np.float64)))(x)
    if op == "mul" and x.dtype == BOOL:
        return np.logical_and(x, y)
    if op == "add" and x.dtype == BOOL:
        return np.logical_or(x, y)
    return ref(x, y)


@pytest.mark.parametrize("op,dtype", BINARY_CASES, ids=[f"{o}-{d}" for o, d in BINARY_CASES])
def test_binary(op, dtype):
    exact = BINARY[op][4] or dtype.kind in "iub"
    pairs, outputs = _binary_run(op, dtype)
    for (x, y), out in zip(pairs, outputs):
        with np.errstate(over="ignore"):
            expected = _binary_ref(op, x, y)
        check(out, expected, **_tolerance(dtype, exact))


def test_int_division_truncates_toward_zero():
    x = np.array([7, -7, 7, -7, 0, 1, -1, 2**31 - 1], np.int32)
    y = np.array([2, 2, -2, -2, 3, -3, 3, 7], np.int32)
    q, r = run(lambda b, x, y: [b.div(x, y), b.rem(x, y)], x, y)
    check(q, np.array([3, -3, -3, 3, 0, 0, 0, (2**31 - 1) // 7], np.int32))
    check(r, np.array([1, -1, 1, -1, 0, 1, -1, (2**31 - 1) % 7], np.int32))


def test_float_rem_is_fmod():
    x = np.array([5.5, -5.5, 5.5, -5.5, 1.0], np.float64)
    y = np.array([2.0, 2.0, -2.0, -2.0, 0.3], np.float64)
    check(run(lambda b, x, y: b.rem(x, y), x, y), np.fmod(x, y), rtol=1e-15)


def test_shift_extremes():
    x = np.array([1, -1, -2**31, 2**30, -5], np.int32)
    s = np.array([31, 31, 1, 1, 2], np.int32)
    left, arith, logical = run(lambda b, x, s: [b.shift_left(x, s),
                                                b.shift_right_arithmetic(x, s),
                                                b.shift_right_logical(x, s)], x, s)
    check(left, np.left_shift(x, s))
    check(arith, np.right_shift(x, s))
    check(logical, _shift_right_logical(x, s))


# --- comparisons --------------------------------------------------------------------------

CMP_DTYPES = (I32, I64, U32, F32, F64, BOOL)
DIRECTIONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
              "gt": np.greater, "ge": np.greater_equal}


def _cmp_inputs(dtype):
    if dtype == BOOL:
        x = np.array([False, False, True, True], bool)
        y = np.array([False, True, False, True], bool)
    elif dtype == U32:
        big = [0, 1, 2**31, 2**32 - 1, 2**31 - 1, 5, 2**31 + 7]
        x = np.array([a for a in big for _ in big], np.uint32)
        y = np.array([c for _ in big for c in big], np.uint32)
    elif dtype.kind == "i":
        info = np.iinfo(dtype)
        vals = [info.min, -5, -1, 0, 1, 5, info.max]
        x = np.array([a for a in vals for _ in vals], dtype)
        y = np.array([c for _ in vals for c in vals], dtype)
    else:
        vals = [-np.inf, -2.5, -0.0, 0.0, 1e-30, 2.5, np.inf, np.nan]
        x = np.array([a for a in vals for _ in vals], dtype)
        y = np.array([c for _ in vals for c in vals], dtype)
    return x, y


@functools.lru_cache(maxsize=None)
def _cmp_run(dtype):
    x, y = _cmp_inputs(dtype)
    inputs = [(x, y), (x[0], y[0]), (x[:0], y[:0]), (x[:0].reshape(2, 0, 0)[0],
                                                      y[:0].reshape(2, 0, 0)[0])]
    flat = [a for pair in inputs for a in pair]

    def build(b, *ps):
        return [getattr(b, d)(ps[2 * i], ps[2 * i + 1])
                for i in range(len(inputs)) for d in DIRECTIONS]
    outs = run(build, *flat)
    return {(i, d): (inputs[i], outs[i * len(DIRECTIONS) + k])
            for i in range(len(inputs)) for k, d in enumerate(DIRECTIONS)}


@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("dtype", CMP_DTYPES, ids=ids(CMP_DTYPES))
def test_compare(dtype, direction):
    results = _cmp_run(dtype)
    for (i, d), ((x, y), out) in results.items():
        if d == direction:
            check(out, DIRECTIONS[direction](x, y))


def test_compare_rejects_mixed_dtypes():
    from runtime import PSCTypeError
    b = Builder("t")
    x, y = b.parameter(0, (3,), np.int32), b.parameter(1, (3,), np.uint32)
    with pytest.raises(PSCTypeError):
        b.lt(x, y)


# --- select -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL + (U32,), ids=ids(ALL + (U32,)))
def test_select(dtype, rng):
    pred = rng.integers(0, 2, (2, 3)).astype(bool)
    x = sample(rng, (2, 3), dtype, 0, 100)
    y = sample(rng, (2, 3), dtype, 0, 100)
    e = np.zeros((0,), dtype)
    outs = run(lambda b, p, x, y, s0, s1, pe, e: [b.select(p, x, y), b.select(s0, x, y),
                                                  b.select(s1, x, y), b.select(pe, e, e),
                                                  b.select(s1, x, x)],
               pred, x, y, np.bool_(True), np.bool_(False), np.zeros((0,), bool), e)
    check(outs[0], np.where(pred, x, y))
    check(outs[1], x)
    check(outs[2], y)
    check(outs[3], e)
    check(outs[4], x)


def test_select_scalar_operands():
    out = run(lambda b, p, x, y: b.select(p, x, y), np.bool_(False), np.float32(1.5),
              np.float32(-2.0))
    check(out, np.float32(-2.0))


# --- convert ------------------------------------------------------------------------------

CONVERT_DTYPES = (BOOL, I32, I64, U32, F32, F64)


def _convert_input(src, dst):
    """Values of ``src`` that ``dst`` can represent (so the conversion is well defined)."""
    signed_ok = dst.kind in "ifb"
    if src == BOOL:
        return np.array([True, False, True], bool)
    if src.kind in "iu":
        vals = [0, 1, 2, 7, 100, 65535, 2**31 - 1]
        if src == I64 and dst.kind in "fi" and dst != I32:
            vals += [2**40 + 1, 2**53]
        if src == U32 and dst.kind in "fu" or src == U32 and dst == I64:
            vals += [2**32 - 1, 2**31]
        if signed_ok and src.kind == "i":
            vals += [-1, -7, -100, -2**31]
        return np.array(vals, src)
    # floats
    vals = [0.0, 0.5, 1.0, 2.9, 100.25, 65535.75, 1e6 + 0.5]
    if signed_ok:
        vals += [-0.5, -1.0, -2.9, -100.75, -0.0]
    if dst == U32:
        vals += [4e9]
    if dst.kind in "fb":
        vals += [0.1, 1 / 3, 1e-30, 123456789.123, np.inf, -np.inf, np.nan]
        if src == F64:
            vals += [1e39, -1e39, 1e300, 3.4028235677973366e38]
    return np.array(vals, src)


@functools.lru_cache(maxsize=None)
def _convert_run(src):
    inputs = [_convert_input(src, dst) for dst in CONVERT_DTYPES]
    empties = [np.zeros((2, 0), src), np.zeros((), src)]

    def build(b, *ps):
        outs = [b.convert(p, dst) for p, dst in zip(ps, CONVERT_DTYPES)]
        outs += [b.convert(ps[-2], dst) for dst in CONVERT_DTYPES]
        outs += [b.convert(ps[-1], dst) for dst in CONVERT_DTYPES]
        return outs
    outs = run(build, *inputs, *empties)
    n = len(CONVERT_DTYPES)
    return inputs, empties, outs[:n], outs[n:2 * n], outs[2 * n:]


@pytest.mark.parametrize("dst", CONVERT_DTYPES, ids=ids(CONVERT_DTYPES))
@pytest.mark.parametrize("src", CONVERT_DTYPES, ids=ids(CONVERT_DTYPES))
def test_convert(src, dst):
    k = CONVERT_DTYPES.index(dst)
    inputs, empties, outs, empty_outs, scalar_outs = _convert_run(src)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = inputs[k].astype(dst)
    if expected.dtype.kind == "f":
        same_bits(outs[k], expected)
    else:
        check(outs[k], expected)
    check(empty_outs[k], empties[0].astype(dst))
    check(scalar_outs[k], empties[1].astype(dst))


# (source, destination): the same bits read as another dtype of the same width
BITCAST_PAIRS = [(U32, F32), (F32, U32), (F32, np.dtype(np.int32)), (np.dtype(np.uint64), F64),
                 (F64, I64), (np.dtype(np.uint16), np.dtype(np.float16))]


def test_bitcast_convert(rng):
    """``bitcast_convert`` is NumPy's ``view``: bits kept, NaN payloads and -0.0 included."""
    inputs = []
    for src, _ in BITCAST_PAIRS:
        if src.kind == "f":
            x = np.concatenate([rng.standard_normal(5), [0.0, -0.0, np.inf, np.nan]])
            inputs.append(x.astype(src))
        else:
            inputs.append(rng.integers(0, np.iinfo(src).max, 9, dtype=src))
    inputs.append(np.zeros((2, 0), np.uint32))
    outs = run(lambda b, *ps: [b.bitcast_convert(p, dst) for p, (_, dst) in
                               zip(ps, BITCAST_PAIRS + [(None, F32)])], *inputs)
    for x, out, (_, dst) in zip(inputs, outs, BITCAST_PAIRS + [(None, F32)]):
        same_bits(out, x.view(dst))


@pytest.mark.parametrize("src,dst", [(F32, F64), (BOOL, np.dtype(np.uint8)), (I64, F32)])
def test_bitcast_convert_keeps_the_width(src, dst):
    from runtime import PSCTypeError
    b = Builder("t")
    with pytest.raises(PSCTypeError, match="keeps the width"):
        b.bitcast_convert(b.parameter(0, (3,), src), dst)


# --- shapes -------------------------------------------------------------------------------

def test_broadcast_in_dim(rng):
    s = np.float32(2.5)
    v = rng.standard_normal(3).astype(np.float32)
    col = rng.integers(-9, 9, (2, 1)).astype(np.int32)
    m = rng.standard_normal((2, 3))
    e = np.zeros((0,), np.int64)
    outs = run(lambda b, s, v, col, m, e: [
        b.broadcast_in_dim(s, (2, 3), ()),
        b.broadcast_in_dim(v, (2, 3), (1,)),
        b.broadcast_in_dim(v, (3, 2), (0,)),
        b.broadcast_in_dim(col, (2, 4), (0, 1)),
        b.broadcast_in_dim(m, (3, 2), (1, 0)),      # a transposing broadcast
        b.broadcast_in_dim(m, (2, 4, 3), (0, 2)),
        b.broadcast_in_dim(e, (3, 0), (1,)),
        b.broadcast_in_dim(s, (), ()),
        b.broadcast_in_dim(s, (0, 2), ()),
    ], s, v, col, m, e)
    check(outs[0], np.full((2, 3), s))
    check(outs[1], np.broadcast_to(v, (2, 3)))
    check(outs[2], np.broadcast_to(v[:, None], (3, 2)))
    check(outs[3], np.broadcast_to(col, (2, 4)))
    check(outs[4], m.T)
    check(outs[5], np.broadcast_to(m[:, None, :], (2, 4, 3)))
    check(outs[6], np.zeros((3, 0), np.int64))
    check(outs[7], s)
    check(outs[8], np.zeros((0, 2), np.float32))


def test_reshape(rng):
    m = rng.standard_normal((2, 3))
    s = np.int32(7)
    e = np.zeros((0,), bool)
    outs = run(lambda b, m, s, e: [b.reshape(m, (3, 2)), b.reshape(m, (6,)),
                                   b.reshape(m, (1, 2, 3)), b.reshape(s, (1, 1)),
                                   b.reshape(e, (2, 0)), b.reshape(b.reshape(s, (1,)), ())],
               m, s, e)
    check(outs[0], m.reshape(3, 2))
    check(outs[1], m.reshape(6))
    check(outs[2], m.reshape(1, 2, 3))
    check(outs[3], s.reshape(1, 1))
    check(outs[4], e.reshape(2, 0))
    check(outs[5], s)


def test_transpose_and_reverse(rng):
    x = rng.integers(-100, 100, (2, 3, 4)).astype(np.int64)
    e = np.zeros((2, 0), np.float32)
    perms = [(1, 0, 2), (2, 0, 1), (2, 1, 0), (0, 2, 1)]
    revs = [(0,), (1,), (2,), (0, 2), (0, 1, 2)]
    outs = run(lambda b, x, e: [b.transpose(x, p) for p in perms]
               + [b.reverse(x, d) for d in revs] + [b.transpose(e, (1, 0)),
                                                    b.reverse(e, (0, 1))], x, e)
    for out, p in zip(outs, perms):
        check(out, np.transpose(x, p))
    for out, d in zip(outs[len(perms):], revs):
        check(out, np.flip(x, d))
    check(outs[-2], e.T)
    check(outs[-1], e)


def test_slice_with_strides(rng):
    x = rng.standard_normal((5, 6)).astype(np.float32)
    v = np.arange(10, dtype=np.int32)
    cases = [((0, 0), (5, 6), (1, 1)), ((1, 2), (4, 6), (1, 1)), ((0, 0), (5, 6), (2, 3)),
             ((1, 1), (5, 6), (3, 2)), ((2, 3), (2, 5), (1, 1)), ((4, 5), (5, 6), (7, 7))]
    outs = run(lambda b, x, v: [b.slice(x, s, l, st) for s, l, st in cases]
               + [b.slice(v, (1,), (10,), (4,)), b.slice(v, (3,), (7,))], x, v)
    for out, (s, l, st) in zip(outs, cases):
        check(out, x[s[0]:l[0]:st[0], s[1]:l[1]:st[1]])
    check(outs[-2], v[1:10:4])
    check(outs[-1], v[3:7])


def _clamp_start(start, size, dim):
    return min(max(start, 0), dim - size)


def test_dynamic_slice_clamps(rng):
    x = rng.integers(0, 1000, (7, 5)).astype(np.int32)
    starts = [(0, 0), (2, 1), (5, 0), (6, 4), (-3, 2), (100, -100), (4, 2)]
    sizes = (3, 3)
    b = Builder("ds")
    xp = b.parameter(0, x.shape, x.dtype)
    i = b.parameter(1, (), np.int32)
    j = b.parameter(2, (), np.int64)
    j32 = b.convert(j, np.int32)
    outs = [b.dynamic_slice(xp, [i, j32], sizes),
            b.dynamic_slice(b.convert(xp, np.float64), [b.convert(i, np.int64), j], (7, 0)),
            b.dynamic_slice(xp, [i, j32], (7, 5))]
    ex = compile(b.build(*outs))
    for s0, s1 in starts:
        got, empty, full = [np.asarray(r) for r in ex(x, np.int32(s0), np.int64(s1))]
        c0, c1 = _clamp_start(s0, 3, 7), _clamp_start(s1, 3, 5)
        check(got, x[c0:c0 + 3, c1:c1 + 3])
        check(empty, np.zeros((7, 0), np.float64))
        check(full, x)


def test_dynamic_update_slice_clamps(rng):
    x = rng.standard_normal((6, 4))
    u = rng.standard_normal((2, 3))
    b = Builder("dus")
    xp, up = b.parameter(0, x.shape, x.dtype), b.parameter(1, u.shape, u.dtype)
    i, j = b.parameter(2, (), np.int32), b.parameter(3, (), np.int32)
    e = b.constant(np.zeros((0, 3)))
    ex = compile(b.build(b.dynamic_update_slice(xp, up, [i, j]),
                         b.dynamic_update_slice(xp, e, [i, j])))
    for s0, s1 in [(0, 0), (4, 1), (5, 2), (-2, 9), (3, -1), (100, 100)]:
        got, same = [np.asarray(r) for r in ex(x, u, np.int32(s0), np.int32(s1))]
        c0, c1 = _clamp_start(s0, 2, 6), _clamp_start(s1, 3, 4)
        expected = x.copy()
        expected[c0:c0 + 2, c1:c1 + 3] = u
        check(got, expected)
        check(same, x)


def test_concatenate(rng):
    a = rng.integers(0, 9, (2, 3)).astype(np.int64)
    c = rng.integers(0, 9, (4, 3)).astype(np.int64)
    e = np.zeros((0, 3), np.int64)
    v = np.array([True, False])
    w = np.array([False])
    outs = run(lambda b, a, c, e, v, w: [b.concatenate([a, c], 0),
                                         b.concatenate([a, e, c, a], 0),
                                         b.concatenate([a, a], 1),
                                         b.concatenate([v, w, v], 0),
                                         b.concatenate([e], 0)], a, c, e, v, w)
    check(outs[0], np.concatenate([a, c], 0))
    check(outs[1], np.concatenate([a, e, c, a], 0))
    check(outs[2], np.concatenate([a, a], 1))
    check(outs[3], np.concatenate([v, w, v]))
    check(outs[4], e)


def _np_pad(x, value, low, high, interior):
    """Reference of XLA pad: interior padding, then edge padding (negative crops)."""
    for d in range(x.ndim):
        n = x.shape[d]
        if interior[d] and n > 1:
            shape = list(x.shape)
            shape[d] = n + (n - 1) * interior[d]
            out = np.full(shape, value, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(None, None, interior[d] + 1)
            out[tuple(idx)] = x
            x = out
        lo, hi = low[d], high[d]
        widths = [(0, 0)] * x.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=value)
        idx = [slice(None)] * x.ndim
        idx[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def test_pad(rng):
    x = rng.integers(1, 9, (3, 4)).astype(np.int32)
    v = rng.standard_normal(4)
    cases = [((1, 2), (0, 1), (0, 0)), ((0, 0), (0, 0), (1, 2)), ((2, -1), (-1, 3), (1, 0)),
             ((-1, -1), (-1, -1), (0, 0)), ((0, 1), (1, 0), (2, 1)), ((-2, 0), (0, -4), (0, 0))]
    vcases = [((2,), (3,), (0,)), ((-1,), (0,), (3,)), ((0,), (-5,), (1,))]

    def build(b, x, v):
        pad_i = b.constant(np.int32(-7))
        pad_f = b.constant(np.float64(0.5))
        return ([b.pad(x, pad_i, lo, hi, it) for lo, hi, it in cases]
                + [b.pad(v, pad_f, lo, hi, it) for lo, hi, it in vcases])
    outs = run(build, x, v)
    for out, (lo, hi, it) in zip(outs, cases):
        check(out, _np_pad(x, np.int32(-7), lo, hi, it))
    for out, (lo, hi, it) in zip(outs[len(cases):], vcases):
        check(out, _np_pad(v, 0.5, lo, hi, it))


def test_iota():
    outs = run(lambda b: [b.iota((5,), np.int32), b.iota((2, 3), np.int64, 0),
                          b.iota((2, 3), np.int64, 1), b.iota((4,), np.float32),
                          b.iota((0, 3), np.int32, 1), b.iota((3, 2), np.uint32, 0)])
    check(outs[0], np.arange(5, dtype=np.int32))
    check(outs[1], np.broadcast_to(np.arange(2)[:, None], (2, 3)).astype(np.int64))
    check(outs[2], np.broadcast_to(np.arange(3), (2, 3)).astype(np.int64))
    check(outs[3], np.arange(4, dtype=np.float32))
    check(outs[4], np.zeros((0, 3), np.int32))
    check(outs[5], np.broadcast_to(np.arange(3)[:, None], (3, 2)).astype(np.uint32))


# --- dot_general --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", (F32, F64, I32, I64), ids=ids((F32, F64, I32, I64)))
def test_dot_general(dtype, rng):
    def arr(*shape):
        return sample(rng, shape, dtype, -5, 5)
    a, c = arr(2, 3), arr(3, 4)
    ba, bc = arr(5, 2, 3), arr(5, 3, 4)
    v, w = arr(6), arr(6)
    p, q = arr(3), arr(4)
    at = arr(3, 2)                  # contracted on its first dimension
    e1, e2 = arr(2, 0), arr(0, 4)   # empty contraction: zeros
    outs = run(lambda b, a, c, ba, bc, v, w, p, q, at, e1, e2: [
        b.dot_general(a, c, ((1,), (0,))),
        b.dot_general(ba, bc, ((2,), (1,)), ((0,), (0,))),
        b.dot_general(v, w, ((0,), (0,))),
        b.dot_general(p, q, ((), ())),
        b.dot_general(at, c, ((0,), (0,))),
        b.dot_general(c, a, ((0,), (1,))),
        b.dot_general(e1, e2, ((1,), (0,))),
        b.dot_general(ba, bc, ((0, 2), (0, 1))),
    ], a, c, ba, bc, v, w, p, q, at, e1, e2)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == F32 else dict(rtol=1e-12, atol=1e-12)
    check(outs[0], (a @ c).astype(dtype), **tol)
    check(outs[1], np.matmul(ba, bc).astype(dtype), **tol)
    check(outs[2], np.asarray(np.dot(v, w), dtype), **tol)
    check(outs[3], np.outer(p, q).astype(dtype), **tol)
    check(outs[4], (at.T @ c).astype(dtype), **tol)
    check(outs[5], (c.T @ a.T).astype(dtype), **tol)
    check(outs[6], np.zeros((2, 4), dtype))
    check(outs[7], np.einsum("bij,bjk->ik", ba, bc).astype(dtype), **tol)


# --- reductions ---------------------------------------------------------------------------

REDUCE_DTYPES = {"sum": (F32, F64, I32, I64, U32), "prod": (F32, F64, I32, I64, U32),
                 "max": (F32, F64, I32, I64, U32, BOOL), "min": (F32, F64, I32, I64, U32, BOOL),
                 "and": (BOOL, I32, I64, U32), "or": (BOOL, I32, I64, U32)}
REDUCE_CASES = [(k, d) for k, dts in REDUCE_DTYPES.items() for d in dts]
REDUCE_DIMS = [((2, 3, 4), (1,)), ((2, 3, 4), (0, 2)), ((2, 3, 4), (0, 1, 2)), ((0, 3), (0,)),
               ((2, 0), (1,)), ((0,), (0,)), ((5,), (0,))]


def _identity(kind, dtype):
    if kind in ("sum", "or"):
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if kind == "and":
        return np.array(True) if dtype == BOOL else np.array(~dtype.type(0), dtype)
    if dtype == BOOL:
        return np.array(kind == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array(info.min if kind == "max" else info.max, dtype)
    return np.array(-np.inf if kind == "max" else np.inf, dtype)


def np_reduce(x, kind, dims):
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
             "and": np.bitwise_and, "or": np.bitwise_or}[kind]
    if x.dtype == BOOL and kind in ("max", "min"):
        ufunc = np.logical_or if kind == "max" else np.logical_and
    return ufunc.reduce(x, axis=dims, dtype=x.dtype, initial=_identity(kind, x.dtype)[()])


def _reduce_input(kind, dtype, shape, rng):
    if kind == "prod":
        if dtype.kind == "f":
            return sample(rng, shape, dtype, 0.5, 1.5)
        return sample(rng, shape, dtype, 0 if dtype == U32 else -2, 2)
    if kind in ("and", "or") and dtype != BOOL:
        lo = 0 if dtype == U32 else -2**20
        return sample(rng, shape, dtype, lo, 2**20)
    lo = 0 if dtype == U32 else -100
    return sample(rng, shape, dtype, lo, 100)


def _reduce_inputs(kind, dtype):
    rng = np.random.default_rng(7)
    inputs = [_reduce_input(kind, dtype, shape, rng) for shape, _ in REDUCE_DIMS]
    if kind in ("max", "min") and dtype.kind == "f":
        inputs.append(np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, 0.0]], dtype))
    if kind == "and" and dtype != BOOL:
        inputs.append(np.full((3, 2), ~dtype.type(0), dtype))   # all bits set
    return inputs


def _reduce_build(kind):
    def build_one(b, dtype, ps):
        outs = [b.reduce(p, kind, dims) for p, (_, dims) in zip(ps, REDUCE_DIMS)]
        outs += [b.reduce(p, kind, (1,)) for p in ps[len(REDUCE_DIMS):]]
        return outs
    return build_one


# Each dtype gets its own computation for "and"/"or" so that one dtype's failure does not
# hide the others'; the other kinds share one computation per kind.
@functools.lru_cache(maxsize=None)
def _reduce_group(kind, dtypes_):
    return run_split({d: _reduce_inputs(kind, d) for d in dtypes_}, _reduce_build(kind))


def _reduce_run(kind, dtype):
    if kind in ("and", "or"):
        return _reduce_group(kind, (dtype,))[dtype]
    return _reduce_group(kind, REDUCE_DTYPES[kind])[dtype]


@pytest.mark.parametrize("kind,dtype", REDUCE_CASES, ids=[f"{k}-{d}" for k, d in REDUCE_CASES])
def test_reduce(kind, dtype):
    inputs, outs = _reduce_run(kind, dtype)
    dims = [d for _, d in REDUCE_DIMS] + [(1,)] * (len(inputs) - len(REDUCE_DIMS))
    tol = dict(rtol=1e-5) if dtype == F32 else dict(rtol=1e-12)
    for x, d, out in zip(inputs, dims, outs):
        check(out, np_reduce(x, kind, d), **tol)


def test_reduce_empty_identities():
    """Reducing nothing gives the identity: 0, 1, -inf/iinfo.min, +inf/iinfo.max."""
    e = np.zeros((0, 2), np.float32)
    ei = np.zeros((0, 2), np.int32)
    outs = run(lambda b, e, ei: [b.reduce(e, "sum", (0,)), b.reduce(e, "prod", (0,)),
                                 b.reduce(e, "max", (0,)), b.reduce(e, "min", (0,)),
                                 b.reduce(ei, "max", (0,)), b.reduce(ei, "min", (0,))], e, ei)
    check(outs[0], np.zeros(2, np.float32))
    check(outs[1], np.ones(2, np.float32))
    check(outs[2], np.full(2, -np.inf, np.float32))
    check(outs[3], np.full(2, np.inf, np.float32))
    check(outs[4], np.full(2, np.iinfo(np.int32).min, np.int32))
    check(outs[5], np.full(2, np.iinfo(np.int32).max, np.int32))


# --- argmax / argmin ----------------------------------------------------------------------

ARG_DTYPES = (F32, F64, I32, I64, U32, BOOL)


def _arg_inputs(dtype):
    if dtype == BOOL:
        return [np.array([[False, True, True], [False, False, False], [True, True, False]]),
                np.array([False, False, True, False, True])]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [np.array([[3, 7, 7, 1], [5, 5, 5, 5], [info.max, 0, info.max, info.min],
                          [2, 1, 1, 9]], dtype),
                np.array([4, 2, 9, 9, 2, 0, 0], dtype), np.array([info.min], dtype)]
    nan, inf = np.nan, np.inf
    return [np.array([[3, 7, 7, 1], [5, 5, 5, 5], [-inf, -inf, -inf, -inf],
                      [inf, 1, inf, -inf], [1, nan, 2, nan], [nan, 0, -inf, 9],
                      [-inf, -inf, nan, -inf]], dtype),
            np.array([0.5, -2.0, 9.0, 9.0, -2.0, 0.0], dtype),
            np.array([-inf, -inf], dtype)]


@functools.lru_cache(maxsize=None)
def _arg_run(dtype):
    inputs = _arg_inputs(dtype)

    def build(b, *ps):
        outs = []
        for p in ps:
            for axis in range(p.ndim):
                outs += [b.argmax(p, axis), b.argmin(p, axis, np.int32)]
        return outs
    return inputs, run(build, *inputs)


@pytest.mark.parametrize("dtype", ARG_DTYPES, ids=ids(ARG_DTYPES))
def test_argmax_argmin(dtype):
    inputs, outs = _arg_run(dtype)
    it = iter(outs)
    for x in inputs:
        for axis in range(x.ndim):
            check(next(it), np.argmax(x, axis=axis).astype(np.int64))
            check(next(it), np.argmin(x, axis=axis).astype(np.int32))


# --- cumulative ---------------------------------------------------------------------------

CUM_KINDS = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
             "min": np.minimum.accumulate}
CUM_CASES = [(k, d) for k in CUM_KINDS for d in (F32, F64, I32, I64)]


def _cum_axes(inputs):
    """Every axis of the 2-d and 1-d inputs; the middle axis of the 3-d one."""
    return [(i, a) for i, x in enumerate(inputs) for a in range(x.ndim)
            if x.ndim < 3 or a == 1]


@functools.lru_cache(maxsize=None)
def _cum_for_kind(kind):
    groups = {}
    for dtype in (F32, F64, I32, I64):
        rng = np.random.default_rng(3)
        lo, hi = (0.5, 1.5) if kind == "prod" and dtype.kind == "f" else (-3, 3)
        groups[dtype] = [sample(rng, (3, 4), dtype, lo, hi), sample(rng, (9,), dtype, lo, hi),
                         np.zeros((0,), dtype), np.zeros((2, 0), dtype),
                         sample(rng, (2, 3, 2), dtype, lo, hi)]

    def build_one(b, dtype, ps):
        return [b.cumulative(ps[i], kind, a, rev) for i, a in _cum_axes(ps)
                for rev in (False, True)]
    return run_split(groups, build_one)


def _cum_run(kind, dtype):
    return _cum_for_kind(kind)[dtype]


@pytest.mark.parametrize("kind,dtype", CUM_CASES, ids=[f"{k}-{d}" for k, d in CUM_CASES])
def test_cumulative(kind, dtype):
    inputs, outs = _cum_run(kind, dtype)
    axes = _cum_axes(inputs)
    ref = CUM_KINDS[kind]
    it = iter(outs)
    tol = dict(rtol=1e-5) if dtype == F32 else dict(rtol=1e-12)
    for i, a in axes:
        x = inputs[i]
        forward = ref(x, axis=a, dtype=dtype) if kind in ("sum", "prod") else ref(x, axis=a)
        backward = np.flip(ref(np.flip(x, a), axis=a), a).astype(dtype)
        check(next(it), forward, **tol)
        check(next(it), backward, **tol)


def test_cumsum_shortcut():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    outs = run(lambda b, x: [b.cumsum(x, 1), b.cumsum(x, 0, reverse=True)], x)
    check(outs[0], np.cumsum(x, 1))
    check(outs[1], np.flip(np.cumsum(np.flip(x, 0), 0), 0))


# --- sort ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", (F32, F64, I32, I64, U32, BOOL),
                         ids=ids((F32, F64, I32, I64, U32, BOOL)))
def test_sort_one_operand(dtype, rng):
    if dtype.kind == "f":
        m = rng.standard_normal((4, 6)).astype(dtype)
        m[0, 1] = m[2, 3] = m[3, 0] = np.nan
        m[1, 2], m[1, 4] = np.inf, -np.inf
        m[2, 0] = m[2, 5]
    elif dtype == U32:
        m = rng.integers(0, 2**32 - 1, (4, 6), endpoint=True).astype(dtype)
        m[0, :2] = [2**31, 2**31 - 1]
    else:
        m = sample(rng, (4, 6), dtype, -5, 5)
    v = m[1].copy()
    e = np.zeros((2, 0), dtype)
    outs = run(lambda b, m, v, e: [b.sort([m])[0], b.sort([m], 0)[0], b.sort([v])[0],
                                   b.sort([e], 1)[0], b.sort([e], 0)[0]], m, v, e)
    check(outs[0], np.sort(m, axis=-1))
    check(outs[1], np.sort(m, axis=0))
    check(outs[2], np.sort(v))
    check(outs[3], e)
    check(outs[4], e)


@pytest.mark.parametrize("dtype", (F32, F64, I32, U32), ids=ids((F32, F64, I32, U32)))
def test_sort_argsort_payload_is_stable(dtype, rng):
    """Sorting keys with an iota payload is a stable argsort, duplicates in input order."""
    keys = rng.integers(0, 4, (3, 300)).astype(dtype)   # long rows: unstable sorts show
    if dtype.kind == "f":
        keys[0, 3] = keys[0, 7] = np.nan
        keys[1, 0] = np.inf
    payload = np.broadcast_to(np.arange(300, dtype=np.int32), keys.shape).copy()
    values = rng.standard_normal(keys.shape)
    sk, sp, sv = run(lambda b, k, p, v: b.sort([k, p, v], dimension=1, num_keys=1),
                     keys, payload, values)
    order = np.argsort(keys, axis=1, kind="stable")
    check(sk, np.take_along_axis(keys, order, 1))
    check(sp, order.astype(np.int32))
    check(sv, np.take_along_axis(values, order, 1))


def test_sort_two_keys_is_lexicographic(rng):
    k1 = rng.integers(0, 3, 12).astype(np.int64)
    k2 = rng.integers(-2, 3, 12).astype(np.float32)   # (signed zeros have their own test)
    payload = np.arange(12, dtype=np.int32)
    s1, s2, sp = run(lambda b, a, c, p: b.sort([a, c, p], num_keys=2), k1, k2, payload)
    order = np.lexsort((payload, k2, k1))
    check(s1, k1[order])
    check(s2, k2[order])
    check(sp, order.astype(np.int32))


def test_sort_negative_nan_last():
    """np.sort puts every NaN last, whatever its sign bit (x86 produces -NaN for inf-inf)."""
    x = np.array([1.0, -np.nan, 0.0, np.nan, -3.0], np.float64)
    assert np.signbit(x[1])
    out = run(lambda b, x: b.sort([x])[0], x)
    check(out, np.sort(x))


def test_sort_signed_zeros_are_equal_keys():
    """-0.0 == 0.0 in NumPy, so a stable argsort keeps them in input order."""
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0], np.float32)
    idx = np.arange(5, dtype=np.int32)
    _, order = run(lambda b, x, i: b.sort([x, i], num_keys=1), x, idx)
    check(order, np.argsort(x, kind="stable").astype(np.int32))


# --- gather and scatter -------------------------------------------------------------------

def test_gather_configurations(rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    rows = np.array([4, 0, 2, 2], np.int32)
    cols = np.array([2, 0], np.int64)
    points = np.array([[0, 1], [4, 2], [3, 0]], np.int32)
    starts = np.array([[0], [3], [1]], np.int32)
    clamped = np.array([7, -2, 4], np.int32)

    def build(b, x, rows, cols, points, starts, clamped):
        return [
            b.gather(x, rows, offset_dims=(1,), collapsed_slice_dims=(0,),
                     start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 3)),
            b.gather(x, cols, offset_dims=(0,), collapsed_slice_dims=(1,),
                     start_index_map=(1,), index_vector_dim=1, slice_sizes=(5, 1)),
            b.gather(x, points, offset_dims=(), collapsed_slice_dims=(0, 1),
                     start_index_map=(0, 1), index_vector_dim=1, slice_sizes=(1, 1)),
            b.gather(x, starts, offset_dims=(1, 2), collapsed_slice_dims=(),
                     start_index_map=(0,), index_vector_dim=1, slice_sizes=(2, 3)),
            b.gather(x, clamped, offset_dims=(1,), collapsed_slice_dims=(0,),
                     start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 3)),
        ]
    outs = run(build, x, rows, cols, points, starts, clamped)
    check(outs[0], x[rows])
    check(outs[1], x[:, cols])
    check(outs[2], x[points[:, 0], points[:, 1]])
    check(outs[3], np.stack([x[s:s + 2] for s in starts[:, 0]]))
    check(outs[4], x[np.clip(clamped, 0, 4)])


SCATTER_MODES = {"set": None, "add": np.add, "mul": np.multiply, "min": np.minimum,
                 "max": np.maximum}


@pytest.mark.parametrize("dtype", (F32, F64, I32, I64), ids=ids((F32, F64, I32, I64)))
def test_scatter_modes(dtype, rng):
    x = sample(rng, (5, 3), dtype, -9, 9)
    idx = np.array([[3], [0], [4]], np.int32)
    upd = sample(rng, (3, 3), dtype, -9, 9)
    vec = sample(rng, (6,), dtype, -9, 9)
    vidx = np.array([5, 1, 2], np.int64)
    vupd = sample(rng, (3,), dtype, -9, 9)

    def build(b, x, idx, upd, vec, vidx, vupd):
        outs = [b.scatter(x, idx, upd, update_window_dims=(1,), inserted_window_dims=(0,),
                          scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode=mode,
                          unique_indices=True) for mode in SCATTER_MODES]
        outs += [b.scatter(vec, vidx, vupd, update_window_dims=(), inserted_window_dims=(0,),
                           scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode=mode)
                 for mode in SCATTER_MODES]
        return outs
    outs = run(build, x, idx, upd, vec, vidx, vupd)
    for k, (mode, ufunc) in enumerate(SCATTER_MODES.items()):
        for base, where, updates, out in ((x, idx[:, 0], upd, outs[k]),
                                          (vec, vidx, vupd, outs[len(SCATTER_MODES) + k])):
            expected = base.copy()
            if ufunc is None:
                expected[where] = updates
            else:
                ufunc.at(expected, where, updates)
            check(out, expected)


def test_scatter_add_duplicates_accumulate(rng):
    x = np.zeros((4, 2), np.float64)
    idx = np.array([1, 3, 1, 1, 0], np.int32)
    upd = rng.standard_normal((5, 2))
    v = np.zeros(5, np.int32)
    vidx = np.array([[2], [2], [4], [2]], np.int32)
    vupd = np.array([1, 10, 100, 1000], np.int32)

    def build(b, x, idx, upd, v, vidx, vupd):
        return [b.scatter(x, idx, upd, update_window_dims=(1,), inserted_window_dims=(0,),
                          scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode="add"),
                b.scatter(v, vidx, vupd, update_window_dims=(), inserted_window_dims=(0,),
                          scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode="add")]
    out, vout = run(build, x, idx, upd, v, vidx, vupd)
    expected = x.copy()
    np.add.at(expected, idx, upd)
    check(out, expected, rtol=1e-14)
    vexp = v.copy()
    np.add.at(vexp, vidx[:, 0], vupd)
    check(vout, vexp)


def test_scatter_out_of_bounds_updates_are_skipped():
    x = np.zeros(4, np.int32)
    idx = np.array([1, 9, -1, 3], np.int32)
    upd = np.array([5, 6, 7, 8], np.int32)
    out = run(lambda b, x, i, u: b.scatter(x, i, u, update_window_dims=(),
                                           inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,),
                                           index_vector_dim=1, mode="set"), x, idx, upd)
    check(out, np.array([0, 5, 0, 8], np.int32))


# --- constants ----------------------------------------------------------------------------

def _bf16():
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


CONSTANTS = {
    "bool": np.array([True, False, True]),
    "bool_splat": np.ones((2, 2), bool),
    "bool_0d": np.array(False),
    "bool_empty": np.zeros((0,), bool),
    "int8": np.array([-128, 0, 127], np.int8),
    "int16": np.array([-32768, 5, 32767], np.int16),
    "int32": np.array([[-2**31, 0], [2**31 - 1, 17]], np.int32),
    "int64": np.array([-2**63, 2**62 + 1, 2**63 - 1, -12345678901234], np.int64),
    "uint8": np.array([0, 255, 7], np.uint8),
    "uint16": np.array([0, 65535], np.uint16),
    "uint32": np.array([0, 2**32 - 1, 2**31], np.uint32),
    "uint64": np.array([0, 2**64 - 1, 2**63 + 5], np.uint64),
    "float16": np.array([0.1, -65504.0, np.inf, np.nan], np.float16),
    "float32": np.array([0.1, -1 / 3, np.nan, np.inf, -np.inf, 3.4028235e38], np.float32),
    "float64": np.array([0.1, 1 / 3, 2 ** 0.5, np.pi, 1e-300, 1e300, -np.inf, np.nan,
                         np.finfo(np.float64).max, 1 + 2.0 ** -52], np.float64),
    "float64_0d": np.array(0.1),
    "float64_splat": np.full((3, 2), 1 / 3),
    "float64_nan_splat": np.full(4, np.nan),
    "float64_empty": np.zeros((2, 0)),
    "float32_0d": np.float32(np.e),
    "complex64": np.array([1 + 2j, np.nan - 0.5j], np.complex64),
    "complex128": np.array([0.1 + 1 / 3 * 1j, -np.inf + 0j], np.complex128),
    "int32_empty": np.zeros((0, 3), np.int32),
    "int64_0d": np.array(2**53 + 1, np.int64),
    "bfloat16": np.array([1.5, -2.0, 0.1], np.float32),   # converted in the test
}


@functools.lru_cache(maxsize=None)
def _constants_run():
    values = dict(CONSTANTS)
    values["bfloat16"] = values["bfloat16"].astype(_bf16())
    names = list(values)
    outs = run(lambda b: [b.constant(values[n]) for n in names])
    return values, dict(zip(names, outs))


@pytest.mark.parametrize("name", list(CONSTANTS))
def test_constant_roundtrip(name):
    values, outs = _constants_run()
    same_bits(outs[name], values[name])


def test_constant_float64_not_representable_in_float32():
    """Values a float32 literal would change come back bit-exact (hex-encoded literals)."""
    x = np.array([0.1, 0.2, 1 / 3, 1 + 2.0 ** -40, 123456789.123456789, 2.0 ** 0.5])
    assert (x.astype(np.float32).astype(np.float64) != x).all()
    p = np.float64(1e-17)
    got, summed = run(lambda b, p: [b.constant(x), b.add(b.constant(np.float64(1.0)), p)], p)
    same_bits(got, x)
    same_bits(summed, np.float64(1.0) + p)   # 1 + 1e-17 rounds to 1 in float64 as well
    same_bits(run(lambda b: b.constant(np.float64(0.1))), np.float64(0.1))


def test_constant_signed_zeros():
    """-0.0 and 0.0 compare equal but are different constants."""
    cases = [np.array([0.0, -0.0]), np.array([-0.0, 0.0, 0.0], np.float32),
             np.array([-0.0, -0.0]), np.array(-0.0)]
    outs = run(lambda b: [b.constant(c) for c in cases])
    for out, c in zip(outs, cases):
        same_bits(out, c)


def test_constant_python_scalars_are_weak():
    b = Builder("t")
    f, i, t = b.constant(2.5), b.constant(3), b.constant(True)
    s = b.constant(np.float32(2.5))
    assert (f.weak, i.weak, t.weak, s.weak) == (True, True, True, False)
    assert (f.dtype, i.dtype, t.dtype, s.dtype) == (F64, I64, BOOL, F32)
    outs = [np.asarray(r) for r in compile(b.build(f, i, t, s))()]
    check(outs[0], np.float64(2.5))
    check(outs[1], np.int64(3))
    check(outs[2], np.bool_(True))
    check(outs[3], np.float32(2.5))


def test_parameters_pass_through():
    x = np.array([[1.5, np.nan]], np.float64)
    y = np.array([-0.0], np.float32)
    ox, oy, ox2 = run(lambda b, x, y: [x, y, x], x, y)
    same_bits(ox, x)
    same_bits(oy, y)
    same_bits(ox2, x)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 1, 2)])
def test_non_splat_bool_constants_of_any_rank(shape):
    mask = (np.arange(int(np.prod(shape))) % 3 == 0).reshape(shape)
    f = StagedFunction(lambda b, x: b.and_(b.constant(mask), x))
    out = np.asarray(f(np.ones(shape, bool)))
    assert out.dtype == np.bool_ and (out == mask).all()
