"""Thread control: numba threads, BLAS threads, and safe parallel execution.

- ``n_threads``: ``None`` means the ambient default (the innermost :func:`threads`
  context of this Python thread, else all cores); ``-1`` all cores; ``-2`` all but one
  (scikit-learn's rule); ``0`` is an error.  Never more than numba's thread pool.
- Parallel work runs on fastrbf's own worker threads (:func:`run_tasks`), never in a
  numba parallel region: the kernels are serial ``nogil`` functions over fixed blocks
  (:class:`fastrbf._jit._decorators.BlockKernel`).  So no OpenMP or TBB pool is
  started, nothing spins while idle (GNU OpenMP's threads spin about 8 ms after every
  region by default, which stalled small fits on a busy machine), calls from several
  Python threads at once are safe under any numba threading layer, and a child forked
  at any moment can run every kernel.
- **What a parallel step costs.**  On a virtual machine a sleeping worker takes tens of
  microseconds to start (the host must wake its virtual CPU), and the caller as long to
  learn that the worker has finished.  Workers and a caller that poll before they sleep
  were tried and not kept: the woken worker still needs the GIL to start its task, and
  sleeps on it while the caller prepares its own (see docs/performance.md, 'Threads').
- **One exception to "nothing spins while idle"**: the compiled k-means loop
  (:mod:`fastrbf._jit.cluster.bounded_fit`) runs on :func:`team`, whose members stay inside
  one compiled call for the whole fit and wait between iterations by spinning on the
  CPU's spin-wait hint, then yielding the core (``sched_yield``) on every round after
  about 1024 (:mod:`fastrbf._jit.llvm.spin`).  A wait there lasts the leader's own share of
  an iteration; the members leave when the fit ends.  No task starts in Python, so no
  thread sleeps on the GIL (see docs/performance.md, 'Threads').
- BLAS threads never multiply with fastrbf's: fastrbf's own BLAS calls run on one BLAS
  thread each (see below), ``n_threads`` of them at once.
- Fork at any moment: a fork waits (up to :data:`FORK_WAIT` seconds) until no other
  thread is inside numba's compiler, so the child never inherits the compiler lock
  held by a thread that does not exist in it, and fastrbf's own locks are made anew
  in the child.
- BLAS always runs on one thread inside fastrbf (:func:`serial_blas`): multi-threaded
  BLAS rounds differently for each thread count.  Parallel dense work is cut into
  fixed blocks instead (:mod:`fastrbf._dense`), run by :func:`run_tasks` or
  :func:`map_ranges` on fastrbf's worker threads.
- Small work runs on the calling thread alone: every parallel call site asks
  :func:`for_work` (or :func:`for_dense`), which gives one thread below
  :data:`SERIAL_WORK`, so a small call wakes no worker thread.  Where fastrbf hands
  BLAS work to other code (SciPy's L-BFGS-B in the GP optimiser), that runs in
  :func:`serial_blas` too: OpenBLAS's threads, once woken, spin for up to about 0.1 s.
  :func:`run_tasks` and :func:`map_ranges` run tasks on the calling thread as well, so
  a worker waiting for a core never holds up the tasks it has not started.
"""

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numba

from . import _validation as _v

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_local = threading.local()
_controller = None
# made by _fresh_state() below
_serial_lock: threading.Lock
_executor_lock: threading.Lock
_serial_depth: int
_serial_limiter: list | None
_executor: "ThreadPoolExecutor | None"


def _fresh_state():
    """fastrbf's locks and per-process state, made at import and anew in a forked child
    (another thread of the parent may have held a lock at the fork)."""
    global _serial_lock, _executor_lock, _serial_depth, _serial_limiter, _executor
    _serial_lock = threading.Lock()
    _executor_lock = threading.Lock()
    _serial_depth = 0
    _serial_limiter = None
    _executor = None  # a forked child has none of its threads


_fresh_state()


