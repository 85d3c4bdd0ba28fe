"""NPBench's kernels, unchanged, under ``jit_ps`` against NumPy, Numba and NPBench's JAX versions.

NPBench (Ziogas et al., "NPBench: A Benchmarking Suite for High-Performance NumPy", ICS 2021)
ships each kernel as NumPy users write it (``<module>_numpy.py``), hand-written Numba
(``<module>_numba_n.py``) and JAX (``<module>_jax.py``) versions, an initializer and
``bench_info/<name>.json`` with the parameters of each preset.  Nothing of NPBench is copied
here: the kernels are read from the directory given on the command line (a checkout of
spcl/npbench, or any copy with the same layout).

Each kernel runs in its own process (a crash or a hang costs one row, not the run).  For each
framework: the first call (for ``jit_ps``: transpile + build + compile + run), the median of
the steady-state calls on fresh copies of the inputs, and whether the results (the returned
values and the arrays the kernel updates in place) match NumPy's.

    python benchmarks/npbench.py --kernels ../npbench [--preset S] [--only gemm atax]
        [--write benchmarks/RESULTS.md] [--plot benchmarks/npbench_S.png]
"""
from __future__ import annotations

import argparse
import copy
import importlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dispatch import cpu_model, write_section  # noqa: E402  (sibling benchmark)

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORKS = ("numpy", "psc", "numba", "jax")
MODULE_SUFFIX = {"numpy": "_numpy", "psc": "_numpy", "numba": "_numba_n", "jax": "_jax"}


@dataclass
class Outcome:
    """One framework on one kernel: times in seconds, ``error`` the first line of a failure."""
    first_call: float | None = None
    steady: float | None = None
    matches_numpy: bool | None = None
    error: str | None = None


@dataclass
class KernelRow:
    name: str
    preset: str
    outcomes: dict = field(default_factory=dict)


# ---------------------------------------------------------------- one kernel (worker side)

def bench_info(kernels_dir: str, name: str) -> dict:
    with open(os.path.join(kernels_dir, "bench_info", f"{name}.json")) as f:
        return json.load(f)["benchmark"]


def kernel_names(kernels_dir: str) -> list[str]:
    folder = os.path.join(kernels_dir, "bench_info")
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json"))


def import_kernel_module(kernels_dir: str, info: dict, suffix: str):
    folder = os.path.join(kernels_dir, "benchmarks", info["relative_path"])
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(info["module_name"] + suffix)


def initial_arguments(kernels_dir: str, info: dict, preset: str) -> list:
    """The kernel's arguments, in order: the preset's parameters plus what ``initialize``
    made (kernels without an ``init`` take the parameters themselves)."""
    params = dict(info["parameters"][preset])
    init = info.get("init")
    if init is not None:
        make = getattr(import_kernel_module(kernels_dir, info, ""), init["func_name"])
        made = make(*(params[a] for a in init["input_args"]))
        if len(init["output_args"]) == 1:
            made = (made,)
        params.update(zip(init["output_args"], made))
    return [params[a] for a in info["input_args"]]


def fresh(arguments: list) -> list:
    return [copy.deepcopy(v) for v in arguments]


def as_tuple(result) -> tuple:
    if result is None:
        return ()
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def observed(info: dict, arguments: list, result) -> list:
    """What a caller sees after the call: the returned values, then the updated arguments."""
    names = info["input_args"]
    return [np.asarray(r) for r in as_tuple(result)] + \
        [np.asarray(arguments[names.index(a)]) for a in info.get("output_args", ())]


def close(reference: np.ndarray, value: np.ndarray, tolerance: float) -> bool:
    """NPBench's check: relative error in norm, exact for integers and booleans."""
    if reference.shape != value.shape:
        return False
    if reference.dtype.kind in "biu":
        return bool(np.array_equal(reference, value))
    scale = np.linalg.norm(reference)
    error = np.linalg.norm(reference - value.astype(reference.dtype))
    return bool(error <= tolerance * max(scale, 1e-300)) or bool(np.allclose(reference, value))


def matches(reference: list, values: list, jax_style: bool, tolerance: float) -> bool:
    """``jax_style``: the JAX versions return the updated arrays instead of writing them."""
    if jax_style and len(values) != len(reference):
        values = values[:len(reference)]
    if len(reference) != len(values):
        return False
    return all(close(r, v, tolerance) for r, v in zip(reference, values))


