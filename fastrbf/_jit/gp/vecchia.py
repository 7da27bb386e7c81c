"""The kernels of the nearest-neighbour (Vecchia) Gaussian process
(:mod:`fastrbf.gp._vecchia`): the maximin ordering, the conditioning sets of the first
points, the log likelihood with its gradient, and prediction from nearest neighbours.

Each point ``t`` of the ordering is conditioned on its set ``N`` of at most ``m``
earlier neighbours (``nbr[t, :count[t]]``, positions in the ordering); the covariance
``C_S`` of ``S = N + [t]`` ((m + 1) x (m + 1): kernel values from the scaled
coordinates, the noise on the diagonal) is factored in place, ``C_S = L L^T``, and with
``z = L^-1 y_S`` the point adds ``-log(2 pi)/2 - log L_tt - z_t^2 / 2`` to the log
likelihood (the residual ``e = z_t L_tt`` of ``y_t`` after its conditional mean, the
conditional variance ``d = L_tt^2``).  The gradient of that term in any parameter of
``C_S`` is ``sum_ab M_ab dC_ab`` with ``M = a v v^T + b (w v^T + v w^T)``, ``v = (-B, 1)``,
``w = (C_NN^-1 y_N, 0)``, ``B = C_NN^-1 c_N``, ``a = (e^2 / d - 1) / (2 d)``, ``b = e / (2
d)`` (the derivative of ``-log d / 2 - e^2 / (2 d)`` through ``d = c_tt - c_N^T B`` and ``e
= y_t - B^T y_N``): two triangular solves with the top-left block of ``L`` after the
factor, ``O(m^2)``; one matrix per point, never one per parameter.

Eight positions with full conditioning sets are done at once (:func:`_group`), in the
lane layout of :mod:`fastrbf._jit.llvm.lanes` (``A[a, b, lane]``, lane innermost): the
distances, kernel values, factor, solves and the gradient's sums are vector operations
across the eight problems (the factor is otherwise a chain of scalar multiply-adds):
2.6x faster at N = 1e5 and 3x at 1e6 than one position at a time, for 8 s more cold
compilation per kernel.  The gradient's sums per row are ``f1 sum_b B_b K_ab + f2
sum_b w_b K_ab`` (and the same over ``D_ab (x_ak - x_bk)^2`` per feature), dot products
along the lanes.  The first positions (fewer neighbours) and a block's last few go one at
a time.

Tasks are blocks of :data:`VB` consecutive positions (a multiple of the lanes), each
writing its own row of ``part`` (its terms added in position order, a group's in lane
order); the caller adds the rows in block order, so the sums do not depend on the thread
count.  The maximin ordering is serial (each
choice depends on all before it).
"""

import math

import numpy as np

from .._decorators import jit, jit_inline, pjit
from ..grad import value_and_deriv
from ..llvm.lanes import LANES, lane_dot_sub, lane_mul, lane_sqdist
from ..neighbors.kdtree import box_lb, insert, node_range

VB = 256  # positions per task
LOG2PI = math.log(2.0 * math.pi)


@jit_inline
def _sqd(X, i, Y, j):
    # the squared distance of rows X[i] and Y[j], features in order
    s = 0.0
    for k in range(X.shape[1]):
        u = X[i, k] - Y[j, k]
        s += u * u
    return s


@jit
def _factor(U, p):
    # U (p, p) with the covariance in its upper triangle: overwritten by the factor
    # U^T U (right-looking, each update a contiguous row: it vectorises); False when a
    # pivot is <= 0
    for j in range(p):
        s = U[j, j]
        if not s > 0.0:
            return False
        s = math.sqrt(s)
        U[j, j] = s
        r = 1.0 / s
        for b in range(j + 1, p):
            U[j, b] *= r
        for i in range(j + 1, p):
            f = U[j, i]
            for b in range(i, p):
                U[i, b] -= f * U[j, b]
    return True


@jit
def _forward(U, p, z):
    # z[:p] <- U[:p, :p]^-T z[:p] (by columns of U^T: contiguous updates)
    for k in range(p):
        t = z[k] / U[k, k]
        z[k] = t
        for i in range(k + 1, p):
            z[i] -= U[k, i] * t


