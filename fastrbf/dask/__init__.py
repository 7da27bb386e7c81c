"""Scale-out on dask arrays: fastrbf's kernels run blockwise, the small reductions
come back to the client.  Optional extra: ``pip install "fastrbf[dask]"``; ``import
fastrbf`` never imports dask.

dask is the engine: every function builds a dask graph of fastrbf's in-memory
functions on row blocks and runs it through the current scheduler (an active
``distributed.Client``, or whatever ``dask.config`` says: threads, processes,
synchronous).  Nothing here schedules, sends or stores data by itself.

One module per family, as in memory: :mod:`~fastrbf.dask.pairwise` (``sqdist``,
``gram``, ``gram_matvec``), :mod:`~fastrbf.dask.cluster` (``kmeans``,
``lloyd_assign``), :mod:`~fastrbf.dask.network` (``rbf_network``),
:mod:`~fastrbf.dask.ridge` (``kernel_ridge``),
:mod:`~fastrbf.dask.kernel_clustering` (``kernel_kmeans``: Nystroem features made
blockwise, then ``kmeans``), :mod:`~fastrbf.dask.neighbors`
(``knn``), :mod:`~fastrbf.dask.pou` (``partition_of_unity``),
:mod:`~fastrbf.dask.prediction` (``predict``, ``decision_function``),
:mod:`~fastrbf.dask.sparse_gp` (``sparse_gaussian_process``),
:mod:`~fastrbf.dask.vecchia` (``vecchia_gaussian_process``: the likelihood on blocks of
the ordering) and
:mod:`~fastrbf.dask.common` (the checks of chunked inputs, the tree reductions).
Each family's argument checks and its finish from the reduced quantities are the
in-memory functions: only the passes over the blocks are written here.

Decisions:

- **Input.**  ``X`` is a 2-D dask array chunked by rows only (one chunk along the
  features: otherwise a ``ValueError`` naming ``X`` that says how to rechunk), with
  known chunk sizes (``nan`` chunks are a ``ValueError``: call
  ``X.compute_chunk_sizes()``; computing them would run tasks).  A NumPy ``X`` is
  accepted and becomes one block.  Row-aligned inputs (``Y`` of ``rbf_network``,
  ``sample_weight``) must have the same row chunks as ``X`` (a ``ValueError`` naming
  them; no silent rechunking), or be NumPy arrays, which are cut like ``X``.
  Small inputs (centres, ``V`` of ``gram_matvec``, weights of models) are in-memory
  arrays shipped with the graph.  The dtype rules are the in-memory ones (float32 kept,
  integers become float64, complex is a ``TypeError``).  All of this, and feature counts
  of centres and models, is checked before any task runs.
- **NaN/inf** can only be seen in the data: lazy functions (``sqdist``, ``gram``,
  ``gram_matvec``, ``lloyd_assign``, ``predict``) raise the in-memory ``ValueError``
  from inside the block's task (dask re-raises it at ``compute``); ``kmeans``,
  ``rbf_network`` and ``kernel_ridge`` raise it from their first pass over the data.
  Every such message names the argument the caller passed (``X`` for both sides of
  ``sqdist(X)`` and ``gram(X)``) and gives the global row index, not the row within
  the block.
- **Seeds** (``kmeans``, ``rbf_network``, ``kernel_ridge``): None, an int >= 0 or a
  ``numpy.random.Generator`` (fastrbf's one rule), checked before any task runs.
- **Threads.**  Every task calls fastrbf with ``n_threads=1`` by default: one numba
  thread per dask thread, so a worker with ``t`` threads runs ``t`` kernels at once and
  never oversubscribes (``distributed``'s nannies also start workers with one BLAS
  thread).  Pass ``n_threads`` to give each task more.
- **kmeans.**  The run prepares each block once (converted copy and the float32
  centred copy of the in-memory assigner) and persists it for the run; persist ``X``
  yourself when it is used again (several runs, ``rbf_network`` after ``kmeans``).  A
  prepared block stays on the worker that holds the block of ``X`` (it reports its size
  to dask, so the scheduler does not ship it around to balance load): spread the
  blocks of ``X`` evenly over the workers.  Each
  Lloyd iteration is one graph: per block the labels (persisted: they are compared with
  the next iteration's) and (float64 sums, weights, changed labels), tree-reduced and
  computed on the client, where the centres are updated.  The stopping, tolerance and
  empty-cluster rules are those of :func:`fastrbf.kmeans` (relocation gathers the
  farthest candidates of each block), so from the same initial centres the centres
  agree to rounding (the sums are added in a different order), with the same labels
  and ``n_iter``.  Deterministic for a given chunking: a worker lost mid-run changes
  nothing (dask recomputes the lost blocks from their graph).
- **k-means||** (Bahmani et al. 2012): a first centre drawn with probability
  proportional to ``sample_weight``, then ``init_rounds`` rounds that keep each point
  independently with probability ``min(1, l w d^2 / phi)`` (``l = oversampling_factor *
  n_clusters``, one seeded generator per block and round), then the candidates are
  weighted by the weight of the points nearest to them and reclustered on the client by
  the in-memory weighted k-means++ and Lloyd.
- **rbf_network**: per block the R factor of ``[Phi 1 T]`` by the in-memory TSQR
  (:func:`fastrbf.models.network.tsqr`), the factors folded pairwise by the same LAPACK
  ``tpqrt`` in a tree, then the in-memory solve from R on the client: weights equal to
  the in-memory fit to rounding.
- **kernel_ridge** (``solver="nystrom-pcg"`` only): the float64 blocks are persisted for
  the run; ``K_nm^T Y`` and, at each conjugate-gradient iteration, ``K_nm^T K_nm V`` are
  one map-reduce of :mod:`fastrbf.models.falkon`'s fused per-block passes; Falkon's
  preconditioner and the CG run on the client (:func:`fastrbf.models.falkon.falkon_solve`).
  The landmarks are drawn with the in-memory random draws, so the model equals the
  in-memory one to the rounding the CG propagates.
- **Progress.**  The fits (``kmeans``, ``rbf_network``, ``kernel_ridge``) take
  ``progress`` as in memory (see :mod:`fastrbf._progress`): each iteration of their
  loop on the client (a Lloyd iteration, a k-means|| round, a CG iteration: one dask
  compute each) is reported, with an ETA from the iterations done against
  ``max_iter``.  The lazy functions (``sqdist``, ``gram``, ``gram_matvec``,
  ``lloyd_assign``, ``predict``, ``decision_function``) return dask arrays and report
  nothing: watch their ``compute`` with dask's ``dask.diagnostics.ProgressBar`` (local
  schedulers) or the dashboard of a ``distributed.Client``.
"""


try:
    import dask
    import dask.array  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without dask
    raise ImportError(
        'fastrbf.dask needs dask and distributed: pip install "fastrbf[dask]"'
    ) from exc

from .cluster import kmeans, lloyd_assign
from .common import Data as Data  # the type of the data arguments
from .kernel_clustering import kernel_kmeans
from .neighbors import knn
from .network import rbf_network
from .pairwise import gram, gram_matvec, sqdist
from .pou import partition_of_unity
from .prediction import decision_function, predict
from .ridge import kernel_ridge
from .sparse_gp import sparse_gaussian_process
from .vecchia import vecchia_gaussian_process

__all__ = ["decision_function", "gram", "gram_matvec", "kernel_kmeans", "kernel_ridge", "kmeans", "knn", "lloyd_assign",
           "partition_of_unity", "predict", "rbf_network", "sparse_gaussian_process", "sqdist",
           "vecchia_gaussian_process"]
