"""psc-transpiler: plain Python + NumPy functions compiled to XLA.

    from transpiler import jit_ps

    @jit_ps
    def predict(params, inputs):
        for W, b in params:
            inputs = np.tanh(np.dot(inputs, W) + b)
        return inputs
"""
from runtime import (PSCAttributeError, PSCError, PSCFloatingPointError, PSCIndexError,
                     PSCKeyError, PSCNameError, PSCOverflowError, PSCResourceError,
                     PSCRuntimeError, PSCRuntimeIndexError, PSCRuntimeZeroDivisionError,
                     PSCShapeError, PSCSyntaxError, PSCTracedValueError, PSCTypeError,
                     PSCUnsupportedCallError, PSCValueError, PSCWarning, PSCZeroDivisionError,
                     cond, debug_print, fori_loop, grad, hessian, jacfwd, jacrev, jvp,
                     register_translation_rule, static_range, switch, value_and_grad, vjp,
                     while_loop)

from . import config
from .api import PSCFunction, jit_ps
from .version import __version__

__all__ = [
    "PSCAttributeError", "PSCError", "PSCFloatingPointError", "PSCFunction", "PSCIndexError",
    "PSCKeyError", "PSCNameError", "PSCOverflowError", "PSCResourceError", "PSCRuntimeError",
    "PSCRuntimeIndexError", "PSCRuntimeZeroDivisionError",
    "PSCShapeError", "PSCSyntaxError", "PSCTracedValueError", "PSCTypeError",
    "PSCUnsupportedCallError", "PSCValueError", "PSCWarning", "PSCZeroDivisionError",
    "__version__", "cond", "config", "debug_print", "fori_loop", "grad", "hessian", "jacfwd",
    "jacrev", "jit_ps", "jvp", "register_translation_rule", "static_range", "switch",
    "value_and_grad", "vjp", "while_loop",
]
