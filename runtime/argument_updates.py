"""In-place updates of a PSC function's array arguments, written back as NumPy leaves them.

NumPy code may update its arguments (``u[1:-1] = ...``, ``data -= mean``, ``x.sort()``);
the caller then sees the new values in its own arrays.  A compiled program cannot write
into the caller's memory, so the front end makes each such update functional (the
parameter is rebound to the updated array) and the build function ends with
``return psc.with_argument_updates(result, {'u': u})``: an `ArgumentUpdates` holding the
function's result and the final values of the updated parameters.  The program computes
both; after the call, `write_back` copies each final value into the caller's array
(``np.copyto``, keeping its dtype) and the caller gets the result alone.

``augmented`` names parameters updated only by augmented assignment (``n += 1``): Python
rebinds a scalar there (a Python number, a NumPy scalar, a jax array have no in-place
``+=``), so only an ndarray argument is written back.  Every other update needs a
writeable NumPy array: a jax array is immutable, a read-only array refuses the write (as
NumPy's ``ValueError: assignment destination is read-only``), and a Python list or scalar
is refused (the program works on arrays; PSC does not rebuild the caller's list).
Arguments that share memory with an updated one are refused: NumPy would show the update
through the other name while the function runs, which the compiled program (which read
its inputs once) cannot.  No buffer is donated: on an accelerator the arguments were
copies already, and the results come back to the host to be written.

`ArgumentUpdates` is a pytree node (registered with the flattening jaxlib's dispatcher
uses), so the fast C++ path returns it like any result.  Helpers: an inlined helper's
build function returns one too; `runtime.calls.updated_arguments` hands its updates to the
caller, which rebinds the names it passed.
"""
from __future__ import annotations

import numpy as np
from jax._src import tree_util as jax_tree_util

from .errors import PSCTypeError, PSCValueError


class ArgumentUpdates:
    """A build function's result with the final values of the parameters it updated in
    place (``updates``: name -> value, in parameter order); ``augmented``: the names
    updated only by augmented assignment."""

    __slots__ = ("value", "updates", "augmented")

    def __init__(self, value, updates: dict, augmented=frozenset()):
        self.value = value
        self.updates = dict(updates)
        self.augmented = frozenset(augmented)

    def __repr__(self) -> str:
        return f"ArgumentUpdates({self.value!r}, {self.updates!r})"


def _flatten(node: ArgumentUpdates):
    names = tuple(node.updates)
    return (node.value, tuple(node.updates[n] for n in names)), (names, node.augmented)


def _unflatten(aux, children):
    names, augmented = aux
    value, values = children
    return ArgumentUpdates(value, dict(zip(names, values)), augmented)


jax_tree_util.register_pytree_node(ArgumentUpdates, _flatten, _unflatten)


def with_argument_updates(result, updates: dict, augmented: dict | None = None):
    """What a build function returns when it updated parameters in place: ``updates``
    maps each such parameter to its final value; ``augmented`` those updated only by
    ``name op= value`` (written back only into an ndarray argument)."""
    augmented = augmented or {}
    return ArgumentUpdates(result, {**updates, **augmented}, frozenset(augmented))


def rebinds_only(original, augmented: bool) -> bool:
    """Whether ``original`` (the argument) is rebound, not updated, by the parameter's
    updates: an augmented assignment to something with no in-place form (a Python or
    NumPy scalar, a jax array, a 0-d traced value standing for a NumPy scalar)."""
    if not augmented or isinstance(original, np.ndarray):
        return False
    ndim = getattr(original, "ndim", 0)
    return isinstance(original, (bool, int, float, complex, np.generic)) or \
        (not isinstance(original, (list, tuple, dict)) and
         (type(original).__module__.startswith("jax") or ndim == 0))


def write_back(function_name: str, updates: ArgumentUpdates, bound_arguments: dict,
               traced_names) -> object:
    """Copy the final values of ``updates`` into the caller's arguments
    (``bound_arguments``: parameter name -> argument); returns the function's result.
    Every argument is checked before any is written."""
    targets = []
    for name, value in updates.updates.items():
        original = bound_arguments.get(name)
        if rebinds_only(original, name in updates.augmented):
            continue
        _check_writeable(function_name, name, original)
        new = np.asarray(value)
        if new.dtype != original.dtype and not np.can_cast(new.dtype, original.dtype,
                                                           "same_kind"):
            raise PSCTypeError(
                f"{function_name}(): argument {name!r} is updated in place, but its new "
                f"value has dtype {new.dtype}, which NumPy would not store into its "
                f"{original.dtype} array (casting rule 'same_kind')",
                hint="convert with .astype, or build a new array instead of updating")
        targets.append((name, original, new))
    if targets:
        _check_no_sharing(function_name, targets, bound_arguments, traced_names)
    for _, original, new in targets:
        np.copyto(original, new, casting="same_kind")
    return updates.value


def _check_writeable(function_name: str, name: str, original) -> None:
    kind = type(original).__name__
    if type(original).__module__.startswith("jax"):
        raise PSCTypeError(
            f"{function_name}(): argument {name!r} is updated in place, but it is a jax "
            "array, which is immutable", hint="pass a NumPy array (np.asarray(...)) to "
            "see the update, or copy it in the function first (`x = x.copy()`)")
    if not isinstance(original, np.ndarray):
        raise PSCTypeError(
            f"{function_name}(): argument {name!r} is updated in place, but it is a "
            f"{kind}: PSC writes updates back only into NumPy arrays",
            hint="pass a NumPy array (np.asarray(...)), or copy it in the function first "
                 "(`x = np.array(x)`) and return it")
    if not original.flags.writeable:
        raise PSCValueError(
            f"{function_name}(): argument {name!r} is updated in place, but its array is "
            "read-only (assignment destination is read-only)",
            hint="pass a writeable array (x.copy()), or copy it in the function first")


def _array_leaves(bound_arguments: dict, traced_names):
    for name in traced_names:
        leaves = jax_tree_util.tree_leaves(bound_arguments.get(name))
        for leaf in leaves:
            if isinstance(leaf, np.ndarray):
                yield name, leaf


def _check_no_sharing(function_name: str, targets, bound_arguments, traced_names) -> None:
    """Refuse an updated array that shares memory with another argument (or another
    leaf of its own): NumPy's reads through that one would see the update."""
    leaves = list(_array_leaves(bound_arguments, traced_names))
    for name, original, _ in targets:
        for other_name, leaf in leaves:
            if leaf is original and other_name == name:
                continue
            if np.may_share_memory(original, leaf) and _shares(original, leaf):
                also = "is passed again as" if leaf is original else "shares memory with"
                raise PSCValueError(
                    f"{function_name}(): argument {name!r} is updated in place and "
                    f"{also} argument {other_name!r}: NumPy would show the update "
                    f"through {other_name!r} while the function runs, which the compiled "
                    "program (it reads each argument once) cannot reproduce",
                    hint=f"pass a copy ({other_name}.copy()) for one of them")


def _shares(a, b) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=1 << 16))
    except np.exceptions.TooHardError:
        return True


__all__ = ["ArgumentUpdates", "rebinds_only", "with_argument_updates", "write_back"]
