"""Issue 18, front-end items: each reproducer and its variants, run both as plain
Python/NumPy (the oracle) and through `jit_ps`; the results must agree in value, dtype and
structure, or the PSC function must raise the `PSCError` the item asks for."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, f64, same
from runtime import static_range
from transpiler import jit_ps


# --- item 1: a traced break/return inside an unrolled loop ---------------------------------

def break_last_in_list(x, c):
    for w in [1.0, 2.0, 3.0]:
        if c > 0:
            x = x + 1.0
            break
    return x


def return_last_in_list(x, c):
    for w in [1.0, 2.0, 3.0]:
        if c > 0:
            return x + w
    return x


def break_last_in_tuple(x, c):
    for w in (1.0, 2.0, 3.0):
        if c > w:
            x = x + w
            break
    return x


def break_last_in_enumerate(x, c):
    for i, w in enumerate([0.5, 1.5, 2.5]):
        if c > w:
            x = x * (i + 2.0)
            break
    return x


def break_last_in_zip(x, c):
    for u, v in zip([1.0, 2.0, 3.0], (4.0, 5.0, 6.0)):
        if c > u:
            x = x + v
            break
    return x


def break_last_in_static_range(x, c):
    for k in static_range(4):
        if c > k:
            x = x + 10.0 ** k
            break
    return x


def return_last_in_static_range(x, c):
    for k in static_range(4):
        if x[0] + k > c:
            return x * k
    return -x


def break_in_middle(x, c):
    for w in [1.0, 2.0, 3.0]:
        x = x + w
        if c > w:
            x = x * 2.0
            break
        x = x - 0.5
    return x


def break_in_else_branch(x, c):
    for w in [1.0, 2.0, 3.0]:
        if c > w:
            x = x + 1.0
        else:
            x = x - w
            break
    return x


def continue_last_and_middle(x, c):
    for w in [1.0, 2.0, 3.0]:
        if c > w:
            x = x + w
            continue
        x = x * 2.0
        if c < 0:
            continue
    return x


def for_else_unrolled(x, c):
    for w in [1.0, 2.0, 3.0]:
        if c > w:
            x = x + w
            break
    else:
        x = x - 100.0
    return x


def nested_unrolled_breaks(x, c):
    for u in [1.0, 2.0]:
        for v in (0.5, 1.5, 2.5):
            if c > u + v:
                x = x + u * v
                break
        x = x + 0.25
    return x


def nested_return_in_inner(x, c):
    for u in [1.0, 2.0]:
        for v in (0.5, 1.5):
            if c > u + v:
                return x + u * 10.0 + v
        x = x + 1.0
    return x


def target_used_after_break(x, c):
    for w in [1.0, 2.0, 3.0]:
        if c > w:
            break
    return x * w


def tuple_target_used_after_break(x, c):
    for i, w in enumerate([1.0, 2.0, 3.0]):
        if c > w:
            break
    return x * w + i


def break_in_staged_range(x, c):
    for i in range(4):
        if c > i:
            x = x + 1.0
            break
    return x


COEFFS = [1.0, 2.0, 3.0, 4.0]


def break_in_range_needing_static_index(x, c):
    for i in range(4):
        x = x + COEFFS[i]
        if c > COEFFS[i]:
            x = x * 3.0
            break
    return x


def while_static_test_traced_break(x, c):
    i = 0
    while i < 3:
        i = i + 1
        if c > i:
            x = x + 1.0
            break
    return x, i


ITEM1 = [break_last_in_list, return_last_in_list, break_last_in_tuple,
         break_last_in_enumerate, break_last_in_zip, break_last_in_static_range,
         return_last_in_static_range, break_in_middle, break_in_else_branch,
         continue_last_and_middle, for_else_unrolled, nested_unrolled_breaks,
         nested_return_in_inner, target_used_after_break, tuple_target_used_after_break,
         break_in_staged_range, break_in_range_needing_static_index,
         while_static_test_traced_break]


@pytest.mark.parametrize("c", [-1.0, 0.0, 0.75, 1.0, 1.75, 2.5, 3.5, 5.0])
@pytest.mark.parametrize("fn", ITEM1, ids=lambda f: f.__name__)
def test_traced_exit_in_unrolled_loop(fn, c):
    same(fn, f64(0.5, -1.0), c)


# --- item 13: an early return, then a traced if/else that assigns a variable ---------------

def early_return_then_if_else(a, s):
    t1 = s
    if a.sum() > 100: return a
    if a[0] > 0.1: t1 = a[1]
    else: t1 = -1.0
    return a * t1


def early_return_then_elif_chain(a, s):
    t1 = s
    if a.sum() > 100:
        return a
    if a[0] > 0.1:
        t1 = a[1]
    elif a[0] > 0.0:
        t1 = a[2] * 2.0
    else:
        t1 = -1.0
    u = t1 + s
    return a * u


def early_return_then_nested_if_else(a, s):
    if a.sum() > 100:
        return a * 0.0
    if s > 1.0:
        if a[0] > 0.1:
            t = a[1]
        else:
            t = -a[2]
        r = a + t
    else:
        r = a - s
    return r


def two_early_returns_then_if_else(a, s):
    if a.sum() > 100:
        return a
    if a[0] < -5.0:
        return -a
    if a[1] > s:
        t = a * 2.0
    else:
        t = a * 3.0
    return t


ITEM13 = [early_return_then_if_else, early_return_then_elif_chain,
          early_return_then_nested_if_else, two_early_returns_then_if_else]


@pytest.mark.parametrize("a", [f64(1.0, 2.0, 3.0), f64(0.05, 2.0, 3.0), f64(-0.5, 2.0, 3.0),
                               f64(-9.0, 0.0, 1.0), f64(50.0, 60.0, 1.0)])
@pytest.mark.parametrize("s", [0.5, 2.0])
@pytest.mark.parametrize("fn", ITEM13, ids=lambda f: f.__name__)
def test_early_return_then_traced_if_else(fn, a, s):
    same(fn, a, s)


# --- item 14: np.add / np.append are functions, not container methods --------------------

def np_add_in_traced_if(a, s):
    if s > 0:
        a = np.add(a, 1.0)
    else:
        a = np.add(a, s)
    return a


def np_add_in_traced_while(a, s):
    while a.sum() < s:
        a = np.add(a, np.add(a[0], 0.5))
    return a


def np_functions_named_like_methods(a, s):
    total = a[0] * 0.0
    for i in range(a.shape[0]):
        if a[i] > s:
            total = np.add(total, a[i])
            parts = np.append(np.zeros(2), 1.0)   # static arguments: plain NumPy
            total = total + parts.sum()
    return total


@pytest.mark.parametrize("s", [-1.0, 0.5, 7.0])
@pytest.mark.parametrize("fn", [np_add_in_traced_if, np_add_in_traced_while,
                                np_functions_named_like_methods], ids=lambda f: f.__name__)
def test_numpy_functions_are_not_container_mutations(fn, s):
    same(fn, f64(0.25, 1.0, 2.0), s)


SEEN = set()


def set_add_in_traced_if(a, s):
    if s > 0:
        SEEN.add(1)
    return a


def test_set_add_in_traced_if_is_still_refused():
    # refused by the subset check since issue 11 (a mutating method on a global), before
    # the traced `if` is built
    from transpiler import PSCSyntaxError
    with pytest.raises(PSCSyntaxError, match="SEEN.add") as info:
        jit_ps(set_add_in_traced_if)
    assert f"{__file__}:{_line_of(set_add_in_traced_if, 'SEEN.add')}" in str(info.value)


def _line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


# --- item 15: a static array, indexed by a traced index, reassigned in a traced branch ----

def static_array_traced_index_in_test(k, s):
    t1 = np.full(4, .5)
    if t1[k] > s:
        t1 = t1 * 2
    return t1


def static_array_traced_index_in_branch(k, s):
    t1 = np.arange(4.0)
    if s > 0.5:
        t1 = t1 * t1[k]
    else:
        t1 = t1 + t1[k + 1]
    return t1, t1[k]


def static_array_traced_index_in_while(k, s):
    t = np.linspace(0.0, 1.0, 4)
    n = 0
    while t[k] < s:
        t = t + 0.25
        n = n + 1
    return t, n


def static_array_traced_index_in_staged_loop(k, s):
    w = np.array([1.0, 2.0, 3.0, 4.0])
    for i in range(k):
        if w[i] > s:
            w = w * 0.5
    return w


@pytest.mark.parametrize("k, s", [(0, 0.2), (1, 0.7), (2, 1.5), (3, 3.5)])
@pytest.mark.parametrize("fn", [static_array_traced_index_in_test,
                                static_array_traced_index_in_branch,
                                static_array_traced_index_in_staged_loop],
                         ids=lambda f: f.__name__)
def test_static_array_with_traced_index(fn, k, s):
    same(fn, min(k, 2), s)


@pytest.mark.parametrize("k, s", [(0, 0.2), (1, 0.7), (3, 1.6)])
def test_static_array_with_traced_index_in_while(k, s):
    same(static_array_traced_index_in_while, k, s)


# --- item 12: augmented assignment with a traced operand -----------------------------------

def times_equal_traced_scalar(x):
    t = np.ones(3)
    t *= x
    return t


def every_float_operator(x, a):
    t = np.linspace(1.0, 2.0, 3)
    t += x
    t -= a
    t *= a
    t /= x
    t **= 2
    t //= 0.5
    t %= 3.0
    return t


def every_integer_operator(k, m):
    t = np.arange(1, 4)
    t += k
    t -= m
    t *= k
    t //= 2
    t %= 7
    t **= 2
    t &= m
    t |= k
    t ^= m
    t <<= 2
    t >>= 1
    return t


def float32_target_keeps_dtype(a):
    t = np.ones(3, np.float32)
    t += a            # float64 array: NumPy computes in float64 and stores float32
    return t


def int32_target_keeps_dtype(m):
    t = np.arange(3, dtype=np.int32)
    t += m            # int64 array
    return t


def traced_local_keeps_dtype(a32):
    y = a32 * 1.0     # float32, traced
    y += np.ones(3)   # float64 constant: stays float32 in place
    y *= a32 * 2.0
    return y


def scalar_targets_follow_binary_rules(a):
    acc = 0.0
    acc += a.sum()
    s = a.max()
    s *= 2
    n = 1
    n -= a[0]
    return acc, s, n


def matmul_in_place(m):
    t = np.eye(2)
    t @= m
    return t


def static_static_stays_python(x, n):
    lst = [x]
    lst += [x * 2.0]
    k = 3
    k += n
    return lst, k


def target_in_staged_loop(a, n):
    t = np.zeros(3, np.float32)
    for i in range(n):
        t += a * i
    return t


def int_target_plus_float(s):
    t = np.arange(3)
    t += s            # NumPy: UFuncTypeError (float64 output into int64)
    return t


def int_target_true_divide(k):
    t = np.arange(3)
    t /= k            # NumPy: UFuncTypeError
    return t


def traced_int_target_plus_static_float(m):
    t = m * 2
    t += 0.5          # NumPy: UFuncTypeError (the target is traced, the value static)
    return t


def output_shape_would_grow(a2):
    t = np.ones(3)
    t += a2           # NumPy: non-broadcastable output operand (2, 3)
    return t


A = f64(0.5, 1.5, -2.0)
A32 = np.array([0.5, 1.25, -2.0], np.float32)
M = np.array([[1, 2, 3], [4, 5, 6]], np.int64)[0]


@pytest.mark.parametrize("fn, args", [
    (times_equal_traced_scalar, (2.0,)),
    (times_equal_traced_scalar, (A,)),
    (every_float_operator, (1.5, A)),
    (every_integer_operator, (3, M)),
    (float32_target_keeps_dtype, (A,)),
    (int32_target_keeps_dtype, (M,)),
    (traced_local_keeps_dtype, (A32,)),
    (scalar_targets_follow_binary_rules, (A,)),
    (scalar_targets_follow_binary_rules, (A32,)),
    (matmul_in_place, (np.array([[1.0, 2.0], [3.0, 4.0]]),)),
    (static_static_stays_python, (A, 2)),
    (target_in_staged_loop, (A, 4)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_augmented_assignment_matches_numpy(fn, args):
    same(fn, *args, static=("n",) if fn is static_static_stays_python else ())


def test_static_augmented_assignment_is_not_rewritten():
    text = jit_ps(static_static_stays_python, static_argnames=("n",)).generated_source
    assert "k += n" in text and "lst += [x * 2.0]" not in text   # lst holds a traced x
    # a traced target with a static value keeps the statement: Value's own `__iadd__`
    assert "t += 0.5" in jit_ps(traced_int_target_plus_static_float).generated_source
    assert "psc.augassign(t, x, 'mul')" in jit_ps(times_equal_traced_scalar).generated_source


@pytest.mark.parametrize("fn, arg, numpy_error, error, words", [
    (int_target_plus_float, 0.5, TypeError, "PSCTypeError", ("same_kind", "int64")),
    (int_target_true_divide, 2, TypeError, "PSCTypeError", ("same_kind", "divide")),
    (traced_int_target_plus_static_float, M, TypeError, "PSCTypeError",
     ("same_kind", "int64")),
    (output_shape_would_grow, np.ones((2, 3)), ValueError, "PSCShapeError",
     ("non-broadcastable", "(3,)", "(2, 3)")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_augmented_assignment_refused_where_numpy_raises(fn, arg, numpy_error, error, words):
    import transpiler
    with pytest.raises(numpy_error):
        fn(arg)
    with pytest.raises(getattr(transpiler, error)) as info:
        jit_ps(fn)(arg)
    message = str(info.value)
    assert f"{__file__}:{_line_of(fn, '# NumPy')}" in message
    for word in words:
        assert word in message


# --- item 16a: modifying a global is the purity error --------------------------------------

W_GLOBAL = np.ones(3)
CFG = {"k": 1.0}
STATE = {"calls": 0}
ORDER = np.array([3.0, 1.0, 2.0])


def sets_global_array_element(x):
    W_GLOBAL[0] = 9.0   # MARK
    return x * W_GLOBAL


def sets_global_dict_entry(x):
    CFG['k'] = 3.0   # MARK
    return x * CFG['k']


def counts_calls_in_global(x):
    STATE["calls"] += 1   # MARK
    return x


def sorts_global(x):
    ORDER.sort()   # MARK
    return x * ORDER


def fills_global(x):
    W_GLOBAL.fill(2.0)   # MARK
    return x


def sets_enclosing_element(x):
    acc = np.zeros(3)

    def bump(v):
        acc[0] = v   # MARK
        return v
    return bump(x)


@pytest.mark.parametrize("fn", [sets_global_array_element, sets_global_dict_entry,
                                counts_calls_in_global, sorts_global, fills_global],
                         ids=lambda f: f.__name__)
def test_modifying_a_global_is_refused(fn):
    from transpiler import PSCError
    with pytest.raises(PSCError) as info:
        jit_ps(fn)(f64(1.0, 2.0, 3.0))
    message = str(info.value)
    assert f"{__file__}:{_line_of(fn, '# MARK')}:" in message
    assert "may not modify globals" in message and "the module" in message
    assert "copy it into a local first" in message   # the hint


def test_modifying_an_enclosing_functions_variable_is_refused():
    from transpiler import PSCError
    with pytest.raises(PSCError) as info:
        jit_ps(sets_enclosing_element)(f64(1.0, 2.0, 3.0))
    assert f"{__file__}:{_line_of(sets_enclosing_element, '# MARK')}:" in str(info.value)
    assert "an enclosing function" in str(info.value)


def test_globals_are_not_changed_by_the_refusal():
    assert_same(W_GLOBAL, np.ones(3))
    assert CFG == {"k": 1.0} and STATE == {"calls": 0}


# --- item 16b: x.sort() / x.fill(v) on a local array ---------------------------------------

def sort_local(x):
    y = x * 2.0
    y.sort()
    return y


def sort_local_axis(m):
    y = m + 0.0
    y.sort(axis=0)
    z = m - 1.0
    z.sort(-1)
    return y, z


def fill_local(x, v):
    y = x + 1.0
    y.fill(v)
    z = np.zeros(3, np.int32)
    z.fill(v)             # cast to int32 as NumPy's fill does
    return y, z


def fill_static_local_then_use(x):
    t = np.empty(3)
    t.fill(0.5)           # static: NumPy's own fill
    lst = [3, 1, 2]
    lst.sort()            # a list: list.sort
    return x * t, lst


def sort_in_traced_branch(x, s):
    y = x * 1.0
    if s > 0:
        y.sort()
    else:
        y.fill(s)
    return y


def sort_then_index(x, k):
    y = x.copy()
    y.sort()
    return y[k], y


def sort_argument(x):
    x.sort()   # MARK
    return x


def fill_argument_alias(x):
    z = x
    z.fill(0.0)   # MARK
    return x


M2 = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -3.0]])


@pytest.mark.parametrize("fn, args", [
    (sort_local, (f64(3.0, -1.0, 2.0, 0.0),)),
    (sort_local_axis, (M2,)),
    (fill_local, (f64(1.0, 2.0, 3.0), 2.7)),
    (fill_local, (f64(1.0, 2.0, 3.0), -2.7)),
    (fill_static_local_then_use, (f64(1.0, 2.0, 3.0),)),
    (sort_in_traced_branch, (f64(3.0, -1.0, 2.0), 1.0)),
    (sort_in_traced_branch, (f64(3.0, -1.0, 2.0), -1.0)),
    (sort_then_index, (f64(3.0, -1.0, 2.0), 0)),
    (sort_then_index, (f64(3.0, -1.0, 2.0), 2)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_inplace_methods_on_locals(fn, args):
    same(fn, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])


def test_inplace_sort_of_an_argument_is_written_back():
    """Issue 17: an argument's own in-place update reaches the caller, as in NumPy."""
    expected, actual = f64(3.0, -1.0, 2.0), f64(3.0, -1.0, 2.0)
    assert_same(jit_ps(sort_argument)(actual), sort_argument(expected))
    assert_same(actual, expected)


