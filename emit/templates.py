"""Code templates: Python source with placeholders, parsed once and copied on use.

(The header's text templates are part of the file format: `emit.fileformat`.)
"""
from __future__ import annotations

import copy
import functools

import gast

RUNTIME_IMPORT = "import runtime as __alias__"


@functools.lru_cache(maxsize=None)
def _parsed(template: str) -> gast.Module:
    return gast.parse(template)


def statements(template: str, **names) -> list:
    """Fresh copies of the statements of ``template`` with ``$name`` placeholders filled.

    Placeholders are identifiers, replaced node by node (never by text substitution), so a
    value can never change the template's structure.
    """
    module = copy.deepcopy(_parsed(template))
    for node in gast.walk(module):
        for field in ("id", "name", "asname", "attr"):
            value = getattr(node, field, None)
            if isinstance(value, str) and value.startswith("__") and value.endswith("__") \
                    and value[2:-2] in names:
                setattr(node, field, names[value[2:-2]])
    return module.body
