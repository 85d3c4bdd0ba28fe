"""Automatic differentiation on the builder's graph IR (forward and reverse mode).

`api` holds the transforms users call (``grad``, ``jvp``...; re-exported by `runtime`);
`forward` and `reverse` are the drivers that apply each primitive's ``jvp`` and ``vjp``
rules (`runtime.primitives`); `residuals` splits a loop step's VJP between the forward and
the backward loop.  This package's ``__init__`` imports none of them, so that the
primitive modules can use the drivers without importing the transforms.
"""
