import numpy as np
from transpiler import jit_ps


@jit_ps
def halve_until_small(x):
    steps = 0
    while np.abs(x).max() > 1.0:
        x = x * 0.5
        steps += 1
    return x, steps
