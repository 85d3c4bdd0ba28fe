"""Purity (issue 11, item 1): a PSC function runs once per signature, while its program is
built, so a call with a side effect or a fresh result each time would be frozen into every
later call.  Such calls are refused as a `PSCError` at the call's line with a hint; pure
calls (the allow-list, `transpiler.pure`) and function-local imports run as in Python.

Differential where the function runs: the same function in plain Python and through
jit_ps.  Refusals: the class, the file:line in the message, the hint.
"""
from __future__ import annotations

import binascii
import functools
import inspect
import math
import operator
import os
import random
import sys
import time
import zlib
from random import random as random_function

import numpy as np
import pytest
from numpy.random import normal as numpy_normal

from conftest import assert_same, f64
from transpiler import (PSCError, PSCImpureCallError, PSCNameError, PSCSyntaxError,
                        PSCUnsupportedCallError, cli, jit_ps, pure)

COUNTER = []
STATE = {"calls": 0, "log": []}
SEEN = set()
COUNT = 0
CONFIG = {"scale": 3.0}
RNG = np.random.default_rng(0)
RANDOM_STATE = np.random.RandomState(0)
PY_RANDOM = random.Random(0)


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def refused(fn, cls, marker: str, words: str, hint: str | None, *args, static=(), at=None):
    """jit_ps(fn) (or its first call) raises ``cls`` at the line holding ``marker`` (in
    ``at``, default ``fn``), with ``words`` in the message and ``hint`` in the hint."""
    with pytest.raises(cls) as info:
        jit_ps(fn, static_argnames=static)(*args)
    err = info.value
    assert isinstance(err, PSCError)
    assert f"{__file__}:{_line_of(at or fn, marker)}:" in str(err), str(err)
    assert words in err.message, err.message
    if hint is not None:
        assert err.hint and hint in err.hint, err.hint
    return err


# --- impure calls: refused while the function is transpiled (static resolution) ----------

def numpy_random_normal(x):
    return x + np.random.normal(size=x.shape)


def numpy_random_generator(x):
    g = np.random.default_rng(0)
    return x + g.normal(size=x.shape)


def numpy_random_imported_name(x):
    return x + numpy_normal(size=x.shape)


def python_random(x):
    return x + random.random()


def python_random_imported_name(x):
    return x * random_function()


def clock(x):
    return x + time.time()


def perf_counter(x):
    return x * time.perf_counter()


def environment(x):
    return x * len(os.getcwd())


def prints(x):
    y = x * 2.0
    print(y)
    return y


def opens(x):
    open("/dev/null").close()
    return x


def reads_input(x):
    return x * float(input())


def local_random_import(x):
    import random
    return x + random.random()


def local_numpy_random_import(x):
    from numpy import random as npr
    return x + npr.uniform(size=x.shape)


STATIC_IMPURE = [
    # (function, marker, words in the message, words in the hint)
    (numpy_random_normal, "np.random.normal", "np.random.normal draws random numbers",
     "pass them in as an argument"),
    (numpy_random_generator, "default_rng", "np.random.default_rng draws random numbers",
     "pass them in as an argument"),
    (numpy_random_imported_name, "numpy_normal", "np.random.normal draws random numbers",
     "pass them in as an argument"),
    (python_random, "random.random", "random.random draws random numbers", "argument"),
    (python_random_imported_name, "random_function", "random.random draws random",
     "argument"),
    (clock, "time.time", "time.time reads a clock", "outside the jit_ps function"),
    (perf_counter, "time.perf_counter", "time.perf_counter reads a clock", "outside"),
    (environment, "getcwd", "os.getcwd has side effects", "outside"),
    (prints, "print(y)", "print() does I/O", "transpiler.debug_print(fmt, *args)"),
    (opens, "open(", "open() does file I/O", "outside"),
    (reads_input, "input()", "input() reads from the user", "outside"),
    (local_random_import, "random.random", "random.random draws random numbers",
     "argument"),
    (local_numpy_random_import, "npr.uniform", "np.random.uniform draws random numbers",
     "argument"),
]