def max_threads():
    """Size of numba's thread pool (all cores unless ``NUMBA_NUM_THREADS`` says less)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def resolve(n_threads):
    """Validate ``n_threads`` and return a thread count in ``[1, max_threads()]``."""
    if n_threads is None:
        n_threads = getattr(_local, "n_threads", None)
        if n_threads is None:
            return max_threads()
    n = _v.check_int(n_threads, "n_threads", text="an int or None")
    if n == 0:
        raise ValueError("`n_threads` must be a positive int, a negative int (-1 = all cores) or None; got 0.")
    if n < 0:
        n = max(1, max_threads() + 1 + n)
    return min(n, max_threads())


#: seconds a fork waits for another thread to finish compiling a kernel
FORK_WAIT = 120.0
_fork_held_compiler = False


def _compiler_lock():
    from ._jit.llvm.internals import compiler_lock

    return compiler_lock()


def _before_fork():
    # no thread may be inside numba's compiler when the process forks: the child would
    # inherit the lock held by a thread that does not exist there, and hang on its
    # first compilation
    global _fork_held_compiler
    lock = _compiler_lock()
    _fork_held_compiler = bool(lock is not None and lock.acquire(timeout=FORK_WAIT))


def _after_fork_in_parent():
    global _fork_held_compiler
    if _fork_held_compiler:
        _fork_held_compiler = False
        _compiler_lock().release()


def _after_fork_in_child():
    global _fork_held_compiler
    if _fork_held_compiler:  # the forking thread holds it in the child too
        _fork_held_compiler = False
        _compiler_lock().release()
    _fresh_state()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def _numba_threads(n):
    prev = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(prev)


#: below this much work (roughly flops) a call runs on one thread: waking the pool costs
#: more than it saves, and on a loaded machine a descheduled thread stalls the others.
#: Measured on 2 cores with another process busy on one: distances, Gram matrices,
#: kernel sums and k nearest neighbours of n x n points of 5 features gain from a
#: second thread from n ~ 700-1000 on (work n^2 (d + 8) ~ 6e6-1.3e7)
SERIAL_WORK = 4_000_000


def for_work(work, n_threads):
    """``n_threads`` validated and resolved, or 1 when ``work`` is small."""
    nt = resolve(n_threads)
    return 1 if work < SERIAL_WORK else nt


def for_dense(n, d, n_threads):
    """:func:`for_work` for an n x n kernel matrix of d features that is then factored:
    about n^2 (d + 8) to build it and n^3 / 8 (in the same units) to factor it."""
    return for_work(n * n * (d + n // 8 + 8), n_threads)


def map_ranges(func, n, n_threads, align=1):
    """Run ``func(lo, hi)`` over ``n_threads`` contiguous ranges of ``range(n)`` (range
    starts aligned to ``align``) on plain Python threads, for work that mixes BLAS calls
    (single-threaded) with serial ``nogil`` numba kernels.  BLAS called from several
    numba threads at once contends inside the BLAS shipped with SciPy; from Python
    threads through NumPy it scales.  Results must not depend on the split.

    The ranges run as :func:`run_tasks`: the calling thread runs ranges too, so one
    range wakes no worker, and a range no worker has started yet (a worker waiting for
    a core on a busy machine) is run by the caller instead of waited for."""
    nt = max(1, min(resolve(n_threads), -(-n // align)))
    step = -(-n // nt)
    step = max(1, -(-step // align) * align)
    run_tasks([functools.partial(func, lo, min(n, lo + step)) for lo in range(0, n, step)], nt)


def run_tasks(tasks, n_threads):
    """Run the callables ``tasks`` on up to ``n_threads`` threads (the caller's among
    them), each task once, in any order: for blocks of work with disjoint outputs, so
    the result does not depend on which thread ran what.  Exceptions propagate."""
    tasks = list(tasks)
    nt = max(1, min(resolve(n_threads), len(tasks)))
    if nt == 1:
        for t in tasks:
            t()
        return
    it = iter(tasks)
    lock = threading.Lock()

    def runner():
        while True:
            with lock:
                t = next(it, None)
            if t is None:
                return
            t()

    ex = _pool()
    futures = [ex.submit(runner) for _ in range(nt - 1)]
    try:
        runner()
    finally:
        for f in futures:
            # a runner that never started (every pool thread busy, say with the caller
            # itself) has nothing left to do: cancel it rather than wait for it
            if not f.cancel():
                f.result()


def _pool():
    global _executor
    with _executor_lock:
        if _executor is None:
            from concurrent.futures import ThreadPoolExecutor

            _executor = ThreadPoolExecutor(max_workers=max_threads(), thread_name_prefix="fastrbf")
        return _executor


def team(func, n_threads, on_exit):
    """``func(0)`` on the calling thread and ``func(1)`` ... ``func(n_threads - 1)`` on
    worker threads, for a compiled loop whose threads work together
    (:mod:`fastrbf._jit.cluster.bounded_fit`): ``func(0)`` must finish whether or not the
    others ever start.  ``on_exit()`` runs when ``func(0)`` returns or raises (it tells
    the others to leave); then the workers are waited for (one that never started is
    cancelled).  Exceptions propagate, a worker's after ``func(0)``'s."""
    futures = []
    if n_threads > 1:
        ex = _pool()
        futures = [ex.submit(func, tid) for tid in range(1, n_threads)]
    try:
        func(0)
    finally:
        on_exit()
        for f in futures:
            if not f.cancel():
                f.result()


def _get_controller(refresh=False):
    """The threadpoolctl controller, made on first use.  ``refresh=True`` scans the
    loaded libraries again: a BLAS loaded later (faiss bundles its own OpenBLAS) is then
    limited too, and so is fastrbf's :func:`serial_blas`."""
    global _controller, _knobs
    if _controller is None or refresh:
        # fastrbf's BLAS and LAPACK calls go to SciPy's BLAS, which fastrbf imports on
        # first use (fastrbf._lazy): load it before the scan, or the scan would miss it
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
        if refresh:
            _knobs = None  # rebuilt on next use, with any BLAS loaded since
    return _controller


