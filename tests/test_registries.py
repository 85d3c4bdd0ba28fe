"""Every primitive has its rules: op definitions <-> lowerings <-> builder methods, and
every translation rule name denotes a real object (so the CLI can resolve it statically)."""
from __future__ import annotations

import numpy as np

import runtime
from runtime.builder import Builder, _BINARY_METHODS, _UNARY_METHODS
from runtime.lowering import LOWERINGS
from runtime.ops import BINARY_OPS, OP_DEFS, UNARY_OPS
from runtime.translation import _resolve_object


def test_every_op_definition_has_a_lowering():
    assert set(OP_DEFS) == set(LOWERINGS)


def test_every_elementwise_op_has_a_builder_method():
    assert set(_UNARY_METHODS.values()) == set(UNARY_OPS)
    assert set(_BINARY_METHODS.values()) == set(BINARY_OPS)
    for method in [*_UNARY_METHODS, *_BINARY_METHODS, "eq", "ne", "lt", "le", "gt", "ge"]:
        assert callable(getattr(Builder, method))


def test_every_rule_name_resolves_to_an_object():
    missing = [name for name in runtime.registered_names()
               if _resolve_object(name) is None and hasattr(np, name.split(".")[1])]
    assert not missing


def test_rules_are_found_by_object_and_by_name():
    import operator
    for obj, name in [(np.tanh, "numpy.tanh"), (np.linalg.norm, "numpy.linalg.norm"),
                      (operator.add, "operator.add"), (np.sum, "numpy.sum"),
                      (abs, "builtins.abs")]:
        assert runtime.lookup_rule(obj) is not None, name
        assert runtime.lookup_rule(obj) is runtime.lookup_rule(name)
        assert runtime.qualified_name(obj) == name


def module_level_function(x):
    return -x


def test_registering_a_rule_by_object_serves_its_name_too():
    def rule(b, x):
        return b.neg(x)
    runtime.register_translation_rule(module_level_function, rule)
    assert runtime.lookup_rule(module_level_function) is rule
    assert runtime.lookup_rule(f"{__name__}.module_level_function") is rule
    assert runtime.qualified_name(module_level_function) == f"{__name__}.module_level_function"


def test_untranslatable_call_is_a_clear_error():
    import pytest

    def opaque(x):
        return x
    b = Builder("t")
    x = b.parameter(0, (2,), np.float32)
    with pytest.raises(runtime.PSCUnsupportedCallError, match="no translation rule"):
        runtime.translate(b, opaque, x)


def test_every_primitive_has_differentiation_rules():
    from runtime.autodiff import forward, reverse
    from runtime.autodiff.rules import NONDIFFERENTIABLE, PARTIALS
    forward_rules = set(NONDIFFERENTIABLE) | set(PARTIALS) | set(forward.LINEAR_OPERANDS) | \
        set(forward._RULES)
    reverse_rules = set(NONDIFFERENTIABLE) | set(PARTIALS) | set(reverse._RULES)
    assert set(OP_DEFS) - forward_rules == set()
    assert set(OP_DEFS) - reverse_rules == set()
    # a linear op forward needs a transpose backward
    assert set(forward.LINEAR_OPERANDS) <= set(reverse._RULES)
