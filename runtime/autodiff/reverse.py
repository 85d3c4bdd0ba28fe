"""Reverse mode: the VJP of a traced region, emitted into a builder.

`forward_pass` replays the region's ops on primal values (`replay`, keeping every
intermediate), then `backward_pass` walks the ops backwards from the output cotangents,
accumulating each operand's cotangent with the op's ``vjp`` rule (`runtime.primitive`).  Cotangents are
ordinary builder values, so the backward program can itself be differentiated again.
"""
from __future__ import annotations

from ..errors import PSCUnsupportedCallError
from ..primitive import lookup
from .tangents import is_float
from .trace import replay


def forward_pass(b, region, primals, save_loops=False):
    """Replay ``region`` on ``primals``: a map from each region value to its value in b.

    With ``save_loops`` (a backward pass from the region's outputs follows), each op
    with a ``save_for_vjp`` rule (a loop) that the backward pass will differentiate is
    replayed by that rule, which also saves what its VJP needs (a loop's per-iteration
    residuals); what it saved is kept in the map under the op."""
    saving = saving_ops(region) if save_loops else ()
    env = dict(zip(region.params, primals))
    for outer, inner in region.captures.items():
        env.setdefault(inner, outer)
    for op in region.operations:
        operands = [env[v] for v in op.operands]
        if op in saving:
            results, env[op] = lookup(op.name).save_for_vjp(b, op, operands)
        else:
            results = replay(b, op, operands)
        env.update(zip(op.results, results))
    return env


def saving_ops(region) -> set:
    """The ops of ``region`` with a ``save_for_vjp`` rule that a backward pass from its
    float outputs reaches (walking back as `backward_pass` does).  Only those are worth
    saving, and a loop off the gradient's path must not be: its body may have no VJP."""
    with_ct = {v for v in region.outputs if is_float(v)}
    ops = set()
    for op in reversed(region.operations):
        rule = lookup(op.name)
        if rule.nondifferentiable or not any(v in with_ct for v in op.results):
            continue
        if rule.save_for_vjp is not None:
            ops.add(op)
        with_ct.update(v for v in op.operands if is_float(v))
    return ops


def backward_pass(b, region, env, output_cotangents):
    """Cotangents of ``region``'s parameters (None for no dependence or integers)."""
    cts: dict = {}
    for value, ct in zip(region.outputs, output_cotangents):
        if ct is not None and is_float(value):
            _accumulate(b, cts, value, ct)
    for op in reversed(region.operations):
        out_cts = [cts.get(v) for v in op.results]
        rule = lookup(op.name)
        if all(ct is None for ct in out_cts) or rule.nondifferentiable:
            continue
        primals = [env[v] for v in op.operands]
        results = [env[v] for v in op.results]
        if rule.vjp is None:
            raise b.error(PSCUnsupportedCallError, f"reverse-mode differentiation of "
                          f"{op.name} is not supported")
        saved = {"saved": env.get(op)} if rule.save_for_vjp is not None else {}
        operand_cts = rule.vjp(b, op, primals, results, out_cts, **saved)
        for value, ct in zip(op.operands, operand_cts):
            if ct is not None and is_float(value):
                _accumulate(b, cts, value, ct)
    return [cts.get(p) for p in region.params], {outer: cts.get(inner) for outer, inner in
                                                region.captures.items()}


def _accumulate(b, cts, value, ct):
    if ct.dtype != value.dtype:
        ct = b.convert(ct, value.dtype)
    cts[value] = ct if value not in cts else b.add(cts[value], ct)
