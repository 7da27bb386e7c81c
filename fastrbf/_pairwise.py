"""The pairwise engine: every dense pass over pairs (row of ``X``, row of ``Y``).

``sqdist``, ``gram``, ``gram_matvec`` and the models' Gram blocks all go through here;
the numba kernels are in :mod:`fastrbf._jit.pairwise` (built from the tiles of
:mod:`fastrbf._jit.tiles`).

What a kernel needs travels as one value, a :class:`KernelSpec` (the kernel function as
a compile-time :class:`~fastrbf._jit.kernels.Phi`, whether it acts on dot products, one
gamma per column, the typed constants, the polynomial degree).  The registry in
:mod:`fastrbf.kernels` builds it from a name and the user's parameters
(``KERNELS[name].spec(...)``); :data:`DISTANCES` applies nothing.

Squared distances take one of two exact-enough paths, chosen by the number of features
``d``:

- **direct** (``d`` below :data:`GEMM_MIN_FEATURES`): numba kernels summing
  ``(x_k - y_k)**2``; relative error at most ``(d + 2) eps`` for every entry, whatever
  the offset of the data.
- **certified GEMM** (large ``d``, where the flops belong in BLAS): the rows are
  centred on the mean of ``Y`` (in float64), ``||x||^2 + ||y||^2 - 2 x.y`` comes from
  DGEMM, and every entry whose cancellation could exceed the error target is
  recomputed by direct differences from the original data.  The test is the rigorous
  floating-point bound of the expansion: the computed value ``D`` is kept only when
  ``D > tau (||x||^2 + ||y||^2)`` with ``tau = (2 k + 8) eps64 / rtol_target``,
  ``rtol_target = 2.5e-13`` (float64 result) or ``2.5e-6`` (float32 result, for which
  the GEMM runs in float64 on an upcast copy).  So both paths meet the same accuracy:
  1e-12 relative (float64), 1e-5 (float32), identical rows exactly 0.
  ``k`` is the most roundings an entry's dot product and norms go through.  One GEMM
  over all ``d`` features sums in BLAS's order, unknown, so ``k = d``: from ``d`` of
  about 560 on, ``tau`` exceeds 1 and every entry of typical data would be recomputed
  (40x slower than the GEMM at ``d = 1024``).  The GEMMs and norms therefore take
  :data:`GEMM_CHUNK` features at a time, their results added in a fixed order:
  ``k = min(d, GEMM_CHUNK) + (d - 1) // GEMM_CHUNK`` (at most 271 up to ``d = 4096``,
  ``tau`` below 0.5), and typical entries are kept at any ``d``.

A symmetric pass (``Y`` is ``X``, one gamma) computes one triangle and mirrors it: the
result is exactly symmetric with exact zeros (or ``phi(0)``) on the diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _dense, _threads
from . import _validation as _v
from ._jit import kernels as _jk
from ._jit import pairwise as _jp
from ._sparse import CSRRows, check_csr, compress_columns, is_sparse, to_scipy

#: from this many features on, float64 distances go through the certified GEMM path
GEMM_MIN_FEATURES = {np.dtype(np.float64): 64, np.dtype(np.float32): 64}

#: row-block budget (float64 elements) of the float64 scratch used for float32 results
GEMM_BLOCK_ELEMENTS = 1 << 21

#: the certified path's GEMMs take at most this many features at a time, their results
#: added in order: an entry's rounding bound is then ``(GEMM_CHUNK + chunks) eps``, not
#: ``d eps``, which is what lets the expansion certify typical entries at any ``d``
GEMM_CHUNK = 256

RTOL_TARGET = {np.dtype(np.float64): 2.5e-13, np.dtype(np.float32): 2.5e-6}


def consts(dtype, coef0=0.0):
    """The kernels' typed constants ``[1, 1/2, coef0, 0]`` (typed constants keep float32
    arithmetic in float32)."""
    return np.array([1.0, 0.5, coef0, 0.0], dtype=dtype)


@dataclass(frozen=True, eq=False)  # arrays inside: compared and hashed by identity
class KernelSpec:
    """What the numba kernels need to evaluate one kernel, as one value.

    ``phi`` is the kernel function (fixed at compile time; ``phi(-1)``: none), ``dot``
    whether it acts on dot products ``x . y`` rather than on squared distances, ``g``
    one gamma per column, ``c`` the constants of :func:`consts` and ``degree`` the
    polynomial degree.  :attr:`args` is the tail every kernel of :mod:`fastrbf._jit`
    takes, in its order.
    """

    phi: _jk.Phi
    dot: bool
    g: np.ndarray
    c: np.ndarray
    degree: int

    @property
    def args(self):
        """``(dot, phi, g, c, degree)``, as the numba kernels take them."""
        return (self.dot, self.phi, self.g, self.c, self.degree)


def distances_spec(dtype, m=1):
    """The spec that applies nothing: plain squared distances (``g`` is unused)."""
    dtype = np.dtype(dtype)
    return KernelSpec(_jk.phi(_jk.NONE), False, np.ones(m, dtype=dtype), consts(dtype), 1)


def prepare(X, Y, name_x="X", name_y="Y"):
    """Validate ``X`` (and ``Y``) and return them converted to the common result dtype."""
    Xa = _v.check_data(X, name_x)
    Ya = None if Y is None else _v.check_data(Y, name_y)
    if Ya is not None:
        _v.check_features(Xa, Ya, name_x, name_y)
    dtype = _v.result_dtype(Xa, Ya)
    Xc = _v.to_dtype(Xa, dtype)
    Yc = None if Ya is None else _v.to_dtype(Ya, dtype)
    return Xc, Yc, dtype


def rescale(Xc, Yc, length_scale, dtype):
    """``(Xc, Yc)`` with each feature divided by its length scale (checked here; None:
    unchanged).  ``Yc`` may be None."""
    ls = _v.check_length_scale(length_scale, Xc.shape[1])
    if ls is None:
        return Xc, Yc
    return _v.scale_features(Xc, ls, dtype, "X"), None if Yc is None else _v.scale_features(Yc, ls, dtype, "Y")


def allocate(out, shape, dtype, inputs, what):
    """The checked ``out=``, or a new result array after the memory check."""
    out = _v.check_out(out, shape, dtype, inputs)
    if out is None:
        nbytes = int(np.prod(shape)) * dtype.itemsize
        _v.check_memory(
            nbytes,
            f"{what}: the {shape[0]} x {shape[1]} {dtype} result",
            "process `X` in row chunks (each call with a slice of the rows), pass a "
            "preallocated `out=`, or use `gram_matvec` if you only need K @ V.",
        )
        out = np.empty(shape, dtype=dtype)
    return out


def use_gemm(dtype, d):
    """Whether ``d`` features of ``dtype`` take the certified GEMM path."""
    return d >= GEMM_MIN_FEATURES[dtype]


def pairwise(X, Y, spec, symmetric, out, n_threads, mirror=True):
    """Fill ``out`` with ``phi(squared distances)`` of a radial ``spec`` (or the
    distances themselves for :func:`distances_spec`).

    ``X``, ``Y`` are validated arrays of ``out.dtype`` (``Y`` may be ``X`` itself);
    ``symmetric`` means ``Y is X`` and one gamma for all columns; then ``mirror=False``
    leaves the strict lower triangle unwritten (for a consumer of the upper one only).
    """
    dtype = out.dtype
    d = X.shape[1]
    if use_gemm(dtype, d):  # (the block kernels below apply the work threshold themselves)
        _gemm_path(X, Y, spec, symmetric, out, n_threads, mirror)
        return out
    Yt = np.ascontiguousarray(Y.T)
    if symmetric:
        _jp.pairwise_upper.run(n_threads, X, Yt, *spec.args, out)
        if mirror:
            _jp.mirror_upper.run(n_threads, out)
    else:
        _jp.pairwise_rows.run(n_threads, X, Yt, *spec.args, out)
    return out


def _gemm_path(X, Y, spec, symmetric, out, n_threads, mirror=True):
    n, d = X.shape
    m = Y.shape[0]
    nt = _threads.for_work(n * m * (d + 8), n_threads)
    Xc, Yc, nx, ny = centred(X, Y, symmetric)
    certified_blocks(Xc, Yc, nx, ny, X, Y, spec, symmetric, out, nt)
    if symmetric and mirror:
        _jp.mirror_upper.run(nt, out)


def centred(X, Y, symmetric=False):
    """``(Xc, Yc, nx, ny)``: the rows of ``X`` and ``Y`` centred on the mean of ``Y`` in
    float64 (C-contiguous; ``Yc`` is ``Xc`` when ``symmetric``) and their
    :func:`chunked_sqnorms`.  float64 C-contiguous data about the origin already (its
    mean's squared norm at most :data:`CENTRE_BELOW` of the mean squared norm of ``Y``)
    is used as it is: centring would barely change which entries the bound certifies,
    only cost two copies (the bound holds either way)."""
    mu = Y.mean(axis=0, dtype=np.float64)
    if X.dtype == np.float64 and Y.dtype == np.float64 and X.flags.c_contiguous and Y.flags.c_contiguous:
        ny = chunked_sqnorms(Y)
        if float(mu @ mu) <= CENTRE_BELOW * float(ny.mean()):
            return X, Y, ny if symmetric else chunked_sqnorms(X), ny
    Xc = np.subtract(X, mu, dtype=np.float64)
    Yc = Xc if symmetric else np.subtract(Y, mu, dtype=np.float64)
    nx = chunked_sqnorms(Xc)
    return Xc, Yc, nx, nx if symmetric else chunked_sqnorms(Yc)


def certified_blocks(Xc, Yc, nx, ny, X, Y, spec, symmetric, out, nt):
    """The certified path on rows already centred (``Xc``, ``Yc``, float64, C-contiguous,
    with their :func:`chunked_sqnorms` ``nx``, ``ny``): the expansion by chunked GEMMs,
    each entry the bound cannot certify recomputed from ``X``, ``Y`` (the same points,
    uncentred), then ``spec``'s kernel, into ``out``."""
    dtype = out.dtype
    n, d = Xc.shape
    m = Yc.shape[0]
    eps = np.finfo(np.float64).eps
    tau = (2 * chunked_terms(d) + 8) * eps / RTOL_TARGET[dtype]
    # GEMM by fixed row blocks (their size depends on the shape only), each block one
    # single-threaded BLAS call followed by a serial numba pass that finalises it, the
    # blocks spread over Python worker threads: bitwise the same for any thread count
    # (a multi-threaded GEMM rounds by its own split), and BLAS's and numba's idle
    # threads never spin against each other.  float64 results are computed in place;
    # float32 ones through a float64 scratch block.
    rows = gemm_rows(n, m)
    direct = dtype == np.float64

    def work(lo, hi):
        G = None if direct else np.empty((min(rows, hi - lo), m), dtype=np.float64)
        S = np.empty((min(rows, hi - lo), m), dtype=np.float64) if d > GEMM_CHUNK else None
        for r0 in range(lo, hi, rows):
            r1 = min(hi, r0 + rows)
            Gb = out[r0:r1] if G is None else G[: r1 - r0]
            _chunked_products(Xc[r0:r1], Yc, Gb, None if S is None else S[: r1 - r0])
            _jp.finalize_block(Gb, nx, ny, X, Y, r0, tau, spec.phi, spec.g, spec.c, spec.degree, symmetric,
                               out[r0:r1])

    with _threads.serial_blas():
        _threads.map_ranges(work, n, nt, align=rows)


#: the certified path centres the rows on the mean ``mu`` of ``Y`` unless ``||mu||^2`` is
#: at most this fraction of the mean squared norm of the rows of ``Y`` (float64 data)
CENTRE_BELOW = 0.1


def gemm_rows(n, m):
    """Rows per block of the certified path: at most :data:`GEMM_BLOCK_ELEMENTS` results,
    at least 2 blocks of 64 rows or more (8 for a few columns, ``m`` up to
    :data:`GEMM_CHUNK`: a skinny product, one candidate set against every row), so that
    the threads share even a small problem (more blocks of many columns repack ``Y``
    once each, which costs more than it gives).  A function of the shape alone: BLAS may
    round a block of another height otherwise, and the bits must not follow the thread
    count."""
    rows = min(n, GEMM_BLOCK_ELEMENTS // m, max(64, -(-n // (8 if m <= GEMM_CHUNK else 2))))
    return max(1, rows)


def chunked_terms(d):
    """The most roundings one entry of the chunked products (or norms) of ``d`` features
    goes through: a chunk's sum in BLAS's order, then one addition per further chunk."""
    return min(d, GEMM_CHUNK) + (d - 1) // GEMM_CHUNK


def chunked_sqnorms(A):
    """The squared norms of the rows of ``A``, summed :data:`GEMM_CHUNK` features at a
    time and the chunks added in order (the rounding bound of :func:`chunked_terms`)."""
    s = np.einsum("ij,ij->i", A[:, :GEMM_CHUNK], A[:, :GEMM_CHUNK])
    for c0 in range(GEMM_CHUNK, A.shape[1], GEMM_CHUNK):
        s += np.einsum("ij,ij->i", A[:, c0:c0 + GEMM_CHUNK], A[:, c0:c0 + GEMM_CHUNK])
    return s


def _chunked_products(A, B, out, scratch):
    """``out = A @ B.T``, one GEMM per :data:`GEMM_CHUNK` features, added in order into
    ``out`` (through ``scratch`` of its shape; None when there is one chunk)."""
    np.matmul(A[:, :GEMM_CHUNK], B[:, :GEMM_CHUNK].T, out=out)
    for c0 in range(GEMM_CHUNK, A.shape[1], GEMM_CHUNK):
        np.matmul(A[:, c0:c0 + GEMM_CHUNK], B[:, c0:c0 + GEMM_CHUNK].T, out=scratch)
        out += scratch


def dot_products(X, Y, spec, out, n_threads):
    """Fill ``out`` with ``phi(X @ Y.T)`` of a dot-product ``spec``: the product by
    fixed row blocks of single-threaded BLAS (the same bits for any thread count), then
    phi row by row."""
    nt = _threads.for_work(X.shape[0] * Y.shape[0] * (X.shape[1] + 8), n_threads)
    _dense.gemm(X, Y.T, out, nt)
    _jp.apply_rows.run(nt, spec.phi, spec.g, spec.c, spec.degree, out)
    return out


def matvec(X, Y, Vt, spec, out, n_threads):
    """``out = K(X, Y) @ Vt.T`` tile by tile, ``K`` never held (``Vt`` is ``V``
    transposed, C-contiguous)."""
    Yt = np.ascontiguousarray(Y.T)
    _jp.gram_matvec.run(n_threads, X, Yt, Vt, *spec.args, out)
    return out


# ---------------------------------------------------------------- sparse input
def prepare_scaled(X, Y, length_scale):
    """``(Xc, Yc, dtype, sparse)``: :func:`prepare` and :func:`rescale` for dense input,
    :func:`prepare_sparse` when ``X`` or ``Y`` is ``scipy.sparse`` (then ``sparse``)."""
    if is_sparse(X) or is_sparse(Y):
        return (*prepare_sparse(X, Y, length_scale), True)
    Xc, Yc, dtype = prepare(X, Y)
    return (*rescale(Xc, Yc, length_scale, dtype), dtype, False)


def prepare_sparse(X, Y, length_scale, name_x="X", name_y="Y"):
    """Validate ``X`` and ``Y`` (at least one ``scipy.sparse``) as checked CSR rows of the
    common result dtype, each feature divided by its length scale; ``Y`` may be None.
    A dense side becomes CSR rows of its nonzeros."""
    Xs = _as_rows(X, name_x)
    Ys = None if Y is None else _as_rows(Y, name_y)
    if Ys is not None:
        _v.check_features(Xs, Ys, name_x, name_y)
    dtype = _v.result_dtype(Xs, Ys)
    ls = _v.check_length_scale(length_scale, Xs.shape[1])
    Xs = _scaled_rows(Xs, ls, dtype, name_x)
    Ys = None if Ys is None else _scaled_rows(Ys, ls, dtype, name_y)
    return Xs, Ys, dtype


def _as_rows(A, name):
    if is_sparse(A):
        return check_csr(A, name)
    import scipy.sparse as sp

    arr = _v.check_data(A, name)
    return check_csr(sp.csr_matrix(_v.to_dtype(arr, arr.dtype if arr.dtype.kind == "f" else np.float64)), name)


def _scaled_rows(A, ls, dtype, name):
    """``A`` in ``dtype``, its stored values divided by their column's length scale (in
    float64, as :func:`fastrbf._validation.scale_features` divides dense data)."""
    if ls is None:
        return A.astype(dtype)
    with np.errstate(over="ignore"):
        data = (A.data.astype(np.float64) / np.broadcast_to(ls, (A.shape[1],))[A.indices]).astype(dtype)
    if not np.all(np.isfinite(data)):
        raise ValueError(f"`{name}` divided by `length_scale` overflows {np.dtype(dtype)}; use larger length scales "
                         "or rescale the data.")
    return CSRRows(data, A.indices, A.indptr, A.shape)


def sparse_pairwise(X, Y, spec, symmetric, out, n_threads):
    """:func:`pairwise` for CSR rows (:class:`fastrbf._sparse.CSRRows` of ``out.dtype``;
    ``Y`` may be ``X`` itself).

    The norm expansion ``||x||^2 + ||y||^2 - 2 x.y`` with the dot products from SciPy's
    sparse product (float64, by fixed row blocks: the same bits for any thread count);
    every entry within the rigorous error bound of the expansion is recomputed by direct
    differences over the two rows' stored columns (:func:`~._jit.tiles.direct_sq`, the
    same bits as on the densified rows).
    The rows are not centred (that would fill them), so the bound uses the uncentred
    norms and the most stored values of a row instead of ``d``.
    """
    dtype = out.dtype
    n, m = X.shape[0], Y.shape[0]
    X, Y = compress_columns(X, Y)
    Xm = to_scipy(X, np.float64)
    Ym = Xm if symmetric else to_scipy(Y, np.float64)
    nx = np.asarray(Xm.multiply(Xm).sum(axis=1), dtype=np.float64).reshape(-1)
    ny = nx if symmetric else np.asarray(Ym.multiply(Ym).sum(axis=1), dtype=np.float64).reshape(-1)
    k = max(_max_row_nnz(X), _max_row_nnz(Y), 1)
    tau = (2 * k + 8) * np.finfo(np.float64).eps / RTOL_TARGET[dtype]
    Xt = (X.data, X.indices, X.indptr)
    Yt = Xt if symmetric else (Y.data, Y.indices, Y.indptr)
    YmT = Ym.T.tocsr()
    rows = gemm_rows(n, m)
    direct = dtype == np.float64
    nt = _threads.for_work(n * m * 16 + Xm.nnz * m, n_threads)

    def work(lo, hi):
        G = None if direct else np.empty((min(rows, hi - lo), m), dtype=np.float64)
        for r0 in range(lo, hi, rows):
            r1 = min(hi, r0 + rows)
            Gb = out[r0:r1] if G is None else G[: r1 - r0]
            (Xm[r0:r1] @ YmT).toarray(out=Gb)  # (toarray zeroes Gb first)
            _jp.finalize_block(Gb, nx, ny, Xt, Yt, r0, tau, spec.phi, spec.g, spec.c, spec.degree, symmetric,
                               out[r0:r1])

    _threads.map_ranges(work, n, nt, align=rows)
    if symmetric:
        _jp.mirror_upper.run(nt, out)
    return out


def sparse_dot_products(X, Y, spec, out, n_threads):
    """:func:`dot_products` for CSR rows: SciPy's sparse product (in float64 for float32
    results, then rounded once), then phi row by row."""
    X, Y = compress_columns(X, Y)
    Xm = to_scipy(X, np.float64)
    Ym = to_scipy(Y, np.float64)
    nt = _threads.for_work(X.shape[0] * Y.shape[0] * 8 + Xm.nnz * Y.shape[0], n_threads)
    P = Xm @ Ym.T.tocsr()
    if out.dtype == np.float64:
        P.toarray(out=out)  # straight into the result: no second n x m array
    else:
        np.copyto(out, P.toarray(), casting="same_kind")
    _jp.apply_rows.run(nt, spec.phi, spec.g, spec.c, spec.degree, out)
    return out


def _max_row_nnz(A):
    return int(np.diff(A.indptr).max()) if A.shape[0] else 0
