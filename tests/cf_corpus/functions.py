"""A corpus of plain Python + NumPy functions with control flow over *traced* values.

Nothing here is decorated: calling a function directly is the pure-NumPy oracle, and
``tests/test_control_flow_corpus.py`` compares it with ``jit_ps(function)`` on inputs that
take different paths (a branch taken and not, zero trips and several, an early exit and
none).  Helpers are plain functions too.  The explicit primitives imported from
`transpiler` have their reference meaning (`runtime.reference`) when this module runs as
plain Python.
"""
import numpy as np

from transpiler import cond, fori_loop, static_range, switch, while_loop

TOL = 1e-6
LIMITS = (0.5, 2.0, 8.0)


# --- helpers (plain, undecorated) ----------------------------------------------------------

def clip_scale(v, s):
    return np.clip(v, -1.0, 1.0) * s


def halvings(v):
    """A helper with a traced loop of its own: how often v halves before |v| <= 1."""
    k = 0
    while np.abs(v).max() > 1.0:
        v = v * 0.5
        k = k + 1
    return v, k


def sign_step(v):
    if v.sum() > 0:
        return v - 1.0
    return v + 1.0


def pair_update(a, b):
    return a + b, a * b


# --- if / elif / else on traced tests -----------------------------------------------------

def if_both_branches(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def if_modify_one_branch(x):
    y = x + 1.0
    if x.mean() > 0:
        y = y * 3.0
    return y


def if_elif_else(x):
    s = x.sum()
    if s > 1.0:
        y = x - 1.0
    elif s > -1.0:
        y = x * 0.5
    else:
        y = np.zeros_like(x)
    return y


def if_nested(x, t):
    if x.max() > t:
        if x.min() > 0:
            r = x.max() - t
        else:
            r = x.min() + t
    else:
        if x.mean() > 0:
            r = x.mean()
        else:
            r = t * 2.0
    return r


def if_promote_int(x):
    n = 0
    if x.sum() > 0:
        n = 1
    else:
        n = 2
    return n


def if_two_outputs(x, y):
    a = x
    b = y
    if (x * y).sum() > 0:
        a = x + y
    else:
        b = x - y
    return a, b


def if_size1_element(x):
    if x[0] > 0:
        r = x * x[0]
    else:
        r = x - x[0]
    return r


def if_equals_true(x):
    out = x
    if (x.sum() > 0) == True:  # noqa: E712
        out = x + 10
    return out


def if_size1_array(v, x):
    if v > 0:
        x = x + v
    return x


def if_traced_and_static(x, flag):
    if flag and x.sum() > 0:
        x = x * 2.0
    return x


def if_int_array(k):
    if k.sum() % 2 == 0:
        k = k // 2
    else:
        k = 3 * k + 1
    return k


def if_bool_array(m, x):
    if m.any():
        x = np.where(m, x, 0.0)
    return x


def loop_inside_if(x):
    if x.sum() > 0:
        for _ in range(3):
            x = x * 2.0
    else:
        while x.sum() < 0:
            x = x + 1.0
    return x


def if_then_static_loop(x):
    total = x[0] * 0
    for v in [1.0, 2.0, 3.0]:
        if x.sum() > v:
            total = total + v
    return total


# --- while with traced tests -------------------------------------------------------------

def while_halve_count(x):
    steps = 0
    while np.abs(x).max() > 1.0:
        x = x * 0.5
        steps += 1
    return x, steps


def while_float_acc(x, limit):
    acc = 0.0
    i = 0
    while acc < limit:
        acc = acc + x[i % x.shape[0]]
        i = i + 1
    return acc, i


def while_true_break(x):
    k = 0
    while True:
        x = x * 0.5
        k += 1
        if x.max() < 1.0:
            break
    return x, k


def while_else(x, cap):
    i = 0
    while i < x.shape[0]:
        if x[i] > cap:
            break
        i += 1
    else:
        i = -1
    return i


def while_continue(x):
    i = 0
    total = x[0] * 0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] < 0:
            continue
        total = total + x[i - 1]
    return total


def while_traced_bound(n):
    i = 0
    s = 0
    while i < n:
        s = s + i * i
        i = i + 1
    return s, i


def while_and_test(x, tol):
    i = 0
    while i < 20 and np.abs(x).max() > tol:
        x = x * 0.5
        i = i + 1
    return x, i


