"""Issue 18, the call path: byte order (2), typed static keys (3), array subclasses (4),
Python ints beyond int64 (5a), out of memory at run time (9b), error classes and call-site
locations (18), cache counters and cached build failures (20).

Every check is differential: the oracle is the same function run as plain Python/NumPy.
Each case runs in both orders where order matters: the first call of a signature takes
the Python path, later ones jaxlib's C++ dispatcher, which must never serve a call our
signatures would tell apart.
"""
from __future__ import annotations

import collections
import os
import pickle
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

from conftest import assert_same, marked_line
from runtime import StagedFunction
from runtime.client import XLACompileError, XLARuntimeError
from runtime.errors import (PSCError, PSCNameError, PSCOverflowError, PSCResourceError,
                            PSCShapeError, PSCSyntaxError, PSCTracedValueError, PSCTypeError,
                            PSCUnsupportedCallError, PSCValueError, SourceLocation)
from runtime.signature import Signature, StaticArg, signature_of, static_key
from transpiler import jit_ps

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


def marker_line(marker: str) -> int:
    return marked_line(HERE, marker)


def assert_at_marker(err: PSCError, marker: str) -> None:
    """``err`` points at the line of this file marked ``# marker``, and says so."""
    line = marker_line(marker)
    assert err.location is not None, str(err)
    assert (err.location.file, err.location.line) == (HERE, line), str(err)
    assert str(err).startswith(f"{HERE}:{line}:"), str(err)


def affine(x):
    return x * 2 + 1


def identity(x):
    return x


def total(p):
    return p["a"] * 2 + p["b"][0] - p["b"][1]


affine_ps = jit_ps(affine)   # module level: tests below build fresh ones where order matters


# --- 2: byte order ------------------------------------------------------------------------

NON_NATIVE = [">f8", ">f4", ">i8", ">i4", ">u2", ">c16", ">i2"] if sys.byteorder == "little" \
    else ["<f8", "<f4", "<i8", "<i4", "<u2", "<c16", "<i2"]


@pytest.mark.parametrize("dtype", NON_NATIVE)
@pytest.mark.parametrize("native_first", [True, False])
def test_non_native_byte_order_gives_numpys_values(dtype, native_first):
    f = jit_ps(affine)
    swapped = np.arange(5).astype(dtype)
    native = swapped.astype(swapped.dtype.newbyteorder("="))
    calls = [native, swapped] if native_first else [swapped, native]
    for _ in range(3):   # again and again: later calls meet the C++ dispatcher's cache
        for x in calls:
            assert_same(f(x), affine(x))
    # One executable serves both: the values count, not the byte order.
    assert f.cache_info().misses == 1


@pytest.mark.parametrize("native_first", [True, False])
def test_non_native_leaves_inside_pytrees(native_first):
    f = jit_ps(total)
    big = ">f8" if sys.byteorder == "little" else "<f8"
    x = np.linspace(0, 1, 4)
    native = {"a": x, "b": (x + 1, x * 3)}
    mixed = {"a": x.astype(big), "b": (x + 1, (x * 3).astype(big))}
    calls = [native, mixed] if native_first else [mixed, native]
    for _ in range(3):
        for p in calls:
            assert_same(f(p), total(p))


Pair = collections.namedtuple("Pair", "a b")


def pair_and_list(p, xs):
    return p.a * 2 + p.b - xs[0] * xs[1]


@pytest.mark.parametrize("native_first", [True, False])
def test_non_native_leaves_inside_named_tuples_and_lists(native_first):
    f = jit_ps(pair_and_list)
    big = ">i4" if sys.byteorder == "little" else "<i4"
    x = np.arange(4, dtype=np.int32)
    native = (Pair(x, x + 1), [x * 2, x - 7])
    mixed = (Pair(x.astype(big), x + 1), [x * 2, (x - 7).astype(big)])
    calls = [native, mixed] if native_first else [mixed, native]
    for _ in range(3):
        for args in calls:
            assert_same(f(*args), pair_and_list(*args))
    masked = np.ma.masked_array(x, mask=[0, 1, 0, 0])
    with pytest.raises(PSCTypeError) as info:
        f(Pair(x, masked), [x, x])
    assert "argument 'p'.b" in info.value.message