@jit
def _backward(U, p, z):
    # z[:p] <- U[:p, :p]^-1 z[:p]
    for i in range(p - 1, -1, -1):
        t = z[i]
        for k in range(i + 1, p):
            t -= U[i, k] * z[k]
        z[i] = t / U[i, i]


@jit
def _group(g, Xs, y, nbr, phi, c, degree, g0, amp, noise, grad, idx, Xl, R, K, D, A, z, B, w, inv, E, al, be, a1,
           aN, aL, SB, SW, F1, F2, acc):
    # the LANES positions g.. (each with m neighbours) at once, lane innermost: A[a, b,
    # lane] at flat (a P + b) LANES, lower triangles; adds their terms to acc in lane
    # order; False when a covariance is not positive definite
    d = Xs.shape[1]
    q = nbr.shape[1]
    P = q + 1
    L = LANES
    for lane in range(L):
        t = g + lane
        for a in range(q):
            idx[a * L + lane] = nbr[t, a]
        idx[q * L + lane] = t
    for a in range(P):
        for lane in range(L):
            ia = idx[a * L + lane]
            z[a * L + lane] = y[ia]
            for k in range(d):
                Xl[(a * d + k) * L + lane] = Xs[ia, k]
    for a in range(P):
        for b in range(a + 1):
            lane_sqdist(R, (a * P + b) * L, Xl, a * d * L, Xl, b * d * L, d)
        e0 = a * P * L
        for e in range(e0, e0 + (a + 1) * L):
            v, dv = value_and_deriv(phi, g0 * R[e], c, degree)
            K[e] = v
            D[e] = dv
            A[e] = amp * v
        for lane in range(L):
            A[(a * P + a) * L + lane] += noise
            D[(a * P + a) * L + lane] = 0.0
    for i in range(P):
        for j in range(i + 1):
            o = (i * P + j) * L
            lane_dot_sub(A, o, A, i * P * L, L, A, j * P * L, L, j)
            if j < i:
                lane_mul(A, o, inv, j * L)
        for lane in range(L):
            s = A[(i * P + i) * L + lane]
            if not s > 0.0:
                return False
            s = math.sqrt(s)
            A[(i * P + i) * L + lane] = s
            inv[i * L + lane] = 1.0 / s
    for i in range(P):
        lane_dot_sub(z, i * L, A, i * P * L, L, z, 0, L, i)
        lane_mul(z, i * L, inv, i * L)
    for lane in range(L):
        Ltt = A[(q * P + q) * L + lane]
        zt = z[q * L + lane]
        acc[0] += -0.5 * LOG2PI - math.log(Ltt) - 0.5 * zt * zt
    if not grad:
        return True
    for e in range(q * L):
        B[e] = A[q * P * L + e]
        w[e] = z[e]
    for i in range(q - 1, -1, -1):
        lane_dot_sub(B, i * L, A, ((i + 1) * P + i) * L, P * L, B, (i + 1) * L, L, q - 1 - i)
        lane_mul(B, i * L, inv, i * L)
        lane_dot_sub(w, i * L, A, ((i + 1) * P + i) * L, P * L, w, (i + 1) * L, L, q - 1 - i)
        lane_mul(w, i * L, inv, i * L)
    for lane in range(L):
        B[q * L + lane] = -1.0
        w[q * L + lane] = 0.0
        Ltt = A[(q * P + q) * L + lane]
        dd = Ltt * Ltt
        e = z[q * L + lane] * Ltt
        al[lane] = 0.5 * (e * e / dd - 1.0) / dd
        be[lane] = 0.5 * e / dd
        a1[lane] = 0.0
        aN[lane] = 0.0
        for k in range(d):
            aL[k * L + lane] = 0.0
    for a in range(P):
        # M_ab = f1 B_b + f2 w_b (b < a, twice), M_aa = al B_a^2 - 2 be w_a B_a
        for lane in range(L):
            SB[lane] = 0.0
            SW[lane] = 0.0
        lane_dot_sub(SB, 0, B, 0, L, K, a * P * L, L, a)  # -sum_b B_b K_ab
        lane_dot_sub(SW, 0, w, 0, L, K, a * P * L, L, a)
        for lane in range(L):
            Ba = B[a * L + lane]
            wa = w[a * L + lane]
            f1 = al[lane] * Ba - be[lane] * wa
            f2 = -be[lane] * Ba
            Maa = al[lane] * Ba * Ba - 2.0 * be[lane] * wa * Ba
            a1[lane] += Maa * K[(a * P + a) * L + lane] - 2.0 * (f1 * SB[lane] + f2 * SW[lane])
            aN[lane] += Maa
            F1[lane] = f1
            F2[lane] = f2
        for k in range(d):
            ek = k * P * P * L
            for b in range(a):
                o = (a * P + b) * L
                lane_sqdist(E, ek + o, Xl, (a * d + k) * L, Xl, (b * d + k) * L, 1)
                lane_mul(E, ek + o, D, o)
            for lane in range(L):
                SB[lane] = 0.0
                SW[lane] = 0.0
            lane_dot_sub(SB, 0, B, 0, L, E, ek + a * P * L, L, a)
            lane_dot_sub(SW, 0, w, 0, L, E, ek + a * P * L, L, a)
            for lane in range(L):
                aL[k * L + lane] += 4.0 * g0 * (F1[lane] * SB[lane] + F2[lane] * SW[lane])
    for lane in range(L):
        acc[1] += a1[lane]
        acc[d + 2] += aN[lane]
        for k in range(d):
            acc[2 + k] += aL[k * L + lane]
    return True


