"""Every primitive's JVP and VJP rules at the builder level, on the programs of
`tests/test_batching_rules.py` (one case or more per primitive).

Forward mode is checked against central differences of the compiled program itself;
reverse mode by the dot-product test ``<ct, J t> == <J^T ct, t>`` against the forward
result, for random tangents ``t`` and cotangents ``ct``.  Only floating arguments are
perturbed.  A case whose rule is documented as unsupported must raise that `PSCError`.
"""
from __future__ import annotations

import numpy as np
import pytest

from runtime import Builder, PSCTypeError, PSCUnsupportedCallError, PSCValueError, compile
from runtime.autodiff.forward import jvp_region
from runtime.autodiff.reverse import backward_pass, forward_pass

from tests.primitive_cases import CASES, lane_program

# Cases whose derivative is refused, with the error (forward, reverse).
REFUSED = {
    "cumulative": (PSCUnsupportedCallError, PSCUnsupportedCallError),   # cumulative max
    "while_lane_dependent_trips": (None, PSCValueError),   # trip count known at run time
    "reduce_window_region": (PSCUnsupportedCallError, PSCUnsupportedCallError),  # any reducer
    "custom_vjp_call": (PSCTypeError, None),   # no forward mode, as in JAX
    "geqrf": (PSCUnsupportedCallError, PSCUnsupportedCallError),   # qr mode='raw'
    "eig_vectors": (PSCUnsupportedCallError, PSCUnsupportedCallError),   # as jax
}
STEP = 1e-6


def _is_float(a):
    return a.dtype.kind == "f"


def _derivative_program(lane, args):
    """(outputs, J t for the float outputs, J^T ct for the float arguments) as one
    computation of (args, tangents, cotangents)."""
    b = Builder("derivatives")
    params = [b.parameter(i, a.shape, a.dtype) for i, a in enumerate(args)]
    floats = [i for i, a in enumerate(args) if _is_float(a)]
    tangents = [b.parameter(len(args) + k, args[i].shape, args[i].dtype)
                for k, i in enumerate(floats)]
    float_outs = [i for i, v in enumerate(lane.outputs) if v.dtype.kind == "f"]
    cts = [b.parameter(len(args) + len(floats) + k, lane.outputs[i].shape,
                       lane.outputs[i].dtype) for k, i in enumerate(float_outs)]
    it = iter(tangents)
    _, out_t = jvp_region(b, lane.region, params,
                          [next(it) if i in floats else None for i in range(len(args))])
    it = iter(cts)
    env = forward_pass(b, lane.region, params, save_loops=True)
    param_cts, _ = backward_pass(b, lane.region, env, [
        next(it) if i in float_outs else None for i in range(len(lane.outputs))])

    def real(value, like):
        if value is None:
            return b.broadcast_in_dim(b.constant(np.zeros((), like.dtype)), like.shape, ())
        return value
    return b.build(*[real(out_t[i], lane.outputs[i]) for i in float_outs],
                   *[real(param_cts[i], params[i]) for i in floats]), floats, float_outs


def _forward_and_reverse(name):
    build, draws, _ = CASES[name]
    rng = np.random.default_rng(3)
    args = [draw(rng) for draw in draws]
    lane = lane_program(build, args)
    return lane, args, rng


def _central_difference(run, args, floats, tangents, float_outs, step):
    def at(sign):
        moved = list(args)
        for i, t in zip(floats, tangents):
            moved[i] = args[i] + sign * step * t
        outs = run(*moved)
        return [np.asarray(outs[i]) for i in float_outs]
    return [(p - m) / (2 * step) for p, m in zip(at(1), at(-1))]


DIFFERENTIABLE = [name for name, (_, draws, _) in CASES.items()
                  if any(_is_float(draw(np.random.default_rng(0))) for draw in draws)]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_jvp_matches_central_differences_and_vjp_is_its_transpose(name):
    lane, args, rng = _forward_and_reverse(name)
    forward_error, reverse_error = REFUSED.get(name, (None, None))
    if forward_error or reverse_error:
        with pytest.raises(forward_error or reverse_error):
            _derivative_program(lane, args)
        return
    program, floats, float_outs = _derivative_program(lane, args)
    if not float_outs:
        return
    tangents = [rng.standard_normal(args[i].shape).astype(args[i].dtype) for i in floats]
    cts = [rng.standard_normal(lane.outputs[i].shape).astype(lane.outputs[i].dtype)
           for i in float_outs]
    results = [np.asarray(r) for r in compile(program)(*args, *tangents, *cts)]
    jvps, vjps = results[:len(float_outs)], results[len(float_outs):]
    single = any(j.dtype == np.float32 for j in jvps)   # float32 outputs: a coarser step
    expected = _central_difference(compile(lane), args, floats, tangents, float_outs,
                                   1e-2 if single else STEP)
    for actual, want in zip(jvps, expected):
        np.testing.assert_allclose(actual, want, rtol=1e-3 if single else 1e-5,
                                   atol=1e-3 if single else 1e-6)
    forward = sum(np.vdot(c, j) for c, j in zip(cts, jvps))
    reverse = sum(np.vdot(v, t) for v, t in zip(vjps, tangents))
    np.testing.assert_allclose(reverse, forward, rtol=1e-5 if single else 1e-10,
                               atol=1e-5 if single else 1e-10)
