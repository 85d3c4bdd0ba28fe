"""The generated module's imports: the source module's, restricted to the names the PSC
functions use, with NumPy bound to the runtime's NumPy mirror.

``import numpy as np`` becomes ``import runtime.numpy_api as np``: the generated code keeps
writing ``np.tanh(x)``, and the mirror builds XLA ops when ``x`` is traced.
"""
from __future__ import annotations

import gast

from runtime.public_names import DECORATOR, RUNTIME_EQUIVALENTS

_RENAMED_MODULES = {"numpy": "runtime.numpy_api", "numpy.linalg": "runtime.numpy_api.linalg",
                    **RUNTIME_EQUIVALENTS}
_DROPPED = {DECORATOR}   # the decorator itself: the generated code never calls it


def _bound_name(alias: gast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _rewrite(node, used: set[str]):
    if isinstance(node, gast.Import):
        aliases = [a for a in node.names if _bound_name(a) in used]
        renamed = []
        mirrored = []
        for alias in aliases:
            target = _RENAMED_MODULES.get(alias.name)
            if target is not None:
                renamed.append(gast.alias(target, _bound_name(alias)))
            elif alias.name.startswith("numpy.") and alias.asname:
                # `import numpy.fft as F`: the mirror's submodule of that name
                parent, _, leaf = alias.name.rpartition(".")
                mirrored.append(gast.ImportFrom(
                    _RENAMED_MODULES.get(parent, "runtime.numpy_api"),
                    [gast.alias(leaf, alias.asname)], 0))
            else:
                renamed.append(gast.alias(alias.name, alias.asname))
        if mirrored:
            return ([gast.Import(renamed)] if renamed else []) + mirrored
        return gast.Import(renamed) if renamed else None
    if isinstance(node, gast.ImportFrom) and node.module and not node.level:
        aliases = [gast.alias(a.name, a.asname) for a in node.names
                   if (a.asname or a.name) in used and a.name not in _DROPPED]
        if not aliases:
            return None
        module = _RENAMED_MODULES.get(node.module, node.module)
        if module.startswith("numpy."):   # from numpy.fft import fft
            module = "runtime.numpy_api." + module[len("numpy."):]
            if module not in ("runtime.numpy_api.linalg", "runtime.numpy_api.fft"):
                parent, _, leaf = module.rpartition(".")
                return [gast.ImportFrom(parent, [gast.alias(leaf, "_psc_" + leaf)], 0)] + \
                    [gast.Assign([gast.Name(a.asname or a.name, gast.Store(), None, None)],
                                 gast.Attribute(gast.Name("_psc_" + leaf, gast.Load(), None,
                                                          None), a.name, gast.Load()), None)
                     for a in aliases]
        return gast.ImportFrom(module, aliases, 0)
    return None


def function_import(node) -> list:
    """A function-local import (``import numpy as np`` inside the function) as the build
    function writes it: NumPy bound to the mirror, as for module-level imports, so traced
    values still work; the decorator is dropped (an import left empty becomes nothing)."""
    if isinstance(node, gast.Import):
        used = {_bound_name(alias) for alias in node.names}
    else:
        used = {alias.asname or alias.name for alias in node.names}
    rewritten = _rewrite(node, used)
    if rewritten is None:
        return []
    return rewritten if isinstance(rewritten, list) else [rewritten]


def module_imports(module_ast: gast.Module | None, used: set[str]) -> list:
    """Rewritten top-level imports of ``module_ast`` that bind a name in ``used``."""
    if module_ast is None:
        return []
    result = []
    for node in module_ast.body:
        rewritten = _rewrite(node, used)
        if isinstance(rewritten, list):
            result.extend(rewritten)
        elif rewritten is not None:
            result.append(rewritten)
    return result
