"""Programs of builder ops that reach every primitive, shared by the batching and
derivative rule tests: ``CASES[name] = (build, draws, primitives)``, where
``build(b, *params)`` builds one lane's program, ``draws`` make one lane of each argument
from a NumPy ``Generator``, and ``primitives`` names the primitives the program exercises.
"""
from __future__ import annotations

import numpy as np

from runtime import Builder, Value
from runtime.primitives.elementwise import BUILDER_METHODS

F64, F32, I32, I64 = (np.dtype(t) for t in (np.float64, np.float32, np.int32, np.int64))


def uniform(shape, low=-1.0, high=1.0, dtype=F64):
    return lambda rng: rng.uniform(low, high, shape).astype(dtype)


def integers(shape, low=-5, high=6, dtype=I32):
    return lambda rng: rng.integers(low, high, shape).astype(dtype)


def booleans(shape):
    return lambda rng: rng.integers(0, 2, shape).astype(bool)


def lane_program(build, lanes):
    b = Builder("lane")
    params = [b.parameter(i, a.shape, a.dtype) for i, a in enumerate(lanes)]
    outs = build(b, *params)
    outs = [outs] if isinstance(outs, Value) else list(outs)
    return b.build(*outs)


CASES = {}


def case(name, *draws, primitives):
    def register(build):
        CASES[name] = (build, draws, primitives)
        return build
    return register

# --- element-wise --------------------------------------------------------------------------


_DOMAINS = {"log": (0.2, 2.0), "sqrt": (0.2, 2.0), "rsqrt": (0.2, 2.0), "acosh": (1.2, 3.0),
            "log1p": (0.0, 2.0), "lgamma": (0.5, 3.0), "digamma": (0.5, 3.0)}
_UNARY_FLOAT = ["neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "cbrt",
                "sin", "cos", "tan", "tanh", "logistic", "floor", "ceil", "round",
                "round_nearest_even", "is_finite", "asin", "acos", "atan", "sinh", "cosh",
                "asinh", "acosh", "atanh", "erf", "erfc", "erf_inv", "lgamma", "digamma"]
for _method in _UNARY_FLOAT:
    low, high = _DOMAINS.get(_method, (-0.9, 0.9))
    case(f"unary_{_method}", uniform((2, 3), low, high),
         primitives=(BUILDER_METHODS[_method][0],))(lambda b, x, m=_method: getattr(b, m)(x))
case("unary_not", integers((4,)), primitives=("not",))(lambda b, x: b.not_(x))

for _method in ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2"]:
    low = 0.5 if _method == "pow" else -1.0
    case(f"binary_{_method}", uniform((2, 3), low, 2.0), uniform((2, 3), 0.5, 2.0),
         primitives=(BUILDER_METHODS[_method][0],))(lambda b, x, y, m=_method: getattr(b, m)(x, y))
for _method in ["and_", "or_", "xor", "shift_left", "shift_right_arithmetic",
                "shift_right_logical"]:
    case(f"binary_{_method}", integers((5,), 0, 100), integers((5,), 0, 4),
         primitives=(BUILDER_METHODS[_method][0],))(lambda b, x, y, m=_method: getattr(b, m)(x, y))


case("binary_next_after", uniform((2, 3)), uniform((2, 3)),
     primitives=("next_after",))(lambda b, x, y: b.next_after(x, y))
# integer bits read as floats: nothing to differentiate (bits have no derivative)
case("bitcast_convert", integers((2, 3), 0, 2**20), primitives=("bitcast_convert",))(
    lambda b, x: b.bitcast_convert(x, F32))


@case("compare", uniform((4,)), uniform((4,)), primitives=("compare",))
def _compare(b, x, y):
    return [b.lt(x, y), b.eq(x, x)]


@case("select", booleans((2, 3)), uniform((2, 3)), uniform((2, 3)), primitives=("select",))
def _select(b, p, x, y):
    return b.select(p, x, y)


@case("select_scalar_predicate", booleans(()), uniform((2, 3)), uniform((2, 3)),
      primitives=("select",))
def _select_scalar(b, p, x, y):
    return b.select(p, x, y)


@case("convert", uniform((3,), -3, 3), primitives=("convert",))
def _convert(b, x):
    return [b.convert(x, np.int32), b.convert(x, np.float32)]

# --- leaves and shapes -----------------------------------------------------------------------


