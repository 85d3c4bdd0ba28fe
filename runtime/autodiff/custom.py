"""``custom_jvp``, ``custom_vjp`` and ``stop_gradient``, with JAX's API.

A function decorated with ``custom_jvp``/``custom_vjp`` is a primitive to PSC code (it is
called as it is, not transpiled as its source).  Called while a computation is built, it
traces its primal function (transpiled) into a region and emits one
``custom_jvp_call``/``custom_vjp_call`` op holding the region and a `CustomRule`
(`runtime.primitives.custom_derivatives` has the op's rules).  The rule functions
(``defjvp``'s, ``defvjp``'s ``fwd`` and ``bwd``) are transpiled too, and run only when the
op is differentiated.  Called from plain Python, the function is compiled and cached per
signature, like the other transforms.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any

import numpy as np
from jax import tree_util

from ..calls import transpiled
from ..context import building, current_builder, has_builder
from ..errors import PSCError, PSCTypeError, PSCValueError, SourceLocation
from ..ir import Value
from .api import _lift, _staged_with_static_ints
from .tangents import is_float
from .trace import trace

_GUARDS = ("check", "debug_callback")


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


class _CustomFunction:
    """What ``custom_jvp`` and ``custom_vjp`` share: the primal function, the positions of
    its non-differentiable arguments, and the call."""

    __psc_primitive__ = True   # PSC code calls it as it is (see `runtime.calls.transpiled`)
    op_name = ""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __call__(self, *args, **kwargs):
        args = _positional(self.fun, args, kwargs)
        if not has_builder():
            diff = [i for i in range(len(args)) if i not in self.nondiff_positions(len(args))]
            return _staged_with_static_ints((self.op_name, self), diff, self, args, {})
        return _bind(self, args)

    def __get__(self, instance, owner):   # a method: bound like a function
        return self if instance is None else functools.partial(self, instance)

    def nondiff_positions(self, count):
        """The positions of the non-differentiable arguments of a call with ``count``."""
        return {p % count for p in self.nondiff_argnums if -count <= p < count}


@_primitive
class custom_jvp(_CustomFunction):
    """A function with a user-defined JVP (``jax.custom_jvp``): ``@custom_jvp`` on the
    function, then ``@f.defjvp`` on ``rule(primals, tangents) -> (primal_out,
    tangent_out)`` (with ``nondiff_argnums``, the rule takes those arguments first).
    Reverse mode transposes the rule, which must be linear in the tangents."""

    op_name = "custom_jvp_call"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """Set the JVP rule; returns it (so it can be used as a decorator)."""
        self.jvp = jvp
        return jvp


@_primitive
class custom_vjp(_CustomFunction):
    """A function with a user-defined VJP (``jax.custom_vjp``): ``f.defvjp(fwd, bwd)``
    where ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, cotangent)`` gives one
    cotangent per differentiable argument (a tuple); with ``nondiff_argnums``, ``bwd``
    takes those arguments first.  It has no forward mode, as in JAX."""

    op_name = "custom_vjp_call"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set the forward and backward functions."""
        self.fwd, self.bwd = fwd, bwd


@_primitive
def stop_gradient(x):
    """``x`` (a pytree), with zero derivative (``jax.lax.stop_gradient``)."""
    if not has_builder():
        return tree_util.tree_map(np.asarray, x)
    b = current_builder()
    return tree_util.tree_map(
        lambda leaf: b.emit("stop_gradient", [leaf])[0] if isinstance(leaf, Value) else leaf,
        x)