def test_non_native_scalar_array_and_keyword_argument():
    f = jit_ps(affine)
    big = ">i8" if sys.byteorder == "little" else "<i8"
    x = np.array(7, dtype=big)
    assert_same(f(np.array(7)), affine(np.array(7)))
    assert_same(f(x=x), affine(x))
    assert_same(f(x), affine(x))


def test_non_native_identity_keeps_values_in_native_order():
    # NumPy hands back the argument itself (big-endian); XLA's buffers are native.
    f = jit_ps(identity)
    big = ">f8" if sys.byteorder == "little" else "<f8"
    x = np.arange(3.0).astype(big)
    result = np.asarray(f(x))
    np.testing.assert_array_equal(result, identity(x))
    assert result.dtype == identity(x).dtype.newbyteorder("=")


def test_non_native_lower_and_compile_share_the_native_signature():
    f = jit_ps(affine)
    big = ">f4" if sys.byteorder == "little" else "<f4"
    x = np.ones(3, np.float32)
    assert f.lower(x.astype(big)) == f.lower(x)
    assert f.compile(x.astype(big)) is f.compile(x)
    assert f.cache_info().misses == 1
    # The executable itself takes the big-endian array too, converting its values.
    (result,) = f.compile(x)(x.astype(big) + 2)
    assert_same(result, affine(x.astype(big) + 2))


# --- 3: static arguments keyed by type ----------------------------------------------------

def kind_of(x, k):
    if isinstance(k, bool):
        return x + 100
    if isinstance(k, float):
        return x + 10
    return x + k


def counted(x, k):
    return x + len(list(range(k)))


def first_kind(x, k):
    if isinstance(k[0], bool):
        return x + 100
    if isinstance(k[0], float):
        return x + 10
    return x + k[0] + k[1]


def nested_kind(x, k):
    if isinstance(k[0][0], float):
        return x - 1
    return x + 1


@pytest.mark.parametrize("order", [(1, 1.0, True), (True, 1.0, 1), (1.0, 1, True)])
@pytest.mark.parametrize("by_keyword", [False, True])
def test_equal_static_values_of_different_types_build_apart(order, by_keyword):
    f = jit_ps(kind_of, static_argnames=("k",))
    x = np.arange(3.0)
    for _ in range(2):
        for k in order:
            got = f(x, k=k) if by_keyword else f(x, k)
            assert_same(got, kind_of(x, k))
    assert f.cache_info().misses == 3


def test_static_float_where_python_needs_an_int_raises_as_python_does():
    f = jit_ps(counted, static_argnames=("k",))
    x = np.zeros(2)
    assert_same(f(x, 2), counted(x, 2))
    with pytest.raises(TypeError):
        counted(x, 2.0)
    with pytest.raises(TypeError):   # not the cached k=2 result
        f(x, 2.0)
    assert_same(f(x, 2), counted(x, 2))


@pytest.mark.parametrize("order", [((1, 2), (1.0, 2), (True, 2)),
                                   ((True, 2), (1, 2), (1.0, 2)),
                                   ((1.0, 2), (True, 2), (1, 2))])
@pytest.mark.parametrize("static", ["argnames", "argnums"])
def test_static_tuples_are_keyed_by_their_elements_types(order, static):
    options = {"static_argnames": ("k",)} if static == "argnames" else {"static_argnums": (1,)}
    f = jit_ps(first_kind, **options)
    x = np.arange(2.0)
    for _ in range(3):   # later rounds are C++ dispatcher hits: they must stay apart too
        for k in order:
            assert_same(f(x, k), first_kind(x, k))
    assert f.cache_info().misses == 3


def test_nested_static_tuples_and_keyword_calls():
    f = jit_ps(nested_kind, static_argnames=("k",))
    x = np.arange(2.0)
    for _ in range(2):
        for k in [((1,), 2), ((1.0,), 2)]:
            assert_same(f(x, k=k), nested_kind(x, k))
            assert_same(f(x, k), nested_kind(x, k))
    assert f.cache_info().misses == 2


def test_static_keys_are_frozen_dataclasses_with_types():
    assert static_key(1) != static_key(1.0) != static_key(True)
    assert static_key((1, (2,))) != static_key((1, (2.0,)))
    assert static_key((1, (2,))) == static_key((1, (2,)))
    point = collections.namedtuple("point", "a b")
    assert static_key(point(1, 2)) != static_key((1, 2))
    sig_int, _ = signature_of((np.ones(2),), (("k", 1),))
    sig_float, _ = signature_of((np.ones(2),), (("k", 1.0),))
    assert sig_int != sig_float
    assert isinstance(sig_int, Signature) and sig_int.static == (StaticArg("k", static_key(1), 1),)
    with pytest.raises(AttributeError):
        sig_int.static[0].value = 2   # frozen


