"""Loop-heavy NumPy programs: ours vs Numba vs jax.jit (hand-written ``lax``) vs plain Python.

Six programs, each ONE plain Python + NumPy function below, written as a NumPy user writes
a loop NumPy cannot vectorize:

* ``max_drawdown`` — a scalar ``for`` + two ``if``s over a price series;
* ``mandelbrot`` — per-pixel escape counts: two ``for``s around a ``while``;
* ``viterbi`` — the most likely state path of an HMM: a ``for`` over time whose body is
  array-level (an S × S max/argmax), then a backwards ``for`` over the back-pointers;
* ``gauss_seidel`` — sweeps of the 5-point Poisson stencil, updated in place cell by cell;
* ``kmeans`` — Lloyd's iterations with an explicit assignment loop over the points (each
  step a K × D array expression) and an explicit accumulation loop;
* ``particles`` — a 1-D gas between two walls: array-level drift and wall reflection, then
  a scalar loop over neighbours with an ``if`` for elastic collisions.

Each runs as: ours (``jit_ps`` of the function), Numba (``numba.njit`` of the same function,
where Numba accepts the source: the report says where it does not), ``jax.jit`` of a
hand-written ``jax.lax`` version (one ``fori_loop``/``while_loop`` per Python loop of the
source, ``lax.cond`` where a branch updates arrays, ``jnp.maximum``/``jnp.where`` where a
jax user writes a scalar ``if`` as a select), and the plain function.  Every argument is
traced (iteration counts included), float64 / int64.  All outputs are checked against plain
Python before anything is timed.

*First call*: a fresh ``jit_ps(fn)`` / ``numba.njit(fn)`` / ``jax.jit(lax_fn)`` made and
called once, waited for (ours: transpile + build + XLA compile + run; Numba: type inference
+ LLVM compile + run; jax: trace + lower + XLA compile + run), once per program per process,
after one small warm-up program per system (start-up and first-use imports excluded).
*Steady state*: best of ``--repeats`` runs of ``--calls`` calls, runs alternating between
the compiled systems; plain Python: best of ``--python-repeats`` single calls.  Without
Numba installed (``pip install -e '.[bench]'``) the Numba column is left out with a note.

    python benchmarks/loops.py [--sizes small|full] [--write benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dispatch import (best_alternating, cpu_model, ready,  # noqa: E402  (sibling benchmark)
                      write_section)

from transpiler import jit_ps  # noqa: E402

HEADER = "## Loops (`benchmarks/loops.py`)"
NO_NUMBA = "numba not installed: pip install -e '.[bench]' (the Numba column is left out)"
SYSTEMS = ("ours", "numba", "jax", "python")
LABELS = {"ours": "ours (`jit_ps`)", "numba": "Numba (`njit`)", "jax": "jax.jit (`lax`)",
          "python": "plain Python"}


# --- the programs: plain Python + NumPy ------------------------------------------------------

def max_drawdown(prices):
    """Largest fall from a running peak, as a fraction of the peak."""
    peak = prices[0]
    worst = 0.0
    for i in range(prices.shape[0]):
        p = prices[i]
        if p > peak:
            peak = p
        drawdown = (peak - p) / peak
        if drawdown > worst:
            worst = drawdown
    return worst


def mandelbrot(re, im, max_iter):
    """Escape count of every point ``re[c] + 1j * im[r]`` (at most ``max_iter``)."""
    counts = np.zeros((im.shape[0], re.shape[0]), dtype=np.int64)
    for r in range(im.shape[0]):
        for c in range(re.shape[0]):
            cr = re[c]
            ci = im[r]
            zr = 0.0
            zi = 0.0
            n = 0
            while n < max_iter and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            counts[r, c] = n
    return counts


def viterbi(log_init, log_trans, log_emit, obs):
    """Most likely state path of an HMM for the observations ``obs`` (log probabilities)."""
    steps = obs.shape[0]
    states = log_init.shape[0]
    score = log_init + log_emit[:, obs[0]]
    back = np.zeros((steps, states), dtype=np.int64)
    for t in range(1, steps):
        cand = score.reshape(states, 1) + log_trans
        back[t] = np.argmax(cand, axis=0)
        score = np.max(cand, axis=0) + log_emit[:, obs[t]]
    path = np.zeros(steps, dtype=np.int64)
    path[steps - 1] = np.argmax(score)
    for t in range(steps - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def gauss_seidel(u, f, h2, sweeps):
    """``sweeps`` Gauss–Seidel sweeps of -Δu = f on a grid with spacing² ``h2``; the
    boundary of ``u`` is kept."""
    u = u.copy()
    n, m = u.shape
    for _ in range(sweeps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                  + h2 * f[i, j])
    return u


def kmeans(points, centers, iters):
    """``iters`` of Lloyd's iterations from ``centers``: the centers and the labels."""
    centers = centers.copy()
    n = points.shape[0]
    k = centers.shape[0]
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iters):
        for i in range(n):
            dist = np.sum((centers - points[i]) ** 2, axis=1)
            labels[i] = np.argmin(dist)
        sums = np.zeros_like(centers)
        counts = np.zeros(k)
        for i in range(n):
            sums[labels[i]] += points[i]
            counts[labels[i]] += 1.0
        for c in range(k):
            if counts[c] > 0.0:
                centers[c] = sums[c] / counts[c]
    return centers, labels


