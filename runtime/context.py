"""The builder that operations on `Value`s go to: the innermost one being built.

Generated code writes ``y = x + 1`` and ``np.dot(a, w)`` as in the source; the operator
and the NumPy mirror find the builder here.  It is the *innermost* builder (a loop body's
sub-builder while the body is being built), so a value of an enclosing region used inside
the body is captured rather than computed in the wrong region.  Thread-local: two threads
can build at once.
"""
from __future__ import annotations

import contextlib
import threading

from .errors import PSCValueError

_state = threading.local()


def current_builder():
    """The innermost builder being built on this thread."""
    stack = getattr(_state, "stack", None)
    if not stack:
        raise PSCValueError("an operation on a traced value ran outside of a build",
                            hint="traced values only exist while a computation is built")
    return stack[-1]


def has_builder() -> bool:
    return bool(getattr(_state, "stack", None))


@contextlib.contextmanager
def building(builder):
    """Make ``builder`` the current one for the duration of the block."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(builder)
    try:
        yield builder
    finally:
        stack.pop()
