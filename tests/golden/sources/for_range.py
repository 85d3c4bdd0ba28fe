import numpy as np
from transpiler import jit_ps


@jit_ps(static_argnames=("iters",))
def power_iteration(A, v, iters):
    for _ in range(iters):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v


@jit_ps
def prefix_sum(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i]
    return total, i
