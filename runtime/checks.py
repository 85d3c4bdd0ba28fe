"""Opt-in run-time checks: guards compiled into the program, reported at the user's line.

With ``jit_ps(f, checks=("index", "nan", "div"))`` (or ``checks=True``: all of them), or the
process-wide setting (`SETTINGS`, changed by ``transpiler.config.update`` and read from
``PSC_CHECKS`` at import), the translation rules add a *guard* where NumPy would raise or
warn and XLA silently goes on:

=========  ===================================================================  ============
kind       fails when                                                           raises
=========  ===================================================================  ============
``index``  a traced index is out of bounds (reads clamp, writes are dropped)    `PSCRuntimeIndexError`
``div``    an integer ``//``, ``%`` or ``np.fmod`` divides by zero (gives 0)    `PSCRuntimeZeroDivisionError`
``nan``    an operation makes a NaN or an infinity from finite inputs           `PSCFloatingPointError`
=========  ===================================================================  ============

One guard is not opt-in: ``window`` (`always_guard`), where a slice of static length at a
traced start would not fit and NumPy would give fewer elements; it is emitted only where
the bounds known while building do not prove the slice fits (`runtime.numpy_rules.indexing`),
and raises `PSCRuntimeIndexError`.  A program holding any guard is dispatched on the Python
path (the failure code is read after each call): about a millisecond per call more.

A guard is a ``check`` operation (`runtime.primitives.guards`) on a bool scalar, "this
site failed", carrying its kind and message; its location is the op's (the user's line).
Guards are ordinary ops while the program is built, so loops, branches, autodiff and
batching carry them like any other.  Once the computation is finished,
`runtime.check_threading` turns them into one int32 output, the number of the first site
that failed (0: none), threaded through the state of every loop and the results of every
branch holding a guard.  `StagedFunction` reads it after the run and raises the site's
error (`raise_first_failure`).

When checks are off nothing here runs (but the ``window`` guard): no opt-in guard is emitted, the pass does not run, the
program is the one built without this module (``tests/test_runtime_checks.py`` compares
the StableHLO text).
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import warnings

import numpy as np
from jax import tree_util

from . import dtypes
from .errors import (PSCFloatingPointError, PSCRuntimeError, PSCRuntimeIndexError,
                     PSCValueError, PSCRuntimeZeroDivisionError, SourceLocation)
from .ir import Value

KINDS = ("index", "nan", "div")
_ERRORS = {"index": PSCRuntimeIndexError, "div": PSCRuntimeZeroDivisionError,
           "nan": PSCFloatingPointError, "window": PSCRuntimeIndexError}
_HINTS = {
    "index": "NumPy raises IndexError here; without checks the compiled program clamps "
             "the read (or drops the write)",
    "div": "NumPy gives 0 with a RuntimeWarning; without checks the compiled program "
           "gives 0 silently",
    "nan": "the inputs of this operation were finite (checked like jax_debug_nans)",
    "window": "NumPy clips a slice to the array and would give fewer elements here, a shape "
              "the compiled program cannot have; keep the slice inside the array (a loop "
              "such as range(n - K + 1)), or pad the array",
}


def normalize(option) -> frozenset | None:
    """``checks=`` as a frozenset of kinds: True is all, False/() none, None "follow the
    process-wide setting" (kept as None); a string or an iterable of names."""
    if option is None:
        return None
    if option is True:
        return frozenset(KINDS)
    if option is False:
        return frozenset()
    names = (option,) if isinstance(option, str) else tuple(option)
    unknown = [n for n in names if n not in KINDS]
    if unknown:
        raise PSCValueError(f"unknown run-time check {unknown[0]!r}; the checks are "
                            f"{', '.join(map(repr, KINDS))}", hint="or checks=True for all")
    return frozenset(names)


def _from_environment() -> frozenset:
    """``PSC_CHECKS``: unset, "" or "0" off; "1"/"all"/"true" all; else a comma list."""
    text = os.environ.get("PSC_CHECKS", "").strip().lower()
    if text in ("", "0", "false", "off", "no"):
        return frozenset()
    if text in ("1", "all", "true", "on", "yes"):
        return frozenset(KINDS)
    try:
        return normalize([part.strip() for part in text.split(",") if part.strip()])
    except PSCValueError as err:   # a typo must not make every import fail
        warnings.warn(f"PSC_CHECKS={text!r} ignored: {err.message}", RuntimeWarning,
                      stacklevel=2)
        return frozenset()


