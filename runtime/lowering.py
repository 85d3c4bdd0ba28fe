"""Lowering: graph IR -> StableHLO text (MLIR generic syntax).

Every operation is printed in MLIR's generic form, ``%r = "stablehlo.op"(%a, %b) {attrs} :
(types) -> types loc("file.py":12:5)``: one uniform printer, no per-op custom syntax to get
wrong.  The ``loc`` travels into XLA's HLO metadata (``source_file``/``source_line``), so
profiles and XLA errors point at the user's line.

`LOWERINGS` maps each primitive to its printer; `tests/test_registries.py` checks it covers
`runtime.ops.OP_DEFS`.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import dtypes
from .ir import Computation, Operation, Region, Value
from .ops import CHLO_OPS, UNARY_OPS

LOWERINGS: dict[str, Callable] = {}


def tensor_type(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{dtypes.mlir_element_type(dtype)}>"


def _vtype(v: Value) -> str:
    return tensor_type(v.shape, v.dtype)


def _i64_array(values) -> str:
    inner = ", ".join(str(int(v)) for v in values)
    return f"array<i64: {inner}>" if values else "array<i64>"


def _int_list(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _location(op: Operation | None) -> str:
    loc = op.location if op is not None else None
    if loc is None:
        return "loc(unknown)"
    file = loc.file.replace("\\", "\\\\").replace('"', '\\"')
    return f'loc("{file}":{loc.line}:{loc.col + 1})'


def dense_literal(array: np.ndarray) -> str:
    """``dense<...>`` for a constant: exact (hex bytes) for numbers, words for bools."""
    array = np.asarray(array)
    if array.size == 0:
        return "dense<>"
    if array.dtype == np.bool_:
        if (array == array.flat[0]).all():
            return f"dense<{str(bool(array.flat[0])).lower()}>"
        return f"dense<{_nested_bools(array.tolist())}>"   # nested like the shape
    flat = array.ravel()
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    if (raw == raw[0]).all():
        array = flat[:1]   # a splat: one element's bytes stand for all
    data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    return f'dense<"0x{data.hex().upper()}">'


def _nested_bools(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested_bools(v) for v in value) + "]"
    return "true" if value else "false"


class _Printer:
    """Holds the SSA names and output lines of one lowering."""

    def __init__(self):
        self.lines: list[str] = []
        self.names: dict[Value, str] = {}
        self._counter = 0
        self.indent = 4

    def fresh(self) -> str:
        self._counter += 1
        return f"%{self._counter - 1}"

    def fresh_block_arg(self) -> str:
        """A block-argument name; ``%b`` keeps them apart from the function's ``%arg``s."""
        return "%b" + self.fresh()[1:]

    def emit(self, text: str) -> None:
        self.lines.append(" " * self.indent + text)

    def name(self, v: Value) -> str:
        return self.names[v]

    def bind_results(self, op: Operation) -> str:
        """Name ``op``'s results; returns the left-hand side of its line."""
        if len(op.results) == 1:
            name = self.fresh()
            self.names[op.results[0]] = name
            return name
        base = self.fresh()
        for i, result in enumerate(op.results):
            self.names[result] = f"{base}#{i}"
        return f"{base}:{len(op.results)}"

    def generic(self, op: Operation, mlir_name: str, attrs: str = "",
                regions: Sequence[str] = (), operands: Sequence[Value] | None = None) -> None:
        operands = op.operands if operands is None else operands
        lhs = self.bind_results(op)
        args = ", ".join(self.name(v) for v in operands)
        in_types = ", ".join(_vtype(v) for v in operands)
        out_types = ", ".join(_vtype(v) for v in op.results)
        if len(op.results) != 1:
            out_types = f"({out_types})"
        region_text = f" ({', '.join(regions)})" if regions else ""
        attr_text = f" {{{attrs}}}" if attrs else ""
        dialect = "chlo" if mlir_name in CHLO_OPS else "stablehlo"
        self.emit(f'{lhs} = "{dialect}.{mlir_name}"({args}){region_text}{attr_text} : '
                  f"({in_types}) -> {out_types} {_location(op)}")

    def region(self, region: Region, bind_params: Sequence[str] | None = None,
               op: Operation | None = None) -> str:
        """Print a nested region; with ``bind_params`` its parameters alias outer names
        (a case branch), otherwise they become block arguments (a loop body)."""
        saved_lines, saved_indent = self.lines, self.indent
        self.lines, self.indent = [], saved_indent + 2
        header = []
        if bind_params is not None:
            for param, outer in zip(region.params, bind_params):
                self.names[param] = outer
        else:
            args = []
            for param in region.params:
                name = self.fresh_block_arg()
                self.names[param] = name
                args.append(f"{name}: {_vtype(param)}")
            header = [" " * self.indent + f"^bb0({', '.join(args)}):"]
        self.indent += 2
        for inner in region.operations:
            lower_operation(self, inner)
        outs = ", ".join(self.name(v) for v in region.outputs)
        out_types = ", ".join(_vtype(v) for v in region.outputs)
        self.emit(f'"stablehlo.return"({outs}) : ({out_types}) -> () {_location(op)}')
        body = "\n".join(header + self.lines)
        self.lines, self.indent = saved_lines, saved_indent
        return "{\n" + body + "\n" + " " * (self.indent + 2) + "}"

    def scalar_body(self, dtype, combine: Callable[[str, str, str], tuple[list[str], str]],
                    op: Operation) -> str:
        """A reduction/scatter body over two scalars: ``combine(a, b, type)`` gives its lines
        and the name of its result (names it defines start with ``%r``)."""
        t = tensor_type((), dtype)
        a, b = self.fresh_block_arg(), self.fresh_block_arg()
        tag = self.fresh().lstrip("%")
        body_lines, result = combine(a, b, t)
        lines = [line.replace("%r", f"%r{tag}") for line in body_lines]
        lines.append(f'"stablehlo.return"({result.replace("%r", f"%r{tag}")}) : ({t}) -> ()')
        return self.block([f"{a}: {t}", f"{b}: {t}"], lines, op)

    def block(self, params: Sequence[str], lines: Sequence[str], op: Operation) -> str:
        """A one-block region with block arguments ``params`` and body ``lines``."""
        pad = " " * (self.indent + 4)
        text = [" " * (self.indent + 2) + f"^bb0({', '.join(params)}):"]
        text += [pad + line + f" {_location(op)}" for line in lines]
        return "{\n" + "\n".join(text) + "\n" + " " * (self.indent + 2) + "}"


