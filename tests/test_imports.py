"""The project's packages import cleanly and without import cycles.

Two checks:

* every top-level package, every subpackage and every ``runtime`` module imports *alone*,
  in a fresh interpreter (a cycle that happens to work in one import order fails in
  another: ``python -c "import emit"`` once died on a partially initialized module);
* the graph of the project's own imports is acyclic.  It is read from the source with
  `ast`, not from ``sys.modules``, and it holds *every* import statement, top-level and
  function-local alike: a function-local import of a project module is how a cycle gets
  hidden, and the graph of all of them must be acyclic too.  An import of a third-party
  module is not an edge, so an optional dependency may still be imported lazily.

Edges follow what Python runs.  ``import a.b.c`` and ``from a.b.c import x`` run
``a/__init__``, ``a/b/__init__`` and ``a/b/c``, so they are edges to all three, except to
packages the importer lives in (their ``__init__`` is already running when the importer
runs).  ``from a.b import c`` where ``c`` is a submodule is an edge to ``a.b.c`` (and to
``a.b``'s ``__init__`` by the same rule); any other imported name is an edge to ``a.b``.
"""
from __future__ import annotations

import ast
import collections
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import textwrap
from typing import NamedTuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("runtime", "emit", "transpiler")
IMPORT_TIMEOUT_S = 120


# ---------------------------------------------------------------------------------------
# The project's modules


def project_modules() -> dict[str, pathlib.Path]:
    """Dotted module name -> source file, for every .py file of the project's packages."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = project_modules()


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


# ---------------------------------------------------------------------------------------
# Each package and runtime module imports alone


def modules_to_import_alone() -> list[str]:
    """The top-level packages, every subpackage, and every module of ``runtime``."""
    names = [name for name in MODULES if is_package(name) or name.startswith("runtime.")]
    return sorted(names, key=lambda name: (name.count("."), name))


IMPORT_ALONE = modules_to_import_alone()


def import_in_fresh_interpreter(name: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        return subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired as expired:
        return subprocess.CompletedProcess(expired.cmd, -1, "", f"timed out after "
                                           f"{IMPORT_TIMEOUT_S} s: {expired.stderr!r}")


@pytest.fixture(scope="module")
def fresh_imports() -> dict[str, subprocess.CompletedProcess]:
    """Every import of `IMPORT_ALONE`, each in its own interpreter, run a few at a time
    (each one imports jax, which takes a second or two)."""
    workers = max(1, min(4, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return dict(zip(IMPORT_ALONE, pool.map(import_in_fresh_interpreter, IMPORT_ALONE)))


@pytest.mark.parametrize("name", IMPORT_ALONE)
def test_imports_alone_in_a_fresh_interpreter(name, fresh_imports):
    result = fresh_imports[name]
    assert result.returncode == 0, f"python -c 'import {name}' failed:\n{result.stderr}"


def test_every_package_and_runtime_module_is_imported_alone():
    # The list is discovered, not written down: a new module is checked without a test edit.
    for package in PACKAGES:
        assert package in IMPORT_ALONE
    for expected in ("runtime.autodiff", "runtime.numpy_rules", "runtime.numpy_api",
                     "runtime.ir", "runtime.translation", "runtime.array_api"):
        assert expected in IMPORT_ALONE


def test_value_has_its_numpy_operators_when_runtime_ir_is_imported_alone():
    # `runtime.ir` defines `Value` bare; `runtime.array_api` installs its operators and
    # methods, and importing any runtime module runs `runtime/__init__`, which imports it.
    check = textwrap.dedent("""
        import runtime.ir as ir
        for name in ("__add__", "__radd__", "__iadd__", "__getitem__", "__getattr__",
                     "__bool__", "__array_ufunc__", "sum", "T", "itemsize"):
            member = ir.Value.__dict__[name]
            where = getattr(getattr(member, "fget", member), "__module__", "runtime.array_api")
            assert where == "runtime.array_api", name
        assert ir.Value.__hash__ is object.__hash__
        """)
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True,
                            text=True, timeout=IMPORT_TIMEOUT_S,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------------------------------
# The import graph


class Edge(NamedTuple):
    importer: str
    imported: str
    line: int          # where the import statement is, for the failure message


def enclosing_packages(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def containing_package(importer: str) -> str:
    """The package relative imports in ``importer`` start from."""
    return importer if is_package(importer) else importer.rpartition(".")[0]


def absolute_module(importer: str, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` statement reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = containing_package(importer).split(".")
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def project_module_of(name: str) -> str | None:
    """The longest prefix of ``name`` that is a project module, or None (third party)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def with_packages(importer: str, module: str) -> list[str]:
    """``module`` and the packages whose ``__init__`` importing it runs first, less the
    packages ``importer`` is in."""
    inside = set(enclosing_packages(importer)) | ({importer} if is_package(importer) else set())
    return [p for p in enclosing_packages(module) if p not in inside] + [module]


