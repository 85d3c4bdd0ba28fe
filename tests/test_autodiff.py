"""Autodiff (`runtime/autodiff`): every primitive's JVP and VJP, the transforms' API, and
differentiation through control flow.

Two oracles for every derivative, both float64:
* central finite differences of the plain NumPy function (step 1e-6, rtol ~1e-6);
* JAX (``jax.grad``/``jax.jvp``/``jax.jacfwd``/...) on the same program written with
  ``jax.numpy`` (rtol ~1e-10).  For most corpus functions "the same program" is the corpus
  function itself with ``np`` bound to ``jax.numpy`` (`as_jax`); the others are spelled
  out here.  JAX is only the oracle: the product never imports ``jax.numpy``.

The differentiated functions live in `ad_corpus.functions` (the transpiler reads source,
so they are module-level functions of a ``.py`` file).  Array functions are reduced to a
scalar with a *non-uniform* weight (`weighted_sum`): a cotangent of ones would hide a
transpose rule that permutes elements.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_corpus import functions as F
from ad_corpus.functions import weighted_sum
from ad_corpus.oracles import JAX_ATOL, JAX_RTOL, as_jax, close, close_tree, jax_x64  # noqa: F401
from runtime import loop_unrolling
from transpiler import (PSCTypeError, PSCValueError, grad, hessian, jacfwd, jacrev, jit_ps,
                        jvp, value_and_grad, vjp)

FD_STEP = 1e-6
FD_RTOL, FD_ATOL = 1e-6, 1e-7


# --- oracles -----------------------------------------------------------------------------------

def fd_jvp(fn, args, tangents, h=FD_STEP):
    """Central difference of ``fn`` at ``args`` along ``tangents`` (None: held fixed)."""
    plus = [a if t is None else a + h * t for a, t in zip(args, tangents)]
    minus = [a if t is None else a - h * t for a, t in zip(args, tangents)]
    hi, lo = fn(*plus), fn(*minus)
    return (np.asarray(hi, np.float64) - np.asarray(lo, np.float64)) / (2 * h)


def fd_grad(scalar_fn, args, position, h=FD_STEP):
    """Gradient of ``scalar_fn`` with respect to ``args[position]``, coordinate-wise."""
    x = np.asarray(args[position], np.float64)
    out = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[k] = 1.0
        tangents = [None] * len(args)
        tangents[position] = e
        out[k] = fd_jvp(scalar_fn, args, tangents, h)
    return out



# --- the primitive table -----------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    name: str
    fn: Callable
    args: tuple
    diff: tuple = None          # positions differentiated; default: every float argument
    jax_fn: Callable = None     # default: as_jax(fn)

    def __post_init__(self):
        self.args = tuple(np.asarray(a) for a in self.args)
        if self.diff is None:
            self.diff = tuple(i for i, a in enumerate(self.args) if a.dtype.kind == "f")
        if self.jax_fn is None:
            self.jax_fn = as_jax(self.fn)

    def __repr__(self):
        return self.name


R = np.random.default_rng(20240601)


def u(lo, hi, *shape):
    return R.uniform(lo, hi, shape)


def n(*shape):
    return R.standard_normal(shape)


def _setitem_jax(x):
    y = x.at[1].set(x[0] ** 2)
    y = y.at[3:5].set(jnp.sin(x[:2]))
    return y * x


def _setitem_add_jax(x):
    y = x.at[1:3].add(x[:2] * 2.0)
    return y.at[0].multiply(x[-1])


def _setitem_dynamic_jax(x, i):
    y = jnp.zeros_like(x).at[i].set(x[i] ** 2)
    return y.at[i + 1].add(jnp.exp(x[0])) + x


ABS_INPUT = np.array([-1.5, -0.3, 0.0, 0.4, 2.0])
TIES_X = np.array([1.0, 2.0, 3.0, -1.0, 0.25])
TIES_Y = np.array([1.0, 0.5, 3.0, 2.0, 0.25])

CASES = [
    # element-wise, one operand
    Case("exp", F.ew_exp, (n(5),)),
    Case("log", F.ew_log, (u(0.5, 3, 5),)),
    Case("log1p", F.ew_log1p, (u(-0.5, 2, 5),)),
    Case("expm1", F.ew_expm1, (n(5),)),
    Case("sqrt", F.ew_sqrt, (u(0.5, 3, 5),)),
    Case("cbrt", F.ew_cbrt, (u(0.5, 3, 5),)),
    Case("sin", F.ew_sin, (n(5),)),
    Case("cos", F.ew_cos, (n(5),)),
    Case("tan", F.ew_tan, (u(-1.2, 1.2, 5),)),
    Case("tanh", F.ew_tanh, (n(5),)),
    Case("arcsin", F.ew_arcsin, (u(-0.8, 0.8, 5),)),
    Case("arccos", F.ew_arccos, (u(-0.8, 0.8, 5),)),
    Case("arctan", F.ew_arctan, (n(5) * 2,)),
    Case("sinh", F.ew_sinh, (n(5),)),
    Case("cosh", F.ew_cosh, (n(5),)),
    Case("arcsinh", F.ew_arcsinh, (n(5) * 2,)),
    Case("arccosh", F.ew_arccosh, (u(1.2, 3, 5),)),
    Case("arctanh", F.ew_arctanh, (u(-0.8, 0.8, 5),)),
    Case("abs", F.ew_abs, (np.array([-1.5, -0.3, 0.4, 2.0]),)),
    # abs at 0 is a convention (JAX's: abs'(0) = 1), which central differences cannot
    # check: test_tie_conventions_are_jax_s compares it with JAX directly
    Case("negative_square", F.ew_negative_square, (n(2, 3),)),
    Case("reciprocal", F.ew_reciprocal, (u(0.5, 2, 5),)),
    Case("log2_log10_exp2", F.ew_log2_log10_exp2, (u(0.5, 2, 5),)),
    Case("power_int_exponent", F.ew_power_int, (n(5),)),
    Case("power_float_exponent", F.ew_power_float, (u(0.5, 2, 5),)),
    Case("clip", F.ew_clip, (np.array([-1.2, -0.3, 0.1, 0.5, 1.4]),)),
    Case("where", F.ew_where, (np.array([-1.2, -0.3, 0.1, 0.5, 1.4]),)),
    Case("sigmoid", F.ew_sigmoid, (n(5),)),
    Case("composite", F.ew_composite, (n(2, 3),)),
    # element-wise, two operands
    Case("add_sub_mul", F.bin_add_sub_mul, (n(4), n(4))),
    Case("divide", F.bin_divide, (n(4), u(0.5, 2, 4) * np.array([1, -1, 1, -1]))),
    Case("power_both", F.bin_power, (u(0.5, 2, 4), n(4))),
    Case("maximum_ties", F.bin_maximum, (TIES_X, TIES_Y)),
    Case("minimum_ties", F.bin_minimum, (TIES_X, TIES_Y)),
    Case("arctan2", F.bin_arctan2, (n(5), n(5))),
    Case("logaddexp", F.bin_logaddexp, (n(5), n(5))),
    Case("hypot", F.bin_hypot, (n(5), n(5))),
    Case("where_two", F.bin_where, (np.array([1.0, -2.0, 0.5]), np.array([0.0, 1.0, 2.0]))),
    # reductions
    Case("sum_axes", F.red_sum_axis, (n(3, 4),)),
    Case("mean", F.red_mean, (n(3, 4),)),
    Case("prod_with_zero", F.red_prod, (np.array([[1.5, 0.0, 2.0], [0.5, -1.2, 0.7]]),)),
    Case("prod_all_with_zero", F.red_prod_all, (np.array([1.5, 0.0, 2.0, -0.5]),)),
    Case("prod_all", F.red_prod_all, (np.array([1.5, -0.8, 2.0, 0.6]),)),
    Case("max_ties", F.red_max, (np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]),)),
    Case("min_ties", F.red_min, (np.array([[1.0, 0.5, 2.0], [0.5, 3.0, 1.0]]),)),
    Case("std", F.red_std, (n(4, 3),)),
    Case("var", F.red_var, (n(4, 3),)),
    Case("logsumexp", F.red_logsumexp, (n(3, 4),)),
    Case("cumsum", F.red_cumsum, (n(3, 4),)),
    Case("sort", F.red_sort, (np.array([0.3, -1.0, 2.5, 0.9, -0.2]),)),
    Case("sort_2d", F.red_sort_2d, (np.array([[0.3, -1.0], [2.5, 0.9], [-0.2, 0.1]]),)),
    # linear algebra
    Case("dot_vec", F.la_dot, (n(4), n(4))),
    Case("dot_mat", F.la_dot, (n(2, 3), n(3, 4))),
    Case("matmul", F.la_matmul, (n(3, 2), n(2, 4))),
    Case("matvec", F.la_matvec, (n(3, 3), n(3))),
    Case("batch_matmul", F.la_batch_matmul, (n(2, 3, 4), n(2, 4, 2))),
    Case("batch_matmul_broadcast", F.la_batch_matmul, (n(2, 3, 4), n(4, 2))),
    Case("einsum", F.la_einsum, (n(2, 3), n(3, 4))),
    Case("einsum_batch", F.la_einsum_batch, (n(2, 3, 4), n(2, 4, 2))),
    Case("tensordot", F.la_tensordot, (n(2, 3, 4), n(3, 4, 2))),
    Case("outer_inner", F.la_outer_inner, (n(3), n(3))),
    Case("norm", F.la_norm, (n(3, 4),)),
    Case("trace", F.la_trace, (n(3, 3),)),
    # shapes and broadcasting
    Case("broadcast", F.sh_broadcast, (n(3), n(4))),
    Case("broadcast_scalar", F.sh_broadcast_scalar, (n(2, 3), np.float64(0.7))),
    Case("reshape_transpose", F.sh_reshape_transpose, (n(12),)),
    Case("transpose_3d", F.sh_transpose_3d, (n(2, 3, 4),)),
    Case("concatenate_stack", F.sh_concatenate_stack, (n(3), n(3))),
    Case("stack_last_axis", F.sh_stack_axis, (n(2, 3), n(2, 3))),
    Case("swapaxes_flip", F.sh_swap_flip, (n(4, 3),)),
    Case("tile_repeat", F.sh_tile_repeat, (n(3),)),
    # indexing
    Case("slices_steps", F.ix_slices, (n(7),)),
    Case("slices_2d", F.ix_slices_2d, (n(4, 5),)),
    Case("negative_index", F.ix_negative, (n(4),)),
    Case("gather", F.ix_gather, (n(6),)),
    Case("gather_2d", F.ix_gather_2d, (n(3, 2),)),
    Case("dynamic_index", F.ix_dynamic, (n(5), np.int32(2))),
    Case("setitem", F.ix_setitem, (n(6),), jax_fn=_setitem_jax),
    Case("setitem_add", F.ix_setitem_add, (n(5),), jax_fn=_setitem_add_jax),
    Case("setitem_dynamic", F.ix_setitem_dynamic, (n(5), np.int32(1)),
         jax_fn=_setitem_dynamic_jax),
]


def _weights(case):
    out = np.asarray(case.fn(*case.args))
    assert out.dtype == np.float64
    return np.random.default_rng(len(case.name)).uniform(0.5, 1.5, out.shape)


def _jax_partial(case):
    """``case.jax_fn`` of the differentiated arguments only (the others closed over)."""
    def fn(*diff_args):
        full = list(case.args)
        for p, a in zip(case.diff, diff_args):
            full[p] = a
        return case.jax_fn(*full)
    return fn


def _tangents(case):
    rng = np.random.default_rng(7 + len(case.name))
    return tuple(rng.standard_normal(a.shape) if i in case.diff else np.zeros_like(a)
                 for i, a in enumerate(case.args))


_EXPECTED: dict = {}   # (kind, case name) -> oracle results, shared by the test variants


def _expected_grads(case, w):
    key = ("grad", case.name)
    if key not in _EXPECTED:
        scalar = functools.partial(weighted_sum, case.fn, w)
        jax_scalar = lambda *d: jnp.sum(_jax_partial(case)(*d) * w)  # noqa: E731
        jax_grads = jax.jit(jax.grad(jax_scalar, argnums=tuple(range(len(case.diff)))))(
            *[case.args[p] for p in case.diff])
        fd = [fd_grad(scalar, case.args, p) for p in case.diff]
        _EXPECTED[key] = fd, [np.asarray(g) for g in jax_grads]
    return _EXPECTED[key]


def _check_grads(case, grads, w):
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert len(grads) == len(case.diff)
    fd, theirs = _expected_grads(case, w)
    for g, g_fd, g_jax in zip(grads, fd, theirs):
        close(g, g_fd, FD_RTOL, FD_ATOL)
        close(g, g_jax, JAX_RTOL, JAX_ATOL)


def _expected_jvp(case, tangents):
    key = ("jvp", case.name)
    if key not in _EXPECTED:
        fd = fd_jvp(case.fn, case.args, [t if i in case.diff else None
                                          for i, t in enumerate(tangents)])
        _, jax_tangent = jax.jit(lambda p, t: jax.jvp(_jax_partial(case), p, t))(
            tuple(case.args[p] for p in case.diff), tuple(tangents[p] for p in case.diff))
        _EXPECTED[key] = fd, np.asarray(jax_tangent)
    return _EXPECTED[key]


def _check_jvp(case, out, tangent, tangents):
    close(out, case.fn(*case.args), 1e-12, 1e-12)
    fd, theirs = _expected_jvp(case, tangents)
    close(tangent, fd, FD_RTOL, FD_ATOL)
    close(tangent, theirs, JAX_RTOL, JAX_ATOL)


@jit_ps(static_argnames=("f", "argnums"))
def grad_in_jit(f, argnums, w, args):
    return grad(lambda w, *xs: weighted_sum(f, w, *xs), argnums=argnums)(w, *args)


@jit_ps(static_argnames=("f",))
def jvp_in_jit(f, args, tangents):
    return jvp(f, args, tangents)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_grad_from_python(case):
    """``grad`` called from plain Python (compiled), with respect to every float argument."""
    w = _weights(case)
    g = grad(functools.partial(weighted_sum, case.fn),
             argnums=tuple(p + 1 for p in case.diff))(w, *case.args)
    _check_grads(case, g, w)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_grad_inside_jit(case):
    """``grad`` of a lambda inside a ``@jit_ps`` function (reverse mode in the build)."""
    w = _weights(case)
    g = grad_in_jit(case.fn, tuple(p + 1 for p in case.diff), w, case.args)
    _check_grads(case, g, w)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jvp_from_python(case):
    tangents = _tangents(case)
    out, tangent = jvp(case.fn, case.args, tangents)
    _check_jvp(case, out, tangent, tangents)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jvp_inside_jit(case):
    tangents = _tangents(case)
    out, tangent = jvp_in_jit(case.fn, case.args, tangents)
    _check_jvp(case, out, tangent, tangents)


@jit_ps(static_argnames=("f", "diff"))
def hvp_case_in_jit(f, diff, w, args, vs):
    return F.hvp_two_ways(f, diff, w, args, vs)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_second_order(case):
    """Hessian-vector products of every case, forward-over-reverse and reverse-over-reverse,
    against JAX's forward-over-reverse."""
    w = _weights(case)
    vs = tuple(t for i, t in enumerate(_tangents(case)) if i in case.diff)
    forward, backward = hvp_case_in_jit(case.fn, case.diff, w, case.args, vs)
    jax_scalar = lambda *d: jnp.sum(_jax_partial(case)(*d) * w)  # noqa: E731
    jax_grad = jax.grad(jax_scalar, argnums=tuple(range(len(case.diff))))
    expected = jax.jit(lambda p, t: jax.jvp(jax_grad, p, t)[1])(
        tuple(case.args[p] for p in case.diff), vs)
    for f_hv, b_hv, e_hv in zip(forward, backward, expected):
        close(f_hv, e_hv, 1e-9, 1e-10)
        close(b_hv, e_hv, 1e-9, 1e-10)


