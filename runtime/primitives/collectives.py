"""Collectives over a named axis: ``psum``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``ppermute``, ``all_to_all``, ``axis_index``.

Each operation records the axis it runs over (`runtime.axes.COLLECTIVE_AXIS`, and
``axis_size``).  Over a `pmap`'s replicas it lowers to the StableHLO collective of its name
(``all_reduce`` with a reduction region, ``all_gather``, ``reduce_scatter``,
``collective_permute``, ``all_to_all``; ``axis_index`` is ``replica_id``) with one replica
group holding every replica: the classic pmap model, one program on N replicas.  Over a
`vmap`'s lanes it never reaches lowering: the batching rule of the vmap naming it turns it
into an operation on the batch dimension (a ``reduce``, a reshape, a gather of rows).

The primitives are StableHLO's *tiled* forms (``all_gather`` concatenates along a
dimension; ``psum_scatter`` and ``all_to_all`` split one); `runtime.collectives` builds
JAX's untiled forms from them with reshapes.  Derivatives follow JAX's convention for
``pmap``: each collective but ``pmax``/``pmin`` is linear, ``psum``'s transpose is
``psum`` (the cotangent of a replicated value is summed over replicas), ``all_gather``'s
is ``psum_scatter`` and back, ``ppermute``'s is the inverse permutation, ``all_to_all``'s
swaps its split and concatenated dimensions.  ``pmax``/``pmin``'s derivative (JAX has none)
is split evenly between the replicas that hold the extremum, as a ``max`` reduction's is.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.tangents import is_float
from ..axes import COLLECTIVE_AXIS, binds_batching_axis
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..lowering import binary_body, location
from ..primitive import batching_rule, checks, jvp_rule, lowers, nondifferentiable, vjp_rule
from .support import NUMERIC, check_kind, fmt, linear_jvp, require, to_front

REDUCING = {"psum": "add", "pmax": "maximum", "pmin": "minimum"}
COLLECTIVES = (*REDUCING, "all_gather", "psum_scatter", "ppermute", "all_to_all",
               "axis_index")


def collective(b, name: str, x, axis_name, axis_size: int, **attrs):
    """The result of collective ``name`` of ``x`` (None for ``axis_index``) over the axis
    ``axis_name`` of ``axis_size`` members."""
    operands = [] if x is None else [x]
    attrs = {COLLECTIVE_AXIS: axis_name, "axis_size": int(axis_size), **attrs}
    result = b.emit(name, operands, **attrs)[0]
    if x is not None:
        result.weak = x.weak
    return result


def _again(b, op, x, **changes):
    """``op``'s collective applied to ``x``, with some attributes changed."""
    attrs = {**op.attrs, **changes}
    return collective(b, op.name, x, attrs.pop(COLLECTIVE_AXIS), attrs.pop("axis_size"),
                      **attrs)


# --- checks ----------------------------------------------------------------------------------

def _check_axis(name, attrs):
    require(attrs.get("axis_size", 0) >= 1, PSCValueError,
            f"{name}: the axis size must be positive, got {attrs.get('axis_size')}")


def _reducing_check(name):
    def check(operands, attrs):
        (x,) = operands
        _check_axis(name, attrs)
        check_kind(name, x, NUMERIC)
        require(name == "psum" or not dtypes.is_complex(x.dtype), PSCTypeError,
                f"{name} of a complex operand {fmt(x)}: complex numbers are not ordered")
        return [(x.shape, x.dtype)]
    return check


for _name in REDUCING:
    checks(_name)(_reducing_check(_name))


def _check_dim(name, x, dim, what="dimension"):
    require(isinstance(dim, int) and 0 <= dim < x.ndim, PSCValueError,
            f"{name}: {what} {dim} is out of range for {fmt(x)}")


@checks("all_gather")
def _check_all_gather(operands, attrs):
    (x,), dim, n = operands, attrs["dimension"], attrs["axis_size"]
    _check_axis("all_gather", attrs)
    _check_dim("all_gather", x, dim)
    return [(x.shape[:dim] + (x.shape[dim] * n,) + x.shape[dim + 1:], x.dtype)]