def imported_modules(importer: str, node: ast.stmt) -> list[str]:
    """The project modules one import statement runs (see the module docstring)."""
    found = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            module = project_module_of(alias.name)
            if module is not None:
                found += with_packages(importer, module)
    elif isinstance(node, ast.ImportFrom):
        source = project_module_of(absolute_module(importer, node))
        if source is None:
            return []
        names_the_namespace = False
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            if submodule in MODULES:
                found += with_packages(importer, submodule)
            else:
                names_the_namespace = True
        if names_the_namespace:
            found += with_packages(importer, source)
    return [module for module in dict.fromkeys(found) if module != importer]


def import_edges() -> list[Edge]:
    """Every import of a project module by a project module, wherever the statement is."""
    edges = []
    for importer, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges += [Edge(importer, imported, node.lineno)
                          for imported in imported_modules(importer, node)]
    return edges


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit to meet)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def shortest_path(graph: dict[str, set[str]], start: str, goal: str,
                  allowed: set[str]) -> list[str]:
    """Breadth-first path ``start -> ... -> goal`` through ``allowed`` nodes."""
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = []
            while node is not None:
                path.append(node)
                node = previous[node]
            return path[::-1]
        for successor in sorted(graph[node] & allowed):
            if successor not in previous:
                previous[successor] = node
                queue.append(successor)
    raise AssertionError(f"no path {start} -> {goal} in a strongly connected component")


def cycles_covering_every_edge(graph: dict[str, set[str]],
                               component: list[str]) -> list[list[str]]:
    """Cycles inside ``component`` that together pass through each of its edges (for an
    edge no earlier cycle passed through, the shortest cycle through it), each started at
    its smallest module: every import that closes a loop is named once."""
    members = set(component)
    cycles, covered = [], set()
    for source in component:
        for target in sorted(graph[source] & members):
            if (source, target) in covered:
                continue
            cycle = [source] + shortest_path(graph, target, source, members)[:-1]
            start = cycle.index(min(cycle))
            cycle = cycle[start:] + cycle[:start]
            covered.update(zip(cycle, cycle[1:] + cycle[:1]))
            cycles.append(cycle)
    return sorted(cycles, key=lambda cycle: (len(cycle), cycle))


def describe_cycles(edges: list[Edge]) -> list[str]:
    graph = {module: set() for module in MODULES}
    where = collections.defaultdict(list)
    for edge in edges:
        graph[edge.importer].add(edge.imported)
        where[edge.importer, edge.imported].append(edge.line)
    report = []
    for component in strongly_connected_components(graph):
        if len(component) < 2:
            continue
        for cycle in cycles_covering_every_edge(graph, component):
            path = " -> ".join(cycle + cycle[:1])
            steps = ", ".join(
                f"{MODULES[a].relative_to(ROOT)}:{min(where[a, b])} imports {b}"
                for a, b in zip(cycle, cycle[1:] + cycle[:1]))
            report.append(f"{path}\n    ({steps})")
    return report


def test_the_project_import_graph_is_acyclic():
    cycles = describe_cycles(import_edges())
    if cycles:
        pytest.fail("import cycles (every import counts, function-local ones included):\n"
                    + "\n".join(cycles), pytrace=False)


# ---------------------------------------------------------------------------------------
# The graph reader itself: what it must see and what it must not


def edges_of(importer: str, source: str) -> set[str]:
    tree = ast.parse(source)
    return {module for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for module in imported_modules(importer, node)}


def test_graph_reader_resolves_relative_imports_and_submodules():
    # A name that is a submodule is an edge to the submodule, not to the package.
    assert edges_of("runtime", "from . import numpy_rules") == {"runtime.numpy_rules"}
    assert edges_of("runtime.numpy_rules._core", "from .. import dtypes") == {"runtime.dtypes"}
    # A name in the namespace is an edge to the package's __init__.
    assert edges_of("runtime", "from .autodiff import grad") == {"runtime.autodiff"}
    assert edges_of("runtime.numpy_rules.shapes", "from ._core import lift") == {
        "runtime.numpy_rules._core"}
    # An importer outside a package runs that package's __init__ first.
    assert edges_of("emit.module", "import runtime.ir") == {"runtime", "runtime.ir"}
    assert edges_of("emit.module", "from runtime.numpy_rules import shapes") == {
        "runtime", "runtime.numpy_rules", "runtime.numpy_rules.shapes"}
    # Third-party modules are not edges.
    assert edges_of("runtime.ir", "import numpy as np\nfrom jax import tree_util") == set()


def test_graph_reader_sees_function_local_imports():
    local = "def f():\n    from .translation import translate\n    return translate\n"
    assert edges_of("runtime.array_api", local) == {"runtime.translation"}


def test_graph_reader_reports_a_cycle_as_a_path():
    edges = [Edge("runtime.ir", "runtime.array_api", 21),
             Edge("runtime.array_api", "runtime.translation", 27),
             Edge("runtime.translation", "runtime.ir", 29)]
    (cycle,) = describe_cycles(edges)
    assert cycle.startswith("runtime.array_api -> runtime.translation -> runtime.ir -> "
                            "runtime.array_api\n")
    assert "runtime/array_api.py:27 imports runtime.translation" in cycle
