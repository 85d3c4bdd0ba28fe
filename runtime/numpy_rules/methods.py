"""``ndarray`` methods that are a NumPy function with the array as an argument:
``x.diagonal(1)`` is ``np.diagonal(x, 1)``, ``x.compress(c)`` is ``np.compress(c, x)``.

Each ``numpy.ndarray.<name>`` rule forwards to the function's rule, looked up when the
method is called, so a method works exactly where its function does (and the same error
names the function where it does not).  Methods that change the array in place
(``x.sort()``, ``x.fill(v)``) are rewritten by the front end instead.
"""
from __future__ import annotations

from ..translation import register_translation_rule, translate_numpy

# method -> (function, position of the array among the function's arguments)
# (``diagonal``, ``take``, ``nonzero``, ``searchsorted``, ``argpartition``, ``compress``
# and ``choose`` register their method rules beside their functions.)
FORWARDED = {"conj": ("numpy.conj", 0), "conjugate": ("numpy.conjugate", 0)}


def _forwarding(function: str, position: int):
    def rule(b, array, *args, **kwargs):
        args = list(args)
        args.insert(position, array)
        return translate_numpy(b, function, *args, **kwargs)
    rule.__name__ = function.rsplit(".", 1)[1]
    return rule


for _method, (_function, _position) in FORWARDED.items():
    register_translation_rule(f"numpy.ndarray.{_method}", _forwarding(_function, _position))