class _BlasKnob:
    """Get and set one BLAS library's thread count directly.  threadpoolctl (>= 3.8)
    lets only one Python thread control OpenBLAS and silently ignores the others; a
    fastrbf call on a worker thread (a thread pool, dask's threaded scheduler) must
    still be able to make its BLAS calls single-threaded."""

    def __init__(self, lib):
        self.lib = lib
        self.get = self.set = None
        if getattr(lib, "internal_api", None) == "openblas":
            dll = getattr(lib, "dynlib", None)
            for prefix in ("", "scipy_"):
                for suffix in ("", "64_"):
                    get = getattr(dll, f"{prefix}openblas_get_num_threads{suffix}", None)
                    set_ = getattr(dll, f"{prefix}openblas_set_num_threads{suffix}", None)
                    if get is not None and set_ is not None and self.get is None:
                        self.get, self.set = get, set_

    def read(self):
        return int(self.get()) if self.get is not None else self.lib.get_num_threads()

    def write(self, n):
        if self.set is not None:
            self.set(int(n))
        else:
            self.lib.set_num_threads(n)


_knobs = None


def _blas_knobs():
    global _knobs
    knobs = _knobs
    if knobs is None:
        knobs = _knobs = [_BlasKnob(lib) for lib in _get_controller().lib_controllers if lib.user_api == "blas"]
    return knobs


@contextlib.contextmanager
def serial_blas():
    """BLAS on one thread for the block.  Any number of Python threads may be inside at
    once: the first one in sets the limit, the last one out restores what was there.
    BLAS calls inside the block give the same bits whatever BLAS was set to."""
    global _serial_depth, _serial_limiter
    knobs = _blas_knobs()
    with _serial_lock:
        if _serial_depth == 0:
            _serial_limiter = [(k, k.read()) for k in knobs]
            for k in knobs:
                k.write(1)
        _serial_depth += 1
    try:
        yield
    finally:
        with _serial_lock:
            _serial_depth -= 1
            if _serial_depth == 0 and _serial_limiter is not None:
                for k, n in _serial_limiter:
                    k.write(n)
                _serial_limiter = None


def blas_info():
    """A short description of the BLAS in use: ``"openblas Haswell x2"``."""
    infos = [i for i in _get_controller().info() if i.get("user_api") == "blas"]
    if not infos:
        return "none"
    i = infos[0]
    return f"{i.get('internal_api')} {i.get('architecture', '')} x{i.get('num_threads')}".replace("  ", " ")


@contextlib.contextmanager
def threads(n_threads: int | None) -> Iterator[None]:
    """Limit numba and BLAS threads together for the block.

    ``n_threads`` follows the same rule as everywhere (``-1`` = all cores).  Inside the
    block, fastrbf calls with ``n_threads=None`` use this count, other numba parallel
    code in this Python thread uses it too, and BLAS (process-wide) is limited to it.

    Examples
    --------
    >>> import numpy as np, fastrbf
    >>> X = np.random.default_rng(0).standard_normal((100, 3))
    >>> with fastrbf.threads(1):
    ...     D = fastrbf.sqdist(X)
    >>> D.shape
    (100, 100)
    """
    n = resolve(n_threads)
    prev = getattr(_local, "n_threads", None)
    _local.n_threads = n
    try:
        with _numba_threads(n), _get_controller(refresh=True).limit(limits=n, user_api="blas"):
            yield n
    finally:
        _local.n_threads = prev