def particles(x, v, m, dt, steps, length):
    """``steps`` steps of particles (sorted positions ``x``, velocities ``v``, masses ``m``)
    between walls at 0 and ``length``; neighbours that cross collide elastically and meet
    at their midpoint."""
    x = x.copy()
    v = v.copy()
    n = x.shape[0]
    for _ in range(steps):
        x = x + v * dt
        low = x < 0.0
        x = np.where(low, -x, x)
        v = np.where(low, -v, v)
        high = x > length
        x = np.where(high, 2.0 * length - x, x)
        v = np.where(high, -v, v)
        for i in range(n - 1):
            if x[i] > x[i + 1]:
                total = m[i] + m[i + 1]
                vi = ((m[i] - m[i + 1]) * v[i] + 2.0 * m[i + 1] * v[i + 1]) / total
                vj = ((m[i + 1] - m[i]) * v[i + 1] + 2.0 * m[i] * v[i]) / total
                v[i] = vi
                v[i + 1] = vj
                mid = 0.5 * (x[i] + x[i + 1])
                x[i] = mid
                x[i + 1] = mid
    return x, v


PROGRAMS = ("max_drawdown", "mandelbrot", "viterbi", "gauss_seidel", "kmeans", "particles")
# What the loop body is made of: scalars (one element at a time) or small arrays.
KIND = {"max_drawdown": "scalar", "mandelbrot": "scalar", "viterbi": "array",
        "gauss_seidel": "scalar", "kmeans": "array", "particles": "scalar + array"}


# --- inputs ----------------------------------------------------------------------------------

SIZES = {   # per program: the sizes of its inputs
    "full": {"max_drawdown": {"n": 100_000}, "mandelbrot": {"h": 120, "w": 160, "max_iter": 100},
             "viterbi": {"steps": 1000, "states": 64, "symbols": 16},
             "gauss_seidel": {"n": 96, "sweeps": 10}, "kmeans": {"n": 2000, "k": 8, "d": 3,
                                                                 "iters": 10},
             "particles": {"n": 256, "steps": 400}},
    "small": {"max_drawdown": {"n": 200}, "mandelbrot": {"h": 6, "w": 8, "max_iter": 20},
              "viterbi": {"steps": 12, "states": 4, "symbols": 3},
              "gauss_seidel": {"n": 6, "sweeps": 2}, "kmeans": {"n": 30, "k": 3, "d": 2,
                                                                "iters": 2},
              "particles": {"n": 8, "steps": 10}},
}


