"""The error hierarchy: every user mistake surfaces as a `PSCError` at the user's line.

A `PSCError` carries a `SourceLocation` (file, line, column) and a hint.  Its message shows
the offending source line with a caret under the column, the way a compiler would:

    model.py:12:15: error: operands of add have shapes (3,) and (4,), which do not broadcast
        y = np.add(x, w)
                  ^
    hint: reshape one operand, or check which axis you meant

The source line is read lazily (``linecache``) so that errors raised while building a
computation from a file on disk still show it, while tests can pass it in directly.

Each subclass also derives from the built-in exception Python or NumPy raises for the same
mistake (`PSCTypeError` is a ``TypeError``, `PSCShapeError` a ``ValueError``...), so code
written against plain NumPy (``except TypeError:``) still catches it.  `PSCError` comes first
in each class's bases: its ``__str__`` (the formatted message) and ``__init__`` win.
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

    def __reduce__(self):
        # Rebuilt from all three fields (BaseException's default passes only ``args``).
        return (type(self), (self.message, self.location, self.hint), self.__dict__)

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


class PSCShapeError(PSCError, ValueError):
    """Operand shapes that do not fit the operation (broadcasting, dot, reshape...)."""

    kind = "shape error"


class PSCTypeError(PSCError, TypeError):
    """Operand dtypes or Python types that do not fit the operation, and calls with
    missing or unexpected arguments."""

    kind = "type error"


class PSCValueError(PSCError, ValueError):
    """An argument whose value is out of range for the operation (an axis, a size...)."""

    kind = "value error"


class PSCIndexError(PSCError, IndexError):
    """A static index out of range for its axis, or too many indices (NumPy raises
    ``IndexError`` for the same)."""

    kind = "index error"


class PSCOverflowError(PSCError, OverflowError):
    """A Python integer too large for the dtype it must take (NumPy 2 raises
    ``OverflowError`` for the same)."""

    kind = "overflow error"


class PSCSyntaxError(PSCError, SyntaxError):
    """Python syntax outside the PSC subset (generators, ``try``, ``global``...).

    Python prints a ``SyntaxError`` from its ``filename``/``lineno``/``offset``/``text``/
    ``msg`` attributes rather than from ``str()``; they are read off the location, so the
    traceback shows the user's line and the message with its hint.
    """

    kind = "unsupported syntax"

    @property
    def msg(self):
        return self.message + (f"\nhint: {self.hint}" if self.hint else "")

    @property
    def filename(self):
        return self.location.file if self.location is not None else None

    @property
    def lineno(self):
        return self.location.line if self.location is not None else None

    @property
    def offset(self):
        return self.location.col + 1 if self.location is not None else None

    @property
    def text(self):
        return self.location.text() if self.location is not None else None

    end_lineno = end_offset = None
    print_file_and_line = None


class PSCNameError(PSCError, NameError):
    """A name that cannot be resolved, or a variable undefined on some path."""

    kind = "name error"


class PSCUnsupportedCallError(PSCError, NotImplementedError):
    """A call to something that is neither a registered primitive nor transpilable source
    (NumPy functions without a rule: not implemented here, as in ``jax.numpy``)."""

    kind = "unsupported call"


class PSCImpureCallError(PSCUnsupportedCallError):
    """A call with a side effect or a fresh result on each call (``np.random.normal``,
    ``time.time``, ``print``, mutating a global): it would run once, while the program is
    built, and its effect or value would be frozen into every later call."""

    kind = "impure call"


class PSCInternalError(PSCError, RuntimeError):
    """A bug in psc-transpiler itself (generated code that does not compile...), reported
    at the user's function so that it is never a bare Python error from generated code."""

    kind = "internal error"


class PSCTracedValueError(PSCError, TypeError):
    """A traced (run-time) value used where a static (build-time) one is required (a
    ``TypeError``, as JAX's concretization errors are)."""

    kind = "traced value error"


class PSCResourceError(PSCError, MemoryError):
    """XLA ran out of memory (or another resource) compiling or running a program."""

    kind = "out of memory"


class PSCWarning(UserWarning):
    """Something the transpiler worked around but the user should know of (a generated
    module on disk that was edited, and so is ignored)."""


class PSCRuntimeError(PSCError, RuntimeError):
    """A run-time check (``jit_ps(..., checks=...)``, `runtime.checks`) failed while the
    compiled program ran: the location is the source expression of the first failing op.
    The subclasses also derive from what NumPy (or NumPy with ``np.seterr(all="raise")``)
    raises for the same: `PSCRuntimeIndexError`, `PSCZeroDivisionError`,
    `PSCFloatingPointError`."""

    kind = "run-time check failed"


class PSCRuntimeIndexError(PSCRuntimeError, PSCIndexError):
    """A traced index out of bounds (NumPy raises ``IndexError``; without checks, reads
    clamp and writes are dropped)."""

    kind = "index error (run-time check)"


class PSCZeroDivisionError(PSCRuntimeError, ZeroDivisionError):
    """Integer ``//`` or ``%`` by zero (NumPy warns and gives 0; Python raises
    ``ZeroDivisionError``)."""

    kind = "division by zero (run-time check)"


class PSCFloatingPointError(PSCRuntimeError, FloatingPointError):
    """A NaN or infinity produced from finite inputs (``jax_debug_nans`` raises
    ``FloatingPointError``, as does NumPy under ``np.seterr(invalid="raise")``)."""

    kind = "floating-point error (run-time check)"
