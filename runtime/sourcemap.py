"""Where in the user's source the code being built comes from.

Generated modules carry a ``# file.py:LINE`` comment on every statement.  When a module is
loaded, `register` records, for its (generated) file name, which generated lines belong to
which source location.  While a computation is built, `location_from_stack` finds the
innermost frame running generated code and maps its line back: so every builder op, and
every `PSCError`, points at the user's line without generated code having to say so.

Columns too: Python 3.11 code objects give each instruction its column range
(``co_positions()``), and a frame's ``f_lasti`` (a traceback's ``tb_lasti``) names the
instruction running.  Generated code keeps the user's expressions word for word (only
its spacing and quotes may differ: it is printed by ``gast.unparse``), so the text of the
running instruction's range is looked for in the source statement, nearest to where the
difference of the two statements' start columns puts it, ignoring spacing and quote
style.  Found, the location spans the culprit sub-expression (``col`` to ``end_col``);
not found (a rewritten statement), it spans the whole statement's first line.  Mapped
locations are cached per code object and instruction: each op asks for one.
"""
from __future__ import annotations

import bisect
import functools
import linecache
import re
import sys

from .errors import SourceLocation


class _GeneratedFile:
    """One registered generated module: its line map, its text, and the column cache."""

    __slots__ = ("lines", "text", "source_lines", "positions", "precise")

    def __init__(self, mapping: dict[int, SourceLocation], text: list[str]):
        self.lines = mapping
        self.text = text
        self.source_lines = sorted({loc.line for loc in mapping.values()})
        self.positions: dict[int, tuple] = {}   # id(code) -> (code, its co_positions())
        self.precise: dict[int, dict[int, SourceLocation]] = {}   # id(code) -> lasti -> loc


_MAPS: dict[str, dict[int, SourceLocation]] = {}
_FILES: dict[str, _GeneratedFile] = {}


def register(generated_file: str, mapping: dict[int, SourceLocation],
             text: str | None = None) -> None:
    """Record ``generated_file``'s line map (and its ``text``, for columns; read from
    ``linecache`` when not given)."""
    if text is None:
        cached = linecache.cache.get(generated_file)
        lines = list(cached[2]) if cached else []
    else:
        lines = text.splitlines()
    _MAPS[generated_file] = dict(mapping)
    _FILES[generated_file] = _GeneratedFile(_MAPS[generated_file],
                                            [line.rstrip("\n") for line in lines])


def is_generated(filename: str) -> bool:
    """Is ``filename`` a registered generated module?"""
    return filename in _MAPS


def location_from_stack(skip: int = 1) -> SourceLocation | None:
    """The source location of the innermost generated statement now running, if any (with
    the column range of the sub-expression running in it)."""
    frame = sys._getframe(skip)
    while frame is not None:
        code = frame.f_code
        entry = _FILES.get(code.co_filename)
        if entry is not None:
            found = _located(entry, code, frame.f_lasti, frame.f_lineno)
            if found is not None:
                return found
        frame = frame.f_back
    return None


def location_from_traceback(tb) -> SourceLocation | None:
    """The innermost generated statement in a traceback (for errors raised outside ops)."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        entry = _FILES.get(code.co_filename)
        if entry is not None:
            found = _located(entry, code, tb.tb_lasti, tb.tb_lineno) or found
        tb = tb.tb_next
    return found


def locations_in_traceback(tb) -> list[SourceLocation]:
    """The source locations of a traceback's generated frames, outermost first (the user's
    view of the call chain: function, the helpers it calls, their loop bodies...)."""
    found = []
    while tb is not None:
        code = tb.tb_frame.f_code
        entry = _FILES.get(code.co_filename)
        if entry is not None:
            location = _located(entry, code, tb.tb_lasti, tb.tb_lineno)
            if location is not None:
                found.append(location)
        tb = tb.tb_next
    return found


def location_of_code(code) -> SourceLocation | None:
    """The source location of a generated function's first line (its ``def``)."""
    if code is None:
        return None
    mapping = _MAPS.get(code.co_filename)
    return mapping.get(code.co_firstlineno) if mapping else None


# --- columns --------------------------------------------------------------------------------

def _located(entry: _GeneratedFile, code, lasti: int, lineno) -> SourceLocation | None:
    """The location of instruction ``lasti`` of ``code`` (on generated line ``lineno``)."""
    by_instruction = entry.precise.get(id(code))
    if by_instruction is None:
        by_instruction = entry.precise[id(code)] = {}
    found = by_instruction.get(lasti)
    if found is None:
        statement = entry.lines.get(lineno)
        if statement is None:
            return None
        found = by_instruction[lasti] = _with_columns(entry, code, lasti, statement)
    return found