@case("constant_and_iota", uniform((2, 3)), primitives=("constant", "iota"))
def _leaves(b, x):
    ramp = b.convert(b.iota((2, 3), np.int32, 1), np.float64)
    return b.add(b.mul(x, ramp), b.broadcast_in_dim(b.constant(2.5), (2, 3), ()))


@case("broadcast_in_dim", uniform((3, 1)), primitives=("broadcast_in_dim",))
def _broadcast(b, x):
    return [b.broadcast_in_dim(x, (2, 3, 4), (1, 2)), b.broadcast_in_dim(x, (3, 5), (0, 1))]


@case("reshape", uniform((2, 3)), primitives=("reshape",))
def _reshape(b, x):
    return [b.reshape(x, (3, 2)), b.reshape(x, (6,))]


@case("transpose", uniform((2, 3, 4)), primitives=("transpose",))
def _transpose(b, x):
    return b.transpose(x, (2, 0, 1))


@case("reverse", uniform((2, 3)), primitives=("reverse",))
def _reverse(b, x):
    return [b.reverse(x, (1,)), b.reverse(x, (0, 1))]


@case("slice", uniform((5, 6)), primitives=("slice",))
def _slice(b, x):
    return b.slice(x, (1, 0), (4, 6), (2, 3))


@case("pad", uniform((2, 3)), uniform(()), primitives=("pad",))
def _pad(b, x, v):
    return [b.pad(x, v, (1, -1), (0, 2), (1, 0))]


@case("concatenate", uniform((2, 3)), uniform((1, 3)), primitives=("concatenate",))
def _concatenate(b, x, y):
    return [b.concatenate([x, y, x], 0)]

# --- contractions and reductions -------------------------------------------------------------


@case("dot_general_matmul", uniform((2, 3)), uniform((3, 4)), primitives=("dot_general",))
def _matmul(b, x, y):
    return b.dot_general(x, y, ((1,), (0,)))


@case("dot_general_batched", uniform((2, 3, 4)), uniform((2, 4, 5)),
      primitives=("dot_general",))
def _bmm(b, x, y):
    return b.dot_general(x, y, ((2,), (1,)), ((0,), (0,)))


@case("reduce", uniform((2, 3)), integers((2, 3), 0, 2), primitives=("reduce",))
def _reduce(b, x, m):
    flags = b.ne(m, b.broadcast_in_dim(b.constant(np.int32(0)), (2, 3), ()))
    return [b.reduce(x, "sum", (1,)), b.reduce(x, "max", (0, 1)), b.reduce(x, "prod", (0,)),
            b.reduce(flags, "or", (1,))]


@case("argmax_argmin", uniform((3, 4)), primitives=("argmax", "argmin"))
def _argreduce(b, x):
    return [b.argmax(x, 1), b.argmin(x, 0, np.int32)]


@case("cumulative", uniform((3, 4)), primitives=("cumulative",))
def _cumulative(b, x):
    return [b.cumulative(x, "sum", 1), b.cumulative(x, "max", 0, reverse=True)]


@case("sort", integers((2, 5), 0, 3), uniform((2, 5)), primitives=("sort",))
def _sort(b, k, v):
    return b.sort([k, v], 1, num_keys=2)

# --- run-time checks -----------------------------------------------------------------------------


@case("check", booleans(()), uniform((3,)), primitives=("check",))
def _check(b, failed, x):
    # a check gives its flag back (compiled directly, without runtime.check_threading,
    # it does nothing else)
    return b.emit("check", [failed], kind="nan", message="m")[0], b.neg(x)

@case("debug_callback", uniform((3,)), primitives=("debug_callback",))
def _debug_callback(b, x):
    # compiled directly (not threaded) it calls back and gives 0
    return b.emit("debug_callback", [x], callback=lambda *arrays: None)[0], b.neg(x)

# --- indexing ----------------------------------------------------------------------------------


@case("dynamic_slice", uniform((5, 6)), integers((), -2, 7), integers((), 0, 4),
      primitives=("dynamic_slice",))
def _dynamic_slice(b, x, i, j):
    return b.dynamic_slice(x, [i, j], (2, 3))


@case("dynamic_update_slice", uniform((5, 6)), uniform((2, 3)), integers((), -2, 7),
      integers((), 0, 5), primitives=("dynamic_update_slice",))
def _dynamic_update_slice(b, x, u, i, j):
    return b.dynamic_update_slice(x, u, [i, j])


