"""Everything generated code calls: the builder, translation rules, compilation, caching.

Generated modules import only this package and NumPy.
"""
from . import array_api as _array_api  # noqa: F401  (gives Value its NumPy operators)
from . import numpy_rules as _numpy_rules  # noqa: F401  (registers the NumPy rules)
from . import reference
from .autodiff.api import grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp
from .builder import Builder
from .cache import CacheInfo, LRUCache
from .client import (Executable, XLACompileError, XLARuntimeError, compile, get_client,
                     to_device)
from .debugging import debug_print
from .control_flow import (UNDEFINED, and_, for_stmt, if_stmt, ifexp, not_, or_, range_,
                           while_stmt)
from .errors import (PSCAttributeError, PSCError, PSCFloatingPointError, PSCIndexError,
                     PSCKeyError, PSCNameError, PSCOverflowError, PSCResourceError,
                     PSCRuntimeError, PSCRuntimeIndexError, PSCRuntimeZeroDivisionError,
                     PSCShapeError, PSCSyntaxError, PSCTracedValueError, PSCTypeError,
                     PSCUnsupportedCallError, PSCValueError, PSCWarning, PSCZeroDivisionError,
                     SourceLocation)
from .inplace import augassign, inplace_fill, inplace_shape, inplace_sort
from .ir import Computation, Value
from .calls import getitem, set_transpile_hook, setitem, transpiled
from .calls import checked
from .argument_updates import with_argument_updates
from .calls import result_and_updated_arguments, updated_arguments
from .errors import PSCImpureCallError
from .purity import pure
from .lax import cond, fori_loop, static_range, switch, while_loop
from .signature import LeafSpec, Signature, signature_of
from .staged import StagedFunction, staged
from .translation import (lookup_rule, qualified_name, register_translation_rule,
                          registered_names, translate)

__all__ = [
    "Builder", "CacheInfo", "Computation", "Executable", "LRUCache", "LeafSpec",
    "PSCError", "PSCNameError", "PSCShapeError", "PSCSyntaxError", "PSCTracedValueError",
    "PSCTypeError", "PSCUnsupportedCallError", "PSCValueError", "Signature",
    "SourceLocation", "StagedFunction", "Value", "XLACompileError", "compile", "get_client",
    "lookup_rule", "qualified_name", "reference", "register_translation_rule", "registered_names",
    "signature_of", "staged", "translate", "cond", "fori_loop", "set_transpile_hook",
    "getitem", "setitem", "static_range", "switch", "transpiled", "while_loop", "UNDEFINED", "and_",
    "for_stmt", "if_stmt", "ifexp", "not_", "or_", "range_", "while_stmt", "grad",
    "hessian", "jacfwd", "jacrev", "jvp", "value_and_grad", "vjp", "augassign",
    "inplace_fill", "inplace_shape", "inplace_sort", "PSCIndexError", "PSCOverflowError", "PSCResourceError", "XLARuntimeError",
    "debug_print", "PSCRuntimeError", "PSCRuntimeIndexError", "PSCRuntimeZeroDivisionError",
    "PSCFloatingPointError", "PSCAttributeError", "PSCKeyError", "PSCZeroDivisionError",
    "PSCWarning",
]
__all__ += ["PSCImpureCallError", "checked", "pure"]   # issue 11: purity
__all__ += ["to_device"]   # issue 17: inputs moved to the device once, 64-bit kept
from .errors import PSCPerformanceWarning
__all__ += ["PSCPerformanceWarning"]   # issue 17: a staged loop that had to be unrolled
from .errors import PSCCacheWarning
__all__ += ["PSCCacheWarning"]   # issue 16: a damaged persistent cache entry, rebuilt
__all__ += ["with_argument_updates", "updated_arguments",   # issue 17: argument updates
            "result_and_updated_arguments"]
from .lax import scan
__all__ += ["scan"]   # issue 12: scan
from .vmap import vmap
__all__ += ["vmap"]   # issue 12: vmap
from .autodiff.custom import custom_jvp, custom_vjp, stop_gradient
__all__ += ["custom_jvp", "custom_vjp", "stop_gradient"]   # issue 12: custom derivatives

from .inplace import inplace_numpy  # noqa: E402  (issue 13: np.put & co as statements)
__all__ += ["inplace_numpy"]   # issue 13: np.put & co as statements
from .collectives import (all_gather, all_to_all, axis_index, pmax, pmean,  # noqa: E402
                          pmin, ppermute, psum, psum_scatter)
from .pmap import pmap  # noqa: E402
from .map_reduce import iterated_map_reduce  # noqa: E402
__all__ += ["all_gather", "all_to_all", "axis_index", "pmax", "pmean", "pmin",  # issue 14:
            "ppermute", "psum", "psum_scatter", "pmap", "iterated_map_reduce"]  # pmap
from .spmd import with_sharding_constraint  # noqa: E402  (issue 14: SPMD shardings)
__all__ += ["with_sharding_constraint"]
