"""A one-line notice on stderr while fastrbf's kernels compile for a first call.

numba fires ``numba:compile`` events for real compilations only (loading from the
on-disk cache fires none).  A first call usually compiles several kernels one after
the other (the distance loop, then the kernel function, ...), each under a second but
together a visible stall, so the time is summed over a *burst*: outermost compilations
of fastrbf kernels that start within :data:`GAP` seconds of the previous one's end.
When a burst has compiled for :data:`DELAY` seconds, one line is printed, once per
process.  Silenced by
``FASTRBF_QUIET=1`` or ``fastrbf.compile.notice(False)``; by default also silent
under pytest (``PYTEST_CURRENT_TEST``) unless a test turns it on.
"""

import os
import sys
import threading
import time

from numba import types

from ._jit.llvm import internals

#: seconds of compilation before the notice is printed
DELAY = 1.0
#: seconds between two compilations that still count as one stall
GAP = 0.25

MESSAGE = ('fastrbf: compiling numba kernels for the first call{with_dtype} (cached afterwards; '
           'run "python -m fastrbf.compile" to do this ahead)')

_lock = threading.Lock()
_local = threading.local()
_enabled: bool | None = None  # None: automatic (see allowed())
_printed = False
_timer: threading.Timer | None = None
_burst = 0.0  # seconds compiled in the current burst
_burst_end = -float("inf")  # time.monotonic() when the last outermost compilation ended
_burst_dtype = ""


def set_enabled(enabled):
    """``True``/``False`` turns the notice on/off; ``None`` restores the default.
    Returns the previous setting."""
    global _enabled
    with _lock:
        prev = _enabled
        _enabled = enabled
    return prev


def allowed():
    """Whether the notice may be printed now."""
    if _enabled is not None:
        return _enabled
    if os.environ.get("FASTRBF_QUIET", "").strip().lower() not in ("", "0", "false", "no", "off"):
        return False
    return "PYTEST_CURRENT_TEST" not in os.environ


def _dtype_of(args):
    """The dtype of the first floating-point array argument (index arrays come first in
    some kernels)."""
    for a in args or ():
        if isinstance(a, types.Array) and isinstance(a.dtype, types.Float):
            return str(a.dtype)
    return None


def _fire(with_dtype):
    global _printed, _timer
    with _lock:
        _timer = None
        if _printed or not allowed():
            return
        _printed = True
    try:
        print(MESSAGE.format(with_dtype=with_dtype), file=sys.stderr, flush=True)
    except Exception:  # pragma: no cover - a closed stderr must not break a compile
        pass


class _Listener(internals.Listener):
    def on_start(self, ev):
        global _timer, _burst, _burst_dtype
        disp = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
        depth = getattr(_local, "depth", 0)
        if depth == 0 and not module.startswith("fastrbf."):
            return  # another library's compilation (or the user's own)
        _local.depth = depth + 1
        if depth == 0:
            now = time.monotonic()
            _local.start = now
            with _lock:
                if _printed or _timer is not None or not allowed():
                    return
                if now - _burst_end > GAP:  # a new stall
                    dt = _dtype_of(ev.data.get("args"))
                    _burst, _burst_dtype = 0.0, (f" with {dt}" if dt else "")
                _timer = threading.Timer(max(DELAY - _burst, 0.0), _fire, (_burst_dtype,))
                _timer.daemon = True
                _timer.start()

    def on_end(self, ev):
        global _timer, _burst, _burst_end
        depth = getattr(_local, "depth", 0)
        if depth == 0:
            return
        _local.depth = depth - 1
        if depth == 1:
            now = time.monotonic()
            with _lock:
                t, _timer = _timer, None
                _burst += now - getattr(_local, "start", now)
                _burst_end = now
            if t is not None:
                t.cancel()


_listener = _Listener()
internals.on_compile(_listener)
