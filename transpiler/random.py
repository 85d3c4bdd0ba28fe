"""``transpiler.random``: jax.random's names, signatures and bits for a functional PRNG.

Usable inside PSC code (``from transpiler import random``; ``random.normal(key, (3,))``)
and from plain Python; generated modules import the same objects from `runtime.random`.
"""
from runtime.random import *  # noqa: F401,F403 - the namespace is runtime.random's __all__
from runtime.random import __all__  # noqa: F401