def test_tie_conventions_are_jax_s():
    """max/min split the derivative evenly between tied operands; abs'(0) = 1, as JAX."""
    g = grad(functools.partial(weighted_sum, F.bin_maximum), argnums=(1, 2))(
        np.ones(5), TIES_X, TIES_Y)
    close(g[0], [0.5, 1.0, 0.5, 0.0, 0.5], 0, 0)
    close(g[1], [0.5, 0.0, 0.5, 1.0, 0.5], 0, 0)
    g = grad(functools.partial(weighted_sum, F.ew_abs), argnums=1)(np.ones(5), ABS_INPUT)
    close(g, [-1.0, -1.0, 1.0, 1.0, 1.0], 0, 0)
    close(g, jax.grad(lambda x: jnp.sum(jnp.abs(x)))(ABS_INPUT), 0, 0)
    g = grad(functools.partial(weighted_sum, F.red_max), argnums=1)(
        np.ones(2), np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]))
    close(g, [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], 0, 0)


# --- value_and_grad, argnums, has_aux, pytrees, integer arguments ---------------------------------

X3 = np.array([0.3, -1.2, 0.8])
Y3 = np.array([1.1, 0.4, -0.7])


def test_value_and_grad_argnums_tuple():
    value, (gx, gy) = value_and_grad(F.two_args, argnums=(0, 1))(X3, Y3)
    jv, (jgx, jgy) = jax.value_and_grad(as_jax(F.two_args), argnums=(0, 1))(X3, Y3)
    close(value, jv, 1e-12, 0)
    close(gx, jgx, JAX_RTOL, JAX_ATOL)
    close(gy, jgy, JAX_RTOL, JAX_ATOL)
    only_y = grad(F.two_args, argnums=1)(X3, Y3)
    close(only_y, jgy, JAX_RTOL, JAX_ATOL)
    assert not isinstance(only_y, tuple)
    single = grad(F.two_args, argnums=(1,))(X3, Y3)
    assert isinstance(single, tuple) and len(single) == 1


