"""What every rewrite rule shares: its context, node helpers, and `demo` for doctests."""
from __future__ import annotations

import dataclasses
import textwrap

import gast



@dataclasses.dataclass
class RuleContext:
    source: object              # transpiler.source.FunctionSource
    runtime_alias: str = "psc"  # how generated code names the runtime package
    builder_name: str = "b"     # the build function's builder parameter
    # Set by the exit lowerings: the flag of a lowered `return` and every variable they
    # introduced (flags, the result), which Conditionals keeps live after a return.
    return_flag: str | None = None
    exit_variables: set = dataclasses.field(default_factory=set)


class Rule(gast.NodeTransformer):
    """A rewrite rule: a NodeTransformer that reads annotations and keeps origins.

    ``self.function`` is the top-level function being rewritten (the first FunctionDef
    visited); rules that override ``visit_FunctionDef`` call `enter_function` first.

    ``rewrites``: node types at least one of which a function must contain for the rule to
    change anything (or raise); the pipeline skips the rule for a function with none of
    them (`transpiler.pipeline.run_rules`).  None: the rule always runs.  Over-approximate:
    a type missing here makes the pipeline skip a rule that had work to do.
    ``reads_liveness``: whether the rule reads `Anno.LIVE_IN`/`LIVE_OUT`/`DEFINED_IN`.
    """

    rewrites: frozenset | None = None
    reads_liveness: bool = False

    def __init__(self, context: RuleContext):
        self.context = context
        self.function = None

    def enter_function(self, node) -> None:
        if self.function is None:
            self.function = node

    def visit_FunctionDef(self, node):
        self.enter_function(node)
        self.generic_visit(node)
        return node

    def runtime(self, attr: str) -> gast.Attribute:
        """``psc.<attr>`` as a load expression."""
        return gast.Attribute(gast.Name(self.context.runtime_alias, gast.Load(), None, None),
                              attr, gast.Load())

    @staticmethod
    def keep_origin(new, old):
        """Give ``new`` the position (and origin annotation) of the node it replaces."""
        from .flags import with_origin
        return with_origin(new, old)


def demo(rule_class, code: str, static_argnames=()) -> str:
    """Run one rule on ``code`` (after ``import numpy as np``) and print the result.

    For the doctests in each rule's docstring: the analyses run as in the pipeline, then
    only ``rule_class`` rewrites.
    """
    from ..pipeline import analyze
    from ..source import FunctionSource
    header = "import numpy as np\n"
    text = textwrap.dedent(code).strip() + "\n"
    source = FunctionSource("demo.py", 1, text, 0)
    module = gast.parse(header + text)
    function = source.parse()
    analyze(source, function, module_ast=module, module_name="demo",
            static_argnames=static_argnames)
    rule_class(RuleContext(source)).visit(function)
    return gast.unparse(gast.fix_missing_locations(function)).strip()