@pjit(tasks=lambda Xs, y, nbr, *_: (nbr.shape[0] + VB - 1) // VB,
      work=lambda Xs, y, nbr, *_: nbr.shape[0] * (nbr.shape[1] + 1) ** 2 * (nbr.shape[1] + 3 * Xs.shape[1] + 20))
def lml_blocks(lo, hi, Xs, y, nbr, count, phi, c, degree, g0, amp, noise, grad, part):
    # IN: tasks lo:hi (VB positions each), Xs (r, d) float64 the points divided by the
    #     length scales, y (r,) their targets, nbr (n, m) int32 and count (n,) the
    #     conditioning sets: position t (< n <= r) is row t of Xs, its set the rows
    #     nbr[t, :count[t]] (in memory the ordering itself: r = n, rows < t; a block of
    #     the ordering: its positions first, then the rows of their neighbours), the
    #     kernel phi of g0 s (s the squared scaled distance; c, degree its constants),
    #     amp, noise, grad
    # OUT: part[task] = (lml, d/dlog amp, d/dlog l_1 .. l_d, d/dlog noise) of the
    #      task's positions (the gradient only with grad); part[task, 0] = nan when a
    #      covariance is not positive definite
    n = nbr.shape[0]
    d = Xs.shape[1]
    m = nbr.shape[1]
    P = m + 1
    C = np.empty((P, P))
    K = np.empty((P, P))
    D = np.empty((P, P))
    idx = np.empty(P, dtype=np.int64)
    r = np.empty(P)
    z = np.empty(P)
    B = np.empty(P)
    w = np.empty(P)
    acc = np.empty(d + 3)
    L = LANES  # the lane buffers of _group
    lidx = np.empty(P * L, dtype=np.int64)
    Xl = np.empty(P * d * L)
    R = np.empty(P * P * L)
    Kl = np.empty(P * P * L)
    Dl = np.empty(P * P * L)
    A = np.zeros(P * P * L)
    zl = np.empty(P * L)
    Bl = np.empty(P * L)
    wl = np.empty(P * L)
    inv = np.empty(P * L)
    E = np.empty(d * P * P * L)
    al = np.empty(L)
    be = np.empty(L)
    a1 = np.empty(L)
    aN = np.empty(L)
    aL = np.empty(d * L)
    SB = np.empty(L)
    SW = np.empty(L)
    F1 = np.empty(L)
    F2 = np.empty(L)
    for task in range(lo, hi):
        for k in range(d + 3):
            acc[k] = 0.0
        ok = True
        t = task * VB
        t_end = min(n, (task + 1) * VB)
        while t < t_end:
            if m > 0 and t + L <= t_end and count[t] == m and count[t + L - 1] == m:
                if not _group(t, Xs, y, nbr, phi, c, degree, g0, amp, noise, grad, lidx, Xl, R, Kl, Dl, A, zl, Bl, wl,
                              inv, E, al, be, a1, aN, aL, SB, SW, F1, F2, acc):
                    ok = False
                    break
                t += L
                continue
            q = count[t]
            p = q + 1
            for a in range(q):
                idx[a] = nbr[t, a]
            idx[q] = t
            for a in range(p):  # row a of the upper triangles: distances, then the kernel (vectorised)
                ia = idx[a]
                for b in range(a, p):
                    r[b] = g0 * _sqd(Xs, ia, Xs, idx[b])
                for b in range(a, p):
                    v, dv = value_and_deriv(phi, r[b], c, degree)
                    K[a, b] = v
                    D[a, b] = dv
                    C[a, b] = amp * v
                C[a, a] += noise
                D[a, a] = 0.0
                z[a] = y[ia]
            if not _factor(C, p):
                ok = False
                break
            _forward(C, p, z)
            Ltt = C[q, q]
            acc[0] += -0.5 * LOG2PI - math.log(Ltt) - 0.5 * z[q] * z[q]
            t += 1
            if not grad:
                continue
            dd = Ltt * Ltt
            e = z[q] * Ltt
            for a in range(q):
                B[a] = C[a, q]
                w[a] = z[a]
            _backward(C, q, B)  # C_NN^-1 c_N
            _backward(C, q, w)  # C_NN^-1 y_N
            B[q] = -1.0  # v = -B
            w[q] = 0.0
            sa = 0.5 * (e * e / dd - 1.0) / dd
            sb = 0.5 * e / dd
            for a in range(p):
                ia = idx[a]
                Maa = sa * B[a] * B[a] - 2.0 * sb * w[a] * B[a]
                acc[1] += Maa * K[a, a]
                acc[d + 2] += Maa
                for b in range(a + 1, p):
                    Mab = 2.0 * (sa * B[a] * B[b] - sb * (w[a] * B[b] + B[a] * w[b]))
                    acc[1] += Mab * K[a, b]
                    wd = Mab * D[a, b] * g0
                    if wd != 0.0:
                        ib = idx[b]
                        for k in range(d):
                            u = Xs[ia, k] - Xs[ib, k]
                            acc[2 + k] -= 2.0 * wd * u * u
        if not ok:
            part[task, 0] = np.nan
            continue
        part[task, 0] = acc[0]
        if grad:
            part[task, 1] = amp * acc[1]
            for k in range(d):
                part[task, 2 + k] = amp * acc[2 + k]
            part[task, d + 2] = noise * acc[d + 2]