@pytest.mark.parametrize("fn, marker, words, hint", STATIC_IMPURE,
                         ids=[case[0].__name__ for case in STATIC_IMPURE])
def test_impure_calls_are_refused_at_definition(fn, marker, words, hint):
    with pytest.raises(PSCImpureCallError) as info:
        jit_ps(fn)            # refused before anything runs: no call needed
    assert f"{__file__}:{_line_of(fn, marker)}:" in str(info.value)
    refused(fn, PSCImpureCallError, marker, words, hint, f64(1.0, 2.0))


def test_impure_call_error_is_an_unsupported_call_error():
    err = refused(clock, PSCImpureCallError, "time.time", "time.time", None, f64(1.0))
    assert isinstance(err, PSCUnsupportedCallError) and isinstance(err, NotImplementedError)
    assert "impure call" in str(err)


# --- impure calls the resolver cannot see: refused while building -------------------------

def noise_from_argument(x, rng):
    return x + rng.normal(size=x.shape)


def noise_from_global_generator(x):
    return x + RNG.standard_normal(x.shape)


def noise_from_global_random_state(x):
    return x + RANDOM_STATE.uniform(size=x.shape)


def noise_from_python_random(x, r):
    return x * r.random()


def noise_from_local_alias(x, rng):
    draw = rng.normal
    return x + draw(size=x.shape)


def make_closure():
    generator = np.random.default_rng(1)

    def noise_from_closure(x):
        return x + generator.normal(size=x.shape)
    return noise_from_closure


def test_generator_passed_as_static_argument_is_refused_at_its_call():
    refused(noise_from_argument, PSCImpureCallError, "rng.normal",
            "np.random.Generator.normal draws random numbers", "argument",
            f64(1.0, 2.0), np.random.default_rng(0), static=("rng",))


def test_generator_method_through_a_local_alias_is_refused():
    refused(noise_from_local_alias, PSCImpureCallError, "draw(",
            "np.random.Generator.normal draws random numbers", "argument",
            f64(1.0, 2.0), np.random.default_rng(0), static=("rng",))


def test_python_random_instance_passed_as_argument_is_refused():
    refused(noise_from_python_random, PSCImpureCallError, "r.random",
            "random.Random.random draws random numbers", "argument",
            f64(1.0), random.Random(0), static=("r",))


@pytest.mark.parametrize("fn, marker, words", [
    (noise_from_global_generator, "RNG.standard_normal",
     "np.random.Generator.standard_normal draws random numbers"),
    (noise_from_global_random_state, "RANDOM_STATE.uniform",
     "np.random.RandomState.uniform draws random numbers"),
    (make_closure(), "generator.normal", "np.random.Generator.normal draws random numbers"),
], ids=["global_generator", "global_random_state", "closure_generator"])
def test_generator_from_globals_and_closures_is_refused(fn, marker, words):
    refused(fn, PSCImpureCallError, marker, words, "argument", f64(1.0, 2.0))


def test_random_numbers_passed_in_match_numpy():
    """The hint's advice: draw outside, pass in: every call sees its own numbers."""
    def add_noise(x, noise):
        return x + noise
    compiled = jit_ps(add_noise)
    x = f64(1.0, 2.0, 3.0)
    for seed in range(3):
        noise = np.random.default_rng(seed).normal(size=3)
        assert_same(compiled(x, noise), add_noise(x, noise))


# --- mutation of globals, closure cells and arguments ----------------------------------------

def appends_to_global(x):
    COUNTER.append(1)
    return x * 2.0


def augments_global_dict(x):
    STATE["calls"] += 1
    return x * 2.0


def appends_to_global_dict_entry(x):
    STATE["log"].append(x)
    return x


def adds_to_global_set(x):
    SEEN.add(1)
    return x


def mutates_global_through_alias(x):
    seen = COUNTER
    seen.extend([1, 2])
    return x


def mutates_argument_list(x, items):
    items.append(3)
    return x * len(items)


def pops_argument_dict(x, options):
    scale = options.pop("scale")
    return x * scale


def counts_global(x):
    COUNT += 1   # noqa: F821  (Python: UnboundLocalError)
    return x * COUNT


