"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import (builtins, creation, decompositions, elementwise, indexing, linalg,  # noqa: F401
               reductions, shapes, statistics)
from . import fft  # noqa: F401,E402  (issue 13: numpy.fft)
from . import quantiles  # noqa: F401,E402  (issue 13: median, quantile, percentile and nan forms)
from . import nan_functions  # noqa: F401,E402  (issue 13: nansum, nanmean, nanargmax...)
from . import statistics_extra  # noqa: F401,E402  (issue 13: average, ptp, diff, trapezoid, corrcoef...)
