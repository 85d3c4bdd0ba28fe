"""The GPU lowerings of the linalg primitives (`runtime.primitives.linalg_gpu`) against
jax's own: no GPU is needed (none was available), jax lowers for a platform that is not
present (``Lowered`` with ``lowering_platforms=("cuda",)``).

The oracle is a normalised list of the solver calls of both programs, parsed by MLIR: for
each ``stablehlo.custom_call`` its target, ``api_version``, ``backend_config`` and
``mhlo.backend_config``, layouts, aliases, ``num_batch_dims`` and operand/result types;
for each ``stablehlo.triangular_solve`` its attributes and types.  jax's
``cu_lu_pivots_to_permutation`` (the permutation result of its ``lu``, which our ``lu``
does not have) is left out.  ``solve`` is one ``getrf`` on ``[a | b]`` and one upper
triangular solve: compared with jax's ``lu`` of that matrix and jax's triangular solve.
On CPU the lowering must stay the LAPACK one: the same targets as jax's CPU lowering, and
no GPU text.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax._src.lax import linalg as jax_linalg_internal
from jax.lax import linalg as jax_linalg

from ad_corpus.oracles import jax_x64  # noqa: F401
from runtime import Builder
from runtime.client import _mlir_context, lowering_platform
from runtime.errors import PSCUnsupportedCallError
from runtime.lowering import lower_to_stablehlo

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
PLATFORMS = ["cuda", "rocm"]
_CALL_KEYS = ("call_target_name", "api_version", "backend_config", "mhlo.backend_config",
              "operand_layouts", "result_layouts", "output_operand_aliases",
              "mhlo.frontend_attributes")
_SOLVE_KEYS = ("left_side", "lower", "unit_diagonal", "transpose_a")


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner
                yield from _walk(inner)


def _attr(op, key):
    return str(op.attributes[key]) if key in op.attributes else None


def _calls(module) -> list:
    """The normalised solver calls of an MLIR module, in program order."""
    found = []
    for op in _walk(module.operation):
        name = op.operation.name
        if name not in ("stablehlo.custom_call", "stablehlo.triangular_solve"):
            continue
        keys = _CALL_KEYS if name == "stablehlo.custom_call" else _SOLVE_KEYS
        entry = {key: _attr(op, key) for key in keys}
        if "pivots_to_permutation" in (entry.get("call_target_name") or ""):
            continue
        entry["types"] = (tuple(str(v.type) for v in op.operands),
                          tuple(str(r.type) for r in op.results))
        found.append((name, entry))
    return found


def _ours(platform, name, shapes, dtype, **attrs):
    b = Builder("t")
    params = [b.parameter(i, s, dtype) for i, s in enumerate(shapes)]
    text = lower_to_stablehlo(b.build(*b.emit(name, params, **attrs)), platform)
    from jaxlib.mlir import ir   # noqa: PLC0415
    with _mlir_context():
        return text, _calls(ir.Module.parse(text))


def _jax(platform, fn, *args):
    lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=(platform,))
    return _calls(lowered.compiler_ir())


def _same(platform, name, shapes, dtype, fn, **attrs):
    _, ours = _ours(platform, name, shapes, dtype, **attrs)
    theirs = _jax(platform, fn, *(np.zeros(s, dtype) for s in shapes))
    assert ours == theirs
    assert ours, "no solver call compared"


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_factorizations_match_jax(platform, dtype):
    for shape in [(3, 3), (2, 4, 4)]:
        _same(platform, "cholesky", [shape], dtype,
              lambda a: jax_linalg.cholesky(a, symmetrize_input=False))
        _same(platform, "lu", [shape], dtype, jax_linalg.lu)
        for lower in (True, False):
            _same(platform, "eigh", [shape], dtype,
                  lambda a, lo=lower: jax_linalg.eigh(a, lower=lo, symmetrize_input=False),
                  lower=lower)
    for shape in [(4, 3), (3, 4), (2, 3, 3)]:
        _same(platform, "geqrf", [shape], dtype, jax_linalg_internal.geqrf)
        for full in (True, False):
            _same(platform, "qr", [shape], dtype,
                  lambda a, f=full: jax_linalg.qr(a, full_matrices=f), full_matrices=full)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_matches_jax(platform, dtype):
    # Jacobi (small, and economy mode above 32), QR-based gesvd above 1024 (tall and wide)
    for shape in [(4, 3), (2, 3, 5), (40, 35), (32, 40), (1030, 3), (3, 1030)]:
        for full, with_uv in [(False, True), (True, True), (False, False)]:
            _same(platform, "svd", [shape], dtype,
                  lambda a, f=full, u=with_uv: jax_linalg.svd(a, full_matrices=f,
                                                               compute_uv=u),
                  full_matrices=full, compute_uv=with_uv)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_solves_match_jax(platform, dtype):
    for a_shape, b_shape in [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1))]:
        for lower in (True, False):
            for trans in ("N", "T", "C"):
                for unit in (True, False):
                    _same(platform, "triangular_solve", [a_shape, b_shape], dtype,
                          lambda a, b, lo=lower, t=trans, u=unit: jax_linalg.triangular_solve(
                              a, b, left_side=True, lower=lo, transpose_a=t != "N",
                              conjugate_a=t == "C", unit_diagonal=u),
                          lower=lower, trans=trans, unit_diagonal=unit)
        _, ours = _ours(platform, "solve", [a_shape, b_shape], dtype)
        a, b = np.zeros(a_shape, dtype), np.zeros(b_shape, dtype)
        augmented = np.concatenate([a, b], axis=-1)
        theirs = _jax(platform, jax_linalg.lu, augmented) + _jax(
            platform, lambda a, b: jax_linalg.triangular_solve(a, b, left_side=True,
                                                               lower=False), a, b)
        assert ours == theirs


@pytest.mark.parametrize("platform", PLATFORMS)
def test_eig_is_refused_on_gpu(platform):
    for vectors in (True, False):
        with pytest.raises(PSCUnsupportedCallError, match="eig .*no GPU lowering"):
            _ours(platform, "eig", [(3, 3)], np.float32, vectors=vectors)


def test_other_platforms_are_refused():
    with pytest.raises(PSCUnsupportedCallError, match="no lowering for platform 'tpu'"):
        _ours("tpu", "cholesky", [(3, 3)], np.float32)


_CPU_CASES = [
    ("cholesky", [(3, 3)], {}, lambda a: jax_linalg.cholesky(a, symmetrize_input=False)),
    ("lu", [(3, 3)], {}, jax_linalg.lu),
    ("solve", [(3, 3), (3, 2)], {}, lambda a, b: jax.numpy.linalg.solve(a, b)),
    ("triangular_solve", [(3, 3), (3, 2)], dict(lower=True, trans="N", unit_diagonal=False),
     lambda a, b: jax_linalg.triangular_solve(a, b, left_side=True, lower=True)),
    ("eigh", [(3, 3)], dict(lower=True), lambda a: jax_linalg.eigh(a, symmetrize_input=False)),
    ("geqrf", [(4, 3)], {}, jax_linalg_internal.geqrf),
    ("qr", [(4, 3)], dict(full_matrices=True), lambda a: jax_linalg.qr(a, full_matrices=True)),
    ("svd", [(4, 3)], dict(full_matrices=False, compute_uv=True),
     lambda a: jax_linalg.svd(a, full_matrices=False)),
    ("eig", [(3, 3)], dict(vectors=True), lambda a: jax_linalg.eig(a, compute_left_eigenvectors=False)),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_lowering_is_lapack(dtype):
    """The default platform is CPU: jax's LAPACK targets (the numerics are tested
    elsewhere), and nothing of the GPU path."""
    for name, shapes, attrs, fn in _CPU_CASES:
        text, ours = _ours("cpu", name, shapes, dtype, **attrs)
        assert text == _ours_default(name, shapes, dtype, **attrs)
        assert "solver" not in text and "triangular_solve" not in text
        theirs = _jax("cpu", fn, *(np.zeros(s, dtype) for s in shapes))
        targets = {entry["call_target_name"] for kind, entry in ours
                   if kind == "stablehlo.custom_call"}
        assert targets == {entry["call_target_name"] for kind, entry in theirs
                           if kind == "stablehlo.custom_call"}


def _ours_default(name, shapes, dtype, **attrs):
    b = Builder("t")
    params = [b.parameter(i, s, dtype) for i, s in enumerate(shapes)]
    return lower_to_stablehlo(b.build(*b.emit(name, params, **attrs)))


class _Client:
    def __init__(self, platform, version):
        self.platform, self.platform_version = platform, version


def test_lowering_platform_names():
    assert lowering_platform(_Client("cpu", "<unknown>")) == "cpu"
    assert lowering_platform(_Client("gpu", "cuda 12080")) == "cuda"
    assert lowering_platform(_Client("gpu", "rocm 60302")) == "rocm"
    assert lowering_platform(_Client("cuda", "")) == "cuda"