def static_positions(info: dict, arguments: list) -> list[int]:
    """The arguments compiled in: the non-array ones except floating-point and complex
    scalars, which are data (``alpha``, ``horizon``) and stay traced, as array contents do.
    Sizes and counts (Python ints) shape the program.  (All non-array arguments static
    would let a kernel like mandelbrot1, which takes no arrays, run entirely in NumPy while
    the program is built, and time a constant.)  NPBench passes arguments by position."""
    return [i for i, (name, value) in enumerate(zip(info["input_args"], arguments))
            if name not in info["array_args"] and not isinstance(value, (float, complex))]


def compiled_callable(framework: str, module, info: dict, arguments: list):
    kernel = getattr(module, info["func_name"])
    static = static_positions(info, arguments)
    if framework == "psc":
        from transpiler import jit_ps
        return jit_ps(kernel, static_argnums=static)
    if framework == "jax" and not hasattr(kernel, "lower"):
        import jax
        return jax.jit(kernel, static_argnums=static)
    return kernel


def block(result):
    for r in as_tuple(result):
        wait = getattr(r, "block_until_ready", None)
        if wait is not None:
            wait()
    return result


def timed_call(fn, arguments: list) -> tuple[float, object, list]:
    args = fresh(arguments)
    start = time.perf_counter()
    result = block(fn(*args))
    return time.perf_counter() - start, result, args


def steady_time(fn, arguments: list, budget: float, most: int) -> float:
    times = []
    spent = 0.0
    while len(times) < most and (len(times) < 3 or spent < budget):
        seconds, _, _ = timed_call(fn, arguments)
        times.append(seconds)
        spent += seconds
    return statistics.median(times)


def first_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip().splitlines()
    return text[0][:300] if text else type(err).__name__


def run_framework(framework, kernels_dir, info, arguments, reference, budget, most) -> Outcome:
    outcome = Outcome()
    try:
        start = time.perf_counter()
        module = import_kernel_module(kernels_dir, info, MODULE_SUFFIX[framework])
        fn = compiled_callable(framework, module, info, arguments)
        _, result, args = timed_call(fn, arguments)
        outcome.first_call = time.perf_counter() - start
        if reference is not None:
            outcome.matches_numpy = matches(reference, observed(info, args, result),
                                            jax_style=framework == "jax",
                                            tolerance=info.get("norm_error", 1e-5))
        outcome.steady = steady_time(fn, arguments, budget, most)
    except Exception as err:   # a benchmark row, not a crash: record what went wrong
        outcome.error = first_line(err)
        if os.environ.get("NPBENCH_TRACEBACK"):
            traceback.print_exc()
    return outcome


def run_kernel(kernels_dir, name, preset, frameworks, budget, most) -> KernelRow:
    if "jax" in frameworks:
        import jax
        jax.config.update("jax_enable_x64", True)   # NPBench's JAX versions compute in float64
        jax.devices()
    if "psc" in frameworks:
        # imported and the backend started before the first call is timed (as for jax)
        import transpiler   # noqa: F401
        from runtime.client import get_client
        get_client()
    info = bench_info(kernels_dir, name)
    arguments = initial_arguments(kernels_dir, info, preset)
    row = KernelRow(name, preset)
    numpy_module = import_kernel_module(kernels_dir, info, "_numpy")
    args = fresh(arguments)
    reference = observed(info, args, getattr(numpy_module, info["func_name"])(*args))
    for framework in frameworks:
        row.outcomes[framework] = asdict(run_framework(
            framework, kernels_dir, info, arguments,
            None if framework == "numpy" else reference, budget, most))
    return row


# ---------------------------------------------------------------- the run (parent side)

def run_in_subprocess(args, name: str) -> KernelRow:
    command = [sys.executable, os.path.abspath(__file__), "--worker", name,
               "--kernels", args.kernels, "--preset", args.preset,
               "--budget", str(args.budget), "--most", str(args.most),
               "--frameworks", *args.frameworks]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")]))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        return failed_row(name, args, f"timed out after {args.timeout} s")
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            data = json.loads(line)
            return KernelRow(data["name"], data["preset"], data["outcomes"])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return failed_row(name, args, f"worker exited {done.returncode}: {tail[:200]}")


def failed_row(name, args, why: str) -> KernelRow:
    return KernelRow(name, args.preset, {f: asdict(Outcome(error=why)) for f in args.frameworks})


def speedup(row: KernelRow, framework: str) -> float | None:
    base, other = row.outcomes.get("numpy", {}), row.outcomes.get(framework, {})
    if not base.get("steady") or not other.get("steady") or other.get("matches_numpy") is False:
        return None
    return base["steady"] / other["steady"]


def geomean(values) -> float | None:
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def fmt_seconds(value) -> str:
    if value is None:
        return "–"
    return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"


def fmt_ratio(value) -> str:
    return "–" if value is None else f"{value:.3g}×"


