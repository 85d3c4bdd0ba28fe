"""The ``check`` primitive: a run-time guard (`runtime.checks`).

``check(failed)`` takes a bool scalar, "this guard failed", and gives it back (one result,
so that the transforms, which key ops by their first result, treat it like any op).  Its
attributes are the guard's ``kind`` and ``message``; its location is the user's line.  It
never reaches StableHLO: `runtime.check_threading` replaces every ``check`` of a finished
computation by the update of the program's failure code.  Under differentiation it is
replayed on the primal values (it has no derivative); under `vmap` it fails when any lane
does.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import PSCInternalError, PSCTypeError
from ..primitive import batching_rule, checks, lowers, nondifferentiable


@checks("check")
def _check_check(operands, attrs):
    (failed,) = operands
    if failed.shape != () or failed.dtype != dtypes.bool_:
        raise PSCTypeError(f"check takes a bool scalar, got {failed.dtype}{list(failed.shape)}")
    return [((), dtypes.bool_)]


@lowers("check")
def _lower_check(p, op):
    raise PSCInternalError("a check operation reached the lowering: run-time checks must "
                           "be threaded out first (runtime.check_threading)", op.location)


nondifferentiable("check")


@batching_rule("check")
def _batch_check(b, op, operands, dims):
    (failed,), (dim,) = operands, dims
    if dim is not None:
        failed = b.reduce(failed, "or", [dim])
    return b.emit("check", [failed], **op.attrs), [None]