def while_zero_trip(x):
    y = x
    while y.sum() > 100.0:
        y = y - 1.0
    return y


def while_tuple_state(x):
    state = (x, 0)
    while state[0].sum() > 1.0:
        state = (state[0] * 0.5, state[1] + 1)
    return state


def while_dict_state(x):
    st = {"v": x, "n": 0, "acc": 0.0}
    while st["v"].max() > 0.1:
        st = {"v": st["v"] * 0.5, "n": st["n"] + 1, "acc": st["acc"] + st["v"].sum()}
    return st


def while_list_state(x):
    pair = [x, x * 0]
    while pair[0].sum() > 0:
        pair = [pair[0] - 1.0, pair[1] + 1.0]
    return pair


def while_int32_counter(n):
    c = np.int32(0)
    while n > 1:
        n = n // 2
        c = c + 1
    return c, n


# --- algorithms with traced loops --------------------------------------------------------

def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def bisection(c, lo, hi):
    # root of x**3 - c on [lo, hi]
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if mid * mid * mid - c > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def newton_sqrt(a):
    x = a
    while True:
        nx = 0.5 * (x + a / x)
        if np.abs(nx - x).max() < 1e-12:
            break
        x = nx
    return x


def newton_iters(a, tol):
    x = np.ones_like(a)
    it = 0
    while np.abs(x * x - a).max() > tol and it < 50:
        x = x - (x * x - a) / (2 * x)
        it += 1
    return x, it


def running_max(x):
    best = x[0]
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
        out[i] = best
    return out


def argmax_loop(x):
    best = x[0]
    idx = 0
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
            idx = i
    return idx, best


def bubble_sort_static(x):
    x = x.copy()
    n = x.shape[0]
    for i in static_range(n):
        for j in static_range(n - 1 - i):
            if x[j] > x[j + 1]:
                a = x[j]
                x[j] = x[j + 1]
                x[j + 1] = a
    return x


def bubble_sort_range(x):
    x = x.copy()
    n = x.shape[0]
    for i in range(n):
        for j in range(n - 1):
            if x[j] > x[j + 1]:
                a = x[j]
                x[j] = x[j + 1]
                x[j + 1] = a
    return x


def power_iteration(A, tol):
    v = np.ones(A.shape[0], dtype=A.dtype)
    v = v / np.linalg.norm(v)
    lam = 0.0
    k = 0
    while k < 500:
        w = A @ v
        new_lam = v @ w
        v = w / np.linalg.norm(w)
        k += 1
        if np.abs(new_lam - lam) < tol:
            lam = new_lam
            break
        lam = new_lam
    return lam, k


def cumprod_early_stop(x, cap):
    out = np.ones_like(x)
    p = x[0] * 0 + 1
    for i in range(x.shape[0]):
        p = p * x[i]
        if np.abs(p) > cap:
            break
        out[i] = p
    return out, p


def fib_traced(n):
    a = 0
    b = 1
    for _ in range(n):
        a, b = b, a + b
    return a


def int_sqrt(n):
    r = 0
    while (r + 1) * (r + 1) <= n:
        r += 1
    return r


def digit_sum(n):
    s = n * 0
    while n > 0:
        s = s + n % 10
        n = n // 10
    return s


# --- for over range ----------------------------------------------------------------------

def for_static_range_traced_state(x):
    total = 0.0
    for i in range(4):
        total = total + x[i] * i
    return total


def for_traced_bound(x, n):
    total = x[0] * 0
    for i in range(n):
        total = total + x[i]
    return total


def for_start_stop(x, lo, hi):
    total = x[0] * 0
    for i in range(lo, hi):
        total = total + x[i] * i
    return total


def for_negative_step(x, n):
    out = x * 0
    j = 0
    for i in range(n - 1, -1, -1):
        out[j] = x[i]
        j = j + 1
    return out, j


def for_negative_step_two(x):
    acc = x[0] * 0
    for i in range(x.shape[0] - 1, 0, -2):
        if x[i] > 0:
            acc = acc + x[i]
    return acc


def for_zero_trip_keeps_var(x, n):
    i = -1
    total = x[0] * 0
    for i in range(n):
        total = total + x[i]
    return total, i


def for_var_after_loop(x, n):
    total = x[0] * 0
    for i in range(n):
        total = total + x[i]
    return total, i


def for_array_rows(X):
    acc = np.zeros(X.shape[1], X.dtype)
    for row in X:
        if row.sum() > 0:
            acc = acc + row
    return acc


