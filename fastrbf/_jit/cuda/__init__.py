"""CUDA kernels (numba-cuda): the device twins of the CPU kernels, for arrays that live
on an NVIDIA GPU.  Importing any module here imports ``numba.cuda``; only
:mod:`fastrbf.cuda` does, on the first call with a device array.

The map (every module is named here; ``tests/test_layout.py`` checks it):

- ``target``: the one decorator factory of the device (``kernel``, ``device``: one set
  of flags) and the launch shapes.
- ``phi``: the kernel functions as scalar device functions, one per kernel and dtype
  (the CPU's apply to a tile row with the vectorised ``exp`` of the LLVM layer, which
  has no device form), and user kernels compiled for the device.
- ``pairwise``: ``sqdist`` and ``gram`` (shared-memory tiles) and ``gram_matvec``
  (matrix-free, the columns streamed through shared memory).
- ``neighbors``: brute-force k nearest neighbours (a sorted list per thread).
- ``cluster``: Lloyd's assignment and update (per-chunk partial sums added in a fixed
  order) and the k-means++ potentials.
- ``reduce``: checks and reductions over a whole array (finite and largest magnitude,
  sums in a fixed order), casts and gathers.
"""