def test_value_and_grad_has_aux():
    (value, aux), g = value_and_grad(F.with_aux, has_aux=True)(X3, Y3)
    (jvalue, jaux), jg = jax.value_and_grad(as_jax(F.with_aux), has_aux=True)(X3, Y3)
    close(value, jvalue, 1e-12, 0)
    close(g, jg, JAX_RTOL, JAX_ATOL)
    assert set(aux) == {"residual", "n"}
    close(aux["residual"], X3 * Y3 - 1.0, 1e-12, 0)
    assert int(np.asarray(aux["n"])) == 3
    g2, aux2 = grad(F.with_aux, argnums=(0, 1), has_aux=True)(X3, Y3)
    assert isinstance(g2, tuple)
    close(g2[0], jg, JAX_RTOL, JAX_ATOL)
    close(aux2["residual"], X3 * Y3 - 1.0, 1e-12, 0)


def _mlp_params(rng, sizes=(3, 4, 2)):
    return [(rng.standard_normal((m, k)), rng.standard_normal(k))
            for m, k in zip(sizes[:-1], sizes[1:])]


def test_grad_wrt_list_of_tuples_keeps_structure():
    rng = np.random.default_rng(1)
    params, data = _mlp_params(rng), rng.standard_normal((5, 3))
    g = grad(F.pytree_loss)(params, data)
    assert isinstance(g, list) and len(g) == 2
    assert all(isinstance(layer, tuple) and len(layer) == 2 for layer in g)
    close_tree(g, jax.grad(as_jax(F.pytree_loss))(params, data))
    # and against finite differences, one leaf
    W0 = params[0][0]

    def loss_w0(W):
        return F.pytree_loss([(W, params[0][1]), params[1]], data)
    close(g[0][0], fd_grad(loss_w0, (W0,), 0), FD_RTOL, FD_ATOL)


