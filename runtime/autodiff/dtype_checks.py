"""The dtype checks of the differentiation transforms, as JAX makes them (``jax._src.api``'s
``_check_input_dtype_revderiv`` and friends), with the same messages in substance.

Reverse mode (``grad``, ``jacrev``) takes real or complex inputs (integers and bools with
``allow_int``) and real outputs; forward mode (``jacfwd``) takes real inputs.  With
``holomorphic=True`` both take complex inputs and outputs only.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCTypeError

# JAX's float0: the dtype of the gradient of an integer input (a NumPy void dtype, equal to
# ``jax.dtypes.float0``); spelled out so the product path does not import jax's dtypes.
FLOAT0 = np.dtype([("float0", "V")])


def _is_integral(dtype) -> bool:
    return np.issubdtype(dtype, np.integer) or np.dtype(dtype) == np.bool_


def check_revderiv_input(b, name, holomorphic, allow_int, leaf) -> None:
    """An argument ``grad``/``jacrev`` differentiates with respect to."""
    if holomorphic and not dtypes.is_complex(leaf.dtype):
        raise b.error(PSCTypeError, f"{name} with holomorphic=True requires inputs with "
                      f"complex dtype, but got {leaf.dtype.name}.")
    if _is_integral(leaf.dtype):
        if not allow_int:
            raise b.error(PSCTypeError, f"{name} requires real- or complex-valued inputs "
                          "(input dtype that is a sub-dtype of np.inexact), but got "
                          f"{leaf.dtype.name}. If you want to use Boolean- or integer-valued "
                          "inputs, use vjp or set allow_int to True.",
                          "convert integer inputs with astype, or pass allow_int=True")
    elif not dtypes.is_inexact(leaf.dtype):
        raise b.error(PSCTypeError, f"{name} requires numerical-valued inputs (input dtype "
                      "that is a sub-dtype of np.bool_ or np.number), but got "
                      f"{leaf.dtype.name}.")


def check_revderiv_output(b, name, holomorphic, leaf) -> None:
    """An output of a function ``grad``/``jacrev`` differentiates."""
    if holomorphic:
        if not dtypes.is_complex(leaf.dtype):
            raise b.error(PSCTypeError, f"{name} with holomorphic=True requires outputs with "
                          f"complex dtype, but got {leaf.dtype.name}.")
    elif dtypes.is_complex(leaf.dtype):
        raise b.error(PSCTypeError, f"{name} requires real-valued outputs (output dtype that "
                      f"is a sub-dtype of np.floating), but got {leaf.dtype.name}. For "
                      "holomorphic differentiation, pass holomorphic=True. For "
                      "differentiation of non-holomorphic functions involving complex "
                      "outputs, use vjp directly.")
    elif not dtypes.is_inexact(leaf.dtype):
        raise b.error(PSCTypeError, f"{name} requires real-valued outputs (output dtype that "
                      f"is a sub-dtype of np.floating), but got {leaf.dtype.name}. For "
                      "differentiation of functions with integer outputs, use vjp directly.")


def check_jacfwd_input(b, holomorphic, leaf) -> None:
    """An argument ``jacfwd`` differentiates with respect to."""
    if holomorphic:
        if not dtypes.is_complex(leaf.dtype):
            raise b.error(PSCTypeError, "jacfwd with holomorphic=True requires inputs with "
                          f"complex dtype, but got {leaf.dtype.name}.")
    elif not dtypes.is_inexact(leaf.dtype) or dtypes.is_complex(leaf.dtype):
        raise b.error(PSCTypeError, "jacfwd requires real-valued inputs (input dtype that is "
                      f"a sub-dtype of np.floating), but got {leaf.dtype.name}. For "
                      "holomorphic differentiation, pass holomorphic=True. For "
                      "differentiation of non-holomorphic functions involving complex "
                      "inputs or integer inputs, use jvp directly.")


def check_jacfwd_output(b, holomorphic, leaf) -> None:
    """An output of a function ``jacfwd`` differentiates."""
    if holomorphic and not dtypes.is_complex(leaf.dtype):
        raise b.error(PSCTypeError, "jacfwd with holomorphic=True requires outputs with "
                      f"complex dtype, but got {leaf.dtype.name}.")


def is_integral(leaf) -> bool:
    """Whether ``leaf`` is an integer or bool array (its gradient is float0 zeros)."""
    return _is_integral(leaf.dtype)