def test_unhashable_static_tuple_element_is_a_psc_type_error():
    f = jit_ps(first_kind, static_argnames=("k",))
    with pytest.raises(PSCTypeError) as info:
        f(np.ones(2), ([1], 2))   # static-unhashable
    assert isinstance(info.value, TypeError)
    assert "hashable" in info.value.message


# --- 4: ndarray subclasses ----------------------------------------------------------------

def masked_sum(x):
    return np.sum(x)


def row_sums(x):
    return x.sum(axis=1)


class Tagged(np.ndarray):
    """A user subclass: its meaning is unknown to the transpiler."""


SUBCLASS_CASES = {
    "masked": (masked_sum, lambda: np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]),
               "mask"),
    "matrix": (row_sums, lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]), "np.asarray"),
    "user": (masked_sum, lambda: np.arange(3.0).view(Tagged), "np.asarray"),
}


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("case", sorted(SUBCLASS_CASES))
@pytest.mark.parametrize("plain_first", [False, True])
def test_array_subclasses_are_refused_naming_the_argument(case, plain_first):
    fn, make, hint_word = SUBCLASS_CASES[case]
    f = jit_ps(fn)
    value = make()
    plain = np.asarray(value)
    if plain_first:   # the C++ dispatcher now knows this shape and dtype
        for _ in range(2):
            assert_same(f(plain), fn(plain))
    with pytest.raises(PSCTypeError) as info:
        f(value)   # subclass-call
    err = info.value
    assert isinstance(err, TypeError)
    assert "argument 'x'" in err.message and type(value).__name__ in err.message
    assert hint_word in err.hint
    assert_at_marker(err, "subclass-call")


def test_array_subclass_inside_a_pytree_is_refused_with_its_path():
    f = jit_ps(total)
    x = np.ones(2)
    assert_same(f({"a": x, "b": (x, x)}), total({"a": x, "b": (x, x)}))
    masked = np.ma.masked_array(x, mask=[1, 0])
    with pytest.raises(PSCTypeError) as info:
        f({"a": x, "b": (x, masked)})
    assert "argument 'p'['b'][1]" in info.value.message


@pytest.mark.parametrize("plain_first", [False, True])
def test_memmap_is_plain_data_and_accepted(tmp_path, plain_first):
    # np.memmap only says where the data lives: NumPy computes with it as with the array.
    path = tmp_path / "data.bin"
    mapped = np.memmap(path, dtype=np.float64, mode="w+", shape=(2, 3))
    mapped[:] = np.arange(6.0).reshape(2, 3)
    f, g = jit_ps(affine), jit_ps(row_sums)
    plain = np.array(mapped)
    for _ in range(2):
        calls = [plain, mapped] if plain_first else [mapped, plain]
        for x in calls:
            assert_same(f(x), np.asarray(affine(x)))
            assert_same(g(x), np.asarray(row_sums(x)))


# --- 5a: Python ints beyond int64 ---------------------------------------------------------

def halve(x):
    return x // 2


@pytest.mark.parametrize("value", [2**63, -2**63 - 1, 2**64, 10**30])
@pytest.mark.parametrize("compiled_first", [False, True])
def test_python_int_beyond_int64_is_an_overflow_error(value, compiled_first):
    f = jit_ps(halve)
    if compiled_first:   # weak int64 is compiled; the C++ side has it too
        for _ in range(2):
            assert_same(f(5), np.asarray(halve(5)))
    with pytest.raises(PSCOverflowError) as info:
        f(value)   # overflow-call
    err = info.value
    assert isinstance(err, OverflowError)
    assert str(value) in err.message and "int64" in err.message
    assert_at_marker(err, "overflow-call")


@pytest.mark.parametrize("value", [2**63 - 1, -2**63, 2**62, -5])
def test_python_ints_at_the_int64_bounds_are_traced_exactly(value):
    f = jit_ps(halve)
    assert_same(f(value), np.asarray(halve(value)))


