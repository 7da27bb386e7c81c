"""Register-blocked micro-kernels: an ``MR x NB`` block of squared distances (or dot
products) held in vector registers, emitted as LLVM vector IR.

:func:`sq_block` / :func:`dot_block` compute rows ``i:i+rows`` of ``X`` against the
columns ``j:j+cols`` of ``Yt`` (``Y`` transposed; ``rows <= MR``, ``cols <= NB``) and store
the block at ``out[oi:oi+rows, oj:oj+cols]``.  The block is ``MR`` rows by ``NR`` vectors
of ``W`` columns: per feature ``k`` the ``NR`` vectors of ``Yt[k, j:j+NB]`` are loaded once
and serve ``MR`` rows (one broadcast of ``X[i+r, k]`` each), and the ``MR * NR``
accumulators stay in registers for the whole feature loop.  The rows come packed
(:func:`~.tiles.fill_block` copies each row block feature by feature into a ``(d, MR)``
buffer, the rows past the edge repeating the last one), so the ``MR`` values of a
feature sit at fixed offsets from one pointer.

Why intrinsics: numba runs LLVM without its SLP vectoriser, so a register-blocked loop
written in numba (several rows, several accumulators) stays scalar; here the vector
operations are written out (the template of :mod:`.local`).

Bits: per output entry the operations are exactly those of :func:`~.tiles.chunk_row`:
features in order, ``t = x - y``, ``s = s + t * t`` (``s = s + x * y`` for dot products)
from ``s = 0``, as ``fsub`` / ``fmul`` / ``fadd`` with fastrbf's fastmath flags.  The
kernel computes ``t = y - x``: IEEE subtraction is exactly antisymmetric, so that is
``-(x - y)`` bit for bit and its square is the same (it lets the broadcast of ``x`` be
the instruction's memory operand)
(``contract``, ``nsz``, ``arcp``; numba puts the calling function's flags on every
floating-point operation anyway), so LLVM contracts them into the same fused multiply-add
as in ``chunk_row`` on a host with FMA, and leaves both unfused on one without.  The
values are bitwise those of ``chunk_row`` (tests/test_micro.py: every tail of ``d``,
edges, offsets, the scalar and 256-bit templates), and so those of ``sqdist``, the
kd-tree's leaves, the Lloyd assignment and certification, and the brute-force ``knn``.

Stores: before its feature loop a full block asks for the output lines of the next block
(same rows, the next ``NB`` columns) with write-intent prefetches (``llvm.prefetch``,
``prefetchw`` on x86): the next block's stores then find their lines owned instead of
each waiting for its line from memory (see docs/performance.md, 'Micro-kernels').

Edges: a block with fewer than ``MR`` rows computes the missing ones from copies of the
last valid row (clamped indices, so every load is inside the arrays); one with fewer
than ``NB`` columns loads and stores its vectors under a mask of the valid columns
(``llvm.masked.load`` / ``llvm.masked.store``: masked moves on AVX-512 and AVX2, lane by
lane on the scalar template); only the valid entries are stored.  Callers need no second
kernel for the edges.

:func:`sq_argmin_block` (the float32 Lloyd assignment) runs a block of distances with
the arithmetic of :func:`sq_block` over every centre and keeps, per column, the smallest
and second smallest distance and the argmin in registers; only those are stored.  It
reads whole blocks only (its caller pads the last columns): no edge template.  Its
block is 2 centres by 6 vectors on AVX-512 (the running state is spilled around the
feature loop, never inside it), 2 by 3 otherwise: the fastest shapes measured for each
width (see docs/performance.md, 'Micro-kernels').

Vector width (:func:`vector_bits`): read when a kernel is compiled from the features numba
compiles for (``NUMBA_CPU_FEATURES`` when set, else
``llvmlite.binding.get_host_cpu_features()``, as numba's own code generator does):
AVX-512 -> 512-bit vectors, AVX/AVX2 -> 256-bit, otherwise a scalar template (``W = 1``,
``<1 x T>`` vectors).

Block shape (:func:`block_shape`): with 512-bit vectors ``MR = 12`` rows by ``NR = 1``
vector; otherwise ``MR = 4`` by ``NR = 3`` (12 accumulators, 3 vectors of ``Yt``, one
broadcast: exactly the 16 registers of AVX2).  With one vector per row, each broadcast
of ``x`` is used once and LLVM folds it into the subtraction (``vsubpd m64{1to8}``, a
load with no shuffle), and with the rows packed the twelve loads are offsets of one
pointer.  Full and edge blocks keep separate bodies (one masked body for both was
slower).  At d = 16 the kernel is near the store rate of its output, so larger blocks
gain little.  Why: 12 x 1 beat the former 4 x 3 on AVX-512, and 4 x 3 was among the
fastest and smallest 256-bit and 512-bit shapes (see docs/performance.md, 'Micro-kernels').
"""

