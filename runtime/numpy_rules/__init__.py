"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import (builtins, creation, decompositions, elementwise, indexing, linalg,  # noqa: F401
               reductions, shapes, statistics)
from . import fft  # noqa: F401,E402  (issue 13: numpy.fft)
from . import sorting  # noqa: F401,E402  (issue 13: sorting and searching)
from . import setops  # noqa: F401,E402  (issue 13: data-dependent lengths, set functions)
from . import selection  # noqa: F401,E402  (issue 13: np.select, np.choose)