def inputs(name: str, size: dict, rng) -> tuple:
    if name == "max_drawdown":
        return (100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, size["n"]))),)
    if name == "mandelbrot":
        return (np.linspace(-2.0, 0.6, size["w"]), np.linspace(-1.2, 1.2, size["h"]),
                size["max_iter"])
    if name == "viterbi":
        s, o = size["states"], size["symbols"]
        return (np.log(rng.dirichlet(np.ones(s))), np.log(rng.dirichlet(np.ones(s), s)),
                np.log(rng.dirichlet(np.ones(o), s)), rng.integers(0, o, size["steps"]))
    if name == "gauss_seidel":
        n = size["n"]
        return np.zeros((n, n)), rng.normal(size=(n, n)), 1.0 / (n - 1) ** 2, size["sweeps"]
    if name == "kmeans":
        points = rng.normal(size=(size["n"], size["d"])) + rng.integers(0, 4, (size["n"], 1))
        return points, points[:size["k"]].copy(), size["iters"]
    n = size["n"]
    return (np.sort(rng.uniform(0.0, 10.0, n)), rng.normal(size=n), rng.uniform(1.0, 3.0, n),
            0.01, size["steps"], 10.0)


def inner_iterations(name: str, args, expected) -> int:
    """Trips of the innermost loop: what a ns-per-iteration figure divides by."""
    if name == "max_drawdown":
        return args[0].shape[0]
    if name == "mandelbrot":
        return int(expected.sum())
    if name == "viterbi":
        return args[3].shape[0] - 1
    if name == "gauss_seidel":
        return args[3] * (args[0].shape[0] - 2) * (args[0].shape[1] - 2)
    if name == "kmeans":
        return args[2] * args[0].shape[0]
    return args[4] * (args[0].shape[0] - 1)


# --- jax.jit: the same algorithms hand-written with jax.lax ----------------------------------