def test_python_int_beyond_int64_in_a_pytree_names_its_path():
    f = jit_ps(total)
    with pytest.raises(PSCOverflowError) as info:
        f({"a": 1, "b": (2, 2**70)})
    assert "argument 'p'['b'][1]" in info.value.message


# --- 9b: out of memory at run time --------------------------------------------------------

OOM_SCRIPT = textwrap.dedent('''
    import resource, sys
    import numpy as np
    from runtime.errors import PSCResourceError
    from transpiler import jit_ps

    def outer(x):
        return np.outer(x, x)

    def outer_loop(x, n):
        y = np.outer(x, x)
        i = 0
        while i < n:
            y = y + 1
            i = i + 1
        return y

    f, g = jit_ps(outer), jit_ps(outer_loop)
    small = np.ones(3)
    assert (np.asarray(f(small)) == np.outer(small, small)).all()
    if sys.argv[1] == "limit":   # address space: what the process has now, plus 1 GiB
        with open("/proc/self/status") as status:
            vm = [int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize")][0]
        limit = vm + 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        x = np.ones(20_000)      # 3.2 GB of results
    else:
        x = np.ones(1_000_000)   # 8 TB of results
    for fn, args in [(f, (x,)), (f, (x,)), (g, (x, 2))]:
        try:
            result = fn(*args)
            np.asarray(result)
            print("NO ERROR")
        except PSCResourceError as err:
            assert isinstance(err, MemoryError)
            print("RESOURCE", fn.__name__, fn.__name__ + ":" in err.message,
                  err.location is not None and err.location.file == __file__)
    print("MISSES", f.cache_info().misses)
    assert (np.asarray(f(small)) == np.outer(small, small)).all()
    print("ALIVE")
''')


@pytest.mark.parametrize("mode", ["huge", "limit"])
def test_out_of_memory_at_run_time_is_a_psc_error(tmp_path, mode):
    script = tmp_path / "oom.py"
    script.write_text(OOM_SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script), mode], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines.count("RESOURCE outer True True") == 2, proc.stdout
    assert lines.count("RESOURCE outer_loop True True") == 1, proc.stdout
    # Two signatures compiled (small, big): running out of memory keeps the program.
    assert "MISSES 2" in lines and lines[-1] == "ALIVE", proc.stdout


# --- 18: error classes, call-site locations ------------------------------------------------

@pytest.mark.parametrize("cls, builtin", [
    (PSCTypeError, TypeError), (PSCValueError, ValueError), (PSCShapeError, ValueError),
    (PSCOverflowError, OverflowError), (PSCSyntaxError, SyntaxError),
    (PSCNameError, NameError), (PSCUnsupportedCallError, NotImplementedError),
    (PSCTracedValueError, TypeError), (PSCResourceError, MemoryError),
    (XLACompileError, RuntimeError), (XLARuntimeError, RuntimeError)])
def test_each_psc_error_is_its_builtin_and_keeps_its_message(cls, builtin):
    location = SourceLocation("model.py", 3, 4, "    y = f(x)\n")
    err = cls("something is wrong", location, hint="do this instead")
    assert isinstance(err, PSCError) and isinstance(err, builtin)
    text = str(err)
    assert text.startswith("model.py:3:5: ") and "something is wrong" in text
    assert text.endswith("hint: do this instead")
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is cls and str(copy) == text
    assert (copy.message, copy.location, copy.hint) == (err.message, location, err.hint)
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise err from inner
    except builtin as caught:   # the plain-Python except clause catches it
        assert caught is err and isinstance(caught.__cause__, KeyError)
        assert str(caught) == text


def test_psc_syntax_error_traceback_shows_the_users_line_and_hint():
    location = SourceLocation(HERE, marker_line("syntax-line"), 4)   # syntax-line
    err = PSCSyntaxError("try statements are not supported", location, hint="remove it")
    try:
        raise err
    except SyntaxError:
        shown = "".join(traceback.format_exc())
    assert f'File "{HERE}", line {location.line}' in shown
    assert "syntax-line" in shown
    assert "try statements are not supported" in shown and "hint: remove it" in shown


def two_args(x, k):
    return x + k


def looping(x, n):
    i = 0
    while i < n:
        x = x + 1
        i = i + 1
    return x