def _with_columns(entry: _GeneratedFile, code, lasti: int,
                  statement: SourceLocation) -> SourceLocation:
    kept = entry.positions.get(id(code))
    if kept is None or kept[0] is not code:
        kept = entry.positions[id(code)] = (code, list(code.co_positions()))
    positions = kept[1]
    index = lasti // 2
    line = end_line = col = end_col = None
    if 0 <= index < len(positions):
        line, end_line, col, end_col = positions[index]
    generated = entry.text[line - 1] if line is not None and 0 < line <= len(entry.text) \
        else None
    span = None
    if generated is not None and line == end_line and col is not None and end_col:
        span = _span_in_source(entry, statement, generated, col, end_col)
    if span is None:
        return _whole_statement(statement)
    source_line, start, end = span
    return SourceLocation(statement.file, source_line, start, statement.source_line
                          if source_line == statement.line else None, end)


def _whole_statement(statement: SourceLocation) -> SourceLocation:
    text = statement.text()
    if text is None:
        return statement
    end = _code_end(text)
    return SourceLocation(statement.file, statement.line, statement.col,
                          statement.source_line, end if end > statement.col else None)


# The rewritings generated code applies inside an expression, undone before looking for it
# in the source: ``psc.transpiled(helper)(x)`` is the user's ``helper(x)``.
_TRANSPILED_CALL = re.compile(r"psc\.transpiled\(([A-Za-z_][\w.]*)\)")


def _span_in_source(entry: _GeneratedFile, statement: SourceLocation, generated: str,
                    col: int, end_col: int):
    """(source line, start column, end column) of ``generated[col:end_col]`` in the source
    statement, or None."""
    segment = _TRANSPILED_CALL.sub(r"\1", generated[col:end_col])
    wanted = _compact(segment)
    if not wanted:
        return None
    indent = len(generated) - len(generated.lstrip())
    # where the segment starts, counted in non-blank characters after the statement start
    offset = len(_compact(_TRANSPILED_CALL.sub(r"\1", generated[indent:col])))
    for number in _statement_lines(entry, statement):
        text = linecache.getline(statement.file, number).rstrip("\n") \
            if number != statement.line or statement.source_line is None \
            else statement.source_line.rstrip("\n")
        start_col = statement.col if number == statement.line else 0
        found = _find_compact(text, wanted, start_col, offset)
        if found is not None:
            return (number,) + found
        offset -= len(_compact(text[start_col:]))
    return None


def _statement_lines(entry: _GeneratedFile, statement: SourceLocation):
    """The source lines the statement may span: up to the next mapped statement's."""
    at = bisect.bisect_right(entry.source_lines, statement.line)
    last = entry.source_lines[at] - 1 if at < len(entry.source_lines) else statement.line + 20
    return range(statement.line, max(last, statement.line) + 1)


def _compact(text: str) -> str:
    """``text`` without blanks, with one quote style: what printing cannot change."""
    return "".join(text.split()).replace('"', "'")


@functools.lru_cache(maxsize=4096)
def _compact_columns(text: str, start_col: int) -> tuple[list, str]:
    """The columns of ``text``'s non-blank characters from ``start_col`` on, and those
    characters as `_compact` gives them (once per source line: each of its ops asks)."""
    columns = [i for i in range(start_col, len(text)) if not text[i].isspace()]
    return columns, "".join(text[i] for i in columns).replace('"', "'")


def _find_compact(text: str, wanted: str, start_col: int, offset: int):
    """(start, end) columns in ``text`` of the occurrence of ``wanted`` (compared as
    `_compact`) nearest to ``offset`` non-blank characters after ``start_col``."""
    columns, compact = _compact_columns(text, start_col)
    hits, at = [], compact.find(wanted)
    while at >= 0:
        hits.append(at)
        at = compact.find(wanted, at + 1)
    if not hits:
        return None
    best = min(hits, key=lambda h: abs(h - offset))
    return columns[best], columns[best + len(wanted) - 1] + 1


def _code_end(text: str) -> int:
    """The column where ``text``'s code ends: before a trailing comment and blanks."""
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 1
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = None
        elif ch in "'\"":
            quote = ch * 3 if text.startswith(ch * 3, i) else ch
            i += len(quote) - 1
        elif ch == "#":
            break
        i += 1
    return len(text[:i].rstrip())
