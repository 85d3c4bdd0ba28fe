"""The generated coverage page (`transpiler.coverage`): fresh, and measuring real names."""
from __future__ import annotations

import re
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from runtime.numpy_rules.elementwise import UFUNC_IMPLS
from transpiler import coverage

TESTS = Path(__file__).resolve().parent


def test_page_is_fresh():
    assert coverage.PAGE.read_text() == coverage.render(), (
        "docs/numpy_coverage.md is stale: run `python -m transpiler.coverage --write`")


@pytest.mark.parametrize("title,prefix,names", coverage.SECTIONS)
def test_shared_lists_name_functions_of_both_libraries(title, prefix, names):
    numpy_module = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft}[prefix]
    jax_module = {"numpy": jnp, "numpy.linalg": jnp.linalg, "numpy.fft": jnp.fft}[prefix]
    for name in names:
        assert callable(getattr(numpy_module, name, None)), f"{prefix}.{name}"
        assert callable(getattr(jax_module, name, None)), f"jax.{prefix}.{name}"


def _mentioned(name: str, text: str) -> bool:
    return re.search(rf"(\b{name}\(|[\"']{name}[\"']|\b(np|numpy|linalg|fft)\.{name}\b)", text) is not None


def test_every_usable_function_is_called_by_some_test():
    """A supported function that no test mentions is untested, and the page would lie.
    A ufunc counts when `tests/test_numpy_elementwise.py` runs its rule table, and an
    alias (``np.absolute is np.abs``) when a test calls it under another name."""
    text = "\n".join(p.read_text() for p in TESTS.rglob("*.py"))
    modules = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft}
    tested_objects = {id(ufunc) for ufunc in UFUNC_IMPLS}
    for _, prefix, names in coverage.SECTIONS:
        tested_objects |= {id(getattr(modules[prefix], n)) for n in names
                           if _mentioned(n, text)}
    untested = []
    for qualified, (status, _) in coverage.statuses().items():
        if status not in (coverage.SUPPORTED, coverage.PARTIAL):
            continue
        prefix, name = qualified.rsplit(".", 1)
        if id(getattr(modules[prefix], name)) not in tested_objects:
            untested.append(qualified)
    assert not untested, untested
