"""The front end on a corpus of plain functions: ``jit_ps(fn)(*args)`` equals ``fn(*args)``.

Every function in `corpus.straightline` is plain Python + NumPy, so calling it directly is
the oracle: same values (within tolerance), same dtypes (NumPy 2 promotion, weak Python
scalars), same structure (tuples, lists, dicts).  One difference is by design: every
result leaf comes back as an array, so a Python number the plain function returns (a
``len``, ``x.size``, a loop counter, an untouched ``0.0``) is compared as
``np.asarray(number)`` (`_expected_leaf`).

Each case's ``jit_ps`` function is made once per module (`_jitted`), so the
compilations are shared by the value tests and the cache test of that case.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import re
import textwrap
from typing import Callable

import numpy as np
import pytest

from conftest import assert_same
from corpus import straightline as C
from transpiler import PSCError, jit_ps

# --- inputs -------------------------------------------------------------------------------

_rng = np.random.default_rng(20240611)


def f32(*shape):
    return np.asarray(_rng.standard_normal(shape), dtype=np.float32)


def f64(*shape):
    return np.asarray(_rng.standard_normal(shape), dtype=np.float64)


def ints(*shape, lo=-9, hi=10, dtype=np.int32):
    return _rng.integers(lo, hi, size=shape).astype(dtype)


def nonzero_ints(*shape, dtype=np.int32):
    magnitude = _rng.integers(1, 6, size=shape)
    return (magnitude * _rng.choice([-1, 1], size=shape)).astype(dtype)


def away_from_zero(*shape, dtype=np.float64):
    magnitude = _rng.uniform(0.5, 2.0, size=shape)
    return (magnitude * _rng.choice([-1, 1], size=shape)).astype(dtype)


def positive(*shape, lo=0.5, hi=10.0, dtype=np.float64):
    return _rng.uniform(lo, hi, size=shape).astype(dtype)


def mask(*shape):
    return _rng.random(shape) < 0.5


def mlp_params(sizes, dtype):
    return [(np.asarray(_rng.standard_normal((m, n)) / np.sqrt(m), dtype),
             np.asarray(_rng.standard_normal(n) * 0.1, dtype))
            for m, n in zip(sizes[:-1], sizes[1:])]


def one_hot_rows(n, k, dtype):
    return np.eye(k, dtype=dtype)[_rng.integers(0, k, size=n)]


def symmetric(n, dtype):
    a = _rng.standard_normal((n, n))
    return np.asarray(a + a.T + n * np.eye(n), dtype)


def adam_state(dtype):
    def tree(scale=1.0, absolute=False):
        leaves = {"w": _rng.standard_normal((3, 2)) * scale,
                  "b": _rng.standard_normal(2) * scale}
        return {k: np.asarray(np.abs(v) if absolute else v, dtype) for k, v in leaves.items()}
    return tree(), tree(), tree(0.1), tree(0.01, absolute=True)


# --- the table ----------------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    fn: Callable
    calls: list            # argument tuples
    static: tuple = ()     # static_argnames
    id: str = ""

    def __post_init__(self):
        self.id = self.id or self.fn.__name__


def case(fn, *calls, static=(), id=""):
    return Case(fn, list(calls), tuple(static), id)


CASES = [
    # operators
    case(C.arithmetic, (f32(3, 4), f32(3, 4)), (f64(5), f64(5)), (f32(2, 3), f64(3)),
         (f64(), f64()), (f32(0, 3), f32(3))),
    case(C.integer_arithmetic, (ints(4, 5), nonzero_ints(4, 5)),
         (ints(6, dtype=np.int64), nonzero_ints(6, dtype=np.int64)),
         (ints(), nonzero_ints())),
    case(C.bool_operators, (mask(3, 4), mask(3, 4)), (mask(5), mask(5)),
         (mask(0, 3), mask(0, 3))),
    case(C.float_floordiv_mod, (f32(10) * 3, away_from_zero(10, dtype=np.float32)),
         (f64(4, 3) * 3, away_from_zero(4, 3))),
    case(C.matmul_operator, (f32(3, 4), f32(4, 2), f32(4)), (f64(3, 4), f64(4, 2), f64(4)),
         (ints(3, 4), ints(4, 2), ints(4))),
    case(C.comparisons, (f32(3, 4), f32(3, 4)), (ints(6, lo=0, hi=3), ints(6, lo=0, hi=3)),
         (f64(), f64())),
    case(C.augmented_names, (f32(3, 4), f32(3, 4)), (f64(5), f64(5))),
    case(C.integer_augmented, (ints(7),), (ints(2, 3, dtype=np.int64),)),
    case(C.weak_scalar_promotion, (f32(4),), (f64(2, 2),), (ints(5),),
         (ints(dtype=np.int64),)),
    case(C.traced_python_scalar, (f32(3), 1.5), (f32(3), 2.5), (f32(3), np.float64(1.5)),
         (ints(3), 3), (f64(2, 2), np.float32(0.5))),
    case(C.mixed_precision, (f32(3), f64(3)), (ints(3), f32(3)),
         (ints(4), ints(4, dtype=np.int64)), (mask(3), f32(3))),
    # array methods and attributes
    case(C.array_method_reductions, (f32(3, 4),), (f64(4, 5),), (ints(3, 4),)),
    case(C.array_attributes, (f32(3, 4),), (f64(2, 5),), (ints(4, 3),)),
    case(C.array_method_shapes, (f32(2, 6), f32(6)), (f64(2, 6), f64(6)),
         (ints(2, 6), ints(6))),
    case(C.astype_casts, (f32(3, 4),), (f64(5),)),
    # subscripts
    case(C.basic_indexing, (f32(4, 5),), (f64(4, 5),), (ints(4, 5),)),
    case(C.traced_scalar_index, (f32(4, 5), 2), (f32(4, 5), 1), (f32(4, 5), np.int64(-1)),
         (f64(4, 5), np.int32(0)), (f64(4, 5), np.int32(-4))),
    case(C.integer_array_index, (f32(3, 4), np.array([0, 2, -1])),
         (f64(3, 4), np.array([[1, 0], [2, 2]], dtype=np.int32))),
    case(C.traced_mask_where, (f32(3, 4), mask(3, 4)), (f64(3, 4), mask(4))),
    case(C.local_setitem, (f32(5), 0.25), (f64(5), np.float64(-1.5)),
         (f32(6), np.asarray(0.5, np.float32))),
    case(C.setitem_traced_index, (f32(6), 3, 2.0), (f64(6), np.int32(0), np.float64(-1.0)),
         (f64(6), np.int32(5), np.float64(4.0))),
    case(C.setitem_2d, (f64(3),), (f32(3),)),
    case(C.setitem_fancy, (f32(6), np.array([4, 1, 0]), f32(3)),
         (f64(5), np.array([3, 0]), 2.0)),
    # pytrees
    case(C.mlp_predict, (mlp_params([4, 8, 3], np.float32), f32(5, 4)),
         (mlp_params([4, 8, 3], np.float64), f64(5, 4)),
         (mlp_params([2, 6, 6, 1], np.float64), f64(7, 2))),
    case(C.mlp_loss,
         (mlp_params([4, 8, 3], np.float32), (f32(5, 4), one_hot_rows(5, 3, np.float32))),
         (mlp_params([4, 8, 3], np.float64), (f64(6, 4), one_hot_rows(6, 3, np.float64)))),
    case(C.dict_params_layer, ({"w": f32(4, 3), "b": f32(3)}, f32(5, 4)),
         ({"w": f64(4, 3), "b": f64(3)}, f64(2, 4))),
    case(C.nested_pytree, ({"a": (f32(3), f32(3)), "b": [f32(2, 2), f64(2)]},),
         ({"a": (f64(2, 3), f64(3)), "b": [ints(4), f32()]},)),
    case(C.list_in_list_out, ([f32(3), f64(2, 2), ints(4)],), ([f32()],)),
    case(C.tuple_unpacking, ((f32(3), f32(3)), (f32(3), f32(3), f32(3))),
         ((f64(2, 2), f64(2)), (f64(2), f64(2), f64(2, 2)))),
    # comprehensions
    case(C.list_comprehensions, ([f32(3), f32(2, 2), f32()],), ([f64(4), f32(4), ints(4)],)),
    case(C.dict_comprehensions, ({"w1": f32(3, 2), "b1": f32(2), "w2": f64(2)},),
         ({"w": f64(2, 2), "bias": f64(2)},)),
    case(C.gram_matrix, ([f32(4), f32(4), f32(4)],), ([f64(2), f64(2)],)),
    # helpers, closures, lambdas, static functions
    case(C.standardize, (f32(5, 3),), (f64(4, 2),)),
    case(C.standardize_pair, (f32(5, 3), f32(6)), (f64(4, 2), f64(3, 3))),
    case(C.selu, (f32(3, 4),), (f64(7),)),
    case(C.selu_dense, (f32(4, 3), f32(3), f32(5, 4)), (f64(4, 3), f64(3), f64(2, 4))),
    case(C.selu_keywords, (f32(4, 3), f32(3), f32(5, 4)), (f64(4, 3), f64(3), f64(2, 4))),
    case(C.apply_closures, (f32(3, 2),), (f64(2),)),
    case(C.scale_by_3, (f32(3),), (f64(2, 2),), id="closure_scale_by_3"),
    case(C.affine_2d, (f32(4, 2),), (f64(2),), id="closure_affine_2d"),
    case(C.residual_square, (f32(3),), (f64(2, 2),), id="closure_residual_square"),
    case(C.local_lambdas, (f32(3),), (f64(2, 2),)),
    case(C.local_function, (f32(3), f32(3)), (f64(2), f64(2))),
    case(C.apply_static_fn, (C.SQUARE, f32(4)), (C.SOFTPLUS, f32(4)), (np.tanh, f32(4)),
         (C.relu, f64(3)), (C.scale_by_3, f32(4)), (C.PLUS_ONE, f32(4)),
         (C.MINUS_ONE, f32(4)), (C.SQUARE, f32(4) + 1), static=("fn",)),
    case(C.compose, (np.sin, C.SQUARE, f32(4)), (C.relu, C.MINUS_ONE, f64(3)),
         static=("f", "g")),
    case(C.map_fns, ((np.tanh, C.SQUARE, C.relu), f32(4)), ((C.halve,), f64(2)),
         static=("fns",)),
    case(C.module_constants, (f32(2),), (f64(2),), (f64(2, 3),)),
    # `if` on static values
    case(C.static_flag, (f32(3), True), (f32(3), False), (f64(3), True),
         static=("normalize",)),
    case(C.static_mode, (f32(4), "relu"), (f32(4), "tanh"), (f32(4), "identity"),
         static=("mode",)),
    case(C.shape_dispatch, (f32(5),), (f32(2, 3),), (f64(4, 3),)),
    case(C.optional_bias, (f32(5, 4), f32(4, 3), f32(3)), (f32(5, 4), f32(4, 3)),
         (f32(5, 4), f32(4, 3), None)),
    case(C.dtype_dispatch, (ints(5),), (f32(5),), (f64(3),)),
    case(C.dtype_compare, (f32(4),), (f64(4),)),
    # `for` over static containers and ranges
    # sum_over_list([]) returns the Python float 0.0: compared as a 0-d float64 array.
    case(C.sum_over_list, ([f32(3), f32(2, 2)],), ([f64(3)],), ([],)),
    case(C.range_over_shape, (f32(4, 3),), (ints(3, 2),), (f64(0, 3),)),
    case(C.power_iteration, (symmetric(4, np.float64), f64(4), 3),
         (symmetric(4, np.float64), f64(4), 6), (symmetric(3, np.float32), f32(3), 3),
         static=("n",)),
    case(C.enumerate_zip, ([f32(3), f32(3), f32(3)], [f32(3), f32(3), f32(3)]),
         ([f64(2)], [f64(2)])),
    case(C.static_range_loop, (f32(5),), (f64(3),)),
    case(C.running_means, (f32(4, 3),), (f64(3, 2),)),
    case(C.horner, (f32(5),), (f64(2, 3),), (f64(),)),
    case(C.gram_schmidt, (f64(5, 3),), (f32(4, 2),)),
    case(C.conv1d_valid, (f32(10), f32(3)), (f64(8), f64(2))),
    case(C.rnn_unrolled, ((f32(3, 3), f32(3, 2), f32(3)), [f32(2) for _ in range(4)], f32(3)),
         ((f64(3, 3), f64(3, 2), f64(3)), [f64(2) for _ in range(2)], f64(3))),
    # explicit primitives (their reference meaning is the oracle)
    # halving_count's counter starts as the Python int 0: compared as a 0-d int64 array.
    case(C.halving_count, (np.abs(f32(3)) * 10,), (np.abs(f64(2, 2)) * 100,),
         (np.abs(f64()) * 40,)),
    case(C.newton_sqrt, (positive(4),), (positive(3, dtype=np.float32),)),
    case(C.fori_power, (symmetric(4, np.float64), f64(4), 3),
         (symmetric(4, np.float64), f64(4), 6), static=("n",)),
    case(C.fori_traced_bound, (f32(3), 3), (f32(3), 5), (f64(2), 0)),
    case(C.fori_uses_index, (f32(3),), (f64(2),)),
    case(C.cond_branches, (np.abs(f32(3)),), (-np.abs(f32(3)),), (f64(2, 2),)),
    case(C.cond_two_operands, (f32(3) + 1, f32(3) - 1), (f32(3) - 1, f32(3) + 1)),
    case(C.cond_static_pred, (f32(3), True), (f32(3), False), static=("flag",)),
    case(C.switch_activation, (0, f32(4)), (1, f32(4)), (2, f32(4)), (7, f32(4)),
         (-3, f32(4)), (np.int32(1), f32(4))),
    # NumPy coverage
    case(C.ufuncs, (f32(3, 4), f32(3, 4)), (f64(5), f64(5)), (f64(), f64())),
    case(C.logical_functions,
         (mask(3, 4), mask(3, 4), np.where(mask(3, 4), f32(3, 4), 0).astype(np.float32)),
         (mask(5), mask(5), np.where(mask(5), f64(5), 0.0))),
    case(C.where_select, (f32(3, 4), f32(3, 4)), (f64(5), f64(5)), (ints(6), ints(6))),
    case(C.products, (f32(3, 4), f32(4, 3), f32(4), f32(5)),
         (f64(3, 4), f64(4, 3), f64(4), f64(5)),
         (ints(3, 4), ints(4, 3), ints(4), ints(5))),
    case(C.einsums, (f32(3, 4), f32(4, 5), f32(2, 3, 4), f32(4)),
         (f64(3, 4), f64(4, 5), f64(2, 3, 4), f64(4))),
    case(C.norms_and_traces, (f32(3, 3), f32(4)), (f64(3, 3), f64(4))),
    case(C.reductions, (f32(3, 4),), (f64(2, 5),), (ints(3, 4),)),
    case(C.scans_and_sorts, (f32(3, 4),), (f64(4, 4),),
         (_rng.permutation(12).reshape(3, 4).astype(np.int32),)),
    case(C.shape_functions, (f32(2, 3, 4),), (ints(2, 3, 4),)),
    case(C.joining, (f32(2, 3), f32(2, 3)), (f64(2, 3), f64(2, 3)), (f32(2, 3), f64(2, 3))),
    case(C.creation, (f32(3),), (f64(4),), (ints(2),)),
    case(C.creation_with_dtype, (f32(2),), (f64(3),)),
    # small models
    case(C.softmax, (f32(3, 4),), (f64(5),), (f32(3, 4), 0), static=("axis",)),
    case(C.softmax_rows, (f32(3, 4), 0), (f32(3, 4), 1), (f64(2, 5), -1), static=("axis",)),
    case(C.cross_entropy, (f32(5, 3), _rng.integers(0, 3, size=5)),
         (f64(4, 6), _rng.integers(0, 6, size=4).astype(np.int32))),
    case(C.sigmoid_and_grad, (np.array([-100.0, -3.0, 0.0, 2.0, 100.0], np.float32),),
         (f64(3, 3) * 10,)),
    case(C.logistic_regression_grad, (f32(3), f32(6, 3), mask(6).astype(np.float32)),
         (f64(3), f64(6, 3), mask(6).astype(np.float64))),
    case(C.layer_norm, (f32(4, 5), f32(5), f32(5)), (f64(2, 3), f64(3), f64(3))),
    case(C.attention, (f32(3, 4), f32(5, 4), f32(5, 2)), (f64(3, 4), f64(5, 4), f64(5, 2))),
    case(C.pairwise_rbf, (f32(4, 3), f32(5, 3), 0.5), (f64(4, 3), f64(2, 3), 2.0)),
    case(C.kmeans_assign, (f32(6, 2), f32(3, 2)), (f64(5, 3), f64(4, 3))),
    case(C.adam_update, (*adam_state(np.float32), 1), (*adam_state(np.float64), 10),
         static=("t",)),
    case(C.finite_differences, (f32(6),), (f64(3),), (f32(2),)),
    case(C.one_hot, (_rng.integers(0, 3, size=5), 3), (_rng.integers(0, 4, size=2), 4),
         static=("k",)),
]

_BY_ID = {c.id: c for c in CASES}
assert len(_BY_ID) == len(CASES), "case ids must be unique"

# --- comparing with the plain function ----------------------------------------------------

_jit_cache: dict[str, object] = {}


def _jitted(c: Case):
    """The case's jit_ps function, made once per module."""
    if c.id not in _jit_cache:
        _jit_cache[c.id] = jit_ps(c.fn, static_argnames=c.static)
    return _jit_cache[c.id]


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in _leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [] if tree is None else [tree]


