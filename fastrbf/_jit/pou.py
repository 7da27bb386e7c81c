"""Partition-of-unity interpolation: the kernels of the grid of patches, of the local
solves and of the blended evaluation (:mod:`fastrbf.models.pou`).

The grid: cell ``k`` of dimension ``a`` is ``[lo_a + k h_a, lo_a + (k + 1) h_a)``, with
``inv_a = 1 / h_a`` (0 for a dimension of zero extent, which has one cell); cells are
numbered row-major (``strides``).  A point outside the grid is counted in the nearest
cell (its coordinates clamped), which is how queries outside the data's bounding box
find the patches around them.

Patch ``j`` is a ball (centre, radius ``rho_j``) and holds the data points strictly
inside it, taken cell by cell in the order of the cells, each cell's points in their
order: the same members whatever the thread count.  Its local system is
``interpolate``'s, ``[[K + diag(alpha), P], [P^T, 0]]`` (``P`` the monomials of the points
shifted and scaled into the patch's bounding box, as SciPy's local mode), solved by the
null-space method with a Householder QR of ``P`` and a Cholesky factorisation of
``Q_2^T (K + diag(alpha)) Q_2``, everything float64.  An ill-posed patch (fewer points
than monomials, a tail the points do not determine, duplicate points without smoothing,
a Cholesky breakdown) gets a status code and no weights; the caller raises.

Every kernel is a block kernel whose task owns its outputs (a patch's columns of the
patch arrays, a query's row of the result), and every sum runs in a fixed order in a
float64 accumulator, so results are bitwise the same for any thread count.
"""

import numpy as np

from ._decorators import jit, jit_inline, pjit
from .grad import diff_dot64, value_and_deriv
from .kernels import apply_kernel
from .local import monomials
from .tiles import chunk_row, dot64

OK, TOO_FEW, TAIL_RANK, DUPLICATE, NOT_PD = 0, 1, 2, 3, 4
QB = 16  # query rows per task
#: a tail column whose part orthogonal to the previous ones has a norm below this times
#: sqrt(points) makes the patch's tail undetermined (the monomials lie in [-1, 1])
RANK_TOL = 1e-10


@jit_inline
def _cell_index(x, lo, inv, counts, a):
    f = (x - lo[a]) * inv[a]
    if f <= 0.0:
        return 0
    if f >= counts[a]:
        return counts[a] - 1
    return min(int(f), counts[a] - 1)


@pjit(tasks=lambda X, *_: X.shape[0], work=lambda X, *_: X.size * 8)
def cells_of(lo_, hi_, X, lo, inv, counts, strides, out):
    # IN: rows lo_:hi_ of X (m, d); the grid lo, inv (d,), counts, strides (d,) int64
    # OUT: out (m,) the cell of each row (clamped into the grid)
    for i in range(lo_, hi_):
        c = 0
        for a in range(X.shape[1]):
            c += _cell_index(X[i, a], lo, inv, counts, a) * strides[a]
        out[i] = c


@jit
def _box(center, rad, lo, inv, counts, klo, khi, kk):
    # the cells a ball can touch: klo[a] <= k <= khi[a]; kk starts at klo
    for a in range(center.shape[0]):
        klo[a] = _cell_index(center[a] - rad, lo, inv, counts, a)
        khi[a] = _cell_index(center[a] + rad, lo, inv, counts, a)
        kk[a] = klo[a]


@jit
def _next(kk, klo, khi, strides):
    # advance the odometer kk (last dimension fastest); the flat cell, or -1 when done
    a = kk.shape[0] - 1
    while a >= 0:
        kk[a] += 1
        if kk[a] <= khi[a]:
            break
        kk[a] = klo[a]
        a -= 1
    if a < 0:
        return -1
    c = 0
    for b in range(kk.shape[0]):
        c += kk[b] * strides[b]
    return c


def _members_work(centers, rho, Xs, *_):
    return Xs.size * 64


