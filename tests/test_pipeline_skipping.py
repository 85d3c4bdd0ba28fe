"""The pipeline skips idle work (`transpiler.pipeline.run_rules`) without changing output.

Every top-level function of the corpora is transpiled twice, skipping and running every
step, under several binding-time choices (no static argument, each parameter static in
turn): the rewritten trees, free names and builder names must be identical, and so must a
rejection (a rule that raises must never be skipped).
"""
from __future__ import annotations

import pathlib

import gast
import pytest

import transpiler.pipeline as pipeline
from runtime.errors import PSCError
from transpiler.pipeline import transpile_function
from transpiler.rules import PIPELINE, REANALYZE
from transpiler.source import FunctionSource, module_function_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS_FILES = sorted([
    ROOT / "tests" / "corpus" / "straightline.py",
    ROOT / "tests" / "cf_corpus" / "functions.py",
    ROOT / "tests" / "cf_corpus" / "illegal.py",
    ROOT / "tests" / "ad_corpus" / "functions.py",
    *(ROOT / "tests" / "golden" / "sources").glob("*.py"),
    *(p for p in (ROOT / "examples").glob("*.py") if p.name != "run_all.py"),
])


def _outcome(source, module, static_argnames, skip_idle):
    try:
        result = transpile_function(source, module_ast=module, module_name="corpus",
                                    static_argnames=static_argnames, skip_idle=skip_idle)
    except PSCError as err:
        return "rejected", str(err)
    return gast.dump(result.node), sorted(result.free_names), result.node.args.args[0].id


def _binding_time_choices(node: gast.FunctionDef):
    parameters = [a.id for a in node.args.posonlyargs + node.args.args]
    return [(), *((name,) for name in parameters)]


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_skipping_idle_steps_changes_no_output(path):
    text = path.read_text()
    module = gast.parse(text)
    compared = 0
    for node, source in module_function_sources(str(path), text, module):
        for static in _binding_time_choices(node):
            skipping = _outcome(source, module, static, skip_idle=True)
            assert skipping == _outcome(source, module, static, skip_idle=False), \
                f"{path.name}:{node.name} static={static}"
            compared += 1
    assert compared > 0


def _transpile(code: str):
    text = code.strip() + "\n"
    module = gast.parse("import numpy as np\n" + text)
    return transpile_function(FunctionSource("t.py", 1, text, 0), module_ast=module,
                              module_name="t")


def _steps_run(monkeypatch, code: str) -> list[str]:
    """The pipeline steps that run on ``code``, by name."""
    ran = []
    for rule in (step for step in PIPELINE if step != REANALYZE):
        def init(self, context, _init=rule.__init__, _name=rule.__name__):
            ran.append(_name)   # the pipeline makes one instance per rule it runs
            _init(self, context)
        monkeypatch.setattr(rule, "__init__", init)
    original = pipeline.reanalyze

    def reanalyze(function, liveness=True):
        ran.append("reanalyze" if liveness else "reanalyze scopes")
        original(function, liveness)
    monkeypatch.setattr(pipeline, "reanalyze", reanalyze)
    _transpile(code)
    return ran


def test_straight_line_code_runs_only_the_rules_with_work(monkeypatch):
    ran = _steps_run(monkeypatch, """
def f(x, W):
    h = np.tanh(np.dot(x, W))
    return h + 1.0
""")
    # only NumPy calls: TranspiledCalls has nothing to rewrite (`has_work`), and the tree
    # is as the analyses saw it, so nothing is analyzed again
    assert ran == ["BuildFunction"]


def test_a_call_left_as_written_reanalyzes_nothing(monkeypatch):
    ran = _steps_run(monkeypatch, """
def f(x, W):
    h = np.tanh(np.dot(x, W))
    return h.sum() + 1.0
""")
    # `h.sum()` might be a method of an outside object: TranspiledCalls looks, rewrites
    # nothing (h is a local), and no reanalysis follows
    assert ran == ["TranspiledCalls", "BuildFunction"]


def test_a_rewritten_call_reanalyzes_scopes(monkeypatch):
    ran = _steps_run(monkeypatch, """
def f(x, W):
    h = helper(np.dot(x, W))
    return h + 1.0
""")
    # `helper(...)` became `psc.transpiled(helper)(...)`: scopes again, but no rule after
    # REANALYZE reads liveness
    assert ran == ["TranspiledCalls", "reanalyze scopes", "BuildFunction"]


def test_a_function_no_rule_changes_skips_reanalysis(monkeypatch):
    assert _steps_run(monkeypatch, "def f(x):\n    return x + 1\n") == ["BuildFunction"]


def test_a_lowered_return_reaches_the_later_rules(monkeypatch):
    # ReturnStatements writes `break` and a flag `if`: the rules after it see them
    ran = _steps_run(monkeypatch, """
def f(x):
    for i in range(3):
        if x.sum() > i:
            return x
        x = x * 2.0
    return x
""")
    assert ran == ["TranspiledCalls", "ReturnStatements", "BreakContinue", "reanalyze",
                   "LogicalExpressions", "Loops", "Conditionals", "BuildFunction"]


def test_every_rule_but_the_last_declares_what_it_rewrites():
    rules = [step for step in PIPELINE if step != REANALYZE]
    assert all(rule.rewrites for rule in rules[:-1])
    assert rules[-1].rewrites is None   # BuildFunction always runs


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_rules_declared_writes_cover_the_types_it_adds(monkeypatch, path):
    """`Rule.writes` spares the pipeline a rescan: every node type a pass adds must be in
    it (else a later rule would be skipped for types it thinks absent)."""
    declaring = [step for step in PIPELINE if step != REANALYZE and step.writes is not None]
    assert declaring
    added = {}
    for rule in declaring:
        def visit(self, node, _visit=rule.visit, _rule=rule):
            if self.function is not None or not isinstance(node, gast.FunctionDef):
                return _visit(self, node)
            before = {type(n) for n in gast.walk(node)}
            result = _visit(self, node)
            after = {type(n) for n in gast.walk(result)}
            added.setdefault(_rule, set()).update(after - before)
            return result
        monkeypatch.setattr(rule, "visit", visit)
    text = path.read_text()
    module = gast.parse(text)
    for node, source in module_function_sources(str(path), text, module):
        for static in _binding_time_choices(node):
            _outcome(source, module, static, skip_idle=True)
    for rule, types in added.items():
        assert types <= rule.writes, (rule.__name__, types - rule.writes)