def _expected_leaf(leaf):
    # A Python number in the plain result comes back as an array: compare with asarray.
    return np.asarray(leaf)


def _is_single_precision(args, expected) -> bool:
    return any(np.asarray(leaf).dtype in (np.float16, np.float32, np.complex64)
               for leaf in _leaves(args) + _leaves(expected)
               if isinstance(leaf, (np.ndarray, np.generic, float)))


def assert_tree_same(actual, expected, single: bool):
    """Same structure (container types, lengths, keys) and same leaves."""
    if isinstance(expected, (tuple, list, dict)):
        assert type(actual) is type(expected), (type(actual), type(expected))
        assert len(actual) == len(expected)
        if isinstance(expected, dict):
            assert set(actual) == set(expected)
            for k in expected:
                assert_tree_same(actual[k], expected[k], single)
        else:
            for a, e in zip(actual, expected):
                assert_tree_same(a, e, single)
        return
    rtol, atol = (1e-5, 1e-5) if single else (1e-12, 1e-12)
    assert_same(actual, _expected_leaf(expected), rtol=rtol, atol=atol)


def _oracle(c: Case, args):
    # on copies: a plain function that wrote into its arguments must not change the inputs
    with np.errstate(all="ignore"):
        return c.fn(*copy.deepcopy(args))