@pjit(tasks=lambda centers, *_: centers.shape[0], work=_members_work)
def patch_members(lo_, hi_, centers, rho, Xs, cell_start, lo, inv, counts, strides, fill, ptr, members):
    # IN: patches lo_:hi_; centers (P, d), rho (P,); Xs (n, d) the points in cell order,
    #     cell_start (C + 1,): the points of cell c are cell_start[c]:cell_start[c + 1]
    # OUT: fill False: ptr[j + 1] = the number of points of patch j (|x - c_j| < rho_j);
    #      fill True: members[ptr[j]:ptr[j + 1]] = their rows of Xs
    d = Xs.shape[1]
    klo = np.empty(d, dtype=np.int64)
    khi = np.empty(d, dtype=np.int64)
    kk = np.empty(d, dtype=np.int64)
    for j in range(lo_, hi_):
        r2 = rho[j] * rho[j]
        _box(centers[j], rho[j], lo, inv, counts, klo, khi, kk)
        c = 0
        for b in range(d):
            c += kk[b] * strides[b]
        k = ptr[j] if fill else 0
        while c >= 0:
            for p in range(cell_start[c], cell_start[c + 1]):
                s = 0.0
                for a in range(d):
                    t = Xs[p, a] - centers[j, a]
                    s += t * t
                if s < r2:
                    if fill:
                        members[k] = p
                    k += 1
            c = _next(kk, klo, khi, strides)
        if not fill:
            ptr[j + 1] = k


@jit
def cell_patches(centers, rho, lo, h, inv, counts, strides, fill, cell_ptr, patches):
    # serial (each patch scatters into several cells): the patches whose ball meets
    # each cell, by ascending patch
    # IN: centers (P, d), rho (P,), the grid (h (d,) the cell sizes)
    # OUT: fill False: cell_ptr[c + 1] += 1 per patch meeting cell c; fill True:
    #      patches[cell_ptr[c]:cell_ptr[c + 1]] filled (cell_ptr is used as the cursor
    #      and restored)
    d = centers.shape[1]
    klo = np.empty(d, dtype=np.int64)
    khi = np.empty(d, dtype=np.int64)
    kk = np.empty(d, dtype=np.int64)
    for j in range(centers.shape[0]):
        r2 = rho[j] * rho[j]
        _box(centers[j], rho[j], lo, inv, counts, klo, khi, kk)
        c = 0
        for b in range(d):
            c += kk[b] * strides[b]
        while c >= 0:
            s = 0.0  # squared distance from the centre to the cell's box
            for a in range(d):
                b0 = lo[a] + kk[a] * h[a]
                b1 = b0 + h[a]
                t = 0.0
                if centers[j, a] < b0:
                    t = b0 - centers[j, a]
                elif centers[j, a] > b1:
                    t = centers[j, a] - b1
                s += t * t
            if s < r2:
                if fill:
                    patches[cell_ptr[c]] = j
                    cell_ptr[c] += 1
                else:
                    cell_ptr[c + 1] += 1
            c = _next(kk, klo, khi, strides)
    if fill:  # the cursors now hold the ends: shift back to the starts
        for c in range(cell_ptr.shape[0] - 1, 0, -1):
            cell_ptr[c] = cell_ptr[c - 1]
        cell_ptr[0] = 0


