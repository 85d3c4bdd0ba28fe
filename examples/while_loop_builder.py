"""Functional control flow with the builder: Newton's method for sqrt as a while_loop.

The loop runs inside the compiled program until the traced condition fails; the result
agrees with the pure-Python reference implementation of while_loop.
"""
import numpy as np

from runtime import StagedFunction, reference, translate


def build_sqrt(b, a):
    def cond(b, state):
        x, i = state
        err = translate(b, np.abs, translate(b, np.subtract, translate(b, np.multiply, x, x), a))
        big = translate(b, np.greater, translate(b, np.max, err), 1e-12)
        return translate(b, np.logical_and, big, translate(b, np.less, i, 50))

    def body(b, state):
        x, i = state
        x = translate(b, np.multiply, 0.5, translate(b, np.add, x, translate(b, np.divide, a, x)))
        return x, translate(b, np.add, i, 1)

    return b.while_loop(cond, body, (a, b.constant(np.int32(0))))


def main():
    a = np.array([2.0, 9.0, 10.0])
    x, iterations = StagedFunction(build_sqrt, name="newton_sqrt")(a)
    ref_x, ref_i = reference.while_loop(
        lambda s: np.max(np.abs(s[0] * s[0] - a)) > 1e-12 and s[1] < 50,
        lambda s: (0.5 * (s[0] + a / s[0]), s[1] + 1), (a, np.int32(0)))
    print("sqrt:", np.asarray(x), "iterations:", int(iterations))
    np.testing.assert_allclose(np.asarray(x), ref_x, rtol=1e-15)
    assert int(iterations) == ref_i


if __name__ == "__main__":
    main()