def for_array_rows_break(X):
    n = 0
    for row in X:
        if row.min() < 0:
            break
        n += 1
    return n


def for_array_elements_last(x):
    last = x[0]
    for v in x:
        if v > 0:
            last = v
    return last


def for_python_list(xs, y):
    for w in xs:
        if (y * w).sum() > 0:
            y = y + w
        else:
            y = y - w
    return y


def for_zip_arrays(x, y):
    s = x[0] * 0
    for a, b in zip(x, y):
        if a > b:
            s = s + a - b
    return s


def for_enumerate_array(x):
    best = x[0]
    where = 0
    for i, v in enumerate(x):
        if v > best:
            best = v
            where = i
    return best, where


def for_static_range_branch(x):
    y = x
    for k in static_range(3):
        if y.sum() > k:
            y = y - k
    return y


def for_continue(x):
    total = x[0] * 0
    count = 0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        total = total + x[i]
        count = count + 1
    return total, count


def nested_break_inner(X, t):
    counts = np.zeros(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        c = 0
        for j in range(X.shape[1]):
            if X[i, j] > t:
                break
            c = c + 1
        counts[i] = c
    return counts


def nested_continue_outer_state(X):
    total = X[0, 0] * 0
    for i in range(X.shape[0]):
        if X[i].sum() < 0:
            continue
        for j in range(X.shape[1]):
            total = total + X[i, j]
    return total


def for_loop_in_while(x):
    x = x.copy()
    rounds = 0
    while x.sum() > 1.0:
        for i in range(x.shape[0]):
            x[i] = x[i] * 0.5
        rounds += 1
    return x, rounds


def for_over_rows_float_acc(X):
    s = 0.0
    for row in X:
        s = s + row.max()
    return s


def for_traced_bound_int_array(k, n):
    acc = k * 0
    for i in range(n):
        acc = acc + k * i
    return acc


# --- return in every nesting -------------------------------------------------------------

def return_in_for_in_if(x, t):
    if x.sum() > 0:
        for i in range(x.shape[0]):
            if x[i] > t:
                return i
    return -1


def return_in_nested_loops(X, t):
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] > t:
                return i * 100 + j
    return -1


def return_elif_chain(x):
    m = x.mean()
    if m > 1.0:
        return x - 1.0
    elif m > 0.0:
        return x * 2.0
    elif m > -1.0:
        return x * 0.0
    return -x


def return_both_branches(x):
    if x.max() > 0:
        return x.max()
    else:
        return x.min()


def return_tuple_early(x):
    if x.sum() < 0:
        return x * 0, 0
    total = x[0] * 0
    for v in x:
        total = total + v
    return total * x, 1


def return_dict_early(x):
    if x.min() > 0:
        return {"log": np.log(x), "ok": True}
    return {"log": np.zeros_like(x), "ok": False}


def return_in_while(x):
    k = 0
    while k < 10:
        if x.sum() > 5.0:
            return x, k
        x = x * 2.0
        k += 1
    return x * 0, -1


def return_in_while_true(a, b):
    while True:
        if b == 0:
            return a
        a, b = b, a % b


def return_after_loop_var(x):
    for i in range(x.shape[0]):
        if x[i] == 0:
            return i, True
    return x.shape[0], False


def return_in_for_over_rows(X):
    k = 0
    for row in X:
        if np.all(row > 0):
            return row, k
        k += 1
    return X[0] * 0, -1


# --- traced and / or / not / ifexp / chained comparisons ----------------------------------

def traced_and(x, y):
    return x.sum() > 0 and y.sum() > 0


def traced_or_value(x, y):
    a = x.sum() > 0 or y.sum() > 0
    if a:
        return x + y
    return x - y


def traced_not(x):
    if not x.sum() > 0:
        x = -x
    return x


def traced_ifexp(x):
    y = x * 2 if x.mean() > 0 else x / 2
    return y


def chained_in_band(x, lo, hi):
    inside = lo < x.mean() < hi
    return 1.0 if inside and not np.isnan(x).any() else 0.0


def chained_three(x):
    a, b, c = x[0], x[1], x[2]
    if a < b < c:
        return 1
    elif a > b > c:
        return -1
    return 0


def ifexp_in_loop(x):
    acc = x[0] * 0
    for i in range(x.shape[0]):
        acc = acc + (x[i] if x[i] > 0 else -x[i])
    return acc


