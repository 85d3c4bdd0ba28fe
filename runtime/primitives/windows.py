"""Windowed reductions: ``reduce_window`` (sum/prod/max/min), ``reduce_window_region``
(any reducer, as a region) and the two halves of a max/min pool's derivative,
``select_and_gather_add`` and ``select_and_scatter_add``.

As in JAX's ``windowed_reductions.py``: a windowed sum is linear (its VJP pads the
cotangent and sums it over the dilated window again); a windowed max/min's tangent is the
tangent at each window's chosen element (``select_and_gather_add``: a variadic
reduce_window over (value, tangent) pairs), and its VJP scatters the cotangent back to that
element (``select_and_scatter_add``, StableHLO ``select_and_scatter``); each of these two is
the other's transpose, so max pools differentiate to any order.  Padding and base-dilation
holes hold the reduction's identity.  Under `vmap` the batch dimension moves to the front
and gets a window of 1.
"""
from __future__ import annotations

import numpy as np

from ..autodiff.tangents import is_float
from ..autodiff.trace import replay
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..lowering import binary_body, compare_attrs, constant_line, i64_array, location, \
    tensor_type, value_type
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .reductions import REDUCERS, emit_reduce_window, reduction_identity
from .support import fmt, linear_jvp, require, same_dtypes, to_front

WINDOW_KINDS = ("sum", "prod", "max", "min")
SELECTS = {"max": "GE", "min": "LE"}   # which element a max/min window chooses


def dilate(size: int, dilation: int) -> int:
    """The extent of ``size`` elements with ``dilation - 1`` holes between them."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def window_shape(name, x, attrs) -> tuple:
    """The result shape of a window op on ``x``; PSCError for attributes that do not fit."""
    n = x.ndim
    window, strides = attrs["window_dimensions"], attrs["window_strides"]
    padding = attrs["padding"]
    base = attrs.get("base_dilation") or (1,) * n
    wdil = attrs.get("window_dilation") or (1,) * n
    for key, values in (("window_dimensions", window), ("window_strides", strides),
                        ("padding", padding), ("base_dilation", base),
                        ("window_dilation", wdil)):
        require(len(values) == n, PSCShapeError,
                f"{name}: {key} has {len(values)} entries for an operand of rank {n} "
                f"({fmt(x)})", "give one entry per dimension of the operand")
    for key, values in (("window_dimensions", window), ("window_strides", strides),
                        ("base_dilation", base), ("window_dilation", wdil)):
        require(all(v >= 1 for v in values), PSCValueError,
                f"{name}: {key} must be positive, got {list(values)}")
    shape = []
    for d in range(n):
        lo, hi = padding[d]
        padded = dilate(x.shape[d], base[d]) + lo + hi
        extent = dilate(window[d], wdil[d])
        require(padded >= 0, PSCValueError,
                f"{name}: padding {list(padding[d])} makes dimension {d} of {fmt(x)} negative")
        shape.append(0 if padded < extent else (padded - extent) // strides[d] + 1)
    return tuple(shape)


def window_attrs(attrs, batched: bool = False) -> dict:
    """The window attributes of ``attrs`` (with a leading window of 1 when ``batched``)."""
    keys = [k for k in ("window_dimensions", "window_strides", "padding", "base_dilation",
                        "window_dilation") if k in attrs]
    if not batched:
        return {k: attrs[k] for k in keys}
    return {k: ((0, 0),) + tuple(attrs[k]) if k == "padding" else (1,) + tuple(attrs[k])
            for k in keys}


def _ones(n):
    return (1,) * n


# --- builder calls (the family's typed methods; `Builder` itself stays generic) -----------

def reduce_window(b, x, kind, window_dimensions, window_strides, padding, base_dilation=None,
                  window_dilation=None):
    """``kind`` (sum/prod/max/min) over each window of ``x``; padding and base-dilation
    holes hold ``kind``'s identity."""
    n = x.ndim
    return b.emit("reduce_window", [x], kind=kind, **_normalized(
        n, window_dimensions, window_strides, padding, base_dilation, window_dilation))[0]


def reduce_window_region(b, operands, inits, region, window_dimensions, window_strides,
                         padding, base_dilation=None, window_dilation=None):
    """The reducer ``region`` (``2n`` scalar parameters: accumulators, then elements;
    ``n`` outputs) over each window of the ``n`` ``operands``, starting from ``inits``."""
    n = operands[0].ndim if operands else 0
    return b.emit("reduce_window_region", list(operands) + list(inits), [region],
                  **_normalized(n, window_dimensions, window_strides, padding,
                                base_dilation, window_dilation))