import functools

from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic

ARGMIN_MR = 2  # centres per group of sq_argmin_block

_FLAGS = ("contract", "nsz", "arcp")  # numba's fastmath set of fastrbf (see _decorators.FASTMATH)


@functools.cache
def _features():
    """The target features numba compiles for, as a set of names (``avx2``, ...)."""
    feats = config.CPU_FEATURES  # as numba's codegen: the configured features, else the host's
    if feats is None:
        try:
            from llvmlite import binding

            feats = binding.get_host_cpu_features().flatten()
        except Exception:  # a platform where LLVM cannot tell: the scalar template
            feats = ""
    return frozenset(f[1:] for f in feats.split(",") if f.startswith("+"))


def vector_bits():
    """The vector width the templates use on this CPU, in bits (0: scalar)."""
    feats = _features()
    if "avx512f" in feats:
        return 512
    if "avx" in feats:
        return 256
    return 0


def lanes(dtype):
    """Elements per vector for a numba float dtype (1: the scalar template)."""
    bits = vector_bits()
    return max(1, bits // dtype.bitwidth) if bits else 1


def block_shape():
    """``(MR, NR)``: rows of X and vectors of columns per block of :func:`sq_block` /
    :func:`dot_block` (see the module docstring): 12 x 1 with 512-bit vectors, 4 x 3
    otherwise."""
    return (12, 1) if vector_bits() == 512 else (4, 3)


def _block_cols(dtype):
    return block_shape()[1] * lanes(dtype)


def _check(X, Yt, out):
    ok = all(isinstance(a, types.Array) and a.ndim == 2 and a.layout == "C" for a in (X, Yt, out))
    return ok and X.dtype in (types.float32, types.float64) and X.dtype == Yt.dtype == out.dtype


def _rows(context, builder, arr_t, arr):
    a = context.make_array(arr_t)(context, builder, arr)
    return a.data, cgutils.unpack_tuple(builder, a.shape, 2)[1]


def _emit_block(context, builder, sig, args, dot):
    Xp_t = sig.args[0]
    aXp, arows, aY, aj, acols, aO, aoi, aoj = args
    MR, NR = block_shape()
    T = context.get_value_type(Xp_t.dtype)
    W = lanes(Xp_t.dtype)
    NB = NR * W
    align = Xp_t.dtype.bitwidth // 8
    VT = ir.VectorType(T, W)  # <1 x T> for the scalar template
    i64 = ir.IntType(64)
    i32 = ir.IntType(32)
    xdata, _ = _rows(context, builder, Xp_t, aXp)
    d = cgutils.unpack_tuple(builder, context.make_array(Xp_t)(context, builder, aXp).shape, 2)[0]
    ydata, m = _rows(context, builder, sig.args[2], aY)
    odata, mo = _rows(context, builder, sig.args[5], aO)
    zero = ir.Constant(VT, [0.0] * W)
    accs = [[cgutils.alloca_once(builder, VT) for _ in range(NR)] for _ in range(MR)]
    IVT = ir.VectorType(i64, W)
    MVT = ir.VectorType(ir.IntType(1), W)
    suffix = f"v{W}{'f64' if align == 8 else 'f32'}.p0"
    masked_load = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(VT, [VT.as_pointer(), i32, MVT, VT]), "llvm.masked.load." + suffix)
    masked_store = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [VT, VT.as_pointer(), i32, MVT]), "llvm.masked.store." + suffix)

    def c64(v):
        return ir.Constant(i64, v)

    def vptr(data, idx):
        return builder.bitcast(builder.gep(data, [idx]), VT.as_pointer())

    def splat(x):
        v = builder.insert_element(ir.Constant(VT, ir.Undefined), x, ir.Constant(i32, 0))
        return builder.shuffle_vector(v, ir.Constant(VT, ir.Undefined), ir.Constant(ir.VectorType(i32, W), [0] * W))

    def prefetch_next():
        # ask for the output lines of the next block (same rows, NB columns on) for
        # writing, while this block's features run: its stores then find their lines
        # owned instead of waiting for them (a prefetch never faults, so the lines past
        # the end of a row or of the array are harmless)
        pf = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32]),
            "llvm.prefetch.p0i8")
        line = 64 // align
        # the lines of the next block's last element and every line back from it (the
        # block need not start a line: its first line may be this block's last)
        offsets = range(2 * NB - 1, NB - 1, -line)
        for r in range(MR):
            obase = builder.add(builder.mul(builder.add(aoi, c64(r)), mo), aoj)
            for q in offsets:
                ptr = builder.bitcast(builder.gep(odata, [builder.add(obase, c64(q))]), ir.IntType(8).as_pointer())
                builder.call(pf, [ptr, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])

    def body(part_cols):
        # every block computes MR rows (the packed block repeats its last valid row) and
        # stores the first ``rows``; part_cols: cols < NB, the columns past the edge are
        # masked off
        for r in range(MR):
            for n in range(NR):
                builder.store(zero, accs[r][n])
        if part_cols:
            cols = builder.insert_element(ir.Constant(IVT, ir.Undefined), acols, ir.Constant(i32, 0))
            cols = builder.shuffle_vector(cols, ir.Constant(IVT, ir.Undefined), ir.Constant(ir.VectorType(i32, W), [0] * W))
            masks = [builder.icmp_signed("<", ir.Constant(IVT, [n * W + lane for lane in range(W)]), cols)
                     for n in range(NR)]
        else:
            prefetch_next()
        with cgutils.for_range(builder, d) as loop:
            k = loop.index
            ybase = builder.add(builder.mul(k, m), aj)
            xk = builder.gep(xdata, [builder.mul(k, c64(MR))])  # the MR values of feature k, adjacent
            yv = []
            for n in range(NR):
                if not part_cols:
                    yv.append(builder.load(vptr(ydata, builder.add(ybase, c64(n * W))), align=align))
                    continue
                yv.append(builder.call(masked_load, [vptr(ydata, builder.add(ybase, c64(n * W))),
                                                     ir.Constant(i32, align), masks[n], zero]))
            for r in range(MR):
                xb = splat(builder.load(builder.gep(xk, [c64(r)])))
                for n in range(NR):
                    if dot:
                        p = builder.fmul(xb, yv[n], flags=_FLAGS)
                    else:  # y - x: exactly -(x - y), so the same square (see the module docstring)
                        t = builder.fsub(yv[n], xb, flags=_FLAGS)
                        p = builder.fmul(t, t, flags=_FLAGS)
                    builder.store(builder.fadd(builder.load(accs[r][n]), p, flags=_FLAGS), accs[r][n])
        for r in range(MR):
            obase = builder.add(builder.mul(builder.add(aoi, c64(r)), mo), aoj)
            with builder.if_then(builder.icmp_signed("<", c64(r), arows), likely=True):
                for n in range(NR):
                    v = builder.load(accs[r][n])
                    if part_cols:
                        builder.call(masked_store, [v, vptr(odata, builder.add(obase, c64(n * W))),
                                                    ir.Constant(i32, align), masks[n]])
                    else:
                        builder.store(v, vptr(odata, builder.add(obase, c64(n * W))), align=align)

    with builder.if_else(builder.icmp_signed("==", acols, c64(NB)), likely=True) as (then, otherwise):
        with then:
            body(False)
        with otherwise:
            body(True)
    return context.get_dummy_value()


