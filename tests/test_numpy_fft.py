"""``numpy.fft`` on traced arrays (`runtime.numpy_rules.fft`), differential against NumPy:
values, dtypes and shapes for each function over real, complex and integer inputs, ``n``/
``s`` cropping and padding, axes (negative and repeated), each norm, empty arrays, the
errors NumPy raises (a `PSCError` at the line), the submodule import forms, and ``grad``
through the transforms against jax and central differences."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpy.fft as F
import pytest
from numpy.fft import irfft, rfft

from runtime import PSCError, PSCTracedValueError
from transpiler import grad, jit_ps
from ad_corpus.oracles import jax_x64  # noqa: F401,E402  (JAX in float64 while this module runs)



@jit_ps(static_argnames=("name", "options"))
def _transform(x, name, options):
    return getattr(np.fft, name)(x, **dict(options))


def _input(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind in "iub":
        x = rng.integers(-3, 4, shape)
    return x.astype(dtype)


def _compare(x, name, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # s with None, axes=None
        expected = getattr(np.fft, name)(x, **options)
        actual = _transform(x, name, tuple(sorted(options.items())))
    assert actual.dtype == expected.dtype, (name, options, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (name, options, actual.shape, expected.shape)
    single = expected.dtype in (np.float32, np.complex64)
    scale = max(1.0, float(np.abs(expected).max(initial=0)))
    np.testing.assert_allclose(actual, expected, rtol=1e-5 if single else 1e-12,
                               atol=(1e-5 if single else 1e-12) * scale)


DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32]
REAL_DTYPES = [np.float32, np.float64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["fft", "ifft", "hfft"])
def test_complex_input_one_d(name, dtype):
    x = _input((3, 6), dtype)
    _compare(x, name)
    _compare(x, name, n=4, axis=0, norm="ortho")    # crop
    _compare(x, name, n=9, axis=-2, norm="forward")  # pad
    _compare(x, name, n=5, norm="backward")


@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_real_input_one_d(name, dtype):
    x = _input((4, 7), dtype)
    _compare(x, name)
    _compare(x, name, n=4, axis=0, norm="ortho")
    _compare(x, name, n=10, norm="forward")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float64])
def test_irfft(dtype):
    x = _input((3, 5), dtype)
    _compare(x, "irfft")
    _compare(x, "irfft", n=9)                       # odd length, padded spectrum
    _compare(x, "irfft", n=4, axis=0, norm="ortho")
    _compare(x, "irfft", n=3, norm="forward")       # cropped spectrum


@pytest.mark.parametrize("name,dtype", [("fftn", np.float32), ("fftn", np.int32),
                                        ("ifftn", np.complex128), ("fft2", np.complex64),
                                        ("ifft2", np.float64)])
def test_complex_n_d(name, dtype):
    x = _input((2, 3, 4), dtype)
    _compare(x, name)
    _compare(x, name, s=(5, 2), axes=(-1, 0), norm="ortho")
    _compare(x, name, axes=(1, 1), norm="forward")          # repeated: twice, as NumPy
    _compare(x, name, s=(2, 6))                              # axes=None: the last len(s)


@pytest.mark.parametrize("name,dtype", [("rfftn", np.float32), ("rfft2", np.float64)])
def test_rfftn(name, dtype):
    x = _input((2, 3, 6), dtype)
    _compare(x, name)
    _compare(x, name, s=(4, 3), axes=(0, -1), norm="ortho")
    _compare(x, name, s=(-1, 5), axes=(1, 2), norm="forward")


@pytest.mark.parametrize("name,dtype", [("irfftn", np.complex64), ("irfft2", np.complex128)])
def test_irfftn(name, dtype):
    x = _input((2, 3, 4), dtype)
    _compare(x, name)
    _compare(x, name, s=(4, 5), axes=(0, -1), norm="ortho")
    _compare(x, name, s=(None, 7), axes=(1, 2), norm="forward")


def test_edge_cases():
    _compare(_input((0, 4), np.float64), "fft")
    _compare(_input((0, 4), np.float64), "rfft")
    _compare(_input((0, 3), np.complex128), "irfft")
    _compare(_input((3, 4), np.float64), "fftn", axes=())   # unchanged, as NumPy
    _compare(_input((1,), np.float64), "fft")


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(name):
    x = _input((3, 4, 5), np.float32)
    _compare(x, name)
    _compare(x, name, axes=1)
    _compare(x, name, axes=(-1, 0))


@jit_ps(static_argnames=("n",))
def _frequencies(d, n):
    return np.fft.fftfreq(n, d), np.fft.rfftfreq(n, d=d)


@pytest.mark.parametrize("n", [1, 4, 7])
@pytest.mark.parametrize("d", [np.float32(0.3), np.float64(0.1), np.int64(2)])
def test_frequencies_with_traced_spacing(n, d):
    for actual, expected in zip(_frequencies(d, n), (np.fft.fftfreq(n, d),
                                                      np.fft.rfftfreq(n, d))):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-15)


@jit_ps
def _imported_forms(x):
    return F.fft(x), irfft(rfft(x), n=x.shape[-1]), np.fft.fftshift(x)


def test_submodule_import_forms():
    x = _input((2, 6), np.float64)
    for actual, expected in zip(_imported_forms(x), (np.fft.fft(x), np.fft.irfft(
            np.fft.rfft(x), n=6), np.fft.fftshift(x))):
        np.testing.assert_allclose(actual, expected, atol=1e-12)


# --- errors: what NumPy raises, as a PSCError at the line ------------------------------------

ERRORS = [
    ("fft", np.float64, (4,), (("n", 0),), ValueError),
    ("fft", np.float64, (0,), (), ValueError),
    ("fft", np.float64, (4,), (("norm", "sideways"),), ValueError),
    ("fft", np.float64, (4,), (("axis", 1),), IndexError),
    ("rfft", np.complex128, (4,), (), TypeError),
    ("irfft", np.complex128, (1,), (), ValueError),
    ("fftn", np.float64, (3, 4), (("axes", (0,)), ("s", (3, 4))), ValueError),
    ("rfftn", np.float64, (3, 4), (("axes", ()),), IndexError),
    ("fft2", np.float64, (4,), (), IndexError),
    ("fft", np.float64, (4,), (("n", 2.0),), TypeError),
]


@pytest.mark.parametrize("name,dtype,shape,options,error", ERRORS)
def test_errors_numpy_raises(name, dtype, shape, options, error):
    x = np.zeros(shape, dtype)
    with pytest.raises(error):
        getattr(np.fft, name)(x, **dict(options))
    with pytest.raises(PSCError) as info:
        _transform(x, name, options)
    assert isinstance(info.value, error)
    assert "getattr(np.fft, name)" in str(info.value)   # the user's line


@jit_ps
def _traced_length(x, n):
    return np.fft.fft(x, n=n)


def test_traced_length_is_refused_at_the_line():
    with pytest.raises(PSCTracedValueError) as info:
        _traced_length(np.zeros(4), 4)
    assert "np.fft.fft(x, n=n)" in str(info.value)


# --- derivatives --------------------------------------------------------------------------


def _power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


def _round_trip(x):
    return np.sum(np.fft.irfft(np.fft.fft(x) * np.arange(1, x.shape[-1] + 1), n=7) ** 3)


def _ortho(x):
    return np.sum(np.fft.irfftn(np.fft.rfftn(x, norm="ortho") ** 2, s=x.shape,
                                        axes=(-1,)) * x)


@jit_ps
def _grads(x):
    return grad(_power)(x), grad(_round_trip)(x), grad(_ortho)(x)


def _jax_losses():
    power = lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2)   # noqa: E731
    round_trip = lambda x: jnp.sum(jnp.fft.irfft(   # noqa: E731
        jnp.fft.fft(x) * jnp.arange(1, x.shape[-1] + 1), n=7) ** 3)
    ortho = lambda x: jnp.sum(jnp.fft.irfftn(   # noqa: E731
        jnp.fft.rfftn(x, norm="ortho") ** 2, s=x.shape, axes=(-1,)) * x)
    return power, round_trip, ortho


def _central_difference(loss, x, step=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = step
        g[i] = (loss(x + e) - loss(x - e)) / (2 * step)
    return g


def test_grad_against_jax_and_central_differences():
    x = _input((6,), np.float64, seed=1)
    actual = _grads(x)
    for mine, numpy_loss, jax_loss in zip(actual, (_power, _round_trip, _ortho),
                                          _jax_losses()):
        np.testing.assert_allclose(mine, jax.grad(jax_loss)(x), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(mine, _central_difference(numpy_loss, x),
                                   rtol=1e-6, atol=1e-6)