def lower_operation(printer: _Printer, op: Operation) -> None:
    LOWERINGS[op.name](printer, op)


def lower_to_stablehlo(computation: Computation) -> str:
    printer = _Printer()
    region = computation.region
    args = []
    for i, param in enumerate(region.params):
        printer.names[param] = f"%arg{i}"
        args.append(f"%arg{i}: {_vtype(param)}")
    printer._counter = 0
    for op in region.operations:
        lower_operation(printer, op)
    outs = ", ".join(printer.name(v) for v in region.outputs)
    out_types = ", ".join(_vtype(v) for v in region.outputs)
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in computation.name)
    return "\n".join([
        f"module @{name or 'main'} attributes {{mhlo.num_partitions = 1 : i32, "
        f"mhlo.num_replicas = 1 : i32}} {{",
        f"  func.func public @main({', '.join(args)}) -> ({out_types}) {{",
        *printer.lines,
        f"    \"func.return\"({outs}) : ({out_types}) -> ()",
        "  }",
        "}",
    ]) + "\n"


def _lowers(*names: str):
    def register(fn):
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


# --- element-wise -------------------------------------------------------------------------

def _plain(p: _Printer, op: Operation) -> None:
    p.generic(op, op.name)


for _name in (*UNARY_OPS, "add", "subtract", "multiply", "divide", "remainder",
              "power", "maximum", "minimum", "atan2", "and", "or", "xor", "shift_left",
              "shift_right_arithmetic", "shift_right_logical", "select", "convert",
              "reshape"):
    LOWERINGS[_name] = _plain


def _compare_attrs(direction: str, dtype) -> str:
    kind = dtypes.comparison_type(dtype)
    return (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
            f"compare_type = #stablehlo<comparison_type {kind}>")


@_lowers("compare")
def _lower_compare(p, op):
    p.generic(op, "compare", _compare_attrs(op.attrs["direction"], op.operands[0].dtype))


