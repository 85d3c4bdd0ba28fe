import numpy as np
from transpiler import jit_ps


@jit_ps
def first_above(x, threshold):
    for i in range(x.shape[0]):
        if x[i] > threshold:
            return i
    return -1