def jax_programs() -> dict:
    """The un-jitted ``lax`` version of each program (one ``lax`` loop per source loop)."""
    import jax.numpy as jnp
    from jax import lax

    def max_drawdown_lax(prices):
        def body(i, carry):
            peak, worst = carry
            peak = jnp.maximum(peak, prices[i])
            return peak, jnp.maximum(worst, (peak - prices[i]) / peak)
        return lax.fori_loop(0, prices.shape[0], body, (prices[0], jnp.zeros((), prices.dtype)))[1]

    def mandelbrot_lax(re, im, max_iter):
        def escape(cr, ci):
            def test(state):
                zr, zi, n = state
                return (n < max_iter) & (zr * zr + zi * zi <= 4.0)

            def step(state):
                zr, zi, n = state
                return zr * zr - zi * zi + cr, 2.0 * zr * zi + ci, n + 1
            zero = jnp.zeros((), re.dtype)
            return lax.while_loop(test, step, (zero, zero, jnp.zeros((), jnp.int64)))[2]

        def row(r, counts):
            return lax.fori_loop(0, re.shape[0],
                                 lambda c, counts: counts.at[r, c].set(escape(re[c], im[r])),
                                 counts)
        return lax.fori_loop(0, im.shape[0], row,
                             jnp.zeros((im.shape[0], re.shape[0]), jnp.int64))

    def viterbi_lax(log_init, log_trans, log_emit, obs):
        steps, states = obs.shape[0], log_init.shape[0]

        def forward(t, carry):
            score, back = carry
            cand = score[:, None] + log_trans
            back = back.at[t].set(jnp.argmax(cand, axis=0))
            return jnp.max(cand, axis=0) + log_emit[:, obs[t]], back
        score, back = lax.fori_loop(1, steps, forward, (log_init + log_emit[:, obs[0]],
                                                        jnp.zeros((steps, states), jnp.int64)))
        path = jnp.zeros(steps, jnp.int64).at[steps - 1].set(jnp.argmax(score))

        def backward(k, path):
            t = steps - 1 - k
            return path.at[t - 1].set(back[t, path[t]])
        return lax.fori_loop(0, steps - 1, backward, path)

    def gauss_seidel_lax(u, f, h2, sweeps):
        n, m = u.shape

        def row(i, u):
            def cell(j, u):
                return u.at[i, j].set(0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                              + u[i, j + 1] + h2 * f[i, j]))
            return lax.fori_loop(1, m - 1, cell, u)
        return lax.fori_loop(0, sweeps, lambda s, u: lax.fori_loop(1, n - 1, row, u), u)

    def kmeans_lax(points, centers, iters):
        n, k = points.shape[0], centers.shape[0]

        def iteration(it, carry):
            centers, labels = carry

            def assign(i, labels):
                return labels.at[i].set(jnp.argmin(jnp.sum((centers - points[i]) ** 2, axis=1)))
            labels = lax.fori_loop(0, n, assign, labels)

            def accumulate(i, acc):
                sums, counts = acc
                return sums.at[labels[i]].add(points[i]), counts.at[labels[i]].add(1.0)
            sums, counts = lax.fori_loop(0, n, accumulate, (jnp.zeros_like(centers),
                                                            jnp.zeros(k, centers.dtype)))

            def update(c, centers):
                return centers.at[c].set(jnp.where(counts[c] > 0.0, sums[c] / counts[c],
                                                   centers[c]))
            return lax.fori_loop(0, k, update, centers), labels
        return lax.fori_loop(0, iters, iteration, (centers, jnp.zeros(n, jnp.int64)))

    def particles_lax(x, v, m, dt, steps, length):
        n = x.shape[0]

        def collide(i, state):
            def hit(state):
                x, v = state
                total = m[i] + m[i + 1]
                vi = ((m[i] - m[i + 1]) * v[i] + 2.0 * m[i + 1] * v[i + 1]) / total
                vj = ((m[i + 1] - m[i]) * v[i + 1] + 2.0 * m[i] * v[i]) / total
                mid = 0.5 * (x[i] + x[i + 1])
                return x.at[i].set(mid).at[i + 1].set(mid), v.at[i].set(vi).at[i + 1].set(vj)
            return lax.cond(state[0][i] > state[0][i + 1], hit, lambda state: state, state)

        def step(s, state):
            x, v = state
            x = x + v * dt
            low = x < 0.0
            x, v = jnp.where(low, -x, x), jnp.where(low, -v, v)
            high = x > length
            x, v = jnp.where(high, 2.0 * length - x, x), jnp.where(high, -v, v)
            return lax.fori_loop(0, n - 1, collide, (x, v))
        return lax.fori_loop(0, steps, step, (x, v))

    return {"max_drawdown": max_drawdown_lax, "mandelbrot": mandelbrot_lax,
            "viterbi": viterbi_lax, "gauss_seidel": gauss_seidel_lax, "kmeans": kmeans_lax,
            "particles": particles_lax}


# --- measuring --------------------------------------------------------------------------------

def numba_module():
    """The ``numba`` module, or None when it is not installed."""
    try:
        import numba
    except ImportError:
        return None
    return numba


def make(system: str, fn, lax_fn):
    """A fresh compiled function of ``system`` (nothing cached from an earlier one)."""
    if system == "ours":
        return jit_ps(fn)
    if system == "numba":
        return numba_module().njit(fn)
    if system == "jax":
        import jax
        return jax.jit(lax_fn)
    return fn


def first_call(system: str, fn, lax_fn, args):
    """Seconds to make ``system``'s function and run its first call; the function and the
    result (None and the error's first line where the system refuses the program)."""
    gc.collect()   # no system pays for collecting another's garbage
    start = time.perf_counter()
    try:
        compiled = make(system, fn, lax_fn)
        out = ready(compiled(*args))
    except Exception as error:   # noqa: BLE001  (Numba's refusal is a result, reported)
        if system != "numba":
            raise
        return None, None, refusal(error)
    return time.perf_counter() - start, compiled, out