def _block_intrinsic(dot):
    def typer(typingctx, Xp, rows, Yt, j, cols, out, oi, oj):
        if not _check(Xp, Yt, out):
            return None
        i64 = types.int64
        return types.void(Xp, i64, Yt, i64, i64, out, i64, i64), \
            lambda context, builder, sig, args: _emit_block(context, builder, sig, args, dot)

    typer.__name__ = typer.__qualname__ = "dot_block" if dot else "sq_block"
    return typer


sq_block = intrinsic(_block_intrinsic(False))
sq_block.__doc__ = """out[oi + r, oj + c] = sum_k (Xp[k, r] - Yt[k, j + c])**2 for r < rows <= MR,
c < cols <= NB (features in order, the arithmetic of chunk_row).  ``Xp`` (d, MR) is the
row block packed by ``tiles.fill_block`` (feature by feature; rows past ``rows`` repeat
the last one).  A full block (MR x NB) is all vector loads and stores, a partial one
(an edge) loads and stores its columns under a mask.  The block must lie inside the
arrays (C-contiguous, one float dtype); prior validation is assumed."""

dot_block = intrinsic(_block_intrinsic(True))
dot_block.__doc__ = """As :func:`sq_block` with ``Xp[k, r] * Yt[k, j + c]`` summed."""


