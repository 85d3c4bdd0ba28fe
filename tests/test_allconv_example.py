"""``examples/allconv_cifar.py`` (issue 15): the All-CNN-C step, ours against the same
source bound to jax (``benchmarks/allconv.py``'s `bind`) and against plain NumPy.

A tiny network (width 2, batch 2) keeps the compilations short.
"""
from __future__ import annotations

import pathlib
import sys

import jax
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
for _path in (ROOT / "examples", ROOT / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import allconv  # noqa: E402  (benchmarks/allconv.py)

WIDTH, BATCH = 2, 2


@pytest.fixture(scope="module")
def example():
    return allconv.load_example()


@pytest.fixture(scope="module")
def with_jax(example):
    return allconv.jax_network(example)


def _leaves(tree):
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(tree)]


def test_init_params_draw_jax_randoms(example, with_jax):
    ours = example.init_params(example.random.PRNGKey(3), WIDTH)
    theirs = with_jax["init_params"](jax.random.PRNGKey(3), WIDTH)
    assert [(a.shape, a.dtype) for a in _leaves(ours)] == \
        [(b.shape, b.dtype) for b in _leaves(theirs)]
    for a, b in zip(_leaves(ours), _leaves(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_sgd_step_matches_jax_and_numpy(example, with_jax):
    rng = np.random.default_rng(0)
    images, labels = example.synthetic_batch(rng, example.class_patterns(rng), BATCH)
    params = jax.tree_util.tree_map(
        np.asarray, with_jax["init_params"](jax.random.PRNGKey(0), WIDTH))
    new_params, value = example.sgd_step(params, images, labels, 0.1)
    expected_params, expected = with_jax["sgd_step"](params, images, labels, 0.1)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, expected, rtol=1e-5)
    np.testing.assert_allclose(value, example.numpy_loss(params, images, labels), rtol=1e-4)
    for a, b in zip(_leaves(new_params), _leaves(expected_params)):
        assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
