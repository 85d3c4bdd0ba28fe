"""Illegal control flow over traced values, one function per case.

The line an error must point at carries the marker ``# ERROR-HERE:<case>``; other lines
its message must name carry ``# NAMED:<case>``.  The tests find the expected lines by
searching this file's text, never by hard-coded numbers.  Functions are plain:
`tests/test_control_flow_errors.py` wraps them with `jit_ps`.
"""
import numpy as np


# --- definition time: a variable defined in one branch of a traced if, used after ----------

def defined_in_one_branch(x):
    if x.sum() > 0:  # NAMED:one_branch
        y = x * 2.0  # ERROR-HERE:one_branch
    return y  # NAMED:one_branch


def defined_in_else_only(x):
    if x.mean() > 0:  # NAMED:else_only
        z = x
    else:
        w = x - 1.0  # ERROR-HERE:else_only
    return z + w  # NAMED:else_only


# --- call time: containers that grow inside staged loops -------------------------------------

def list_grows_append(x):
    seen = []
    while x.sum() > 1.0:
        seen.append(x)  # ERROR-HERE:append
        x = x * 0.5
    return x, seen


def list_grows_append_for(x):
    positives = []
    for i in range(x.shape[0]):
        if x[i] > 0:
            positives.append(x[i])  # ERROR-HERE:append_for
    return positives


def list_grows_len_only(x):
    seen = []
    while x.sum() > 1.0:
        seen.append(x.sum())  # ERROR-HERE:append_len
        x = x * 0.5
    return x, len(seen)


def list_grows_concat(x):
    seen = [x]
    while x.sum() > 1.0:  # ERROR-HERE:concat
        x = x * 0.5
        seen = seen + [x]
    return seen


# --- call time: carried dtypes and shapes that change ----------------------------------------

def dtype_changes(k):
    while k.sum() > 10:  # ERROR-HERE:dtype
        k = k / 2
    return k


def dtype_changes_in_for(k, n):
    for i in range(n):  # ERROR-HERE:dtype_for
        k = k * 0.5
    return k


def shape_changes(x):
    while x.sum() < 100.0:  # ERROR-HERE:shape
        x = np.concatenate([x, x])
    return x


def branch_shapes(x):
    if x.sum() > 0:  # ERROR-HERE:branch_shapes
        y = x[:2]
    else:
        y = x  # NAMED:branch_shapes
    return y


def branch_dtypes(k):
    if k.sum() > 0:  # ERROR-HERE:branch_dtypes
        r = k.astype(np.float32)
    else:
        r = k  # NAMED:branch_dtypes
    return r


def carried_string(x):
    label = "small"
    if x.sum() > 0:  # ERROR-HERE:carried_string
        label = "big"
    return x, label


# --- call time: traced values where static ones are needed --------------------------------

def traced_list_index(params, x):
    i = 0
    while x.sum() < 10.0:
        x = x * params[i]  # ERROR-HERE:list_index
        i = i + 1
    return x


def traced_list_index_for(params, x, n):
    acc = x * 0
    for i in range(n):
        acc = acc + params[i]  # ERROR-HERE:list_index_for
    return acc


def traced_shape(x, n):
    if x.sum() > 0:
        n = n + 1
    z = np.zeros(n)  # ERROR-HERE:traced_shape
    return z


def traced_step(x, s):
    acc = x[0] * 0
    for i in range(0, 4, s):  # ERROR-HERE:traced_step
        acc = acc + x[i]
    return acc


# --- call time: truth values -------------------------------------------------------------

def ambiguous_if(x):
    if x > 0:  # ERROR-HERE:ambiguous_if
        x = x - 1.0
    return x


def ambiguous_while(x):
    while x < 10.0:  # ERROR-HERE:ambiguous_while
        x = x + 1.0
    return x


def ambiguous_and(x, y):
    if x.sum() > 0 and y > 0:  # ERROR-HERE:ambiguous_and
        x = x + y
    return x


def iterate_0d(x):
    acc = 0.0
    for v in x.sum():  # ERROR-HERE:iterate_0d
        acc = acc + v
    return acc
