"""Issue 13's element-wise breadth against NumPy: complex parts, ldexp/frexp/modf, gcd/lcm,
heaviside, nextafter/spacing, bitwise_count, sinc, i0, nan_to_num, isposinf/isneginf,
isclose/allclose/array_equal/array_equiv, interp, unwrap and the static introspection
functions; over float32/float64/int/bool/complex, NaN/inf/-0.0, 0-d and empty arrays."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_same
from runtime import PSCError, PSCTypeError, PSCValueError, StagedFunction, translate
from transpiler import jit_ps

# (no subnormals: XLA's CPU runtime flushes them to zero, a deviation the README states)
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 3e-300, -7e-30, 1e300, np.inf,
                    -np.inf, np.nan])
FLOATS = [np.float16, np.float32, np.float64]


def _numpy(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _groups(dtypes, make):
    return [make(np.dtype(d)) for d in dtypes]


def check(fn, groups, rtol=1e-6, atol=0.0, **kwargs):
    """``fn(*args, **kwargs)`` through its rule (one program for every group of arguments)
    equals NumPy's on each group: values, dtypes and shapes."""
    expected = [_numpy(fn, *args, **kwargs) for args in groups]
    assert_same(run(fn, groups, **kwargs), expected, rtol=rtol, atol=atol)


def run(fn, groups, **kwargs):
    def build(b, groups):
        return [translate(b, fn, *args, **kwargs) for args in groups]
    return StagedFunction(build, name=getattr(fn, "__name__", "fn"))(groups)


def _complex(dtype, rng, shape=(2, 3)):
    real = rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)
    return real.astype(dtype)


def _sample(dtype, rng, shape=(2, 3)):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return _complex(dtype, rng, shape)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(-20 if dtype.kind == "i" else 0, 20, shape).astype(dtype)
    return rng.uniform(-5, 5, shape).astype(dtype)


ALL = [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_,
       np.complex64, np.complex128]

# --- complex parts --------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [np.real, np.imag, np.conj, np.conjugate, np.angle,
                                np.isreal, np.iscomplex], ids=lambda f: f.__name__)
def test_complex_parts_match_numpy(fn, rng):
    groups = [(_sample(d, rng),) for d in ALL] + [(np.complex64(1 - 2j),), (np.float32(-1),),
                                                  (np.zeros((0, 2), np.complex128),),
                                                  (np.array([-0.0, np.nan, np.inf]),)]
    check(fn, groups, rtol=1e-6)


def test_angle_in_degrees_and_the_static_predicates(rng):
    check(np.angle, [(_sample(d, rng),) for d in ALL], rtol=1e-6, deg=True)
    for dtype in ALL:
        x = _sample(dtype, rng)
        for fn in (np.isrealobj, np.iscomplexobj):
            assert StagedFunction(lambda b, v: b.constant(translate(b, fn, v)))(x) == fn(x)


def test_complex_parts_under_jit_ps():
    def parts(z, w):
        return np.real(z) * np.imag(w) + np.angle(np.conj(z)), np.conjugate(w)
    z = np.array([1 + 2j, -3 - 1j], np.complex64)
    w = np.array([0.5 - 1j, 2j], np.complex64)
    assert_same(jit_ps(parts)(z, w), parts(z, w))

# --- ldexp, frexp, modf ---------------------------------------------------------------------


def test_ldexp_matches_numpy(rng):
    exponents = np.array([0, 1, -1, 5, -5, 1100, -1100, 2000, -2000, -1074, 1023, -1022, 3])
    groups = [(SPECIAL.astype(d), exponents) for d in FLOATS]
    groups += [(SPECIAL.astype(d), np.int32(-3)) for d in FLOATS]
    groups += [(np.float64(1.5), np.array([-1021, -1022, 1022, 1023, 1024])),
               (np.float32(1.5), np.array([-125, -126, 126, 127, 128, -300])),
               (np.array([1, 2, 3]), np.array([1, 2, 3])), (np.array([True]), 2),
               (np.zeros((0,), np.float32), 3)]
    check(np.ldexp, groups, rtol=0)


@pytest.mark.parametrize("fn", [np.frexp, np.modf], ids=lambda f: f.__name__)
def test_frexp_and_modf_match_numpy(fn, rng):
    groups = [(SPECIAL.astype(d),) for d in FLOATS]
    groups += [(_sample(d, rng),) for d in (np.int32, np.int64, np.bool_, np.float32)]
    groups += [(np.float32(-7.25),), (np.zeros((0, 3)),),
               (np.array([2.5e-308, 1.7e308, -3e-300]),)]
    check(fn, groups, rtol=0)

# --- gcd, lcm, bitwise_count ----------------------------------------------------------------


@pytest.mark.parametrize("fn", [np.gcd, np.lcm], ids=lambda f: f.__name__)
def test_gcd_and_lcm_match_numpy(fn, rng):
    groups = [(rng.integers(-60, 60, (3, 4)).astype(d), rng.integers(-60, 60, (4,)).astype(d))
              for d in (np.int8, np.int32, np.int64)]
    groups += [(rng.integers(0, 200, (5,)).astype(np.uint8), np.uint8(12)),
               (np.array([0, 0, 7, -7]), np.array([0, 5, 0, 0])),
               (np.int64(2**40 * 3), np.int64(2**20 * 9)), (np.zeros((0,), np.int32), 4)]
    check(fn, groups)


