"""Pure-Python reference implementations of the control-flow primitives.

These are the *meaning* of `Builder.while_loop` and `Builder.conditional` (and of the
`while_loop`/`cond`/`fori_loop` that PSC code can call), written with ordinary Python
control flow.  Tests run a function both ways, compiled and through these, and compare.
"""
from __future__ import annotations


def while_loop(cond_fun, body_fun, init_val):
    val = init_val
    while cond_fun(val):
        val = body_fun(val)
    return val


def cond(pred, true_fun, false_fun, *operands):
    return true_fun(*operands) if pred else false_fun(*operands)


def switch(index, branches, *operands):
    index = min(max(int(index), 0), len(branches) - 1)
    return branches[index](*operands)


def fori_loop(lower, upper, body_fun, init_val):
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val
