"""What a primitive is: one record per operation name, filled in by its family module.

A primitive of the graph IR (``add``, ``gather``, ``while``...) is known by the rules
attached to it.  Each family module in `runtime.primitives` (``elementwise``, ``shapes``,
``reductions``, ``contractions``, ``indexing``, ``control_flow``, ``guards``,
``callbacks``, ``convolution``...) declares, side by side for each primitive it owns:

=============  ===========================================  ==============================
rule           signature                                    used by
=============  ===========================================  ==============================
``check``      ``(operands, attrs) -> [(shape, dtype)]``    `Builder` (before recording)
``lowering``   ``(printer, op) -> None``                    `runtime.lowering`
``jvp``        ``(b, op, primals, tangents)``               `runtime.autodiff.forward`
               ``-> (results, tangents)``
``vjp``        ``(b, op, primals, results, cotangents)``    `runtime.autodiff.reverse`
               ``-> operand cotangents``
``batching``   ``(b, op, operands, dims)``                  `runtime.batching`
               ``-> (results, result dims)``
=============  ===========================================  ==============================

with the decorators below (``@checks("reshape")``, ``@lowers("reshape")``...), in the style
of JAX's ``jax/_src/lax`` modules.  A tangent or cotangent of ``None`` is a symbolic zero;
a batching dimension of ``None`` marks an operand that is not batched.  A primitive whose
results carry no derivative (comparisons, integer ops) is `nondifferentiable` instead of
having ``jvp``/``vjp``; a primitive whose VJP needs values the forward pass must keep (a
loop's per-iteration residuals) also has ``save_for_vjp``, ``(b, op, operands) ->
(results, saved)``, and its ``vjp`` is called with ``saved=``.  A primitive kept for its
effect (a run-time check, a print) is `effectful`: control flow keeps a region holding
one even when nothing reads its results.

`tests/test_registries.py` checks that every primitive has every rule (`missing_rules`).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from .errors import PSCInternalError

RULE_KINDS = ("check", "lowering", "jvp", "vjp", "batching")


@dataclasses.dataclass(eq=False)
class Primitive:
    """Everything the runtime knows about one operation name (see the module docstring)."""

    name: str
    check: Callable | None = None
    lowering: Callable | None = None
    jvp: Callable | None = None
    vjp: Callable | None = None
    batching: Callable | None = None
    save_for_vjp: Callable | None = None
    nondifferentiable: bool = False
    effectful: bool = False   # kept for what it does (a check, a print), not what it gives

    def has(self, kind: str) -> bool:
        if kind in ("jvp", "vjp") and self.nondifferentiable:
            return True
        return getattr(self, kind) is not None


PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str) -> Primitive:
    """The record of ``name``, created empty on first mention."""
    found = PRIMITIVES.get(name)
    if found is None:
        found = PRIMITIVES[name] = Primitive(name)
    return found


def lookup(name: str) -> Primitive:
    """The record of a primitive the IR names; an unknown name is an internal error (the
    builder only records registered primitives)."""
    found = PRIMITIVES.get(name)
    if found is None:
        raise PSCInternalError(f"no primitive named {name!r} is registered")
    return found


def _registrar(kind: str):
    def decorator_for(*names: str):
        def register(rule):
            for name in names:
                setattr(primitive(name), kind, rule)
            return rule
        return register
    decorator_for.__name__ = kind
    decorator_for.__doc__ = f"Register the decorated function as the ``{kind}`` rule of " \
                            "each primitive in ``names``."
    return decorator_for


checks = _registrar("check")
lowers = _registrar("lowering")
jvp_rule = _registrar("jvp")
vjp_rule = _registrar("vjp")
batching_rule = _registrar("batching")
saves_for_vjp = _registrar("save_for_vjp")


def nondifferentiable(*names: str) -> None:
    """Mark ``names`` as primitives whose results have zero derivative."""
    for name in names:
        primitive(name).nondifferentiable = True


def effectful(*names: str) -> None:
    """Mark ``names`` as primitives with an effect: a region holding one is kept even when
    nothing reads its results (a traced ``if`` whose branches only check or print)."""
    for name in names:
        primitive(name).effectful = True


def missing_rules() -> dict[str, list[str]]:
    """``{primitive: [rule kinds it lacks]}`` over every registered primitive."""
    missing = {}
    for name, record in sorted(PRIMITIVES.items()):
        lacking = [kind for kind in RULE_KINDS if not record.has(kind)]
        if lacking:
            missing[name] = lacking
    return missing
