"""The emitter: rewritten functions -> a readable, deterministic Python module.

`emit.module.emit_module` prints; `emit.fileformat` owns the generated file's format (its
name, its header with the function digests, the ``# file.py:LINE`` comments), each
convention with its writer and its reader.  `emit` imports neither `transpiler` nor
anything that imports it: the front end hands it plain data.
"""
from .fileformat import line_map
from .module import EmittedModule, emit_mapped_module, emit_module

__all__ = ["EmittedModule", "emit_mapped_module", "emit_module", "line_map"]