def select_and_gather_add(b, tangents, x, select, **window):
    """For each window of ``x``, the element of ``tangents`` where ``x`` is largest
    (``select`` "max") or smallest ("min"): the tangent of a windowed max/min."""
    return b.emit("select_and_gather_add", [tangents, x], select=select, **window)[0]


def select_and_scatter_add(b, source, x, select, window_dimensions, window_strides, padding):
    """Each element of ``source`` (one per window of ``x``) added at the position its
    window of ``x`` chooses (``select`` "max"/"min"); zeros elsewhere."""
    return b.emit("select_and_scatter_add", [source, x], select=select,
                  window_dimensions=tuple(window_dimensions),
                  window_strides=tuple(window_strides), padding=tuple(map(tuple, padding)))[0]


def _normalized(n, window_dimensions, window_strides, padding, base_dilation,
                window_dilation) -> dict:
    def ints(values, default):
        return tuple(int(v) for v in values) if values is not None else default
    return dict(window_dimensions=ints(window_dimensions, ()),
                window_strides=ints(window_strides, _ones(n)),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding) if padding is not None
                else ((0, 0),) * n,
                base_dilation=ints(base_dilation, _ones(n)),
                window_dilation=ints(window_dilation, _ones(n)))


# --- reduce_window (a monoid: sum, prod, max, min) ----------------------------------------

@checks("reduce_window")
def _check_reduce_window(operands, attrs):
    (x,) = operands
    require(attrs["kind"] in WINDOW_KINDS, PSCValueError,
            f"unknown windowed reduction {attrs['kind']!r}")
    require(x.dtype != np.bool_ or attrs["kind"] in ("max", "min"), PSCTypeError,
            f"reduce_window {attrs['kind']} needs a numeric operand, got {fmt(x)}")
    return [(window_shape("reduce_window", x, attrs), x.dtype)]


@lowers("reduce_window")
def _lower_reduce_window(p, op):
    (x,), kind = op.operands, op.attrs["kind"]
    init = constant_line(p, reduction_identity(kind, x.dtype), op)
    mlir = REDUCERS[kind]
    if x.dtype == np.bool_:
        mlir = "or" if kind == "max" else "and"
    body = p.scalar_body(x.dtype, binary_body(mlir), op)
    emit_reduce_window(p, op, [x], [init], body, op.attrs)


def _unsupported(b, what, hint="write the window with slices and a loop, or use a sum/max/min"):
    return b.error(PSCUnsupportedCallError, f"differentiating {what} is not supported", hint)


@jvp_rule("reduce_window")
def _reduce_window_jvp(b, op, primals, tangents):
    (x,), (tx,) = primals, tangents
    (result,) = replay(b, op, primals)
    kind = op.attrs["kind"]
    if tx is None or not is_float(result):
        return [result], [None]
    if kind == "sum":
        return [result], [replay(b, op, [tx])[0]]
    if kind in SELECTS:
        return [result], [select_and_gather_add(b, tx, x, kind, **window_attrs(op.attrs))]
    raise _unsupported(b, "a windowed product (reduce_window with lax.mul)")


@vjp_rule("reduce_window")
def _reduce_window_vjp(b, op, primals, results, cts):
    (x,), (ct,), kind = primals, cts, op.attrs["kind"]
    if kind == "sum":
        return [_sum_transpose(b, ct, x.shape, op.attrs)]
    if kind in SELECTS:
        return [_scatter_to_choice(b, ct, x, kind, op.attrs)]
    raise _unsupported(b, "a windowed product (reduce_window with lax.mul)")


def _sum_transpose(b, ct, in_shape, attrs):
    """The transpose of a windowed sum (JAX's ``_reduce_window_sum_transpose_rule``): the
    cotangent, strides turned into interior padding, summed over the window again with
    the base dilation as its stride."""
    window, strides = attrs["window_dimensions"], attrs["window_strides"]
    base, wdil = attrs["base_dilation"], attrs["window_dilation"]
    low, high = [], []
    for d, size in enumerate(in_shape):
        extent = dilate(window[d], wdil[d])
        before = extent - attrs["padding"][d][0] - 1
        after = dilate(size, base[d]) + extent - 1 - dilate(ct.shape[d], strides[d]) - before
        low.append(before)
        high.append(after)
    zero = b.constant(np.zeros((), ct.dtype))
    padded = b.pad(ct, zero, low, high, [s - 1 for s in strides])
    n = len(in_shape)
    return reduce_window(b, padded, "sum", window, base, ((0, 0),) * n, _ones(n), wdil)