class _Settings:
    """The process-wide checks (``kinds``, a frozenset), used by functions whose
    ``checks=`` is not given.  One attribute read on the dispatch path."""

    __slots__ = ("kinds",)

    def __init__(self):
        self.kinds = _from_environment()


SETTINGS = _Settings()


def set_enabled(kind: str, on: bool) -> None:
    normalize((kind,))
    SETTINGS.kinds = SETTINGS.kinds | {kind} if on else SETTINGS.kinds - {kind}


# --- while building: which guards to emit ---------------------------------------------------

_building = threading.local()


def active_kinds() -> frozenset:
    """The checks of the build running on this thread (empty outside `enabled`)."""
    return getattr(_building, "kinds", frozenset())


@contextlib.contextmanager
def enabled(kinds: frozenset):
    """Emit the guards of ``kinds`` in the build run inside the block (on this thread)."""
    previous = active_kinds()
    _building.kinds = frozenset(kinds)
    try:
        yield
    finally:
        _building.kinds = previous


def is_active(kind: str) -> bool:
    return kind in getattr(_building, "kinds", ())


def guard(b, kind: str, failed: Value, message: str) -> None:
    """Add a ``kind`` guard at ``b``'s location: the run fails there when any element of
    the bool array ``failed`` is true.  Nothing when ``kind`` is not being checked."""
    if not is_active(kind):
        return
    if failed.ndim:
        failed = b.reduce(failed, "or", range(failed.ndim))
    b.emit("check", [failed], kind=kind, message=message)


def always_guard(b, kind: str, failed: Value, message: str) -> None:
    """A guard emitted whatever the checks are: where going on would differ from NumPy
    silently (a ``window`` guard: a slice of static length at a traced start that would
    not fit, `runtime.numpy_rules.indexing`).  ``kind`` is not one of the opt-in `KINDS`."""
    b.emit("check", [failed], kind=kind, message=message)


def _non_finite(b, v: Value) -> Value:
    """Whether any element of the inexact ``v`` is a NaN or an infinity (bool scalar)."""
    if dtypes.is_complex(v.dtype):
        v = b.abs(v)   # NaN or infinite when a part is (or, rarely, when it overflows)
    finite = b.is_finite(v)
    if finite.ndim:
        finite = b.reduce(finite, "and", range(finite.ndim))
    return b.not_(finite)


def _static_non_finite(leaf) -> bool:
    if isinstance(leaf, (float, complex, np.floating, np.complexfloating, np.ndarray)):
        try:
            array = np.asarray(leaf)
            return array.dtype.kind in "fc" and not bool(np.isfinite(array).all())
        except (TypeError, ValueError):
            return False
    return False


def nan_guard(b, name: str, args, kwargs, result) -> None:
    """After an operation (a NumPy function, an operator, a method): a ``nan`` guard on its
    inexact traced results, failing when one holds a NaN or infinity while every input is
    finite.  An operation given a non-finite constant (``x * np.inf``) is not checked."""
    inputs = tree_util.tree_leaves((args, kwargs))
    outputs = [leaf for leaf in tree_util.tree_leaves(result)
               if isinstance(leaf, Value) and dtypes.is_inexact(leaf.dtype)
               and not any(leaf is x for x in inputs)]
    if not outputs or any(_static_non_finite(leaf) for leaf in inputs):
        return
    failed = None
    for out in outputs:
        this = _non_finite(b, out)
        failed = this if failed is None else b.or_(failed, this)
    for x in inputs:
        if isinstance(x, Value) and dtypes.is_inexact(x.dtype):
            failed = b.and_(failed, b.not_(_non_finite(b, x)))
    shown = name.rsplit(".", 1)[-1] if name else "an operation"
    guard(b, "nan", failed, f"{shown} produced a NaN or an infinity from finite inputs")


# --- after the run ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CheckSite:
    """One guard of a compiled program: its code is its position in the site table + 1."""

    kind: str
    message: str
    location: SourceLocation | None

    def error(self) -> PSCRuntimeError:
        return _ERRORS[self.kind](self.message, self.location, _HINTS[self.kind])


def raise_first_failure(sites: tuple, code) -> None:
    """Raise the error of site ``code`` (the program's check output), if it is not 0."""
    number = int(np.asarray(code))
    if number:
        raise sites[number - 1].error()


__all__ = ["CheckSite", "KINDS", "SETTINGS", "active_kinds", "always_guard", "enabled", "guard",
           "nan_guard", "normalize", "raise_first_failure", "set_enabled"]
