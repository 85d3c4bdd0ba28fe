"""jax.lax's convolutions: ``conv_general_dilated``, ``conv``, ``conv_with_general_padding``,
``conv_transpose``, ``conv_dimension_numbers``, ``ConvDimensionNumbers``.

Each resolves its options (padding strings, dimension-number strings, defaults) to the
canonical attributes of the ``conv_general_dilated`` primitive
(`runtime.primitives.convolution`), with jax.lax's rules, and works inside PSC code and
from plain Python (`runtime.lax_functions`).  ``precision`` is accepted and ignored (the
CPU computes at the operands' precision); ``preferred_element_type`` converts the
operands to that dtype first.
"""
from __future__ import annotations

from typing import NamedTuple

from .errors import PSCTypeError, PSCValueError
from .lax_functions import lax_function
from .windowed import padtype_to_pads   # jax.lax's, shared with reduce_window
from .primitives.convolution import conv_general_dilated as _emit_conv


class ConvDimensionNumbers(NamedTuple):
    """Dimension permutations: ``lhs_spec`` (batch, feature, spatial...), ``rhs_spec`` (output
    feature, input feature, spatial...), ``out_spec`` (batch, feature, spatial...)."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, a `ConvDimensionNumbers`, or three strings such as
    ``('NHWC', 'HWIO', 'NHWC')``) as a `ConvDimensionNumbers`."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise PSCTypeError(f"convolution needs input and kernel of one rank, got shapes "
                           f"{list(lhs_shape)} and {list(rhs_shape)}")
    if dimension_numbers is None:
        identity = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(identity, identity, identity)
    if not (isinstance(dimension_numbers, (list, tuple)) and len(dimension_numbers) == 3
            and all(isinstance(s, str) for s in dimension_numbers)):
        raise PSCTypeError(f"convolution dimension_numbers must be None, a "
                           f"ConvDimensionNumbers or three strings, got {dimension_numbers!r}",
                           hint="e.g. ('NCHW', 'OIHW', 'NCHW') or ('NHWC', 'HWIO', 'NHWC')")
    for spec in dimension_numbers:
        if len(spec) != len(lhs_shape):
            raise PSCTypeError(f"convolution dimension_numbers {spec!r} must have one letter "
                               f"per dimension of the operands (rank {len(lhs_shape)})")
    return ConvDimensionNumbers(*_permutations(dimension_numbers))


def _permutations(specs):
    lhs, rhs, out = specs
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (first, second) in zip(specs, pairs):
        if spec.count(first) != 1 or spec.count(second) != 1 or len(set(spec)) != len(spec):
            raise PSCTypeError(f"convolution dimension_numbers {spec!r} must hold {first!r} "
                               f"and {second!r} once each and no letter twice")
    if not set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}:
        raise PSCTypeError(f"convolution dimension_numbers {tuple(specs)} must name the same "
                           "spatial letters in all three")

    def permutation(spec, first, second):
        # spatial dimensions in the order the kernel's spec names them (jax.lax's rule)
        spatial = sorted((i for i, c in enumerate(spec) if c not in (first, second)),
                         key=lambda i: rhs.index(spec[i]))
        return (spec.index(first), spec.index(second)) + tuple(spatial)
    return tuple(permutation(spec, *pair) for spec, pair in zip(specs, pairs))


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def _explicit_pads(padding, spatial: int) -> tuple:
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        pads = None
    if pads is None or len(pads) != spatial:
        raise PSCValueError(f"convolution padding must be a string or {spatial} (low, high) "
                            f"pairs, got {padding!r}",
                            hint="use 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs")
    return pads


def _spatial_option(value, spatial: int, what: str) -> tuple:
    if value is None:
        return (1,) * spatial
    value = tuple(int(v) for v in value)
    if len(value) != spatial:
        raise PSCValueError(f"convolution {what} has {len(value)} entries for {spatial} "
                            "spatial dimensions")
    return value


def _canonical(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers) -> dict:
    numbers = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    spatial = lhs.ndim - 2
    strides = _spatial_option(window_strides, spatial, "window_strides")
    lhs_dilation = _spatial_option(lhs_dilation, spatial, "lhs_dilation")
    rhs_dilation = _spatial_option(rhs_dilation, spatial, "rhs_dilation")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise PSCValueError("string padding is not supported with lhs_dilation",
                                hint="give explicit (low, high) pads, or use conv_transpose")
        windows = [_dilated(rhs.shape[d], r) for d, r in zip(numbers.rhs_spec[2:],
                                                              rhs_dilation)]
        pads = padtype_to_pads([lhs.shape[d] for d in numbers.lhs_spec[2:]], windows,
                               strides, padding)
    else:
        pads = _explicit_pads(padding, spatial)
    return dict(window_strides=strides, padding=pads, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, lhs_spec=numbers.lhs_spec,
                rhs_spec=numbers.rhs_spec, out_spec=numbers.out_spec)


def _preferred(b, values, preferred_element_type):
    if preferred_element_type is None:
        return values
    return [b.convert(v, preferred_element_type) for v in values]


@lax_function("lhs", "rhs")
def conv_general_dilated(b, lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """``jax.lax.conv_general_dilated``: an n-dimensional convolution with strides, padding
    (``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or (low, high) pairs), input and kernel
    dilation, dimension numbers, and feature or batch groups."""
    attrs = _canonical(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                       dimension_numbers)
    lhs, rhs = _preferred(b, [lhs, rhs], preferred_element_type)
    return _emit_conv(b, lhs, rhs, feature_group_count=feature_group_count,
                      batch_group_count=batch_group_count, **attrs)


@lax_function("lhs", "rhs")
def conv(b, lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``jax.lax.conv``: NCHW input, OIHW kernel, ``'SAME'`` or ``'VALID'`` padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding,
                                preferred_element_type=preferred_element_type)


@lax_function("lhs", "rhs")
def conv_with_general_padding(b, lhs, rhs, window_strides, padding, lhs_dilation,
                              rhs_dilation, precision=None, preferred_element_type=None):
    """``jax.lax.conv_with_general_padding``: `conv` with explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, preferred_element_type=preferred_element_type)


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _transpose_pads(kernel: int, stride: int, padding):
    """Pads of the fractionally strided convolution that undoes a forward one padded
    ``padding`` (jax.lax's conventions: Keras's Conv2DTranspose output sizes)."""
    if padding == "SAME":
        total = kernel + stride - 2
        low = kernel - 1 if stride > kernel - 1 else -(-total // 2)
    elif padding == "VALID":
        total = kernel + stride - 2 + max(kernel - stride, 0)
        low = kernel - 1
    else:
        low, high = (kernel - p - 1 for p in padding)
        total = low + high
    return low, total - low


@lax_function("lhs", "rhs")
def conv_transpose(b, lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """``jax.lax.conv_transpose``: the input dilated by ``strides`` and convolved; with
    ``transpose_kernel`` the kernel is flipped spatially and its feature roles swapped (the
    gradient of a forward convolution, as Keras's Conv2DTranspose)."""
    if dimension_numbers is None:
        if lhs.ndim not in _TRANSPOSE_DEFAULTS:
            raise PSCValueError(f"conv_transpose has no default dimension numbers for rank "
                                f"{lhs.ndim}", hint="pass dimension_numbers")
        dimension_numbers = _TRANSPOSE_DEFAULTS[lhs.ndim]
    numbers = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    spatial = lhs.ndim - 2
    rhs_dilation = _spatial_option(rhs_dilation, spatial, "rhs_dilation")
    strides = _spatial_option(strides, spatial, "strides")
    if use_consistent_padding or padding in ("SAME", "VALID"):
        kernels = [_dilated(rhs.shape[d], r) for d, r in zip(numbers.rhs_spec[2:],
                                                              rhs_dilation)]
        each = [padding] * spatial if isinstance(padding, str) else list(padding)
        pads = [_transpose_pads(k, s, p) for k, s, p in zip(kernels, strides, each)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = b.reverse(rhs, numbers.rhs_spec[2:])
        order = list(range(rhs.ndim))
        order[numbers.rhs_spec[0]], order[numbers.rhs_spec[1]] = \
            numbers.rhs_spec[1], numbers.rhs_spec[0]
        rhs = b.transpose(rhs, order)
    return conv_general_dilated(lhs, rhs, (1,) * spatial, pads, strides, rhs_dilation,
                                numbers, preferred_element_type=preferred_element_type)