@pytest.mark.parametrize("fn", [fill_argument_alias], ids=lambda f: f.__name__)
def test_inplace_methods_on_arguments_are_refused(fn):
    from transpiler import PSCSyntaxError
    with pytest.raises(PSCSyntaxError) as info:
        jit_ps(fn)
    assert f"{__file__}:{_line_of(fn, '# MARK')}:" in str(info.value)
    assert "modify" in str(info.value) and "argument" in str(info.value)
    assert ".copy()" in str(info.value)


def appends_in_unrolled_loop_with_traced_break(x, c):
    seen = []
    for w in [1.0, 2.0, 3.0]:
        seen.append(w)   # MARK
        if c > w:
            break
    return x * len(seen)


def test_container_growing_after_a_traced_break_is_refused():
    """Which elements it gets depends on where the traced break happens."""
    from transpiler import PSCTypeError
    with pytest.raises(PSCTypeError) as info:
        jit_ps(appends_in_unrolled_loop_with_traced_break)
    line = _line_of(appends_in_unrolled_loop_with_traced_break, "# MARK")
    assert f"{__file__}:{line}:" in str(info.value) and "seen.append" in str(info.value)


# --- item 1, more shapes: traced rows, list arguments, for-else, continue -----------------

def break_over_enumerated_traced_rows(X, c):
    total = 0.0
    for i, row in enumerate(X):
        if row.sum() > c:
            break
        total += row.sum()
    return total, i