def test_grad_wrt_dict_keeps_keys():
    p = {"scale": np.float64(1.3), "shift": np.array([0.1, -0.2, 0.3])}
    g = grad(F.dict_loss)(p, X3)
    assert isinstance(g, dict) and set(g) == {"scale", "shift"}
    close_tree(g, jax.grad(as_jax(F.dict_loss))(p, X3))


def test_grad_wrt_integer_argument_is_a_type_error():
    with pytest.raises(PSCTypeError, match="int"):
        grad(F.int_arg, argnums=1)(X3, np.array([1, 2, 3]))
    # differentiating only the float argument is fine: the int one is not differentiated
    close(grad(F.int_arg)(X3, np.array([1, 2, 3])), [1.0, 2.0, 3.0], 0, 0)


def test_grad_of_non_scalar_is_a_type_error():
    with pytest.raises(PSCTypeError, match="scalar"):
        grad(F.ew_sin)(X3)


@jit_ps
def grad_int_in_jit(x, k):
    return grad(F.int_arg, argnums=1)(x, k)


def test_grad_wrt_integer_argument_inside_jit_is_a_type_error():
    with pytest.raises(PSCTypeError):
        grad_int_in_jit(X3, np.array([1, 2, 3]))


def test_jvp_with_dict_and_python_scalar_primals():
    primals = ({"scale": 1.3, "shift": X3}, Y3)
    tangents = ({"scale": 1.0, "shift": Y3}, np.zeros(3))
    out, t = jvp(F.dict_loss, primals, tangents)
    jout, jt = jax.jvp(as_jax(F.dict_loss), primals, tangents)
    close(out, jout, 1e-12, 1e-12)
    close(t, jt, JAX_RTOL, JAX_ATOL)


def test_jvp_and_grad_argument_errors():
    with pytest.raises(PSCTypeError, match="structure"):
        jvp(F.two_args, (X3, Y3), (X3,))
    with pytest.raises(PSCTypeError, match="shape"):
        jvp(F.two_args, (X3, Y3), (X3, Y3[:2]))
    with pytest.raises(PSCValueError, match="argnums"):
        grad(F.two_args, argnums=2)(X3, Y3)


def test_float32_gradients_stay_float32():
    x = np.array([0.3, -1.2, 0.8], np.float32)
    g = grad(F.float32_fn)(x)
    assert np.asarray(g).dtype == np.float32
    expected = jax.grad(as_jax(F.float32_fn))(x)
    assert expected.dtype == np.float32
    np.testing.assert_allclose(np.asarray(g), np.asarray(expected), rtol=1e-6)
    out, t = jvp(F.float32_fn, (x,), (np.ones(3, np.float32),))
    assert np.asarray(out).dtype == np.float32 and np.asarray(t).dtype == np.float32
    jac = jacrev(F.ew_tanh)(x)
    assert np.asarray(jac).dtype == np.float32


def test_results_are_float64_with_jax_x64_off():
    """Our runtime does not read JAX's x64 flag: float64 in, float64 out either way."""
    x = np.array([0.25, -0.5, 1.5, 0.75, -1.25])   # a shape compiled nowhere else
    with jax.enable_x64(False):
        assert jnp.ones(1).dtype == jnp.float32       # the flag really is off here
        g = grad(F.scalar_mixed)(x)
        _, t = jvp(F.vec_fn, (x,), (np.ones(5),))
        h = hessian(F.scalar_mixed)(x)
    assert jnp.ones(1).dtype == jnp.float64
    assert np.asarray(g).dtype == np.float64
    assert np.asarray(t).dtype == np.float64
    assert np.asarray(h).dtype == np.float64
    close(g, jax.grad(as_jax(F.scalar_mixed))(x), JAX_RTOL, JAX_ATOL)
    close(h, jax.hessian(as_jax(F.scalar_mixed))(x), 1e-9, 1e-11)


# --- Jacobians, Hessians, higher order ------------------------------------------------------------

JAC_CASES = [
    ("vec_fn", F.vec_fn, n(4)),
    ("mat_fn", F.mat_fn, n(3, 2)),
    ("mat_to_vec", F.mat_to_vec, n(2, 3)),
    ("scalar_out", F.scalar_mixed, n(3)),
]


@pytest.mark.parametrize("name,fn,x", JAC_CASES, ids=[c[0] for c in JAC_CASES])
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_jacobian(name, fn, x, mode):
    ours = (jacfwd if mode == "fwd" else jacrev)(fn)(x)
    theirs = (jax.jacfwd if mode == "fwd" else jax.jacrev)(as_jax(fn))(x)
    close(ours, theirs, JAX_RTOL, JAX_ATOL)
    # column k of the Jacobian is the finite difference along e_k
    flat = np.asarray(ours).reshape(np.shape(fn(x)) + (-1,))
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        close(flat[..., k], fd_jvp(fn, (x,), (e.reshape(x.shape),)), FD_RTOL, FD_ATOL)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_jacobian_wrt_second_argument(mode):
    x, y = n(3), n(2)
    ours = (jacfwd if mode == "fwd" else jacrev)(F.jac_two_args, argnums=1)(x, y)
    close(ours, jax.jacfwd(as_jax(F.jac_two_args), argnums=1)(x, y), JAX_RTOL, JAX_ATOL)


