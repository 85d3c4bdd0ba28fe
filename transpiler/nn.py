"""``transpiler.nn``: jax.nn's names and signatures (and flax's ``max_pool``/``avg_pool``).

Usable inside PSC code (``from transpiler import nn``; ``nn.relu(x)``) and from plain
Python; generated modules import the same objects from `runtime.nn`.
"""
from runtime.nn import *  # noqa: F401,F403 - the namespace is runtime.nn's __all__
from runtime.nn import __all__  # noqa: F401
