"""The Lloyd loop on the ranked paths (bounded, or brute force with ``I_BRUTE``) as one
compiled loop that several threads run together (the driver is
:class:`fastrbf.cluster._bounded.FitLoop`).

Every thread calls :func:`fit_loop` with its own ``tid``.  Thread 0 leads: per
iteration it prepares the centres' shifts and gaps and the ranking centres, opens a
*phase* of row blocks, runs blocks itself, waits until every block of the phase is
done, then adds up the update slots, moves the centres and tests the stop - the work
of :func:`fastrbf.cluster._kmeans._lloyd` and :class:`fastrbf.cluster._bounded.BoundedAssigner`
between two parallel steps, here without Python and without waking a thread.  The
other threads wait (:func:`fastrbf._jit.llvm.spin.relax`) for a phase, take its blocks
while any is left, and leave when the leader says stop.

The blocks: every update chunk of ``UPDATE_CHUNK`` rows is cut into ``nsub`` blocks of
``bs`` rows (whole tiles of the ranking micro-kernel; the last block takes the rest of
the chunk, and a block past the last row is empty).  A block copies its rows' labels
into ``labels_old``, assigns them (the bound test and the recomputation of the rows it
fails, or every row on a full pass, which is every pass of the brute-force loop (it
keeps no bounds): the kernels and rules of :mod:`fastrbf._jit.cluster.bounds`) and counts the
recomputed rows and the changed labels; the thread that finishes the last block of a
chunk fills the chunk's update slot.  Which thread runs which block changes no value:
rows are independent, a chunk's slot is summed in row order, and the slots are added in
chunk order.

Hand-out without a lost block: the tickets of a phase are ``base:end`` of a counter
that only grows; a thread takes ticket ``t`` by a compare-and-swap from ``t`` to
``t + 1`` only while ``t < end``, so a thread that still looks at an older phase never
takes (and loses) a ticket of the next one.  The leader opens the next phase only once
the done counter reaches ``end``, so a thread that took a ticket reads that phase's
parameters.  The leader never waits for another thread to arrive: a thread that starts
late (or never) leaves its blocks to the others, and the leader alone runs them all.
"""

import numpy as np

from .._decorators import jit_static
from ..llvm.addressed import call, call_int
from ..llvm.spin import atomic_add, atomic_cas, atomic_load, atomic_store, relax
from .certify import BOUNDS, LABELS
from .lloyd import centre_step

# slots of ``sync`` (int64, one 64-byte line each)
TICKET, END, BASE, DONE, GEN, STOP, FAIL = 0, 8, 16, 24, 32, 40, 48
SYNC_SIZE = 56

# slots of ``ipar`` (int64): the loop's state, kept across calls
I_IT, I_MAX_ITER, I_BUDGET, I_CHUNK, I_NSUB, I_BS = 0, 1, 2, 3, 4, 5
I_FULL, I_FAR_J, I_PHASE, I_WAS_FULL, I_N_FULL, I_FIRST = 6, 7, 8, 9, 10, 11
I_STATUS, I_CHANGED, I_MOVED, I_BRUTE = 12, 13, 14, 15
IPAR_SIZE = 16

# slots of ``fpar`` (float64)
F_GAM, F_ETA, F_RGAM, F_RETA, F_UNIT, F_NCMAX = 0, 1, 2, 3, 4, 5
F_FAR1, F_FAR2, F_TOL, F_FULL_FRACTION, F_SHIFT = 6, 7, 8, 9, 10
FPAR_SIZE = 12

# the entries of the kernel table (ktab)
K_BOUND, K_CERT, K_UPDATE, K_CENTRES, K_REDUCE = 0, 1, 2, 3, 4
KERNELS = ("bound_rows", "certify_direct", "update_partials", "centre_bounds", "reduce_partials")

# I_STATUS after a call
RUNNING, STOPPED, EMPTY, CONVERGED = 0, 1, 2, 3


