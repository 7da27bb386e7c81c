"""LAPACK called from numba (SciPy's ``cython_lapack`` function pointers), for the
routines whose SciPy Python wrappers hold the GIL (``?tpqrt``): called from a ``nogil``
numba function, worker threads run them in parallel.

The functions here are compiled without the on-disk cache: they hold the address of a
LAPACK routine, which is only valid in the process that looked it up.  They are small
(a fraction of a second to compile, once per process, on first use).
"""

import ctypes

import numba
from numba.extending import get_cython_function_address

_ip = ctypes.POINTER(ctypes.c_int)
_dp = ctypes.POINTER(ctypes.c_double)
_dtpqrt = ctypes.CFUNCTYPE(None, _ip, _ip, _ip, _ip, _dp, _ip, _dp, _ip, _dp, _ip, _dp, _ip)(
    get_cython_function_address("scipy.linalg.cython_lapack", "dtpqrt")
)


@numba.njit(nogil=True, cache=False)
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
