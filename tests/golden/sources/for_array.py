import numpy as np
from transpiler import jit_ps


@jit_ps
def positive_rows(X):
    acc = np.zeros(X.shape[1])
    for row in X:
        if row.sum() > 0:
            acc = acc + row
    return acc
