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
    """A position in user source.  ``line`` is 1-based and ``col`` 0-based, as in ``ast``;
    ``end_col`` (exclusive, on the same line) is where the culprit sub-expression ends, when
    known: the caret then spans it (``^^^^``)."""

    file: str
    line: int
    col: int = 0
    source_line: str | None = None
    end_col: int | None = None

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
                parts.append("    " + stripped)
                parts.append("    " + _caret(self.location, indent, len(text)))
        else:
            parts.append(f"{self.kind}: {self.message}")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


def _caret(location: SourceLocation, indent: int, length: int) -> str:
    """``^`` under the location's column, spanning to its end column when it has one."""
    start = max(location.col - indent, 0)
    end = location.end_col
    width = 1 if end is None else max(min(end, length) - indent - start, 1)
    return " " * start + "^" * width


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


class PSCKeyError(PSCError, KeyError):
    """A static mapping read with a key it lacks, while the program was built."""

    kind = "key error"


class PSCZeroDivisionError(PSCError, ZeroDivisionError):
    """A static Python number divided by zero while the program was built (traced
    divisions follow NumPy: inf, nan, or 0 for integers)."""

    kind = "zero division error"


class PSCAttributeError(PSCError, AttributeError):
    """An attribute a build-time value does not have."""

    kind = "attribute error"


# --- Python errors raised while building ------------------------------------------------------
# Generated code runs the user's lines as Python at build time, so plain Python errors can
# come out of it (``[1.0, 2.0] ** 2``, ``(1, 2)[3]``, ``{}["k"]``).  `from_python_error`
# re-raises them as a PSCError at the line, of a class that still derives from the original
# one (``except IndexError`` keeps working).

_BUILD_ERROR_CLASSES = {TypeError: PSCTypeError, ValueError: PSCValueError,
                        IndexError: PSCIndexError, OverflowError: PSCOverflowError,
                        NameError: PSCNameError, KeyError: PSCKeyError,
                        ZeroDivisionError: PSCZeroDivisionError,
                        AttributeError: PSCAttributeError}
_DERIVED_CLASSES: dict[type, type] = {}

_BUILD_HINTS = {
    LookupError: "static containers (lists, tuples, dicts) are indexed while the program "
                 "is built, by Python's rules",
    ZeroDivisionError: "a division of static Python numbers, done while the program is "
                       "built (traced divisions follow NumPy)",
    TypeError: "this line ran as Python while the program was built: check the types of "
               "its operands (a Python list is not an array: use np.asarray)",
}
_DEFAULT_BUILD_HINT = "raised by Python running this line while the program was built"


def psc_class_for(cls: type) -> type | None:
    """The PSCError class that stands for built-in (or user) exception class ``cls``: the
    hierarchy's own where it has one, else a subclass of both (None if Python refuses to
    derive from ``cls``)."""
    cls = _constructible(cls)
    found = _BUILD_ERROR_CLASSES.get(cls) or _DERIVED_CLASSES.get(cls)
    if found is not None:
        return found
    base = next((_BUILD_ERROR_CLASSES[c] for c in cls.__mro__ if c in _BUILD_ERROR_CLASSES),
                PSCError)
    try:
        found = type(f"PSC{cls.__name__}", (base, cls), {
            "__module__": __name__, "__reduce__": _reduce_derived,
            "kind": base.kind if base is not PSCError else _kind_of(cls)})
    except TypeError:   # e.g. an exception class with an incompatible instance layout
        return None
    _DERIVED_CLASSES[cls] = found
    return found


def _constructible(cls: type) -> type:
    """``cls``, or its nearest built-in base when a class on the way defines its own
    ``__init__`` (NumPy's ``_ArrayMemoryError(shape, dtype)``): a derived PSCError is made
    from a message alone."""
    for c in cls.__mro__:
        if c.__module__ == "builtins":
            return cls
        if "__init__" in vars(c) or "__new__" in vars(c):
            return next(b for b in cls.__mro__ if b.__module__ == "builtins")
    return cls


def _kind_of(cls: type) -> str:
    """``ZeroDivisionError`` -> ``zero division error``."""
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in cls.__name__).split()
    return " ".join(words) if words else "error"


def _reduce_derived(self):
    original = next(c for c in type(self).__mro__[1:] if not issubclass(c, PSCError))
    return (_rebuild_derived, (original, self.message, self.location, self.hint),
            self.__dict__)


def _rebuild_derived(original: type, message, location, hint):
    return psc_class_for(original)(message, location, hint)


def from_python_error(err: Exception, location: SourceLocation | None,
                      hint: str | None = None) -> Exception:
    """``err`` (raised while building) as a `PSCError` at ``location`` deriving from its
    class, for ``raise converted from err``; ``err`` itself when no class can be made."""
    cls = psc_class_for(type(err))
    if cls is None:
        return err
    if hint is None:
        hint = next((h for c, h in _BUILD_HINTS.items() if isinstance(err, c)),
                    _DEFAULT_BUILD_HINT)
    message = str(err) or type(err).__name__
    if isinstance(err, KeyError) and len(err.args) == 1:
        message = f"key {err.args[0]!r} not found"
    converted = cls(message, location, hint)
    for name in ("name", "obj"):   # AttributeError's and NameError's, for probing code
        if getattr(err, name, None) is not None:
            try:
                setattr(converted, name, getattr(err, name))
            except AttributeError:
                pass
    return converted


class PSCResourceError(PSCError, MemoryError):
    """XLA ran out of memory (or another resource) compiling or running a program."""

    kind = "out of memory"


class PSCWarning(UserWarning):
    """Something the transpiler worked around but the user should know of (a generated
    module on disk that was edited, and so is ignored)."""


class PSCCacheWarning(PSCWarning):
    """An entry of the persistent cache (`runtime.disk_cache`) was damaged (truncated,
    changed on disk) or refused by jaxlib: it is removed and rebuilt, never used."""


class PSCPerformanceWarning(PSCWarning):
    """The program is correct but will be slow to build: a loop the transpiler meant to
    stage is unrolled (its body needs the loop index as a static value), so its body is
    built once per iteration.  Reported at the loop's line, naming what needed the value."""


class PSCRuntimeError(PSCError, RuntimeError):
    """A run-time check (``jit_ps(..., checks=...)``, `runtime.checks`) failed while the
    compiled program ran: the location is the source expression of the first failing op.
    The subclasses also derive from what NumPy (or NumPy with ``np.seterr(all="raise")``)
    raises for the same: `PSCRuntimeIndexError`, `PSCRuntimeZeroDivisionError`,
    `PSCFloatingPointError`."""

    kind = "run-time check failed"


class PSCRuntimeIndexError(PSCRuntimeError, PSCIndexError):
    """A traced index out of bounds (NumPy raises ``IndexError``; without checks, reads
    clamp and writes are dropped)."""

    kind = "index error (run-time check)"


class PSCRuntimeZeroDivisionError(PSCRuntimeError, PSCZeroDivisionError):
    """Integer ``//`` or ``%`` by zero (NumPy warns and gives 0; Python raises
    ``ZeroDivisionError``)."""

    kind = "division by zero (run-time check)"


class PSCFloatingPointError(PSCRuntimeError, FloatingPointError):
    """A NaN or infinity produced from finite inputs (``jax_debug_nans`` raises
    ``FloatingPointError``, as does NumPy under ``np.seterr(invalid="raise")``)."""

    kind = "floating-point error (run-time check)"