def _constant(name, value, doc):
    """An intrinsic ``f(a)`` that is the compile-time int64 ``value(a.dtype)`` for an array ``a``."""

    def typer(typingctx, a):
        if not isinstance(a, types.Array):
            return None
        v = value(a.dtype)

        def codegen(context, builder, sig, args):
            return ir.Constant(ir.IntType(64), v)

        return types.int64(a), codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


block_cols = _constant("block_cols", _block_cols, """NB, the columns of a block for the dtype of the array ``a`` (a compile-time
constant).""")
block_rows = _constant("block_rows", lambda dtype: block_shape()[0],
                       """MR, the rows of a block (a compile-time constant; ``a`` is any array).""")


def argmin_nr():
    """Vectors of columns per block of :func:`sq_argmin_block`: 6 with 512-bit vectors, 3
    otherwise (the fastest measured; see the module docstring)."""
    return 6 if vector_bits() == 512 else 3


def _emit_argmin(context, builder, sig, args):
    """The body of :func:`sq_argmin_block` (see its docstring)."""
    mr, nr = ARGMIN_MR, argmin_nr()
    C_t, Xt_t = sig.args[0], sig.args[1]
    aC, aXt, aj, abest, asecond, alab = args
    T = context.get_value_type(C_t.dtype)
    W = lanes(C_t.dtype)
    align = C_t.dtype.bitwidth // 8
    VT = ir.VectorType(T, W)
    i64 = ir.IntType(64)
    i32 = ir.IntType(32)
    IT = ir.VectorType(i32, W)
    cdata, d = _rows(context, builder, C_t, aC)
    K = cgutils.unpack_tuple(builder, context.make_array(C_t)(context, builder, aC).shape, 2)[0]
    ydata, m = _rows(context, builder, Xt_t, aXt)

    def c64(v):
        return ir.Constant(i64, v)

    def vptr(data, idx, vt=VT):
        return builder.bitcast(builder.gep(data, [idx]), vt.as_pointer())

    def splat(x, vt=VT):
        v = builder.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(i32, 0))
        return builder.shuffle_vector(v, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(i32, W), [0] * W))

    zero = ir.Constant(VT, [0.0] * W)
    inf = ir.Constant(VT, [float("inf")] * W)
    accs = [[cgutils.alloca_once(builder, VT) for _ in range(nr)] for _ in range(mr)]
    best = [cgutils.alloca_once_value(builder, inf) for _ in range(nr)]
    second = [cgutils.alloca_once_value(builder, inf) for _ in range(nr)]
    lab = [cgutils.alloca_once_value(builder, ir.Constant(IT, [0] * W)) for _ in range(nr)]
    ngroups = builder.udiv(builder.add(K, c64(mr - 1)), c64(mr))
    last_row = builder.sub(K, c64(1))
    with cgutils.for_range(builder, ngroups) as grp:
        g0 = builder.mul(grp.index, c64(mr))
        for r in range(mr):
            for n in range(nr):
                builder.store(zero, accs[r][n])
        crow = []
        for r in range(mr):
            row = builder.add(g0, c64(r))
            row = builder.select(builder.icmp_signed("<", row, K), row, last_row)  # the last group: clamped
            crow.append(builder.mul(row, d))
        with cgutils.for_range(builder, d) as loop:
            k = loop.index
            ybase = builder.add(builder.mul(k, m), aj)
            yv = [builder.load(vptr(ydata, builder.add(ybase, c64(n * W))), align=align) for n in range(nr)]
            for r in range(mr):
                cb = splat(builder.load(builder.gep(cdata, [builder.add(crow[r], k)])))
                for n in range(nr):
                    t = builder.fsub(cb, yv[n], flags=_FLAGS)
                    p = builder.fmul(t, t, flags=_FLAGS)
                    builder.store(builder.fadd(builder.load(accs[r][n]), p, flags=_FLAGS), accs[r][n])
        for r in range(mr):
            row = builder.add(g0, c64(r))
            with builder.if_then(builder.icmp_signed("<", row, K), likely=True):
                idx = splat(builder.trunc(row, i32), IT)
                for n in range(nr):
                    D = builder.load(accs[r][n])
                    b = builder.load(best[n])
                    lt = builder.fcmp_ordered("<", D, b)
                    hi = builder.select(lt, b, D)  # max(b, D)
                    s = builder.load(second[n])
                    builder.store(builder.select(builder.fcmp_ordered("<", hi, s), hi, s), second[n])
                    builder.store(builder.select(lt, D, b), best[n])
                    builder.store(builder.select(lt, idx, builder.load(lab[n])), lab[n])
    bdata = context.make_array(sig.args[3])(context, builder, abest).data
    sdata = context.make_array(sig.args[4])(context, builder, asecond).data
    ldata = context.make_array(sig.args[5])(context, builder, alab).data
    for n in range(nr):
        builder.store(builder.load(best[n]), vptr(bdata, c64(n * W)), align=align)
        builder.store(builder.load(second[n]), vptr(sdata, c64(n * W)), align=align)
        builder.store(builder.load(lab[n]), vptr(ldata, c64(n * W), IT), align=4)
    return context.get_dummy_value()