def _fit_work(ptr, *_):
    S = ptr[-1]
    P = max(1, ptr.shape[0] - 1)
    p = S // P + 1
    return P * p * p * (p // 3 + 16)


@pjit(tasks=lambda ptr, *_: ptr.shape[0] - 1, work=_fit_work)
def patch_fit(lo_, hi_, ptr, members, Xs, Ys, alpha, powers, phi, g, c, degree,
              Pt, Wt, coef, shift, scale, status, info, resid):
    # IN: patches lo_:hi_; ptr (P + 1,), members (S,) rows of Xs (n, d), Ys (n, t),
    #     alpha (n,); powers (q, d); phi, g (>= largest patch,), c, degree: the kernel
    # OUT: Pt (d, S), Wt (t, S): the points and weights of patch j in columns
    #      ptr[j]:ptr[j + 1]; coef (P, q, t) the tail; shift, scale (P, d) of its
    #      monomials; status (P,) OK or the code of what makes it ill-posed, info (P, 2)
    #      two rows of Xs (duplicates) or the column of a Cholesky breakdown; resid (P,)
    #      max |s_j(x_i) - y_i| over the patch's points
    # Every inner loop runs along a row (the dot products by dot64), so the system is
    # worked on by rows: A <- H A by row updates, A <- A H and the Cholesky factor by
    # dot products of rows, the targets as rows of Bt.
    d = Xs.shape[1]
    t = Ys.shape[1]
    q = powers.shape[0]
    pm = 0
    for j in range(lo_, hi_):
        pm = max(pm, ptr[j + 1] - ptr[j])
    A = np.empty((pm, pm))
    A0 = np.empty((pm, pm))
    Bt = np.empty((t, pm))
    P0 = np.empty((pm, q))  # the monomials
    V = np.empty((pm, q))  # QR work: Householder vectors, below the diagonal
    Vt = np.zeros((q, pm))  # the same vectors as rows
    R = np.zeros((q, q))
    tau = np.empty(q)
    xt = np.empty((d, pm))
    xr = np.empty((pm, d))
    w = np.empty(pm)
    nodot = np.bool_(False)
    zero = np.int64(0)  # not a literal 0: chunk_row would compile a second time for it
    for j in range(lo_, hi_):
        j0 = ptr[j]
        p = ptr[j + 1] - j0
        status[j] = OK
        if p == 0 or p < q:
            status[j] = TOO_FEW
            continue
        for a in range(d):
            mn = Xs[members[j0], a]
            mx = mn
            for i in range(p):
                v = Xs[members[j0 + i], a]
                xr[i, a] = v
                xt[a, i] = v
                Pt[a, j0 + i] = v
                mn = min(mn, v)
                mx = max(mx, v)
            shift[j, a] = (mx + mn) / 2
            sc = (mx - mn) / 2
            scale[j, a] = sc if sc != 0.0 else 1.0
        for i in range(p):  # the lower triangle (each kernel value once), then mirrored
            row = A[i, :i + 1]
            chunk_row(xr, i, xt, zero, i + 1, nodot, row)
            ai = alpha[members[j0 + i]]
            if ai == 0.0 and status[j] == OK:
                for b in range(i):
                    if row[b] == 0.0 and alpha[members[j0 + b]] == 0.0:
                        status[j] = DUPLICATE
                        info[j, 0] = members[j0 + b]
                        info[j, 1] = members[j0 + i]
                        break
            apply_kernel(phi, row, g[:i + 1], c, degree)
            A[i, i] += ai
            for b in range(i):
                A[b, i] = row[b]
            monomials(xr[i], shift[j], scale[j], powers, P0[i])
            for r in range(t):
                Bt[r, i] = Ys[members[j0 + i], r]
        if status[j] != OK:
            continue
        for i in range(p):  # element loops: a slice copy compiles numba's shape-mismatch error (seconds)
            for b in range(p):
                A0[i, b] = A[i, b]
            for b in range(q):
                V[i, b] = P0[i, b]
        # Householder QR of the monomials: H_k = I - tau_k v_k v_k^T, v_k = Vt[k, k:p]
        tol = RANK_TOL * np.sqrt(np.float64(p))
        for k in range(q):
            nrm = 0.0
            for i in range(k, p):
                nrm += V[i, k] * V[i, k]
            nrm = np.sqrt(nrm)
            if not nrm > tol:
                status[j] = TAIL_RANK
                break
            diag = -nrm if V[k, k] >= 0.0 else nrm
            V[k, k] -= diag
            vn = 0.0
            for i in range(k, p):
                vn += V[i, k] * V[i, k]
            tau[k] = 2.0 / vn
            R[k, k] = diag
            for cc in range(k + 1, q):
                s = 0.0
                for i in range(k, p):
                    s += V[i, k] * V[i, cc]
                s *= tau[k]
                for i in range(k, p):
                    V[i, cc] -= s * V[i, k]
                R[k, cc] = V[k, cc]
            Vt[k, :k] = 0.0
            for i in range(k, p):
                Vt[k, i] = V[i, k]
        if status[j] != OK:
            continue
        # A <- Q^T A Q by symmetric rank-2 updates, H A H = A - v w^T - w v^T with
        # u = tau A v, w = u - (tau / 2) (v^T u) v (one pass to form u, one to update);
        # Bt <- (Q^T B)^T
        for k in range(q):
            v = Vt[k, :p]  # zero before k
            for i in range(p):
                w[i] = tau[k] * dot64(A[i, k:p], v[k:p])
            gam = 0.5 * tau[k] * dot64(v[k:p], w[k:p])
            for i in range(p):
                w[i] -= gam * v[i]
            for i in range(p):
                vi = v[i]
                wi = w[i]
                for b in range(p):
                    A[i, b] -= vi * w[b] + wi * v[b]
            for r in range(t):
                f = tau[k] * dot64(Bt[r, k:p], v[k:p])
                for i in range(k, p):
                    Bt[r, i] -= f * v[i]
        # Cholesky of the trailing block: its lower triangle, row by row
        for i in range(q, p):
            for b in range(q, i + 1):
                s = A[i, b] - dot64(A[i, q:b], A[b, q:b])
                if b < i:
                    A[i, b] = s / A[b, b]
                elif s > 0.0:
                    A[i, i] = np.sqrt(s)
                else:
                    status[j] = NOT_PD
                    info[j, 0] = i - q
                    break
            if status[j] != OK:
                break
        if status[j] != OK:
            continue
        for r in range(t):
            y = Bt[r]
            for i in range(q, p):  # L u = b2
                y[i] = (y[i] - dot64(A[i, q:i], y[q:i])) / A[i, i]
            for i in range(p - 1, q - 1, -1):  # L^T z = u, column by column of L^T (rows of L)
                y[i] /= A[i, i]
                zi = y[i]
                for k in range(q, i):
                    y[k] -= A[i, k] * zi
            for i in range(q - 1, -1, -1):  # R c = b1 - (Q^T A Q)[:q, q:] z
                s2 = y[i] - dot64(A[i, q:p], y[q:p])
                for k in range(i + 1, q):
                    s2 -= R[i, k] * coef[j, k, r]
                coef[j, i, r] = s2 / R[i, i]
            y[:q] = 0.0  # w = Q [0; z]
            for k in range(q - 1, -1, -1):
                v = Vt[k, k:p]
                f = tau[k] * dot64(y[k:p], v)
                for i in range(k, p):
                    y[i] -= f * v[i - k]
            for i in range(p):
                Wt[r, j0 + i] = y[i]
        worst = 0.0
        for r in range(t):
            for i in range(p):
                s3 = dot64(A0[i, :p], Wt[r, j0:j0 + p]) - Ys[members[j0 + i], r]
                for k in range(q):
                    s3 += P0[i, k] * coef[j, k, r]
                worst = max(worst, abs(s3))
        resid[j] = worst


@jit_inline
def _wendland(r2, rho):
    # Wendland's C2 weight (1 - u)^4 (4 u + 1), u = |x - c| / rho < 1, and -20 (1 - u)^3 / rho^2,
    # its gradient divided by (x - c)
    u = np.sqrt(r2) / rho
    w = 1.0 - u
    w3 = w * w * w
    return w3 * w * (4.0 * u + 1.0), -20.0 * w3 / (rho * rho)


@jit_inline
def _monomial_grads(x, shift, scale, powers, val, grad):
    # val[p] as monomials; grad[p, a] = its derivative in x_a
    d = x.shape[0]
    for p in range(powers.shape[0]):
        v = 1.0
        for a in range(d):
            grad[p, a] = 1.0
        for b in range(d):
            tb = (x[b] - shift[b]) / scale[b]
            e = powers[p, b]
            pw = 1.0
            for _ in range(e):
                pw *= tb
            v *= pw
            for a in range(d):
                if a == b:
                    dp = 0.0
                    if e > 0:
                        dp = e / scale[b]
                        for _ in range(e - 1):
                            dp *= tb
                    grad[p, a] *= dp
                else:
                    grad[p, a] *= pw
        val[p] = v


def _eval_work(Xq, order, Pt, Wt, ptr, *_):
    # about 8 patches per query, each of the mean patch size
    return Xq.shape[0] * 8 * (Pt.shape[1] // max(1, ptr.shape[0] - 1) + 1) * (Pt.shape[0] + 8) * Wt.shape[0]


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + QB - 1) // QB, work=_eval_work)
def blend(lo_, hi_, Xq, order, Pt, Wt, ptr, coef, shift, scale, centers, rho, cells, cell_ptr, patches,
          powers, phi, g, c, degree, out, gout):
    # IN: tasks lo_:hi_ of QB queries each, taken in `order` (by cell); Xq (m, d);
    #     the patches (Pt, Wt, ptr, coef, shift, scale as patch_fit left them, centers,
    #     rho); cells (m,) the cell of each query, cell_ptr, patches: the patches
    #     meeting each cell; powers, phi, g, c, degree
    # OUT: out (m, t) sum_j w_j s_j / sum_j w_j; gout (m, t, d) its gradient (None: the
    #      values alone, the gradient's code pruned at compile time).  A query no patch
    #      covers takes the patch of its cell's list with the least |x - c_j| / rho_j
    #      (extrapolation).
    m, d = Xq.shape
    t = Wt.shape[0]
    q = powers.shape[0]
    pm = g.shape[0]
    kv = np.empty(pm)
    ev = np.empty(2 * pm)
    pv = np.empty(q)
    pg = np.empty((q, d))
    S = np.empty(t)
    GS = np.empty((t, d))
    G0 = np.empty(d)
    sv = np.empty(t)
    sg = np.empty((t, d))
    nodot = np.bool_(False)
    for i0 in range(lo_ * QB, min(m, hi_ * QB)):
        i = order[i0]
        cell = cells[i]
        W = 0.0
        S[:] = 0.0
        GS[:] = 0.0
        G0[:] = 0.0
        best = np.int64(-1)  # not a literal -1: _patch_value would compile a second time for it
        best_u = np.inf
        for z in range(cell_ptr[cell], cell_ptr[cell + 1]):
            j = patches[z]
            r2 = 0.0
            for a in range(d):
                dx = Xq[i, a] - centers[j, a]
                r2 += dx * dx
            if not r2 < rho[j] * rho[j]:
                uj = np.sqrt(r2) / rho[j]
                if uj < best_u:
                    best_u = uj
                    best = j
                continue
            w, dw = _wendland(r2, rho[j])
            _patch_value(Xq, i, Pt, Wt, ptr, coef, shift, scale, powers, phi, g, c, degree, gout, j,
                         kv, ev, pv, pg, sv, sg, nodot)
            W += w
            for r in range(t):
                S[r] += w * sv[r]
                if gout is not None:
                    for a in range(d):
                        GS[r, a] += dw * (Xq[i, a] - centers[j, a]) * sv[r] + w * sg[r, a]
            if gout is not None:
                for a in range(d):
                    G0[a] += dw * (Xq[i, a] - centers[j, a])
        if W > 0.0:
            for r in range(t):
                f = S[r] / W
                out[i, r] = f
                if gout is not None:
                    for a in range(d):
                        gout[i, r, a] = (GS[r, a] - f * G0[a]) / W
        else:
            _patch_value(Xq, i, Pt, Wt, ptr, coef, shift, scale, powers, phi, g, c, degree, gout, best,
                         kv, ev, pv, pg, sv, sg, nodot)
            for r in range(t):
                out[i, r] = sv[r]
                if gout is not None:
                    for a in range(d):
                        gout[i, r, a] = sg[r, a]


@jit
def _patch_value(Xq, i, Pt, Wt, ptr, coef, shift, scale, powers, phi, g, c, degree, gout, j,
                 kv, ev, pv, pg, sv, sg, nodot):
    # sv (t,) = s_j(Xq[i]), the local interpolant of patch j; unless gout is None, sg (t, d) its gradient
    d = Xq.shape[1]
    t = Wt.shape[0]
    q = powers.shape[0]
    j0 = ptr[j]
    p = ptr[j + 1] - j0
    kk = kv[:p]
    chunk_row(Xq, i, Pt, j0, j0 + p, nodot, kk)
    if gout is not None:
        for b in range(p):
            v, dv = value_and_deriv(phi, g[b] * kk[b], c, degree)
            kk[b] = v
            ev[b] = 2.0 * dv * g[b]
        _monomial_grads(Xq[i], shift[j], scale[j], powers, pv, pg)
    else:
        apply_kernel(phi, kk, g[:p], c, degree)
        monomials(Xq[i], shift[j], scale[j], powers, pv)
    for r in range(t):
        wr = Wt[r, j0:j0 + p]
        s = dot64(kk, wr)
        for k in range(q):
            s += pv[k] * coef[j, k, r]
        sv[r] = s
        if gout is not None:
            bb = ev[p:2 * p]
            for b in range(p):
                bb[b] = ev[b] * wr[b]
            for a in range(d):
                ga = diff_dot64(bb, Xq[i, a], Pt[a, j0:j0 + p])
                for k in range(q):
                    ga += pg[k, a] * coef[j, k, r]
                sg[r, a] = ga
