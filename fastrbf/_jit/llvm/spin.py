"""Atomic operations on ``int64`` array elements and a polite spin wait, for compiled
loops that several of fastrbf's worker threads run together
(:mod:`fastrbf._jit.cluster.bounded_fit`).

Every atomic is sequentially consistent (LLVM ``seq_cst``): the plain stores a thread
made before an atomic are seen by a thread that sees that atomic's value.  The wait
(:func:`relax`) issues the CPU's spin-wait hint (``pause`` on x86, ``yield`` on Arm)
and, after :data:`SPINS` rounds, gives the core away on every round (``sched_yield`` on
POSIX systems), so a waiting thread never holds a core another thread of the process
needs for long.
"""

import os

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._decorators import jit_inline

#: rounds of the spin-wait hint before :func:`relax` yields the core on every round
#: (about 20-60 us at 20-60 ns a ``pause``)
SPINS = 1024


def _machine():
    from llvmlite import binding

    return binding.get_process_triple().split("-")[0]


def _ptr(context, builder, sig, args):
    arr_t, _ = sig.args[0], sig.args[1]
    arr = context.make_array(arr_t)(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, arr_t, arr, [args[1]], wraparound=False)


def _check(arr, i):
    return isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1 and isinstance(i, types.Integer)


@intrinsic
def atomic_add(typingctx, arr, i, v):
    """``arr[i] += v`` atomically; returns the value before."""
    if not (_check(arr, i) and isinstance(v, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        val = context.cast(builder, args[2], sig.args[2], types.int64)
        return builder.atomic_rmw("add", _ptr(context, builder, sig, args), val, "seq_cst")

    return types.int64(arr, i, v), codegen


@intrinsic
def atomic_load(typingctx, arr, i):
    """``arr[i]``, read atomically."""
    if not _check(arr, i):
        return None

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_ptr(context, builder, sig, args), "seq_cst", 8)

    return types.int64(arr, i), codegen


@intrinsic
def atomic_store(typingctx, arr, i, v):
    """``arr[i] = v``, written atomically."""
    if not (_check(arr, i) and isinstance(v, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        val = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(val, _ptr(context, builder, sig, args), "seq_cst", 8)
        return context.get_dummy_value()

    return types.none(arr, i, v), codegen


@intrinsic
def atomic_cas(typingctx, arr, i, expected, new):
    """``arr[i] = new`` if it holds ``expected``, atomically; returns whether it did."""
    if not (_check(arr, i) and isinstance(expected, types.Integer) and isinstance(new, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        exp = context.cast(builder, args[2], sig.args[2], types.int64)
        val = context.cast(builder, args[3], sig.args[3], types.int64)
        pair = builder.cmpxchg(_ptr(context, builder, sig, args), exp, val, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)

    return types.boolean(arr, i, expected, new), codegen


@intrinsic
def _hint(typingctx):
    def codegen(context, builder, sig, args):
        machine = _machine()
        mod = builder.module
        if machine in ("x86_64", "i386", "i686", "amd64"):
            fn = cgutils.get_or_insert_function(mod, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(fn, [])
        elif machine in ("aarch64", "arm64"):
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(mod, ir.FunctionType(ir.VoidType(), [i32]), "llvm.aarch64.hint")
            builder.call(fn, [ir.Constant(i32, 1)])  # YIELD
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def _give_away(typingctx):
    def codegen(context, builder, sig, args):
        if os.name == "posix":
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
            builder.call(fn, [])
        return context.get_dummy_value()

    return types.none(), codegen


@jit_inline
def relax(rounds):
    # one round of a spin wait, ``rounds`` the rounds waited so far: the spin-wait hint,
    # and from SPINS rounds on the core given away
    _hint()
    if rounds >= SPINS:
        _give_away()