@_lowers("constant")
def _lower_constant(p, op):
    value = op.attrs["value"]
    p.generic(op, "constant", f"value = {dense_literal(value)} : "
                              f"{tensor_type(value.shape, value.dtype)}")


def _i64(value) -> str:
    return f"{int(value)} : i64"


# Ops whose only attributes are integers or integer lists: (MLIR name, IR key, printer).
_SIMPLE_ATTRIBUTES = {
    "iota": [("iota_dimension", "dimension", _i64)],
    "broadcast_in_dim": [("broadcast_dimensions", "broadcast_dimensions", _i64_array)],
    "reverse": [("dimensions", "dimensions", _i64_array)],
    "transpose": [("permutation", "permutation", _i64_array)],
    "slice": [("start_indices", "start_indices", _i64_array),
              ("limit_indices", "limit_indices", _i64_array),
              ("strides", "strides", _i64_array)],
    "dynamic_slice": [("slice_sizes", "slice_sizes", _i64_array)],
    "dynamic_update_slice": [],
    "concatenate": [("dimension", "dimension", _i64)],
    "pad": [("edge_padding_low", "low", _i64_array), ("edge_padding_high", "high", _i64_array),
            ("interior_padding", "interior", _i64_array)],
}


def _lower_simple(p, op):
    attrs = ", ".join(f"{name} = {show(op.attrs[key])}"
                      for name, key, show in _SIMPLE_ATTRIBUTES[op.name])
    p.generic(op, op.name, attrs)


for _name in _SIMPLE_ATTRIBUTES:
    LOWERINGS[_name] = _lower_simple


# --- contractions and reductions ------------------------------------------------------------

def _dims_attr(pairs) -> str:
    return ", ".join(f"{key} = {_int_list(dims)}" for key, dims in pairs if dims)


@_lowers("dot_general")
def _lower_dot_general(p, op):
    a = op.attrs
    fields = _dims_attr([("lhs_batching_dimensions", a["lhs_batch"]),
                         ("rhs_batching_dimensions", a["rhs_batch"]),
                         ("lhs_contracting_dimensions", a["lhs_contract"]),
                         ("rhs_contracting_dimensions", a["rhs_contract"])])
    p.generic(op, "dot_general", f"dot_dimension_numbers = #stablehlo.dot<{fields}>")


_REDUCERS = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
             "and": "and", "or": "or"}


def reduction_identity(kind: str, dtype) -> np.ndarray:
    """The identity element of a reduction, as a 0-d array of ``dtype``."""
    dtype = np.dtype(dtype)
    if kind in ("sum", "or"):
        return np.zeros((), dtype)
    if kind in ("prod", "and"):
        return np.ones((), dtype) if kind == "prod" or dtype == np.bool_ else \
            np.asarray(np.invert(np.zeros((), dtype)))
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if kind == "max" else info.max, dtype)
    return np.array(-np.inf if kind == "max" else np.inf, dtype)


def _binary_body(mlir_name: str):
    def combine(a, b, t):
        return [f'%r = "stablehlo.{mlir_name}"({a}, {b}) : ({t}, {t}) -> {t}'], "%r"
    return combine


def _constant_line(p: _Printer, value: np.ndarray, op: Operation) -> str:
    name = p.fresh()
    t = tensor_type(value.shape, value.dtype)
    p.emit(f'{name} = "stablehlo.constant"() {{value = {dense_literal(value)} : {t}}} : '
           f"() -> {t} {_location(op)}")
    return name


@_lowers("reduce")
def _lower_reduce(p, op):
    (x,), kind = op.operands, op.attrs["kind"]
    init = _constant_line(p, reduction_identity(kind, x.dtype), op)
    body = p.scalar_body(x.dtype, _binary_body(_REDUCERS[kind]), op)
    lhs = p.bind_results(op)
    t_init = tensor_type((), x.dtype)
    p.emit(f'{lhs} = "stablehlo.reduce"({p.name(x)}, {init}) ({body}) '
           f"{{dimensions = {_i64_array(op.attrs['dimensions'])}}} : "
           f"({_vtype(x)}, {t_init}) -> {_vtype(op.results[0])} {_location(op)}")


