"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import (builtins, creation, decompositions, elementwise, indexing, linalg,  # noqa: F401
               reductions, shapes, statistics)
from . import fft  # noqa: F401,E402  (issue 13: numpy.fft)
from . import bits  # noqa: F401,E402  (issue 13: packbits/unpackbits)
from . import methods  # noqa: F401,E402  (issue 13: ndarray methods as functions)
from . import comparisons, complex_parts, elementwise_more, interpolation, introspection, scipy_special  # noqa: F401,E402,E501  (issue 13)
