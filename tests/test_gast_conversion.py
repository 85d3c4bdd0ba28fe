"""`transpiler.gast_conversion` builds the tree `gast.ast_to_gast` builds (the oracle):
the same node classes, the same fields and positions, the same values, over many files."""
import ast
import glob
import os
import sysconfig

import gast
import pytest

from transpiler.gast_conversion import parse, to_gast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB = sysconfig.get_paths()["stdlib"]
FILES = sorted(glob.glob(os.path.join(ROOT, "**", "*.py"), recursive=True)) + \
    sorted(glob.glob(os.path.join(_STDLIB, "*.py")))[:150]


def assert_same_tree(expected, actual, path="module"):
    assert type(actual) is type(expected), path
    if isinstance(expected, ast.AST):
        assert actual is not expected, path
        assert set(actual.__dict__) == set(expected.__dict__), path
        for field, value in expected.__dict__.items():
            assert_same_tree(value, actual.__dict__[field], f"{path}.{field}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), path
        for index, (e, a) in enumerate(zip(expected, actual)):
            assert_same_tree(e, a, f"{path}[{index}]")
    elif expected == expected:   # not a NaN constant
        assert actual == expected, path


def _trees(paths):
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        try:
            yield path, text, ast.parse(text)
        except SyntaxError:
            continue


def test_many_files_convert_as_gast_converts_them():
    converted = 0
    for path, _, tree in _trees(FILES):
        assert_same_tree(gast.ast_to_gast(tree), to_gast(tree), path)
        converted += 1
    assert converted > 100


@pytest.mark.parametrize("text", [
    "def f(a, /, b: int = 1, *args, c, d=2, **kw) -> None:\n    return a\n",
    "try:\n    x = 1\nexcept ValueError as err:\n    y = err\nexcept Exception:\n    pass\n",
    "class C(B, metaclass=M):\n    x: int = 3\n",
    "async def g():\n    async with a as b:\n        await b\n",
    "lambda x, *, y=1: [z for z in x if z > y]\n",
    "match p:\n    case [1, *rest] | {'k': v, **more}:\n        pass\n",
    "f'{x!r:>{width}}'\nx = (yield)\nglobal q\n",
    "a[1:2, ..., None] = b @ c; del d\n",
])
def test_special_cases_convert_as_gast_converts_them(text):
    assert_same_tree(gast.parse(text), parse(text))


def test_context_nodes_are_not_shared():
    """gast gives each name its own context object (the stdlib parser shares one)."""
    tree = parse("x = y + z\n")
    contexts = [n.ctx for n in gast.walk(tree) if isinstance(n, gast.Name)]
    assert len({id(c) for c in contexts}) == len(contexts) == 3


def test_a_function_parsed_with_its_file_converts_as_its_own_text_parses():
    """`FunctionSource.parse` converts the function's node from its file's parse, its
    lines renumbered from the function's first line: as if its text had been parsed."""
    checked = 0
    for path, text, tree in _trees(FILES[:60]):
        lines = text.splitlines(keepends=True)
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or node.col_offset:
                continue
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            own_text = "".join(lines[first - 1:node.end_lineno])
            assert_same_tree(gast.parse(own_text).body[0], to_gast(node, first - 1),
                             f"{path}:{node.name}")
            checked += 1
    assert checked > 20


def test_fix_missing_locations_fills_what_gasts_fills():
    """`analysis.walk.fix_missing_locations` against `gast.fix_missing_locations` (the
    oracle) on trees with positions removed here and there, as rules leave them."""
    import copy

    from transpiler.analysis.walk import fix_missing_locations
    keys = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    for path, text, _ in _trees(FILES[:40]):
        tree = parse(text)
        for index, node in enumerate(gast.walk(tree)):
            if index % 3 == 0:
                for key in keys:
                    node.__dict__.pop(key, None)
            if index % 7 == 0 and "end_lineno" in node._attributes:
                node.end_lineno = None
        expected, actual = copy.deepcopy(tree), copy.deepcopy(tree)
        gast.fix_missing_locations(expected)
        fix_missing_locations(actual)
        positions = [[(k, n.__dict__.get(k, "absent")) for k in keys]
                     for n in gast.walk(expected)]
        assert positions == [[(k, n.__dict__.get(k, "absent")) for k in keys]
                             for n in gast.walk(actual)], path
