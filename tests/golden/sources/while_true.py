import numpy as np
from transpiler import jit_ps


@jit_ps
def newton_sqrt(a):
    x = a
    while True:
        next_x = 0.5 * (x + a / x)
        if np.abs(next_x - x).max() < 1e-12:
            break
        x = next_x
    return x
