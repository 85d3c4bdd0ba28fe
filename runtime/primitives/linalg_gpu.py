"""GPU lowerings of the linear-algebra primitives, chosen by the platform the program is
compiled for: cuSOLVER's FFI kernels on CUDA (hipSOLVER's, same structure, on ROCm), the
kernels jaxlib's CUDA plugin registers and jax 0.10.2 itself calls on GPU.

The printer carries the platform (`runtime.lowering.Printer.platform`, from the PJRT
client's, see `runtime.client.lowering_platform`).  Importing this module wraps the CPU
lowering of each primitive (`runtime.primitives.linalg`, ``decompositions``, ``svd``,
``triangular``) in `by_platform`: on ``"cpu"`` the CPU rule runs unchanged, on ``"cuda"``
/ ``"rocm"`` the rule here, on any other platform the build is refused.  What GPU emits,
per primitive (``{cu}``: ``cu`` or ``hip``):

* ``cholesky``: ``{cu}solver_potrf_ffi`` (``lower = true``), then, as on CPU, the strict
  upper triangle zeroed and NaN where ``info`` ≠ 0.
* ``lu``: ``{cu}solver_getrf_ffi`` (packed factors, 1-based pivots, info: LAPACK's).
* ``solve``: ``{cu}solver_getrf_ffi`` on ``[a | b]`` (cuSOLVER's getrf takes m × n
  matrices, as jax's ``lu`` of a rectangular matrix uses it), then StableHLO's
  ``triangular_solve`` with its upper triangle (cuBLAS ``trsm`` in XLA's GPU backend: jax
  emits no solver call for triangular solves on GPU); NaN where ``info`` ≠ 0.
* ``triangular_solve``: ``stablehlo.triangular_solve`` (what jax emits on GPU).
* ``eigh``: ``{cu}solver_syevd_ffi`` (``algorithm = 0``: cuSOLVER's default, ``lower``),
  real and complex alike; NaN where ``info`` ≠ 0.
* ``geqrf`` / ``qr``: ``{cu}solver_geqrf_ffi``, then ``{cu}solver_orgqr_ffi`` (real and
  complex alike) forms Q, with the CPU rule's slicing and padding.
* ``svd``: jax's default choice: Jacobi (``{cu}solver_gesvdj_ffi``) when m, n ≤ 1024, its
  economy mode only when both exceed 32 (else full U and V sliced), V transposed (and
  conjugated) into Vᴴ; otherwise ``{cu}solver_gesvd_ffi``, on the transposed (row-major)
  matrix when m < n.  NaN where ``info`` ≠ 0.
* ``eig``: refused (`PSCUnsupportedCallError`): jax picks cuSOLVER's ``geev`` only with
  cuSOLVER ≥ 11.7.1, found when it lowers, and a host-hybrid (MAGMA/LAPACK) kernel
  otherwise; neither is written here.

Attributes follow jax's text exactly: ``api_version = 1``, an empty ``backend_config`` and
the kernel's attributes in ``mhlo.backend_config``, column-major layouts for the operands
and results of the largest rank, ``num_batch_dims``.  (jax's ``sdy.sharding_rule`` is left
out: these programs run on one device.)  No GPU was available when this was written: it is
verified against jax's own CUDA/ROCm lowering text (tests/test_linalg_gpu_lowering.py), not
run.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import PSCUnsupportedCallError
from ..lowering import dense_literal, i64_array, location, tensor_type, value_type
from ..primitive import lookup, lowers
from .decompositions import _slice, _upper
from .linalg import LapackText, column_major, row_major
from .support import fmt

SOLVER_PREFIXES = {"cuda": "cu", "rocm": "hip"}
JACOBI_LIMIT = 1024     # jax's default SVD: Jacobi up to this size, QR-based gesvd above
JACOBI_ECONOMY = 32     # gesvdj's economy mode only above this size (batched path below)

_ALIAS_FIRST = ("#stablehlo.output_operand_alias<output_tuple_indices = [0], "
                "operand_index = 0, operand_tuple_indices = []>")
_ALIAS_ONLY = ("#stablehlo.output_operand_alias<output_tuple_indices = [], "
               "operand_index = 0, operand_tuple_indices = []>")


@functools.lru_cache(maxsize=None)
def register_solver_targets(platform: str) -> None:
    """Register the GPU plugin's solver FFI targets with its client (jax does this at
    import too; registering again is harmless).  Without the plugin installed there is
    nothing to register, and the module is never imported on a CPU-only path."""
    from jaxlib import gpu_solver, xla_client   # noqa: PLC0415  (GPU programs only)
    for name, fn, api_version in gpu_solver.registrations().get(platform.upper(), []):
        xla_client.register_custom_call_target(name, fn, platform=platform.upper(),
                                               api_version=api_version)


def by_platform(name: str, gpu_rule) -> None:
    """Make ``name``'s lowering the CPU rule already registered on ``"cpu"`` and
    ``gpu_rule(p, op, prefix)`` on a GPU platform."""
    cpu_rule = lookup(name).lowering

    def lower(p, op):
        platform = getattr(p, "platform", "cpu")
        if platform == "cpu":
            return cpu_rule(p, op)
        prefix = SOLVER_PREFIXES.get(platform)
        if prefix is None:
            raise PSCUnsupportedCallError(
                f"{name} has no lowering for platform {platform!r} ({location(op)})",
                hint="linear algebra runs on CPU (LAPACK) and CUDA/ROCm GPUs (cuSOLVER)")
        register_solver_targets(platform)
        return gpu_rule(p, op, prefix)
    lower.__name__ = f"lower_{name}_by_platform"
    lowers(name)(lower)


# --- text -----------------------------------------------------------------------------


def _layout(rank: int, column_first: bool) -> str:
    return column_major(rank) if column_first else row_major(rank)


def solver_call(t: LapackText, target: str, args, arg_types, arg_ranks, results,
                config: str = "", aliases: str = "", column_first: bool = True) -> str:
    """A GPU solver FFI call as jax writes it: ``results`` are (type, rank) pairs; operands
    and results of the largest operand rank are column-major (``column_first``), the
    others row-major; the batch is every dimension but the last two of that rank."""
    top = max(arg_ranks)
    operand_layouts = [_layout(r, column_first and r == top) for r in arg_ranks]
    result_layouts = [_layout(r, column_first and r == top) for _, r in results]
    attrs = (f'call_target_name = "{target}", api_version = 1 : i32, '
             f'backend_config = "", '
             f"operand_layouts = [{', '.join(operand_layouts)}], "
             f"result_layouts = [{', '.join(result_layouts)}], "
             + (f"output_operand_aliases = [{aliases}], " if aliases else "")
             + f"mhlo.backend_config = {{{config}}}, "
             f'mhlo.frontend_attributes = {{num_batch_dims = "{top - 2}"}}')
    return t.line("stablehlo.custom_call", args, arg_types, [ty for ty, _ in results],
                  attrs)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _ok(t: LapackText, info: str, batch) -> str:
    """Bool over the batch: ``info`` is 0."""
    info_t = tensor_type(batch, np.int32)
    zero = t.line("stablehlo.constant", [], [], [info_t],
                  f"value = {dense_literal(np.zeros(batch, np.int32))} : {info_t}")
    return t.line("stablehlo.compare", [info, zero], [info_t, info_t],
                  [tensor_type(batch, np.bool_)],
                  "comparison_direction = #stablehlo<comparison_direction EQ>, "
                  "compare_type = #stablehlo<comparison_type SIGNED>")


def _nan_unless(t: LapackText, ok: str, batch, x: str, shape, dtype) -> str:
    """``x`` where ``ok`` (bool over the batch) holds, NaN elsewhere."""
    pred_t, x_t = tensor_type(shape, np.bool_), tensor_type(shape, dtype)
    spread = t.line("stablehlo.broadcast_in_dim", [ok], [tensor_type(batch, np.bool_)],
                    [pred_t], f"broadcast_dimensions = {i64_array(range(len(batch)))}")
    nan = t.line("stablehlo.constant", [], [], [x_t],
                 f"value = {dense_literal(np.full((), np.nan, dtype))} : {x_t}")
    return t.line("stablehlo.select", [spread, x, nan], [pred_t, x_t, x_t], [x_t])


def _lower_triangle(t: LapackText, x: str, shape, dtype) -> str:
    """``x`` with its strict upper triangle zeroed."""
    r = len(shape)
    index_t, pred_t, x_t = (tensor_type(shape, d) for d in (np.int32, np.bool_, dtype))
    rows = t.line("stablehlo.iota", [], [], [index_t], f"iota_dimension = {r - 2} : i64")
    cols = t.line("stablehlo.iota", [], [], [index_t], f"iota_dimension = {r - 1} : i64")
    keep = t.line("stablehlo.compare", [rows, cols], [index_t, index_t], [pred_t],
                  "comparison_direction = #stablehlo<comparison_direction GE>, "
                  "compare_type = #stablehlo<comparison_type SIGNED>")
    zero = t.line("stablehlo.constant", [], [], [x_t],
                  f"value = {dense_literal(np.zeros((), dtype))} : {x_t}")
    return t.line("stablehlo.select", [keep, x, zero], [pred_t, x_t, x_t], [x_t])


def _triangular_solve(t: LapackText, a: str, a_t: str, rhs: str, rhs_t: str, *, lower: bool,
                      unit_diagonal: bool, trans: str, dtype) -> str:
    if trans == "C" and np.dtype(dtype).kind != "c":
        trans = "T"                # the adjoint of a real matrix: jax writes TRANSPOSE
    transpose = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}[trans]
    return t.line("stablehlo.triangular_solve", [a, rhs], [a_t, rhs_t], [rhs_t],
                  f"left_side = true, lower = {_bool(lower)}, "
                  f"unit_diagonal = {_bool(unit_diagonal)}, "
                  f"transpose_a = #stablehlo<transpose {transpose}>")


def _getrf(t: LapackText, prefix: str, a: str, shape, dtype):
    """The packed factors, pivots and info of ``getrf`` on ``a`` (names)."""
    r, batch = len(shape), shape[:-2]
    a_t = tensor_type(shape, dtype)
    out = solver_call(t, f"{prefix}solver_getrf_ffi", [a], [a_t], [r],
                      [(a_t, r), (tensor_type(batch + (min(shape[-2:]),), np.int32), r - 1),
                       (tensor_type(batch, np.int32), r - 2)], aliases=_ALIAS_FIRST)
    return f"{out}#0", f"{out}#1", f"{out}#2"


# --- the rules ------------------------------------------------------------------------


def _gpu_cholesky(p, op, prefix):
    (a,), (result,) = op.operands, op.results
    t, r, batch, a_t = LapackText(p, op), a.ndim, a.shape[:-2], value_type(a)
    out = solver_call(t, f"{prefix}solver_potrf_ffi", [p.name(a)], [a_t], [r],
                      [(a_t, r), (tensor_type(batch, np.int32), r - 2)], "lower = true",
                      aliases=_ALIAS_FIRST)
    factor = _lower_triangle(t, f"{out}#0", a.shape, a.dtype)
    p.names[result] = _nan_unless(t, _ok(t, f"{out}#1", batch), batch, factor, a.shape,
                                  a.dtype)


def _gpu_lu(p, op, prefix):
    (a,) = op.operands
    names = _getrf(LapackText(p, op), prefix, p.name(a), a.shape, a.dtype)
    for result, name in zip(op.results, names):
        p.names[result] = name


def _gpu_solve(p, op, prefix):
    a, rhs = op.operands
    (x,) = op.results
    t, r, n, batch = LapackText(p, op), a.ndim, a.shape[-1], a.shape[:-2]
    aug_shape = batch + (n, n + rhs.shape[-1])
    aug = t.line("stablehlo.concatenate", [p.name(a), p.name(rhs)],
                 [value_type(a), value_type(rhs)], [tensor_type(aug_shape, a.dtype)],
                 f"dimension = {r - 1} : i64")
    factored, _, info = _getrf(t, prefix, aug, aug_shape, a.dtype)
    u = _slice(t, factored, aug_shape, a.dtype, a.shape)
    y = t.line("stablehlo.slice", [factored], [tensor_type(aug_shape, a.dtype)],
               [value_type(rhs)],
               f"start_indices = {i64_array([0] * (r - 1) + [n])}, "
               f"limit_indices = {i64_array(aug_shape)}, strides = {i64_array([1] * r)}")
    solved = _triangular_solve(t, u, value_type(a), y, value_type(rhs), lower=False,
                               unit_diagonal=False, trans="N", dtype=a.dtype)
    p.names[x] = _nan_unless(t, _ok(t, info, batch), batch, solved, x.shape, x.dtype)


def _gpu_triangular_solve(p, op, prefix):
    a, rhs = op.operands
    p.names[op.results[0]] = _triangular_solve(
        LapackText(p, op), p.name(a), value_type(a), p.name(rhs), value_type(rhs),
        lower=op.attrs["lower"], unit_diagonal=op.attrs["unit_diagonal"],
        trans=op.attrs["trans"], dtype=a.dtype)


def _gpu_eigh(p, op, prefix):
    (a,), (v, w) = op.operands, op.results
    t, r, batch, a_t = LapackText(p, op), a.ndim, a.shape[:-2], value_type(a)
    out = solver_call(t, f"{prefix}solver_syevd_ffi", [p.name(a)], [a_t], [r],
                      [(a_t, r), (value_type(w), r - 1), (tensor_type(batch, np.int32), r - 2)],
                      f"algorithm = 0 : ui8, lower = {_bool(op.attrs['lower'])}",
                      aliases=_ALIAS_FIRST)
    ok = _ok(t, f"{out}#2", batch)
    p.names[v] = _nan_unless(t, ok, batch, f"{out}#0", v.shape, v.dtype)
    p.names[w] = _nan_unless(t, ok, batch, f"{out}#1", w.shape, w.dtype)


def _geqrf(t, prefix, a: str, shape, dtype):
    r = len(shape)
    a_t = tensor_type(shape, dtype)
    taus_t = tensor_type(shape[:-2] + (min(shape[-2:]),), dtype)
    out = solver_call(t, f"{prefix}solver_geqrf_ffi", [a], [a_t], [r],
                      [(a_t, r), (taus_t, r - 1)], aliases=_ALIAS_FIRST)
    return f"{out}#0", f"{out}#1"


def _gpu_geqrf(p, op, prefix):
    (a,) = op.operands
    packed, taus = _geqrf(LapackText(p, op), prefix, p.name(a), a.shape, a.dtype)
    p.names[op.results[0]], p.names[op.results[1]] = packed, taus


def _pad_columns(t, x: str, shape, dtype, extra: int) -> str:
    """``x`` with ``extra`` zero columns on the right."""
    r = len(shape)
    scalar_t = tensor_type((), dtype)
    zero = t.line("stablehlo.constant", [], [], [scalar_t],
                  f"value = {dense_literal(np.zeros((), dtype))} : {scalar_t}")
    return t.line("stablehlo.pad", [x, zero], [tensor_type(shape, dtype), scalar_t],
                  [tensor_type(shape[:-1] + (shape[-1] + extra,), dtype)],
                  f"edge_padding_low = {i64_array([0] * r)}, "
                  f"edge_padding_high = {i64_array([0] * (r - 1) + [extra])}, "
                  f"interior_padding = {i64_array([0] * r)}")


def _gpu_qr(p, op, prefix):
    (a,), (q, r_out) = op.operands, op.results
    t, rank, batch, (m, n), dtype = LapackText(p, op), a.ndim, a.shape[:-2], a.shape[-2:], a.dtype
    packed, taus = _geqrf(t, prefix, p.name(a), a.shape, dtype)
    source, source_shape = packed, a.shape
    if m < n:                      # the reflectors are the first m columns
        source_shape = batch + (m, m)
        source = _slice(t, packed, a.shape, dtype, source_shape)
    elif op.attrs["full_matrices"] and m > n:   # complete Q: zero columns, no reflector
        source_shape = batch + (m, m)
        source = _pad_columns(t, packed, a.shape, dtype, m - n)
    source_t = tensor_type(source_shape, dtype)
    taus_t = tensor_type(batch + (min(m, n),), dtype)
    p.names[q] = solver_call(t, f"{prefix}solver_orgqr_ffi", [source, taus],
                             [source_t, taus_t], [rank, rank - 1], [(source_t, rank)],
                             aliases=_ALIAS_ONLY)
    r_source = packed
    if r_out.shape != a.shape:     # reduced R of a tall matrix: its first n rows
        r_source = _slice(t, packed, a.shape, dtype, r_out.shape)
    p.names[r_out] = _upper(t, r_source, r_out.shape, dtype)


def _adjoint_text(t, x: str, shape, dtype) -> str:
    """The conjugate transpose of the last two dimensions of ``x`` (shape ``shape``)."""
    r = len(shape)
    swapped = shape[:-2] + (shape[-1], shape[-2])
    out_t = tensor_type(swapped, dtype)
    x = t.line("stablehlo.transpose", [x], [tensor_type(shape, dtype)], [out_t],
               f"permutation = {i64_array(list(range(r - 2)) + [r - 1, r - 2])}")
    if np.dtype(dtype).kind != "c":
        return x
    part_t = tensor_type(swapped, np.float32 if dtype == np.complex64 else np.float64)
    real = t.line("stablehlo.real", [x], [out_t], [part_t])
    imag = t.line("stablehlo.imag", [x], [out_t], [part_t])
    minus = t.line("stablehlo.negate", [imag], [part_t], [part_t])
    return t.line("stablehlo.complex", [real, minus], [part_t, part_t], [out_t])


def _svd_jacobi(t, p, op, prefix, a):
    """(s, u, vt) names from ``gesvdj`` (u, vt None without ``compute_uv``)."""
    full, with_uv = op.attrs["full_matrices"], op.attrs["compute_uv"]
    r, batch, (m, n) = a.ndim, a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    economy = not full and m > JACOBI_ECONOMY and n > JACOBI_ECONOMY
    u_shape = batch + (m, k if economy else m)
    v_shape = batch + (n, k if economy else n)
    s_t = value_type(op.results[0])
    out = solver_call(t, f"{prefix}solver_gesvdj_ffi", [p.name(a)], [value_type(a)], [r],
                      [(value_type(a), r), (s_t, r - 1), (tensor_type(u_shape, a.dtype), r),
                       (tensor_type(v_shape, a.dtype), r), (tensor_type(batch, np.int32), r - 2)],
                      f"compute_uv = {_bool(with_uv)}, full_matrices = {_bool(not economy)}",
                      aliases=_ALIAS_FIRST)
    if not with_uv:
        return f"{out}#1", None, None, f"{out}#4"
    u, vt = f"{out}#2", _adjoint_text(t, f"{out}#3", v_shape, a.dtype)
    if not full and not economy:   # full factors computed: keep the first k vectors
        vt_full = batch + (v_shape[-1], v_shape[-2])
        u = _slice(t, u, u_shape, a.dtype, batch + (m, k))
        vt = _slice(t, vt, vt_full, a.dtype, batch + (k, n))
    return f"{out}#1", u, vt, f"{out}#4"


def _svd_gesvd(t, p, op, prefix, a):
    """(s, u, vt, info) names from ``gesvd`` (on the row-major Aᵀ when m < n)."""
    full, with_uv = op.attrs["full_matrices"], op.attrs["compute_uv"]
    r, batch, (m, n) = a.ndim, a.shape[:-2], a.shape[-2:]
    transposed = m < n
    if with_uv:
        u_t, vt_t = value_type(op.results[1]), value_type(op.results[2])
        u_r = vt_r = r
    else:                          # the kernel takes no vector buffers: scalars
        u_t = vt_t = tensor_type((), a.dtype)
        u_r = vt_r = 0
    vectors = [(vt_t, vt_r), (u_t, u_r)] if transposed else [(u_t, u_r), (vt_t, vt_r)]
    out = solver_call(t, f"{prefix}solver_gesvd_ffi", [p.name(a)], [value_type(a)], [r],
                      [(value_type(a), r), (value_type(op.results[0]), r - 1), *vectors,
                       (tensor_type(batch, np.int32), r - 2)],
                      f"compute_uv = {_bool(with_uv)}, full_matrices = {_bool(full)}, "
                      f"transposed = {_bool(transposed)}",
                      aliases=_ALIAS_FIRST, column_first=not transposed)
    u, vt = (f"{out}#3", f"{out}#2") if transposed else (f"{out}#2", f"{out}#3")
    return f"{out}#1", (u if with_uv else None), (vt if with_uv else None), f"{out}#4"


def _gpu_svd(p, op, prefix):
    (a,) = op.operands
    t, batch, (m, n) = LapackText(p, op), a.shape[:-2], a.shape[-2:]
    jacobi = m <= JACOBI_LIMIT and n <= JACOBI_LIMIT
    s, u, vt, info = (_svd_jacobi if jacobi else _svd_gesvd)(t, p, op, prefix, a)
    ok = _ok(t, info, batch)
    for result, name in zip(op.results, (s, u, vt)):
        p.names[result] = _nan_unless(t, ok, batch, name, result.shape, result.dtype)


def _gpu_eig(p, op, prefix):
    (a,) = op.operands
    raise PSCUnsupportedCallError(
        f"eig ({fmt(a)}, np.linalg.eig/eigvals) has no GPU lowering here ({location(op)}): "
        "jax uses cuSOLVER's geev only with cuSOLVER 11.7.1 or newer and a host-hybrid "
        "MAGMA/LAPACK kernel otherwise",
        hint="compute it on CPU: jit_ps(..., backend='cpu')")


for _name, _rule in [("cholesky", _gpu_cholesky), ("lu", _gpu_lu), ("solve", _gpu_solve),
                     ("triangular_solve", _gpu_triangular_solve), ("eigh", _gpu_eigh),
                     ("geqrf", _gpu_geqrf), ("qr", _gpu_qr), ("svd", _gpu_svd),
                     ("eig", _gpu_eig)]:
    by_platform(_name, _rule)

