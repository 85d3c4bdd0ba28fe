"""The ``check`` primitive: a run-time guard (`runtime.checks`).

``check(failed)`` takes a bool scalar, "this guard failed", and gives it back (one result,
so that the transforms, which key ops by their first result, treat it like any op).  Its
attributes are the guard's ``kind`` and ``message``; its location is the user's line.
`runtime.check_threading` replaces every ``check`` of a finished computation by the
update of the program's failure code, so it prints no StableHLO of its own.  Under differentiation it is
replayed on the primal values (it has no derivative); under `vmap` it fails when any lane
does.
"""
from __future__ import annotations

from .. import dtypes
from ..errors import PSCTypeError
from ..primitive import batching_rule, checks, effectful, lowers, nondifferentiable


@checks("check")
def _check_check(operands, attrs):
    (failed,) = operands
    if failed.shape != () or failed.dtype != dtypes.bool_:
        raise PSCTypeError(f"check takes a bool scalar, got {failed.dtype}{list(failed.shape)}")
    return [((), dtypes.bool_)]


@lowers("check")
def _lower_check(p, op):
    # Only reached by a computation compiled without `runtime.check_threading` (built by
    # hand under `runtime.checks.enabled`): the guard then just gives its flag back.
    p.names[op.results[0]] = p.name(op.operands[0])


nondifferentiable("check")
effectful("check")


@batching_rule("check")
def _batch_check(b, op, operands, dims):
    """The guard fails when any lane does; each lane still gets its own flag back."""
    (failed,), (dim,) = operands, dims
    b.emit("check", [b.reduce(failed, "or", [dim])], **op.attrs)
    return [failed], [dim]
