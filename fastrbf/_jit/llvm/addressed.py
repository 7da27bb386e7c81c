"""Kernels that a compiled loop calls through their addresses.

numba links the code of every ``jit`` callee into its caller, and LLVM optimises and
compiles it again there.  A compiled loop that runs a whole fit (the k-means loop,
:func:`fastrbf._jit.cluster.bounded_fit.fit_loop`) would so compile the big kernels of its
steps twice.  Instead, :func:`addressed` compiles a kernel once, for one signature, as
a C-callable function (numba's ``cfunc``, cached on disk like every fastrbf kernel);
the caller receives a :func:`table` of such kernels (an ``int64`` array: each kernel's
address and a key of its signature) and calls entry ``i`` with :func:`call`.

- Safety: :func:`call` builds the C call from the types of the arguments it is given
  and computes the key of that signature when the caller compiles; at run time it
  calls the address only if the table's key for that entry is the same, else it skips
  the call and marks the entry (``key = -1``; :func:`check` raises for it afterwards).
  So an address is never called with arguments of other types than it was compiled
  for, which would read and write memory at random.
- Such a kernel must not raise: an exception cannot cross the C call (numba prints it
  and the caller goes on).  It allocates nothing (the caller passes its scratch arrays)
  and checks nothing that could fail; it is compiled without numba's reference counting
  (``_nrt=False``), so an allocation does not even compile, and slices of its
  arguments cost no atomic counts on memory that other threads also count.
- Why a table and not numba's first-class functions (``cfunc`` objects passed as
  arguments): those are typed and unboxed in Python on every call of the compiled
  function (a ``FunctionType`` built per argument, its signature checked), a cost paid
  per thread and per call.  A table is one array.
- Calling by address shortens the cold first call of the k-means loop (see
  docs/performance.md, 'Compile time'); LLVM cannot inline across the call, so this is
  for kernels that do a block of rows per call, not for a helper called per row.
"""

import zlib

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, event, sigutils
from numba.core.ccallback import CFunc
from numba.core.compiler_lock import global_compiler_lock
from numba.core.typing import signature
from numba.extending import intrinsic

from .._decorators import FASTMATH, cache_enabled


class _Addressed(CFunc):
    """A C-callable compilation of a kernel for one signature (numba's ``cfunc``) whose
    real compilations fire numba's ``numba:compile`` event, as a dispatcher's do (the
    compile notice and the compile tests listen to it; loading from the cache fires
    none)."""

    @property
    def py_func(self):
        return self._pyfunc

    def _compile_uncached(self):
        sig = self._sig
        with event.trigger_event("numba:compile", data={"dispatcher": self, "args": sig.args,
                                                        "return_type": sig.return_type}):
            return super()._compile_uncached()


_addressed: dict = {}


def addressed(kernel, sig):
    """``kernel`` (a ``jit`` dispatcher or a plain function) compiled for the numba
    signature ``sig`` (``return_type(*arg_types)``) as a C-callable function: once per
    signature and process, with the flags and the cache of
    :func:`fastrbf._jit._decorators.jit`, without reference counting.

    Examples
    --------
    >>> from numba import types
    >>> def scale(x, a):
    ...     for i in range(x.shape[0]):
    ...         x[i] *= a
    >>> k = addressed(scale, types.void(types.float64[::1], types.float64))
    >>> isinstance(k.address, int) and addressed(scale, types.void(types.float64[::1], types.float64)) is k
    True
    """
    func = getattr(kernel, "py_func", kernel)
    key = (func, sig)
    compiled = _addressed.get(key)
    if compiled is not None:
        return compiled
    with global_compiler_lock:  # (not a lock of its own: a fork waits for this one)
        compiled = _addressed.get(key)
        if compiled is None:
            compiled = _Addressed(func, sigutils.normalize_signature(sig), locals={},
                                  options=dict(fastmath=set(FASTMATH), error_model="numpy", _nrt=False))
            if cache_enabled():
                try:
                    compiled.enable_caching()
                except RuntimeError:  # "cannot cache function ...: no locator available"
                    pass
            compiled.compile()
            _addressed[key] = compiled
    return compiled


