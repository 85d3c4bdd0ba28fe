"""Reads of what a subscript assignment just wrote (NPBench's cholesky, lu, seidel_2d,
covariance): ``A[i, j] -= s; A[i, j] /= A[j, j]``, ``cov[i:, i] = cov[i, i:] = v``.

`runtime.numpy_rules.indexing` answers such a read from the value written (one-element
reads at another index from the array before, selecting the value written where the two
indices turn out equal), and `masked` writes a window of a line through an array as a
scatter, so that XLA can update the array in place; these tests check that every answer
is NumPy's, including traced indices equal at run time, negative indices, and blocks that
meet in part or not at all (read from the array written, as before).  Each test runs the
function under NumPy and under jit_ps on copies of the same arguments.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from conftest import assert_same
from transpiler import jit_ps


def same_updates(fn, *args, static=()):
    expected_args, actual_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*expected_args)
    actual = jit_ps(fn, static_argnames=static)(*actual_args)
    assert_same(actual, expected)
    assert_same(list(actual_args), list(expected_args))


def grid(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape) + 3.0


# --- one element, then another (traced indices that may be equal) -----------------------

def element_chain(A, n):
    for i in range(n):
        for j in range(i + 1):          # j == i on the last step: the same element
            A[i, j] -= A[i, 0] * 0.5
            A[i, j] /= A[j, j]          # reads what the line above wrote when j == i
            A[j, i] += A[i, j]
    return A[n - 1, n - 1]


def negative_indices(A):
    A[-1, 0] = 7.0
    A[2, 0] *= 3.0                       # the same element when A has 3 rows
    A[1, -3] = A[-2, 0] + A[-1, 0]
    return A[2, 0], A[1, 0]


def traced_scalar_indices(A, idx):
    k = idx[0]
    m = idx[1]                            # equal to k or not, known only at run time
    A[k, 1] = 5.0
    A[m, 1] += 1.0
    A[k, 1] *= 2.0
    return A[m, 1], A[k, 1]


@pytest.mark.parametrize("fn, args, static", [
    (element_chain, (grid((5, 5)), 5), ("n",)),
    (negative_indices, (grid((3, 4)),), ()),
    (traced_scalar_indices, (grid((4, 3)), np.array([2, 2])), ()),
    (traced_scalar_indices, (grid((4, 3)), np.array([1, 3])), ()),
    (traced_scalar_indices, (grid((4, 3)), np.array([-1, 3])), ()),
], ids=["element_chain", "negative", "equal_at_run_time", "different", "negative_traced"])
def test_element_reads_after_writes(fn, args, static):
    same_updates(fn, *args, static=static)


# --- blocks: rows, columns, slices that meet in part --------------------------------------

def symmetric_rows_and_columns(data, M):
    cov = np.zeros((M, M))
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M]
    return cov


def column_then_row(A, n):
    for i in range(n):
        A[:, i] = A[:, i] * 2.0 + i
        A[i, :] += A[:, i]              # the row meets the column written at (i, i)
    return A


def overlapping_slices(A):
    A[1:4, 2] = -1.0
    A[2, 0:3] = A[2, 1:4] * 10.0        # meets the column write at (2, 2) and (2, 3)
    A[0:2, 1:3] += A[1:3, 2:4]          # blocks that meet in part
    A[3:5, 0] = A[0:2, 1]               # blocks that do not meet
    return A[1:3, :]


def row_at_traced_index(A, idx):
    k = idx[0]
    A[:, 1] = 3.0
    A[k, :] += 1.0                     # meets the column at (k, 1) wherever k is
    return A[k, 1:3], A[:, 1]


def traced_row_then_some_rows(A, idx):
    k = idx[0]
    A[k, :] = -2.0                      # inside rows 1:3 or not, known only at run time
    return A[1:3, 1:], A[k, 0]


@pytest.mark.parametrize("fn, args, static", [
    (traced_row_then_some_rows, (grid((4, 3)), np.array([3])), ()),
    (traced_row_then_some_rows, (grid((4, 3)), np.array([2])), ()),
    (traced_row_then_some_rows, (grid((4, 3)), np.array([-3])), ()),
    (symmetric_rows_and_columns, (grid((6, 5)), 5), ("M",)),
    (column_then_row, (grid((4, 4)), 4), ("n",)),
    (overlapping_slices, (grid((5, 5)),), ()),
    (row_at_traced_index, (grid((4, 3)), np.array([2])), ()),
    (row_at_traced_index, (grid((4, 3)), np.array([-4])), ()),
], ids=["row_outside", "row_inside", "row_negative", "covariance", "column_then_row", "slices",
        "traced_row", "negative_traced_row"])
def test_block_reads_after_writes(fn, args, static):
    same_updates(fn, *args, static=static)


# --- windows with a traced start kept in place ---------------------------------------------

def suffix_windows(data, M):
    corr = np.eye(M)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def suffix_elementwise(x, y, n):
    out = np.zeros(n)
    for i in range(n):
        out[i:] += x[i:] * y[i:] - 1.0      # windows that start alike: no shift
        out[i:] -= np.flip(y[i:])           # a flipped window: aligned, then shifted back
    return out


def suffix_reduction(x, n):
    total = 0.0
    for i in range(n):
        total += np.sum(x[i:] * 2.0) + np.max(x[i:])
    return total


@pytest.mark.parametrize("fn, args, static", [
    (suffix_windows, (grid((7, 6)), 6), ("M",)),
    (suffix_elementwise, (grid((6,)), grid((6,), seed=1), 6), ("n",)),
    (suffix_reduction, (grid((5,)), 5), ("n",)),
], ids=["correlation", "elementwise", "reduction"])
def test_windows_at_traced_starts(fn, args, static):
    same_updates(fn, *args, static=static)


def csr_rows(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):        # x[cols] gathered in place, the dot in place
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols] + vals.max(initial=-1.0) + np.mean(x[cols] * 1j).imag
    return y


def rings(data, radius, npt):
    res = np.zeros(npt)
    rmax = radius.max()
    for i in range(npt):
        inside = np.logical_and(rmax * i / npt <= radius, radius < rmax * (i + 1) / npt)
        res[i] = data[inside].mean() + (data[inside] * 1j).mean().imag
    return res


def test_csr_rows_and_masked_means():
    rows = np.array([0, 2, 2, 5, 6], np.uint32)          # an empty row
    cols = np.array([1, 3, 0, 2, 3, 1], np.uint32)
    same_updates(csr_rows, rows, cols, grid((6,)), grid((4,), seed=1))
    radius = np.random.default_rng(3).random(50)
    same_updates(rings, grid((50,)), radius, 7, static=("npt",))
