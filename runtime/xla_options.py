"""The XLA compile options every program starts from, with XLA:CPU's backend options.

XLA:CPU runs a program as a sequence of *thunks*, one per fusion or library call, each
dispatched by its executor: about a microsecond apiece.  A ``while`` loop pays that for
every operation of its body on every iteration, which dominates loops whose iterations are
small (a scalar recurrence, a particle update over a few hundred elements: 118 ns per
inner iteration in ``benchmarks/loops.py``'s particle simulation against Numba's 11).
XLA:CPU can instead compile a whole loop into one function (its "small while loop
hoisting": the loop becomes a call marked ``xla_cpu_small_call``), but only when the loop
accesses fewer than ``xla_cpu_small_while_loop_byte_threshold`` bytes according to XLA's
cost analysis, 1 KiB by default.  `small_loop_bytes` raises it to 8 MiB divided by the
number of cores, between 256 KiB and 4 MiB (4 MiB on the 2-core machine of
``benchmarks/RESULTS.md``, where it was measured): a hoisted loop runs on one thread, so
the more cores the thunk runtime's multi-threaded kernels (partitioned fusions, Eigen's
dots) could use, the smaller the loops worth hoisting; above the threshold an operation's
own work dwarfs its dispatch and loops stay as they are.  ``PSC_SMALL_LOOP_BYTES`` in the
environment overrides the value (``1024``: XLA's own).

The option is one of XLA's *backend extra options*, a ``map<string, string>`` in
``DebugOptions`` that jaxlib's ``CompileOptions`` neither exposes as an attribute nor
accepts in ``env_option_overrides`` (map fields are refused there).  `base_options` sets it
by protobuf's own rule that a serialized message followed by another parses as their merge:
the default options' bytes, then a message holding only that map entry, parsed back with
``CompileOptions.ParseFromString``.  The field numbers are those of XLA's ``xla.proto`` and
``compile_options.proto``; a test checks that the option takes effect.
"""
from __future__ import annotations

import functools
import os

from jaxlib import _jax

SMALL_LOOP_BYTES_PER_MACHINE = 8 << 20   # divided among the cores
SMALL_LOOP_BYTES_RANGE = (256 << 10, 4 << 20)
SMALL_LOOP_OPTION = "xla_cpu_small_while_loop_byte_threshold"

# Field numbers: CompileOptionsProto.executable_build_options,
# ExecutableBuildOptionsProto.debug_options, DebugOptions.xla_backend_extra_options, and
# the key and value of a map entry.
_EXECUTABLE_BUILD_OPTIONS = 3
_DEBUG_OPTIONS = 3
_BACKEND_EXTRA_OPTIONS = 500
_MAP_KEY, _MAP_VALUE = 1, 2


def small_loop_bytes() -> int:
    """The threshold: ``PSC_SMALL_LOOP_BYTES`` if set to a number, else the default."""
    value = os.environ.get("PSC_SMALL_LOOP_BYTES", "").strip()
    return int(value) if value.isdigit() else default_small_loop_bytes()


def default_small_loop_bytes() -> int:
    low, high = SMALL_LOOP_BYTES_RANGE
    return max(low, min(high, SMALL_LOOP_BYTES_PER_MACHINE // (os.cpu_count() or 1)))


def base_options(platform: str) -> _jax.CompileOptions:
    """Fresh compile options for a program on ``platform``: XLA's defaults, plus on CPU
    the backend options of the module docstring."""
    if platform != "cpu":
        return _jax.CompileOptions()
    return _jax.CompileOptions.ParseFromString(_cpu_options_bytes(small_loop_bytes()))


@functools.lru_cache(maxsize=4)
def _cpu_options_bytes(small_loop: int) -> bytes:
    defaults = _jax.CompileOptions().SerializeAsString()
    return defaults + backend_extra_options({SMALL_LOOP_OPTION: str(small_loop)})


def backend_extra_options(options: dict) -> bytes:
    """A serialized ``CompileOptionsProto`` holding only these backend extra options."""
    entries = b"".join(
        _length_delimited(_BACKEND_EXTRA_OPTIONS,
                          _length_delimited(_MAP_KEY, key.encode()) +
                          _length_delimited(_MAP_VALUE, value.encode()))
        for key, value in sorted(options.items()))
    return _length_delimited(_EXECUTABLE_BUILD_OPTIONS,
                             _length_delimited(_DEBUG_OPTIONS, entries))


def _length_delimited(field_number: int, payload: bytes) -> bytes:
    return _varint(field_number << 3 | 2) + _varint(len(payload)) + payload


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
