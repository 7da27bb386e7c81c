"""One decorator factory for every numba kernel of fastrbf.

``jit`` is for helpers that are called from other jitted code (inlined by LLVM);
``pjit`` makes a top-level parallel kernel: a :class:`ParallelKernel` that holds the
``parallel=True`` dispatcher and, built lazily and only when it is needed, a serial
twin (used where a parallel region would be unsafe: numba's ``workqueue`` layer under
concurrent calls, or a child forked from a process that already used GNU OpenMP).

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

Nothing compiles at import: dispatchers are lazy and compile once per dtype on the
first call (the public wrappers always pass C-contiguous, writeable arrays, so there
is exactly one signature per dtype).
"""

import functools
import os

import numba

FASTMATH = frozenset({"contract", "nsz", "arcp"})


def _cache_enabled():
    return os.environ.get("FASTRBF_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def _njit(func, *, parallel, cache, inline="never"):
    opts = dict(fastmath=set(FASTMATH), error_model="numpy", nogil=True, parallel=parallel)
    if inline != "never":
        opts["inline"] = inline
    if cache:
        try:
            return numba.njit(cache=True, **opts)(func)
        except RuntimeError:  # "cannot cache function ...: no locator available"
            pass
    return numba.njit(cache=False, **opts)(func)


def jit(func):
    """Compile a helper called from other kernels (serial, cached)."""
    return _njit(func, parallel=False, cache=_cache_enabled())


def jit_reduce(func):
    """Compile a reduction helper that may be re-associated (``reassoc`` added).

    Only for sums whose order does not matter to the caller beyond being fixed at
    compile time: LLVM then vectorises the reduction with several accumulators.  The
    order is the same whatever the thread count (each sum is done by one thread), so
    results stay bitwise reproducible across ``n_threads``.  Never use it on code that
    calls ``fexp`` (re-association would undo its range reduction).
    """
    return _reduce_njit(func, set(FASTMATH) | {"reassoc"})


def _reduce_njit(func, fastmath):
    opts = dict(fastmath=fastmath, error_model="numpy", nogil=True)
    if _cache_enabled():
        try:
            return numba.njit(cache=True, **opts)(func)
        except RuntimeError:
            pass
    return numba.njit(cache=False, **opts)(func)


class ParallelKernel:
    """A ``parallel=True`` numba kernel with a lazily built serial twin.

    The serial twin is not cached on disk: numba's cache key does not include the
    ``parallel`` flag, so caching both from one function would let one overwrite the
    other.  It is only built in the rare situations described in the module docstring.
    """

    def __init__(self, func):
        functools.update_wrapper(self, func)
        self.py_func = func
        self.parallel = _njit(func, parallel=True, cache=_cache_enabled())
        self._serial = None

    @property
    def serial(self):
        if self._serial is None:
            self._serial = _njit(self.py_func, parallel=False, cache=False)
        return self._serial

    def __call__(self, *args):
        return self.parallel(*args)


def pjit(func):
    """Compile a top-level parallel kernel (see :class:`ParallelKernel`)."""
    return ParallelKernel(func)
