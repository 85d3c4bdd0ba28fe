"""psc-transpiler's public API.

The front end (``jit_ps``, the explicit control-flow primitives, the CLI) is built on the
`runtime` package; what exists today is re-exported here so user code imports one place.
"""
from runtime import (PSCError, PSCNameError, PSCShapeError, PSCSyntaxError,
                     PSCTracedValueError, PSCTypeError, PSCUnsupportedCallError,
                     PSCValueError, register_translation_rule)

__version__ = "0.1.0"

__all__ = [
    "PSCError", "PSCNameError", "PSCShapeError", "PSCSyntaxError", "PSCTracedValueError",
    "PSCTypeError", "PSCUnsupportedCallError", "PSCValueError", "register_translation_rule",
]
