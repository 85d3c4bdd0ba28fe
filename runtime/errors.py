"""The error hierarchy: every user mistake surfaces as a `PSCError` at the user's line.

A `PSCError` carries a `SourceLocation` (file, line, column) and a hint.  Its message shows
the offending source line with a caret under the column, the way a compiler would:

    model.py:12:15: error: operands of add have shapes (3,) and (4,), which do not broadcast
        y = np.add(x, w)
                  ^
    hint: reshape one operand, or check which axis you meant

The source line is read lazily (``linecache``) so that errors raised while building a
computation from a file on disk still show it, while tests can pass it in directly.
"""
from __future__ import annotations

import dataclasses
import linecache


@dataclasses.dataclass(frozen=True)
class SourceLocation:
    """A position in user source.  ``line`` is 1-based and ``col`` 0-based, as in ``ast``."""

    file: str
    line: int
    col: int = 0
    source_line: str | None = None

    def text(self) -> str | None:
        if self.source_line is not None:
            return self.source_line.rstrip("\n")
        found = linecache.getline(self.file, self.line)
        return found.rstrip("\n") or None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


class PSCError(Exception):
    """Base class of every error the transpiler reports to the user."""

    kind = "error"

    def __init__(self, message: str, location: SourceLocation | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def with_location(self, location: SourceLocation | None) -> "PSCError":
        """Attach ``location`` unless the error already points somewhere more precise."""
        if self.location is None and location is not None:
            self.location = location
        return self

    def __str__(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(f"{self.location}: {self.kind}: {self.message}")
            text = self.location.text()
            if text is not None:
                stripped = text.lstrip()
                indent = len(text) - len(stripped)
                caret_col = max(self.location.col - indent, 0)
                parts.append("    " + stripped)
                parts.append("    " + " " * caret_col + "^")
        else:
            parts.append(f"{self.kind}: {self.message}")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class PSCShapeError(PSCError):
    """Operand shapes that do not fit the operation (broadcasting, dot, reshape...)."""

    kind = "shape error"


class PSCTypeError(PSCError):
    """Operand dtypes or Python types that do not fit the operation."""

    kind = "type error"


class PSCValueError(PSCError):
    """An argument whose value is out of range for the operation (an axis, a size...)."""

    kind = "value error"


class PSCSyntaxError(PSCError):
    """Python syntax outside the PSC subset (generators, ``try``, ``global``...)."""

    kind = "unsupported syntax"


class PSCNameError(PSCError):
    """A name that cannot be resolved, or a variable undefined on some path."""

    kind = "name error"


class PSCUnsupportedCallError(PSCError):
    """A call to something that is neither a registered primitive nor transpilable source."""

    kind = "unsupported call"


class PSCInternalError(PSCError):
    """A bug in psc-transpiler itself (generated code that does not compile...), reported
    at the user's function so that it is never a bare Python error from generated code."""

    kind = "internal error"


class PSCTracedValueError(PSCError):
    """A traced (run-time) value used where a static (build-time) one is required."""

    kind = "traced value error"
