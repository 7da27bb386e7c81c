"""numba's internal modules, as the rest of the package uses them: one place to look
when a numba release moves one.

Everything here leans on ``numba.core`` (not numba's documented API) and is kept to the
few things fastrbf cannot do without: a hook on numba's compile events (the compile
notice), numba's compiler lock (no fork while a kernel compiles), an opaque type for
compile-time constants (the kernel function a kernel takes), and serialised writes to
numba's on-disk cache (several processes compiling ahead at once).
"""

from numba.core import event
from numba.core.extending import NativeValue, models, register_model, typeof_impl, unbox

#: the base class of a listener to numba's events (``on_start``/``on_end`` per event)
Listener = event.Listener


def on_compile(listener):
    """Call ``listener`` (an instance of :data:`Listener`) around every numba compilation."""
    event.register("numba:compile", listener)


def compiler_lock():
    """numba's global compiler lock (a re-entrant lock), or None in a numba without one."""
    try:
        from numba.core.compiler_lock import global_compiler_lock

        return global_compiler_lock._lock
    except Exception:  # pragma: no cover - a numba without this lock
        return None


def register_opaque(cls, type_cls, type_of):
    """Make instances of ``cls`` arguments of compiled functions, of numba type
    ``type_of(value)`` (an instance of ``type_cls``): a compile-time constant that carries
    no data at run time, so each distinct type compiles its own specialisation."""
    typeof_impl.register(cls)(lambda val, c: type_of(val))
    register_model(type_cls)(models.OpaqueModel)
    unbox(type_cls)(lambda typ, obj, c: NativeValue(c.context.get_dummy_value()))


def serialise_cache_writes(lock_path):
    """Make numba's cache writes in this process wait for the lock file ``lock_path``
    shared with other compiling processes: numba names a new cache entry from the index
    it read, so two processes adding entries for one function at once could otherwise
    give two entries one file."""
    import fcntl

    from numba.core import caching

    save = caching.IndexDataCacheFile.save

    def locked_save(self, key, data):
        with open(lock_path, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    caching.IndexDataCacheFile.save = locked_save