def make_closure_mutation():
    calls = []

    def mutates_closure_cell(x):
        calls.append(x)
        return x
    return mutates_closure_cell


MUTATIONS = [
    (appends_to_global, "COUNTER.append", PSCSyntaxError, "COUNTER", "copy it"),
    (augments_global_dict, 'STATE["calls"]', PSCSyntaxError, "STATE", "copy it"),
    (appends_to_global_dict_entry, 'STATE["log"]', PSCSyntaxError, "STATE", "copy it"),
    (adds_to_global_set, "SEEN.add", PSCSyntaxError, "SEEN", "copy it"),
    (mutates_global_through_alias, "seen.extend", PSCSyntaxError, "seen", "copy it"),
    (make_closure_mutation(), "calls.append", PSCSyntaxError,
     "PSC functions may not modify globals", "copy it"),
]


@pytest.mark.parametrize("fn, marker, cls, words, hint", MUTATIONS,
                         ids=[case[0].__name__ for case in MUTATIONS])
def test_mutating_globals_and_closures_is_refused(fn, marker, cls, words, hint):
    before = (list(COUNTER), dict(STATE), set(SEEN))
    refused(fn, cls, marker, words, hint, f64(1.0, 2.0))
    assert (COUNTER, STATE, SEEN) == before    # nothing ran


def test_mutating_an_argument_container_is_refused():
    refused(mutates_argument_list, PSCSyntaxError, "items.append", "argument 'items'",
            "copy it", f64(1.0), (1, 2), static=("items",))
    refused(pops_argument_dict, PSCSyntaxError, "options.pop", "argument 'options'",
            "copy it", f64(1.0), {"scale": 2.0})


def test_augmenting_a_module_variable_is_a_name_error_at_the_line():
    with pytest.raises(UnboundLocalError):     # plain Python
        counts_global(f64(1.0))
    err = refused(counts_global, PSCNameError, "COUNT +=", "UnboundLocalError",
                  "pass COUNT in as an argument", f64(1.0))
    assert isinstance(err, NameError)


def local_containers(x):
    out = []
    for k in range(3):
        out.append(x * k)
    table = {}
    table.update({"a": 1.0})
    table.setdefault("b", 2.0)
    names = set()
    names.add("x")

    def push(v):
        out.append(v)      # the enclosing PSC function's own list: build-time Python
    push(x + 1.0)
    out.extend([x, x])
    last = out.pop()
    return sum(out) + last * table["a"] + table["b"] + len(names)


def copies_then_mutates(x, items):
    items = list(items)
    items.append(4)
    local = list(COUNTER)
    local.append(1)
    return x * len(items) + len(local)


def test_local_containers_may_be_mutated():
    x = f64(1.0, 2.0)
    assert_same(jit_ps(local_containers)(x), local_containers(x))
    assert_same(jit_ps(copies_then_mutates, static_argnames="items")(x, (1, 2)),
                copies_then_mutates(x, (1, 2)))


# --- pure calls: the allow-list and transpiler.pure ----------------------------------------

def pure_static_calls(x):
    n = functools.reduce(operator.mul, x.shape, 1)
    scale = math.sqrt(n) + math.pi + abs(-2) + max(x.shape) + min(1, 2)
    order = sorted(zip(range(3), [3, 1, 2]), key=operator.itemgetter(1))
    flags = [isinstance(v, tuple) for v in order]
    total = float(sum(i for i, _ in order)) + len(flags) + int(all(flags))
    partial = functools.partial(operator.add, 1.0)
    return x * scale + partial(total) + np.float64(CONFIG.get("scale"))


def test_pure_builtins_math_operator_functools_match_python():
    x = np.arange(6.0).reshape(2, 3)
    assert_same(jit_ps(pure_static_calls)(x), pure_static_calls(x))


def static_method_of_argument(x, sizes):
    return x * sizes.index(3) + sizes.count(1)


def test_pure_methods_of_static_arguments_run():
    x = f64(1.0, 2.0)
    assert_same(jit_ps(static_method_of_argument, static_argnames="sizes")(x, (1, 3, 1)),
                static_method_of_argument(x, (1, 3, 1)))


