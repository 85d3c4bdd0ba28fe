"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import creation, elementwise, indexing, linalg, reductions, shapes  # noqa: F401