def refusal(error: Exception) -> str:
    """What Numba could not type, from its error: the call it found no implementation for
    (its ``>>>`` line), else the error's first line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    calls = [line[3:].strip() for line in lines if line.startswith(">>>")]
    return f"no implementation of `{calls[0]}`" if calls else lines[0]


def assert_agree(name: str, system: str, got, expected) -> None:
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected), (name, system, len(got))
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape, (name, system, g.shape, e.shape)
        if e.dtype.kind in "iub":
            assert g.dtype.kind in "iub" and np.array_equal(g, e), (name, system, g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{name}: {system} differs from plain Python")


TINY = (np.arange(1.0, 9.0),)   # the warm-up program's argument: 8 prices


def warm_up(systems) -> dict:
    """One small staged loop per system (``max_drawdown`` of 8 prices), so start-up costs
    stay out of the first calls; the compiled functions, by system."""
    compiled = {system: make(system, max_drawdown, jax_programs()["max_drawdown"])
                for system in systems}
    for fn in compiled.values():
        ready(fn(*TINY))
    return compiled


def call_cost(compiled: dict, calls: int, repeats: int) -> dict:
    """Seconds per call of the warm-up program: what a call costs when the loop is
    almost nothing (dispatch, and for ours the hand-off of a looping program to a worker
    thread that Ctrl-C can leave; see `runtime.interrupt`)."""
    return dict(zip(compiled, best_alternating(list(compiled.values()), TINY, calls,
                                               repeats)))


def measure(name: str, size: dict, systems, calls: int, repeats: int,
            python_repeats: int) -> dict:
    fn, lax_fn = globals()[name], jax_programs()[name]
    args = inputs(name, size, np.random.default_rng(0))
    expected = fn(*args)
    row = {"name": name, "size": size, "iterations": inner_iterations(name, args, expected),
           "first_s": {}, "steady_s": {}, "refused": {}}
    compiled = {}
    for system in systems:
        if system == "python":
            continue
        seconds, f, out = first_call(system, fn, lax_fn, args)
        if f is None:
            row["refused"][system] = out
            continue
        assert_agree(name, system, out, expected)
        assert_agree(name, system, f(*args), expected)   # the cached executable too
        row["first_s"][system], compiled[system] = seconds, f
    times = best_alternating(list(compiled.values()), args, calls, repeats, warmups=1)
    row["steady_s"] = dict(zip(compiled, times))
    if "python" in systems:
        row["steady_s"]["python"] = best_alternating((fn,), args, 1, python_repeats,
                                                     warmups=0)[0]
    return row


def run(sizes: str, systems, calls: int, repeats: int, python_repeats: int) -> dict:
    import jax
    jax.config.update("jax_enable_x64", True)   # the baseline needs it for float64
    tiny = warm_up(systems)
    rows = [measure(name, SIZES[sizes][name], systems, calls, repeats, python_repeats)
            for name in PROGRAMS]
    per_call = call_cost(tiny, max(1, 100 * calls), repeats)
    numba = numba_module() if "numba" in systems else None
    return {"rows": rows, "call_s": per_call, "systems": list(systems), "sizes": sizes,
            "calls": calls, "repeats": repeats, "python_repeats": python_repeats,
            "backend": jax.default_backend(), "jax_version": jax.__version__,
            "numba_version": numba.__version__ if numba else None,
            "load": os.getloadavg()[0]}


# --- reporting --------------------------------------------------------------------------------

def _size_text(size: dict) -> str:
    return ", ".join(f"{key} {value}" for key, value in size.items())


def _cell(row: dict, key: str, system: str, scale: float, fmt: str) -> str:
    if system in row["refused"]:
        return "refused"
    value = row[key].get(system)
    return "—" if value is None else format(value * scale, fmt)


def _ratio(row: dict, key: str, top: str, bottom: str) -> str:
    a, b = row[key].get(top), row[key].get(bottom)
    return "—" if a is None or b is None else f"{a / b:.2f}"


def report(r: dict) -> str:
    systems = r["systems"]
    compiled = [s for s in systems if s != "python"]
    versions = f"jax/jaxlib {r['jax_version']}" + (
        f", Numba {r['numba_version']}" if r["numba_version"] else "")
    lines = [
        HEADER, "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}, NumPy {np.__version__}, "
        f"{versions}, backend {r['backend']}; load average {r['load']:.1f} (the cores are "
        "shared with other work: single runs are noisy).",
        "Each program is one plain Python + NumPy function; ours is `jit_ps` of it, Numba "
        "`numba.njit` of the same function, jax `jax.jit` of a hand-written `jax.lax` version "
        "(a `fori_loop`/`while_loop` per source loop), plain Python the function itself; "
        "all outputs checked against plain Python first; float64/int64, every argument "
        f"traced. Steady state: best of {r['repeats']}×{r['calls']} calls, runs alternating "
        f"(plain Python: best of {r['python_repeats']} calls). Kind: what a loop body "
        "works on (scalars, or small arrays).",
        "",
        "| program | kind | size | inner iterations | " +
        " | ".join(f"{LABELS[s]} (ms)" for s in systems) + " | " +
        " | ".join(f"ours / {LABELS[s].split(' ')[0]}" for s in systems if s != "ours") +
        " | ours ns / iteration |" + (" Numba ns / iteration |" if "numba" in systems else ""),
        "|---|---|---|---|" + "---|" * (2 * len(systems))
        + ("---|" if "numba" in systems else ""),
    ]
    for row in r["rows"]:
        per_iter = {s: row["steady_s"][s] / row["iterations"] * 1e9
                    for s in ("ours", "numba") if s in row["steady_s"]}
        lines.append(
            f"| `{row['name']}` | {KIND[row['name']]} | {_size_text(row['size'])} | "
            f"{row['iterations']} | " +
            " | ".join(_cell(row, "steady_s", s, 1e3, ".3f") for s in systems) + " | " +
            " | ".join(_ratio(row, "steady_s", "ours", s) for s in systems if s != "ours") +
            f" | {per_iter['ours']:.1f} |" +
            (f" {per_iter['numba']:.1f} |" if "numba" in per_iter else
             (" — |" if "numba" in systems else "")))
    lines += [
        "",
        "First call (ms): a fresh function made and called once, after one warm-up program "
        "per system.",
        "",
        "| program | " + " | ".join(LABELS[s] for s in compiled) + " | " +
        " | ".join(f"ours / {LABELS[s].split(' ')[0]}" for s in compiled if s != "ours") + " |",
        "|---|" + "---|" * (2 * len(compiled) - 1),
    ]
    for row in r["rows"]:
        lines.append(f"| `{row['name']}` | " +
                     " | ".join(_cell(row, "first_s", s, 1e3, ".0f") for s in compiled) +
                     " | " + " | ".join(_ratio(row, "first_s", "ours", s)
                                        for s in compiled if s != "ours") + " |")
    costs = ", ".join(f"{LABELS[s]} {r['call_s'][s] * 1e6:.1f} µs" for s in systems)
    lines += ["", "Cost of one call when the loop is almost nothing (`max_drawdown` of 8 "
              "prices; a loop this short runs on the calling thread, where an unbounded or long "
              f"one would be handed to a worker thread so that Ctrl-C can stop it): {costs}."]
    refusals = [(row["name"], system, why) for row in r["rows"]
                for system, why in row["refused"].items()]
    for name, system, why in refusals:
        lines.append(f"\n{LABELS[system]} refuses `{name}` as written: {why}")
    if "numba" not in systems:
        lines.append(f"\nNot measured: {NO_NUMBA}.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", choices=sorted(SIZES), default="full")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--python-repeats", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help="comma-separated, of: " + ", ".join(SYSTEMS) +
                        " (ours and python always run: python is the oracle)")
    parser.add_argument("--write", metavar="RESULTS_MD")
    args = parser.parse_args(argv)
    names = {n.strip() for n in args.systems.split(",") if n.strip()} | {"ours", "python"}
    unknown = sorted(names - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
    if "numba" in names and numba_module() is None:
        print(NO_NUMBA)
        names.discard("numba")
    systems = [s for s in SYSTEMS if s in names]
    section = report(run(args.sizes, systems, args.calls, args.repeats, args.python_repeats))
    print(section)
    if args.write:
        write_section(args.write, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
