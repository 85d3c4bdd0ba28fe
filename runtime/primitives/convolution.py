"""Convolutions: ``conv_general_dilated`` (XLA's ConvGeneralDilated, StableHLO
``convolution``).

The attributes follow jax.lax's canonical form: ``lhs_spec`` is (batch, feature, spatial...)
dimensions of the input, ``rhs_spec`` (output feature, input feature, spatial...) of the
kernel, ``out_spec`` (batch, feature, spatial...) of the result; ``window_strides``,
``padding`` ((low, high) per spatial dimension), ``lhs_dilation`` and ``rhs_dilation`` are
per spatial dimension in the kernel's spatial order.  With ``feature_group_count`` G the
input features split into G groups, each convolved with its share of the kernel's output
features; with ``batch_group_count`` the batch splits the same way (the filter gradient of
a grouped convolution is one).

The convolution is bilinear: its JVP is two convolutions, its VJP a convolution of the
cotangent with the reversed kernel (input gradient) and of the input with the cotangent
(kernel gradient), the roles of strides and dilations swapped.  Under `vmap` the lane
dimension is folded into the batch dimension (input batched), the output features (kernel
batched), or the feature groups (both), and split out of the result again.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.tangents import is_float, zeros
from ..autodiff.trace import replay
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..lowering import i64, i64_array
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .support import fmt, require, same_dtypes

NAME = "conv_general_dilated"


def conv_general_dilated(b, lhs, rhs, *, window_strides, padding, lhs_dilation,
                         rhs_dilation, lhs_spec, rhs_spec, out_spec, feature_group_count=1,
                         batch_group_count=1):
    """Emit one ``conv_general_dilated`` on builder ``b`` (attributes as in the module
    docstring, canonical form: explicit pads and dimension permutations)."""
    return b.emit(NAME, [lhs, rhs], window_strides=_ints(window_strides),
                  padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                  lhs_dilation=_ints(lhs_dilation), rhs_dilation=_ints(rhs_dilation),
                  lhs_spec=_ints(lhs_spec), rhs_spec=_ints(rhs_spec),
                  out_spec=_ints(out_spec), feature_group_count=int(feature_group_count),
                  batch_group_count=int(batch_group_count))[0]


def _ints(values) -> tuple:
    return tuple(int(v) for v in values)


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


# --- check ----------------------------------------------------------------------------------

@checks(NAME)
def _check_conv(operands, attrs):
    lhs, rhs = operands
    same_dtypes(NAME, operands)
    require(not dtypes.is_bool(lhs.dtype) and not np.issubdtype(lhs.dtype, np.complexfloating),
            PSCTypeError, f"{NAME} needs real numeric operands, got {fmt(lhs)}",
            "convert bool operands; split complex ones into real and imaginary parts")
    require(lhs.ndim == rhs.ndim and lhs.ndim >= 2, PSCShapeError,
            f"{NAME}: input {fmt(lhs)} and kernel {fmt(rhs)} must have one rank, at least 2")
    _check_specs(lhs.ndim, attrs)
    _check_window(lhs.ndim - 2, attrs)
    _check_groups(lhs, rhs, attrs)
    return [(_result_shape(lhs.shape, rhs.shape, attrs), lhs.dtype)]


def _check_specs(ndim, attrs) -> None:
    for key in ("lhs_spec", "rhs_spec", "out_spec"):
        spec = attrs[key]
        require(sorted(spec) == list(range(ndim)), PSCValueError,
                f"{NAME}: {key} {list(spec)} must be a permutation of 0..{ndim - 1}")


def _check_window(spatial, attrs) -> None:
    for key in ("window_strides", "padding", "lhs_dilation", "rhs_dilation"):
        require(len(attrs[key]) == spatial, PSCValueError,
                f"{NAME}: {key} has {len(attrs[key])} entries for {spatial} spatial "
                "dimensions")
    for key in ("window_strides", "lhs_dilation", "rhs_dilation"):
        require(all(v >= 1 for v in attrs[key]), PSCValueError,
                f"{NAME}: {key} {list(attrs[key])} must be positive")


def _check_groups(lhs, rhs, attrs) -> None:
    groups, batch_groups = attrs["feature_group_count"], attrs["batch_group_count"]
    require(groups >= 1 and batch_groups >= 1, PSCValueError,
            f"{NAME}: feature_group_count {groups} and batch_group_count {batch_groups} "
            "must be positive")
    require(groups == 1 or batch_groups == 1, PSCValueError,
            f"{NAME}: at most one of feature_group_count ({groups}) and batch_group_count "
            f"({batch_groups}) may exceed 1")
    in_features = lhs.shape[attrs["lhs_spec"][1]]
    kernel_in = rhs.shape[attrs["rhs_spec"][1]]
    kernel_out = rhs.shape[attrs["rhs_spec"][0]]
    require(in_features % groups == 0 and in_features // groups == kernel_in, PSCShapeError,
            f"{NAME}: the input has {in_features} features, which in {groups} group(s) "
            f"do not match the kernel's {kernel_in} input features ({fmt(lhs)}, "
            f"kernel {fmt(rhs)})", "the kernel's input feature dimension must be the "
            "input's feature dimension divided by feature_group_count")
    require(kernel_out % groups == 0, PSCShapeError,
            f"{NAME}: the kernel's {kernel_out} output features are not a multiple of "
            f"feature_group_count {groups}")
    batch = lhs.shape[attrs["lhs_spec"][0]]
    require(batch % batch_groups == 0 and kernel_out % batch_groups == 0, PSCShapeError,
            f"{NAME}: batch_group_count {batch_groups} must divide the input batch size "
            f"{batch} and the kernel's {kernel_out} output features")


def _result_shape(lhs_shape, rhs_shape, attrs) -> tuple:
    lhs_spec, rhs_spec, out_spec = attrs["lhs_spec"], attrs["rhs_spec"], attrs["out_spec"]
    sizes = [lhs_shape[lhs_spec[0]] // attrs["batch_group_count"], rhs_shape[rhs_spec[0]]]
    for i, (lo, hi) in enumerate(attrs["padding"]):
        padded = _dilated(lhs_shape[lhs_spec[2 + i]], attrs["lhs_dilation"][i]) + lo + hi
        require(padded >= 0, PSCValueError,
                f"{NAME}: negative padding {(lo, hi)} is larger than spatial dimension "
                f"{i} of the input")
        window = _dilated(rhs_shape[rhs_spec[2 + i]], attrs["rhs_dilation"][i])
        stride = attrs["window_strides"][i]
        sizes.append(0 if padded < window or window == 0 else (padded - window) // stride + 1)
    shape = [0] * len(out_spec)
    for position, size in zip(out_spec, sizes):
        shape[position] = size
    return tuple(shape)


# --- lowering -------------------------------------------------------------------------------

def _layout(spec, first: str, second: str) -> str:
    """``[b, 0, 1, f]``: what each dimension of an operand is, in dimension order."""
    names = [""] * len(spec)
    names[spec[0]], names[spec[1]] = first, second
    for i, dim in enumerate(spec[2:]):
        names[dim] = str(i)
    return "[" + ", ".join(names) + "]"


@lowers(NAME)
def _lower_conv(p, op):
    a = op.attrs
    numbers = (f"{_layout(a['lhs_spec'], 'b', 'f')}x{_layout(a['rhs_spec'], 'o', 'i')}->"
               f"{_layout(a['out_spec'], 'b', 'f')}")
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in a["padding"])
    fields = [f"batch_group_count = {i64(a['batch_group_count'])}",
              f"dimension_numbers = #stablehlo.conv<{numbers}>",
              f"feature_group_count = {i64(a['feature_group_count'])}",
              f"lhs_dilation = {i64_array(a['lhs_dilation'])}",
              f"rhs_dilation = {i64_array(a['rhs_dilation'])}",
              f"window_strides = {i64_array(a['window_strides'])}"]
    if a["padding"]:   # (an empty padding is the default; `dense<>` of 0x2 would not parse)
        fields.append(f"padding = dense<[{pads}]> : tensor<{len(a['padding'])}x2xi64>")
    p.generic(op, "convolution", ", ".join(fields))


# --- derivatives ------------------------------------------------------------------------------

@jvp_rule(NAME)
def _conv_jvp(b, op, primals, tangents):
    (x, w), (tx, tw) = primals, tangents
    (result,) = replay(b, op, primals)
    terms = []
    if tx is not None:
        terms.append(replay(b, op, [tx, w])[0])
    if tw is not None:
        terms.append(replay(b, op, [x, tw])[0])
    tangent = b.add(*terms) if len(terms) == 2 else terms[0] if terms else None
    return [result], [tangent]


@vjp_rule(NAME)
def _conv_vjp(b, op, primals, results, cts):
    (x, w), (ct,) = primals, cts
    return [_input_gradient(b, op.attrs, ct, x, w) if is_float(x) else None,
            _kernel_gradient(b, op.attrs, ct, x, w) if is_float(w) else None]


def _swap_first_two(spec) -> tuple:
    return (spec[1], spec[0]) + tuple(spec[2:])


def _spatial(shape, spec) -> list:
    return [shape[d] for d in spec[2:]]


def _input_gradient(b, a, ct, x, w):
    """The transposed convolution: the cotangent, dilated by the strides, convolved with
    the spatially reversed kernel whose feature roles are swapped."""
    lhs_spec, rhs_spec, out_spec = a["lhs_spec"], a["rhs_spec"], a["out_spec"]
    groups, batch_groups = a["feature_group_count"], a["batch_group_count"]
    if groups > 1 or batch_groups > 1:
        # each group's output features become that group's input features of the transpose
        count = max(groups, batch_groups)
        w = split_axis(b, w, rhs_spec[0], count)
        w = merge_axis(b, w, rhs_spec[0], rhs_spec[1])
    lhs_dilated = [_dilated(n, d) for n, d in zip(_spatial(x.shape, lhs_spec), a["lhs_dilation"])]
    rhs_dilated = [_dilated(n, d) for n, d in zip(_spatial(w.shape, rhs_spec), a["rhs_dilation"])]
    out_dilated = [_dilated(n, s) for n, s in zip(_spatial(ct.shape, out_spec),
                                                  a["window_strides"])]
    padding = []
    for (lo, _), n, k, o in zip(a["padding"], lhs_dilated, rhs_dilated, out_dilated):
        before = k - lo - 1
        padding.append((before, n + k - 1 - o - before))
    grad = conv_general_dilated(
        b, ct, b.reverse(w, rhs_spec[2:]), window_strides=a["lhs_dilation"], padding=padding,
        lhs_dilation=a["window_strides"], rhs_dilation=a["rhs_dilation"], lhs_spec=out_spec,
        rhs_spec=_swap_first_two(rhs_spec), out_spec=lhs_spec,
        feature_group_count=max(groups, batch_groups))
    if batch_groups > 1:   # the groups' features were the input's batch groups
        grad = split_axis(b, grad, lhs_spec[1], batch_groups)
        grad = merge_axis(b, grad, lhs_spec[1], lhs_spec[0])
    return grad


def _kernel_gradient(b, a, ct, x, w):
    """A convolution of the input with the cotangent, batch and feature roles swapped:
    feature groups become batch groups and the other way round."""
    lhs_spec, rhs_spec, out_spec = a["lhs_spec"], a["rhs_spec"], a["out_spec"]
    lhs_dilated = [_dilated(n, d) for n, d in zip(_spatial(x.shape, lhs_spec), a["lhs_dilation"])]
    rhs_dilated = [_dilated(n, d) for n, d in zip(_spatial(w.shape, rhs_spec), a["rhs_dilation"])]
    out_dilated = [_dilated(n, s) for n, s in zip(_spatial(ct.shape, out_spec),
                                                  a["window_strides"])]
    padding = [(lo, o - n + k - lo - 1)
               for (lo, _), n, k, o in zip(a["padding"], lhs_dilated, rhs_dilated, out_dilated)]
    return conv_general_dilated(
        b, x, ct, window_strides=a["rhs_dilation"], padding=padding,
        lhs_dilation=a["lhs_dilation"], rhs_dilation=a["window_strides"],
        lhs_spec=_swap_first_two(lhs_spec), rhs_spec=_swap_first_two(out_spec),
        out_spec=_swap_first_two(rhs_spec), feature_group_count=a["batch_group_count"],
        batch_group_count=a["feature_group_count"])


# --- reshaping one axis into another (batching and grouped gradients) -------------------------

def merge_axis(b, x, src: int, dst: int):
    """Axis ``src`` merged into axis ``dst`` (numbered with ``src`` removed), ``src`` the
    major part of the merged axis."""
    order = [d for d in range(x.ndim) if d != src]
    order.insert(dst, src)
    x = b.transpose(x, order)
    shape = list(x.shape)
    shape[dst:dst + 2] = [shape[dst] * shape[dst + 1]]
    return b.reshape(x, shape)


def split_axis(b, x, src: int, major: int):
    """Axis ``src`` split into (``major``, the rest), in that order."""
    shape = list(x.shape)
    shape[src:src + 1] = [major, shape[src] // major]
    return b.reshape(x, shape)


# --- batching ---------------------------------------------------------------------------------

@batching_rule(NAME)
def _batch_conv(b, op, operands, dims):
    (x, w), (xd, wd), a = operands, dims, op.attrs
    lhs_spec, rhs_spec, out_spec = a["lhs_spec"], a["rhs_spec"], a["out_spec"]
    groups, batch_groups = a["feature_group_count"], a["batch_group_count"]
    attrs = dict(a)
    lanes = x.shape[xd] if xd is not None else w.shape[wd]
    if lanes == 0:   # no lane to fold into another dimension: an empty result
        return [zeros(b, (0,) + op.results[0].shape, x.dtype)], [0]
    if xd is not None and wd is not None:
        if batch_groups > 1:   # lanes become more batch groups (lane-major in the batch)
            x = merge_axis(b, x, xd, lhs_spec[0])
            attrs["batch_group_count"] = batch_groups * lanes
        else:                  # lanes become more feature groups
            x = merge_axis(b, x, xd, lhs_spec[1])
            attrs["feature_group_count"] = groups * lanes
        w = merge_axis(b, w, wd, rhs_spec[0])
        out = conv_general_dilated(b, x, w, **attrs)
        return [split_axis(b, out, out_spec[1], lanes)], [out_spec[1]]
    if xd is not None:
        if batch_groups == 1:   # lanes are more images
            out = conv_general_dilated(b, merge_axis(b, x, xd, lhs_spec[0]), w, **attrs)
        else:                   # lanes go inside each batch group: group-major stays
            batch = lhs_spec[0]
            x = split_axis(b, x, batch + (xd <= batch), batch_groups)
            x = merge_axis(b, x, xd + (batch < xd), batch + 1)
            x = merge_axis(b, x, batch, batch)
            out = conv_general_dilated(b, x, w, **attrs)
        return [split_axis(b, out, out_spec[0], lanes)], [out_spec[0]]
    if groups == 1 and batch_groups == 1:   # lanes are more output features
        out = conv_general_dilated(b, x, merge_axis(b, w, wd, rhs_spec[0]), **attrs)
        return [split_axis(b, out, out_spec[1], lanes)], [out_spec[1]]
    # lanes go inside each group's output features, so the groups stay outermost
    count, feat = max(groups, batch_groups), rhs_spec[0]
    w = split_axis(b, w, feat + (wd <= feat), count)
    w = merge_axis(b, w, wd + (feat < wd), feat + 1)
    w = merge_axis(b, w, feat, feat)
    out = conv_general_dilated(b, x, w, **attrs)
    out = split_axis(b, out, out_spec[1], count)            # (groups, lanes * per group)
    out = split_axis(b, out, out_spec[1] + 1, lanes)        # (groups, lanes, per group)
    return [merge_axis(b, out, out_spec[1], out_spec[1] + 1)], [out_spec[1]]
