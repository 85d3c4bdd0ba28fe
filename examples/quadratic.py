"""Newton-CG on the convex quadratic of the benchmark definition: 1/2 x'Ax - b'x with
A = Q diag(logspace(0, 4, n)) Q'.  The minimizer solves A x = b."""
import numpy as np

from newton_cg import newton_cg

N = 100
_rng = np.random.default_rng(0)
_Q, _ = np.linalg.qr(_rng.normal(size=(N, N)))
A = _Q @ np.diag(np.logspace(0, 4, N)) @ _Q.T
B = _rng.normal(size=N)


def quadratic(x):
    return 0.5 * x @ (A @ x) - B @ x


def main():
    x, value, products = newton_cg(quadratic, np.zeros(N), 20, 100)
    exact = np.linalg.solve(A, B)
    print(f"objective {float(np.asarray(value)):.10f} (exact {quadratic(exact):.10f}), "
          f"{int(np.asarray(products))} Hessian-vector products")
    np.testing.assert_allclose(np.asarray(x), exact, rtol=1e-6, atol=1e-8)


if __name__ == "__main__":
    main()
