"""LAPACK called from numba (SciPy's ``cython_lapack`` functions), for the routines
whose SciPy Python wrappers hold the GIL (``?tpqrt``): called from a ``nogil`` numba
function, worker threads run them in parallel.

The routine is registered with LLVM under a symbol name at import and called through
that name (a numba ``ExternalFunction``), so the compiled code holds no address that
is only valid in one process, and it is cached on disk like every other kernel.
"""

from llvmlite import binding as _llvm
from numba import types
from numba.extending import get_cython_function_address

from .._decorators import jit

_SYMBOL = "fastrbf_scipy_dtpqrt"
_llvm.add_symbol(_SYMBOL, get_cython_function_address("scipy.linalg.cython_lapack", "dtpqrt"))
_dtpqrt = types.ExternalFunction(_SYMBOL, types.void(*([types.voidptr] * 12)))


@jit
def tpqrt(Rt, Bt, T, work, iw):
    """QR of ``[R; B]`` (``R`` p x p upper triangular, ``B`` m x p) into ``R``: LAPACK
    ``dtpqrt`` with ``L = 0``.  Arrays are passed transposed and C-ordered (that is,
    Fortran-ordered ``R``, ``B``, ``T``): ``Rt`` (p, p), ``Bt`` (p, m), ``T`` (p, nb);
    ``work`` has ``nb * p`` elements, ``iw`` is int32 scratch of 8.  Returns LAPACK's
    ``info``; ``Bt`` is overwritten with the reflectors."""
    iw[0] = Bt.shape[1]  # M
    iw[1] = Rt.shape[0]  # N
    iw[2] = 0  # L
    iw[3] = T.shape[1]  # NB
    iw[4] = Rt.shape[0]  # LDA
    iw[5] = Bt.shape[1]  # LDB
    iw[6] = T.shape[1]  # LDT
    iw[7] = 0
    _dtpqrt(iw[0:].ctypes, iw[1:].ctypes, iw[2:].ctypes, iw[3:].ctypes, Rt.ctypes, iw[4:].ctypes,
            Bt.ctypes, iw[5:].ctypes, T.ctypes, iw[6:].ctypes, work.ctypes, iw[7:].ctypes)
    return iw[7]