PARAMS = [pytest.param(c, i, id=f"{c.id}-{i}") for c in CASES for i in range(len(c.calls))]


@pytest.mark.parametrize("c, index", PARAMS)
def test_matches_plain_numpy(c, index):
    args = c.calls[index]
    expected = _oracle(c, args)
    actual = _jitted(c)(*args)
    assert_tree_same(actual, expected, _is_single_precision(args, expected))


# --- one compilation per signature --------------------------------------------------------

def _signature_key(c: Case, args):
    """What makes two calls share an executable: the traced leaves' structure, shapes,
    dtypes and weakness (Python scalars), and the static arguments' values."""
    bound = inspect.signature(c.fn).bind(*args)
    bound.apply_defaults()

    def key(tree):
        if isinstance(tree, dict):
            return ("dict", tuple((k, key(tree[k])) for k in sorted(tree)))
        if isinstance(tree, (tuple, list)):
            return (type(tree).__name__, tuple(key(t) for t in tree))
        if tree is None:
            return ("none",)
        if type(tree) in (bool, int, float, complex):
            return ("weak", type(tree).__name__)
        array = np.asarray(tree)
        return ("array", array.shape, array.dtype.str)
    return tuple((name, ("static", value) if name in c.static else key(value))
                 for name, value in bound.arguments.items())


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_compiles_once_per_signature(c):
    f = _jitted(c)
    for args in c.calls + c.calls:        # every call twice: the repeats never compile
        f(*args)
    distinct = {_signature_key(c, args) for args in c.calls}
    assert f.cache_info().misses == len(distinct)
    for args in c.calls:
        f(*args)
    assert f.cache_info().misses == len(distinct)