@case("gather_rows", uniform((5, 3)), integers((4, 1), 0, 5), primitives=("gather",))
def _gather(b, x, idx):
    return b.gather(x, idx, offset_dims=(1,), collapsed_slice_dims=(0,),
                    start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, 3))


@case("scatter_add_rows", uniform((5, 3)), integers((4, 1), 0, 5), uniform((4, 3)),
      primitives=("scatter",))
def _scatter(b, x, idx, u):
    return b.scatter(x, idx, u, update_window_dims=(1,), inserted_window_dims=(0,),
                     scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode="add")

# --- control flow ------------------------------------------------------------------------------


@case("while_fixed_trips", uniform((3,)), uniform(()), primitives=("while",))
def _while_fixed(b, x, w):
    def cond(sub, state):
        return sub.lt(state[0], sub.constant(np.int32(4)))

    def body(sub, state):
        i, acc = state
        return sub.add(i, sub.constant(np.int32(1))), sub.add(
            sub.mul(acc, sub.broadcast_in_dim(w, (3,), ())), sub.sin(acc))
    return b.while_loop(cond, body, (b.constant(np.int32(0)), x), trip_count=4)[1]


@case("while_lane_dependent_trips", uniform((), 0.1, 1.0), uniform((2,)),
      primitives=("while",))
def _while_lanes(b, x, y):
    limit = b.constant(5.0)

    def cond(sub, state):
        return sub.lt(state[0], limit)

    def body(sub, state):
        v, acc, n = state
        return (sub.mul(v, sub.constant(2.0)), sub.add(acc, sub.broadcast_in_dim(v, (2,), ())),
                sub.add(n, sub.constant(np.int32(1))))
    return list(b.while_loop(cond, body, (x, y, b.constant(np.int32(0)))))


@case("case_by_index", integers((), -1, 4), uniform((3,)), uniform(()), primitives=("case",))
def _case(b, i, x, w):
    branches = [lambda sub, ops: [sub.neg(ops[0])],
                lambda sub, ops: [sub.mul(ops[0], sub.broadcast_in_dim(w, (3,), ()))],
                lambda sub, ops: [sub.broadcast_in_dim(sub.constant(1.5), (3,), ())]]
    return b.conditional(i, branches, [x])


@case("case_by_predicate", booleans(()), uniform((2,)), primitives=("case",))
def _cond(b, p, x):
    return b.conditional(p, [lambda sub, ops: [sub.exp(ops[0])],
                             lambda sub, ops: [sub.add(ops[0], ops[0])]], [x])

# --- linear algebra (LAPACK custom calls) ------------------------------------------------------


def well_conditioned(shape):
    return lambda rng: rng.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(shape[-1])


def positive_definite(shape):
    def draw(rng):
        x = rng.uniform(-1.0, 1.0, shape)
        return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])
    return draw


@case("solve", well_conditioned((3, 3)), uniform((3, 2)), primitives=("solve",))
def _solve(b, a, y):
    return b.emit("solve", [a, y])


@case("solve_stacked", well_conditioned((2, 3, 3)), uniform((2, 3, 1)), primitives=("solve",))
def _solve_stacked(b, a, y):
    return b.emit("solve", [a, y])


@case("cholesky", positive_definite((3, 3)), primitives=("cholesky",))
def _cholesky(b, a):
    return b.emit("cholesky", [a])


@case("lu", well_conditioned((3, 3)), primitives=("lu",))
def _lu(b, a):
    return b.emit("lu", [a])

# --- issue 15: windowed reductions ---------------------------------------------------------

from runtime.primitives import windows  # noqa: E402


@case("reduce_window", uniform((4, 5)), primitives=("reduce_window",))
def _reduce_window(b, x):
    return [windows.reduce_window(b, x, "sum", (2, 3), (1, 2), ((1, 0), (0, 1)), (2, 1), (1, 2)),
            windows.reduce_window(b, x, "max", (2, 2), (2, 1), ((0, 1), (1, 1))),
            windows.reduce_window(b, x, "min", (3, 2), (1, 1), ((0, 0), (0, 0)), (1, 2))]


@case("select_and_gather_add", uniform((4, 5)), uniform((4, 5)),
      primitives=("select_and_gather_add",))
def _select_and_gather(b, t, x):
    return windows.select_and_gather_add(b, t, x, "max", window_dimensions=(2, 2),
                                         window_strides=(1, 2), padding=((0, 1), (1, 0)),
                                         base_dilation=(1, 1), window_dilation=(1, 1))


