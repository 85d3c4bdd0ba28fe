"""``jacfwd``/``jacrev``/``hessian`` and the transform options (``argnums``, ``has_aux``,
``holomorphic``, ``allow_int``) at JAX parity (`runtime/autodiff/api.py`).

Oracles: ``jax.jacfwd``/``jax.jacrev``/``jax.hessian``/``jax.grad``/``jax.jvp`` on the same
program in ``jax.numpy`` (`as_jax`: the function below with ``np`` bound to ``jax.numpy``),
compared leaf by leaf with the pytree structure, dtype and shape; JAX's own error messages
for the dtype checks; central differences for functions with traced control flow.  The
last test checks that a Jacobian is one batched program: its size does not grow with the
number of basis vectors.
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_corpus.oracles import as_jax, close_tree, jax_x64  # noqa: F401
from transpiler import (PSCTypeError, grad, hessian, jacfwd, jacrev, jit_ps, jvp,
                        value_and_grad)

R = np.random.default_rng(1212)
D = {"a": R.standard_normal(3), "b": R.standard_normal((2, 2))}
Y = R.standard_normal(2)
Z = np.array([0.3 + 0.4j, -0.7 + 0.2j, 1.1 - 0.5j])


def tree_fn(d, y):
    u = np.sin(d["a"]) * y[0] + np.sum(d["b"] @ y)
    return {"u": u, "v": (np.sum(d["b"] * d["b"]) * y[1], y * d["a"][1])}


def scalar_tree_fn(d, y):
    return np.sum(np.tanh(d["a"]) * y[0]) + np.sum(d["b"] @ y) ** 2


def aux_fn(x, y):
    out = np.sin(x) * y[0]
    return out, {"norm": np.sum(out * out), "count": x.shape[0]}


def scalar_aux_fn(x, y):
    return np.sum(np.cos(x) * y[0]) * y[1], {"mean": np.mean(x)}


def holo_fn(z):
    return z ** 3 + np.sin(z) * z - np.exp(z) / (z + 2.0)


def holo_scalar_fn(z):
    return np.sum(holo_fn(z) * np.arange(1, z.shape[0] + 1))


def int_fn(x, k):
    return np.sum(np.sin(x) * k)


def complex_out_fn(x):
    return x * (1.0 + 2.0j)


def int_out_fn(x):
    return np.argmax(x)


def _same(actual, expected, rtol=1e-10, atol=1e-12):
    """Pytree structure, then each leaf's dtype, shape and values (complex too)."""
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree, (a_tree, e_tree)
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, e)


MODES = {"fwd": (jacfwd, jax.jacfwd), "rev": (jacrev, jax.jacrev)}


# --- structure: argnums and pytrees ------------------------------------------------------------

@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)], ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_jacobian_of_pytrees_has_jax_structure(mode, argnums):
    ours, theirs = MODES[mode]
    _same(ours(tree_fn, argnums=argnums)(D, Y),
          theirs(as_jax(tree_fn), argnums=argnums)(D, Y))


def test_hessian_of_pytrees_with_tuple_argnums():
    _same(hessian(scalar_tree_fn, argnums=(0, 1))(D, Y),
          jax.hessian(as_jax(scalar_tree_fn), argnums=(0, 1))(D, Y), 1e-9, 1e-11)


def test_float32_jacobians_keep_jax_dtypes():
    x = np.array([0.3, -1.2], np.float32)
    for mode in MODES:
        ours, theirs = MODES[mode]
        _same(ours(aux_fn, has_aux=True)(x, Y.astype(np.float32)),
              theirs(as_jax(aux_fn), has_aux=True)(x, Y.astype(np.float32)), 1e-6, 1e-6)


# --- has_aux ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_jacobian_has_aux(mode):
    ours, theirs = MODES[mode]
    x = D["a"]
    _same(ours(aux_fn, argnums=(0, 1), has_aux=True)(x, Y),
          theirs(as_jax(aux_fn), argnums=(0, 1), has_aux=True)(x, Y))


def test_hessian_and_grad_has_aux():
    x = D["a"]
    _same(hessian(scalar_aux_fn, argnums=(0, 1), has_aux=True)(x, Y),
          jax.hessian(as_jax(scalar_aux_fn), argnums=(0, 1), has_aux=True)(x, Y), 1e-9, 1e-11)
    _same(value_and_grad(scalar_aux_fn, has_aux=True)(x, Y),
          jax.value_and_grad(as_jax(scalar_aux_fn), has_aux=True)(x, Y))