def test_same_shapes_compile_once():
    f = jit_ps(C.arithmetic)
    for _ in range(3):
        x, y = f32(3), f32(3)
        assert_tree_same(f(x, y), C.arithmetic(x, y), True)
    assert f.cache_info().misses == 1
    f(f64(3), f64(3))
    f(f32(4), f32(4))
    assert f.cache_info().misses == 3


def test_corpus_size():
    plain = [c for c in CASES if not c.id.startswith("closure_")]
    assert len({c.fn for c in plain}) >= 60


# --- the generated source keeps names and lines -------------------------------------------

_COMMENT = re.compile(r"#\s*straightline\.py:(\d+)\s*$")
_CHILDREN = ("body", "orelse", "finalbody")


def _statements(nodes):
    """Statements in source order, nested bodies included (as the emitter walks them)."""
    for node in nodes:
        yield node
        for field in _CHILDREN:
            children = getattr(node, field, None)
            if isinstance(children, list) and children and isinstance(children[0], ast.stmt):
                yield from _statements(children)


def _is_compound(node) -> bool:
    return any(isinstance(getattr(node, f, None), list) and getattr(node, f)
               and isinstance(getattr(node, f)[0], ast.stmt) for f in _CHILDREN)


def _names(tree):
    found = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    found |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in n.posonlyargs + n.args + n.kwonlyargs}
    return found


