"""The primitives of the graph IR, one module per family; importing this package
registers them all (`runtime.primitive` holds the records).

====================  ==========================================================
module                primitives
====================  ==========================================================
``elementwise``       unary and binary arithmetic, ``compare``, ``select``, ``convert``
``shapes``            ``constant``, ``iota``, ``broadcast_in_dim``, ``reshape``,
                      ``transpose``, ``reverse``, ``slice``, ``pad``, ``concatenate``
``reductions``        ``reduce``, ``argmax``, ``argmin``, ``cumulative``, ``sort``
``contractions``      ``dot_general``
``indexing``          ``dynamic_slice``, ``dynamic_update_slice``, ``gather``, ``scatter``
``control_flow``      ``while``, ``case``
``guards``            ``check`` (run-time checks, `runtime.checks`)
``callbacks``         ``debug_callback`` (host callbacks: `runtime.debugging`)
``linalg``            ``solve``, ``cholesky``, ``lu`` (jaxlib's LAPACK kernels on CPU)
``custom_derivatives`` ``custom_jvp_call``, ``custom_vjp_call``, ``stop_gradient``
====================  ==========================================================

Each module declares, for each of its primitives, the operand check and result type, the
StableHLO lowering, the JVP, the VJP and the batching rule, side by side.
"""
from . import (callbacks, contractions, control_flow, elementwise, guards, indexing, linalg,
               reductions, shapes)
from . import custom_derivatives  # issue 12: custom_jvp, custom_vjp, stop_gradient

__all__ = ["callbacks", "contractions", "control_flow", "elementwise", "guards", "indexing",
           "linalg", "reductions", "shapes"]
__all__ += ["custom_derivatives"]
