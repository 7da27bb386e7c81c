"""Compile fastrbf's numba kernels ahead of time: ``python -m fastrbf.compile``.

Every public function compiles its kernels on its first call for a dtype (a second or
two of CPU time per function on a small machine) and keeps them in numba's on-disk
cache, so later processes only load them.  ``TARGETS`` names, for every public
function (and the solver variants that run other kernels), one tiny call that makes it
compile; the command-line tool runs them to fill the cache before first use::

    python -m fastrbf.compile                       # everything, float64 and float32
    python -m fastrbf.compile --dtype float64       # one dtype
    python -m fastrbf.compile --only gram kernel_ridge gp   # names or name prefixes
    python -m fastrbf.compile --jobs 1              # one process (default: all cores)

It prints one line per target and dtype (``[ 5/42] kernel_ridge float64  3.1 s``) and
a summary, and exits with 0 when everything compiled, 1 when a target failed and 2 on a
usage error or when there is no cache to fill (``FASTRBF_CACHE=0``, no writable cache
directory: set ``NUMBA_CACHE_DIR``).  Several processes compile at once, one per
core; their writes to the cache are serialised by a lock file.

While a first call compiles for more than a second, fastrbf prints one line to stderr,
once per process::

    fastrbf: compiling numba kernels for the first call with float64 (cached afterwards; ...)

``FASTRBF_QUIET=1`` in the environment or :func:`notice` ``(False)`` turns it off
(it is off by default inside pytest).

Examples
--------
>>> import numpy as np
>>> from fastrbf.compile import TARGETS
>>> TARGETS["sqdist"](np.float64)
>>> sorted(TARGETS)[:3]
['cholesky', 'gaussian_process[prml]', 'gaussian_process_lml[prml]']
"""

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np


def _data(dtype, n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)).astype(dtype)
    y = (np.sin(3 * X[:, 0]) + X[:, 1]).astype(dtype)
    return X, y


