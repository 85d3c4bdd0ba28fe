"""The All-CNN-C training step: ours vs jax.jit vs TensorFlow, side by side in one process.

The step is ``examples/allconv_cifar.py``'s ``sgd_step`` (forward, softmax cross-entropy,
backward, SGD update: one compiled program), float32, NHWC, on the CPU:

* **ours**: the example's ``@jit_ps`` functions;
* **jax.jit**: the *same* functions, their code objects re-bound to jax's modules
  (``np`` -> jax.numpy, ``lax`` -> jax.lax, ``nn`` -> jax.nn, ``random`` -> jax.random,
  ``value_and_grad`` -> jax.value_and_grad), under ``jax.jit``;
* **TensorFlow 2**: the same network written with ``tf.nn.conv2d`` and ``tf.GradientTape``
  under ``tf.function(jit_compile=True)`` (XLA too), Keras-free.

All three start from the same parameters and batch.  The metric is the paper's: the
minimum over ``--trials`` of the mean time of ``--steps`` chained steps (the parameters a
step returns feed the next); trials alternate between the systems so that load from other
processes hits them alike.  The first call is timed on a fresh function: made (ours:
transpiled, or read from ``examples/__psc__``), built, compiled and run once.  From the
optimized HLO of each (TensorFlow's from ``experimental_get_compiler_ir``) it counts the
fusions, the convolutions and those XLA:CPU hands to the YNNPACK library.  The systems
share no XLA build: TensorFlow bundles its own, so its defaults (which ops go to YNNPACK)
can differ; ``XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=`` turns that off in both.

    python benchmarks/allconv.py [--batch 16] [--width 96] [--trials 10] [--steps 5]
        [--systems ours,jax,tf] [--write benchmarks/RESULTS.md]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import platform
import re
import sys
import time
import types
from typing import Any, Callable

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
for _path in (str(HERE), str(EXAMPLES)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from dispatch import cpu_model, write_section  # noqa: E402  (sibling benchmarks)
from selu_fusion import parse_hlo  # noqa: E402

HEADER = "## All-CNN-C training step (`benchmarks/allconv.py`)"
SYSTEMS = ("ours", "jax", "tf")
LABELS = {"ours": "ours (`jit_ps`)", "jax": "jax.jit", "tf": "TF `tf.function(jit_compile=True)`"}
NO_TENSORFLOW = "tensorflow not installed: pip install -e .[bench]"


def load_example() -> types.ModuleType:
    """``examples/allconv_cifar.py``, imported (its ``@jit_ps`` functions transpiled)."""
    import allconv_cifar
    return allconv_cifar


# --- the same network source, bound to jax ---------------------------------------------------

def jax_modules() -> dict:
    """jax's modules under the names the example's network code uses."""
    import jax
    import jax.numpy as jnp
    return {"np": jnp, "lax": jax.lax, "nn": jax.nn, "random": jax.random,
            "grad": jax.grad, "value_and_grad": jax.value_and_grad, "jit_ps": jax.jit}


def bind(module: types.ModuleType, modules: dict) -> dict:
    """The network functions of ``module`` (its ``NETWORK`` names) re-made from their own
    code objects over a copy of the module's globals in which ``modules`` replace its
    imports: the same source, calling other libraries.  Returns the new globals."""
    scope = dict(vars(module))
    scope.update(modules)
    for name in module.NETWORK:
        fn = getattr(module, name)
        raw = getattr(fn, "__wrapped__", fn)     # a jit_ps function's Python function
        scope[name] = types.FunctionType(raw.__code__, scope, raw.__name__,
                                         raw.__defaults__, raw.__closure__)
    return scope


def jax_network(module: types.ModuleType) -> dict:
    """The example's ``init_params`` and ``sgd_step`` bound to jax, under ``jax.jit``."""
    import jax
    scope = bind(module, jax_modules())
    return {"init_params": jax.jit(scope["init_params"], static_argnames=("width",)),
            "sgd_step": jax.jit(scope["sgd_step"]), "loss": jax.jit(scope["loss"])}


# --- TensorFlow: the same network in tf.nn -----------------------------------------------------

