"""The builder's graph IR: values, operations and regions.

The IR is deliberately small.  A `Region` is a straight-line list of `Operation`s with
parameters and outputs; control-flow operations own nested regions.  Regions are *closed*:
an operation inside a nested region never refers to a value of an enclosing region
directly.  When user code does (a loop body reading a weight matrix), the builder turns the
outer value into an extra parameter of the nested region and an extra operand of the
control-flow operation (see ``Builder.capture``).  Closed regions keep later transforms
(autodiff, batching) local: each region can be transformed on its own.

Attributes are plain Python values (ints, tuples of ints, strings, NumPy arrays), so the
IR can be compared, printed and transformed without knowing StableHLO.

This module is the bottom of the runtime: it imports nothing of it but `errors`.  What a
`Value` offers user code (NumPy's operators, attributes and methods) is given to it by
`runtime.array_api`, which sits above the translation rules; lowering to StableHLO is
`runtime.lowering.lower_to_stablehlo`.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .errors import PSCShapeError, SourceLocation

_value_ids = itertools.count()

# The most bytes one value may span.  XLA computes element counts and byte sizes in
# int64 and aborts the process (it does not raise) on a shape whose product overflows
# ("overflow in static extent product"); it rejects one whose byte size may overflow.
# So every value's byte size, counted over its non-zero dimensions (a zero does not stop
# XLA's running product from overflowing first), must fit in int64.  Whether the memory
# exists is the device's business: XLA reports that as an ordinary error.
MAX_VALUE_BYTES = 2**63 - 1


def check_extent(shape: tuple, dtype: np.dtype) -> None:
    """Raise `PSCShapeError` (without a location: the builder adds it) for a shape no
    value can have: a negative dimension, or more bytes than `MAX_VALUE_BYTES`."""
    extent = dtype.itemsize   # Python ints: the product itself never overflows
    for d in shape:
        if d < 0:
            raise PSCShapeError(f"negative dimension in shape {shape}")
        if d:
            extent *= d
    if extent > MAX_VALUE_BYTES:
        elements = extent // dtype.itemsize
        raise PSCShapeError(
            f"an array of shape {shape} and dtype {dtype} would hold {elements:.3g} "
            f"elements ({extent:.3g} bytes), more than XLA can address",
            hint="XLA indexes arrays with 64-bit byte sizes: one array may span at most "
                 "2**63 - 1 bytes")


class Value:
    """An SSA value: one array with a static shape and dtype.

    ``weak`` marks a value that came from a Python scalar: under NumPy 2 promotion it takes
    the dtype of the array it meets (``float32_array * 2.0`` stays float32).

    Its operators and ndarray methods (``x + 1``, ``x.sum()``, ``x.T``) are installed by
    `runtime.array_api` when ``runtime`` is imported (importing ``runtime.ir`` imports
    ``runtime`` first): they dispatch to the translation rules, which this module must
    not import.
    """

    __slots__ = ("shape", "dtype", "weak", "region", "producer", "id", "facts")

    def __init__(self, shape, dtype, region: "Region", producer: "Operation | None" = None,
                 weak: bool = False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        check_extent(self.shape, self.dtype)
        self.weak = weak
        self.region = region
        self.producer = producer
        self.id = next(_value_ids)
        # what is known of a traced integer scalar's value while the program is built
        # (`runtime.index_facts`: an affine form of a loop index, its bounds); None if nothing
        self.facts = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def aval(self) -> tuple:
        return (self.shape, self.dtype)

    def __repr__(self) -> str:
        weak = ", weak" if self.weak else ""
        return f"Value(%{self.id}: {self.dtype}{list(self.shape)}{weak})"


class Operation:
    """One primitive application: ``results = name(*operands, **attrs)`` with sub-regions."""

    __slots__ = ("name", "operands", "attrs", "results", "regions", "location")

    def __init__(self, name: str, operands, attrs: dict[str, Any], regions=(),
                 location: SourceLocation | None = None):
        self.name = name
        self.operands = tuple(operands)
        self.attrs = dict(attrs)
        self.regions = tuple(regions)
        self.results: tuple[Value, ...] = ()
        self.location = location

    def __repr__(self) -> str:
        ins = ", ".join(f"%{v.id}" for v in self.operands)
        outs = ", ".join(f"%{v.id}" for v in self.results)
        return f"{outs} = {self.name}({ins}) {self.attrs}"


class Region:
    """A block of operations with parameters and outputs (a function body or a loop body).

    ``captures`` maps values of the enclosing region to the parameters that stand for them
    here; the owning operation passes them in after its ordinary operands.
    """

    def __init__(self, name: str, parent: "Region | None" = None):
        self.name = name
        self.parent = parent
        self.params: list[Value] = []
        self.operations: list[Operation] = []
        self.outputs: list[Value] = []
        self.captures: dict[Value, Value] = {}

    def add_param(self, shape, dtype, weak: bool = False) -> Value:
        value = Value(shape, dtype, self, weak=weak)
        self.params.append(value)
        return value

    def is_inside(self, other: "Region") -> bool:
        """True when this region is ``other`` or nested in it."""
        region = self
        while region is not None:
            if region is other:
                return True
            region = region.parent
        return False


class Computation:
    """A finished top-level computation: what `Builder.build` returns and XLA compiles
    (`runtime.lowering.lower_to_stablehlo` prints it as StableHLO text).

    ``constants`` are the arrays of its first ``len(constants)`` parameters: large
    constants kept out of the program text, passed before the arguments on every run.
    """

    def __init__(self, name: str, region: Region, constants: tuple = ()):
        self.name = name
        self.region = region
        self.constants = tuple(constants)
        # the Python functions of its ``debug_callback`` ops, by index (set by lowering)
        self.host_callbacks: tuple = ()

    @property
    def params(self) -> list[Value]:
        return self.region.params

    @property
    def outputs(self) -> list[Value]:
        return self.region.outputs

    def __repr__(self) -> str:
        ins = ", ".join(f"{v.dtype}{list(v.shape)}" for v in self.params)
        outs = ", ".join(f"{v.dtype}{list(v.shape)}" for v in self.outputs)
        return f"Computation({self.name}: ({ins}) -> ({outs}))"