def test_gcd_refuses_floats_like_numpy():
    with pytest.raises(PSCTypeError):
        run(np.gcd, [(np.array([1.0]), np.array([2.0]))])


def test_bitwise_count_matches_numpy(rng):
    groups = [(rng.integers(-2**30, 2**30, (6,)).astype(d),)
              for d in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64)]
    groups += [(np.array([np.iinfo(np.int64).min, -1, 0]),), (np.array([True, False]),),
               (np.int8(-128),)]
    check(np.bitwise_count, groups)

# --- heaviside, nextafter, spacing, sinc, i0 ------------------------------------------------


def test_heaviside_nextafter_spacing_match_numpy(rng):
    h = [(SPECIAL.astype(d), np.array(0.5, d)) for d in FLOATS]
    h += [(np.array([-1, 0, 3]), 0.5), (np.array([-1, 0, 3]), np.nan), (np.array([True]), 2)]
    check(np.heaviside, h, rtol=0)
    toward = np.array([1.0, -1.0, 0.0, np.inf, -np.inf, 0.0, np.nan, 1.0, 1.0, -np.inf, 0.0,
                       5.0, 1.0])
    check(np.nextafter, [(SPECIAL.astype(d), toward.astype(d)) for d in FLOATS]
          + [(np.array([1, 2]), 3)], rtol=0)
    nonzero = SPECIAL[2:][np.abs(SPECIAL[2:]) > 1e-200]   # (spacing(0) is subnormal)
    check(np.spacing, [(nonzero.astype(d),) for d in FLOATS]
          + [(np.array([1, -2]),), (np.array(np.finfo(np.float32).max),)], rtol=0)


def test_sinc_and_i0_match_numpy(rng):
    groups = [(SPECIAL[SPECIAL != 1e300].astype(d),) for d in (np.float32, np.float64)]
    groups += [(np.array([0, 1, -2]),), (np.array([True, False]),), (np.zeros((0,)),),
               (rng.uniform(-30, 30, (4, 5)),), (rng.uniform(-30, 30, (7,)).astype(np.float32),)]
    check(np.i0, groups, rtol=1e-6)
    check(np.sinc, groups + [(_complex(np.complex128, rng),)], rtol=1e-6, atol=1e-15)
    with pytest.raises(PSCTypeError):
        run(np.i0, [(_complex(np.complex64, rng),)])

# --- nan_to_num, isposinf, isneginf ---------------------------------------------------------


def test_nan_to_num_matches_numpy(rng):
    groups = [(SPECIAL.astype(d),) for d in FLOATS]
    groups += [(np.array([1, 2]),), (np.array([True]),), (np.float32(np.nan),),
               (np.array([complex(np.nan, np.inf), complex(-np.inf, 1)]),)]
    check(np.nan_to_num, groups, rtol=0)
    check(np.nan_to_num, groups, rtol=0, nan=-1.0, posinf=7, neginf=-7.5)
    with pytest.raises(PSCValueError, match="in place"):
        run(np.nan_to_num, groups[:1], copy=False)


def test_isposinf_and_isneginf_match_numpy():
    for fn in (np.isposinf, np.isneginf):
        check(fn, [(SPECIAL.astype(d),) for d in FLOATS]
              + [(np.array([1, -2]),), (np.array([True]),), (np.float32(-np.inf),)])
        with pytest.raises(PSCTypeError, match="ambiguous"):
            run(fn, [(np.array([1j]),)])


def test_true_divide_is_divide():
    check(np.true_divide, [(np.array([1, 2]), np.array([2, 0])), (np.float32(1), 3)])
    assert translate is not None and "numpy.true_divide" in __import__(
        "runtime").registered_names()


def test_errors_are_psc_errors():
    with pytest.raises(PSCError):
        run(np.ldexp, [(np.array([1.0]), np.array([0.5]))])

# --- round -------------------------------------------------------------------------------------


def test_round_of_complex_and_bool_matches_numpy(rng):
    for decimals in (0, 1, -1):
        check(np.round, [(_complex(np.complex64, rng) * 10,), (_complex(np.complex128, rng),),
                         (np.array([2.5 - 3.5j, -0.5 + 0.5j]),),
                         (rng.integers(-99, 99, (5,)).astype(np.int8),)], decimals=decimals)
    check(np.round, [(np.array([True, False]),)])
    with pytest.raises(PSCTypeError):
        run(np.round, [(np.array([True]),)], decimals=1)

# --- isclose, allclose, array_equal, array_equiv ---------------------------------------------