@jit_ps
def jacobians_in_jit(x):
    return jacfwd(F.vec_fn)(x), jacrev(F.vec_fn)(x)


def test_jacobians_inside_jit():
    x = n(4)
    fwd, rev = jacobians_in_jit(x)
    expected = jax.jacfwd(as_jax(F.vec_fn))(x)
    close(fwd, expected, JAX_RTOL, JAX_ATOL)
    close(rev, expected, JAX_RTOL, JAX_ATOL)


HESS_CASES = [("rosen", F.scalar_rosen, n(4)), ("mixed", F.scalar_mixed, n(3)),
              ("matrix", F.scalar_matrix, n(2, 3)), ("pow4_plus_prod_cos", F.quartic, n(4))]


@pytest.mark.parametrize("name,fn,x", HESS_CASES, ids=[c[0] for c in HESS_CASES])
def test_hessian(name, fn, x):
    ours = hessian(fn)(x)
    theirs = jax.hessian(as_jax(fn))(x)
    close(ours, theirs, 1e-9, 1e-10)
    h2 = np.asarray(ours).reshape(x.size, x.size)
    np.testing.assert_allclose(h2, h2.T, rtol=1e-9, atol=1e-10)


@jit_ps(static_argnames=("f",))
def hvp_in_jit(f, x, v):
    return F.hvp_of(f, x, v)


@jit_ps
def hvp_rosen_written_inline(x, v):
    return jvp(grad(F.scalar_rosen), (x,), (v,))


@pytest.mark.parametrize("name,fn,x", HESS_CASES, ids=[c[0] for c in HESS_CASES])
def test_hessian_vector_product_forward_over_reverse(name, fn, x):
    v = np.random.default_rng(3).standard_normal(x.shape)
    ours = hvp_in_jit(fn, x, v)
    theirs = jax.jvp(jax.grad(as_jax(fn)), (x,), (v,))[1]
    close(ours, theirs, 1e-9, 1e-10)


def test_hvp_returns_gradient_and_hvp():
    x, v = n(4), n(4)
    g, hv = hvp_rosen_written_inline(x, v)
    jg, jhv = jax.jvp(jax.grad(as_jax(F.scalar_rosen)), (x,), (v,))
    close(g, jg, JAX_RTOL, JAX_ATOL)
    close(hv, jhv, 1e-9, 1e-10)
    # from plain Python too
    pg, phv = jvp(grad(F.scalar_rosen), (x,), (v,))
    close(phv, jhv, 1e-9, 1e-10)


def test_third_order_grad():
    x = np.float64(0.7)
    ours = [grad(F.scalar_1d)(x), grad(grad(F.scalar_1d))(x), grad(grad(grad(F.scalar_1d)))(x)]
    jf = as_jax(F.scalar_1d)
    theirs = [jax.grad(jf)(x), jax.grad(jax.grad(jf))(x), jax.grad(jax.grad(jax.grad(jf)))(x)]
    for o, t in zip(ours, theirs):
        close(o, t, 1e-10, 1e-12)
    # d^3/dx^3 by finite differences of the second derivative (analytic form below)
    second = lambda t: (-np.sin(t) * t ** 3 + 6 * np.cos(t) * t ** 2 + 6 * np.sin(t) * t  # noqa
                        + np.exp(-t))
    close(ours[2], (second(x + 1e-6) - second(x - 1e-6)) / 2e-6, 1e-6, 1e-7)


@jit_ps
def grads_of_local_functions(x, y):
    return F.grad_of_local(x, y), F.grad_of_grad_sum(x)


def test_grad_of_local_function_and_lambda_closing_over_traced_values():
    x, y = n(3), n(3)
    g1, g2 = grads_of_local_functions(x, y)
    close(g1, np.cos(x) * y + 3 * x ** 2, 1e-12, 1e-12)
    inner = jax.grad(lambda z: jnp.sum(jnp.exp(z) * z))
    close(g2, np.sum(inner(x) * x), 1e-12, 1e-12)


@jit_ps
def vjp_in_jit(x, ct):
    out, pullback = vjp(F.la_matmul, x, x.T)
    return out, pullback(ct)


def test_vjp_inside_jit():
    x, ct = n(3, 2), n(3, 3)
    out, (ca, cb) = vjp_in_jit(x, ct)
    jout, jpull = jax.vjp(jnp.matmul, x, x.T)
    jca, jcb = jpull(ct)
    close(out, jout, 1e-12, 1e-12)
    close(ca, jca, JAX_RTOL, JAX_ATOL)
    close(cb, jcb, JAX_RTOL, JAX_ATOL)


def test_vjp_from_plain_python_is_an_error_with_a_hint():
    with pytest.raises(PSCValueError) as info:
        vjp(F.ew_sin, X3)
    assert "grad" in str(info.value)


# --- control flow -----------------------------------------------------------------------------------

def _check_scalar_grad(ours, fn, jax_fn, args, position=0):
    close(ours, jax.grad(jax_fn, argnums=position)(*args), JAX_RTOL, JAX_ATOL)
    close(ours, fd_grad(fn, args, position), FD_RTOL, FD_ATOL)


def _cf_if_jax(x):
    return jax.lax.cond(jnp.sum(x) > 0, lambda v: jnp.sum(v * jnp.sin(v)),
                        lambda v: jnp.sum(jnp.exp(v) - v ** 2), x)


@pytest.mark.parametrize("x", [np.array([0.5, 1.0, -0.2]), np.array([-0.5, -1.0, 0.2])],
                         ids=["true_side", "false_side"])
def test_grad_through_traced_if(x):
    _check_scalar_grad(grad(F.cf_if)(x), F.cf_if, _cf_if_jax, (x,))
    _, t = jvp(F.cf_if, (x,), (Y3,))
    close(t, jax.jvp(_cf_if_jax, (x,), (Y3,))[1], JAX_RTOL, JAX_ATOL)


def _cf_cond_jax(x, s):
    return jax.lax.cond(s > 0, lambda v: jnp.sum(v ** 3), lambda v: jnp.sum(jnp.cos(v) * s), x)


