"""Where in the user's source the code being built comes from.

Generated modules carry a ``# file.py:LINE`` comment on every statement.  When a module is
loaded, `register` records, for its (generated) file name, which generated lines belong to
which source location.  While a computation is built, `location_from_stack` finds the
innermost frame running generated code and maps its line back: so every builder op, and
every `PSCError`, points at the user's line without generated code having to say so.
"""
from __future__ import annotations

import sys

from .errors import SourceLocation

_MAPS: dict[str, dict[int, SourceLocation]] = {}


def register(generated_file: str, mapping: dict[int, SourceLocation]) -> None:
    _MAPS[generated_file] = dict(mapping)


def location_from_stack(skip: int = 1) -> SourceLocation | None:
    """The source location of the innermost generated statement now running, if any."""
    frame = sys._getframe(skip)
    while frame is not None:
        mapping = _MAPS.get(frame.f_code.co_filename)
        if mapping is not None:
            found = mapping.get(frame.f_lineno)
            if found is not None:
                return found
        frame = frame.f_back
    return None


def location_from_traceback(tb) -> SourceLocation | None:
    """The innermost generated statement in a traceback (for errors raised outside ops)."""
    found = None
    while tb is not None:
        mapping = _MAPS.get(tb.tb_frame.f_code.co_filename)
        if mapping is not None and tb.tb_lineno in mapping:
            found = mapping[tb.tb_lineno]
        tb = tb.tb_next
    return found


def location_of_code(code) -> SourceLocation | None:
    """The source location of a generated function's first line (its ``def``)."""
    if code is None:
        return None
    mapping = _MAPS.get(code.co_filename)
    return mapping.get(code.co_firstlineno) if mapping else None
