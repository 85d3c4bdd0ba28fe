"""The emitter: rewritten functions -> a readable, deterministic Python module.

`emit.module.emit_module` prints; `emit.sourcemap.line_map` reads the ``# file.py:LINE``
comments back, so that errors and HLO metadata point at the user's source.
"""
from .module import emit_module
from .sourcemap import line_map

__all__ = ["emit_module", "line_map"]