@pytest.mark.parametrize("s", [1.5, -0.5], ids=["true_side", "false_side"])
def test_grad_through_cond(s):
    s = np.float64(s)
    gx, gs = grad(F.cf_cond, argnums=(0, 1))(X3, s)
    jgx, jgs = jax.grad(_cf_cond_jax, argnums=(0, 1))(X3, s)
    close(gx, jgx, JAX_RTOL, JAX_ATOL)
    close(gs, jgs, JAX_RTOL, JAX_ATOL)
    close(gx, fd_grad(F.cf_cond, (X3, s), 0), FD_RTOL, FD_ATOL)


_JAX_BRANCHES = [lambda v: jnp.sum(v * v), lambda v: jnp.sum(jnp.tanh(v)), jnp.prod]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_grad_and_jvp_through_switch(k):
    k = np.int32(k)
    g = grad(F.cf_switch)(X3, k)
    _check_scalar_grad(g, F.cf_switch, lambda x, k: jax.lax.switch(k, _JAX_BRANCHES, x),
                       (X3, k))
    _, t = jvp(F.cf_switch, (X3, k), (Y3, np.int32(0)))
    close(t, fd_jvp(F.cf_switch, (X3, k), (Y3, None)), FD_RTOL, FD_ATOL)


@jit_ps(static_argnames=("n",))
def range_loop_grad(x, n):
    return grad(F.cf_range_loop)(x, n)


def _cf_range_loop_jax(x, n):
    acc = x
    for i in range(n):
        acc = jnp.sin(acc) * x + i * 0.1
    return jnp.sum(acc ** 2)


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_grad_through_for_range_static_n(steps):
    x = np.array([0.4, -0.9, 1.3])
    g = range_loop_grad(x, steps)
    _check_scalar_grad(g, lambda x: F.cf_range_loop(x, steps),
                       lambda x: _cf_range_loop_jax(x, steps), (x,))


def test_range_loop_stays_a_loop_in_reverse_mode():
    """The staged ``for`` is reversed with saved residuals, not unrolled: the program has a
    while loop, and its size does not grow with the trip count.  (Loops of cheap bodies
    run `loop_unrolling.FACTOR` copies per iteration and the remainder after the loop:
    trip counts with the same remainder give programs of the same size.)"""
    x = np.array([0.4, -0.9, 1.3])
    rounds = 100 * loop_unrolling.FACTOR
    short, long = range_loop_grad.lower(x, 3), range_loop_grad.lower(x, 50)
    longer = range_loop_grad.lower(x, 50 + rounds)
    assert "stablehlo.while" in short and "stablehlo.while" in long
    assert abs(len(longer) - len(long)) < 200


def _cf_fori_jax(x):
    def body(i, carry):
        s, v = carry
        v = jnp.tanh(v * 1.5 + s)
        return s + jnp.sum(v) * 0.1, v
    s, v = jax.lax.fori_loop(0, 5, body, (0.0, x))
    return s + jnp.sum(v * x)


def test_grad_through_fori_loop_static_bounds():
    x = np.array([0.2, -0.4, 0.9])
    _check_scalar_grad(grad(F.cf_fori)(x), F.cf_fori, _cf_fori_jax, (x,))
    close(hessian(F.cf_fori)(x), jax.hessian(_cf_fori_jax)(x), 1e-9, 1e-10)


def _cf_for_rows_jax(X, w):
    total = 0.0
    for row in X:
        total = total + jnp.tanh(jnp.dot(row, w)) ** 2
    return total


def test_grad_through_for_over_traced_array():
    X, w = n(4, 3), n(3)
    gX, gw = grad(F.cf_for_rows, argnums=(0, 1))(X, w)
    jgX, jgw = jax.grad(_cf_for_rows_jax, argnums=(0, 1))(X, w)
    close(gX, jgX, JAX_RTOL, JAX_ATOL)
    close(gw, jgw, JAX_RTOL, JAX_ATOL)
    close(gw, fd_grad(F.cf_for_rows, (X, w), 1), FD_RTOL, FD_ATOL)


def _cf_while_jax(x):
    return jax.lax.while_loop(lambda v: jnp.sum(v * v) < 10.0,
                              lambda v: v * 1.5 + jnp.sin(v), x)


@pytest.mark.parametrize("x", [np.array([0.3, 0.2]), np.array([4.0, 0.0])],
                         ids=["several_trips", "zero_trips"])
def test_jvp_through_traced_while(x):
    v = np.array([0.7, -1.1])
    out, t = jvp(F.cf_while_traced, (x,), (v,))
    jout, jt = jax.jvp(_cf_while_jax, (x,), (v,))
    close(out, jout, 1e-12, 1e-12)
    close(t, jt, JAX_RTOL, JAX_ATOL)
    close(t, fd_jvp(F.cf_while_traced, (x,), (v,)), FD_RTOL, FD_ATOL)
    jac = jacfwd(F.cf_while_traced)(x)
    close(jac, jax.jacfwd(_cf_while_jax)(x), JAX_RTOL, JAX_ATOL)


def test_jvp_through_while_loop_primitive():
    x, v = np.array([0.3, 0.2]), np.array([0.7, -1.1])
    _, t = jvp(F.cf_while_loop_primitive, (x,), (v,))
    close(t, fd_jvp(F.cf_while_loop_primitive, (x,), (v,)), FD_RTOL, FD_ATOL)


def sum_of_while_loop(x):
    return np.sum(F.cf_while_loop_primitive(x))


@pytest.mark.parametrize("transform,fn", [
    (grad, F.cf_while_reverse), (grad, sum_of_while_loop), (jacrev, F.cf_while_traced),
    (hessian, F.cf_while_reverse)], ids=["grad_while", "grad_while_loop", "jacrev_while",
                                         "hessian_while"])
def test_reverse_mode_through_traced_while_is_an_error_with_a_hint(transform, fn):
    with pytest.raises(PSCValueError) as info:
        transform(fn)(np.array([0.3, 0.2]))
    assert "while loop" in info.value.message
    assert info.value.hint and ("fori_loop" in info.value.hint or "range" in info.value.hint)


def _cf_early_return_jax(x):
    acc, result, done = x, 0.0, False
    for i in range(6):   # unrolled, with the same exits
        acc_new = acc * 1.3 + jnp.sin(acc)
        acc = jnp.where(done, acc, acc_new)
        hit = jnp.logical_and(jnp.logical_not(done), jnp.sum(acc) > 8.0)
        result = jnp.where(hit, jnp.sum(acc ** 2), result)
        done = jnp.logical_or(done, hit)
    return jnp.where(done, result, jnp.sum(acc))


