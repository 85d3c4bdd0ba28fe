"""Every primitive has its rules (check, lowering, JVP, VJP, batching) and its builder
methods, and every translation rule name denotes a real object (so the CLI can resolve it
statically)."""
from __future__ import annotations

import numpy as np

import runtime
from runtime.builder import Builder
from runtime.primitive import PRIMITIVES, RULE_KINDS, missing_rules
from runtime.primitives.elementwise import BUILDER_METHODS
from runtime.translation import _resolve_object

def test_every_primitive_has_every_rule():
    assert len(PRIMITIVES) > 70   # (the families registered at all)
    assert missing_rules() == {}, "rules missing, by primitive: " + repr(missing_rules())


def test_missing_rules_names_the_primitive_and_the_rule():
    from runtime.primitive import Primitive
    PRIMITIVES["__test_only__"] = Primitive("__test_only__", check=lambda o, a: [])
    try:
        assert missing_rules()["__test_only__"] == [k for k in RULE_KINDS if k != "check"]
    finally:
        del PRIMITIVES["__test_only__"]


def test_every_elementwise_op_has_a_builder_method():
    for method, (name, arity) in BUILDER_METHODS.items():
        assert name in PRIMITIVES
        assert callable(getattr(Builder, method))
    for method in ["eq", "ne", "lt", "le", "gt", "ge"]:
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