@intrinsic
def sq_argmin_block(typingctx, C, Xt, j, best, second, lab):
    """For the ``NB`` (:func:`argmin_cols`) columns ``j:j+NB`` of ``Xt`` (points as
    columns; the block must lie inside ``Xt``): ``best`` = the smallest squared distance
    to the rows of ``C`` (all ``K`` centres, in index order, each by the arithmetic of
    :func:`sq_block`), ``lab`` its row (int32; ties: the lowest), ``second`` the second
    smallest of the ``K`` distances (``inf`` for ``K = 1``; equal to ``best`` on a tie),
    stored as ``best[:NB]``, ``second[:NB]``, ``lab[:NB]``.  The distances never leave
    the registers: per group of ``ARGMIN_MR`` centres an ``ARGMIN_MR x NB`` block, then
    a running minimum and second minimum of its rows, in centre order."""
    ok = all(isinstance(a, types.Array) and a.layout == "C" for a in (C, Xt, best, second, lab))
    if not ok or C.ndim != 2 or Xt.ndim != 2 or best.ndim != 1 or second.ndim != 1 or lab.ndim != 1:
        return None
    if C.dtype not in (types.float32, types.float64) or not C.dtype == Xt.dtype == best.dtype == second.dtype:
        return None
    if lab.dtype != types.int32:
        return None
    return types.void(C, Xt, types.int64, best, second, lab), _emit_argmin