def signature_key(sig):
    """A key (a positive ``int64``) of a numba signature, the same in every process."""
    return zlib.crc32(str(sig).encode()) + 1


def table(*kernels):
    """The ``int64`` array that :func:`call` reads: for each compiled kernel (from
    :func:`addressed`), its address and the key of its signature.

    Examples
    --------
    >>> from numba import types
    >>> def add_one(x):
    ...     for i in range(x.shape[0]):
    ...         x[i] += 1.0
    >>> t = table(addressed(add_one, types.void(types.float64[::1])))
    >>> t.dtype, t.shape
    (dtype('int64'), (2,))
    """
    out = np.empty(2 * len(kernels), dtype=np.int64)
    for i, k in enumerate(kernels):
        out[2 * i] = k.address
        out[2 * i + 1] = signature_key(k._sig)
    return out


def check(tab, names=None):
    """Raise ``RuntimeError`` if :func:`call` refused an entry of ``tab`` (its arguments
    were not of the types its kernel was compiled for)."""
    bad = [i for i in range(tab.shape[0] // 2) if tab[2 * i + 1] == -1]
    if bad:
        which = ", ".join(names[i] if names else str(i) for i in bad)
        raise RuntimeError(f"fastrbf internal error: a compiled kernel ({which}) was called with arguments of "
                           "other types than it was compiled for; the call was skipped.")


def _call_typer(restype):
    def typer(typingctx, tab, i, args):
        ok = (isinstance(tab, types.Array) and tab.dtype == types.int64 and tab.ndim == 1
              and isinstance(i, types.Integer) and isinstance(args, types.BaseTuple))
        if not ok:
            return None
        argtys = tuple(args.types)
        key = signature_key(signature(restype, *argtys))

        def codegen(context, builder, sig, llargs):
            arr = context.make_array(tab)(context, builder, llargs[0])
            i2 = builder.mul(context.cast(builder, llargs[1], i, types.int64), ir.Constant(ir.IntType(64), 2))
            slot = cgutils.get_item_pointer(context, builder, tab, arr, [i2], wraparound=False)
            kslot = cgutils.get_item_pointer(context, builder, tab, arr, [builder.add(i2, ir.Constant(i2.type, 1))],
                                             wraparound=False)
            ret_ll = context.get_value_type(restype)
            fnty = ir.FunctionType(ret_ll, [context.get_value_type(t) for t in argtys])
            result = cgutils.alloca_once_value(builder, context.get_constant_null(restype))
            same = builder.icmp_signed("==", builder.load(kslot), ir.Constant(ir.IntType(64), key))
            with builder.if_else(same, likely=True) as (then, otherwise):
                with then:
                    fptr = builder.inttoptr(builder.load(slot), fnty.as_pointer())
                    vals = [builder.extract_value(llargs[2], k) for k in range(len(argtys))]
                    res = builder.call(fptr, vals)
                    if restype != types.none:
                        builder.store(res, result)
                with otherwise:
                    builder.store(ir.Constant(ir.IntType(64), -1), kslot)
            return builder.load(result)

        return signature(restype, tab, i, args), codegen

    typer.__name__ = typer.__qualname__ = f"call_{restype}"
    return typer


call = intrinsic(_call_typer(types.none))
call.__doc__ = """``call(tab, i, args)``: kernel ``i`` of the :func:`table` ``tab`` on the
tuple ``args`` (a kernel that returns nothing)."""
call_int = intrinsic(_call_typer(types.int64))
call_int.__doc__ = """``call_int(tab, i, args)``: as :func:`call`, for a kernel that returns an
``int64`` (0 when the call is refused)."""
