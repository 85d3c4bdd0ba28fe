"""``transpiler.lax``'s convolutions against jax.lax's on the same inputs: values (float64,
to 1e-12), shapes and dtypes for every padding form, strides, dilations, feature and batch
groups and dimension numbers; derivatives against jax's; use inside ``jit_ps``; errors.

The primitive's batching rule and its derivatives against central differences are tested
through its cases in `tests/primitive_cases.py` (test_batching_rules, test_derivative_rules).
"""
from __future__ import annotations

import jax
import jax.lax as jlax
import numpy as np
import pytest

from ad_corpus.oracles import jax_x64  # noqa: F401 - jax computes in float64 here
from runtime import grad, jvp
from runtime.errors import PSCError, PSCShapeError, PSCTypeError, PSCValueError
from transpiler import jit_ps, lax


def _draw(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def _same(ours, theirs):
    theirs = np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# (input shape, kernel shape, keyword arguments of conv_general_dilated)
GENERAL = {
    "nchw_same_strided": ((2, 3, 6, 5), (4, 3, 3, 2),
                          dict(window_strides=(2, 1), padding="SAME")),
    "valid": ((1, 2, 5, 5), (3, 2, 2, 3), dict(window_strides=(1, 2), padding="VALID")),
    "same_lower": ((1, 2, 6, 4), (2, 2, 2, 3),
                   dict(window_strides=(2, 2), padding="SAME_LOWER")),
    "explicit_negative_pad": ((1, 1, 6, 6), (2, 1, 2, 2),
                              dict(window_strides=(1, 1), padding=[(2, -1), (-2, 1)])),
    "nhwc_dilated": ((2, 5, 6, 3), (2, 2, 3, 4),
                     dict(window_strides=(2, 1), padding=[(1, 0), (0, 2)],
                          lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                          dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "feature_groups_nhwc": ((2, 5, 4, 6), (3, 2, 3, 4),
                            dict(window_strides=(1, 1), padding="SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 feature_group_count=2)),
    "batch_groups_1d": ((4, 3, 7), (6, 3, 2),
                        dict(window_strides=(2,), padding="VALID", batch_group_count=2)),
    "mixed_specs_3d": ((1, 4, 3, 5, 2), (3, 2, 2, 2, 3),
                       dict(window_strides=(1, 2, 1), padding="SAME",
                            dimension_numbers=("NDHWC", "OIDHW", "NCDHW"))),
}


@pytest.mark.parametrize("name", list(GENERAL))
def test_conv_general_dilated_matches_jax(name):
    lhs_shape, rhs_shape, options = GENERAL[name]
    x, w = _draw(lhs_shape, rhs_shape)
    _same(lax.conv_general_dilated(x, w, **options), jlax.conv_general_dilated(x, w, **options))


def test_conv_dimension_numbers_object_and_wrappers():
    x, w = _draw((1, 2, 5, 4), (3, 2, 2, 2))
    numbers = lax.conv_dimension_numbers(x.shape, w.shape, ("NCHW", "OIHW", "NCHW"))
    assert tuple(numbers) == tuple(jlax.conv_dimension_numbers(x.shape, w.shape,
                                                                ("NCHW", "OIHW", "NCHW")))
    _same(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=numbers),
          jlax.conv_general_dilated(x, w, (1, 1), "SAME"))
    _same(lax.conv(x, w, (2, 1), "VALID"), jlax.conv(x, w, (2, 1), "VALID"))
    _same(lax.conv_with_general_padding(x, w, (1, 2), [(1, 1), (0, 1)], (2, 1), (1, 2)),
          jlax.conv_with_general_padding(x, w, (1, 2), [(1, 1), (0, 1)], (2, 1), (1, 2)))
    xi, wi = (np.round(3 * a).astype(np.int32) for a in (x, w))
    _same(lax.conv(xi, wi, (1, 1), "SAME"), jlax.conv(xi, wi, (1, 1), "SAME"))
    _same(lax.conv(x.astype(np.float32), w.astype(np.float32), (1, 1), "SAME",
                   preferred_element_type=np.float64),
          jlax.conv(x.astype(np.float32), w.astype(np.float32), (1, 1), "SAME",
                    preferred_element_type=np.float64))


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
def test_conv_transpose_matches_jax(padding):
    x, w = _draw((1, 4, 3, 2), (3, 2, 2, 5))
    for transpose_kernel in (False, True):
        kernel = w if not transpose_kernel else w.transpose(0, 1, 3, 2)
        _same(lax.conv_transpose(x, kernel, (2, 1), padding, rhs_dilation=(1, 2),
                                 transpose_kernel=transpose_kernel),
              jlax.conv_transpose(x, kernel, (2, 1), padding, rhs_dilation=(1, 2),
                                  transpose_kernel=transpose_kernel))


# --- derivatives ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["nhwc_dilated", "feature_groups_nhwc", "batch_groups_1d",
                                  "explicit_negative_pad"])
def test_derivatives_match_jax(name):
    lhs_shape, rhs_shape, options = GENERAL[name]
    x, w = _draw(lhs_shape, rhs_shape)
    tx, tw = _draw(lhs_shape, rhs_shape, seed=1)

    def ours(a, k):
        return lax.conv_general_dilated(a, k, **options)

    def theirs(a, k):
        return jlax.conv_general_dilated(a, k, **options)
    out, tangent = jvp(ours, (x, w), (tx, tw))
    want_out, want_tangent = jax.jvp(theirs, (x, w), (tx, tw))
    _same(out, want_out)
    _same(tangent, want_tangent)
    (ct,) = _draw(out.shape, seed=2)
    gx, gw = grad(lambda a, k: (ours(a, k) * ct).sum(), argnums=(0, 1))(x, w)
    want_gx, want_gw = jax.vjp(theirs, x, w)[1](ct)
    _same(gx, want_gx)
    _same(gw, want_gw)


# --- inside PSC code --------------------------------------------------------------------------

@jit_ps
def _conv_layer(x, w, bias):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return np.tanh(y + bias)


def test_inside_jit_ps_and_its_gradient():
    x, w, bias = _draw((2, 4, 4, 3), (3, 3, 3, 2), (2,))

    def theirs(x_, w_):
        y = jlax.conv_general_dilated(x_, w_, (1, 1), "SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.numpy.tanh(y + bias)
    _same(_conv_layer(x, w, bias), theirs(x, w))
    ours_grad = grad(lambda x_, w_: _conv_layer(x_, w_, bias).sum(), argnums=1)(x, w)
    _same(ours_grad, jax.grad(lambda x_, w_: theirs(x_, w_).sum(), argnums=1)(x, w))


# --- errors -----------------------------------------------------------------------------------

@jit_ps
def _mismatched(x, w):
    return lax.conv(x, w, (1, 1), "SAME")


def test_errors():
    x, w = _draw((1, 3, 4, 4), (2, 2, 3, 3))
    with pytest.raises(PSCShapeError, match="features") as caught:
        _mismatched(x, w)
    assert caught.value.location is not None and "lax.conv(x, w" in str(caught.value)
    with pytest.raises(PSCValueError, match="unrecognized padding type"):
        lax.conv(x, w[:, :1].repeat(3, 1), (1, 1), "FULL")
    with pytest.raises(PSCTypeError, match="dimension_numbers"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW"))
    with pytest.raises(PSCValueError, match="at most one"):
        lax.conv_general_dilated(np.ones((2, 2, 3)), np.ones((4, 1, 1)), (1,), "VALID",
                                 feature_group_count=2, batch_group_count=2)
    with pytest.raises(PSCValueError, match="padding"):
        lax.conv_general_dilated(x, w, (1, 1), [(1, 1)])
    with pytest.raises(PSCTypeError, match="one dtype"):
        lax.conv(x.astype(np.float32), w, (1, 1), "SAME")
    assert issubclass(PSCShapeError, PSCError)