@pytest.mark.parametrize("x", [np.array([0.5, 1.0]), np.array([-3.0, -2.0])],
                         ids=["returns_early", "runs_to_the_end"])
def test_grad_with_early_return_inside_a_loop(x):
    """A ``return`` inside a staged ``for`` over a static range (its trip count depends on
    the data, but is bounded by the static range)."""
    _check_scalar_grad(grad(F.cf_early_return)(x), F.cf_early_return, _cf_early_return_jax,
                       (x,))


def test_jvp_with_early_return_inside_a_loop():
    x, v = np.array([0.5, 1.0]), np.array([0.3, -0.8])
    _, t = jvp(F.cf_early_return, (x,), (v,))
    close(t, jax.jvp(_cf_early_return_jax, (x,), (v,))[1], JAX_RTOL, JAX_ATOL)


def test_grad_with_early_return_in_an_unrolled_loop():
    x = np.array([0.5, -1.0])
    g = grad(F.cf_early_return_unrolled)(x)
    _check_scalar_grad(g, F.cf_early_return_unrolled, as_jax(F.cf_early_return_unrolled), (x,))


def _cf_nested_loops_jax(x, w):
    for i in range(3):
        for j in range(2):
            x = jnp.tanh(x * w + j * 0.5)
    return jnp.sum(x * w)


def test_grad_through_nested_static_loops_reading_an_outer_value():
    x, w = np.array([0.3, -1.2, 0.8]), np.array([0.5, 1.1, -0.7])
    gx, gw = grad(F.cf_nested_loops, argnums=(0, 1))(x, w)
    jgx, jgw = jax.jit(jax.grad(_cf_nested_loops_jax, argnums=(0, 1)))(x, w)
    close(gx, jgx, JAX_RTOL, JAX_ATOL)
    close(gw, jgw, JAX_RTOL, JAX_ATOL)
    close(gw, fd_grad(F.cf_nested_loops, (x, w), 1), FD_RTOL, FD_ATOL)


def _cf_if_in_loop_jax(x):
    for i in range(4):
        x = jax.lax.cond(jnp.sum(x) > 1.0, lambda v: v * 0.5,
                         lambda v: v * 2.0 + jnp.sin(v), x)
    return jnp.sum(x ** 2)


@pytest.mark.parametrize("x", [np.array([0.3, -1.2, 0.8]), np.array([2.0, 1.0, 0.5])],
                         ids=["grows_then_halves", "halves_first"])
def test_grad_through_traced_if_inside_a_static_loop(x):
    _check_scalar_grad(grad(F.cf_if_in_loop)(x), F.cf_if_in_loop,
                       jax.jit(_cf_if_in_loop_jax), (x,))


def test_reverse_mode_error_points_at_the_while_loop():
    """The error names the user's line: the ``while`` statement that cannot be reversed
    (every PSCError raised while building carries a source location)."""
    import inspect
    lines, first = inspect.getsourcelines(F.cf_while_reverse)
    while_line = first + next(i for i, text in enumerate(lines) if "while " in text)
    with pytest.raises(PSCValueError) as info:
        grad(F.cf_while_reverse)(np.array([0.3, 0.2]))
    location = info.value.location
    assert location is not None, str(info.value)
    assert location.file.endswith("functions.py") and location.line == while_line, location


def test_grad_from_python_with_a_python_int_loop_bound():
    """As ``jax.grad(f)(x, 3)``: a Python int argument is a concrete value, so ``range(n)``
    and ``fori_loop(0, n, ...)`` have static bounds and can be reversed."""
    x = np.array([0.4, -0.9, 1.3])
    g = grad(F.cf_range_loop)(x, 3)
    close(g, jax.grad(_cf_range_loop_jax)(x, 3), JAX_RTOL, JAX_ATOL)
    g = grad(F.cf_fori_dynamic_bound)(x, 3)
    close(g, fd_grad(F.cf_fori_dynamic_bound, (x, 3), 0), FD_RTOL, FD_ATOL)


@jit_ps(static_argnames=("k",))
def fori_bound_static(x, k):
    return grad(F.cf_fori_dynamic_bound)(x, k)


@jit_ps
def fori_bound_traced(x, k):
    return grad(F.cf_fori_dynamic_bound)(x, k)


def test_fori_loop_bounds_static_or_traced():
    x = np.array([0.4, -0.9, 1.3])
    for k in (1, 3):
        close(fori_bound_static(x, k), fd_grad(F.cf_fori_dynamic_bound, (x, k), 0), FD_RTOL,
              FD_ATOL)
    with pytest.raises(PSCValueError) as info:
        fori_bound_traced(x, 3)
    assert "fori_loop" in info.value.hint


def test_grad_through_zero_trip_fixed_loops():
    """A fixed-trip loop that runs zero times passes the cotangent straight through."""
    x = np.array([0.4, -0.9, 1.3])
    close(fori_bound_static(x, 0), 2 * x, 1e-15, 0)            # sum(x * x)


def test_grad_through_element_assignment_in_a_staged_loop():
    x = np.array([0.3, -1.2, 0.8, 0.5])

    def jax_fn(x):
        y, acc = jnp.zeros_like(x), 0.0
        for i in range(x.shape[0]):
            acc = acc * 0.5 + x[i] ** 2
            y = y.at[i].set(acc)
        return jnp.sum(y * jnp.arange(x.shape[0]))
    _check_scalar_grad(grad(F.cf_setitem_in_loop)(x), F.cf_setitem_in_loop, jax_fn, (x,))


@pytest.mark.parametrize("flag", [1.0, -1.0], ids=["true_side", "false_side"])
def test_grad_through_cond_returning_an_int_and_an_array(flag):
    x = np.array([0.3, -1.2, 0.8])
    expected = np.full(3, 2.0) if flag > 0 else 2 * np.cos(x)
    close(grad(F.cf_cond_mixed)(x, flag), expected, 1e-14, 1e-14)


# --- composition and corner cases -------------------------------------------------------------------