# --- pytrees in loop state and branches --------------------------------------------------

def tuple_in_for(x):
    state = (x[0] * 0, x[0] * 0 + 1)
    for v in x:
        s, p = state
        state = (s + v, p * v)
    return state


def dict_in_branch(x):
    d = {"a": x, "b": x * 2}
    if x.sum() > 0:
        d = {"a": d["b"], "b": d["a"]}
    return d


def list_in_for_with_update(x):
    stats = [x[0], x[0]]
    for v in x:
        if v < stats[0]:
            stats[0] = v
        if v > stats[1]:
            stats[1] = v
    return stats


def nested_pytree_loop(x):
    st = {"pos": (x, x * 0), "count": 0}
    while st["pos"][0].sum() > 0:
        p, q = st["pos"]
        st = {"pos": (p - 1.0, q + 1.0), "count": st["count"] + 1}
    return st


# --- helpers called inside loops and branches --------------------------------------------

def helper_in_loop(x, s):
    for _ in range(x.shape[0]):
        x = clip_scale(x, s)
        if x.sum() > 2.0:
            break
    return x


def helper_with_loop_in_branch(x):
    if x.sum() > 0:
        y, k = halvings(x)
    else:
        y, k = x, 0
    return y, k


def helper_with_return_in_while(x):
    n = 0
    while np.abs(x).sum() > 1.5 and n < 10:
        x = sign_step(x)
        n = n + 1
    return x, n


def helper_tuple_in_loop(a, b, n):
    for _ in range(n):
        a, b = pair_update(a, b)
        a = a * 0.5
        b = np.tanh(b)
    return a, b


# --- the explicit primitives ---------------------------------------------------------------

def prim_while_loop(x):
    def cond_fun(state):
        v, k = state
        return np.abs(v).max() > 1.0

    def body_fun(state):
        v, k = state
        return v * 0.5, k + 1
    return while_loop(cond_fun, body_fun, (x, 0))


def prim_cond(x):
    return cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)


def prim_fori_loop(x, n):
    def body(i, acc):
        return acc + x[i]
    return fori_loop(0, n, body, x[0] * 0)


def prim_switch(i, x):
    return switch(i, [lambda v: v + 1.0, lambda v: v * 2.0, lambda v: -v], x)


def prim_static_range(x):
    acc = x * 0
    for k in static_range(3):
        acc = acc + x ** (k + 1)
    return acc


def prim_cond_in_loop(x):
    for i in range(3):
        x = cond(x.sum() > i, lambda v: v - 1.0, lambda v: v + 0.5, x)
    return x


def prim_fori_static_bounds(x):
    return fori_loop(0, 4, lambda i, v: v * 0.5 + i, x)


# --- dtypes ----------------------------------------------------------------------------------

def int_running_sum_until(k, cap):
    s = 0
    i = 0
    while i < k.shape[0] and s + k[i] <= cap:
        s = s + k[i]
        i = i + 1
    return s, i


def bool_any_loop(m):
    found = False
    for v in m:
        if v:
            found = True
    return found


def bool_count_loop(m):
    c = 0
    for v in m:
        if v:
            c += 1
    return c


def float32_promoted_acc(x):
    acc = 0.0
    for v in x:
        acc = acc + v * v
    return acc


def float64_mixed(x, y):
    # x float64, y float32: both paths give float64
    s = x.sum()
    if s > 0:
        s = s + y.sum()
    return s


def int_to_float_bound(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i] / (i + 1)
    return total


def uint8_loop(k):
    t = k[0]
    for v in k:
        if v > t:
            t = v
    return t


# --- variables whose value depends on a traced decision, then tested again -----------------

def count_then_branch(x):
    count = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            count += 1
    if count > 1:
        return x * 2.0
    return x


def flag_then_while(x):
    steps = 0
    if x.sum() > 0:
        steps = 3
    while steps > 0:
        x = x + 1.0
        steps -= 1
    return x


def for_local_tuple(x):
    y = x
    for s in (0.5, 2.0, -1.0):
        if (y * s).sum() > 1.0:
            y = y * s
    return y


def for_zip_static_lists(x):
    acc = x * 0
    for w, b in zip([1.0, 2.0], [0.5, -0.5]):
        z = x * w + b
        if z.sum() > 0:
            acc = acc + z
    return acc
