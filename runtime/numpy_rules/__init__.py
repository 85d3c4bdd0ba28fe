"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import (builtins, creation, decompositions, elementwise, indexing, linalg,  # noqa: F401
               reductions, shapes, statistics)
from . import fft  # noqa: F401,E402  (issue 13: numpy.fft)
from . import products  # noqa: F401,E402  (issue 13: convolve, cross, vecdot...)
from . import ufunc_methods  # noqa: F401,E402  (issue 13: ufunc.reduce/accumulate/...)
from . import polynomials  # noqa: F401,E402  (issue 13: polyval, polyder, vander...)
from . import windows  # noqa: F401,E402  (issue 13: kaiser, logspace, piecewise)
