"""NumPy translation rules, registered in `runtime.translation` on import."""
from . import (builtins, creation, decompositions, elementwise, indexing, linalg,  # noqa: F401
               reductions, shapes, statistics)
from . import fft  # noqa: F401,E402  (issue 13: numpy.fft)
from . import bits  # noqa: F401,E402  (issue 13: packbits/unpackbits)
from . import methods  # noqa: F401,E402  (issue 13: ndarray methods as functions)
from . import padding  # noqa: F401,E402  (issue 13: np.pad)
from . import rearranging  # noqa: F401,E402  (issue 13: split, diag, insert, block...)
from . import index_functions  # noqa: F401,E402  (issue 13: take, put & co)
from . import applying  # noqa: F401,E402  (issue 13: apply_along_axis & co)
from . import quantiles  # noqa: F401,E402  (issue 13: median, quantile, percentile and nan forms)
from . import nan_functions  # noqa: F401,E402  (issue 13: nansum, nanmean, nanargmax...)
from . import statistics_extra  # noqa: F401,E402  (issue 13: average, ptp, diff, trapezoid, corrcoef...)