@pjit(tasks=lambda Xq, *_: (Xq.shape[0] + VB - 1) // VB,
      work=lambda Xq, Xs, y, nbr, *_: Xq.shape[0] * nbr.shape[1] ** 2 * (nbr.shape[1] + Xs.shape[1] + 20))
def predict_rows(lo, hi, Xq, Xs, y, nbr, phi, c, degree, g0, amp, noise, prior, mean, var):
    # IN: tasks lo:hi (VB queries each), Xq (q, d) queries and Xs (n, d) training points
    #     divided by the length scales, y (n,) targets, nbr (q, k) the k nearest training
    #     points of each query, the kernel, amp, noise, prior (the variance of y at a point)
    # OUT: mean[i] = c_qN C_NN^-1 y_N and var[i] = prior - c_qN C_NN^-1 c_Nq (not clamped;
    #      nan when C_NN is not positive definite)
    nq, d = Xq.shape
    k = nbr.shape[1]
    C = np.empty((k, k))
    u = np.empty(k)
    z = np.empty(k)
    r = np.empty(k + k * (k + 1) // 2)  # the kernel's arguments: query row, then C_NN's upper rows
    for i in range(lo * VB, min(nq, hi * VB)):
        e = 0
        for a in range(k):
            ia = nbr[i, a]
            r[e] = g0 * _sqd(Xq, i, Xs, ia)
            e += 1
            z[a] = y[ia]
        for a in range(k):
            ia = nbr[i, a]
            for b in range(a, k):
                r[e] = g0 * _sqd(Xs, ia, Xs, nbr[i, b])
                e += 1
        for e in range(r.shape[0]):  # one call site of the kernel (one inlined copy)
            v, _ = value_and_deriv(phi, r[e], c, degree)
            r[e] = amp * v
        e = k
        for a in range(k):
            u[a] = r[a]
            for b in range(a, k):
                C[a, b] = r[e]
                e += 1
            C[a, a] += noise
        if not _factor(C, k):
            mean[i] = np.nan
            var[i] = np.nan
            continue
        _forward(C, k, u)
        _forward(C, k, z)
        mu = 0.0
        uu = 0.0
        for a in range(k):
            mu += u[a] * z[a]
            uu += u[a] * u[a]
        mean[i] = mu
        var[i] = prior - uu


@pjit(tasks=lambda Xs, *_: (Xs.shape[0] + VB - 1) // VB, work=lambda Xs, first, m, *_: first * first * Xs.shape[1])
def earlier_brute(lo, hi, Xs, first, m, nbr, count):
    # IN: Xs (n, d) the scaled points in the ordering, first, m
    # OUT: for positions t < first in the tasks' blocks: nbr[t, :count[t]] the min(t, m)
    #      nearest earlier positions, ascending (distance, position)
    dist = np.empty(max(first, 1))
    pos = np.empty(max(first, 1), dtype=np.int64)
    for t in range(lo * VB, min(first, hi * VB)):
        q = min(t, m)
        c = 0  # an insertion-sorted list of the q best (distance, position)
        for j in range(t):
            s = _sqd(Xs, t, Xs, j)
            if c == q and not s < dist[q - 1]:
                continue  # j > every listed position: ties keep the earlier
            insert(s, j, c, dist[:q], pos[:q])
            if c < q:
                c += 1
        for a in range(q):
            nbr[t, a] = pos[a]
        count[t] = q


@jit
def _heap_less(dist, a, b):
    # True when point a ranks below b in the max-heap: smaller distance, ties to the lower index
    return dist[a] < dist[b] or (dist[a] == dist[b] and a > b)


@jit
def _sift_down(heap, pos, dist, size, h):
    i = heap[h]
    while True:
        c = 2 * h + 1
        if c >= size:
            break
        if c + 1 < size and _heap_less(dist, heap[c], heap[c + 1]):
            c += 1
        if not _heap_less(dist, i, heap[c]):
            break
        heap[h] = heap[c]
        pos[heap[h]] = h
        h = c
    heap[h] = i
    pos[i] = h


@jit
def maximin(Xt, perm, box_lo, box_hi, leaf_level, X, first, order):
    # IN: the kd-tree of the scaled points X (n, d) (Xt (d, n) permuted, perm, boxes,
    #     leaf_level), first: the index of the first point
    # OUT: order (n,): each next point the farthest from those before it (squared
    #      distance to the nearest of them; ties to the lower index)
    n = X.shape[0]
    dist = np.empty(n)
    heap = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)  # a point's place in the heap, -1 once taken
    for j in range(n):
        dist[j] = _sqd(X, j, X, first)
        heap[j] = j
    for h in range(n):
        pos[heap[h]] = h
    # the first point out of the heap
    last = heap[n - 1]
    heap[pos[first]] = last
    pos[last] = pos[first]
    pos[first] = -1
    size = n - 1
    for h in range(size // 2 - 1, -1, -1):
        _sift_down(heap, pos, dist, size, h)
    order[0] = first
    st = np.empty(leaf_level + 2, dtype=np.int64)
    first_leaf = (1 << leaf_level) - 1
    for t in range(1, n):
        i = heap[0]
        size -= 1
        if size > 0:
            heap[0] = heap[size]
            pos[heap[0]] = 0
            _sift_down(heap, pos, dist, size, 0)
        pos[i] = -1
        order[t] = i
        r2 = dist[i]  # no point left is farther than this from the chosen ones
        q = X[i]
        sp = 1
        st[0] = 0
        while sp > 0:
            sp -= 1
            node = st[sp]
            if box_lb(q, box_lo, box_hi, node) * (1.0 - 1e-12) > r2:
                continue
            if node < first_leaf:
                st[sp] = 2 * node + 2
                st[sp + 1] = 2 * node + 1
                sp += 2
                continue
            s0, e0 = node_range(n, leaf_level, node - first_leaf)
            for p in range(s0, e0):
                j = perm[p]
                if pos[j] < 0:
                    continue
                s = _sqd(X, j, X, i)
                if s < dist[j]:  # closer to the new point: down in the max-heap
                    dist[j] = s
                    _sift_down(heap, pos, dist, size, pos[j])