def _sqdist(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.sqdist(X)  # symmetric: one triangle, mirrored
    fastrbf.sqdist(X, X[:7])


def _gram(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.gram(X, gamma=2.0)  # symmetric: one triangle, mirrored
    fastrbf.gram(X, X[:7], gamma=2.0)


def _gram_matvec(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.gram_matvec(X, X[:7], y[:7], gamma=2.0)


def _cholesky(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.cholesky(fastrbf.gram(X, gamma=2.0), alpha=1e-3).solve(y)


def _solve_regularized(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.solve_regularized(fastrbf.gram(X, gamma=2.0), y, alpha=1e-3)


def _kernel_ridge(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.kernel_ridge(X, y, gamma=2.0, alpha=1e-3).predict(X[:5])


def _kernel_ridge_pcg(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.kernel_ridge(X, y, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=10, seed=0).predict(X[:5])


def _interpolate(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.interpolate(X, y).predict(X[:5])


def _interpolate_local(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.interpolate(X, y, neighbors=10).predict(X[:5])


def _partition_of_unity(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.partition_of_unity(X, y, patch_points=10).predict(X[:5])


def _rbf_network(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_network(X, y, gamma=2.0, n_centers=5, seed=0).predict(X[:5])


def _rbf_network_learn_gamma(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_network(X, y, gamma=2.0, n_centers=5, seed=0, learn_gamma=True, max_gamma_iter=3).predict(X[:5])


def _rbf_network_forward(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_network(X, y, gamma=2.0, centers="forward", n_centers=5).predict(X[:5])


def _kmeans(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.kmeans(X, 4, seed=0, max_iter=5)


def _kernel_kmeans(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.kernel_kmeans(X, 3, gamma=1.0, seed=0, max_iter=5, method="exact").predict(X[:5])
    fastrbf.kernel_kmeans(X, 3, gamma=1.0, seed=0, max_iter=5, method="nystroem", n_landmarks=10).predict(X[:5])


def _kmeans_bounded(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.kmeans(X, 4, seed=0, max_iter=5, algorithm="bounded")


def _kmeans_ranked(dtype):
    # K * d above DIRECT_MAX_KD, at most F32_DIRECT_MAX_D features: the float32 ranking
    # of the micro-kernel, the iterations in one compiled loop (brute force and bounded)
    import fastrbf

    X, _ = _data(dtype, n=200, d=16)
    fastrbf.kmeans(X, 33, seed=0, max_iter=5)
    fastrbf.kmeans(X, 33, seed=0, max_iter=5, algorithm="bounded")


def _kmeans_gemm(dtype):
    # more than F32_DIRECT_MAX_D features: the certified float32 GEMM assignment
    import fastrbf

    X, _ = _data(dtype, n=200, d=49)
    fastrbf.kmeans(X, 11, seed=0, max_iter=5)
    fastrbf.kmeans(X, 11, seed=0, max_iter=5, algorithm="bounded")


def _kmeans_csr(dtype):
    import scipy.sparse as sp

    import fastrbf

    X, _ = _data(dtype)
    X[X < 0.5] = 0.0
    fastrbf.kmeans(sp.csr_matrix(X), 4, seed=0, max_iter=5)


def _predict_grad(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.kernel_ridge(X, y, gamma=1.0, alpha=0.1).predict(X[:5], return_grad=True)


def _lloyd_assign(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.lloyd_assign(X, X[:4])


def _lloyd_assign_ranked(dtype):
    import fastrbf

    X, _ = _data(dtype, n=200, d=16)
    fastrbf.lloyd_assign(X, X[:33])


def _lloyd_assign_gemm(dtype):
    import fastrbf

    X, _ = _data(dtype, n=200, d=49)
    fastrbf.lloyd_assign(X, X[:11])


def _lloyd_update(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.lloyd_update(X, np.arange(len(X)) % 4, 4)


def _knn(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.knn(X, X[:5], 3)


def _knn_gemm(dtype):
    import fastrbf

    X, _ = _data(dtype, n=200, d=49)  # many features: the GEMM screen
    fastrbf.knn(X, X[:5], 3, method="brute")


def _knn_tree(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.knn(X, X[:5], 3, method="tree")


def _knn_tree_many(dtype):
    import fastrbf
    from fastrbf.neighbors._kdtree import LIST_MIN_K, LIST_MIN_M

    # many queries at a larger k in low dimension: the kd-tree's list search
    X, _ = _data(dtype, n=LIST_MIN_M)
    fastrbf.knn(X, X, LIST_MIN_K, method="tree")


def _radius_neighbors(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.radius_neighbors(X, X[:5], 0.5)


def _knn_predict(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.knn_predict(X, y, X[:5], 3)


def _nadaraya_watson(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.nadaraya_watson(X, y, X[:5], gamma=2.0)


def _rbf_vote(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_vote(X, y > y.mean(), X[:5], gamma=2.0, classify=True)


def _random_fourier(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.random_fourier(3, 16, gamma=2.0, seed=0, dtype=dtype).transform(X)


def _nystroem(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.nystroem(X, 8, gamma=2.0, seed=0).transform(X)


def _rpcholesky(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.rpcholesky(X, 8, gamma=2.0, seed=0)


def _gaussian_process_lml_prml(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.gaussian_process_lml(X, y, kernel="prml", length_scale=0.7, constant=0.1, linear=0.1, noise=0.1,
                                 eval_gradient=True)


def _gaussian_process_prml(dtype):
    import fastrbf

    X, y = _data(dtype)
    with warnings.catch_warnings():  # the optimum of this tiny problem may sit on a bound
        warnings.simplefilter("ignore", UserWarning)
        fastrbf.gaussian_process(X, y, kernel="prml", noise=0.1).predict(X[:5], return_std=True)


def _sparse_gaussian_process(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.sparse_gaussian_process(X, y, n_landmarks=8, max_iter=2, seed=0).predict(X[:5], return_std=True)


def _vecchia_gaussian_process(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.vecchia_gaussian_process(X, y, n_neighbors=4, optimize=False).predict(X[:5], return_std=True)
    fastrbf.vecchia_gaussian_process_lml(X, y, n_neighbors=4, eval_gradient=True)


#: one tiny call per public function (and solver variant, and k-means assignment path):
#: name -> callable(dtype)
TARGETS = {
    "cholesky": _cholesky,
    "gaussian_process[prml]": _gaussian_process_prml,
    "gaussian_process_lml[prml]": _gaussian_process_lml_prml,
    "gram": _gram,
    "gram_matvec": _gram_matvec,
    "interpolate": _interpolate,
    "interpolate[neighbors]": _interpolate_local,
    "kernel_ridge": _kernel_ridge,
    "kernel_ridge[nystrom-pcg]": _kernel_ridge_pcg,
    "kernel_kmeans": _kernel_kmeans,
    "kmeans": _kmeans,
    "kmeans[bounded]": _kmeans_bounded,
    "kmeans[csr]": _kmeans_csr,
    "kmeans[gemm]": _kmeans_gemm,
    "kmeans[ranked]": _kmeans_ranked,
    "knn": _knn,
    "knn[gemm]": _knn_gemm,
    "knn[tree]": _knn_tree,
    "knn[tree, many queries]": _knn_tree_many,
    "knn_predict": _knn_predict,
    "lloyd_assign": _lloyd_assign,
    "lloyd_assign[gemm]": _lloyd_assign_gemm,
    "lloyd_assign[ranked]": _lloyd_assign_ranked,
    "lloyd_update": _lloyd_update,
    "nadaraya_watson": _nadaraya_watson,
    "nystroem": _nystroem,
    "partition_of_unity": _partition_of_unity,
    "predict[return_grad]": _predict_grad,
    "radius_neighbors": _radius_neighbors,
    "random_fourier": _random_fourier,
    "rbf_network": _rbf_network,
    "rbf_network[learn_gamma]": _rbf_network_learn_gamma,
    "rbf_network[forward]": _rbf_network_forward,
    "rbf_vote": _rbf_vote,
    "rpcholesky": _rpcholesky,
    "solve_regularized": _solve_regularized,
    "sparse_gaussian_process": _sparse_gaussian_process,
    "sqdist": _sqdist,
    "vecchia_gaussian_process": _vecchia_gaussian_process,
}


DTYPES = ("float64", "float32")


def notice(enabled: bool | None) -> bool | None:
    """Turn the compile notice on (``True``), off (``False``) or back to the default
    (``None``: on, unless ``FASTRBF_QUIET=1`` or running under pytest).

    Returns the previous setting.

    Examples
    --------
    >>> from fastrbf.compile import notice
    >>> prev = notice(False)
    >>> notice(prev)
    False
    """
    from . import _notice

    return _notice.set_enabled(enabled)


def select(only: list[str] | None) -> list[str]:
    """The names of ``TARGETS`` that ``--only`` selects: a target name selects it and
    its solver variants (``kernel_ridge`` also ``kernel_ridge[nystrom-pcg]``), any other
    name the targets it is a prefix of (``gaussian_process``: both GP targets).

    Raises
    ------
    ValueError
        A name that selects nothing.

    Examples
    --------
    >>> from fastrbf.compile import select
    >>> select(["gaussian_process", "gram", "kernel_ridge"])
    ['gaussian_process[prml]', 'gaussian_process_lml[prml]', 'gram', 'kernel_ridge', 'kernel_ridge[nystrom-pcg]']
    """
    if not only:
        return list(TARGETS)
    chosen = set()
    for name in only:
        if name in TARGETS:
            hit = [t for t in TARGETS if t == name or t.startswith(name + "[")]
        else:
            hit = [t for t in TARGETS if t.startswith(name)]
        if not hit:
            raise ValueError(f"`--only` must name targets or prefixes of them ({', '.join(TARGETS)}); got {name!r}.")
        chosen.update(hit)
    return [t for t in TARGETS if t in chosen]


def _cache_problem():
    """Why there is no on-disk cache to fill, or None."""
    import numba

    from ._jit import _decorators
    from ._jit import pairwise as _jp

    if numba.config.DISABLE_JIT:  # type: ignore[attr-defined]
        return "numba's JIT is disabled (NUMBA_DISABLE_JIT=1): there is nothing to compile"
    if not _decorators.cache_enabled():
        return "the on-disk cache is turned off (FASTRBF_CACHE=0): compiled kernels would not be kept"
    if type(_jp.pairwise_rows.kernel._cache).__name__ == "NullCache":
        return ("no writable cache directory for numba (a read-only install?): set NUMBA_CACHE_DIR to a writable "
                "directory")
    return None


def _cache_dir():
    from ._jit import pairwise as _jp

    return os.path.dirname(_jp.pairwise_rows.kernel._cache._cache_path)


def _worker_init(lock_path):
    os.environ["FASTRBF_QUIET"] = "1"
    if lock_path is not None:
        from ._jit.llvm.internals import serialise_cache_writes

        serialise_cache_writes(lock_path)


def _run_one(job):
    """Run one target for one dtype; returns (name, dtype, seconds, error or None)."""
    import numpy as np

    name, dtype = job
    t0 = time.perf_counter()
    try:
        TARGETS[name](np.dtype(dtype).type)
    except Exception as exc:  # reported, and the exit status says so
        return name, dtype, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"
    return name, dtype, time.perf_counter() - t0, None


def _parser():
    p = argparse.ArgumentParser(prog="python -m fastrbf.compile",
                                description="Compile fastrbf's numba kernels into the on-disk cache ahead of use.")
    p.add_argument("--dtype", nargs="+", choices=DTYPES, default=list(DTYPES), metavar="DTYPE",
                   help="float64 and/or float32 (default: both)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="targets (or prefixes of target names) to compile")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="processes compiling at once (default: the number of cores)")
    p.add_argument("--list", action="store_true", help="list the targets and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    """Fill numba's on-disk cache with fastrbf's kernels (``python -m fastrbf.compile``).

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``): ``--dtype float64 float32``,
        ``--only NAME ...`` (names of :data:`TARGETS` or prefixes of them), ``--jobs N``
        (processes at once; default all cores, 1 compiles in this process), ``--list``.

    Returns
    -------
    status : int
        0 when every target compiled, 1 when one failed, 2 on a usage error or when
        there is no cache to fill (``FASTRBF_CACHE=0``, no writable cache directory).

    Examples
    --------
    >>> from fastrbf.compile import main
    >>> main(["--only", "sqdist", "--dtype", "float32", "--jobs", "1"])  # doctest: +ELLIPSIS
    [1/1] sqdist float32 ... s
    1 of 1 compiled in ... s into ...
    0
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the message naming the argument
        return int(exc.code or 0)
    try:
        names = select(args.only)
    except ValueError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print(f"{parser.prog}: error: `--jobs` must be an int >= 1; got {args.jobs}.", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(names))
        return 0
    problem = _cache_problem()
    if problem is not None:
        print(f"{parser.prog}: {problem}.", file=sys.stderr)
        return 2
    dtypes = list(dict.fromkeys(args.dtype))
    jobs = [(name, dt) for dt in dtypes for name in names]
    n_jobs = min(len(jobs), args.jobs or os.cpu_count() or 1)
    try:
        import fcntl  # noqa: F401  (the lock that makes parallel cache writes safe)
    except ImportError:  # pragma: no cover - not POSIX
        n_jobs = 1
    width = len(str(len(jobs)))
    failed = []
    t0 = time.perf_counter()

    def report(k, res):
        name, dt, secs, err = res
        status = f"{secs:5.1f} s" if err is None else f"FAILED ({err})"
        print(f"[{k:{width}d}/{len(jobs)}] {name} {dt}  {status}", flush=True)
        if err is not None:
            failed.append((name, dt))

    if n_jobs == 1:
        from . import _notice

        prev = _notice.set_enabled(False)
        try:
            for k, job in enumerate(jobs, 1):
                report(k, _run_one(job))
        finally:
            _notice.set_enabled(prev)
    else:
        import multiprocessing

        from fastrbf import compile as this  # picklable by name also when run as __main__

        fd, lock_path = tempfile.mkstemp(prefix="fastrbf-compile-", suffix=".lock")
        os.close(fd)
        try:
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(n_jobs, initializer=this._worker_init, initargs=(lock_path,)) as pool:
                for k, res in enumerate(pool.imap_unordered(this._run_one, jobs), 1):
                    report(k, res)
        finally:
            os.unlink(lock_path)
    total = time.perf_counter() - t0
    done = len(jobs) - len(failed)
    print(f"{done} of {len(jobs)} compiled in {total:.1f} s into {_cache_dir()}"
          + (f"; failed: {', '.join(f'{n} {d}' for n, d in failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
