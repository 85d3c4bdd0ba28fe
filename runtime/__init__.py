"""Everything generated code calls: the builder, translation rules, compilation, caching."""
from .builder import Builder
from .client import Executable, XLACompileError, compile, get_client
from .errors import (PSCError, PSCNameError, PSCShapeError, PSCSyntaxError,
                     PSCTracedValueError, PSCTypeError, PSCUnsupportedCallError,
                     PSCValueError, SourceLocation)
from .ir import Computation, Value
from .cache import CacheInfo, LRUCache
from .signature import LeafSpec, Signature, signature_of
from .staged import StagedFunction, staged
