"""One decorator factory for every numba kernel of fastrbf.

``jit`` is for helpers that are called from other jitted code (inlined by LLVM),
``jit_inline`` for the few tiny ones inlined at numba-IR level (the vectorised ``cos``
and ``sin``), ``jit_reduce`` for re-associable sums, ``jit_static`` for a kernel that
allocates nothing (compiled without reference counting);
``pjit(tasks=...)`` makes a top-level kernel: a :class:`BlockKernel`, a serial
``nogil`` function over a range ``lo:hi`` of independent tasks (its first two
arguments; each task owns its own part of the output), and ``kernel.run(n_threads,
*args)`` cuts ``range(tasks(*args))`` into blocks that fastrbf's worker threads run
(:func:`fastrbf._threads.run_tasks`).

Why not numba ``prange`` (``parallel=True``): the parallel compilation of one
``prange`` kernel costs about as much CPU time as everything it calls (a second or
more per kernel on a small machine), on the first call of every function, while the
serial kernel run on Python threads is as fast for large inputs (a block is
thousands of rows; the GIL is released inside).  It also needs no serial twin: a
serial kernel is safe under concurrent calls from several Python threads and in a
child forked from a process that used OpenMP, which a parallel region is not under
numba's ``workqueue`` and GNU OpenMP layers.  Results do not depend on the thread
count or on the blocks, because tasks do not share outputs.

Compile only what a call runs:

- the kernel function is a compile-time type (:class:`fastrbf._jit.kernels.Phi`),
  so a kernel holds the one function it applies (none for plain distances);
- helpers are called with variables, not literal numbers, where the same helper is
  also called with a variable (numba compiles one more copy per literal value);
- a helper with one call site in each of its callers is ``jit_inline``: a ``jit``
  helper is compiled on its own and its code optimised and compiled again inside every
  caller, so a chain of three costs about three compiles of the innermost code (see
  docs/performance.md, 'Compile time').  The tile functions (``chunk_row``,
  ``chunk_row2``) stay ``jit``: they have several call sites, and numba's IR inliner
  copies a body per site.
- a kernel that allocates nothing is ``jit_static`` (no reference counting);
- a compiled loop that runs a whole fit calls the big kernels of its steps through
  their addresses (:mod:`fastrbf._jit.llvm.addressed`), not as ``jit`` callees, whose code
  numba would compile once more inside the loop.
- arrays are copied element by element, not by slice assignment from another array
  (``a[:] = b``): numba compiles the f-string message of that assignment's shape check,
  which costs seconds of cold compile (see docs/performance.md, 'Compile time').  Filling
  with a scalar (``a[:] = 0.0``) has no such check.

Flags are the same everywhere:

- ``cache=True`` unless the environment sets ``FASTRBF_CACHE=0``; when no cache
  directory is writable (a read-only install without ``NUMBA_CACHE_DIR``) caching is
  silently turned off instead of failing.
- ``fastmath`` is ``{"contract", "nsz", "arcp"}``: FMA contraction, no signed-zero and
  reciprocal rules.  Never ``nnan``/``ninf`` (NaN keeps its meaning) and never
  ``reassoc`` (it would let LLVM reorder sums, which breaks the bitwise-reproducible
  reductions and the exp range reduction).
- ``error_model="numpy"`` (no Python exception checks on division) and ``nogil=True``
  (other Python threads run while a kernel runs).
- ``no_cfunc_wrapper=True``: numba would compile, next to each kernel, a C-callable
  wrapper that only a call through a first-class function uses; fastrbf makes no such
  call (:mod:`fastrbf._jit.llvm.addressed` compiles its own).

Nothing compiles at import: dispatchers are lazy and compile once per dtype on the
first call (the public wrappers always pass C-contiguous, writeable arrays, so there
is exactly one signature per dtype and kernel function).
"""

import functools
import os

import numba
from numba.extending import overload

from .. import _notice  # noqa: F401  (the notice while kernels compile)

FASTMATH = frozenset({"contract", "nsz", "arcp"})

#: the flags numba compiles an ``@overload``'s implementation with: the kernels' own
OVERLOAD_OPTIONS = dict(fastmath=set(FASTMATH), error_model="numpy", nogil=True)