def test_jvp_has_aux():
    x, t = D["a"], R.standard_normal(3)
    _same(jvp(lambda v: aux_fn(v, Y), (x,), (t,), has_aux=True),
          jax.jvp(lambda v: as_jax(aux_fn)(v, Y), (x,), (t,), has_aux=True))


@jit_ps
def jvp_aux_in_jit(x, t, y):
    return jvp(lambda v: aux_fn(v, y), (x,), (t,), has_aux=True)


def test_jvp_has_aux_inside_jit():
    x, t = D["a"], R.standard_normal(3)
    expected = jax.jvp(lambda v: as_jax(aux_fn)(v, Y), (x,), (t,), has_aux=True)
    out = jvp_aux_in_jit(x, t, Y)
    # inside jit_ps the static count comes back as the traced int it became
    _same(out[:2], expected[:2])
    assert int(out[2]["count"]) == 3
    np.testing.assert_allclose(out[2]["norm"], expected[2]["norm"], rtol=1e-12)


# --- holomorphic ----------------------------------------------------------------------------------

def test_holomorphic_grad_and_value_and_grad():
    _same(grad(holo_fn, holomorphic=True)(0.3 - 0.8j),
          jax.grad(as_jax(holo_fn), holomorphic=True)(0.3 - 0.8j))
    _same(value_and_grad(holo_scalar_fn, holomorphic=True)(Z),
          jax.value_and_grad(as_jax(holo_scalar_fn), holomorphic=True)(Z))


@pytest.mark.parametrize("mode", MODES)
def test_holomorphic_jacobians(mode):
    ours, theirs = MODES[mode]
    _same(ours(holo_fn, holomorphic=True)(Z), theirs(as_jax(holo_fn), holomorphic=True)(Z))


def test_holomorphic_hessian():
    _same(hessian(holo_scalar_fn, holomorphic=True)(Z),
          jax.hessian(as_jax(holo_scalar_fn), holomorphic=True)(Z), 1e-9, 1e-11)


def test_jacfwd_of_real_input_complex_output():
    x = D["a"]
    _same(jacfwd(complex_out_fn)(x), jax.jacfwd(as_jax(complex_out_fn))(x))


def abs_squares_fn(z):
    return np.sum(np.abs(z) ** 2 * np.arange(1, z.shape[0] + 1))


def complex_to_real_fn(z, x):
    return np.abs(z * x + 1.0) * x[0]


def test_grad_of_real_function_of_complex_input_uses_jax_convention():
    """JAX's gradient of a real f of complex z is df/dre(z) - i df/dim(z) (2 conj(z) for
    |z|**2): the transpose of the JVP, without conjugation."""
    _same(grad(abs_squares_fn)(Z), jax.grad(as_jax(abs_squares_fn))(Z))
    x = D["a"]
    _same(jacrev(complex_to_real_fn, argnums=(0, 1))(Z, x),
          jax.jacrev(as_jax(complex_to_real_fn), argnums=(0, 1))(Z, x))
    t = np.array([0.5 - 1.0j, 0.25j, -1.5 + 0.0j])
    _same(jvp(abs_fn, (Z,), (t,)), jax.jvp(as_jax(abs_fn), (Z,), (t,)))


# --- allow_int ------------------------------------------------------------------------------------

def test_grad_allow_int_gives_float0_zeros():
    x, k = D["a"], np.array([1, 2, 3])
    ours = grad(int_fn, argnums=(0, 1), allow_int=True)(x, k)
    theirs = jax.grad(as_jax(int_fn), argnums=(0, 1), allow_int=True)(x, k)
    assert ours[1].dtype == jax.dtypes.float0 == theirs[1].dtype
    assert ours[1].shape == theirs[1].shape
    _same(ours[0], theirs[0])


def test_jacrev_allow_int_gives_zeros_of_the_integer_dtype():
    x, k = D["a"], np.array([1, 2, 3])
    _same(jacrev(int_fn, argnums=(0, 1), allow_int=True)(x, k),
          jax.jacrev(as_jax(int_fn), argnums=(0, 1), allow_int=True)(x, k))


# --- the dtype checks, with JAX's messages -----------------------------------------------------

def count_positive(x):
    return np.sum(x > 0) * 1


def abs_fn(z):
    return np.abs(z) * 1.0


def sin_fn(x):
    return np.sin(x)


