"""`demo`: one rewrite rule run on a snippet, for the doctests of `transpiler.rules`.

It needs the whole front end (`transpiler.pipeline`, which imports every rule), so the
rules never import it: each rule's doctest does (``>>> from transpiler.doctest_helpers
import demo``), which keeps the dependency one way, from this module down to the rules.
"""
from __future__ import annotations

import textwrap

import gast

from .pipeline import analyze
from .rules.base import RuleContext
from .source import FunctionSource


def demo(rule_class, code: str, static_argnames=()) -> str:
    """Run one rule on ``code`` (after ``import numpy as np``) and print the result.

    The analyses run as in the pipeline, then only ``rule_class`` rewrites.
    """
    header = "import numpy as np\n"
    text = textwrap.dedent(code).strip() + "\n"
    source = FunctionSource("demo.py", 1, text, 0)
    module = gast.parse(header + text)
    function = source.parse()
    analyze(source, function, module_ast=module, module_name="demo",
            static_argnames=static_argnames)
    rule_class(RuleContext(source)).visit(function)
    return gast.unparse(gast.fix_missing_locations(function)).strip()
