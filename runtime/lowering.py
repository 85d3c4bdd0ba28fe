"""Lowering: graph IR -> StableHLO text (MLIR generic syntax).

Every operation is printed in MLIR's generic form, ``%r = "stablehlo.op"(%a, %b) {attrs} :
(types) -> types loc("file.py":12:5)``: one uniform printer, no per-op custom syntax to get
wrong.  The ``loc`` travels into XLA's HLO metadata (``source_file``/``source_line``), so
profiles and XLA errors point at the user's line.

This module is the printer.  Each primitive's own lowering is declared next to its other
rules (`runtime.primitives`) and called with the printer and the operation; the helpers
here (`tensor_type`, `compare_attrs`, `Printer.generic`...) are what lowerings print with.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import dtypes
from .ir import Computation, Operation, Region, Value
from .primitive import lookup


def tensor_type(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{dtypes.mlir_element_type(dtype)}>"


def value_type(v: Value) -> str:
    return tensor_type(v.shape, v.dtype)


def i64_array(values) -> str:
    inner = ", ".join(str(int(v)) for v in values)
    return f"array<i64: {inner}>" if values else "array<i64>"


def int_list(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def location(op: Operation | None) -> str:
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


class Printer:
    """Holds the SSA names and output lines of one lowering, for ``platform`` (the PJRT
    client's, as `runtime.client.lowering_platform` names it: ``"cpu"``, ``"cuda"``,
    ``"rocm"``...; lowerings with a kernel per platform choose by it)."""

    def __init__(self, platform: str = "cpu"):
        self.platform = platform
        self.lines: list[str] = []
        self.names: dict[Value, str] = {}
        self.host_callbacks: list = []   # Python functions of host callbacks, by index
        self._counter = 0
        self.indent = 4
        self.spmd = None   # an SPMD program's `runtime.spmd.SpmdLowering`

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
                regions: Sequence[str] = (), operands: Sequence[Value] | None = None,
                dialect: str = "stablehlo") -> None:
        operands = op.operands if operands is None else operands
        lhs = self.bind_results(op)
        args = ", ".join(self.name(v) for v in operands)
        in_types = ", ".join(value_type(v) for v in operands)
        out_types = ", ".join(value_type(v) for v in op.results)
        if len(op.results) != 1:
            out_types = f"({out_types})"
        region_text = f" ({', '.join(regions)})" if regions else ""
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.emit(f'{lhs} = "{dialect}.{mlir_name}"({args}){region_text}{attr_text} : '
                  f"({in_types}) -> {out_types} {location(op)}")

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
                args.append(f"{name}: {value_type(param)}")
            header = [" " * self.indent + f"^bb0({', '.join(args)}):"]
        self.indent += 2
        for inner in region.operations:
            lower_operation(self, inner)
        outs = ", ".join(self.name(v) for v in region.outputs)
        out_types = ", ".join(value_type(v) for v in region.outputs)
        self.emit(f'"stablehlo.return"({outs}) : ({out_types}) -> () {location(op)}')
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
        text += [pad + line + f" {location(op)}" for line in lines]
        return "{\n" + "\n".join(text) + "\n" + " " * (self.indent + 2) + "}"


def lower_operation(printer: Printer, op: Operation) -> None:
    lookup(op.name).lowering(printer, op)


def lower_to_stablehlo(computation: Computation, platform: str = "cpu", *, spmd=None,
                       arg_attrs=None, out_attrs=None, replicas: int = 1) -> str:
    """The module text of ``computation``.  An SPMD program (`runtime.spmd`) passes its
    `SpmdLowering` as ``spmd`` (partition count, mesh declaration; lowerings of sharding
    constraints read it as ``printer.spmd``) and one attribute text per argument and per
    result (None: no attribute); a replicated one (`runtime.replicated`) its replica
    count."""
    printer = Printer(platform)
    printer.spmd = spmd
    region = computation.region
    args = []
    for i, param in enumerate(region.params):
        printer.names[param] = f"%arg{i}"
        attr = arg_attrs[i] if arg_attrs else None
        args.append(f"%arg{i}: {value_type(param)}" + (f" {{{attr}}}" if attr else ""))
    printer._counter = 0
    for op in region.operations:
        lower_operation(printer, op)
    outs = ", ".join(printer.name(v) for v in region.outputs)
    out_types = ", ".join(value_type(v) for v in region.outputs)
    result_types = out_types
    if out_attrs:
        result_types = ", ".join(value_type(v) + (f" {{{a}}}" if a else "")
                                 for v, a in zip(region.outputs, out_attrs))
    computation.host_callbacks = tuple(printer.host_callbacks)
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in computation.name)
    module_attrs = (spmd.module_attrs() if spmd is not None else
                    f"mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {int(replicas)} : i32")
    return "\n".join([
        f"module @{name or 'main'} attributes {{{module_attrs}}} {{",
        *(spmd.preamble() if spmd is not None else ()),
        f"  func.func public @main({', '.join(args)}) -> ({result_types}) {{",
        *printer.lines,
        f"    \"func.return\"({outs}) : ({out_types}) -> ()",
        "  }",
        "}",
    ]) + "\n"


# --- what lowerings print with --------------------------------------------------------

def compare_attrs(direction: str, dtype) -> str:
    kind = dtypes.comparison_type(dtype)
    return (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
            f"compare_type = #stablehlo<comparison_type {kind}>")


def i64(value) -> str:
    return f"{int(value)} : i64"


def dims_attr(pairs) -> str:
    return ", ".join(f"{key} = {int_list(dims)}" for key, dims in pairs if dims)


def binary_body(mlir_name: str):
    def combine(a, b, t):
        return [f'%r = "stablehlo.{mlir_name}"({a}, {b}) : ({t}, {t}) -> {t}'], "%r"
    return combine


def constant_line(p: Printer, value: np.ndarray, op: Operation) -> str:
    name = p.fresh()
    t = tensor_type(value.shape, value.dtype)
    p.emit(f'{name} = "stablehlo.constant"() {{value = {dense_literal(value)} : {t}}} : '
           f"() -> {t} {location(op)}")
    return name
