"""The ``debug_callback`` primitive: a Python function called on values while the
compiled program runs (`runtime.debugging.debug_print`).

``debug_callback(*operands, callback=fn)`` calls ``fn(*arrays)`` with the operands as NumPy
arrays, on the host, each time the program reaches it, and gives back an int32 scalar.
It lowers to the custom call jaxlib's CPU client runs Python callbacks with
(``xla_ffi_python_cpu_callback``, the target ``jax.debug.callback`` uses): a side-effecting
custom call whose ``index`` attribute picks the callable from the list the executable was
compiled with (`runtime.client.compile` passes ``Computation.host_callbacks``).

Order: `runtime.check_threading` makes the call take the program's failure code as its
first operand and give it back, so every callback (and check) of the program forms one
chain of data dependences, threaded through loops and branches: XLA cannot reorder them.

Rules: no derivative (under `jvp`/`grad` it is replayed on the primal values: the primal
is printed); under `vmap` it is called once with the batched values.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..primitive import batching_rule, checks, effectful, lowers, nondifferentiable

CPU_TARGET = "xla_ffi_python_cpu_callback"


@checks("debug_callback")
def _check_debug_callback(operands, attrs):
    if not callable(attrs.get("callback")):
        raise TypeError("debug_callback needs a callable callback= attribute")
    return [((), dtypes.int32)]


def host_function(op):
    """The Python function the custom call runs: ``op``'s callback on the operands (less
    the failure code, when `runtime.check_threading` put it first), giving the code back."""
    callback, threaded = op.attrs["callback"], op.attrs.get("threaded", False)

    def run(*arrays):
        code = arrays[0] if threaded else np.int32(0)
        callback(*(arrays[1:] if threaded else arrays))
        return (np.asarray(code, dtype=np.int32),)
    return run


@lowers("debug_callback")
def _lower_debug_callback(p, op):
    index = len(p.host_callbacks)
    p.host_callbacks.append(host_function(op))
    p.generic(op, "custom_call",
              f'call_target_name = "{CPU_TARGET}", api_version = 4 : i32, '
              f"has_side_effect = true, backend_config = {{index = {index} : ui64}}")


nondifferentiable("debug_callback")
effectful("debug_callback")


@batching_rule("debug_callback")
def _batch_debug_callback(b, op, operands, dims):
    return b.emit("debug_callback", operands, **op.attrs), [None]