ERROR_CASES = [   # (id, transform, function, options, arguments)
    ("grad_complex_output", "grad", holo_fn, {}, (0.3 + 0.1j,)),
    ("grad_holomorphic_real_input", "grad", holo_fn, {"holomorphic": True}, (0.3,)),
    ("grad_int_input", "grad", int_fn, {"argnums": 1}, (D["a"], np.array([1, 2, 3]))),
    ("grad_int_output", "grad", count_positive, {"allow_int": True}, (np.array([1, 2]),)),
    ("jacfwd_complex_input", "jacfwd", holo_fn, {}, (Z,)),
    ("jacfwd_holomorphic_real_output", "jacfwd", abs_fn, {"holomorphic": True}, (Z,)),
    ("jacrev_complex_output", "jacrev", holo_fn, {}, (Z,)),
    ("jacrev_int_input", "jacrev", int_out_fn, {}, (np.array([1, 2]),)),
    ("grad_non_scalar", "grad", sin_fn, {}, (D["a"],)),
]
OURS = {"grad": grad, "jacfwd": jacfwd, "jacrev": jacrev}


@pytest.mark.parametrize("name,transform,fn,options,args", ERROR_CASES,
                         ids=[c[0] for c in ERROR_CASES])
def test_dtype_checks_raise_jax_messages(name, transform, fn, options, args):
    with pytest.raises(TypeError) as theirs:
        getattr(jax, transform)(as_jax(fn), **options)(*args)
    with pytest.raises(PSCTypeError) as ours:
        OURS[transform](fn, **options)(*args)
    expected = re.sub(r"jax\.(vjp|jvp)", r"\1", str(theirs.value))
    if name == "grad_non_scalar":   # ours adds what a scalar means before the shape
        assert "Gradient only defined for scalar-output functions" in ours.value.message
        assert expected.split("Output ")[1] in ours.value.message
    else:
        assert expected in ours.value.message


@jit_ps
def complex_grad_in_jit(z):
    return grad(holo_fn)(z)


def test_dtype_check_inside_jit_is_a_psc_error():
    with pytest.raises(PSCTypeError, match="holomorphic=True"):
        complex_grad_in_jit(0.3 + 0.1j)


# --- traced control flow: central differences -------------------------------------------------

def cf_forward(x):
    y = x * 1.0
    if np.sum(x) > 0:
        y = np.sin(y) * x
    else:
        y = np.cos(y) + x
    while np.sum(y * y) < 4.0:
        y = y * 1.5 + 0.1 * np.sin(y)
    return y


def cf_reverse(x):
    y = x * 1.0
    if np.sum(x) > 0:
        y = np.sin(y) * x
    else:
        y = np.cos(y) + x
    for _ in range(3):
        y = np.tanh(y) + 0.5 * y[0]
    return y


@jit_ps
def jacobians_with_control_flow(x):
    return jacfwd(cf_forward)(x), jacfwd(cf_reverse)(x), jacrev(cf_reverse)(x)


def _central_jacobian(fn, x, h=1e-6):
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        columns.append((fn(x + e) - fn(x - e)) / (2 * h))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("x", [np.array([0.3, 0.2, 0.4]), np.array([-0.6, 0.1, -0.2])],
                         ids=["then", "else"])
def test_jacobians_through_control_flow_match_central_differences(x):
    fwd = _central_jacobian(cf_forward, x)
    rev = _central_jacobian(cf_reverse, x)
    in_jit = jacobians_with_control_flow(x)
    from_python = jacfwd(cf_forward)(x), jacfwd(cf_reverse)(x), jacrev(cf_reverse)(x)
    for got in (in_jit, from_python):
        for actual, expected in zip(got, (fwd, rev, rev)):
            np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)


# --- one batched program ------------------------------------------------------------------------

def mat_fn(x, A):
    return np.tanh(A @ x) * x[0]


@jit_ps
def jacobians_of_mat_fn(x, A):
    return jacfwd(mat_fn)(x, A), jacrev(mat_fn)(x, A), hessian(lambda v: np.sum(mat_fn(v, A)))(x)


def _op_counts(text):
    return sorted(re.findall(r'"(?:stablehlo|chlo)\.([a-z_]+)"', text))


def test_jacobian_program_size_does_not_grow_with_the_input():
    small = jacobians_of_mat_fn.lower(np.ones(3), np.ones((3, 3)))
    large = jacobians_of_mat_fn.lower(np.ones(11), np.ones((11, 11)))
    assert _op_counts(small) == _op_counts(large)
    assert "stablehlo.while" not in small     # no loop over the basis either
    assert _op_counts(small).count("dot_general") > 0
    x, A = R.standard_normal(4), R.standard_normal((4, 4))
    expected = (jax.jacfwd(as_jax(mat_fn))(x, A), jax.jacrev(as_jax(mat_fn))(x, A),
                jax.hessian(lambda v: jnp.sum(as_jax(mat_fn)(v, A)))(x))
    close_tree(jacobians_of_mat_fn(x, A), expected, 1e-9, 1e-11)
