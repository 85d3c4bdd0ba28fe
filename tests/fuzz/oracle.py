"""The differential oracle: a generated program run as plain Python + NumPy, and through
``jit_ps``, must agree — values (NaNs equal), dtypes and shapes — or both must fail.

A program is written to its own ``.py`` file (``jit_ps`` reads the function's source from
its file) and imported under a unique module name.  Each call of `check` wraps the
function with a new ``jit_ps`` and makes every call of the program on it in order, so a
program whose calls differ only in byte order checks that one compiled function serves
both.
"""
from __future__ import annotations

import atexit
import dataclasses
import importlib.util
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import warnings

import numpy as np

from runtime.errors import PSCError
from transpiler import jit_ps

from .generator import Program

try:                                   # under pytest, tests/ is on sys.path
    from conftest import assert_same
except ImportError:                    # python -m tests.fuzz
    from tests.conftest import assert_same

# Tolerances per result dtype: data are small integers, so float64 results of + - * are
# exact; transcendental functions differ from NumPy's by a few ulps (XLA's float32 ones
# by more).
TOLERANCES = {"float64": (1e-9, 1e-12), "float32": (1e-4, 1e-5)}
TIMEOUT_S = 20

# Documented limitations the generator can still reach, as (exception class name,
# message pattern).  Each entry must name the README sentence it stands for.  Keep it
# narrow: an entry here hides every bug with the same message.
WHITELIST: list[tuple[str, str, str]] = []


class FuzzFailure(AssertionError):
    """A program on which PSC and plain Python disagree; ``kind`` classifies it."""

    def __init__(self, kind: str, detail: str, program: Program):
        super().__init__(f"{kind}: {detail}\n\n--- reproducer ---\n{program.repro()}")
        self.kind = kind
        self.detail = detail
        self.program = program


_DIR = None
_MODULES: dict[str, object] = {}


def _directory() -> str:
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="psc_fuzz_")
        atexit.register(shutil.rmtree, _DIR, True)
    return _DIR


def load(program: Program):
    """The program's function, imported from a real file of its own."""
    module = _MODULES.get(program.name)
    if module is None:
        path = os.path.join(_directory(), program.name + ".py")
        with open(path, "w") as f:
            f.write(program.source)
        spec = importlib.util.spec_from_file_location(program.name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[program.name] = module
        spec.loader.exec_module(module)
        _MODULES[program.name] = module
    return getattr(module, program.name)


@dataclasses.dataclass
class Outcome:
    value: object = None
    error: BaseException | None = None


def run_python(fn, args) -> Outcome:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Outcome(value=_with_timeout(lambda: fn(*args)))
        except Exception as e:                     # noqa: BLE001 - the oracle's outcome
            return Outcome(error=e)


class _Timeout(Exception):
    """A call ran past ``TIMEOUT_S`` (generated loops are bounded, so a bug)."""


def _with_timeout(call):
    """Run ``call()``, raising `_Timeout` after ``TIMEOUT_S`` (main thread only: a hang of
    a staged loop must fail the program, not the whole run)."""
    if threading.current_thread() is not threading.main_thread():
        return call()

    def expire(signum, frame):
        raise _Timeout()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TIMEOUT_S)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_psc(compiled, args) -> Outcome:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Outcome(value=_with_timeout(lambda: compiled(*args)))
        except _Timeout as e:
            return Outcome(error=e)
        except Exception as e:                     # noqa: BLE001
            return Outcome(error=e)


def whitelisted(error: BaseException) -> bool:
    return any(type(error).__name__ == cls and re.search(pattern, str(error))
               for cls, pattern, _ in WHITELIST)


def native(value):
    """Results compared in native byte order: a jax array cannot hold another one, and the
    values are what the contract is about."""
    if isinstance(value, (tuple, list)):
        return type(value)(native(v) for v in value)
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        return array.astype(array.dtype.newbyteorder("="))
    return value


def compare(actual, expected, float32=False):
    """`assert_same` per result leaf, with the tolerance of the leaf's dtype — float32's
    if the program computed anything in float32 (a float64 result may hold a float32
    value, which XLA's float32 functions give within a few ulps of NumPy's)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (
            f"structure: {type(actual).__name__} vs {type(expected).__name__}")
        for a, e in zip(actual, expected):
            compare(a, e, float32)
        return
    dtype = "float32" if float32 else np.asarray(expected).dtype.name
    rtol, atol = TOLERANCES.get(dtype, (1e-9, 1e-12))
    assert_same(np.asarray(actual), native(expected), rtol=rtol, atol=atol)


def message_class(error: BaseException) -> str:
    """The first line of an error with its specifics (locations, names, numbers) blanked,
    so that one bug is one class."""
    text = str(error).splitlines()[0] if str(error) else ""
    text = re.sub(r"^\S+\.py:\d+:\d+: ", "", text)
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "_", text)
    text = re.sub(r"\b[a-z]\d+\b|\d+", "N", text)
    return f"{type(error).__name__}: {text[:90]}"


def check(program: Program):
    """Raise `FuzzFailure` if PSC and plain Python disagree on any call of ``program``."""
    fn = load(program)
    try:
        compiled = jit_ps(fn)
    except Exception as e:                         # noqa: BLE001
        if not whitelisted(e):
            raise FuzzFailure("psc-refused " + message_class(e), repr(e), program) from e
        return
    for call in program.calls:
        try:
            _check_call(program, fn, compiled, call)
        except FuzzFailure as failure:
            if not any(a.kind == "array" and not np.dtype(a.dtype).isnative for a in call):
                raise
            raise FuzzFailure(failure.kind + " [non-native byte order]", failure.detail,
                              program) from failure.__cause__


def _check_call(program, fn, compiled, call):
    expected = run_python(fn, [a.make() for a in call])
    actual = run_psc(compiled, [a.make() for a in call])
    if isinstance(expected.error, _Timeout):
        raise FuzzFailure("generator-bug python-timeout", "plain Python did not end", program)
    if expected.error is not None:
        if actual.error is None:
            raise FuzzFailure("python-raised-psc-did-not " + type(expected.error).__name__,
                              repr(expected.error), program)
        if not (isinstance(actual.error, PSCError)
                or type(actual.error) is type(expected.error)):
            raise FuzzFailure("different-exception " + message_class(actual.error),
                              f"python: {expected.error!r}; psc: {actual.error!r}",
                              program) from actual.error
        return
    if actual.error is not None:
        if whitelisted(actual.error):
            return
        kind = "psc-raised " if isinstance(actual.error, PSCError) else "psc-crashed "
        raise FuzzFailure(kind + message_class(actual.error), str(actual.error),
                          program) from actual.error
    float32 = "float32" in program.source or any("f4" in a.dtype for a in call)
    try:
        compare(actual.value, expected.value, float32)
    except AssertionError as e:
        raise FuzzFailure("mismatch " + _mismatch_kind(actual.value, expected.value, float32),
                          str(e), program) from None


def _mismatch_kind(actual, expected, float32) -> str:
    if isinstance(expected, tuple) != isinstance(actual, tuple):
        return "structure"
    if isinstance(expected, tuple):
        if len(actual) != len(expected):
            return "structure"
        for a, e in zip(actual, expected):
            kind = _mismatch_kind(a, e, float32)
            if kind != "none":
                return kind
        return "none"
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return "shape"
    if a.dtype != e.dtype.newbyteorder("="):
        return f"dtype {a.dtype} for {e.dtype.newbyteorder('=')}"
    try:
        compare(a, e, float32)
    except AssertionError:
        return "value"
    return "none"