@case("select_and_scatter_add", uniform((2, 3)), uniform((4, 5)),
      primitives=("select_and_scatter_add",))
def _select_and_scatter(b, source, x):
    return windows.select_and_scatter_add(b, source, x, "min", (2, 2), (2, 2),
                                          ((0, 0), (0, 1)))


@case("reduce_window_region", uniform((4, 5)), uniform((4, 5)),
      primitives=("reduce_window_region",))
def _reduce_window_region(b, x, y):
    sub = b.child("reducer")
    a0, a1, e0, e1 = (sub.add_parameter((), F64) for _ in range(4))
    region = sub.finish_region([sub.add(a0, e0), sub.max(a1, e1)])
    inits = [b.constant(np.zeros((), F64)), b.constant(np.asarray(-np.inf))]
    return windows.reduce_window_region(b, [x, y], inits, region, (2, 2), (1, 1),
                                        ((0, 0), (1, 0)))

# --- issue 15: convolutions ------------------------------------------------------------------


def _conv(b, x, w, **options):
    from runtime.primitives.convolution import conv_general_dilated
    spatial = x.ndim - 2
    attrs = dict(window_strides=(1,) * spatial, padding=((0, 0),) * spatial,
                 lhs_dilation=(1,) * spatial, rhs_dilation=(1,) * spatial,
                 lhs_spec=range(x.ndim), rhs_spec=range(x.ndim), out_spec=range(x.ndim))
    return conv_general_dilated(b, x, w, **{**attrs, **options})


case("conv_strided_dilated_nhwc", uniform((2, 5, 4, 3)), uniform((2, 2, 3, 4)),
     primitives=("conv_general_dilated",))(
    lambda b, x, w: _conv(b, x, w, window_strides=(2, 1), padding=((1, 0), (0, 2)),
                          lhs_dilation=(1, 2), rhs_dilation=(2, 1), lhs_spec=(0, 3, 1, 2),
                          rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2)))
case("conv_feature_groups", uniform((2, 4, 5)), uniform((6, 2, 2)),
     primitives=("conv_general_dilated",))(
    lambda b, x, w: _conv(b, x, w, padding=((1, 1),), feature_group_count=2))
case("conv_batch_groups", uniform((4, 3, 5)), uniform((6, 3, 2)),
     primitives=("conv_general_dilated",))(
    lambda b, x, w: _conv(b, x, w, window_strides=(2,), batch_group_count=2))
# 45 mantissa bits: a real rounding, yet fine enough for the central differences
case("reduce_precision", uniform((2, 3)), primitives=("reduce_precision",))(
    lambda b, x: b.emit("reduce_precision", [x], exponent_bits=11, mantissa_bits=45)[0])
# --- issue 13: fft -------------------------------------------------------------------------

from runtime.primitives.fft import fft  # noqa: E402  (this block appended for issue 13)


