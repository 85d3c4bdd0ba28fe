"""Issue 17: in-place updates of array arguments, with NumPy's semantics.

Each test is differential: the function runs as plain NumPy on one copy of the arguments
and under jit_ps on another; the results and the arguments after the call must be the
same (values, dtypes, shapes).  What PSC cannot make exact is refused with a PSCError.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from runtime.errors import PSCError, PSCSyntaxError, PSCTypeError, PSCValueError
from transpiler import jit_ps

from conftest import assert_same


def same_updates(fn, *args, static=(), **kwargs):
    """``fn(*args, **kwargs)`` under NumPy and under jit_ps, each on its own deep copy of
    the arguments: the results and the arguments afterwards are the same."""
    expected_args, expected_kwargs = copy.deepcopy((args, kwargs))
    actual_args, actual_kwargs = copy.deepcopy((args, kwargs))
    expected = fn(*expected_args, **expected_kwargs)
    compiled = jit_ps(fn, static_argnames=static)
    actual = compiled(*actual_args, **actual_kwargs)
    if expected is None:
        assert actual is None
    else:
        assert_same(actual, expected)
    assert_same(list(actual_args), list(expected_args))
    assert_same(actual_kwargs, expected_kwargs)
    return compiled


def grid(shape=(5, 6), dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- the forms of update ------------------------------------------------------------------

def stencil(u):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def gemm_like(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def corners(A):
    A[0, 0] = 1.0
    A[-1, -1] += 2.0
    A[1] = -A[1]


def masked(a):
    a[a < 0] = 0.0
    return a.sum()


def fancy(a, idx):
    a[idx] = -1.0
    a[[0, 2]] += 10.0


def augmented_forms(data, mean, scale):
    data -= mean
    data *= scale
    data /= 2.0


def integer_updates(a):
    a //= 2
    a[0] = 7.9   # cast as NumPy stores it: 7
    a <<= 1


def float32_keeps_dtype(a, b):
    a += b       # float64 b: the float32 array stays float32
    a[0] = 1.0 / 3.0  # rounded to float32, as NumPy stores it


def sort_and_fill(x, y, v):
    x.sort()
    y.fill(v)


@pytest.mark.parametrize("fn, args", [
    (stencil, (grid(),)),
    (gemm_like, (1.5, 0.5, grid((3, 4)), grid((3, 5), seed=1), grid((5, 4), seed=2))),
    (corners, (grid((3, 3)),)),
    (fancy, (np.arange(6.0), np.array([1, 4]))),
    (augmented_forms, (grid((4, 3)), grid((3,), seed=1), 3.0)),
    (integer_updates, (np.arange(5, dtype=np.int32),)),
    (float32_keeps_dtype, (grid((3,), np.float32), grid((3,), seed=1))),
    (sort_and_fill, (grid((4,)), np.zeros(3, np.int64), 2.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_updates_are_written_back(fn, args):
    same_updates(fn, *args)


def test_boolean_mask_update():
    try:
        same_updates(masked, grid((4, 4)))
    except PSCError as err:   # traced masks are another issue's; never a silent difference
        pytest.skip(f"traced boolean masks are not supported: {err.message}")


def test_integer_array_augmented_by_a_float_is_numpys_casting_error():
    def bump(a):
        a += 1.5

    with pytest.raises(TypeError):
        bump(np.arange(3))
    a = np.arange(3)
    with pytest.raises(PSCTypeError, match="same_kind"):
        jit_ps(bump)(a)
    np.testing.assert_array_equal(a, np.arange(3))   # nothing written


def test_zero_d_array_is_updated_and_a_scalar_is_rebound():
    def count(n, total, x):
        n += 1
        total += x.sum()
        return n

    same_updates(count, np.array(3), np.zeros(()), grid((3,)))
    same_updates(count, 3.0, np.float64(1.0), grid((3,)))   # scalars: caller keeps them


def test_return_value_and_several_updated_arguments():
    def step(u, v, p):
        un = u.copy()
        u[1:] = un[:-1] + p.sum()
        v[:-1] -= un[1:]
        return u * 2.0, v.sum()

    same_updates(step, grid((6,)), grid((6,), seed=1), grid((2,), seed=2))


def test_returning_the_updated_argument_itself():
    def normalize(x):
        x /= np.linalg.norm(x)
        return x

    same_updates(normalize, grid((5,)))


def test_repeated_calls_write_back_on_the_fast_path():
    compiled = jit_ps(stencil)
    for seed in range(3):
        u, expected = grid(seed=seed), grid(seed=seed)
        assert compiled(u) is None
        stencil(expected)
        assert_same(u, expected)
    assert compiled.cache_info().misses == 1


def test_keyword_and_static_arguments():
    def relax(u, *, steps, weight=0.5):
        for _ in range(steps):
            u[1:-1] = (1 - weight) * u[1:-1] + weight * 0.5 * (u[:-2] + u[2:])
        return steps

    same_updates(relax, grid((7,)), steps=3, static=("steps",))
    same_updates(relax, u=grid((7,)), steps=2, weight=0.25, static=("steps",))


def test_return_device_arrays_still_writes_back():
    def bump(a):
        a += 1.0
        return a.sum()

    a = np.zeros(3)
    result = jit_ps(bump, return_device_arrays=True)(a)
    np.testing.assert_array_equal(a, np.ones(3))
    assert float(result) == 3.0


# --- control flow ---------------------------------------------------------------------------

def test_updates_in_a_staged_loop_and_a_traced_branch():
    def iterate(u, n, threshold):
        for i in range(n):
            u[1:-1] = 0.5 * (u[:-2] + u[2:])
            if u.sum() > threshold:
                u[0] += 1.0
            else:
                u[-1] -= 1.0
        return u.max()

    for threshold in (-100.0, 100.0, 0.1):
        same_updates(iterate, grid((8,)), 4, threshold)


def test_updates_in_a_while_loop():
    def shrink(x):
        steps = 0
        while np.abs(x).max() > 0.1:
            x *= 0.5
            steps += 1
        return steps

    same_updates(shrink, grid((4,)) * 10)


def test_early_return_keeps_the_updates_made_before_it():
    def clear_until_negative(a):
        for i in range(a.shape[0]):
            if a[i] < 0:
                return i
            a[i] = 0.0
        return -1

    for values in ([1.0, 2.0, -1.0, 3.0], [1.0, 2.0], [-1.0, 5.0]):
        same_updates(clear_until_negative, np.array(values))


def test_return_in_a_traced_branch():
    def maybe(a, flag):
        a[0] = 5.0
        if flag > 0:
            a[1] = 6.0
            return a.sum()
        a[2] = 7.0
        return -a.sum()

    same_updates(maybe, np.zeros(4), 1.0)
    same_updates(maybe, np.zeros(4), -1.0)


# --- helpers ----------------------------------------------------------------------------------

def build_up_b(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = rho * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx * dt) +
                           (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))


def pressure_poisson(nit, p, dx, dy, b):
    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = ((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 +
                         (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) / \
            (2 * (dx**2 + dy**2)) - b[1:-1, 1:-1] * 0.01
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[-1, :] = 0


def cavity_like(nt, nit, u, v, dt, dx, dy, p, rho):
    """The shape of NPBench's cavity_flow: helpers update a local (b) and an argument
    (p); the kernel updates its own arguments after them."""
    b = np.zeros(u.shape)
    for n in range(nt):
        un = u.copy()
        build_up_b(b, rho, dt, u, v, dx, dy)
        pressure_poisson(nit, p, dx, dy, b)
        u[1:-1, 1:-1] = un[1:-1, 1:-1] - dt * (p[1:-1, 2:] - p[1:-1, 0:-2])
        u[0, :] = 0
        v[:, -1] = 1


def test_helpers_update_a_local_and_an_argument():
    args = (3, 4, grid(), grid(seed=1), 0.01, 0.1, 0.2, grid(seed=2), 1.0)
    same_updates(cavity_like, *args, static=("nt", "nit"))
    same_updates(cavity_like, *args)   # traced loop counts: staged loops


def bump_rows(m, k):
    m[0] += k
    return m.sum()


def helper_result_and_update(a):
    total = bump_rows(a, 1.0)
    tmp = bump_rows(a * 2.0, 5.0)   # a temporary: its update goes nowhere, as in NumPy
    return total + tmp


def outer_helper(x):
    bump_rows(x, 2.0)


def transitive(a):
    outer_helper(a)
    return a[0]


def test_helper_result_and_temporaries():
    same_updates(helper_result_and_update, grid((3, 2)))


def test_helpers_updating_transitively():
    same_updates(transitive, grid((3, 2)))


@jit_ps
def compiled_helper(x, y):
    x[0] = y.sum()


def calls_compiled_helper(a, b):
    compiled_helper(a, b)
    return a * 2.0


def test_a_jit_ps_helper_updates_the_callers_array():
    same_updates(calls_compiled_helper, grid((3,)), grid((2,), seed=1))


def aug_helper(n, arr):
    n += 1.0
    arr += n


def scalar_then_array(a):
    k = 1.0
    aug_helper(k, a)
    return k   # Python rebinds the helper's n: the caller's k stays 1.0


def test_augmented_helper_parameter_bound_to_a_scalar_is_rebound_only():
    same_updates(scalar_then_array, grid((3,)))


def helper_given_a_view(u):
    bump_rows(u[1:], 1.0)  # VIEW


def helper_in_an_expression(u):
    return 2.0 * bump_rows(u, 1.0)  # EXPRESSION


def marked(fn, marker):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if f"# {marker}" in line)


@pytest.mark.parametrize("fn, marker, words", [
    (helper_given_a_view, "VIEW", "view"),
    (helper_in_an_expression, "EXPRESSION", "statement"),
], ids=["view", "expression"])
def test_helper_updates_psc_cannot_follow_are_refused(fn, marker, words):
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(fn)
    assert f"test_argument_updates.py:{marked(fn, marker)}:" in str(info.value)
    assert words in info.value.message and info.value.hint


# --- refused: aliases, views, rebinding, globals ------------------------------------------------

def alias_update(u):
    z = u
    z[0] = 1.0  # ALIAS


def view_update(u):
    row = u[0]
    row[:] = 0.0  # VIEW


def loop_target_update(u):
    for row in u:
        row[:] = 0.0  # LOOP


def rebound_after_update(u):
    u[0] = 1.0  # UPDATE
    u = u * 2.0  # REBIND
    return u


GLOBAL = np.zeros(3)


def global_update(x):
    GLOBAL[0] = x.sum()  # GLOBAL


def static_update(x, shape):
    shape[0] = 1  # STATIC
    return x


@pytest.mark.parametrize("fn, marker, words", [
    (alias_update, "ALIAS", "in place"),
    (view_update, "VIEW", "in place"),
    (loop_target_update, "LOOP", "in place"),
    (rebound_after_update, "REBIND", "rebound"),
    (global_update, "GLOBAL", "global"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_updates_psc_cannot_make_exact_are_refused(fn, marker, words):
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(fn)
    assert f"test_argument_updates.py:{marked(fn, marker)}:" in str(info.value)
    assert words in info.value.message and info.value.hint


def test_rebinding_error_names_the_update_line():
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(rebound_after_update)
    assert f"(line {marked(rebound_after_update, 'UPDATE')})" in info.value.message


def test_a_copy_first_makes_a_local_and_nothing_is_written():
    def local(u):
        u = u.copy()
        u[0] = 9.0
        return u

    same_updates(local, grid((3,)))


def test_a_static_argument_updated_in_place_is_refused():
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(static_update, static_argnames=("shape",))
    assert f"test_argument_updates.py:{marked(static_update, 'STATIC')}:" in str(info.value)


# --- call-time checks -----------------------------------------------------------------------------

def test_jax_array_argument_is_refused():
    import jax.numpy as jnp
    u = jnp.zeros((5, 6))
    with pytest.raises(PSCTypeError, match="jax array") as info:
        jit_ps(stencil)(u)
    assert "'u'" in info.value.message


def test_jax_array_with_augmented_assignment_is_rebound_as_in_python():
    import jax.numpy as jnp

    def bump(a):
        a += 1.0
        return a

    a = jnp.zeros(3)
    np.testing.assert_array_equal(np.asarray(jit_ps(bump)(a)), np.ones(3))
    np.testing.assert_array_equal(np.asarray(a), np.zeros(3))   # jax: `+=` rebinds


def test_read_only_array_is_refused_like_numpy():
    u = grid()
    u.flags.writeable = False
    with pytest.raises(ValueError):
        stencil(u.view())
    with pytest.raises(PSCValueError, match="read-only") as info:
        jit_ps(stencil)(u)
    assert isinstance(info.value, ValueError) and "'u'" in info.value.message


def test_list_argument_is_refused():
    def first(a):
        a[0] = 1.0

    with pytest.raises(PSCTypeError, match="list") as info:
        jit_ps(first)([0.0, 2.0])
    assert "'a'" in info.value.message


def test_the_same_array_twice_is_refused():
    def add_into(a, b):
        a += b

    x = grid((3,))
    before = x.copy()
    with pytest.raises(PSCValueError, match="passed again") as info:
        jit_ps(add_into)(x, x)
    assert "'a'" in info.value.message and "'b'" in info.value.message
    np.testing.assert_array_equal(x, before)   # nothing written


def test_overlapping_views_are_refused_and_disjoint_ones_are_exact():
    def shift(a, b):
        a[:] = b + 1.0

    base = np.arange(8.0)
    with pytest.raises(PSCValueError, match="shares memory"):
        jit_ps(shift)(base[:5], base[3:])
    same_updates(shift, base[:4], base[4:])
    expected, actual = np.arange(8.0), np.arange(8.0)
    shift(expected[:4], expected[4:])
    jit_ps(shift)(actual[:4], actual[4:])
    assert_same(actual, expected)


def test_an_unupdated_argument_may_alias_another_unupdated_one():
    def total(a, b):
        return a.sum() + b.sum()

    x = grid((3,))
    assert_same(jit_ps(total)(x, x), total(x, x))


# --- chained element assignment (NPBench's covariance) ----------------------------------------

def test_chained_element_assignment_assigns_each_target_once():
    def symmetric(data, M):
        mean = np.mean(data, axis=0)
        data -= mean
        cov = np.zeros((M, M), dtype=data.dtype)
        for i in range(M):
            cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / 3.0
        first = last = cov[0]
        return cov, first, last

    same_updates(symmetric, grid((4, 3)), 3, static=("M",))


def test_chained_assignment_of_a_name_to_an_array_and_an_element():
    def both(x):
        y = np.zeros(3)
        z = y[1] = x[0] * 2.0
        return y, z

    same_updates(both, grid((3,)))


def test_a_transform_of_an_updating_function_is_refused():
    from transpiler import grad

    def energy(x):
        x[0] = 2.0
        return (x * x).sum()

    with pytest.raises(PSCSyntaxError, match="transform"):
        jit_ps(grad(energy))(np.ones(3))


# --- unpacking into elements (NPBench's nbody: `KE[0], PE[0] = energy(...)`) ---------------

def _sum_and_max(v):
    return np.sum(v), np.max(v)


def test_unpacking_into_elements_assigns_each_target():
    def history(v, n):
        totals = np.zeros(n + 1)
        peaks = np.ndarray(n + 1, dtype=np.float64)
        peaks[:] = 0.0
        totals[0], peaks[0] = _sum_and_max(v)
        for i in range(n):
            v += 1.0
            totals[i + 1], peaks[i + 1] = _sum_and_max(v)
        return totals, peaks

    same_updates(history, grid((4,)), 3, static=("n",))


def test_unpacking_mixes_names_elements_and_a_starred_target_left_to_right():
    def mixed(a, b):
        i, a[i], *rest = 2, b[0], b[1], b[2]
        (a[0], j), b[1] = (b[2] * 2.0, 1), a[2]
        return i, j, rest

    same_updates(mixed, grid((4,)), grid((3,), seed=1))


# --- ufuncs with `out` (NPBench's mandelbrot2: `np.multiply(Z, Z, Z)`) ---------------------

def ufunc_out_forms(a, b, c, flags):
    np.multiply(a, b, c)                       # positional out, an argument: written back
    np.add(c, 1, out=c)                        # keyword out
    np.logical_not(flags, flags)               # a unary ufunc
    z = np.zeros(a.shape)
    np.subtract(a, 1.0, out=(z,), where=flags)  # a one-tuple, and where= keeps z elsewhere
    k = np.zeros(a.shape, np.int32)
    np.floor_divide(7, 2, k)                   # scalar inputs broadcast to out's shape
    return z, k


def test_ufunc_out_updates_the_variable_and_the_callers_array():
    same_updates(ufunc_out_forms, grid((4, 3)), grid((3,), seed=1), np.zeros((4, 3)),
                 grid((4, 3), seed=2) > 0)


def test_ufunc_out_keeps_the_out_dtype_and_refuses_numpys_casting_error():
    def into_float32(a, out):
        np.multiply(a, 3.0, out)
    same_updates(into_float32, grid((3,)), np.zeros(3, np.float32))

    def into_int(a, out):
        np.multiply(a, 3.0, out)
    with pytest.raises(TypeError) as numpy_error:
        into_int(grid((3,)), np.zeros(3, np.int64))
    with pytest.raises(PSCTypeError, match="same_kind"):
        jit_ps(into_int)(grid((3,)), np.zeros(3, np.int64))
    assert "same_kind" in str(numpy_error.value)


def test_ufunc_out_whose_result_is_used_is_a_clear_error():
    def used(a, out):
        return np.add(a, 1.0, out) * 2.0
    with pytest.raises(PSCTypeError, match="on its own line"):
        jit_ps(used)(grid((3,)), np.zeros(3))
