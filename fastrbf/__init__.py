"""fastrbf: fast, trustworthy radial-basis-function and kernel methods.

The public functional API.  Nothing is compiled at import: each numba kernel compiles
on its first call, once per dtype, and is cached on disk (``FASTRBF_CACHE=0`` turns the
on-disk cache off).
"""

from ._threads import threads
from .distances import sqdist
from .kernels import KERNELS, gram, gram_matvec

__version__ = "0.1.0"

__all__ = ["KERNELS", "gram", "gram_matvec", "sqdist", "threads", "__version__"]
