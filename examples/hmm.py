"""Newton-CG with Armijo backtracking on a hidden Markov model's negative log marginal
likelihood (per step), computed by a log-space forward pass over the observations.

Unconstrained logits with row-wise log-softmax give the initial, transition and emission
probabilities; 10 states, 20 symbols, T = 200 synthetic observations.
"""
import numpy as np

from newton_cg import newton_cg

STATES, SYMBOLS, T = 10, 20, 200


def log_softmax(z):
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def logsumexp(z, axis):
    top = np.max(z, axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(z - top), axis=axis))


def unpack(x):
    initial = log_softmax(x[:STATES])
    transition = log_softmax(x[STATES:STATES + STATES * STATES].reshape(STATES, STATES))
    emission = log_softmax(x[STATES + STATES * STATES:].reshape(STATES, SYMBOLS))
    return initial, transition, emission


def sample_observations(seed=0):
    rng = np.random.default_rng(seed)
    transition = rng.dirichlet(np.ones(STATES) * 0.5, size=STATES)
    emission = rng.dirichlet(np.ones(SYMBOLS) * 0.5, size=STATES)
    state, observations = rng.integers(STATES), []
    for _ in range(T):
        observations.append(rng.choice(SYMBOLS, p=emission[state]))
        state = rng.choice(STATES, p=transition[state])
    return np.array(observations)


OBSERVATIONS = sample_observations()


def hmm_objective(x):
    initial, transition, emission = unpack(x)
    alpha = initial + emission[:, OBSERVATIONS[0]]
    for t in range(1, T):
        alpha = logsumexp(alpha[:, None] + transition, axis=0) + emission[:, OBSERVATIONS[t]]
    return -logsumexp(alpha, axis=0) / T


def main():
    x0 = np.zeros(STATES + STATES * STATES + STATES * SYMBOLS)
    x, value, products = newton_cg(hmm_objective, x0, 20, 50, line_search=True)
    start = hmm_objective(x0)
    print(f"objective {float(np.asarray(value)):.6f} (start {start:.6f}), "
          f"{int(np.asarray(products))} Hessian-vector products")
    assert float(np.asarray(value)) < start


if __name__ == "__main__":
    main()
