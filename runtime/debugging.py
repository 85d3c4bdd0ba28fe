"""`debug_print`: print values from inside compiled code, as ``jax.debug.print``.

    @jit_ps
    def f(x):
        for i in range(3):
            x = x * 2
            debug_print("step {i}: x = {x}", i=i, x=x)
        return x

``fmt`` is formatted with ``str.format`` each time the program reaches the call, with the
arguments' run-time values (NumPy arrays; static arguments as they were), and printed to
standard output in program order, from inside loops and branches.  It is a
``debug_callback`` op (`runtime.primitives.callbacks`), a host callback jaxlib runs on
the CPU backend.  Called outside a build (plain Python) it just prints.  Under `grad`
and `jvp` it prints the primal values; under batching, the batched ones.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from .context import current_builder, has_builder
from .errors import PSCTypeError, PSCValueError
from .ir import Value


def debug_print(fmt: str, *args, **kwargs) -> None:
    """Print ``fmt.format(*args, **kwargs)`` when the compiled program runs (see the
    module docstring)."""
    if not isinstance(fmt, str):
        raise PSCTypeError(f"debug_print takes a format string first, got "
                           f"{type(fmt).__name__}", hint='debug_print("x = {}", x)')
    if not has_builder():
        print(fmt.format(*args, **kwargs), flush=True)
        return
    b = current_builder()
    leaves, treedef = tree_util.tree_flatten((args, kwargs))
    traced = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Value)]

    def format_with(arrays) -> str:
        filled = list(leaves)
        for i, array in zip(traced, arrays):
            filled[i] = array
        call_args, call_kwargs = tree_util.tree_unflatten(treedef, filled)
        return fmt.format(*call_args, **call_kwargs)

    try:   # a format that cannot work fails now, at the line, not inside the run
        format_with([np.zeros(leaves[i].shape, leaves[i].dtype) for i in traced])
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as err:
        raise b.error(PSCValueError, f"debug_print format {fmt!r} does not fit its "
                      f"arguments: {type(err).__name__}: {err}",
                      "the format follows str.format: {} or {0} for positional "
                      "arguments, {name} for keyword arguments") from None

    def callback(*arrays):
        print(format_with(arrays), flush=True)

    b.emit("debug_callback", [leaves[i] for i in traced], callback=callback)


debug_print.__psc_primitive__ = True   # called from PSC code as it is, never transpiled
