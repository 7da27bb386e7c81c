"""numba kernels: no validation, no allocation policy; one module per family.

``tiles`` holds the building blocks shared by the families (a row or two of distances
against a chunk of columns, the kernel function applied in cache); ``micro`` the
register-blocked micro-kernels (several rows by several vectors of columns held in
vector registers, emitted as LLVM vector IR for the host's vector width); ``pairwise``
the kernels of the pairwise engine (``sqdist``, ``gram``, ``gram_matvec``); ``lloyd``,
``seeding``, ``bounds`` and ``sparse_lloyd`` (CSR data) k-means; ``neighbors``;
``kdtree`` the kd-tree and ``kdgroups`` its list search (the queries of a leaf
sharing a list of nearby leaves); ``local`` and ``lanes`` local interpolation over 8
neighbourhoods in vector lanes; ``pou`` partition of unity; ``linalg`` the solves;
``network`` the RBF network and ``forward`` its forward selection; ``falkon`` Nystroem
kernel ridge; ``gp``; ``features`` random Fourier features; ``kernels``, ``exp``,
``trig`` the kernel functions and their vectorised maths; ``lapack`` LAPACK called from
numba; ``_decorators`` the one decorator factory.
"""