def argmin_width(dtype):
    """The columns of a block of :func:`sq_argmin_block` for the numba dtype ``dtype``
    (in Python; :func:`argmin_cols` in compiled code)."""
    return argmin_nr() * lanes(dtype)


argmin_cols = _constant("argmin_cols", argmin_width, """The columns of a block of :func:`sq_argmin_block` for the dtype of
``a``.""")


def _emit_sq_row(context, builder, sig, args):
    """The body of :func:`sq_row` (see its docstring)."""
    x_t, c_t = sig.args[0], sig.args[2]
    ax, axoff, ac, acoff, an = args
    W = lanes(types.float64)
    VD = ir.VectorType(ir.DoubleType(), W)
    acc = cgutils.alloca_once_value(builder, ir.Constant(VD, [0.0] * W))

    def operand(arr_t, arr, off, k, mask):  # as float64, the lanes off the mask 0
        v = _row_vector(context, builder, arr_t, arr, builder.add(off, k), W, mask)
        return v if arr_t.dtype == types.float64 else builder.fpext(v, VD)

    def step(k, mask):
        t = builder.fsub(operand(x_t, ax, axoff, k, mask), operand(c_t, ac, acoff, k, mask), flags=_FLAGS)
        builder.store(builder.fadd(builder.load(acc), builder.fmul(t, t, flags=_FLAGS), flags=_FLAGS), acc)

    _by_row_vectors(builder, an, W, step)
    v = builder.load(acc)
    parts = [builder.extract_element(v, ir.Constant(ir.IntType(32), q)) for q in range(W)]
    while len(parts) > 1:  # a pairwise sum of the lanes
        parts = [builder.fadd(parts[q], parts[q + 1], flags=_FLAGS) for q in range(0, len(parts), 2)]
    return parts[0]


@intrinsic
def sq_row(typingctx, x, xoff, c, coff, n):
    """``sum_k (x.flat[xoff + k] - c.flat[coff + k])**2`` for ``k < n`` in float64, summed
    in any order (lane-wise partial sums, then pairwise): a distance used only for a
    bound, whose error bound does not depend on the order.  ``x`` and ``c``
    C-contiguous, float32 or float64 (converted exactly); the elements must lie inside
    the arrays.  Why: numba's loop vectoriser takes 32 or more float64 elements per
    iteration, so a row of 16 ran as a scalar chain of fused multiply-adds."""
    ok = all(isinstance(t, types.Array) and t.layout == "C" and t.dtype in (types.float32, types.float64)
             for t in (x, c))
    if not ok or not all(isinstance(t, types.Integer) for t in (xoff, coff, n)):
        return None
    return types.float64(x, types.int64, c, types.int64, types.int64), _emit_sq_row


def _splat(builder, x, VT):
    """A vector of type ``VT`` with every lane ``x``."""
    i32 = ir.IntType(32)
    v = builder.insert_element(ir.Constant(VT, ir.Undefined), x, ir.Constant(i32, 0))
    return builder.shuffle_vector(v, ir.Constant(VT, ir.Undefined), ir.Constant(ir.VectorType(i32, VT.count), [0] * VT.count))