def return_in_loop_over_list_argument(xs, c):
    acc = xs[0] * 0.0
    for v in xs:
        if v.sum() > c:
            return acc
        acc = acc + v
    return -acc

def nested_static_ranges_with_for_else(x, c):
    out = x
    for k in static_range(3):
        for j in static_range(2):
            if x[j] * k > c:
                out = out + k * 10 + j
                break
        else:
            out = out - 1.0
            continue
        if c < 0:
            break
    return out

def float32_accumulator_in_unrolled_loop(x, c):
    t = np.zeros(2, np.float32)
    for w in [1.0, 2.0]:
        t += x * w
        if c > w:
            break
    return t

def continue_in_while_with_static_test(x, c):
    y = x
    i = 0
    while i < 4:
        i += 1
        if y.sum() > c:
            continue
        y = y * 2.0
    return y, i


ROWS = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]])
LIST_ARG = [np.ones(2), 2 * np.ones(2), 3 * np.ones(2)]


@pytest.mark.parametrize("fn, args", [
    (break_over_enumerated_traced_rows, (ROWS, 2.0)),
    (break_over_enumerated_traced_rows, (ROWS, 3.5)),
    (break_over_enumerated_traced_rows, (ROWS, 100.0)),
    (return_in_loop_over_list_argument, (LIST_ARG, 3.5)),
    (return_in_loop_over_list_argument, (LIST_ARG, 100.0)),
    (nested_static_ranges_with_for_else, (f64(0.5, 1.5), 0.7)),
    (nested_static_ranges_with_for_else, (f64(0.5, 1.5), -1.0)),
    (nested_static_ranges_with_for_else, (f64(0.5, 1.5), 5.0)),
    (float32_accumulator_in_unrolled_loop, (f64(1.0, 2.0), 1.5)),
    (float32_accumulator_in_unrolled_loop, (f64(1.0, 2.0), 0.0)),
    (continue_in_while_with_static_test, (f64(1.0, 2.0), 10.0)),
    (continue_in_while_with_static_test, (f64(1.0, 2.0), 1.0)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_traced_exits_more_shapes(fn, args):
    same(fn, *args)