@jit_static
def fit_loop(tid, sync, ipar, fpar, X, Xr, mu, nx, C, C_prev, Cr, shift, half_gap, w, labels, labels_old, U, L, part,
             partw, sums, wsum, blk_full, blk_changed, chunk_done, fail, ktab, s):
    # IN (thread 0 reads and updates; see the slots above): ipar/fpar the loop's state,
    #     X (n, d), Xr the ranking copy (float32 (d, n)), mu/nx the centring (unit > 0),
    #     w (n,), the budget of iterations for this call
    # IN/OUT: C (K, d) the centres (moved in place), C_prev the centres of the last
    #     assignment, Cr (K, d) float32 the ranking centres (C itself when unit = 0),
    #     labels, labels_old (n,), U, L (n,) the bounds, part/partw the update slots,
    #     sums/wsum the cluster sums of the last iteration
    # scratch: shift, half_gap (K,), blk_full, blk_changed (blocks,), chunk_done
    #     (chunks,) block counts that only grow, fail (threads, bs)
    # ktab: the kernels called through their addresses (a fastrbf._jit.llvm.addressed.table:
    #     K_BOUND, K_CERT, K_UPDATE, K_CENTRES, K_REDUCE = bounds.bound_rows,
    #     certify.certify_direct, lloyd.update_partials, bounds.centre_bounds,
    #     lloyd.reduce_partials compiled for these arguments' types)
    # s: this thread's scratch for the kernels of its blocks (fastrbf.cluster._bounded.
    #     fit_scratch); the loop allocates nothing (jit_static)
    n = X.shape[0]
    K = C.shape[0]
    d = X.shape[1]
    nb = chunk_done.shape[0] * ipar[I_NSUB]
    unit = fpar[F_UNIT]
    gam = fpar[F_GAM]
    eta = fpar[F_ETA]
    leader = tid == 0
    left = ipar[I_BUDGET] if leader else 0  # iterations the leader may still start
    if leader:
        ipar[I_STATUS] = RUNNING
    g = 0
    base = 0
    full = False
    # one loop and one copy of the block code for the leader and the others (two copies
    # cost compile time); the block code is written out here, not in an inlined helper:
    # numba's IR inlining took 0.13 s more to compile
    while True:
        if not leader:  # wait for the next phase (or the end)
            r = 0
            while True:
                if atomic_load(sync, STOP):
                    return
                gn = atomic_load(sync, GEN)
                if gn != g:
                    break
                relax(r)
                r += 1
            g = gn
        else:
            if left == 0:
                return
            left -= 1
            # the assignment (BoundedAssigner.__call__ with update slots)
            # (the brute-force loop, I_BRUTE: every iteration a full pass without bounds)
            full = ipar[I_BRUTE] or ipar[I_FIRST] or (not ipar[I_WAS_FULL] and ipar[I_N_FULL] > fpar[F_FULL_FRACTION] * n)
            if not full:
                call(ktab, K_CENTRES, (C_prev, C, gam, eta, shift, half_gap))
                far_j = 0
                for j in range(1, K):
                    if shift[j] > shift[far_j]:
                        far_j = j
                far2 = 0.0
                for j in range(K):
                    if j != far_j and shift[j] > far2:
                        far2 = shift[j]
                ipar[I_FAR_J] = far_j
                fpar[F_FAR1] = shift[far_j]
                fpar[F_FAR2] = far2
            if unit > 0.0:  # the ranking centres of Assigner.ranking_centres
                ncmax = 0.0
                for j in range(K):
                    acc = 0.0
                    for k in range(d):
                        t = np.float64(C[j, k]) - mu[k]
                        Cr[j, k] = np.float32(t)
                        acc += t * t
                    ncmax = max(ncmax, acc)
                fpar[F_NCMAX] = ncmax
            ipar[I_FULL] = full
            ipar[I_PHASE] += 1
            base = atomic_load(sync, END)
            atomic_store(sync, BASE, base)
            atomic_store(sync, END, base + nb)
            atomic_add(sync, GEN, 1)
        while True:  # take blocks of the phase while any is left
            end = atomic_load(sync, END)
            tk = atomic_load(sync, TICKET)
            if tk >= end:
                break
            if not atomic_cas(sync, TICKET, tk, tk + 1):
                continue
            b = tk - atomic_load(sync, BASE)  # block b of the phase: rows lo:hi of chunk c
            chunk = ipar[I_CHUNK]
            nsub = ipar[I_NSUB]
            bs = ipar[I_BS]
            c = b // nsub
            lo = min(n, c * chunk + (b % nsub) * bs)
            hi = min(n, (c + 1) * chunk, lo + bs)
            for i in range(lo, hi):
                labels_old[i] = labels[i]
            m = hi - lo
            scratch = fail[tid]
            listed = ipar[I_FULL] == 0  # else every row, ranked on the contiguous copy
            if m > 0 and listed:
                m = call_int(ktab, K_BOUND, (X, C, shift, fpar[F_FAR1], ipar[I_FAR_J], fpar[F_FAR2], half_gap, gam, eta,
                                             gam, eta, lo, hi, labels, U, L, scratch, s[0], s[1], s[2]))
            if m > 0:
                call(ktab, K_CERT, (X, Xr, Cr, C, scratch, listed, lo, m, nx, fpar[F_NCMAX], unit, fpar[F_RGAM],
                                    fpar[F_RETA], gam, eta, BOUNDS if ipar[I_BRUTE] == 0 else LABELS, labels, U, L,
                                    s[3], s[4], s[5], s[6], s[7]))
            changed = 0
            for i in range(lo, hi):
                changed += labels[i] != labels_old[i]
            blk_full[b] = m
            blk_changed[b] = changed
            if atomic_add(chunk_done, c, 1) + 1 == nsub * ipar[I_PHASE]:  # the chunk's last block
                call(ktab, K_UPDATE, (X, labels, w, chunk, c, c + 1, part, partw))
            atomic_add(sync, DONE, 1)
        if not leader:
            continue
        r = 0
        while atomic_load(sync, DONE) < base + nb:
            if atomic_load(sync, FAIL):
                ipar[I_STATUS] = STOPPED
                return
            relax(r)
            r += 1
        n_full = 0
        changed = 0
        for b in range(nb):
            n_full += blk_full[b]
            changed += blk_changed[b]
        ipar[I_N_FULL] = n_full
        ipar[I_WAS_FULL] = full
        ipar[I_FIRST] = 0
        for j in range(K):  # (not C_prev[:] = C: its shape check's message took 1.6 s to compile)
            for k in range(d):
                C_prev[j, k] = C[j, k]
        # the Lloyd loop (fastrbf.cluster._kmeans._lloyd)
        call(ktab, K_REDUCE, (part, partw, sums, wsum))
        ipar[I_IT] += 1
        ipar[I_CHANGED] = changed
        for j in range(K):
            if wsum[j] == 0.0:
                ipar[I_STATUS] = EMPTY  # the caller relocates and ends the iteration
                return
        sh, moved = centre_step(sums, wsum, C)
        fpar[F_SHIFT] = sh
        ipar[I_MOVED] = moved
        if changed == 0 or sh <= fpar[F_TOL]:
            ipar[I_STATUS] = CONVERGED
            return
        if ipar[I_IT] >= ipar[I_MAX_ITER]:
            return