def _spectrum_weights(b, like, seed):
    """A fixed complex array shaped like ``like`` (so each FFT's transpose is checked
    through a map that is not the identity)."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 1.5, like.shape) + 1j * rng.uniform(-0.5, 0.5, like.shape)
    return b.constant(w.astype(like.dtype))


@case("fft", uniform((2, 7)), primitives=("fft",))
def _fft_chain(b, x):
    c = fft(b, x, "RFFT", (7,))
    c = fft(b, b.mul(c, _spectrum_weights(b, c, 0)), "FFT", (4,))
    c = b.mul(fft(b, c, "IFFT", (4,)), _spectrum_weights(b, c, 1))
    return fft(b, c, "IRFFT", (7,))


@case("fft_2d", uniform((3, 4, 6)), primitives=("fft",))
def _fft_2d(b, x):
    c = fft(b, x, "RFFT", (4, 6))
    return fft(b, b.mul(c, _spectrum_weights(b, c, 2)), "IRFFT", (4, 6))


@case("abs_complex", uniform((2, 3)), primitives=("abs",))
def _abs_complex(b, x):
    z = b.convert(x, np.complex128)
    return b.abs(b.add(b.mul(z, _spectrum_weights(b, z, 3)), _spectrum_weights(b, z, 4)))

# --- issue 12: custom derivatives --------------------------------------------------------------
# The rule functions are plain Python, transpiled on first use (importing `transpiler`
# installs the hook); the custom functions are called as PSC code calls them.

import transpiler as _transpiler  # noqa: E402,F401  (transpiles the rule functions)
from runtime import custom_jvp as _custom_jvp, custom_vjp as _custom_vjp  # noqa: E402
from runtime.context import building as _building  # noqa: E402


@_custom_jvp
def _sin_times(x, y):
    return np.sin(x) * y


@_sin_times.defjvp
def _sin_times_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    return np.sin(x) * y, np.cos(x) * y * dx + np.sin(x) * dy


@_custom_vjp
def _cube(x):
    return x * x * x


def _cube_fwd(x):
    return x * x * x, x


def _cube_bwd(x, g):
    return (3.0 * x * x * g,)


_cube.defvjp(_cube_fwd, _cube_bwd)


@case("custom_jvp_call", uniform((2, 3)), uniform((2, 3)), primitives=("custom_jvp_call",))
def _custom_jvp_call(b, x, y):
    with _building(b):
        return _sin_times(x, y)


@case("custom_vjp_call", uniform((4,)), primitives=("custom_vjp_call",))
def _custom_vjp_call(b, x):
    with _building(b):
        return _cube(x)


# (integers: its zero derivative differs from central differences by design; its
# derivative is tested against jax.lax.stop_gradient in tests/test_custom_derivatives.py)
@case("stop_gradient", integers((2, 3)), primitives=("stop_gradient",))
def _stop_gradient(b, x):
    return b.mul(b.emit("stop_gradient", [x])[0], x)

# --- issue 13: triangular_solve (scipy.linalg) --------------------------------------------

from runtime.primitives.triangular import triangular_solve as _tri_solve  # noqa: E402


@case("triangular_solve", well_conditioned((3, 3)), uniform((3, 2)),
      primitives=("triangular_solve",))
def _triangular_solve(b, a, y):
    return [_tri_solve(b, a, y, lower=True), _tri_solve(b, a, y, lower=False, trans="T"),
            _tri_solve(b, a, y, lower=True, trans="C", unit_diagonal=True)]


@case("triangular_solve_stacked", well_conditioned((2, 3, 3)), uniform((2, 3, 1)),
      primitives=("triangular_solve",))
def _triangular_solve_stacked(b, a, y):
    return [_tri_solve(b, a, y, lower=False, unit_diagonal=True)]
# --- issue 13: svd ---------------------------------------------------------------------------
# Sign-invariant outputs (singular vectors are unique up to sign): s, the squares of the
# entries of u and vt, and products like u diag(f(s)) vt.
from runtime.primitives.svd import svd as _svd  # noqa: E402  (this block appended for issue 13)
def _svd_outputs(b, s, u, vt):
    k = s.shape[-1]
    weights = b.broadcast_in_dim(b.exp(s), u.shape[:-1] + (k,), tuple(range(u.ndim - 2)) +
                                 (u.ndim - 1,))
    u_k = b.slice(u, [0] * u.ndim, u.shape[:-1] + (k,))
    vt_k = b.slice(vt, [0] * vt.ndim, vt.shape[:-2] + (k, vt.shape[-1]))
    return [s, b.mul(u, u), b.mul(vt, vt),
            b.dot_general(b.mul(u_k, weights), vt_k, ((u.ndim - 1,), (u.ndim - 2,)),
                          (tuple(range(u.ndim - 2)),) * 2)]
@case("svd_tall", uniform((4, 3)), primitives=("svd",))
def _svd_tall(b, a):
    return _svd_outputs(b, *_svd(b, a))
@case("svd_wide_stacked", uniform((2, 2, 3)), primitives=("svd",))
def _svd_wide(b, a):
    return _svd_outputs(b, *_svd(b, a))
@case("svd_full_square", uniform((3, 3)), primitives=("svd",))
def _svd_full_square(b, a):
    return _svd_outputs(b, *_svd(b, a, full_matrices=True))
@case("svd_values", uniform((3, 4)), primitives=("svd",))
def _svd_values(b, a):
    return _svd(b, a, compute_uv=False)
# --- issue 13: LAPACK factorizations (runtime/primitives/decompositions.py) ----------------
def symmetric(shape):
    def draw(rng):   # well separated eigenvalues: eigenvector derivatives are defined
        x = rng.uniform(-1.0, 1.0, shape)
        return x + np.swapaxes(x, -1, -2) + np.diag(np.arange(shape[-1]) * 2.0)
    return draw
for _shape in [(4, 3), (3, 3), (3, 5), (2, 4, 2)]:
    for _full in (False, True):
        case(f"qr_{'x'.join(map(str, _shape))}_{'complete' if _full else 'reduced'}",
             uniform(_shape), primitives=("qr",))(
            lambda b, a, f=_full: b.emit("qr", [a], full_matrices=f))
@case("geqrf", uniform((4, 3)), primitives=("geqrf",))
def _geqrf(b, a):
    return b.emit("geqrf", [a])
@case("eigh_lower", symmetric((4, 4)), primitives=("eigh",))
def _eigh_lower(b, a):
    return b.emit("eigh", [a], lower=True)
@case("eigh_upper_stacked", symmetric((2, 3, 3)), primitives=("eigh",))
def _eigh_upper(b, a):
    return b.emit("eigh", [a], lower=False)
# eig's results are complex: the derivative test (real outputs) checks nothing here;
# tests/test_linalg_decompositions.py checks eigvals' derivatives
@case("eig_values", symmetric((3, 3)), primitives=("eig",))
def _eig_values(b, a):
    return b.emit("eig", [a], vectors=False)
@case("eig_vectors", symmetric((2, 3, 3)), primitives=("eig",))
def _eig_vectors(b, a):
    return b.emit("eig", [a], vectors=True)
@case("lu_stacked", well_conditioned((2, 4, 4)), primitives=("lu",))
def _lu_stacked(b, a):
    return b.emit("lu", [a])
# --- issue 13: complex parts -------------------------------------------------------------------
# Real in, real out, through complex values: the complex cotangents are checked through
# maps that are not the identity (`_spectrum_weights`).
@case("complex_parts", uniform((2, 3)), uniform((2, 3)),
      primitives=("complex", "real", "imag", "conj"))
def _complex_parts(b, x, y):
    z = b.mul(b.complex(x, y), _spectrum_weights(b, b.complex(x, y), 5))
    w = b.mul(b.conj(z), _spectrum_weights(b, z, 6))
    return [b.real(w), b.imag(w), b.mul(b.real(z), b.imag(b.conj(z)))]
case("unary_popcnt", integers((2, 3), -100, 100), primitives=("popcnt",))(
    lambda b, x: b.popcnt(x))
# (the order n is a constant: its partial is 0 by design, not a derivative)
case("polygamma", uniform((2, 3), 0.5, 3.0), primitives=("polygamma",))(
    lambda b, x: [b.polygamma(b.broadcast_in_dim(b.constant(np.float64(n)), x.shape, ()), x)
                  for n in (1.0, 2.0)])
# --- issue 14: collectives ----------------------------------------------------------------------
# Over an axis of one member (one replica: the program compiles for one device): each is the
# identity or a reshape of it, which exercises every rule's plumbing; their meaning over 8
# devices is tests/collective_cases.py's.


def _collective(b, name, x, **attrs):
    from runtime.primitives.collectives import collective
    return collective(b, name, x, "i", 1, **attrs)


@case("collectives_one_member", uniform((2, 3)),
      primitives=("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
                  "all_to_all", "axis_index"))
def _collectives(b, x):
    index = b.convert(_collective(b, "axis_index", None), x.dtype)
    shifted = b.add(x, b.broadcast_in_dim(index, x.shape, ()))
    return [_collective(b, "psum", b.mul(shifted, x)), _collective(b, "pmax", b.sin(x)),
            _collective(b, "pmin", b.cos(x)),
            _collective(b, "all_gather", b.mul(x, x), dimension=1),
            _collective(b, "psum_scatter", b.exp(x), dimension=0),
            _collective(b, "ppermute", b.tanh(x), pairs=((0, 0),)),
            _collective(b, "all_to_all", b.mul(x, shifted), split_dimension=1,
                        concat_dimension=0)]


# --- issue 14: sharding_constraint (SPMD; on a one-device mesh the identity) -------------


def _one_device_sharding():
    import jax   # noqa: PLC0415 (the client starts only when a case runs)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    return NamedSharding(Mesh(np.array(jax.devices()[:1]), ("x",)), PartitionSpec("x"))


@case("sharding_constraint", uniform((2, 3)), primitives=("sharding_constraint",))
def _sharding_constraint(b, x):
    y = b.emit("sharding_constraint", [b.sin(x)], sharding=_one_device_sharding())[0]
    return b.mul(y, x)
