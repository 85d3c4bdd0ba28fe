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
``convolution``       ``conv_general_dilated``
``windows``           ``reduce_window``, ``reduce_window_region``,
                      ``select_and_gather_add``, ``select_and_scatter_add``
``fft``               ``fft`` (StableHLO's FFT: FFT, IFFT, RFFT, IRFFT)
``custom_derivatives`` ``custom_jvp_call``, ``custom_vjp_call``, ``stop_gradient``
``collectives``      ``psum``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
                      ``ppermute``, ``all_to_all``, ``axis_index``
``sharding``          ``sharding_constraint`` (SPMD: `runtime.spmd`)
====================  ==========================================================

Each module declares, for each of its primitives, the operand check and result type, the
StableHLO lowering, the JVP, the VJP and the batching rule, side by side.
"""
from . import (callbacks, contractions, control_flow, convolution, custom_derivatives,
               elementwise, fft, guards, indexing, linalg, reductions, shapes, windows)

__all__ = ["callbacks", "contractions", "control_flow", "convolution", "custom_derivatives",
           "elementwise", "fft", "guards", "indexing", "linalg", "reductions", "shapes",
           "windows"]
from . import triangular  # noqa: F401,E402  (issue 13: triangular_solve, for scipy.linalg)
from . import svd  # noqa: E402,F401  (issue 13: the SVD family)
from . import decompositions  # noqa: E402,F401  (issue 13: qr, eigh, eig; lu's derivatives)
from . import complex_parts  # noqa: F401,E402  (issue 13: real, imag, complex, conj)
from . import linalg_gpu  # noqa: E402,F401  (GPU lowerings of the linalg family, by platform)
from . import collectives  # noqa: E402,F401  (issue 14: psum & co over pmap/vmap axes)
from . import sharding  # noqa: E402,F401  (issue 14: sharding_constraint, for SPMD programs)
