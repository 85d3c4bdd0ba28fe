"""The project's public names that PSC source refers to, in one list.

The front end recognizes them by name, without running the source (the CLI never imports
it): name resolution classifies them (`transpiler.analysis.resolve`), the CLI finds the
decorated functions, the staging decisions find ``static_range``, and the emitter rewrites
the imports of generated modules.  They live here, in the bottom layer, so that `emit` and
`transpiler` both read them without importing each other; this module imports nothing.
``tests/test_generated_format.py`` checks the list against the objects themselves.
"""

# The decorator, defined by `transpiler.api` (generated code never calls it).
DECORATOR = "jit_ps"

# `runtime.lax`: the explicit control-flow primitives, with jax.lax's names.
STATIC_RANGE = "static_range"
CONTROL_FLOW = frozenset({"while_loop", "cond", "fori_loop", "switch", STATIC_RANGE})
CONTROL_FLOW |= {"scan"}   # issue 12: scan

# `runtime.autodiff`: the transforms.
TRANSFORMS = frozenset({"grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev",
                        "hessian"})
TRANSFORMS |= {"vmap"}   # issue 12: vmap (`runtime.vmap`)

# `runtime.autodiff.custom` (issue 12): user-defined derivatives.  A function decorated
# with custom_jvp/custom_vjp is itself a primitive to PSC code (called, not transpiled).
CUSTOM_DERIVATIVES = frozenset({"custom_jvp", "custom_vjp", "stop_gradient"})
TRANSFORMS = TRANSFORMS | CUSTOM_DERIVATIVES

# `runtime.debugging`: printing from compiled code.
CALLBACKS = frozenset({"debug_print"})

# Every name above: called from PSC code as it is, never transpiled (`__psc_primitive__`).
PRIMITIVES = frozenset({DECORATOR}) | CONTROL_FLOW | TRANSFORMS | CALLBACKS
PRIMITIVES |= {"with_sharding_constraint"}   # issue 14: SPMD (`runtime.spmd`)

# The packages a PSC program imports them from: a qualified name rooted in one of these and
# ending in a name of `PRIMITIVES` denotes that primitive.
PACKAGES = ("transpiler", "runtime")

# User-facing modules and what a generated module imports instead: `runtime` exports every
# primitive but the decorator, and generated code must not import `transpiler`.
RUNTIME_EQUIVALENTS = {"transpiler": "runtime", "transpiler.api": "runtime",
                       # the jax-named namespaces (issues 12, 15): runtime modules
                       "transpiler.lax": "runtime.lax", "transpiler.random": "runtime.random",
                       "transpiler.nn": "runtime.nn"}

# `runtime.pmap`, `runtime.collectives`, `runtime.map_reduce` (issue 14): the parallel map,
# the collectives over its (or a named vmap's) axis, and the iterated map-reduce.
COLLECTIVES = frozenset({"psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter",
                         "ppermute", "all_to_all", "axis_index"})
DISTRIBUTED = frozenset({"pmap", "iterated_map_reduce"}) | COLLECTIVES
PRIMITIVES = PRIMITIVES | DISTRIBUTED