def _row_vector(context, builder, arr_t, arr, off, W, mask=None, value=None):
    """The ``W`` elements of ``arr`` (C-contiguous) from flat offset ``off``: loaded (the
    lanes off ``mask`` read as 0), or ``value`` stored (the lanes on ``mask`` only)."""
    T = context.get_value_type(arr_t.dtype)
    VT = ir.VectorType(T, W)
    size = arr_t.dtype.bitwidth // 8
    i32 = ir.IntType(32)
    MVT = ir.VectorType(ir.IntType(1), W)
    suffix = f"v{W}{'f64' if size == 8 else 'f32'}.p0"
    p = builder.bitcast(builder.gep(context.make_array(arr_t)(context, builder, arr).data, [off]), VT.as_pointer())
    if value is None and mask is None:
        return builder.load(p, align=size)
    if value is None:
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(VT, [VT.as_pointer(), i32, MVT, VT]),
                                            "llvm.masked.load." + suffix)
        return builder.call(fn, [p, ir.Constant(i32, size), mask, ir.Constant(VT, [0.0] * W)])
    if mask is None:
        return builder.store(value, p, align=size)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [VT, VT.as_pointer(), i32, MVT]),
                                        "llvm.masked.store." + suffix)
    return builder.call(fn, [value, p, ir.Constant(i32, size), mask])


def _by_row_vectors(builder, n, W, step):
    """``step(k, mask)`` for ``k`` = 0, W, 2 W, ... over the whole vectors of ``n``
    elements (``mask`` None), then once for the tail under the mask of its lanes (the
    scalar template, ``W = 1``, has no tail)."""
    i64 = ir.IntType(64)
    nfull = builder.udiv(n, ir.Constant(i64, W))
    with cgutils.for_range(builder, nfull) as loop:
        step(builder.mul(loop.index, ir.Constant(i64, W)), None)
    if W == 1:
        return
    done = builder.mul(nfull, ir.Constant(i64, W))
    rest = builder.sub(n, done)
    with builder.if_then(builder.icmp_signed(">", rest, ir.Constant(i64, 0)), likely=False):
        IVT = ir.VectorType(i64, W)
        step(done, builder.icmp_signed("<", ir.Constant(IVT, list(range(W))), _splat(builder, rest, IVT)))


def _emit_axpy(context, builder, sig, args):
    """The body of :func:`axpy_row` (see its docstring)."""
    dst_t, src_t = sig.args[0], sig.args[2]
    adst, adoff, asrc, asoff, aa, an = args
    W = lanes(types.float64)
    VD = ir.VectorType(ir.DoubleType(), W)
    a = _splat(builder, aa, VD)

    def step(k, mask):  # y + a * x as numba writes ``y += a * x``: LLVM contracts it as it does there
        y = _row_vector(context, builder, dst_t, adst, builder.add(adoff, k), W, mask)
        x = _row_vector(context, builder, src_t, asrc, builder.add(asoff, k), W, mask)
        if src_t.dtype != types.float64:
            x = builder.fpext(x, VD)
        v = builder.fadd(y, builder.fmul(a, x, flags=_FLAGS), flags=_FLAGS)
        _row_vector(context, builder, dst_t, adst, builder.add(adoff, k), W, mask, v)

    _by_row_vectors(builder, an, W, step)
    return context.get_dummy_value()


@intrinsic
def axpy_row(typingctx, dst, doff, src, soff, a, n):
    """``dst.flat[doff + k] += a * src.flat[soff + k]`` for ``k < n`` (float64 ``dst``,
    float32 or float64 ``src``, both C-contiguous; ``a`` float64): each element as numba
    compiles ``y += a * x`` (the same bits: one fused multiply-add where the host has FMA),
    by whole vectors and one masked vector for the tail.  The elements must lie inside
    the arrays.  Why: numba's loop vectoriser takes 32 or more float64 elements per
    iteration (four vectors), so a row of 16 ran its scalar tail; the Lloyd update adds
    one row of ``X`` into a row of cluster sums per point (float64, d = 16, one thread,
    in cache: about 18 cycles per row by the loop, see :mod:`.lloyd`)."""
    ok = all(isinstance(t, types.Array) and t.layout == "C" for t in (dst, src))
    if not ok or dst.dtype != types.float64 or src.dtype not in (types.float32, types.float64):
        return None
    if not all(isinstance(t, types.Integer) for t in (doff, soff, n)) or not isinstance(a, types.Float):
        return None
    return types.void(dst, types.int64, src, types.int64, types.float64, types.int64), _emit_axpy
