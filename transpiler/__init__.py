"""psc-transpiler: plain Python + NumPy functions compiled to XLA.

    from transpiler import jit_ps

    @jit_ps
    def predict(params, inputs):
        for W, b in params:
            inputs = np.tanh(np.dot(inputs, W) + b)
        return inputs
"""
from runtime import (PSCError, PSCImpureCallError, PSCIndexError, PSCNameError, PSCOverflowError,
                     PSCResourceError, PSCShapeError, PSCSyntaxError,
                     PSCTracedValueError, PSCTypeError, PSCUnsupportedCallError,
                     PSCValueError, cond, fori_loop, grad, hessian, jacfwd, jacrev, jvp, pure,
                     register_translation_rule, static_range, switch, value_and_grad, vjp,
                     while_loop)

from .api import PSCFunction, jit_ps
from .version import __version__

__all__ = [
    "PSCError", "PSCFunction", "PSCImpureCallError", "PSCIndexError", "PSCNameError", "PSCOverflowError",
    "PSCResourceError", "PSCShapeError", "PSCSyntaxError",
    "PSCTracedValueError", "PSCTypeError", "PSCUnsupportedCallError", "PSCValueError",
    "__version__", "cond", "fori_loop", "jit_ps", "register_translation_rule",
    "static_range", "switch", "while_loop", "grad", "hessian", "jacfwd", "jacrev", "jvp",
    "pure", "value_and_grad", "vjp",
]
