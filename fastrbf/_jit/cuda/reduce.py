"""Whole-array checks and reductions on the device, and the small moves of data the
host-side code needs (casts, gathers).

``stats``: per block of ROWS threads, whether every value is finite and the largest
magnitude (a fixed tree in shared memory); the host combines the blocks.  This is what
the CPU's input checks read (:func:`fastrbf._validation.check_finite` and
``check_magnitude``), in one pass over the data.

``sums``: per-block float64 sums in a fixed tree (the same bits on every run).
"""

import numpy as np
from numba import cuda

from .target import ROWS, device, kernel, made


def _tree(combine):
    R = ROWS

    def tree(red, t):
        # red[0] <- red[0] (+) ... (+) red[R - 1] by halves, the same order on every run;
        # every thread of the block calls it (it synchronises)
        h = R // 2
        while h > 0:
            if t < h:
                red[t] = combine(red[t], red[t + h])
            cuda.syncthreads()
            h //= 2

    return device(tree)


@device
def _add(a, b):
    return a + b


@device
def _smaller(a, b):
    return min(a, b)


@device
def _larger(a, b):
    return max(a, b)


#: the block reductions of a shared array of ROWS values (``tree_sum(red, t)``: red[0]
#: becomes the sum), in a fixed order
tree_sum = _tree(_add)
tree_min = _tree(_smaller)
tree_max = _tree(_larger)


def _stats():
    R = ROWS

    def stats(A, ok, big):
        # A: 2-D; one thread per row
        fin = cuda.shared.array(R, np.int32)
        mx = cuda.shared.array(R, np.float64)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * R + t
        f = 1
        m = 0.0
        if i < A.shape[0]:
            for c in range(A.shape[1]):
                v = np.float64(A[i, c])
                if not (v - v == 0.0):  # NaN or +-inf
                    f = 0
                elif abs(v) > m:
                    m = abs(v)
        fin[t] = f
        mx[t] = m
        cuda.syncthreads()
        tree_min(fin, t)
        tree_max(mx, t)
        if t == 0:
            ok[cuda.blockIdx.x] = fin[0]
            big[cuda.blockIdx.x] = mx[0]

    return kernel(stats)


def stats_kernel():
    """Per-block (all finite, largest magnitude) of a 2-D array (grid: rows by ROWS)."""
    return made("stats", (), _stats)


def _sums():
    R = ROWS

    def sums(a, w, part):
        red = cuda.shared.array(R, np.float64)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * R + t
        red[t] = np.float64(a[i]) * w[i] if i < a.shape[0] else 0.0
        cuda.syncthreads()
        tree_sum(red, t)
        if t == 0:
            part[cuda.blockIdx.x] = red[0]

    return kernel(sums)


def sums_kernel():
    """Per-block sums of ``a * w`` in float64 (grid: rows by ROWS)."""
    return made("sums", (), _sums)


def _cast():
    def cast(src, dst):
        i, j = cuda.grid(2)
        if i < dst.shape[0] and j < dst.shape[1]:
            dst[i, j] = src[i, j]

    return kernel(cast)


def cast_kernel():
    """``dst[...] = src`` element by element (any dtypes, any strides; 2-D grid)."""
    return made("cast", (), _cast)


def _gather():
    def gather(src, rows, dst):
        i, j = cuda.grid(2)
        if i < rows.shape[0] and j < dst.shape[1]:
            dst[i, j] = src[rows[i], j]

    return kernel(gather)


def gather_kernel():
    """``dst[i] = src[rows[i]]`` (2-D grid)."""
    return made("gather", (), _gather)


def _count_changed():
    def changed(a, b, count):
        i = cuda.grid(1)
        if i < a.shape[0] and a[i] != b[i]:
            cuda.atomic.add(count, 0, 1)
        if i < a.shape[0]:
            b[i] = a[i]

    return kernel(changed)


def changed_kernel():
    """How many ``a[i] != b[i]`` (an integer count: the same whatever the order of the
    atomic adds), then ``b <- a``."""
    return made("changed", (), _count_changed)


def _scale():
    def scale(src, ls, dst):
        i, j = cuda.grid(2)
        if i < dst.shape[0] and j < dst.shape[1]:
            dst[i, j] = np.float64(src[i, j]) / ls[j]

    return kernel(scale)


def scale_kernel():
    """``dst[i, j] = src[i, j] / ls[j]`` in float64, rounded to ``dst``'s dtype."""
    return made("scale", (), _scale)


def _min():
    R = ROWS

    def smallest(a, out):
        # one block: each thread a stride of ``a``, then a fixed tree
        red = cuda.shared.array(R, np.float64)
        t = cuda.threadIdx.x
        m = np.inf
        for i in range(t, a.shape[0], R):
            m = min(m, np.float64(a[i]))
        red[t] = m
        cuda.syncthreads()
        tree_min(red, t)
        if t == 0:
            out[0] = red[0]

    return kernel(smallest)


def min_kernel():
    """The smallest value of a 1-D array (one block of ROWS threads)."""
    return made("min", (), _min)


def _positive():
    def positive(a, count):
        i = cuda.grid(1)
        if i < a.shape[0] and a[i] > 0:
            cuda.atomic.add(count, 0, 1)

    return kernel(positive)


def positive_kernel():
    """How many ``a[i] > 0`` (added to ``count[0]``; an integer: any order of the adds
    gives it)."""
    return made("positive", (), _positive)


def _affine():
    def affine(src, shift, scale, dst):
        # dst[i, j] = (src[i, j] - shift[j]) / scale[j], in float64
        i, j = cuda.grid(2)
        if i < dst.shape[0] and j < dst.shape[1]:
            dst[i, j] = (np.float64(src[i, j]) - shift[j]) / scale[j]

    return kernel(affine)


def affine_kernel():
    """``dst[i, j] = (src[i, j] - shift[j]) / scale[j]`` in float64 (2-D grid)."""
    return made("affine", (), _affine)


def _fill():
    def fill(a, value):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = value

    return kernel(fill)


def fill_kernel():
    """``a[:] = value`` for a 1-D array (1-D grid)."""
    return made("fill", (), _fill)
