"""Dense BLAS and LAPACK work whose bits do not depend on the thread count.

A multi-threaded BLAS splits a product or a factorisation by its number of threads,
and the rounding of each entry follows the split: the same call on 1 and 2 threads
differs in the last bits, and so does everything built on it (a kernel ridge fit by a
few 1e-12, a conjugate-gradient solve by its iteration count).  fastrbf therefore never
lets BLAS choose:

- every BLAS and LAPACK call fastrbf makes runs on one BLAS thread
  (:func:`fastrbf._threads.serial_blas`);
- products, Cholesky factorisations and triangular solves large enough to be worth
  threads are cut into fixed blocks, whose boundaries depend only on the shapes; each
  block is one single-threaded BLAS call, the blocks run in parallel on fastrbf's
  worker threads, and every output entry is written by exactly one block.  So the
  result is the same bits for any ``n_threads`` and any BLAS thread setting.  (It may
  differ in the last bits between BLAS builds or kernels, e.g. OpenBLAS's Haswell and
  SkylakeX kernels, which round differently: that is not a thread count.)

:func:`potrf` is a blocked right-looking Cholesky factorisation in place (above
:data:`DIRECT_N`; below, one single-threaded LAPACK call): for each
panel of :data:`NB` columns, LAPACK ``potrf`` of the NB x NB diagonal block, ``trsm``
of the panel below it in fixed row blocks, and a ``syrk`` + ``gemm`` update of each
trailing block column.  It keeps LAPACK's contract (lower triangle of the
Fortran-ordered matrix, strict upper triangle never touched, ``info`` = the 1-based
column of a breakdown) and the one-n^2-buffer memory, runs at DGEMM speed, and never
hands LAPACK a large factorisation: OpenBLAS's own threaded ``dpotrf`` (the one bundled
with SciPy, SkylakeX kernel) crashes at n = 16000.

The routines are SciPy's ``cython_blas`` / ``cython_lapack`` (the BLAS SciPy ships),
called through ``ctypes`` with explicit leading dimensions, so blocks are addressed in
place without copies; ``ctypes`` releases the GIL during each call.
"""

import ctypes
import functools

import numpy as np

from . import _threads

#: columns per panel of the blocked Cholesky factorisation
NB = 256
#: up to this order a factorisation is one single-threaded LAPACK ``potrf`` call (the
#: blocked one's task overhead costs more than its threads save); a function of n only,
#: so the bits still do not depend on the thread count
DIRECT_N = 1024
#: rows per block of the panel solves (trsm) of the factorisation
TRSM_ROWS = 1024
#: right-hand sides per block of a triangular solve
SOLVE_COLS = 64
#: output elements per row block of :func:`gemm`
GEMM_BLOCK = 1 << 18

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_cp = ctypes.c_char_p
_ip = ctypes.POINTER(ctypes.c_int)
_vp = ctypes.c_void_p

_SIGNATURES = {
    # (module, name): argument types (all by reference, Fortran style)
    "gemm": ("blas", (_cp, _cp, _ip, _ip, _ip, _vp, _vp, _ip, _vp, _ip, _vp, _vp, _ip)),
    "syrk": ("blas", (_cp, _cp, _ip, _ip, _vp, _vp, _ip, _vp, _vp, _ip)),
    "trsm": ("blas", (_cp, _cp, _cp, _cp, _ip, _ip, _vp, _vp, _ip, _vp, _ip)),
    "potrf": ("lapack", (_cp, _ip, _vp, _ip, _ip)),
}


@functools.cache
def _routine(name, dtype):
    """SciPy's ``cython_blas``/``cython_lapack`` routine ``name`` for ``dtype`` as a
    ctypes function (looked up on first use)."""
    from numba.extending import get_cython_function_address

    module, argtypes = _SIGNATURES[name]
    prefix = "d" if dtype == _F64 else "s"
    address = get_cython_function_address(f"scipy.linalg.cython_{module}", prefix + name)
    return ctypes.CFUNCTYPE(None, *argtypes)(address)


def _int(v):
    return ctypes.byref(ctypes.c_int(int(v)))


def _scalar(v, dtype):
    return ctypes.byref(ctypes.c_double(v) if dtype == _F64 else ctypes.c_float(v))


