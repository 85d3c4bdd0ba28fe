"""Power iteration with the explicit primitives: ``fori_loop`` and ``while_loop``.

With JAX's signatures; run as plain Python they have their reference meaning, so the
undecorated function is its own oracle.  (Plain ``for``/``while`` over traced values
becomes these primitives automatically in a later version.)
"""
import numpy as np

from transpiler import fori_loop, jit_ps, while_loop


def power_iteration(A, v, iters):
    def step(i, v):
        w = A @ v
        return w / np.linalg.norm(w)
    v = fori_loop(0, iters, step, v)

    def too_big(state):
        return np.abs(state).max() > 1.0

    v = while_loop(too_big, lambda state: state * 0.5, v * 4.0)
    return v, v @ A @ v


compiled = jit_ps(power_iteration, static_argnames=("iters",))


def main():
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    A = Q @ np.diag([9.0, 3.0, 2.0, 1.0, 0.5, 0.1]) @ Q.T
    v0 = rng.normal(size=6)
    ours = compiled(A, v0, 50)
    expected = power_iteration(A, v0, 50)
    print("eigenvector estimate:", np.asarray(ours[0]))
    print("Rayleigh quotient:", float(np.asarray(ours[1])), "plain Python:", expected[1])
    for a, e in zip(ours, expected):
        np.testing.assert_allclose(np.asarray(a), e, rtol=1e-10)


if __name__ == "__main__":
    main()
