"""``sharding_constraint``: ``with_sharding_constraint``'s primitive (`runtime.spmd`).

The identity on values; to XLA's SPMD partitioner a constraint that the operand be laid
out as the ``sharding`` attribute (a ``NamedSharding``) says.  Lowered as jax lowers it:
``sdy.sharding_constraint`` under Shardy, else the ``@Sharding`` custom call with an
``mhlo.sharding`` attribute.  Linear, so its tangent and cotangent are constrained the
same way (as in jax); batched, the new dimension is left unpartitioned.
"""
from __future__ import annotations

from jax.sharding import NamedSharding, PartitionSpec

from ..errors import PSCValueError
from ..lowering import location, value_type
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from ..spmd import check_fits

_HINT = ("give the function in_shardings/out_shardings on the constraint's mesh, so that "
         "its program is partitioned over it")


@checks("sharding_constraint")
def _check_sharding_constraint(operands, attrs):
    (x,) = operands
    check_fits(attrs["sharding"], x.shape, "with_sharding_constraint")
    return [(x.shape, x.dtype)]


@lowers("sharding_constraint")
def _lower_sharding_constraint(p, op):
    sharding = op.attrs["sharding"]
    (x,) = op.operands
    if p.spmd is None or p.spmd.mesh != sharding.mesh:
        if p.spmd is None and sharding.mesh.size == 1:   # one device: nothing to partition
            p.names[op.results[0]] = p.name(x)
            return
        where = "a program on one device" if p.spmd is None else \
            f"a program over mesh {dict(p.spmd.mesh.shape)}"
        raise PSCValueError(f"with_sharding_constraint over mesh {dict(sharding.mesh.shape)}"
                            f" in {where}", op.location, hint=_HINT)
    text = p.spmd.sharding_text(sharding, len(x.shape))
    t = value_type(x)
    if p.spmd.shardy:
        p.generic(op, "sharding_constraint", f"sharding = {text}", dialect="sdy")
    else:
        lhs = p.bind_results(op)
        p.emit(f'{lhs} = "stablehlo.custom_call"({p.name(x)}) {{call_target_name = '
               f'"Sharding", backend_config = "", mhlo.sharding = {text}}} : ({t}) -> {t} '
               f'{location(op)}')


def _constrained(b, op, v):
    return None if v is None else b.emit("sharding_constraint", [v], **op.attrs)[0]


@jvp_rule("sharding_constraint")
def _jvp_sharding_constraint(b, op, primals, tangents):
    return [_constrained(b, op, primals[0])], [_constrained(b, op, tangents[0])]


@vjp_rule("sharding_constraint")
def _vjp_sharding_constraint(b, op, primals, results, cts):
    return [_constrained(b, op, cts[0])]


@batching_rule("sharding_constraint")
def _batch_sharding_constraint(b, op, operands, dims):
    (x,), (dim,) = operands, dims
    sharding = op.attrs["sharding"]
    if dim is not None:
        spec = list(sharding.spec) + [None] * (len(x.shape) - 1 - len(sharding.spec))
        spec.insert(dim, None)
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return b.emit("sharding_constraint", [x], sharding=sharding), [dim]