@_lowers("argmax", "argmin")
def _lower_argreduce(p, op):
    """A variadic reduce over (value, index) pairs: keep the better value, the lower index
    on ties, and NaN over anything (NumPy returns the first NaN)."""
    (x,) = op.operands
    axis, index_dtype = op.attrs["axis"], op.attrs["index_dtype"]
    loc = _location(op)
    t_idx_full = tensor_type(x.shape, index_dtype)
    iota = p.fresh()
    p.emit(f'{iota} = "stablehlo.iota"() {{iota_dimension = {axis} : i64}} : () -> '
           f"{t_idx_full} {loc}")
    init_value = _constant_line(p, reduction_identity(
        "max" if op.name == "argmax" else "min", x.dtype), op)
    init_index = _constant_line(p, np.zeros((), index_dtype), op)
    tv, ti = tensor_type((), x.dtype), tensor_type((), index_dtype)
    names = [p.fresh_block_arg() for _ in range(4)]
    av, ai, bv, bi = names
    direction = "GT" if op.name == "argmax" else "LT"
    vcmp = _compare_attrs(direction, x.dtype)
    tag = p.fresh().lstrip("%")
    lines = [
        f'%better{tag} = "stablehlo.compare"({av}, {bv}) {{{vcmp}}} : ({tv}, {tv}) -> tensor<i1>',
        f'%eq{tag} = "stablehlo.compare"({av}, {bv}) {{{_compare_attrs("EQ", x.dtype)}}} : '
        f"({tv}, {tv}) -> tensor<i1>",
        f'%lower{tag} = "stablehlo.compare"({ai}, {bi}) {{{_compare_attrs("LT", index_dtype)}}}'
        f" : ({ti}, {ti}) -> tensor<i1>",
        f'%tie{tag} = "stablehlo.and"(%eq{tag}, %lower{tag}) : (tensor<i1>, tensor<i1>) -> '
        "tensor<i1>",
        f'%pick0{tag} = "stablehlo.or"(%better{tag}, %tie{tag}) : (tensor<i1>, tensor<i1>) -> '
        "tensor<i1>",
    ]
    if dtypes.is_inexact(x.dtype):
        lines += [
            f'%anan{tag} = "stablehlo.compare"({av}, {av}) {{{_compare_attrs("NE", x.dtype)}}}'
            f" : ({tv}, {tv}) -> tensor<i1>",
            f'%bnan{tag} = "stablehlo.compare"({bv}, {bv}) {{{_compare_attrs("NE", x.dtype)}}}'
            f" : ({tv}, {tv}) -> tensor<i1>",
            f'%notb{tag} = "stablehlo.not"(%bnan{tag}) : (tensor<i1>) -> tensor<i1>',
            f'%anan_only{tag} = "stablehlo.and"(%anan{tag}, %notb{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%both{tag} = "stablehlo.and"(%anan{tag}, %bnan{tag}) : (tensor<i1>, tensor<i1>) '
            "-> tensor<i1>",
            f'%bothlow{tag} = "stablehlo.and"(%both{tag}, %lower{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%nanpick{tag} = "stablehlo.or"(%anan_only{tag}, %bothlow{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%notnan{tag} = "stablehlo.or"(%anan{tag}, %bnan{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%plain{tag} = "stablehlo.not"(%notnan{tag}) : (tensor<i1>) -> tensor<i1>',
            f'%plainpick{tag} = "stablehlo.and"(%plain{tag}, %pick0{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
            f'%pick{tag} = "stablehlo.or"(%nanpick{tag}, %plainpick{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
        ]
    else:
        lines.append(f'%pick{tag} = "stablehlo.or"(%pick0{tag}, %pick0{tag}) : (tensor<i1>, '
                     "tensor<i1>) -> tensor<i1>")
    lines += [
        f'%v{tag} = "stablehlo.select"(%pick{tag}, {av}, {bv}) : (tensor<i1>, {tv}, {tv}) -> {tv}',
        f'%i{tag} = "stablehlo.select"(%pick{tag}, {ai}, {bi}) : (tensor<i1>, {ti}, {ti}) -> {ti}',
        f'"stablehlo.return"(%v{tag}, %i{tag}) : ({tv}, {ti}) -> ()',
    ]
    body_text = p.block([f"{av}: {tv}", f"{ai}: {ti}", f"{bv}: {tv}", f"{bi}: {ti}"],
                        lines, op)
    result = p.fresh()
    p.names[op.results[0]] = f"{result}#1"
    t_val_out = tensor_type(op.results[0].shape, x.dtype)
    p.emit(f'{result}:2 = "stablehlo.reduce"({p.name(x)}, {iota}, {init_value}, {init_index}) '
           f"({body_text}) {{dimensions = {_i64_array([axis])}}} : ({_vtype(x)}, {t_idx_full}, "
           f"{tv}, {ti}) -> ({t_val_out}, {_vtype(op.results[0])}) {loc}")


