"""The kernels of the pairwise engine (:mod:`fastrbf._pairwise`): ``sqdist``, ``gram``
and ``gram_matvec`` reach theirs here.

- :func:`pairwise_rows` / :func:`pairwise_upper`: phi of the squared distances (or dot
  products) by direct differences, all rows or the upper triangle, in blocks of the
  register-blocked micro-kernels (:func:`~.tiles.fill_block`; the bits of
  :func:`~.tiles.chunk_row`); :func:`mirror_upper` copies that triangle down.
- :func:`finalize_block`: the certified GEMM path's finish of one row block (norm
  expansion, recomputation of the entries the error bound does not cover, phi).
- :func:`apply_rows`: phi on a BLAS product (dot-product kernels).
- :func:`gram_matvec`: ``K(X, Y) @ V`` tile by tile, ``K`` never held.

Each task (``lo:hi``, see :func:`~._decorators.pjit`) owns whole output rows: no races,
no reductions across threads, so results do not depend on the thread count or on how
tasks are grouped into blocks.
"""

import numpy as np

from ._decorators import jit, jit_inline, pjit
from .kernels import apply_kernel
from .llvm.micro import block_cols, block_rows
from .tiles import JB, direct_sq, dot64, fill_block, fill_rows, pair_block


@pjit(tasks=lambda phi, g, c, degree, out: out.shape[0],
      work=lambda phi, g, c, degree, out: 8 * out.size)
def apply_rows(lo, hi, phi, g, c, degree, out):
    # IN: rows lo:hi, phi, g (m,), c (4,), degree
    # IN/OUT: out (n, m) dot products -> kernel values
    m = out.shape[1]
    for i in range(lo, hi):
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            apply_kernel(phi, out[i, j0:j1], g[j0:j1], c, degree)


RB = 16  # rows per task of gram_matvec


@pjit(tasks=lambda X, *_: (X.shape[0] + RB - 1) // RB,
      work=lambda X, Yt, Vt, *_: X.shape[0] * Yt.shape[1] * (Yt.shape[0] + 2 * Vt.shape[0] + 4))
def gram_matvec(lo, hi, X, Yt, Vt, dot, phi, g, c, degree, out):
    # IN: tasks lo:hi, X (n, d), Yt (d, m), Vt (k, m), dot, phi, g (m,), c (4,), degree
    # OUT: out (n, k) = K(X, Y) @ V.  Each task owns RB rows of out and a private
    # 2 x JB tile; K is never held.  Sums: one float64 partial per column chunk,
    # added in chunk order.
    n = X.shape[0]
    m = Yt.shape[1]
    k = Vt.shape[0]
    for b in range(lo, hi):
        i0 = b * RB
        i1 = min(n, i0 + RB)
        acc = np.zeros((i1 - i0, k), dtype=np.float64)
        tile = np.empty((2, min(m, JB)), dtype=out.dtype)
        for j0 in range(0, m, JB):
            j1 = min(m, j0 + JB)
            t0 = tile[0, : j1 - j0]
            t1 = tile[1, : j1 - j0]
            for i in range(i0, i1, 2):
                i2 = i + 1 if i + 1 < i1 else -1
                fill_rows(X, i, i2, Yt, j0, j1, dot, phi, g, c, degree, t0, t1)
                for q in range(k):
                    acc[i - i0, q] += dot64(t0, Vt[q, j0:j1])
                if i2 >= 0:
                    for q in range(k):
                        acc[i2 - i0, q] += dot64(t1, Vt[q, j0:j1])
        for i in range(i0, i1):
            for q in range(k):
                out[i, q] = acc[i - i0, q]


TR = 24  # rows per task of pairwise_rows and pairwise_upper (a multiple of every block's rows: 4, 12)


