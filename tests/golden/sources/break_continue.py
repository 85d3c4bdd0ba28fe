import numpy as np
from transpiler import jit_ps


@jit_ps
def sum_until_negative(x):
    total = 0.0
    for v in x:
        if v != v:
            continue
        if v < 0:
            break
        total = total + v
    return total
