"""Automatic differentiation on the builder's graph IR (forward and reverse mode)."""
from .api import grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp

__all__ = ["grad", "hessian", "jacfwd", "jacrev", "jvp", "value_and_grad", "vjp"]