CLOSE_PAIRS = [
    (np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 1.0]),
     np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 1.1])),
    (np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32)),
    (np.array([True, False]), np.array([True, True])),
    (np.float32([1.0, 2.0]), 2),
    (np.array([1 + 1j, np.nan]), np.array([1 + 1.000001j, np.nan])),
    (np.zeros((0,)), np.zeros((0,))),
    (np.float32(1), np.float32(1.00001)),
    (np.ones((2, 3)), np.ones((3,))),
]


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_and_allclose_match_numpy(equal_nan):
    check(np.isclose, CLOSE_PAIRS, equal_nan=equal_nan)
    check(np.isclose, CLOSE_PAIRS, rtol=0.2, atol=0.0, equal_nan=equal_nan)
    expected = [np.bool_(np.allclose(x, y, equal_nan=equal_nan)) for x, y in CLOSE_PAIRS]
    assert_same(run(np.allclose, CLOSE_PAIRS, equal_nan=equal_nan), expected)


@pytest.mark.parametrize("equal_nan", [False, True])
def test_array_equal_and_array_equiv_match_numpy(equal_nan):
    pairs = CLOSE_PAIRS + [(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])),
                           (np.array([1, 2]), np.array([1.0, 2.0]))]
    for fn, kwargs in ((np.array_equal, {"equal_nan": equal_nan}), (np.array_equiv, {})):
        for x, y in pairs + [(np.ones(2), np.ones(3))]:
            expected = fn(x, y, **kwargs)
            actual = StagedFunction(lambda b, x, y: b.constant(False) if (
                r := translate(b, fn, x, y, **kwargs)) is False else r)(x, y)
            assert bool(actual) == expected, (fn, x, y)


def test_allclose_in_an_if_stages_like_a_traced_bool():
    def pick(x, y):
        if np.allclose(x, y):
            return x + 1.0
        return x - 1.0
    x = np.array([1.0, 2.0])
    for y in (x, x + 1):
        assert_same(jit_ps(pick)(x, y), pick(x, y))

# --- static introspection ---------------------------------------------------------------------


def test_introspection_on_traced_values_is_static():
    x = np.ones((2, 3, 4), np.float32)
    questions = [(np.shape, ()), (np.ndim, ()), (np.size, ()), (np.size, (1,)),
                 (np.size, ((0, -1),)), (np.iterable, ()), (np.isscalar, ()),
                 (np.result_type, (1.0,)), (np.result_type, (np.float64,)),
                 (np.can_cast, (np.int8,)), (np.can_cast, (np.float64, "same_kind"))]

    def build(b, v):
        for fn, rest in questions:
            found, expected = translate(b, fn, v, *rest), fn(x, *rest)
            assert found == expected and type(found) is type(expected), (fn, found)
        assert translate(b, np.iterable, v[0, 0, 0]) is False
        assert translate(b, np.isscalar, b.constant(1.0)) is True   # a Python float
        assert translate(b, np.result_type, v, 1j) == np.complex64
        return b.constant(0.0)
    StagedFunction(build)(x)
    for fn in (np.promote_types, np.issubdtype, np.isdtype):
        with pytest.raises(PSCTypeError, match="dtype"):
            StagedFunction(lambda b, v: translate(b, fn, v, np.float32))(x)
    with pytest.raises(PSCTypeError, match="can_cast"):
        StagedFunction(lambda b, x: translate(b, np.can_cast, b.constant(1.0), np.int8))(x)
    with pytest.raises(PSCError, match="isscalar"):
        run(np.isscalar, [(x.sum(),)])

# --- interp, unwrap ---------------------------------------------------------------------------


def test_interp_matches_numpy(rng):
    xp = np.array([-1.0, 0.0, 0.5, 2.0, 2.0, 3.0])
    fp = np.array([1.0, -1.0, 2.0, 0.5, 4.0, np.inf])
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.25, 2.0, 2.5, 3.0, 4.0, np.nan, np.inf, 1.0])
    groups = [(x, xp, fp), (x.astype(np.float32), xp, fp), (np.float32(0.7), xp, fp),
              (np.array([1, 2]), np.array([0, 3]), np.array([0, 30])),
              (np.zeros((0,)), xp, fp), (x.reshape(3, 4), xp, fp * (1 - 2j)),
              (x, np.array([1.0]), np.array([5.0]))]
    check(np.interp, groups)
    check(np.interp, groups[:2] + groups[3:5], left=-7.0, right=9.0)
    angles = rng.uniform(-10, 10, (7,))
    check(np.interp, [(angles, np.array([190.0, -190.0, 350.0, 10.0]),
                       np.array([5.0, 10.0, 3.0, 4.0]))], period=360)
    with pytest.raises(PSCValueError, match="same length"):
        run(np.interp, [(x, xp, fp[:2])])


def test_unwrap_matches_numpy(rng):
    phase = np.cumsum(rng.uniform(-4, 4, (3, 8)), axis=1)
    groups = [(phase,), (phase.astype(np.float32),), (np.zeros((0,)),),
              (np.array([0, 1, 5, 9, 2, 8]),), (np.array([0.0, np.pi, 2 * np.pi, -np.pi]),)]
    check(np.unwrap, groups, rtol=1e-5)
    check(np.unwrap, groups[:2], rtol=1e-5, axis=0, discont=4.0)
    check(np.unwrap, [(np.array([0, 5, 10, 3, 7]),), (phase,)], period=6)