def unvetted_c_function(x):
    return x * zlib.adler32(b"psc")


def vetted_c_function(x):
    return x * binascii.crc_hqx(b"psc", 0)


def test_an_opaque_function_not_known_pure_is_refused():
    refused(unvetted_c_function, PSCImpureCallError, "zlib.adler32",
            "not known to be pure", "transpiler.pure", f64(1.0))


def test_pure_marks_an_opaque_function():
    assert pure(binascii.crc_hqx) is binascii.crc_hqx     # returns what it marks
    x = f64(1.0, 2.0)
    assert_same(jit_ps(vetted_c_function)(x), vetted_c_function(x))


@pure
def memoized_scale(n):
    return float(n) * 0.5


def uses_marked_python_helper(x):
    return x * memoized_scale(x.shape[0])


def test_pure_as_a_decorator_returns_the_function():
    x = f64(1.0, 2.0, 3.0)
    assert memoized_scale.__psc_pure__ is True
    assert_same(jit_ps(uses_marked_python_helper)(x), uses_marked_python_helper(x))


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, v):
        return v * self.factor


SCALER = Scaler(2.5)


def calls_python_callable_object(x):
    return SCALER(x) + SCALER(1.0)


def test_callable_objects_with_python_call_are_inlined():
    x = f64(1.0, 2.0)
    assert_same(jit_ps(calls_python_callable_object)(x), calls_python_callable_object(x))


def every_call_the_same(x):
    return x * 2.0


def test_compiled_results_do_not_depend_on_build_time_state():
    """The contract the refusals protect: two calls with the same signature agree with
    plain Python each time (nothing build-time leaks into later calls)."""
    compiled = jit_ps(every_call_the_same)
    for value in (1.0, 2.0):
        assert_same(compiled(f64(value)), every_call_the_same(f64(value)))


# --- function-local imports: static bindings ------------------------------------------------

def local_math_import(x):
    from math import pi
    import math
    return x * pi + math.sqrt(2.0)


def local_numpy_import(x):
    import numpy as np
    import numpy
    return np.sin(x) + numpy.cos(x) * np.float32(2.0)


def local_numpy_submodule_import(x):
    from numpy.linalg import norm
    from numpy import linalg
    import numpy.linalg as la
    return norm(x) + linalg.norm(x) * la.norm(x)


def local_import_in_nested_function(x):
    def helper(v):
        import numpy as onp
        from operator import mul
        return mul(onp.tanh(v), 2.0)
    return helper(x) + 1.0


def local_import_with_traced_control_flow(x, n):
    import numpy as np
    total = np.zeros_like(x)
    for i in range(n):
        if np.sum(total) < 10.0:
            total = total + np.exp(x) * i
    return total


def local_import_of_transpiler(x):
    from transpiler import grad
    return grad(lambda v: (v ** 2).sum())(x)


LOCAL_IMPORTS = [local_math_import, local_numpy_import, local_numpy_submodule_import,
                 local_import_in_nested_function]


@pytest.mark.parametrize("fn", LOCAL_IMPORTS, ids=lambda f: f.__name__)
def test_local_imports_match_plain_python(fn):
    x = f64(0.5, 1.0, 2.0)
    assert_same(jit_ps(fn)(x), fn(x))


def test_local_numpy_import_works_in_staged_control_flow():
    x = f64(0.5, 1.0)
    for n in (0, 3, 6):
        assert_same(jit_ps(local_import_with_traced_control_flow)(x, n),
                    local_import_with_traced_control_flow(x, n))


def test_local_import_of_a_transform():
    x = f64(0.5, 1.0, 2.0)
    assert_same(jit_ps(local_import_of_transpiler)(x), 2.0 * x)


def imports_in_branch(x, flag):
    if flag:
        import math
        return x * math.pi
    return x


def relative_import(x):
    from . import conftest   # noqa: F401
    return x