@jit_inline
def rows_block(X, i0, i1, Yt, j_start, j_end, dot, phi, g, c, degree, out):
    # rows i0:i1, columns j_start:j_end of out = phi of the distances (dot products):
    # column chunks that fit in cache (a whole number of micro-kernel blocks), and in
    # each, MR rows at a time, the block then phi while it is in L1
    nb = block_cols(Yt)
    mr = block_rows(X)
    cw = max(nb, JB // nb * nb)
    for j0 in range(j_start, j_end, cw):
        j1 = min(j_end, j0 + cw)
        for ib in range(i0, i1, mr):
            ie = min(i1, ib + mr)
            fill_block(X, ib, ie, Yt, j0, j1, dot, out, ib, j0)
            for i in range(ib, ie):
                apply_kernel(phi, out[i, j0:j1], g[j0:j1], c, degree)


@pjit(tasks=lambda X, *_: (X.shape[0] + TR - 1) // TR,
      work=lambda X, Yt, *_: X.shape[0] * Yt.shape[1] * (Yt.shape[0] + 4))
def pairwise_rows(lo, hi, X, Yt, dot, phi, g, c, degree, out):
    # IN: tasks lo:hi, X (n, d), Yt (d, m), dot, phi, g (m,), c (4,), degree
    # OUT: out (n, m).  Task t owns the rows TR t : TR (t + 1).
    n = X.shape[0]
    m = Yt.shape[1]
    j_start = np.int64(0)
    for t in range(lo, hi):
        i0 = t * TR
        rows_block(X, i0, min(n, i0 + TR), Yt, j_start, m, dot, phi, g, c, degree, out)


@pjit(tasks=lambda X, *_: ((X.shape[0] + TR - 1) // TR + 1) // 2,
      work=lambda X, Xt, *_: X.shape[0] * Xt.shape[1] * (Xt.shape[0] + 4) // 2)
def pairwise_upper(lo, hi, X, Xt, dot, phi, g, c, degree, out):
    # IN: tasks lo:hi, X (n, d), Xt (d, n), ...; OUT: out (n, n), at least the upper triangle and
    # the diagonal.  Row block b (rows TR b : TR (b + 1)) computes columns TR b..n-1 (so
    # the entries of its diagonal block below the diagonal too, the values the mirror
    # will write: D[i, j] is bitwise D[j, i]).  Task t takes blocks t and P - 1 - t so
    # that every task has the same work.
    n = X.shape[0]
    for q in range(2 * lo, 2 * hi):
        b = pair_block(q, (n + TR - 1) // TR)
        if b >= 0:
            i0 = b * TR
            rows_block(X, i0, min(n, i0 + TR), Xt, i0, n, dot, phi, g, c, degree, out)


MB = 64  # block edge of the mirror copy


@pjit(tasks=lambda out: ((out.shape[0] + MB - 1) // MB + 1) // 2,
      work=lambda out: out.size)
def mirror_upper(lo, hi, out):
    # IN: tasks lo:hi; IN/OUT: out (n, n); copies the upper triangle onto the lower
    # one, in blocks; task p takes block rows p and nb - 1 - p.
    n = out.shape[0]
    for q in range(2 * lo, 2 * hi):
        b = pair_block(q, (n + MB - 1) // MB)
        if b < 0:
            continue
        i0 = b * MB
        i1 = min(n, i0 + MB)
        for j0 in range(0, i1, MB):
            j1 = min(i1, j0 + MB)
            for i in range(i0, i1):
                row = out[i]
                for j in range(j0, min(j1, i)):
                    row[j] = out[j, i]


@jit_inline
def finalize_row(G, r, nx, ny, X, Y, row0, tau, phi, g, c, degree, upper, out):
    # Row r of a block: see finalize_block.
    m = G.shape[1]
    i = row0 + r
    j_start = i if upper else 0
    gr = G[r, j_start:m]
    o = out[r, j_start:m]
    nyr = ny[j_start:m]
    nxi = nx[i]
    L = m - j_start
    bad = 0
    for j in range(L):
        s = nxi + nyr[j]
        v = max(s - 2.0 * gr[j], 0.0)
        gr[j] = v
        if v <= tau * s:
            bad += 1
    if bad > 0:
        # entries whose cancellation could exceed the error bound: recompute by
        # direct differences from the original data (float64 accumulation)
        for j in range(L):
            if gr[j] <= tau * (nxi + nyr[j]):
                gr[j] = direct_sq(X, i, Y, j_start + j)
    for j in range(L):
        o[j] = gr[j]
    apply_kernel(phi, o, g[j_start:m], c, degree)


@jit
def finalize_block(G, nx, ny, X, Y, row0, tau, phi, g, c, degree, upper, out):
    # IN: G (b, m) float64 dot products of the centred rows row0:row0+b against Y,
    #     nx (n,) ny (m,) float64 squared norms of the centred rows,
    #     X (n, d), Y (m, d) the original (uncentred) data, dense or CSR triples,
    #     tau the certification ratio.
    # OUT: out (b, m); may be G itself.  With upper, only j >= i is written.
    # Serial: called from several Python threads at once, one block each.
    for r in range(G.shape[0]):
        finalize_row(G, r, nx, ny, X, Y, row0, tau, phi, g, c, degree, upper, out)
