import numpy as np
from transpiler import jit_ps


@jit_ps
def in_band(x, low, high):
    inside = low < x.mean() < high
    return 1.0 if inside and not np.isnan(x).any() else 0.0