class _Fortran:
    """Addresses of the entries of a Fortran-ordered matrix (a C-ordered array seen
    transposed): ``at(i, j)`` is the address of entry (i, j), ``ld`` the leading
    dimension."""

    def __init__(self, A):
        s = A.dtype.itemsize
        if A.strides[0] != s or A.strides[1] % s:
            raise ValueError("internal: expected a Fortran-ordered matrix")  # pragma: no cover
        self.base = A.ctypes.data
        self.step = s
        self.ld = max(1, A.strides[1] // s)
        self.dtype = A.dtype

    def at(self, i, j):
        return self.base + self.step * (j * self.ld + i)


def potrf(A, n_threads):
    """Cholesky factorisation ``A = L L^T`` in place, LAPACK's ``potrf(lower)``
    contract: ``A`` Fortran-ordered (float64 or float32), only its lower triangle read
    and written.  Returns 0, or the 1-based column where ``A`` is not positive definite
    (the factor is then complete left of it).  Bitwise the same for any ``n_threads``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.asfortranarray([[4.0, 2.0], [2.0, 3.0]])
    >>> potrf(A, 2), np.tril(A).round(4).tolist()
    (0, [[2.0, 0.0], [1.0, 1.4142]])
    """
    n = A.shape[0]
    M = _Fortran(A)
    dt = A.dtype
    potrf_, trsm, syrk, gemm = (_routine(r, dt) for r in ("potrf", "trsm", "syrk", "gemm"))
    one, minus = _scalar(1.0, dt), _scalar(-1.0, dt)
    ld = _int(M.ld)
    with _threads.serial_blas():
        if n <= DIRECT_N:
            info = ctypes.c_int(0)
            potrf_(b"L", _int(n), M.at(0, 0), ld, ctypes.byref(info))
            return info.value
        for k0 in range(0, n, NB):
            k1 = min(n, k0 + NB)
            kb = _int(k1 - k0)
            info = ctypes.c_int(0)
            potrf_(b"L", kb, M.at(k0, k0), ld, ctypes.byref(info))
            if info.value:
                return k0 + info.value
            if k1 == n:
                break

            def solve(r0, r1, k0=k0, kb=kb):
                trsm(b"R", b"L", b"T", b"N", _int(r1 - r0), kb, one, M.at(k0, k0), ld, M.at(r0, k0), ld)

            _threads.run_tasks([functools.partial(solve, r0, min(n, r0 + TRSM_ROWS))
                                for r0 in range(k1, n, TRSM_ROWS)], n_threads)

            def update(j0, j1, k0=k0, kb=kb):
                syrk(b"L", b"N", _int(j1 - j0), kb, minus, M.at(j0, k0), ld, one, M.at(j0, j0), ld)
                if j1 < n:
                    gemm(b"N", b"T", _int(n - j1), _int(j1 - j0), kb, minus, M.at(j1, k0), ld, M.at(j0, k0), ld,
                         one, M.at(j1, j0), ld)

            _threads.run_tasks([functools.partial(update, j0, min(n, j0 + NB)) for j0 in range(k1, n, NB)], n_threads)
    return 0


def trsm(L, B, n_threads, *, trans=False):
    """``B := L^-1 B`` (``trans``: ``L^-T B``) in place, ``L`` the lower triangle of a
    Fortran-ordered factor, ``B`` Fortran-ordered (n, k) of the same dtype; fixed blocks
    of :data:`SOLVE_COLS` right-hand sides.

    Examples
    --------
    >>> import numpy as np
    >>> L = np.asfortranarray([[2.0, 0.0], [1.0, 1.0]])
    >>> B = np.asfortranarray([[2.0], [3.0]])
    >>> trsm(L, B, 1); B.ravel().tolist()
    [1.0, 2.0]
    """
    n, k = B.shape
    if n == 0 or k == 0:
        return
    ML, MB = _Fortran(L), _Fortran(B)
    f = _routine("trsm", L.dtype)
    one = _scalar(1.0, L.dtype)
    t = b"T" if trans else b"N"

    def block(c0, c1):
        f(b"L", b"L", t, b"N", _int(n), _int(c1 - c0), one, ML.at(0, 0), _int(ML.ld), MB.at(0, c0), _int(MB.ld))

    with _threads.serial_blas():
        _threads.run_tasks([functools.partial(block, c0, min(k, c0 + SOLVE_COLS)) for c0 in range(0, k, SOLVE_COLS)],
                           n_threads)


def potrs(L, B, n_threads):
    """Solve ``L L^T W = B`` in place in ``B`` (LAPACK ``potrs(lower)``): ``L`` the lower
    triangle of a Fortran-ordered factor, ``B`` Fortran-ordered (n, k), same dtype.

    Examples
    --------
    >>> import numpy as np
    >>> L = np.asfortranarray([[2.0, 0.0], [1.0, 1.0]])  # L L^T = [[4, 2], [2, 2]]
    >>> B = np.asfortranarray([[6.0], [4.0]])
    >>> potrs(L, B, 2); B.ravel().tolist()
    [1.0, 1.0]
    """
    trsm(L, B, n_threads)
    trsm(L, B, n_threads, trans=True)


def gemm(A, B, out, n_threads):
    """``out = A @ B`` by fixed row blocks (about :data:`GEMM_BLOCK` output elements
    each), each one single-threaded BLAS call; ``A`` (n, k) and ``out`` (n, m)
    C-contiguous.  Returns ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.arange(6.0).reshape(3, 2)
    >>> gemm(A, A.T, np.empty((3, 3)), 2).tolist()
    [[1.0, 3.0, 5.0], [3.0, 13.0, 23.0], [5.0, 23.0, 41.0]]
    """
    n = A.shape[0]
    rows = gemm_rows(n, out.shape[1])

    def block(r0, r1):
        np.matmul(A[r0:r1], B, out=out[r0:r1])

    with _threads.serial_blas():
        _threads.run_tasks([functools.partial(block, r0, min(n, r0 + rows)) for r0 in range(0, n, rows)], n_threads)
    return out


def gemm_rows(n, m):
    """Rows per block of an (n, m) product: a function of the shape only."""
    return max(1, min(n, max(16, GEMM_BLOCK // max(1, m))))
