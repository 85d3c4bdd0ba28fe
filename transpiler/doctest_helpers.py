"""`demo`: one rewrite rule run on a snippet, for the doctests of `transpiler.rules`.

It needs the whole front end (`transpiler.pipeline`, which imports every rule), so the
rules never import it: each rule's doctest does (``>>> from transpiler.doctest_helpers
import demo``), which keeps the dependency one way, from this module down to the rules.
"""
from __future__ import annotations

import textwrap

import gast

from .checks import check_subset
from .analysis.helper_updates import annotate_helper_updates
from .pipeline import _helper_lookup, analyze
from .rules.base import RuleContext
from .source import FunctionSource


def demo(rule_class, code: str, static_argnames=(), checked: bool = False) -> str:
    """Run one rule on ``code`` (after ``import numpy as np``) and print the result.

    The analyses run as in the pipeline (and the subset check, which also annotates,
    when ``checked``), then only ``rule_class`` rewrites.  When ``code`` holds several
    top-level defs, the last is the one shown and the others are helpers it may call.
    """
    header = "import numpy as np\n"
    text = textwrap.dedent(code).strip() + "\n"
    module = gast.parse(header + text)
    lines = text.splitlines(keepends=True)
    defs = [node for node in module.body if isinstance(node, gast.FunctionDef)]
    sources = {node.name: FunctionSource("demo.py", node.lineno - 1,
                                         "".join(lines[node.lineno - 2:node.end_lineno - 1]),
                                         0) for node in defs}
    source = sources[defs[-1].name] if defs else FunctionSource("demo.py", 1, text, 0)
    function = source.parse()
    analyze(source, function, module_ast=module, module_name="demo",
            static_argnames=static_argnames)
    annotate_helper_updates(function, *_helper_lookup(None, module, "demo", sources.get))
    if checked:
        check_subset(source, function, static_argnames)
    rule_class(RuleContext(source)).visit(function)
    return gast.unparse(gast.fix_missing_locations(function)).strip()
