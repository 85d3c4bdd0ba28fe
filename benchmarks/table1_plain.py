"""The plain-Python baseline of Table 1: *the same source* as ours, run without ``jit_ps``.

The example files (``examples/newton_cg.py`` and the three objectives) are read as text,
their ``@jit_ps(...)`` decorators are stripped and their ``numpy``/``transpiler``/
``newton_cg`` imports are replaced, and each is executed into a fresh namespace in which

* ``np`` is ``autograd.numpy`` (a thin wrapper over NumPy that records operations),
* ``grad`` is ``autograd.grad``,
* ``jvp(f, (x,), (v,))`` is autograd's *forward mode* (``make_jvp``) applied to
  ``autograd.grad(f)``: forward-over-reverse Hessian-vector products, as in the benchmark
  definition.

So every ``for``/``if``/``break`` of the algorithm, and the HMM's ``for t in range(1, T)``,
runs as ordinary Python, one NumPy call at a time.
"""
from __future__ import annotations

import ast
import pathlib
import types

import autograd
import autograd.numpy as anp
from autograd.differential_operators import make_jvp

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"

#: How the plain-Python Hessian-vector products are computed (for the report).
HVP_METHOD = ("autograd 1.9 forward-over-reverse: `make_jvp(autograd.grad(f))(x)(v)` "
              "(autograd's forward mode over its reverse mode)")


def jvp(fun, primals, tangents):
    """JAX's ``jvp`` signature on top of autograd's forward mode (one argument only, which
    is all the examples use)."""
    if len(primals) != 1 or len(tangents) != 1:
        raise NotImplementedError("the plain-Python jvp shim handles one argument")
    return make_jvp(fun)(primals[0])(tangents[0])


class _PlainSource(ast.NodeTransformer):
    """Drop ``import numpy``, ``from transpiler import ...`` and ``from newton_cg import``
    (the names are bound in the namespace instead) and ``@jit_ps`` decorators."""

    REPLACED_MODULES = {"numpy", "transpiler", "newton_cg"}

    def visit_Import(self, node):
        kept = [a for a in node.names if a.name not in self.REPLACED_MODULES]
        if not kept:
            return None
        node.names = kept
        return node

    def visit_ImportFrom(self, node):
        if node.module in self.REPLACED_MODULES:
            return None
        return node

    def visit_FunctionDef(self, node):
        node.decorator_list = [d for d in node.decorator_list if not _is_jit_ps(d)]
        self.generic_visit(node)
        return node


def _is_jit_ps(decorator) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ((isinstance(target, ast.Name) and target.id == "jit_ps")
            or (isinstance(target, ast.Attribute) and target.attr == "jit_ps"))


def load(stem: str, **bindings) -> types.SimpleNamespace:
    """Execute ``examples/<stem>.py`` as plain Python + autograd; returns its namespace."""
    path = EXAMPLES / f"{stem}.py"
    tree = _PlainSource().visit(ast.parse(path.read_text(), filename=str(path)))
    ast.fix_missing_locations(tree)
    namespace = {"__name__": f"plain_{stem}", "__file__": str(path),
                 "np": anp, "grad": autograd.grad, "jvp": jvp, **bindings}
    exec(compile(tree, str(path), "exec"), namespace)
    return types.SimpleNamespace(**namespace)


def load_all() -> dict[str, types.SimpleNamespace]:
    """The solver and the three objectives' modules, as plain Python."""
    solver = load("newton_cg")
    return {
        "newton_cg": solver,
        "quadratic": load("quadratic", newton_cg=solver.newton_cg),
        "logistic": load("logistic_regression", newton_cg=solver.newton_cg),
        "hmm": load("hmm", newton_cg=solver.newton_cg),
    }