def tensorflow():
    """The ``tensorflow`` module, or None when it is not installed."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf
    except ImportError:
        return None
    return tf


def tf_sgd_step(tf, module: types.ModuleType):
    """The example's step written with tf.nn (same layers, loss and update), compiled by
    XLA (``jit_compile=True``)."""
    classes, strides, paddings = module.CLASSES, module.STRIDES, module.PADDINGS

    def loss(params, images, labels):
        x = images
        for (W, b), stride, padding in zip(params[:-1], strides, paddings):
            x = tf.nn.relu(tf.nn.conv2d(x, W, stride, padding) + b)
        W, b = params[-1]      # the class scores: no ReLU
        scores = tf.nn.conv2d(x, W, strides[-1], paddings[-1]) + b
        log_probs = tf.nn.log_softmax(tf.reduce_mean(scores, axis=(1, 2)))
        targets = tf.one_hot(labels, classes, dtype=log_probs.dtype)
        return -tf.reduce_mean(tf.reduce_sum(targets * log_probs, axis=-1))

    @tf.function(jit_compile=True)
    def sgd_step(params, images, labels, lr):
        with tf.GradientTape() as tape:
            tape.watch(params)
            value = loss(params, images, labels)
        grads = tape.gradient(value, params)
        return [(W - lr * dW, b - lr * db) for (W, b), (dW, db) in zip(params, grads)], value
    return sgd_step


# --- one system: how to make its step and feed it -----------------------------------------------

@dataclasses.dataclass
class System:
    name: str
    make_step: Callable[[], Callable]       # a fresh compiled step (first call compiles)
    put: Callable[[Any], Any]               # NumPy arrays -> this system's arguments
    hlo: Callable[[Callable, tuple], str | None]


def systems(module, names) -> tuple[list[System], list[str]]:
    """The systems asked for that can run here, and a note for each that cannot."""
    found, notes = [], []
    if "ours" in names:
        from transpiler import jit_ps
        found.append(System("ours", lambda: jit_ps(module.sgd_step.__wrapped__),
                            lambda tree: tree,
                            lambda step, args: step.compile(*args).as_hlo_text()))
    if "jax" in names:
        import jax
        found.append(System("jax", lambda: jax_network(module)["sgd_step"],
                            lambda tree: jax.tree_util.tree_map(jax.numpy.asarray, tree),
                            lambda step, args: step.lower(*args).compile().as_text()))
    if "tf" in names:
        tf = tensorflow()
        if tf is None:
            notes.append(NO_TENSORFLOW)
        else:
            found.append(System("tf", lambda: tf_sgd_step(tf, module),
                                lambda tree: tf.nest.map_structure(tf.constant, tree),
                                _tf_hlo))
    return found, notes


def _tf_hlo(step, args) -> str | None:
    try:
        return step.experimental_get_compiler_ir(*args)(stage="optimized_hlo")
    except Exception:   # an older TF without the stage: no counts, not a failure
        return None


def hlo_counts(text: str | None) -> dict | None:
    """Fusions in the entry computation; convolutions and dots anywhere (inside fusions
    too), and how many convolutions sit in a library fusion (XLA:CPU's ``kCustom``
    fusions: ``__ynn_fusion`` hands its ops to the YNNPACK library)."""
    if text is None:
        return None
    computations = parse_hlo(text)
    entry = next(c for c in computations.values() if c["entry"])
    every = [op for c in computations.values() for _, _, op, _ in c["instructions"]]
    in_library = 0
    for _, _, op, rest in entry["instructions"]:
        called = re.search(r"\bcalls=%?([\w.\-]+)", rest)
        if op == "fusion" and "kind=kCustom" in rest and called:
            body = computations.get(called.group(1), {}).get("instructions", [])
            in_library += sum(inner == "convolution" for _, _, inner, _ in body)
    return {"fusions": sum(op == "fusion" for _, _, op, _ in entry["instructions"]),
            "convolutions": every.count("convolution"), "dots": every.count("dot"),
            "library_convolutions": in_library}


# --- measuring ------------------------------------------------------------------------------------

def chained_steps(step, params, batch, lr, steps: int):
    """Run ``steps`` steps, each on the parameters the previous one returned; the last loss
    is read back (which waits for jax's and TensorFlow's asynchronous results)."""
    images, labels = batch
    value = None
    for _ in range(steps):
        params, value = step(params, images, labels, lr)
    return params, np.asarray(value)


def run(batch: int, width: int, trials: int, steps: int, names, lr: float = 0.01) -> dict:
    module = load_example()
    rng = np.random.default_rng(0)
    images, labels = module.synthetic_batch(rng, module.class_patterns(rng), batch)
    import jax
    params = jax.tree_util.tree_map(np.asarray, jax_network(module)["init_params"](
        jax.random.PRNGKey(0), width))
    found, notes = systems(module, names)
    result = {"batch": batch, "width": width, "trials": trials, "steps": steps,
              "notes": notes, "systems": {}, "jax_version": jax.__version__}
    tf = tensorflow()
    result["tf_version"] = tf.__version__ if tf is not None else None
    if "ours" in names:
        result["init_matches_jax"] = _init_matches(module, params, width)
    runs = []
    for system in found:
        args = (system.put(params), system.put((images, labels)), system.put(np.float32(lr)))
        start = time.perf_counter()
        step = system.make_step()
        new_params, value = chained_steps(step, args[0], args[1], args[2], 1)
        first = time.perf_counter() - start
        hlo_args = (args[0], *args[1], args[2])
        result["systems"][system.name] = {
            "first_s": first, "loss": float(np.asarray(value)),
            "hlo": hlo_counts(system.hlo(step, hlo_args)),
            "W0_after": np.asarray(new_params[0][0])}
        runs.append((system, step, args))
    best = {system.name: float("inf") for system, _, _ in runs}
    for _ in range(trials):
        for system, step, (p, data, rate) in runs:
            start = time.perf_counter()
            chained_steps(step, p, data, rate, steps)
            best[system.name] = min(best[system.name], (time.perf_counter() - start) / steps)
    for name, seconds in best.items():
        result["systems"][name]["step_s"] = seconds
    result["load"] = os.getloadavg()[0]
    _check_agreement(result)
    return result


def _init_matches(module, jax_params, width) -> str:
    """Do our ``init_params`` draw jax's numbers (``transpiler.random`` keeps jax's bits)?"""
    ours = module.init_params(module.random.PRNGKey(0), width)
    diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
               for (a, _), (b, _) in zip(ours, jax_params))
    if diff == 0:
        return "yes, bit for bit"
    return (f"{'yes, to float32 rounding' if diff < 1e-6 else '**no**'} (largest difference "
            f"{diff:.3g})")


def _check_agreement(result: dict) -> None:
    """Every system computed the same loss and first update (float32 tolerances)."""
    runs = list(result["systems"].items())
    for name, r in runs[1:]:
        ref_name, ref = runs[0]
        np.testing.assert_allclose(r["loss"], ref["loss"], rtol=1e-4,
                                   err_msg=f"loss of {name} vs {ref_name}")
        np.testing.assert_allclose(r["W0_after"], ref["W0_after"], rtol=1e-3, atol=1e-5,
                                   err_msg=f"first layer after a step: {name} vs {ref_name}")


# --- reporting ------------------------------------------------------------------------------------

def _cell(counts: dict | None, key: str) -> str:
    return "—" if counts is None else str(counts[key])


def report(r: dict) -> str:
    names = list(r["systems"])
    systems_ = [r["systems"][n] for n in names]
    lines = [
        HEADER, "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}, jax/jaxlib "
        f"{r['jax_version']}" + (f", TensorFlow {r['tf_version']}" if r["tf_version"] else "")
        + ".",
        f"`examples/allconv_cifar.py`'s All-CNN-C step (forward, softmax cross-entropy, "
        f"backward, SGD update), float32 NHWC on the CPU, batch {r['batch']} of 32x32x3, "
        f"width {r['width']}/{2 * r['width']} (the paper's: 96/192). Step time: minimum over "
        f"{r['trials']} trials of the mean of {r['steps']} chained steps, trials alternating "
        f"between the systems; first call: a fresh function made (ours: transpiled or read "
        f"from `examples/__psc__`), built, compiled and run once." +
        (f" XLA_FLAGS=`{os.environ['XLA_FLAGS']}`." if os.environ.get("XLA_FLAGS") else ""),
        "",
        "| | " + " | ".join(LABELS[n] for n in names) + " |",
        "|---|" + "---|" * len(names),
        "| step time (ms) | " + " | ".join(f"{s['step_s'] * 1e3:.2f}" for s in systems_) + " |",
    ]
    if "jax" in r["systems"]:
        jax_s = r["systems"]["jax"]["step_s"]
        lines.append("| step time / jax.jit | " +
                     " | ".join(f"{s['step_s'] / jax_s:.2f}" for s in systems_) + " |")
    lines += [
        "| first call (s) | " + " | ".join(f"{s['first_s']:.2f}" for s in systems_) + " |",
        "| fusions in the entry computation | " +
        " | ".join(_cell(s["hlo"], "fusions") for s in systems_) + " |",
        "| convolutions in the optimized HLO | " +
        " | ".join(_cell(s["hlo"], "convolutions") for s in systems_) + " |",
        "| of which in library (`kCustom`, YNNPACK) fusions | " +
        " | ".join(_cell(s["hlo"], "library_convolutions") for s in systems_) + " |",
        "| dots in the optimized HLO | " +
        " | ".join(_cell(s["hlo"], "dots") for s in systems_) + " |",
        "| loss of the first step | " + " | ".join(f"{s['loss']:.6f}" for s in systems_) + " |",
    ]
    if "init_matches_jax" in r:
        lines.append(f"\nOur compiled `init_params` draws jax.random's numbers: "
                     f"{r['init_matches_jax']}.")
    lines.append(f"\nLoad average during the run: {r['load']:.1f} on {os.cpu_count()} cores.")
    for note in r["notes"]:
        lines.append(f"\nNot measured: {note}.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--width", type=int, default=96, help="channels of the first "
                        "block (the paper's 96); the second block has twice as many")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help="comma-separated, of: " + ", ".join(SYSTEMS))
    parser.add_argument("--write", metavar="RESULTS_MD")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    unknown = sorted(set(names) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
    if "tf" in names and tensorflow() is None:
        print(NO_TENSORFLOW)
    section = report(run(args.batch, args.width, args.trials, args.steps, names))
    print(section)
    if args.write:
        write_section(args.write, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