@checks("psum_scatter")
def _check_psum_scatter(operands, attrs):
    (x,), dim, n = operands, attrs["dimension"], attrs["axis_size"]
    _check_axis("psum_scatter", attrs)
    check_kind("psum_scatter", x, NUMERIC)
    _check_dim("psum_scatter", x, dim, "scatter_dimension")
    require(x.shape[dim] % n == 0, PSCShapeError,
            f"psum_scatter: dimension {dim} of {fmt(x)} must be divisible by the axis size "
            f"{n}")
    return [(x.shape[:dim] + (x.shape[dim] // n,) + x.shape[dim + 1:], x.dtype)]


@checks("ppermute")
def _check_ppermute(operands, attrs):
    (x,), pairs, n = operands, attrs["pairs"], attrs["axis_size"]
    _check_axis("ppermute", attrs)
    sources, targets = [s for s, _ in pairs], [t for _, t in pairs]
    require(all(0 <= i < n for i in sources + targets), PSCValueError,
            f"ppermute: the permutation {list(pairs)} names indices outside 0..{n - 1}")
    require(len(set(sources)) == len(sources) and len(set(targets)) == len(targets),
            PSCValueError, f"ppermute: {list(pairs)} is not a permutation (an index is a "
            "source or a target twice)")
    return [(x.shape, x.dtype)]


@checks("all_to_all")
def _check_all_to_all(operands, attrs):
    (x,), split, concat, n = (operands, attrs["split_dimension"], attrs["concat_dimension"],
                              attrs["axis_size"])
    _check_axis("all_to_all", attrs)
    _check_dim("all_to_all", x, split, "split_axis")
    _check_dim("all_to_all", x, concat, "concat_axis")
    require(x.shape[split] % n == 0, PSCShapeError,
            f"all_to_all: split_axis {split} of {fmt(x)} must be divisible by the axis size "
            f"{n}")
    shape = list(x.shape)
    shape[split] //= n
    shape[concat] *= n
    return [(tuple(shape), x.dtype)]


@checks("axis_index")
def _check_axis_index(operands, attrs):
    _check_axis("axis_index", attrs)
    return [((), np.dtype(np.int32))]


# --- lowering (over replicas) ----------------------------------------------------------------

def _groups(op) -> str:
    n = op.attrs["axis_size"]
    return f"replica_groups = dense<[[{', '.join(map(str, range(n)))}]]> : tensor<1x{n}xi64>"


@lowers("psum", "pmax", "pmin")
def _lower_reducing(p, op):
    body = p.scalar_body(op.operands[0].dtype, binary_body(REDUCING[op.name]), op)
    p.generic(op, "all_reduce", _groups(op), regions=[body])


@lowers("all_gather")
def _lower_all_gather(p, op):
    p.generic(op, "all_gather", f"all_gather_dim = {op.attrs['dimension']} : i64, "
                                f"{_groups(op)}")


@lowers("psum_scatter")
def _lower_psum_scatter(p, op):
    body = p.scalar_body(op.operands[0].dtype, binary_body("add"), op)
    p.generic(op, "reduce_scatter", f"scatter_dimension = {op.attrs['dimension']} : i64, "
                                    f"{_groups(op)}", regions=[body])


@lowers("ppermute")
def _lower_ppermute(p, op):
    pairs = op.attrs["pairs"]
    text = ", ".join(f"[{s}, {t}]" for s, t in pairs)
    p.generic(op, "collective_permute", f"source_target_pairs = dense<[{text}]> : "
                                        f"tensor<{len(pairs)}x2xi64>")


@lowers("all_to_all")
def _lower_all_to_all(p, op):
    a = op.attrs
    p.generic(op, "all_to_all", f"split_dimension = {a['split_dimension']} : i64, "
                                f"concat_dimension = {a['concat_dimension']} : i64, "
                                f"split_count = {a['axis_size']} : i64, {_groups(op)}")


@lowers("axis_index")
def _lower_axis_index(p, op):
    replica = p.fresh()
    p.emit(f'{replica} = "stablehlo.replica_id"() : () -> tensor<ui32> {location(op)}')
    lhs = p.bind_results(op)
    p.emit(f'{lhs} = "stablehlo.convert"({replica}) : (tensor<ui32>) -> tensor<i32> '
           f"{location(op)}")


# --- derivatives -----------------------------------------------------------------------------

for _name in ("psum", "all_gather", "psum_scatter", "ppermute", "all_to_all"):
    linear_jvp(_name)
nondifferentiable("axis_index")


@vjp_rule("psum")
def _psum_vjp(b, op, primals, results, cts):
    return [_again(b, op, cts[0]) if is_float(primals[0]) else None]


@vjp_rule("all_gather")
def _all_gather_vjp(b, op, primals, results, cts):
    if not is_float(primals[0]):
        return [None]
    return [collective(b, "psum_scatter", cts[0], op.attrs[COLLECTIVE_AXIS],
                       op.attrs["axis_size"], dimension=op.attrs["dimension"])]


@vjp_rule("psum_scatter")
def _psum_scatter_vjp(b, op, primals, results, cts):
    if not is_float(primals[0]):
        return [None]
    return [collective(b, "all_gather", cts[0], op.attrs[COLLECTIVE_AXIS],
                       op.attrs["axis_size"], dimension=op.attrs["dimension"])]


@vjp_rule("ppermute")
def _ppermute_vjp(b, op, primals, results, cts):
    if not is_float(primals[0]):
        return [None]
    return [_again(b, op, cts[0], pairs=tuple((t, s) for s, t in op.attrs["pairs"]))]


@vjp_rule("all_to_all")
def _all_to_all_vjp(b, op, primals, results, cts):
    if not is_float(primals[0]):
        return [None]
    a = op.attrs
    return [_again(b, op, cts[0], split_dimension=a["concat_dimension"],
                   concat_dimension=a["split_dimension"])]


def _extremum_weights(b, op, x, result):
    """Where the replica holds the extremum: 1 / (how many replicas hold it), else 0."""
    holds = b.convert(b.eq(x, result), x.dtype)
    count = collective(b, "psum", holds, op.attrs[COLLECTIVE_AXIS], op.attrs["axis_size"])
    return b.div(holds, count)


@jvp_rule("pmax", "pmin")
def _extremum_jvp(b, op, primals, tangents):
    (x,), (t,) = primals, tangents
    result = _again(b, op, x)
    if t is None or not is_float(result):
        return [result], [None]
    weighted = b.mul(_extremum_weights(b, op, x, result), t)
    return [result], [collective(b, "psum", weighted, op.attrs[COLLECTIVE_AXIS],
                                 op.attrs["axis_size"])]


@vjp_rule("pmax", "pmin")
def _extremum_vjp(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    if not is_float(x):
        return [None]
    total = collective(b, "psum", ct, op.attrs[COLLECTIVE_AXIS], op.attrs["axis_size"])
    return [b.mul(total, _extremum_weights(b, op, x, results[0]))]


# --- batching --------------------------------------------------------------------------------
# Over another axis (a pmap's, or an outer vmap's) the collective runs on the whole batched
# operand, its batch dimension first and its dimension attributes shifted past it.  Over
# the axis being batched (`binds_batching_axis`), lane j is member j of the axis.

def _shifted(op, x, dim):
    """``op`` over another axis applied to ``x`` batched along ``dim``: (results, dims)."""
    changes = {key: op.attrs[key] + 1 for key in ("dimension", "split_dimension",
                                                  "concat_dimension") if key in op.attrs}
    return lambda b: ([_again(b, op, to_front(b, x, dim), **changes)], [0])


def _constant_like(b, value, x):
    return b.constant(np.asarray(value, x.dtype))


def _times(b, x, n):
    return b.mul(x, b.broadcast_in_dim(_constant_like(b, n, x), x.shape, ()))


@batching_rule("psum", "pmax", "pmin")
def _batch_reducing(b, op, operands, dims):
    (x,), (d,) = operands, dims
    if not binds_batching_axis(op):
        return _shifted(op, x, d)(b)
    if d is None:
        return [_times(b, x, op.attrs["axis_size"]) if op.name == "psum" else x], [None]
    kind = {"psum": "sum", "pmax": "max", "pmin": "min"}[op.name]
    return [b.reduce(x, kind, [d])], [None]


def _lanes_first(b, x, d, n):
    return to_front(b, x, d, n)


@batching_rule("all_gather")
def _batch_all_gather(b, op, operands, dims):
    (x,), (d,) = operands, dims
    if not binds_batching_axis(op):
        return _shifted(op, x, d)(b)
    n, dim = op.attrs["axis_size"], op.attrs["dimension"]
    lanes = _lanes_first(b, x, d, n)          # (n, *lane shape)
    shape = lanes.shape[1:]
    order = list(range(1, dim + 1)) + [0] + list(range(dim + 1, lanes.ndim))
    moved = b.transpose(lanes, order)        # (lane shape[:dim], n, lane shape[dim:])
    merged = shape[:dim] + (n * shape[dim],) + shape[dim + 1:]
    return [b.reshape(moved, merged)], [None]


@batching_rule("psum_scatter")
def _batch_psum_scatter(b, op, operands, dims):
    (x,), (d,) = operands, dims
    if not binds_batching_axis(op):
        return _shifted(op, x, d)(b)
    n, dim = op.attrs["axis_size"], op.attrs["dimension"]
    total = _times(b, x, n) if d is None else b.reduce(x, "sum", [d])
    shape = total.shape
    split = shape[:dim] + (n, shape[dim] // n) + shape[dim + 1:]
    chunks = b.reshape(total, split)
    order = [dim] + [k for k in range(len(split)) if k != dim]
    return [b.transpose(chunks, order)], [0]


@batching_rule("ppermute")
def _batch_ppermute(b, op, operands, dims):
    (x,), (d,) = operands, dims
    if not binds_batching_axis(op):
        return _shifted(op, x, d)(b)
    n = op.attrs["axis_size"]
    lanes = _lanes_first(b, x, d, n)
    source = {t: s for s, t in op.attrs["pairs"]}
    one_lane = (1,) + lanes.shape[1:]
    zero = b.broadcast_in_dim(_constant_like(b, 0, lanes), one_lane, ())
    rows = [b.slice(lanes, [source[k]] + [0] * (lanes.ndim - 1),
                    [source[k] + 1] + list(lanes.shape[1:])) if k in source else zero
            for k in range(n)]
    return [b.concatenate(rows, 0)], [0]


@batching_rule("all_to_all")
def _batch_all_to_all(b, op, operands, dims):
    (x,), (d,) = operands, dims
    if not binds_batching_axis(op):
        return _shifted(op, x, d)(b)
    n, a = op.attrs["axis_size"], op.attrs
    split, concat = a["split_dimension"], a["concat_dimension"]
    lanes = _lanes_first(b, x, d, n)              # [j, *S]: lane j's operand
    shape = lanes.shape[1:]
    chunk = shape[split] // n
    # [j, S[:split], k, chunk, S[split+1:]]: chunk k of lane j goes to lane k
    parts = b.reshape(lanes, (n,) + shape[:split] + (n, chunk) + shape[split + 1:])
    k_at = split + 1
    rest = [i for i in range(1, parts.ndim) if i != k_at]   # S with S[split] -> chunk
    # [k, S', ...] with j inserted before S'[concat], then j merged into it
    order = [k_at] + rest[:concat] + [0] + rest[concat:]
    moved = b.transpose(parts, order)
    lane_shape = list(shape)
    lane_shape[split] = chunk
    out = lane_shape[:concat] + [n * lane_shape[concat]] + lane_shape[concat + 1:]
    return [b.reshape(moved, (n,) + tuple(out))], [0]


@batching_rule("axis_index")
def _batch_axis_index(b, op, operands, dims):
    if not binds_batching_axis(op):
        return [_again(b, op, None)], [None]
    return [b.iota((op.attrs["axis_size"],), np.int32, 0)], [0]
