"""`transpiler.debug_print`: printing from inside compiled code, as ``jax.debug.print``.

The oracle is the same function run as plain Python, where ``debug_print`` just prints:
the compiled function must print the same lines, in the same order (from inside traced
loops and branches), and return the same values.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same
from runtime.errors import PSCTypeError, PSCValueError
from transpiler import debug_print, grad, jit_ps, jvp


def loop_and_branch(x, n):
    debug_print("start {}", x)
    for i in range(n):
        x = x * 2.0
        if x.sum() > 10:
            debug_print("big at {i}: {x}", i=i, x=x)
        else:
            debug_print("small at {i}: {x}", i=i, x=x)
    debug_print("end {total:.2f}", total=x.sum())
    return x


def while_loop(x):
    k = 0
    while x.max() < 100.0:
        x = x * 3.0
        k = k + 1
        debug_print("k={} x={}", k, x)
    return x, k


def static_and_traced(x, scale):
    debug_print("scale {} list {} value {v}", scale, [1, 2], v=x * scale)
    return x


def only_prints_in_branch(x):
    if x[0] > 0:
        debug_print("positive {}", x[0])
    else:
        debug_print("not positive {}", x[0])
    return x + 1.0


def nested(x, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            s = s + x[i, j]
            debug_print("{} {} {}", i, j, s)
    return s


def squared_sum(x):
    debug_print("primal {}", x)
    return np.sum(x * x)


def grad_of_printing(x):
    return grad(squared_sum)(x)


def jvp_of_printing(x, t):
    return jvp(squared_sum, (x,), (t,))


def loop_loss(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.log(x)) * i
        if s > 1:
            debug_print("s={}", s)
    return s


def grad_of_loop_printing(x):
    return grad(loop_loss)(x)


def same_output(capfd, fn, *args, static_argnames=()):
    expected = fn(*args)
    plain = capfd.readouterr().out
    compiled = jit_ps(fn, static_argnames=static_argnames)
    actual = compiled(*args)
    printed = capfd.readouterr().out
    assert printed == plain, (printed, plain)
    assert_same(actual, expected)
    assert printed   # the test prints something
    return compiled, printed


@pytest.mark.parametrize("n", [0, 2, 4])
def test_loop_and_branch(capfd, n):
    same_output(capfd, loop_and_branch, np.ones(2), n)


def test_printed_on_every_call(capfd):
    compiled, first = same_output(capfd, loop_and_branch, np.ones(2), 3)
    compiled(np.ones(2), 3)
    assert capfd.readouterr().out == first
    assert compiled.cache_info().misses == 1


def test_while_loop(capfd):
    same_output(capfd, while_loop, np.array([1.0, 2.0]))


def test_static_arguments_and_containers(capfd):
    same_output(capfd, static_and_traced, np.arange(3.0), 2.0, static_argnames=("scale",))
    same_output(capfd, static_and_traced, np.arange(3.0), 2.0)


@pytest.mark.parametrize("x", [np.array([1.0, 2.0]), np.array([-1.0, 2.0])])
def test_branch_that_only_prints(capfd, x):
    same_output(capfd, only_prints_in_branch, x)


def test_nested_loops_in_order(capfd):
    _, printed = same_output(capfd, nested, np.arange(6.0).reshape(2, 3), 2, 3)
    assert len(printed.splitlines()) == 6


def test_under_grad_prints_the_primal(capfd):
    x = np.array([1.0, 2.0])
    compiled = jit_ps(grad_of_printing)
    assert_same(compiled(x), 2 * x)
    out = capfd.readouterr().out
    assert out == "primal [1. 2.]\n"


def test_under_grad_through_a_loop_with_a_printing_branch(capfd):
    x = np.array([2.0, 3.0])
    compiled = jit_ps(grad_of_loop_printing)
    assert_same(compiled(x), 3.0 / x)
    printed = capfd.readouterr().out
    loop_loss(x)
    assert printed == capfd.readouterr().out


def test_under_jvp(capfd):
    x, t = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    primal, tangent = jit_ps(jvp_of_printing)(x, t)
    assert_same(primal, np.sum(x * x))
    assert_same(tangent, np.float64(2.0))
    assert capfd.readouterr().out == "primal [1. 2.]\n"


def test_with_checks(capfd):
    same_output(capfd, loop_and_branch, np.ones(2), 3)
    compiled = jit_ps(loop_and_branch, checks=True)
    compiled(np.ones(2), 3)
    with_checks = capfd.readouterr().out
    loop_and_branch(np.ones(2), 3)
    assert with_checks == capfd.readouterr().out


def bad_format(x):
    debug_print("{missing} {}", x)  # BAD_FORMAT
    return x


def test_format_that_does_not_fit_is_an_error_at_the_line():
    with pytest.raises(KeyError):
        bad_format(np.ones(2))
    with pytest.raises(PSCValueError) as info:
        jit_ps(bad_format)(np.ones(2))
    assert info.value.location.line == bad_format.__code__.co_firstlineno + 1
    assert "missing" in str(info.value)


def test_format_must_be_a_string():
    with pytest.raises(PSCTypeError):
        debug_print(3, 4)


def test_program_text_has_the_callback():
    text = jit_ps(only_prints_in_branch).lower(np.ones(2))
    assert text.count("xla_ffi_python_cpu_callback") == 2
    assert "has_side_effect = true" in text