@_lowers("cumulative")
def _lower_cumulative(p, op):
    """An inclusive scan as reduce_window with a window the length of the axis."""
    (x,), a = op.operands, op.attrs
    n, axis = x.shape[a["axis"]], a["axis"]
    init = _constant_line(p, reduction_identity(a["kind"], x.dtype), op)
    body = p.scalar_body(x.dtype, _binary_body(_REDUCERS[a["kind"]]), op)
    window = [1] * x.ndim
    window[axis] = max(n, 1)
    padding = [[0, 0] for _ in range(x.ndim)]
    padding[axis] = [0, max(n - 1, 0)] if a["reverse"] else [max(n - 1, 0), 0]
    pad_text = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in padding) + "]"
    lhs = p.bind_results(op)
    t_init = tensor_type((), x.dtype)
    p.emit(f'{lhs} = "stablehlo.reduce_window"({p.name(x)}, {init}) ({body}) '
           f"{{window_dimensions = {_i64_array(window)}, padding = dense<{pad_text}> : "
           f"tensor<{x.ndim}x2xi64>}} : ({_vtype(x)}, {t_init}) -> {_vtype(op.results[0])} "
           f"{_location(op)}")


@_lowers("sort")
def _lower_sort(p, op):
    """Comparator: lexicographic on the keys.  Floats compare as NumPy sorts them: every
    NaN (whatever its sign bit) after all numbers, and -0.0 equal to 0.0 (stable order)."""
    keys = op.operands[:op.attrs["num_keys"]]
    loc = _location(op)
    params, pairs = [], []
    for v in op.operands:
        t = tensor_type((), v.dtype)
        a, b = p.fresh_block_arg(), p.fresh_block_arg()
        params += [f"{a}: {t}", f"{b}: {t}"]
        pairs.append((a, b, t, v.dtype))
    tag = p.fresh().lstrip("%")
    lines = []
    # result = lt(k0) or (eq(k0) and (lt(k1) or (eq(k1) and ...))), built from the last key.
    last = None
    for k in reversed(range(len(keys))):
        a, b, t, dt = pairs[k]
        lt, eq = f"%lt{k}_{tag}", f"%eq{k}_{tag}"
        if dtypes.is_inexact(dt):
            n = f"{k}_{tag}"
            cmp = lambda d: _compare_attrs(d, dt)
            lines += [
                f'%ltf{n} = "stablehlo.compare"({a}, {b}) {{{cmp("LT")}}} : ({t}, {t}) -> tensor<i1>',
                f'%anan{n} = "stablehlo.compare"({a}, {a}) {{{cmp("NE")}}} : ({t}, {t}) -> tensor<i1>',
                f'%bnan{n} = "stablehlo.compare"({b}, {b}) {{{cmp("NE")}}} : ({t}, {t}) -> tensor<i1>',
                f'%nota{n} = "stablehlo.not"(%anan{n}) : (tensor<i1>) -> tensor<i1>',
                f'%nanlast{n} = "stablehlo.and"(%bnan{n}, %nota{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
                f'{lt} = "stablehlo.or"(%ltf{n}, %nanlast{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
                f'%eqf{n} = "stablehlo.compare"({a}, {b}) {{{cmp("EQ")}}} : ({t}, {t}) -> tensor<i1>',
                f'%bothnan{n} = "stablehlo.and"(%anan{n}, %bnan{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
                f'{eq} = "stablehlo.or"(%eqf{n}, %bothnan{n}) : (tensor<i1>, tensor<i1>) -> tensor<i1>',
            ]
        else:
            lines += [
                f'{lt} = "stablehlo.compare"({a}, {b}) {{{_compare_attrs("LT", dt)}}} : ({t}, {t}) -> tensor<i1>',
                f'{eq} = "stablehlo.compare"({a}, {b}) {{{_compare_attrs("EQ", dt)}}} : ({t}, {t}) -> tensor<i1>',
            ]
        if last is None:
            last = lt
            continue
        lines += [
            f'%and{k}_{tag} = "stablehlo.and"({eq}, {last}) : (tensor<i1>, tensor<i1>) '
            "-> tensor<i1>",
            f'%or{k}_{tag} = "stablehlo.or"({lt}, %and{k}_{tag}) : (tensor<i1>, '
            "tensor<i1>) -> tensor<i1>",
        ]
        last = f"%or{k}_{tag}"
    lines.append(f'"stablehlo.return"({last}) : (tensor<i1>) -> ()')
    body = p.block(params, lines, op)
    lhs = p.bind_results(op)
    args = ", ".join(p.name(v) for v in op.operands)
    in_types = ", ".join(_vtype(v) for v in op.operands)
    out_types = in_types if len(op.results) == 1 else f"({in_types})"
    p.emit(f'{lhs} = "stablehlo.sort"({args}) ({body}) {{dimension = '
           f"{op.attrs['dimension']} : i64, is_stable = {str(op.attrs['is_stable']).lower()}}}"
           f" : ({in_types}) -> {out_types} {loc}")