def _positional(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


# --- the call --------------------------------------------------------------------------------

def _bind(custom: _CustomFunction, args):
    """Emit the custom op for ``custom(*args)`` into the current builder."""
    b = current_builder()
    nondiff = custom.nondiff_positions(len(args))
    for p in sorted(nondiff):
        if any(isinstance(leaf, Value) for leaf in tree_util.tree_leaves(args[p])):
            raise b.error(PSCTypeError, f"{custom.__name__}: argument {p} is in "
                          "nondiff_argnums but is a traced array",
                          "nondiff_argnums is for Python values (functions, flags, "
                          "sizes); pass arrays as differentiable arguments")
    positions = [i for i in range(len(args)) if i not in nondiff]
    diff = _lift(b, tuple(args[i] for i in positions))
    call = transpiled(custom.fun)

    def primal(*diff_args):
        return call(*_merge(args, positions, diff_args))
    traced = trace(b, primal, diff)
    region = traced.region
    if _holds(region, _GUARDS):
        raise b.error(PSCValueError, f"{custom.__name__}: run-time checks and debug_print "
                      "inside a custom derivative function are not supported",
                      "move them out of the function, or index with static positions")
    captured = list(region.captures)
    _refuse_traced_closures(b, custom, captured)
    region.params.extend(region.captures[v] for v in captured)   # closed, like a branch
    leaves, in_tree = tree_util.tree_flatten(diff)
    rule = CustomRule(custom, args, tuple(positions), in_tree, traced.out_treedef,
                      tuple(traced.outputs))
    results = b.emit(custom.op_name, leaves + captured, (region,), rule=rule,
                     num_inputs=len(leaves),
                     result_avals=tuple((v.shape, v.dtype) for v in region.outputs))
    for result, output in zip(results, region.outputs):
        result.weak = output.weak
    it = iter(results)
    out = [next(it) if isinstance(v, Value) else v for v in traced.outputs]
    return tree_util.tree_unflatten(traced.out_treedef, out)


def _refuse_traced_closures(b, custom, captured):
    """A custom function reading a traced value of an enclosing function: its rules could
    not give that value a derivative (JAX asks for ``closure_convert``), so it is refused.
    Constants (a large NumPy array is one captured constant) are fine."""
    for value in captured:
        producer = value.producer
        if is_float(value) and (producer is None or producer.name != "constant"):
            raise b.error(PSCValueError, f"the custom derivative function {custom.__name__} "
                          "reads a traced value of an enclosing function, which its rules "
                          "cannot differentiate",
                          "pass that value to the custom function as an argument")


def _merge(args, positions, values):
    full = list(args)
    for p, v in zip(positions, values):
        full[p] = v
    return full


def _holds(region, names) -> bool:
    return any(op.name in names or any(_holds(r, names) for r in op.regions)
               for op in region.operations)


@dataclasses.dataclass(eq=False)
class CustomRule:
    """The user's rule functions for one custom call, as the op's rules run them (the
    ``rule`` attribute of ``custom_jvp_call``/``custom_vjp_call``)."""

    custom: _CustomFunction
    args: tuple                 # the call's arguments (the static ones are used)
    positions: tuple            # which arguments are differentiable, in order
    in_tree: Any                # of the differentiable arguments' leaves
    out_tree: Any
    outputs: tuple              # the primal output leaves: Values, or static constants

    @property
    def name(self) -> str:
        return self.custom.__name__

    def _static_args(self):
        return [a for i, a in enumerate(self.args) if i not in self.positions]

    def _tree(self, leaves):
        return tree_util.tree_unflatten(self.in_tree, leaves)

    def jvp(self, b, op, inputs, tangents):
        """(primal outputs, tangent outputs) for the op's results, from the user's JVP."""
        fn = self._required(b, op, self.custom.jvp, "JVP", "@{}.defjvp")
        with building(b):
            out = transpiled(fn)(*self._static_args(), tuple(self._tree(inputs)),
                                 tuple(self._tree(tangents)))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise _rule_error(fn, "the JVP rule must return a pair (primal_out, "
                              f"tangent_out), got {type(out).__name__}")
        primal = self._leaves(b, fn, out[0], "primal output")
        tangent = self._leaves(b, fn, out[1], "tangent output", tangent=True)
        return primal, tangent

    def fwd(self, b, op, inputs):
        """(the op's results, residuals) from the user's ``fwd``."""
        fn = self._required(b, op, self.custom.fwd, "VJP", "{}.defvjp(fwd, bwd)")
        with building(b):
            out = transpiled(fn)(*_merge(self.args, self.positions, self._tree(inputs)))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise _rule_error(fn, "fwd must return a pair (primal_out, residuals), got "
                              f"{type(out).__name__}")
        return self._leaves(b, fn, out[0], "primal output of fwd"), out[1]

    def bwd(self, b, op, inputs, residuals, cotangents):
        """The cotangents of the op's input leaves, from the user's ``bwd``."""
        fn = self._required(b, op, self.custom.bwd, "VJP", "{}.defvjp(fwd, bwd)")
        it = iter(cotangents)
        cts = [next(it) if isinstance(v, Value) else np.zeros_like(v) for v in self.outputs]
        with building(b):
            out = transpiled(fn)(*self._static_args(), residuals,
                                 tree_util.tree_unflatten(self.out_tree, cts))
        want = len(self.positions)
        if not isinstance(out, (tuple, list)) or len(out) != want:
            got = f"a sequence of length {len(out)}" if isinstance(out, (tuple, list)) \
                else type(out).__name__
            raise _rule_error(fn, f"bwd must return a tuple of {want} cotangent(s), one per "
                              f"differentiable argument, got {got}",
                              "return a tuple, e.g. `return (g,)` for one argument")
        result = []
        for k, (ct, primal) in enumerate(zip(out, self._tree(inputs))):
            p_leaves, p_tree = tree_util.tree_flatten(primal)
            if ct is None:
                result.extend([None] * len(p_leaves))
                continue
            c_leaves, c_tree = tree_util.tree_flatten(ct)
            if c_tree != p_tree:
                raise _rule_error(fn, f"bwd's cotangent {k} has structure {c_tree}, but "
                                  f"the argument has {p_tree}")
            result.extend(_coerce(b, fn, c, p, f"bwd's cotangent {k}")
                          for c, p in zip(c_leaves, p_leaves))
        return result

    def _required(self, b, op, fn, kind, how):
        if fn is None:
            raise PSCTypeError(f"{self.name} is differentiated, but no {kind} rule is "
                               f"defined for it", op.location or b.location,
                               f"define one with {how.format(self.name)}")
        return fn

    def _leaves(self, b, fn, tree, what, tangent=False):
        """The leaves of ``tree`` at the op's Value outputs, checked against them."""
        leaves, treedef = tree_util.tree_flatten(tree, is_leaf=lambda x: x is None)
        if treedef != self.out_tree and not (tangent and _zero_tree(tree)):
            raise _rule_error(fn, f"the {what} has structure {treedef}, but the function "
                              f"returns {self.out_tree}",
                              "return values with the structure the function returns")
        if treedef != self.out_tree:   # one None or 0 for all tangents
            leaves = [None] * len(self.outputs)
        return [_coerce(b, fn, leaf, like, what, zero_ok=tangent)
                for leaf, like in zip(leaves, self.outputs) if isinstance(like, Value)]


def _zero_tree(tree):
    return tree is None


def _coerce(b, fn, value, like, what, zero_ok=True):
    """``value`` as a Value of ``like``'s shape and dtype: None is zero; a Python or NumPy
    scalar is broadcast; a weak value is converted; anything else must match."""
    if value is None and zero_ok:
        value = 0.0
    if not isinstance(value, Value):
        array = np.asarray(value)
        if array.shape not in ((), like.shape):
            raise _rule_error(fn, f"the {what} has shape {array.shape}, but the function's "
                              f"output has shape {like.shape}")
        return b.broadcast_in_dim(b.constant(array.astype(like.dtype)), like.shape,
                                  range(array.ndim) if array.ndim else ())
    if value.shape != like.shape:
        raise _rule_error(fn, f"the {what} has shape {value.shape}, but the function's "
                          f"output has shape {like.shape}",
                          "return a tangent/cotangent shaped like its primal")
    if value.dtype != like.dtype:
        if not value.weak:
            raise _rule_error(fn, f"the {what} has dtype {value.dtype.name}, but the "
                              f"function's output has dtype {like.dtype.name}",
                              f"cast it with .astype(np.{like.dtype.name})")
        value = b.convert(value, like.dtype)
    return value


def _rule_error(fn, message, hint=None) -> PSCError:
    """A `PSCTypeError` at the def of the user's rule function ``fn``."""
    code = getattr(fn, "__code__", None)
    location = SourceLocation(code.co_filename, code.co_firstlineno) if code else None
    return PSCTypeError(f"{getattr(fn, '__name__', 'rule')}: {message}", location,
                        hint or "see jax.custom_jvp / jax.custom_vjp for the rule's form")
