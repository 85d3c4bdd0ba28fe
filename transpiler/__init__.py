"""psc-transpiler: plain Python + NumPy functions compiled to XLA.

    from transpiler import jit_ps

    @jit_ps
    def predict(params, inputs):
        for W, b in params:
            inputs = np.tanh(np.dot(inputs, W) + b)
        return inputs
"""
from runtime import (PSCAttributeError, PSCError, PSCFloatingPointError, PSCIndexError,
                     PSCKeyError, PSCNameError, PSCOverflowError, PSCResourceError,
                     PSCRuntimeError, PSCRuntimeIndexError, PSCRuntimeZeroDivisionError,
                     PSCShapeError, PSCSyntaxError, PSCTracedValueError, PSCTypeError,
                     PSCUnsupportedCallError, PSCValueError, PSCWarning, PSCZeroDivisionError,
                     cond, debug_print, fori_loop, grad, hessian, jacfwd, jacrev, jvp,
                     register_translation_rule, static_range, switch, value_and_grad, vjp,
                     while_loop)

from . import config
from .api import PSCFunction, jit_ps
from .version import __version__

# issue 11, purity: `pure` marks a callable PSC code may call while building; Python helpers
# that PSC code calls with static arguments run as plain Python, their bodies checked for
# purity first (the hook is installed here, as `api` installs the transpile hook, so that
# `runtime` never imports `transpiler`).
from runtime import PSCImpureCallError, pure
from runtime.calls import set_purity_hook as _set_purity_hook
from .checks import check_helper_purity as _check_helper_purity
_set_purity_hook(_check_helper_purity)

__all__ = [
    "PSCAttributeError", "PSCError", "PSCFloatingPointError", "PSCFunction", "PSCIndexError",
    "PSCKeyError", "PSCNameError", "PSCOverflowError", "PSCResourceError", "PSCRuntimeError",
    "PSCRuntimeIndexError", "PSCRuntimeZeroDivisionError",
    "PSCShapeError", "PSCSyntaxError", "PSCTracedValueError", "PSCTypeError",
    "PSCUnsupportedCallError", "PSCValueError", "PSCWarning", "PSCZeroDivisionError",
    "__version__", "cond", "config", "debug_print", "fori_loop", "grad", "hessian", "jacfwd",
    "jacrev", "jit_ps", "jvp", "register_translation_rule", "static_range", "switch",
    "value_and_grad", "vjp", "while_loop",
]
__all__ += ["PSCImpureCallError", "pure"]
from runtime import to_device   # issue 17: inputs moved to the device once, 64-bit kept
__all__ += ["to_device"]
from runtime import PSCPerformanceWarning
__all__ += ["PSCPerformanceWarning"]   # issue 17: a staged loop that had to be unrolled
from runtime import scan
__all__ += ["scan"]   # issue 12: scan
from runtime import vmap   # issue 12: vmap
__all__ += ["vmap"]
from runtime import custom_jvp, custom_vjp, stop_gradient   # issue 12: custom derivatives
__all__ += ["custom_jvp", "custom_vjp", "stop_gradient"]
from runtime.placement import device_put, devices, local_devices   # issue 14: placement
__all__ += ["device_put", "devices", "local_devices"]
from .caches import cache_clear, cache_info   # issue 16: the persistent cache
from runtime import PSCCacheWarning
__all__ += ["PSCCacheWarning", "cache_clear", "cache_info"]
from runtime import (all_gather, all_to_all, axis_index, iterated_map_reduce,  # issue 14:
                     pmap, pmax, pmean, pmin, ppermute, psum, psum_scatter)  # pmap & co
__all__ += ["all_gather", "all_to_all", "axis_index", "iterated_map_reduce", "pmap", "pmax",
            "pmean", "pmin", "ppermute", "psum", "psum_scatter"]
from runtime import with_sharding_constraint   # issue 14: SPMD shardings
__all__ += ["with_sharding_constraint"]