def test_import_inside_a_block_is_refused():
    refused(imports_in_branch, PSCSyntaxError, "import math", "inside a loop, branch",
            "top of the function body", f64(1.0), True, static=("flag",))


def test_relative_import_is_refused():
    refused(relative_import, PSCSyntaxError, "from . import", "relative import",
            "module level", f64(1.0))


CLI_SOURCE = '''\
import numpy as np
from transpiler import jit_ps

COUNTER = []


@jit_ps
def scaled(x):
    import math
    import numpy as np
    from math import pi
    return np.sin(x) * pi + math.sqrt(2.0)
'''

CLI_IMPURE = {
    "np.random.normal": "    return x + np.random.normal(size=x.shape)\n",
    "random.random": "    import random\n    return x + random.random()\n",
    "COUNTER.append": "    COUNTER.append(1)\n    return x\n",
}


def test_cli_keeps_local_imports_and_binds_numpy_to_the_mirror(tmp_path, capsys):
    source = tmp_path / "local_imports_model.py"
    source.write_text(CLI_SOURCE)
    out = tmp_path / "out"
    assert cli.main([str(source), "-o", str(out)]) == 0
    generated = (out / "local_imports_model_psc.py").read_text()
    body = generated[generated.index("def build_scaled"):]
    assert "import math" in body and "from math import pi" in body
    assert "import runtime.numpy_api as np" in body
    sys.path.insert(0, str(out))
    try:
        module = __import__("local_imports_model_psc")
    finally:
        sys.path.remove(str(out))
    from runtime import StagedFunction
    x = f64(0.5, 1.0)
    expected = np.sin(x) * math.pi + math.sqrt(2.0)
    assert_same(StagedFunction(module.build_scaled, name="scaled")(x), expected)


@pytest.mark.parametrize("call", list(CLI_IMPURE), ids=list(CLI_IMPURE))
def test_cli_refuses_impure_calls_statically(tmp_path, capsys, call):
    source = tmp_path / "impure_model.py"
    body = CLI_IMPURE[call]
    source.write_text("import numpy as np\nfrom transpiler import jit_ps\n\nCOUNTER = []"
                      f"\n\n\n@jit_ps\ndef noisy(x):\n{body}")
    code = cli.main([str(source), "-o", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 2
    line = 9 + next(k for k, text in enumerate(body.splitlines()) if call in text)
    assert f"{source}:{line}:" in captured.err + captured.out, captured
    assert call in captured.err + captured.out


# --- Python helpers called with static arguments run as Python: checked all the same -------

def draw_noise(shape):
    return np.random.normal(size=shape)


def noise_through_static_helper(x):
    return x + draw_noise(x.shape)


def count_call(n):
    COUNTER.append(n)
    return n


def indirect(n):
    return count_call(n) * 2


def mutation_through_nested_helpers(x):
    return x * indirect(len(x))


def static_helper(n):
    try:                         # any syntax: the helper runs as Python
        table = {k: k * k for k in range(n)}
    except KeyError:
        table = {}
    table.update({n: 0})
    return float(sum(table.values()))


def pure_static_helper(x):
    return x * static_helper(x.shape[0])


def test_impure_helper_called_with_static_arguments_is_refused():
    refused(noise_through_static_helper, PSCImpureCallError, "np.random.normal",
            "np.random.normal draws random numbers", "argument", f64(1.0, 2.0),
            at=draw_noise)
    before = list(COUNTER)
    refused(mutation_through_nested_helpers, PSCSyntaxError, "COUNTER.append", "COUNTER",
            "copy it", f64(1.0, 2.0), at=count_call)
    assert COUNTER == before


def test_pure_helper_called_with_static_arguments_runs_as_python():
    x = f64(1.0, 2.0, 3.0)
    assert_same(jit_ps(pure_static_helper)(x), pure_static_helper(x))


def numpy_random_through_a_local_module(x):
    r = np.random
    return x + r.normal(size=x.shape)


def test_numpy_random_reached_through_a_local_is_refused_while_building():
    refused(numpy_random_through_a_local_module, PSCImpureCallError, "r.normal",
            "np.random.normal draws random numbers", "argument", f64(1.0, 2.0))