@pytest.mark.parametrize("compiled_first", [False, True])
def test_missing_argument_is_a_type_error_at_the_call(compiled_first):
    f = jit_ps(two_args)
    if compiled_first:
        for _ in range(2):
            assert_same(f(np.ones(2), 1.0), two_args(np.ones(2), 1.0))
    with pytest.raises(TypeError) as info:
        two_args(np.ones(2))
    with pytest.raises(PSCTypeError) as info:
        f(np.ones(2))   # missing-call
    err = info.value
    assert "two_args(x, k)" in err.message and "'k'" in err.message
    assert_at_marker(err, "missing-call")


def test_unexpected_and_surplus_arguments_are_type_errors_at_the_call():
    f = jit_ps(two_args)
    with pytest.raises(PSCTypeError) as info:
        f(np.ones(2), 1.0, w=3)   # unexpected-call
    assert "two_args(x, k)" in info.value.message and "'w'" in info.value.message
    assert_at_marker(info.value, "unexpected-call")
    with pytest.raises(PSCTypeError) as info:
        f(np.ones(2), 1.0, 2.0)   # surplus-call
    assert_at_marker(info.value, "surplus-call")


def test_call_errors_of_looping_functions_point_at_the_call():
    # Calls of a function with a loop run on a worker thread (runtime.interrupt).
    f = jit_ps(looping)
    assert_same(f(np.ones(2), 3), looping(np.ones(2), 3))
    with pytest.raises(PSCTypeError) as info:
        f(np.ones(2))   # loop-missing-call
    assert_at_marker(info.value, "loop-missing-call")
    with pytest.raises(PSCTypeError) as info:
        f("text", 3)   # loop-untraceable-call
    assert "argument 'x'" in info.value.message
    assert_at_marker(info.value, "loop-untraceable-call")


def test_untraceable_argument_names_the_argument_at_the_call():
    f = jit_ps(two_args)
    with pytest.raises(PSCTypeError) as info:
        f(np.ones(2), "one")   # untraceable-call
    assert "argument 'k'" in info.value.message and "str" in info.value.message
    assert_at_marker(info.value, "untraceable-call")


def test_build_errors_keep_their_own_location():
    def bad(x):
        return x + np.ones(4)   # bad-line
    f = jit_ps(bad)
    with pytest.raises(PSCShapeError) as info:
        f(np.ones(3))
    assert isinstance(info.value, ValueError)
    assert_at_marker(info.value, "bad-line")


# --- 20: counters and cached failures -----------------------------------------------------

def test_hits_count_calls_the_cpp_dispatcher_serves():
    f = jit_ps(affine)
    x = np.ones(4)
    for _ in range(500):
        assert_same(f(x), affine(x))
    info = f.cache_info()
    assert (info.misses, info.hits) == (1, 499)
    f(np.ones(5))
    f(np.ones(4))
    info = f.cache_info()
    assert (info.misses, info.hits) == (2, 500)
    f.clear_cache()
    assert (f.cache_info().misses, f.cache_info().hits) == (0, 0)


def test_hits_count_python_path_calls_too():
    f = jit_ps(two_args)
    x = np.ones(3)
    for _ in range(10):   # keyword calls stay on the Python path
        assert_same(f(x, k=2.0), two_args(x, 2.0))
    assert (f.cache_info().misses, f.cache_info().hits) == (1, 9)


def test_failed_build_is_cached_and_raised_again_with_its_location():
    def shape_clash(x):   # (builds are counted by cache misses: PSC code cannot count them)
        return x + np.ones(4)   # clash-line
    f = jit_ps(shape_clash)
    errors = []
    for _ in range(40):
        with pytest.raises(PSCShapeError) as info:
            f(np.ones(3))
        errors.append(info.value)
    assert f.cache_info().misses == 1
    assert len({str(e) for e in errors}) == 1
    for err in errors:
        assert_at_marker(err, "clash-line")
    assert errors[0] is not errors[1]   # fresh objects: nothing accumulates on one
    depth = [len(traceback.extract_tb(e.__traceback__)) for e in errors]
    assert depth[1] == depth[-1]
    # Another signature still builds, and works.
    assert_same(f(np.ones(4)), np.ones(4) + np.ones(4))
    assert f.cache_info().misses == 2


def test_errors_outside_builds_are_not_cached():
    calls = []

    def build(b, x):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug, or an interrupt: not a property of the signature")
        return b.add(x, x)
    f = StagedFunction(build)
    with pytest.raises(RuntimeError):
        f(np.ones(2))
    assert_same(f(np.ones(2)), np.full(2, 2.0))
