"""Function-local imports stay in the build function, with NumPy bound to its mirror.

``import math`` or ``from math import pi`` inside a PSC function is a static binding: it
runs while the program is built, as Python runs it.  ``import numpy as np`` must bind the
NumPy mirror (`runtime.numpy_api`), as the module-level import of a generated module does,
so that ``np.sin(x)`` on a traced ``x`` builds an op (`emit.imports.function_import`).

>>> from transpiler.doctest_helpers import demo
>>> print(demo(LocalImports, '''
... def f(x):
...     import numpy as np
...     from math import pi
...     from transpiler import grad, jit_ps
...     return np.sin(x) * pi
... '''))
def f(x):
    import runtime.numpy_api as np
    from math import pi
    from runtime import grad
    return np.sin(x) * pi
"""
from __future__ import annotations

import gast

from emit.imports import function_import

from .base import Rule, with_origin


class LocalImports(Rule):
    """``import numpy as np`` in a function -> ``import runtime.numpy_api as np``."""

    rewrites = frozenset({gast.Import, gast.ImportFrom})

    def visit_Import(self, node):
        return [with_origin(statement, node) for statement in function_import(node)]

    visit_ImportFrom = visit_Import
