"""Tracebacks that show the user's frames, not psc-transpiler's (as JAX filters its own).

A `PSCError` already names the user's file, line and column, with the source line and a
caret; the 30-odd frames of the runtime, the transpiler and generated code under the call
that raised it say nothing more to the user.  `hide_internal_frames`, called where a
`jit_ps` function (or the decorator) hands an error back, drops every frame whose file is
inside this project's packages (``runtime``, ``transpiler``, ``emit``), generated code, or
jax's and jaxlib's internals, and adds a note saying so.  Generated frames are replaced by
what they stand for: when the error passed through more than one of them (a helper, a
loop body), a note lists the user's lines they map to, outermost first.

``PSC_TRACEBACK=full`` (or ``off``) keeps every frame.  Like ``jax_traceback_filtering``.
"""
from __future__ import annotations

import os
import types

from . import sourcemap

TRACEBACK_ENV = "PSC_TRACEBACK"
FILTERED_NOTE = ("psc-transpiler removed its internal frames from this traceback; set "
                 f"{TRACEBACK_ENV}=full to show them.")
_CHAIN_TITLE = "in the user's source (outermost first):"

_PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL_DIRS = tuple(os.path.join(_PROJECT, name) + os.sep
                       for name in ("runtime", "transpiler", "emit"))


def _library_dirs() -> tuple[str, ...]:
    """jax's and jaxlib's package folders (their frames are internals too)."""
    found = []
    for name in ("jax", "jaxlib"):
        try:
            module = __import__(name)
        except ImportError:   # pragma: no cover - jaxlib is a dependency
            continue
        found.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return tuple(found)


_HIDDEN_DIRS = _INTERNAL_DIRS + _library_dirs()


def filtering_enabled() -> bool:
    return os.environ.get(TRACEBACK_ENV, "").strip().lower() not in ("full", "off", "0")


def is_internal_file(filename: str) -> bool:
    """A frame of this project (or generated code, or jax): hidden from the user."""
    return (filename.startswith(_HIDDEN_DIRS) or sourcemap.is_generated(filename)
            or filename.startswith("<psc-generated"))


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without its internal frames (a new chain; ``tb`` is unchanged)."""
    kept = []
    while tb is not None:
        if not is_internal_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def hide_internal_frames(err: BaseException) -> BaseException:
    """Filter ``err``'s traceback in place (unless ``PSC_TRACEBACK=full``) and note it;
    re-raise it with a bare ``raise`` (which adds no frame).  Idempotent."""
    if not filtering_enabled() or FILTERED_NOTE in getattr(err, "__notes__", ()):
        return err
    cause = err.__cause__
    chain = _user_chain(err.__traceback__, getattr(cause, "__traceback__", None))
    err.with_traceback(filter_traceback(err.__traceback__))
    if cause is not None and cause.__traceback__ is not None:   # the Python error converted
        cause.with_traceback(filter_traceback(cause.__traceback__))
    if len(chain) > 1:
        err.add_note(_CHAIN_TITLE + "".join(f"\n  {loc}: {_line_text(loc)}"
                                            for loc in chain))
    err.add_note(FILTERED_NOTE)
    return err


def _user_chain(tb, cause_tb=None) -> list:
    """The user's lines the traceback's generated frames stand for (then those of its
    cause's, which a converted Python error has: they are deeper), repeats dropped."""
    chain = []
    for location in (sourcemap.locations_in_traceback(tb) +
                     sourcemap.locations_in_traceback(cause_tb)):
        key = (location.file, location.line)
        if not chain or (chain[-1].file, chain[-1].line) != key:
            chain.append(location)
    return chain


def _line_text(location) -> str:
    text = location.text()
    return text.strip() if text else ""
