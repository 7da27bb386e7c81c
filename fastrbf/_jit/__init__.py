"""numba kernels: no validation, no allocation policy; a module (or a folder) per family.

The map (every module is named here; ``tests/test_layout.py`` checks it):

- ``_decorators``: the one decorator factory (``jit``, ``jit_inline``, ``jit_reduce``,
  ``jit_overload``, ``jit_static``, ``pjit``) and the block kernels' launcher.
- ``kernels``: the kernel functions (applied to a tile row in place) and the user-kernel
  registry; ``grad``: their derivatives, for gradients of models and kernel sums.
- ``tiles``: the building blocks of every pairwise kernel (a row or two of distances
  against a chunk of columns, the kernel applied in cache); ``pairwise``: the kernels of
  ``sqdist``, ``gram`` and ``gram_matvec``.
- ``cluster.lloyd`` (assignment, update, the small serial loop), ``cluster.certify``
  (the certified ranking: float32 ranks, float64 decides; three kernels, each with the
  bounded assignment's mode),
  ``cluster.seeding`` (k-means++), ``cluster.bounds`` (Hamerly bounds),
  ``cluster.bounded_fit`` (the compiled k-means loop), ``cluster.sparse`` (CSR data),
  ``cluster.kernel`` (kernel k-means: each point's kernel sums over the clusters, made
  or changed by the points that moved).
- ``neighbors.brute`` (k-NN and kernel sums by brute force), ``neighbors.kdtree`` (the
  kd-tree), ``neighbors.kdgroups`` (its list search: the queries of a leaf share a list of
  nearby leaves).
- ``gp.exact`` (the exact GP's gradient passes), ``gp.sparse`` (the sparse GP's),
  ``gp.vecchia`` (the nearest-neighbour GP: maximin ordering, conditioning sets, the
  likelihood with its gradient, prediction).
- ``local`` (local interpolation over 8 neighbourhoods in vector lanes), ``pou``
  (partition of unity), ``linalg`` (the solves), ``network`` and ``forward`` (the RBF
  network and its forward selection), ``falkon`` (Nystroem kernel ridge), ``features``
  (random Fourier features).
- ``cuda``: the device kernels (numba-cuda; see its docstring): ``cuda.target`` (the
  device's decorator factory and block shapes), ``cuda.phi`` (kernel functions as device
  functions), ``cuda.pairwise`` (distance and Gram tiles, the matrix-free product),
  ``cuda.neighbors`` (brute-force k-NN), ``cuda.cluster`` (Lloyd's steps, the k-means++
  potentials), ``cuda.reduce`` (checks, sums, casts and gathers).
- ``llvm``: the low-level layer (see its docstring): ``llvm.micro`` (register-blocked
  micro-kernels as LLVM vector IR), ``llvm.lanes`` (vector operations over independent
  problems), ``llvm.exp`` and ``llvm.trig`` (vectorised maths), ``llvm.lapack`` (LAPACK
  from numba), ``llvm.addressed`` and ``llvm.spin`` (kernels called by address, atomics),
  ``llvm.internals`` (numba's internal modules).
"""