def test_grad_wrt_a_value_closed_over_by_an_inner_grad():
    """grad of (a function whose body takes grad of a lambda closing over the outer
    argument): d/dy sum(grad_x sum(sin(x) * y)) = cos(x0)."""
    y, x0 = np.array([0.5, 1.1, -0.7]), np.array([0.3, -1.2, 0.8])
    close(grad(F.grad_wrt_closed_over)(y, x0), np.cos(x0), 1e-12, 1e-12)


def test_nested_jvp_keeps_perturbations_apart():
    """nested_jvp(x, y) = d/dy (d/dx x*y*y along 1) along 1 = 2y: the inner x-perturbation
    must not leak into the outer y-derivative (that would give 2y + 2x y or similar)."""
    x, y = np.array([0.3, -1.2]), np.array([0.5, 1.1])
    out, t = jvp(F.nested_jvp, (x, y), (np.zeros(2), np.ones(2)))
    close(out, 2 * y, 1e-12, 1e-12)
    close(t, [2.0, 2.0], 1e-12, 1e-12)
    _, t = jvp(F.nested_jvp, (x, y), (np.ones(2), np.zeros(2)))
    close(t, [0.0, 0.0], 0, 0)


def test_grad_of_a_jit_ps_function():
    x, y = X3, Y3
    g_plain = grad(jit_two_args)(x, y)
    g_inside = grad_of_jitted(x, y)
    expected = jax.grad(as_jax(F.two_args))(x, y)
    close(g_plain, expected, JAX_RTOL, JAX_ATOL)
    close(g_inside, expected, JAX_RTOL, JAX_ATOL)


jit_two_args = jit_ps(F.two_args)


@jit_ps
def grad_of_jitted(x, y):
    return grad(jit_two_args)(x, y)


def test_grad_of_a_function_not_depending_on_the_argument_is_zero():
    g = grad(F.independent)(X3, Y3)
    close(g, np.zeros(3), 0, 0)
    gx, gy = grad(F.independent, argnums=(0, 1))(X3, Y3)
    close(gx, np.zeros(3), 0, 0)
    close(gy, 2 * Y3, 1e-15, 0)


def test_grad_of_a_constant_function_is_zero_as_in_jax():
    """JAX: ``grad(lambda x: 2.0)(x)`` is zeros; a Python float *is* a real scalar."""
    assert float(jax.grad(as_jax(F.const_fn))(1.5)) == 0.0
    g = grad(F.const_fn)(X3)
    close(g, np.zeros(3), 0, 0)


def test_grad_of_a_loop_over_an_empty_array_is_zero():
    """``total = 0.0; for row in X: ...`` with no rows returns the Python float 0.0."""
    X, w = np.zeros((0, 3)), np.array([0.5, 1.1, -0.7])
    gX, gw = grad(F.cf_for_rows, argnums=(0, 1))(X, w)
    jgX, jgw = jax.grad(_cf_for_rows_jax, argnums=(0, 1))(X, w)
    close(gX, jgX, 0, 0)
    close(gw, jgw, 0, 0)


def test_grad_accepts_keyword_arguments_as_in_jax():
    """JAX passes keyword arguments through (never differentiated)."""
    expected = jax.grad(as_jax(F.two_args))(X3, y=Y3)
    close(grad(F.two_args)(X3, y=Y3), expected, JAX_RTOL, JAX_ATOL)


def test_grad_wrt_python_float_argument():
    g = grad(F.scalar_1d)(0.7)
    assert np.asarray(g).shape == () and np.asarray(g).dtype == np.float64
    close(g, jax.grad(as_jax(F.scalar_1d))(0.7), JAX_RTOL, JAX_ATOL)


def test_grad_through_dtype_conversions():
    """float64 -> float32 -> float64 carries the cotangent back (float32 rounding);
    floor and integer-valued pieces carry none."""
    x = np.array([0.3, -1.2, 0.8])
    g = grad(F.astype_mix)(x)
    expected = jax.grad(as_jax(F.astype_mix))(x)
    close(g, expected, 1e-6, 1e-7)
    close(g, 2 * x + np.floor(x), 1e-6, 1e-7)


# --- the jit_ps side: lowered program, generated source, compilation cache --------------------

@jit_ps
def loss_and_grad(x, y):
    return F.two_args(x, y), grad(F.two_args)(x, y)


@jit_ps
def loss_only(x, y):
    return F.two_args(x, y)


def test_lowered_program_contains_the_backward_pass():
    fwd, both = loss_only.lower(X3, Y3), loss_and_grad.lower(X3, Y3)
    assert "stablehlo." in both
    assert both.count("stablehlo.") > 2 * fwd.count("stablehlo.")
    assert both.count("stablehlo.cosine") >= 1           # d sin = cos: backward only
    assert "stablehlo.cosine" not in fwd
    value, g = loss_and_grad(X3, Y3)
    close(value, F.two_args(X3, Y3), 1e-12, 0)
    close(g, jax.grad(as_jax(F.two_args))(X3, Y3), JAX_RTOL, JAX_ATOL)


def test_generated_source_keeps_grad_as_written():
    src = loss_and_grad.generated_source
    assert "grad(F.two_args)(x, y)" in src
    assert "def build_loss_and_grad" in src


def test_plain_python_grad_compiles_once_per_signature():
    from runtime.autodiff import api
    f = grad(F.compiled_once)
    first = np.asarray(f(X3))
    second = np.asarray(grad(F.compiled_once)(X3))   # a fresh wrapper, same function
    np.testing.assert_array_equal(first, second)
    close(first, np.cos(X3) * X3 + np.sin(X3), 1e-14, 1e-15)
    staged = [s for key, s in api._staged_cache.items()
              if key[:2] == ("value_and_grad", F.compiled_once)]
    assert len(staged) == 1
    assert staged[0].cache_info().misses == 1
    f(X3 + 1.0)                                         # same signature: no compilation
    assert staged[0].cache_info().misses == 1
    f(X3.astype(np.float32))                            # a new signature: compiles again
    assert staged[0].cache_info().misses == 2


def test_jit_function_using_grad_compiles_once():
    before = loss_and_grad.cache_info().misses
    a = loss_and_grad(X3, Y3)
    b = loss_and_grad(X3 + 1.0, Y3)
    assert loss_and_grad.cache_info().misses <= before + 1
    assert not np.allclose(np.asarray(a[1]), np.asarray(b[1]))