@pytest.mark.parametrize("fn", [C.local_setitem, C.selu_keywords, C.mlp_predict,
                                C.gram_schmidt, C.halving_count], ids=lambda fn: fn.__name__)
def test_generated_source_keeps_names_and_lines(fn):
    lines, first = inspect.getsourcelines(fn)
    original = ast.parse(textwrap.dedent("".join(lines))).body[0]
    source_statements = list(_statements([original]))
    expected_lines = [first + node.lineno - 1 for node in source_statements]

    text = jit_ps(fn).generated_source
    generated_lines = text.splitlines()
    module = ast.parse(text)
    build = next(node for node in module.body
                 if isinstance(node, ast.FunctionDef) and node.name == f"build_{fn.__name__}")
    statements = list(_statements([build]))
    commented = []
    for node in statements:
        line = generated_lines[(node.lineno if _is_compound(node) else node.end_lineno) - 1]
        match = _COMMENT.search(line)
        assert match, f"no source-line comment on {line!r}"
        commented.append(int(match.group(1)))
    function_text = "\n".join(generated_lines[build.lineno - 1:build.end_lineno])
    assert function_text.count("# straightline.py:") == len(statements)
    if not any(_is_compound(node) for node in source_statements[1:]):
        # straight-line code: one generated statement per source statement, in order
        assert commented == expected_lines
    else:
        # rewritten control flow may add statements, but each names a line of the source
        # statement it comes from, and every source statement is accounted for
        assert set(commented) == set(expected_lines)

    # the user's names (parameters, locals, globals, helpers) are all still there
    assert _names(original) <= _names(build)
    parameters = [a.arg for a in build.args.args]
    assert parameters[1:] == [a.arg for a in original.args.args]


# --- augmented assignment through an alias ------------------------------------------------

def test_augmented_assignment_through_an_alias_of_an_argument():
    """``z = x; z += y`` writes into the argument ``x`` in NumPy, so ``z - x`` is zeros.
    The PSC subset rejects in-place mutation of an argument: either a PSCError, or NumPy's
    result — never a silently different value (``y``)."""
    x, y = f64(3), f64(3)
    expected = C.augmented_alias(x.copy(), y)
    try:
        actual = jit_ps(C.augmented_alias)(x, y)
    except PSCError:
        return
    assert_tree_same(actual, expected, single=False)