# --- gather and scatter -------------------------------------------------------------------

@_lowers("gather")
def _lower_gather(p, op):
    a = op.attrs
    fields = _dims_attr([("offset_dims", a["offset_dims"]),
                         ("collapsed_slice_dims", a["collapsed_slice_dims"]),
                         ("operand_batching_dims", a["operand_batching_dims"]),
                         ("start_indices_batching_dims", a["start_indices_batching_dims"]),
                         ("start_index_map", a["start_index_map"])])
    sep = ", " if fields else ""
    p.generic(op, "gather",
              f"dimension_numbers = #stablehlo.gather<{fields}{sep}index_vector_dim = "
              f"{a['index_vector_dim']}>, slice_sizes = {_i64_array(a['slice_sizes'])}, "
              f"indices_are_sorted = {str(a['indices_are_sorted']).lower()}")


_SCATTER_COMBINERS = {"add": "add", "mul": "multiply", "min": "minimum", "max": "maximum"}


@_lowers("scatter")
def _lower_scatter(p, op):
    a = op.attrs
    x = op.operands[0]
    if a["mode"] == "set":
        def combine(old, new, t):
            return [], new
    else:
        combine = _binary_body(_SCATTER_COMBINERS[a["mode"]])
    body = p.scalar_body(x.dtype, combine, op)
    fields = _dims_attr([("update_window_dims", a["update_window_dims"]),
                         ("inserted_window_dims", a["inserted_window_dims"]),
                         ("input_batching_dims", a["input_batching_dims"]),
                         ("scatter_indices_batching_dims", a["scatter_indices_batching_dims"]),
                         ("scatter_dims_to_operand_dims", a["scatter_dims_to_operand_dims"])])
    sep = ", " if fields else ""
    p.generic(op, "scatter",
              f"scatter_dimension_numbers = #stablehlo.scatter<{fields}{sep}index_vector_dim = "
              f"{a['index_vector_dim']}>, indices_are_sorted = "
              f"{str(a['indices_are_sorted']).lower()}, unique_indices = "
              f"{str(a['unique_indices']).lower()}", regions=[body])


# --- control flow -------------------------------------------------------------------------

@_lowers("while")
def _lower_while(p, op):
    cond, body = op.regions
    regions = [p.region(cond, op=op), p.region(body, op=op)]
    p.generic(op, "while", regions=regions)


@_lowers("case")
def _lower_case(p, op):
    """Branches are printed with their parameters bound to the case's operands: StableHLO
    case regions take no arguments and see enclosing values directly."""
    index, *passed = op.operands
    outer = [p.name(v) for v in passed]
    regions = [p.region(r, bind_params=outer, op=op) for r in op.regions]
    p.generic(op, "case", regions=regions, operands=[index])
