"""The PSC function becomes its build function: ``def build_<name>(b, <parameters>)``.

The builder ``b`` comes first (its name avoids the function's own names: the paper's MLP
calls its biases ``b``); decorators go, since the generated function is called by the
runtime, not by the user.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(BuildFunction, '''
... @jit_ps
... def predict(params, inputs):
...     for W, b in params:
...         inputs = np.tanh(np.dot(inputs, W) + b)
...     return inputs
... '''))
def build_predict(builder, params, inputs):
    for W, b in params:
        inputs = np.tanh(np.dot(inputs, W) + b)
    return inputs
"""
from __future__ import annotations

import gast

from ..analysis.activity import scope_of
from ..analysis.walk import walk
from .base import Rule

BUILDER_NAMES = ("b", "builder", "psc_builder", "psc_builder_")


def builder_name_for(function: gast.FunctionDef) -> str:
    """The first of `BUILDER_NAMES` the function does not use itself."""
    used = scope_of(function).all_names
    for node in walk(function):
        if isinstance(node, gast.Name):
            used.add(node.id)
    return next(name for name in BUILDER_NAMES if name not in used)


class BuildFunction(Rule):
    """Renames the top-level function and prepends the builder parameter."""

    # the parameter takes the function's position (what `fix_missing_locations` gives it)
    positions_its_nodes = True

    def visit_FunctionDef(self, node):
        name = builder_name_for(node)
        self.context.builder_name = name
        node.name = f"build_{node.name}"
        node.decorator_list = []
        # the function's position, as `gast.fix_missing_locations` would give it (not the
        # end: a name's class says it has one)
        parameter = gast.Name(name, gast.Param(), None, None)
        parameter.lineno, parameter.col_offset = node.lineno, node.col_offset
        node.args.args.insert(0, parameter)
        return node   # nested functions are not visited: they stay as written
