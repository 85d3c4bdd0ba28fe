"""psc-transpiler: plain Python + NumPy functions compiled to XLA.

    from transpiler import jit_ps

    @jit_ps
    def predict(params, inputs):
        for W, b in params:
            inputs = np.tanh(np.dot(inputs, W) + b)
        return inputs
"""
from runtime import (PSCError, PSCFloatingPointError, PSCIndexError, PSCRuntimeError,
                     PSCRuntimeIndexError, PSCZeroDivisionError, PSCNameError, PSCOverflowError,
                     PSCResourceError, PSCShapeError, PSCSyntaxError,
                     PSCTracedValueError, PSCTypeError, PSCUnsupportedCallError,
                     PSCValueError, cond, debug_print, fori_loop, grad, hessian, jacfwd, jacrev, jvp,
                     register_translation_rule, static_range, switch, value_and_grad, vjp,
                     while_loop)

from . import config
from .api import PSCFunction, jit_ps
from .version import __version__

__all__ = [
    "PSCError", "PSCFloatingPointError", "PSCFunction", "PSCIndexError", "PSCRuntimeError",
    "PSCRuntimeIndexError", "PSCZeroDivisionError", "config", "PSCNameError", "PSCOverflowError",
    "PSCResourceError", "PSCShapeError", "PSCSyntaxError",
    "PSCTracedValueError", "PSCTypeError", "PSCUnsupportedCallError", "PSCValueError",
    "__version__", "cond", "debug_print", "fori_loop", "jit_ps", "register_translation_rule",
    "static_range", "switch", "while_loop", "grad", "hessian", "jacfwd", "jacrev", "jvp",
    "value_and_grad", "vjp",
]