def _scatter_to_choice(b, ct, x, kind, attrs):
    """The transpose of `select_and_gather_add`: ``ct`` added where each window chose.
    Base dilation: scatter into ``x`` dilated with the identity, then take every
    ``base``-th element (as JAX); window dilation has no StableHLO scatter (JAX refuses)."""
    if any(d != 1 for d in attrs["window_dilation"]):
        raise _unsupported(b, "a windowed max/min with window dilation in reverse mode",
                           "JAX refuses it too; use window_dilation=1")
    base = attrs["base_dilation"]
    dilated = x
    if any(d != 1 for d in base):
        identity = b.constant(reduction_identity(kind, x.dtype))
        dilated = b.pad(x, identity, [0] * x.ndim, [0] * x.ndim,
                        [d - 1 for d in base])
    result = select_and_scatter_add(b, ct, dilated, kind, attrs["window_dimensions"],
                                    attrs["window_strides"], attrs["padding"])
    if dilated is not x:
        result = b.slice(result, [0] * x.ndim, result.shape, base)
    return result


@batching_rule("reduce_window")
def _batch_reduce_window(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    return [b.emit("reduce_window", [x], kind=op.attrs["kind"],
                   **window_attrs(op.attrs, batched=True))[0]], [0]


# --- reduce_window_region (any reducer) --------------------------------------------------

@checks("reduce_window_region")
def _check_reduce_window_region(operands, attrs):
    n = len(operands) // 2
    require(n >= 1 and len(operands) == 2 * n, PSCValueError,
            "reduce_window needs as many init values as operands")
    xs, inits = operands[:n], operands[n:]
    for x in xs:
        require(x.shape == xs[0].shape, PSCShapeError, "reduce_window operands must have "
                "one shape, got " + ", ".join(fmt(v) for v in xs))
    for x, init in zip(xs, inits):
        require(init.shape == (), PSCShapeError,
                f"reduce_window init values must be scalars, got {fmt(init)}")
        same_dtypes("reduce_window (operand and init value)", (x, init))
    shape = window_shape("reduce_window", xs[0], attrs)
    return [(shape, x.dtype) for x in xs]


@lowers("reduce_window_region")
def _lower_reduce_window_region(p, op):
    n = len(op.operands) // 2
    body = p.region(op.regions[0], op=op)
    emit_reduce_window(p, op, op.operands[:n], [p.name(v) for v in op.operands[n:]], body,
                       op.attrs)


@jvp_rule("reduce_window_region")
def _reduce_window_region_jvp(b, op, primals, tangents):
    results = replay(b, op, primals)
    if any(t is not None for t in tangents) and any(is_float(r) for r in results):
        raise _unsupported(b, "reduce_window with a general reducer",
                           "use lax.add, lax.max or lax.min as the computation")
    return results, [None] * len(results)


@vjp_rule("reduce_window_region")
def _reduce_window_region_vjp(b, op, primals, results, cts):
    raise _unsupported(b, "reduce_window with a general reducer",
                       "use lax.add, lax.max or lax.min as the computation")


@batching_rule("reduce_window_region")
def _batch_reduce_window_region(b, op, operands, dims):
    n = len(operands) // 2
    if any(d is not None for d in dims[n:]):
        raise b.error(PSCUnsupportedCallError, "batching reduce_window over per-lane init "
                      "values is not supported", "pass init values shared by all lanes")
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    xs = [to_front(b, v, d, size) for v, d in zip(operands[:n], dims[:n])]
    results = b.emit(op.name, xs + list(operands[n:]), op.regions,
                     **window_attrs(op.attrs, batched=True))
    return results, [0] * n


# --- select_and_gather_add: the tangent of a windowed max/min ------------------------------

@checks("select_and_gather_add")
def _check_select_and_gather(operands, attrs):
    tangents, x = operands
    require(attrs["select"] in SELECTS, PSCValueError,
            f"unknown window selection {attrs['select']!r}")
    require(tangents.shape == x.shape, PSCShapeError,
            f"select_and_gather_add: tangents {fmt(tangents)} must have the shape of the "
            f"operand {fmt(x)}")
    return [(window_shape("select_and_gather_add", x, attrs), tangents.dtype)]


def _choice_body(p, op, x, t):
    """A reducer over (value, tangent) pairs keeping the pair whose value is chosen."""
    tv, tt = tensor_type((), x.dtype), tensor_type((), t.dtype)
    av, at, bv, bt = (p.fresh_block_arg() for _ in range(4))
    tag = p.fresh().lstrip("%")
    cmp = compare_attrs(SELECTS[op.attrs["select"]], x.dtype)
    lines = [
        f'%pick{tag} = "stablehlo.compare"({av}, {bv}) {{{cmp}}} : ({tv}, {tv}) -> tensor<i1>',
        f'%v{tag} = "stablehlo.select"(%pick{tag}, {av}, {bv}) : (tensor<i1>, {tv}, {tv}) -> {tv}',
        f'%t{tag} = "stablehlo.select"(%pick{tag}, {at}, {bt}) : (tensor<i1>, {tt}, {tt}) -> {tt}',
        f'"stablehlo.return"(%v{tag}, %t{tag}) : ({tv}, {tt}) -> ()',
    ]
    return p.block([f"{av}: {tv}", f"{at}: {tt}", f"{bv}: {tv}", f"{bt}: {tt}"], lines, op)


@lowers("select_and_gather_add")
def _lower_select_and_gather(p, op):
    tangents, x = op.operands
    init_x = constant_line(p, reduction_identity(op.attrs["select"], x.dtype), op)
    init_t = constant_line(p, np.zeros((), tangents.dtype), op)
    emit_reduce_window(p, op, [x, tangents], [init_x, init_t],
                       _choice_body(p, op, x, tangents), op.attrs)


linear_jvp("select_and_gather_add", (0,))


@vjp_rule("select_and_gather_add")
def _select_and_gather_vjp(b, op, primals, results, cts):
    (_, x), (ct,) = primals, cts
    return [_scatter_to_choice(b, ct, x, op.attrs["select"], op.attrs), None]


@batching_rule("select_and_gather_add")
def _batch_select_and_gather(b, op, operands, dims):
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    moved = [to_front(b, v, d, size) for v, d in zip(operands, dims)]
    return [b.emit(op.name, moved, select=op.attrs["select"],
                   **window_attrs(op.attrs, batched=True))[0]], [0]


# --- select_and_scatter_add: the cotangent of a windowed max/min ---------------------------

@checks("select_and_scatter_add")
def _check_select_and_scatter(operands, attrs):
    source, x = operands
    require(attrs["select"] in SELECTS, PSCValueError,
            f"unknown window selection {attrs['select']!r}")
    same_dtypes("select_and_scatter_add", (source, x))
    expected = window_shape("select_and_scatter_add", x, attrs)
    require(source.shape == expected, PSCShapeError,
            f"select_and_scatter_add: source {fmt(source)} must have one element per "
            f"window of {fmt(x)}, shape {list(expected)}")
    return [(x.shape, x.dtype)]


@lowers("select_and_scatter_add")
def _lower_select_and_scatter(p, op):
    source, x = op.operands
    t = tensor_type((), x.dtype)
    a, c = p.fresh_block_arg(), p.fresh_block_arg()
    cmp = compare_attrs(SELECTS[op.attrs["select"]], x.dtype)
    tag = p.fresh().lstrip("%")
    select = p.block([f"{a}: {t}", f"{c}: {t}"], [
        f'%pick{tag} = "stablehlo.compare"({a}, {c}) {{{cmp}}} : ({t}, {t}) -> tensor<i1>',
        f'"stablehlo.return"(%pick{tag}) : (tensor<i1>) -> ()'], op)
    scatter = p.scalar_body(x.dtype, binary_body("add"), op)
    zero = constant_line(p, np.zeros((), x.dtype), op)
    pairs = op.attrs["padding"]
    pad_text = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in pairs) + "]"
    lhs = p.bind_results(op)
    p.emit(f'{lhs} = "stablehlo.select_and_scatter"({p.name(x)}, {p.name(source)}, {zero}) '
           f"({select}, {scatter}) {{window_dimensions = "
           f"{i64_array(op.attrs['window_dimensions'])}, window_strides = "
           f"{i64_array(op.attrs['window_strides'])}, padding = dense<{pad_text}> : "
           f"tensor<{len(pairs)}x2xi64>}} : ({value_type(x)}, {value_type(source)}, {t}) -> "
           f"{value_type(op.results[0])} {location(op)}")


linear_jvp("select_and_scatter_add", (0,))


@vjp_rule("select_and_scatter_add")
def _select_and_scatter_vjp(b, op, primals, results, cts):
    (_, x), (ct,) = primals, cts
    n = x.ndim
    return [select_and_gather_add(b, ct, x, op.attrs["select"],
                                  **window_attrs(op.attrs), base_dilation=_ones(n),
                                  window_dilation=_ones(n)), None]


@batching_rule("select_and_scatter_add")
def _batch_select_and_scatter(b, op, operands, dims):
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    moved = [to_front(b, v, d, size) for v, d in zip(operands, dims)]
    return [b.emit(op.name, moved, select=op.attrs["select"],
                   **window_attrs(op.attrs, batched=True))[0]], [0]
