"""Process-wide settings, in the style of ``jax.config``::

    import transpiler
    transpiler.config.update("debug_nans", True)       # one check
    transpiler.config.update("checks", ("index", "div"))  # several (True: all, False: none)
    transpiler.config.read("debug_index")               # -> False

Names: ``"checks"`` (the set of run-time checks, `runtime.checks`), and one switch per
check: ``"debug_index"``, ``"debug_nans"``, ``"debug_div"``.  They apply to functions
compiled without their own ``jit_ps(..., checks=...)``, from their next call on (a
changed setting is a new signature: it builds again).  The ``PSC_CHECKS`` environment
variable (``1``/``all``, or a comma list such as ``index,nan``) sets ``"checks"`` when
the package is imported.
"""
from __future__ import annotations

from runtime import checks as _checks
from runtime.errors import PSCValueError

_SWITCHES = {"debug_index": "index", "debug_nans": "nan", "debug_div": "div"}
NAMES = ("checks", *_SWITCHES)


def update(name: str, value) -> None:
    """Set the setting ``name`` (see the module docstring) to ``value``."""
    if name == "checks":
        _checks.SETTINGS.kinds = _checks.normalize(value) or frozenset()
    elif name in _SWITCHES:
        _checks.set_enabled(_SWITCHES[name], bool(value))
    else:
        raise PSCValueError(f"unknown setting {name!r}; the settings are "
                            f"{', '.join(map(repr, NAMES))}")


def read(name: str):
    """The current value of the setting ``name``: a tuple of check names for ``"checks"``,
    a bool for the switches."""
    if name == "checks":
        return tuple(kind for kind in _checks.KINDS if kind in _checks.SETTINGS.kinds)
    if name in _SWITCHES:
        return _SWITCHES[name] in _checks.SETTINGS.kinds
    raise PSCValueError(f"unknown setting {name!r}; the settings are "
                        f"{', '.join(map(repr, NAMES))}")
