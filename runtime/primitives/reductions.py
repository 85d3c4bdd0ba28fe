"""Reductions and their relatives: ``reduce``, ``argmax``/``argmin``, ``cumulative``, ``sort``.

The derivative of a ``max``/``min`` reduction is split evenly between tied elements
(JAX's convention); a ``prod``'s is the product of the other elements, computed without
division so that zeros are exact.  Under `vmap` each moves the batch dimension to the front
and shifts its axis attributes by one.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.tangents import is_float
from ..autodiff.trace import replay
from ..errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import check_extent
from ..lowering import (binary_body, compare_attrs, constant_line, i64_array, location,
                        tensor_type, value_type)
from ..primitive import batching_rule, checks, jvp_rule, lowers, nondifferentiable, vjp_rule
from .support import INTEGRAL, check_kind, fmt, require, same_shapes, to_front

# --- reduce ---------------------------------------------------------------------------

REDUCTIONS = ("sum", "prod", "max", "min", "and", "or")


def reduced_shape(name, x, dims):
    require(len(set(dims)) == len(dims) and all(0 <= d < x.ndim for d in dims),
            PSCValueError, f"{name}: dimensions {list(dims)} do not fit {fmt(x)}")
    return tuple(s for d, s in enumerate(x.shape) if d not in dims)


@checks("reduce")
def _check_reduce(operands, attrs):
    (x,) = operands
    kind = attrs["kind"]
    require(kind in REDUCTIONS, PSCValueError, f"unknown reduction {kind!r}")
    if kind in ("and", "or"):
        check_kind(f"reduce_{kind}", x, INTEGRAL)
    return [(reduced_shape("reduce", x, attrs["dimensions"]), x.dtype)]


REDUCERS = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
             "and": "and", "or": "or"}



def reduction_identity(kind: str, dtype) -> np.ndarray:
    """The identity element of a reduction, as a 0-d array of ``dtype``."""
    dtype = np.dtype(dtype)
    if kind in ("sum", "or"):
        return np.zeros((), dtype)
    if kind in ("prod", "and"):
        return np.ones((), dtype) if kind == "prod" or dtype == np.bool_ else \
            np.asarray(np.invert(np.zeros((), dtype)))
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if kind == "max" else info.max, dtype)
    return np.array(-np.inf if kind == "max" else np.inf, dtype)


@lowers("reduce")
def _lower_reduce(p, op):
    (x,), kind = op.operands, op.attrs["kind"]
    init = constant_line(p, reduction_identity(kind, x.dtype), op)
    body = p.scalar_body(x.dtype, binary_body(REDUCERS[kind]), op)
    lhs = p.bind_results(op)
    t_init = tensor_type((), x.dtype)
    p.emit(f'{lhs} = "stablehlo.reduce"({p.name(x)}, {init}) ({body}) '
           f"{{dimensions = {i64_array(op.attrs['dimensions'])}}} : "
           f"({value_type(x)}, {t_init}) -> {value_type(op.results[0])} {location(op)}")


def _reduce_jvp(b, op, primals, tangents):
    (x,), (tx,) = primals, tangents
    (result,) = replay(b, op, primals)
    kind, dims = op.attrs["kind"], op.attrs["dimensions"]
    if tx is None or not is_float(result):
        return [result], [None]
    if kind == "sum":
        return [result], [replay(b, op, [tx])[0]]
    if kind in ("max", "min"):
        weights = chooser_weights(b, x, result, dims)
        return [result], [b.reduce(b.mul(weights, tx), "sum", dims)]
    if kind == "prod":
        return [result], [b.reduce(b.mul(product_of_others(b, x, dims), tx), "sum", dims)]
    return [result], [None]


def _reduce_vjp(b, op, primals, results, cts):
    (x,), (ct,), dims = primals, cts, op.attrs["dimensions"]
    kind = op.attrs["kind"]
    spread = keep_dims(b, ct, dims, x.shape)
    if kind == "sum":
        return [spread]
    if kind in ("max", "min"):
        return [b.mul(spread, chooser_weights(b, x, results[0], dims))]
    if kind == "prod":
        return [b.mul(spread, product_of_others(b, x, dims))]
    return [None]


jvp_rule("reduce")(_reduce_jvp)
vjp_rule("reduce")(_reduce_vjp)


@batching_rule("reduce")
def _batch_reduce(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    return [b.reduce(x, op.attrs["kind"], [d + 1 for d in op.attrs["dimensions"]])], [0]


def keep_dims(b, value, dims, shape):
    """``value`` (reduced over ``dims``) broadcast back to ``shape``."""
    kept = [d for d in range(len(shape)) if d not in dims]
    return b.broadcast_in_dim(value, shape, kept)


def chooser_weights(b, x, result, dims):
    """Where x attains the max/min, split evenly among ties (JAX's convention)."""
    hit = b.convert(b.eq(x, keep_dims(b, result, dims, x.shape)), x.dtype)
    count = b.reduce(hit, "sum", dims)
    return b.div(hit, keep_dims(b, count, dims, x.shape))


def product_of_others(b, x, dims):
    """For each element, the product of the other elements reduced with it: exclusive
    prefix times exclusive suffix products, without division (exact with zeros).  The
    scans are built from slices, pads and multiplies (log-depth doubling), so this can be
    differentiated again (second derivatives of ``prod``)."""
    others = [d for d in range(x.ndim) if d not in dims]
    moved = b.transpose(x, others + list(dims))
    lead = [x.shape[d] for d in others]
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    flat = b.reshape(moved, lead + [n])
    axis = len(lead)
    before = _exclusive_products(b, flat, axis)
    after = b.reverse(_exclusive_products(b, b.reverse(flat, [axis]), axis), [axis])
    others_product = b.reshape(b.mul(before, after), [*lead, *[x.shape[d] for d in dims]])
    return b.transpose(others_product, np.argsort(others + list(dims)))


def _shifted(b, x, axis, shift):
    """``x`` moved ``shift`` places along ``axis``, filled with ones."""
    n = x.shape[axis]
    limit = list(x.shape)
    limit[axis] = max(n - shift, 0)
    kept = b.slice(x, [0] * x.ndim, limit)
    low, high = [0] * x.ndim, [0] * x.ndim
    low[axis] = min(shift, n)
    return b.pad(kept, b.constant(np.ones((), x.dtype)), low, high)


def _exclusive_products(b, x, axis):
    """``out[i] = prod(x[:i])`` along ``axis`` (Hillis-Steele doubling)."""
    products = _shifted(b, x, axis, 1)
    shift = 1
    while shift < x.shape[axis]:
        products = b.mul(products, _shifted(b, products, axis, shift))
        shift *= 2
    return products


# --- argmax and argmin -----------------------------------------------------------------

@checks("argmax", "argmin")
def _check_argreduce(operands, attrs):
    (x,) = operands
    axis = attrs["axis"]
    require(0 <= axis < x.ndim, PSCValueError,
            f"argmax/argmin axis {axis} is out of range for {fmt(x)}")
    require(x.shape[axis] > 0, PSCValueError,
            f"attempt to get argmax/argmin of an empty sequence ({fmt(x)}, axis {axis})")
    require(dtypes.is_integer(attrs["index_dtype"]), PSCTypeError,
            "argmax/argmin index dtype must be an integer")
    # the lowering reduces over an iota of indices of the operand's shape: it too must
    # be an array XLA can address
    check_extent(x.shape, np.dtype(attrs["index_dtype"]))
    return [(reduced_shape("argmax", x, (axis,)), attrs["index_dtype"])]


@lowers("argmax", "argmin")
def _lower_argreduce(p, op):
    """A variadic reduce over (value, index) pairs: keep the better value, the lower index
    on ties, and NaN over anything (NumPy returns the first NaN)."""
    (x,) = op.operands
    axis, index_dtype = op.attrs["axis"], op.attrs["index_dtype"]
    loc = location(op)
    t_idx_full = tensor_type(x.shape, index_dtype)
    iota = p.fresh()
    p.emit(f'{iota} = "stablehlo.iota"() {{iota_dimension = {axis} : i64}} : () -> '
           f"{t_idx_full} {loc}")
    init_value = constant_line(p, reduction_identity(
        "max" if op.name == "argmax" else "min", x.dtype), op)
    init_index = constant_line(p, np.zeros((), index_dtype), op)
    tv, ti = tensor_type((), x.dtype), tensor_type((), index_dtype)
    names = [p.fresh_block_arg() for _ in range(4)]
    av, ai, bv, bi = names
    direction = "GT" if op.name == "argmax" else "LT"
    vcmp = compare_attrs(direction, x.dtype)
    tag = p.fresh().lstrip("%")
    lines = [
        f'%better{tag} = "stablehlo.compare"({av}, {bv}) {{{vcmp}}} : ({tv}, {tv}) -> tensor<i1>',
        f'%eq{tag} = "stablehlo.compare"({av}, {bv}) {{{compare_attrs("EQ", x.dtype)}}} : '
        f"({tv}, {tv}) -> tensor<i1>",
        f'%lower{tag} = "stablehlo.compare"({ai}, {bi}) {{{compare_attrs("LT", index_dtype)}}}'
        f" : ({ti}, {ti}) -> tensor<i1>",
        f'%tie{tag} = "stablehlo.and"(%eq{tag}, %lower{tag}) : (tensor<i1>, tensor<i1>) -> '
        "tensor<i1>",
        f'%pick0{tag} = "stablehlo.or"(%better{tag}, %tie{tag}) : (tensor<i1>, tensor<i1>) -> '
        "tensor<i1>",
    ]
    if dtypes.is_inexact(x.dtype):
        lines += [
            f'%anan{tag} = "stablehlo.compare"({av}, {av}) {{{compare_attrs("NE", x.dtype)}}}'
            f" : ({tv}, {tv}) -> tensor<i1>",
            f'%bnan{tag} = "stablehlo.compare"({bv}, {bv}) {{{compare_attrs("NE", x.dtype)}}}'
            f" : ({tv}, {tv}) -> tensor<i1>",
            f'%notb{tag} = "stablehlo.not"(%bnan{tag}) : (tensor<i1>) -> tensor<i1>',
            f'%anan_only{tag} = "stablehlo.and"(%anan{tag}, %notb{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%both{tag} = "stablehlo.and"(%anan{tag}, %bnan{tag}) : (tensor<i1>, tensor<i1>) '
            "-> tensor<i1>",
            f'%bothlow{tag} = "stablehlo.and"(%both{tag}, %lower{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%nanpick{tag} = "stablehlo.or"(%anan_only{tag}, %bothlow{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%notnan{tag} = "stablehlo.or"(%anan{tag}, %bnan{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%plain{tag} = "stablehlo.not"(%notnan{tag}) : (tensor<i1>) -> tensor<i1>',
            f'%plainpick{tag} = "stablehlo.and"(%plain{tag}, %pick0{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%pick{tag} = "stablehlo.or"(%nanpick{tag}, %plainpick{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
        ]
    else:
        lines.append(f'%pick{tag} = "stablehlo.or"(%pick0{tag}, %pick0{tag}) : (tensor<i1>, '
                     "tensor<i1>) -> tensor<i1>")
    lines += [
        f'%v{tag} = "stablehlo.select"(%pick{tag}, {av}, {bv}) : (tensor<i1>, {tv}, {tv}) -> {tv}',
        f'%i{tag} = "stablehlo.select"(%pick{tag}, {ai}, {bi}) : (tensor<i1>, {ti}, {ti}) -> {ti}',
        f'"stablehlo.return"(%v{tag}, %i{tag}) : ({tv}, {ti}) -> ()',
    ]
    body_text = p.block([f"{av}: {tv}", f"{ai}: {ti}", f"{bv}: {tv}", f"{bi}: {ti}"],
                        lines, op)
    result = p.fresh()
    p.names[op.results[0]] = f"{result}#1"
    t_val_out = tensor_type(op.results[0].shape, x.dtype)
    p.emit(f'{result}:2 = "stablehlo.reduce"({p.name(x)}, {iota}, {init_value}, {init_index}) '
           f"({body_text}) {{dimensions = {i64_array([axis])}}} : ({value_type(x)}, {t_idx_full}, "
           f"{tv}, {ti}) -> ({t_val_out}, {value_type(op.results[0])}) {loc}")


nondifferentiable("argmax", "argmin")


@batching_rule("argmax", "argmin")
def _batch_argreduce(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    reduce_ = b.argmax if op.name == "argmax" else b.argmin
    return [reduce_(x, op.attrs["axis"] + 1, op.attrs["index_dtype"])], [0]


# --- cumulative ------------------------------------------------------------------------

@checks("cumulative")
def _check_cumulative(operands, attrs):
    (x,) = operands
    require(attrs["kind"] in ("sum", "prod", "max", "min"), PSCValueError,
            f"unknown cumulative reduction {attrs['kind']!r}")
    require(0 <= attrs["axis"] < x.ndim, PSCValueError,
            f"cumulative axis {attrs['axis']} is out of range for {fmt(x)}")
    return [(x.shape, x.dtype)]


SCAN_BLOCK = 16   # a scan runs sequentially within blocks of this many elements


@lowers("cumulative")
def _lower_cumulative(p, op):
    """An inclusive scan in O(n) work (a whole-axis reduce_window is n²/2).

    An axis of up to ``SCAN_BLOCK`` elements is one reduce_window whose window is the
    whole axis: each prefix combined from the first element on, NumPy's order and
    rounding.  A longer axis is cut into blocks of ``SCAN_BLOCK`` (the last padded with
    the identity): each block is scanned so, the block totals are scanned the same way
    (recursively, ⌈log16 n⌉ levels), and each block's exclusive prefix is combined with
    its elements.  Integers, max and min are exact; float sums and products of a long axis
    associate differently from NumPy's left-to-right loop (element ``i`` is a sum of
    at most ``16·⌈log16 i⌉`` partial sums, so its error against the exact prefix is at
    most that many eps·Σ|x|, where the sequential loop's is ``i``·eps·Σ|x|); the first
    block is NumPy's to the bit.  A reverse scan is the forward scan of the reversed axis.
    (XLA:CPU's ReduceWindowRewriter turned the old whole-axis window into this same blocked
    scan — the results are bit-identical — but other pipelines need not: now it is ours.)"""
    (x,), a = op.operands, op.attrs
    scan = _ScanText(p, op, a["kind"], x.dtype)
    name = p.name(x)
    if a["reverse"]:
        name = scan.reverse(name, x.shape, a["axis"])
    name = scan.inclusive(name, x.shape, a["axis"])
    if a["reverse"]:
        name = scan.reverse(name, x.shape, a["axis"])
    p.names[op.results[0]] = name


def scan_identity(kind: str, dtype) -> np.ndarray:
    """The reduction identity, with -0.0 for float sums: ``-0.0 + x`` is ``x`` for every
    x (``0.0 + -0.0`` is ``0.0``, and NumPy's cumsum of ``[-0.0]`` is ``[-0.0]``)."""
    if kind == "sum" and dtypes.is_inexact(dtype):
        return np.asarray(-0.0 - 0.0j if dtypes.is_complex(dtype) else -0.0, dtype)
    return reduction_identity(kind, dtype)


class _ScanText:
    """Prints the lines of one blocked scan (each method returns the SSA name it made)."""

    def __init__(self, p, op, kind, dtype):
        self.p, self.op, self.kind, self.dtype = p, op, kind, np.dtype(dtype)
        self.init = constant_line(p, scan_identity(kind, dtype), op)
        self.scalar_t = tensor_type((), dtype)

    def _t(self, shape) -> str:
        return tensor_type(shape, self.dtype)

    def _line(self, text: str) -> str:
        name = self.p.fresh()
        self.p.emit(f"{name} = {text} {location(self.op)}")
        return name

    def reverse(self, x, shape, axis):
        t = self._t(shape)
        return self._line(f'"stablehlo.reverse"({x}) {{dimensions = {i64_array([axis])}}} '
                          f": ({t}) -> {t}")

    def reshape(self, x, shape, new_shape):
        return self._line(f'"stablehlo.reshape"({x}) : ({self._t(shape)}) -> '
                          f"{self._t(new_shape)}")

    def pad(self, x, shape, axis, low, high):
        """``x`` padded with the identity along ``axis`` (negative ``high`` crops)."""
        lo, hi = [0] * len(shape), [0] * len(shape)
        lo[axis], hi[axis] = low, high
        out = list(shape)
        out[axis] += low + high
        return self._line(
            f'"stablehlo.pad"({x}, {self.init}) {{edge_padding_low = {i64_array(lo)}, '
            f"edge_padding_high = {i64_array(hi)}, interior_padding = "
            f"{i64_array([0] * len(shape))}}} : ({self._t(shape)}, {self.scalar_t}) -> "
            f"{self._t(out)}"), tuple(out)

    def sequential(self, x, shape, axis):
        """Each prefix along ``axis`` as one window, combined in order from the first."""
        n = shape[axis]
        window = [1] * len(shape)
        window[axis] = max(n, 1)
        pads = ", ".join("[0, 0]" if d != axis else f"[{max(n - 1, 0)}, 0]"
                         for d in range(len(shape)))
        body = self.p.scalar_body(self.dtype, binary_body(REDUCERS[self.kind]), self.op)
        t = self._t(shape)
        return self._line(
            f'"stablehlo.reduce_window"({x}, {self.init}) ({body}) {{window_dimensions = '
            f"{i64_array(window)}, padding = dense<[{pads}]> : tensor<{len(shape)}x2xi64>}}"
            f" : ({t}, {self.scalar_t}) -> {t}")

    def inclusive(self, x, shape, axis):
        n = shape[axis]
        if n <= SCAN_BLOCK:
            return self.sequential(x, shape, axis)
        m = -(-n // SCAN_BLOCK)
        if m * SCAN_BLOCK != n:
            x, shape = self.pad(x, shape, axis, 0, m * SCAN_BLOCK - n)
        blocks = shape[:axis] + (m, SCAN_BLOCK) + shape[axis + 1:]
        local = self.sequential(self.reshape(x, shape, blocks), blocks, axis + 1)
        start = [0] * len(blocks)
        start[axis + 1] = SCAN_BLOCK - 1
        last = blocks[:axis + 1] + (1,) + blocks[axis + 2:]
        totals = self._line(
            f'"stablehlo.slice"({local}) {{start_indices = {i64_array(start)}, '
            f"limit_indices = {i64_array(blocks)}, strides = "
            f"{i64_array([1] * len(blocks))}}} : ({self._t(blocks)}) -> {self._t(last)}")
        per_block = shape[:axis] + (m,) + shape[axis + 1:]
        totals = self.inclusive(self.reshape(totals, last, per_block), per_block, axis)
        before, _ = self.pad(totals, per_block, axis, 1, -1)   # each block's exclusive prefix
        dims = [d for d in range(len(blocks)) if d != axis + 1]
        carry = self._line(
            f'"stablehlo.broadcast_in_dim"({before}) {{broadcast_dimensions = '
            f"{i64_array(dims)}}} : ({self._t(per_block)}) -> {self._t(blocks)}")
        t = self._t(blocks)
        out = self._line(f'"stablehlo.{REDUCERS[self.kind]}"({carry}, {local}) : ({t}, {t})'
                         f" -> {t}")
        out = self.reshape(out, blocks, shape)
        if shape[axis] != n:
            out, _ = self.pad(out, shape, axis, 0, n - shape[axis])
        return out


WINDOW_ATTRS = (("window_dimensions", "window_dimensions"), ("window_strides", "window_strides"),
                ("base_dilations", "base_dilation"), ("window_dilations", "window_dilation"))


def emit_reduce_window(p, op, operands, inits, body, attrs):
    """Print ``op`` as a (variadic) ``stablehlo.reduce_window`` over the IR values
    ``operands``, from the SSA names of scalar ``inits`` (one per operand, of its dtype),
    with the region text ``body``.  ``attrs`` holds the window: ``window_dimensions``
    and, where given, ``window_strides``, ``base_dilation``, ``window_dilation`` and
    ``padding`` pairs.  With fewer results than operands (a select-and-gather), ``op``'s
    results stand for the last ones."""
    fields = [f"{mlir} = {i64_array(attrs[key])}" for mlir, key in WINDOW_ATTRS
              if attrs.get(key) is not None]
    if attrs.get("padding") is not None:
        pairs = attrs["padding"]
        text = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in pairs) + "]"
        fields.append(f"padding = dense<{text}> : tensor<{len(pairs)}x2xi64>")
    n = len(operands)
    result = p.fresh()
    for i, value in enumerate(op.results):
        p.names[value] = result if n == 1 else f"{result}#{n - len(op.results) + i}"
    in_types = [value_type(v) for v in operands] + [tensor_type((), v.dtype) for v in operands]
    out_types = [tensor_type(op.results[0].shape, v.dtype) for v in operands]
    lhs, outs = (result, out_types[0]) if n == 1 else \
        (f"{result}:{n}", f"({', '.join(out_types)})")
    args = ", ".join([p.name(v) for v in operands] + list(inits))
    p.emit(f'{lhs} = "stablehlo.reduce_window"({args}) ({body}) {{{", ".join(fields)}}} : '
           f"({', '.join(in_types)}) -> {outs} {location(op)}")


def _cumulative_jvp(b, op, primals, tangents):
    (result,) = replay(b, op, primals)
    if tangents[0] is None or not is_float(result):
        return [result], [None]
    if op.attrs["kind"] != "sum":
        raise b.error(PSCUnsupportedCallError, f"differentiating a cumulative "
                      f"{op.attrs['kind']} is not supported", "use a loop")
    return [result], [replay(b, op, [tangents[0]])[0]]


def _cumulative_vjp(b, op, primals, results, cts):
    if op.attrs["kind"] != "sum":
        raise b.error(PSCUnsupportedCallError, f"differentiating a cumulative "
                      f"{op.attrs['kind']} is not supported", "use a loop")
    return [b.cumulative(cts[0], "sum", op.attrs["axis"], not op.attrs["reverse"])]


jvp_rule("cumulative")(_cumulative_jvp)
vjp_rule("cumulative")(_cumulative_vjp)


@batching_rule("cumulative")
def _batch_cumulative(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    a = op.attrs
    return [b.cumulative(x, a["kind"], a["axis"] + 1, a["reverse"])], [0]


# --- sort ------------------------------------------------------------------------------

@checks("sort")
def _check_sort(operands, attrs):
    same_shapes("sort", operands)
    dim, num_keys = attrs["dimension"], attrs["num_keys"]
    require(0 <= dim < operands[0].ndim, PSCValueError,
            f"sort dimension {dim} is out of range for {fmt(operands[0])}")
    require(1 <= num_keys <= len(operands), PSCValueError, "sort needs 1..n key operands")
    for key in operands[:num_keys]:
        require(not dtypes.is_complex(key.dtype), PSCTypeError, "cannot sort complex keys")
    return [(v.shape, v.dtype) for v in operands]


@lowers("sort")
def _lower_sort(p, op):
    """Comparator: lexicographic on the keys.  Floats compare as NumPy sorts them: every
    NaN (whatever its sign bit) after all numbers, and -0.0 equal to 0.0 (stable order)."""
    keys = op.operands[:op.attrs["num_keys"]]
    loc = location(op)
    params, pairs = [], []
    for v in op.operands:
        t = tensor_type((), v.dtype)
        a, b = p.fresh_block_arg(), p.fresh_block_arg()
        params += [f"{a}: {t}", f"{b}: {t}"]
        pairs.append((a, b, t, v.dtype))
    tag = p.fresh().lstrip("%")
    lines = []
    # result = lt(k0) or (eq(k0) and (lt(k1) or (eq(k1) and ...))), built from the last key.
    last = None
    for k in reversed(range(len(keys))):
        a, b, t, dt = pairs[k]
        lt, eq = f"%lt{k}_{tag}", f"%eq{k}_{tag}"
        if dtypes.is_inexact(dt):
            n = f"{k}_{tag}"
            cmp = lambda d: compare_attrs(d, dt)
            lines += [
                f'%ltf{n} = "stablehlo.compare"({a}, {b}) {{{cmp("LT")}}} : ({t}, {t}) -> tensor<i1>',
                f'%anan{n} = "stablehlo.compare"({a}, {a}) {{{cmp("NE")}}} : ({t}, {t}) -> tensor<i1>',
                f'%bnan{n} = "stablehlo.compare"({b}, {b}) {{{cmp("NE")}}} : ({t}, {t}) -> tensor<i1>',
                f'%nota{n} = "stablehlo.not"(%anan{n}) : (tensor<i1>) -> tensor<i1>',
                f'%nanlast{n} = "stablehlo.and"(%bnan{n}, %nota{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
                f'{lt} = "stablehlo.or"(%ltf{n}, %nanlast{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
                f'%eqf{n} = "stablehlo.compare"({a}, {b}) {{{cmp("EQ")}}} : ({t}, {t}) -> tensor<i1>',
                f'%bothnan{n} = "stablehlo.and"(%anan{n}, %bnan{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
                f'{eq} = "stablehlo.or"(%eqf{n}, %bothnan{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
            ]
        else:
            lines += [
                f'{lt} = "stablehlo.compare"({a}, {b}) {{{compare_attrs("LT", dt)}}} : ({t}, {t}) -> tensor<i1>',
                f'{eq} = "stablehlo.compare"({a}, {b}) {{{compare_attrs("EQ", dt)}}} : ({t}, {t}) -> tensor<i1>',
            ]
        if last is None:
            last = lt
            continue
        lines += [
            f'%and{k}_{tag} = "stablehlo.and"({eq}, {last}) : (tensor<i1>, tensor<i1>) '
            "-> tensor<i1>",
            f'%or{k}_{tag} = "stablehlo.or"({lt}, %and{k}_{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
        ]
        last = f"%or{k}_{tag}"
    lines.append(f'"stablehlo.return"({last}) : (tensor<i1>) -> ()')
    body = p.block(params, lines, op)
    lhs = p.bind_results(op)
    args = ", ".join(p.name(v) for v in op.operands)
    in_types = ", ".join(value_type(v) for v in op.operands)
    out_types = in_types if len(op.results) == 1 else f"({in_types})"
    p.emit(f'{lhs} = "stablehlo.sort"({args}) ({body}) {{dimension = '
           f"{op.attrs['dimension']} : i64, is_stable = {str(op.attrs['is_stable']).lower()}}}"
           f" : ({in_types}) -> {out_types} {loc}")


def _sort_jvp(b, op, primals, tangents):
    """Sorting carries the tangents along as extra payload operands."""
    float_positions = [i for i, t in enumerate(tangents) if t is not None]
    carried = [tangents[i] for i in float_positions]
    results = b.sort(primals + carried, op.attrs["dimension"], op.attrs["num_keys"],
                     op.attrs["is_stable"])
    n = len(primals)
    out_tangents = [None] * n
    for k, i in enumerate(float_positions):
        out_tangents[i] = results[n + k]
    return results[:n], out_tangents


def _sort_vjp(b, op, primals, results, cts):
    """Un-sort the cotangents: sort again carrying the positions, then sort by them."""
    dim, keys = op.attrs["dimension"], op.attrs["num_keys"]
    positions = b.iota(primals[0].shape, np.int32, dim)
    permutation = b.sort(list(primals) + [positions], dim, keys, op.attrs["is_stable"])[-1]
    present = [i for i, ct in enumerate(cts) if ct is not None]
    unsorted = b.sort([permutation] + [cts[i] for i in present], dim, 1, True)[1:]
    out = [None] * len(primals)
    for i, ct in zip(present, unsorted):
        out[i] = ct
    return out


jvp_rule("sort")(_sort_jvp)
vjp_rule("sort")(_sort_vjp)


@batching_rule("sort")
def _batch_sort(b, op, operands, dims):
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    moved = [to_front(b, v, d, size) for v, d in zip(operands, dims)]
    a = op.attrs
    results = b.sort(moved, a["dimension"] + 1, a["num_keys"], a["is_stable"])
    return results, [0] * len(results)