def cache_enabled():
    return os.environ.get("FASTRBF_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def _njit(func, *, parallel, cache, inline="never", nrt=True, fastmath=FASTMATH):
    opts = dict(fastmath=set(fastmath), error_model="numpy", nogil=True, parallel=parallel, no_cfunc_wrapper=True)
    if inline != "never":
        opts["inline"] = inline
    if not nrt:
        opts["_nrt"] = False
    if cache:
        try:
            return numba.njit(cache=True, **opts)(func)
        except RuntimeError:  # "cannot cache function ...: no locator available"
            pass
    return numba.njit(cache=False, **opts)(func)


def jit(func):
    """Compile a helper called from other kernels (serial, cached)."""
    return _njit(func, parallel=False, cache=cache_enabled())


def jit_static(func):
    """Compile a kernel called from Python that allocates nothing (serial, cached),
    without numba's reference counting (``_nrt=False``): its arrays are all the
    caller's, so the count on every array it touches (an atomic increment and
    decrement per use) is dead code that costs compile time (see docs/performance.md,
    'Compile time')."""
    return _njit(func, parallel=False, cache=cache_enabled(), nrt=False)


def jit_inline(func):
    """Compile a small helper that numba inlines into each caller at IR level (so it is
    compiled with the caller's flags; never cached on its own)."""
    return numba.njit(inline="always", fastmath=set(FASTMATH), error_model="numpy")(func)


def jit_overload(func, *, inline="never"):
    """``@jit_overload(f)`` over ``def impl(...)``: the compiled implementation of the
    Python function ``f`` (a stand-in that kernels call; ``impl`` dispatches on the
    argument types and returns the function to compile), with :data:`OVERLOAD_OPTIONS`.
    ``inline="always"`` inlines it into each caller at numba IR level."""
    return overload(func, jit_options=OVERLOAD_OPTIONS, inline=inline)


def jit_reduce(func):
    """Compile a reduction helper that may be re-associated (``reassoc`` added).

    Only for sums whose order does not matter to the caller beyond being fixed at
    compile time: LLVM then vectorises the reduction with several accumulators.  The
    order is the same whatever the thread count (each sum is done by one thread), so
    results stay bitwise reproducible across ``n_threads``.  Never use it on code that
    calls ``fexp`` (re-association would undo its range reduction).
    """
    return _njit(func, parallel=False, cache=cache_enabled(), fastmath=FASTMATH | {"reassoc"})


#: blocks per thread of a :class:`BlockKernel` run: several, so that a thread that the
#: machine deschedules delays only a small block (the others take the rest)
BLOCKS_PER_THREAD = 4


class BlockKernel:
    """A serial ``nogil`` numba kernel over tasks ``lo:hi`` (its first two arguments),
    run in parallel by :meth:`run`; ``tasks(*args)`` is the number of tasks for the
    other arguments and ``work(*args)`` about the flops of all of them (small work runs
    on the calling thread, see :func:`fastrbf._threads.for_work`).  Calling it directly
    runs ``kernel(lo, hi, *args)`` on this thread."""

    def __init__(self, func, tasks, work):
        functools.update_wrapper(self, func)
        self.py_func = func
        self.tasks = tasks
        self.work = work
        self.kernel = _njit(func, parallel=False, cache=cache_enabled())

    @property
    def signatures(self):
        """The compiled signatures (numba's ``Dispatcher.signatures``)."""
        return self.kernel.signatures

    def __call__(self, lo, hi, *args):
        return self.kernel(lo, hi, *args)

    def run(self, n_threads, *args):
        """All tasks on up to ``n_threads`` threads (``None``, ``-1``: as in fastrbf)."""
        from .. import _threads

        n = int(self.tasks(*args))
        nt = _threads.for_work(self.work(*args), n_threads)
        nb = min(n, nt * BLOCKS_PER_THREAD) if nt > 1 else 1
        if nb <= 1:
            self.kernel(0, n, *args)
            return
        step = -(-n // nb)
        _threads.run_tasks([functools.partial(self.kernel, lo, min(n, lo + step), *args) for lo in range(0, n, step)],
                           nt)


def pjit(*, tasks, work):
    """Compile a top-level kernel over ``tasks(*args)`` independent tasks of
    ``work(*args)`` flops in all (see :class:`BlockKernel`)."""
    return lambda func: BlockKernel(func, tasks, work)
