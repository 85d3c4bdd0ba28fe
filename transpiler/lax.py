"""``transpiler.lax``: jax.lax's names and signatures for the explicit primitives.

Usable inside PSC code (``from transpiler import lax``; ``lax.fori_loop(...)``); generated
modules import the same objects from `runtime.lax`.
"""
from runtime.lax import *  # noqa: F401,F403 - the namespace is runtime.lax's __all__
from runtime.lax import __all__  # noqa: F401