def status(outcome: dict) -> str:
    if outcome.get("error"):
        return "error"
    return "ok" if outcome.get("matches_numpy") else "MISMATCH"


def table(rows: list[KernelRow], frameworks) -> str:
    others = [f for f in frameworks if f != "numpy"]
    head = ["kernel", "numpy steady", "psc first call", "psc steady", "psc status"] + \
        [f"{f} ÷ numpy speed-up" for f in others]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        ours = row.outcomes.get("psc", {})
        cells = [row.name, fmt_seconds(row.outcomes.get("numpy", {}).get("steady")),
                 fmt_seconds(ours.get("first_call")), fmt_seconds(ours.get("steady")),
                 status(ours)] + [fmt_ratio(speedup(row, f)) for f in others]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(rows: list[KernelRow], frameworks) -> str:
    ours = [r.outcomes.get("psc", {}) for r in rows]
    ok = [r for r, o in zip(rows, ours) if status(o) == "ok"]
    faster = [r for r in ok if (speedup(r, "psc") or 0) > 1]
    slow_first = [r.name for r in ok if r.outcomes["psc"]["first_call"] > 5]
    lines = [f"- {len(ok)} of {len(rows)} kernels run under `jit_ps` and match NumPy; "
             f"{len(faster)} of those are faster than NumPy in the steady state.",
             f"- first call over 5 s: {', '.join(slow_first) or 'none'}."]
    both = [r for r in ok if speedup(r, "jax")]
    for f in frameworks:
        if f in ("numpy",):
            continue
        mean = geomean(speedup(r, f) for r in both)
        lines.append(f"- geometric mean speed-up over NumPy, {f}, on the {len(both)} kernels "
                     f"where both `jit_ps` and JAX run and match: {fmt_ratio(mean)}")
    errors = [(r.name, o["error"]) for r, o in zip(rows, ours) if o.get("error")]
    if errors:
        lines.append("- `jit_ps` errors:")
        lines += [f"  - {name}: {why}" for name, why in errors]
    return "\n".join(lines)


def plot(rows: list[KernelRow], frameworks, path: str, preset: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    others = [f for f in frameworks if f != "numpy"]
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.3), 4))
    width = 0.8 / len(others)
    for k, f in enumerate(others):
        values = [speedup(r, f) or float("nan") for r in rows]
        ax.bar([i + k * width for i in range(len(rows))], values, width, label=f)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
    ax.set_xticklabels([r.name for r in rows], rotation=90, fontsize=7)
    ax.set_ylabel("speed-up over NumPy (steady state)")
    ax.set_title(f"NPBench, preset {preset}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", required=True, help="NPBench directory (bench_info/, benchmarks/)")
    parser.add_argument("--preset", default="S", choices=("S", "M", "L", "paper"))
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME")
    parser.add_argument("--frameworks", nargs="*", default=list(FRAMEWORKS), choices=FRAMEWORKS)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per kernel")
    parser.add_argument("--budget", type=float, default=2.0, help="steady-state seconds per framework")
    parser.add_argument("--most", type=int, default=10, help="most steady-state calls")
    parser.add_argument("--write", metavar="RESULTS.md")
    parser.add_argument("--plot", metavar="PNG")
    parser.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.kernels = os.path.abspath(args.kernels)
    if "numpy" not in args.frameworks:
        args.frameworks.insert(0, "numpy")
    if args.worker:
        row = run_kernel(args.kernels, args.worker, args.preset, args.frameworks,
                         args.budget, args.most)
        print(json.dumps(asdict(row)))
        return 0
    rows = []
    for name in args.only or kernel_names(args.kernels):
        rows.append(run_in_subprocess(args, name))
        ours = rows[-1].outcomes.get("psc", {})
        print(f"{name:28s} {status(ours):9s} first {fmt_seconds(ours.get('first_call')):>9s} "
              f"speed-up {fmt_ratio(speedup(rows[-1], 'psc')):>8s} "
              f"jax {fmt_ratio(speedup(rows[-1], 'jax')):>8s}  {ours.get('error') or ''}",
              flush=True)
    section = f"## NPBench, preset {args.preset} (`benchmarks/npbench.py`)\n\n" \
              f"{machine()}; kernels from `{os.path.basename(args.kernels)}`.\n\n" \
              f"{summary(rows, args.frameworks)}\n\n{table(rows, args.frameworks)}\n"
    if args.plot:
        plot(rows, args.frameworks, args.plot, args.preset)
        section += f"\n![NPBench speed-ups, preset {args.preset}]({os.path.basename(args.plot)})\n"
    print("\n" + section)
    if args.write:
        write_section(args.write, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
