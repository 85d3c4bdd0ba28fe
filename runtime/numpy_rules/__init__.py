"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import builtins, creation, elementwise, indexing, linalg, reductions, shapes  # noqa: F401
