"""Lane operations for kernels that work on ``LANES`` independent problems at once in
struct-of-arrays layout (``A[i, j, lane]``, lane innermost): each one ``<LANES x double>``
vector operation (loads, fused multiply-adds, stores) written as an ``@intrinsic``.

Why intrinsics: numba runs LLVM without its SLP vectoriser and fully unrolls a fixed
8-iteration loop before the loop vectoriser sees it, so ``for lane in range(8)`` compiles
to scalar code; a runtime lane count vectorises but pays alias checks per loop.  These
emit the vector code themselves.  Arguments are C-contiguous float64 arrays and flat
element offsets (lane 0 of a vector); dot products accumulate lane-wise in the order of
their terms (no re-association), so every lane's result is that of the scalar loop.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: problems per vector (8 doubles: one AVX-512 register)
LANES = 8

_VT = ir.VectorType(ir.DoubleType(), LANES)


def _vptr(context, builder, arr_t, arr, off):
    data = context.make_array(arr_t)(context, builder, arr).data
    return builder.bitcast(builder.gep(data, [off]), _VT.as_pointer())


def _vfma(builder, x, y, z):
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_VT, [_VT, _VT, _VT]),
                                        f"llvm.fma.v{LANES}f64")
    return builder.call(fn, [x, y, z])


def _vneg(builder, x):
    return builder.fsub(ir.Constant(_VT, [0.0] * LANES), x)


@intrinsic
def lane_fnma(typingctx, d, od, x, ox, y, oy):
    """d[od:od+8] -= x[ox:ox+8] * y[oy:oy+8] (fused)."""
    def codegen(context, builder, sig, args):
        pd = _vptr(context, builder, d, args[0], args[1])
        vx = builder.load(_vptr(context, builder, x, args[2], args[3]), align=8)
        vy = builder.load(_vptr(context, builder, y, args[4], args[5]), align=8)
        builder.store(_vfma(builder, _vneg(builder, vx), vy, builder.load(pd, align=8)), pd, align=8)
        return context.get_dummy_value()

    return types.void(d, od, x, ox, y, oy), codegen


@intrinsic
def lane_dot_sub(typingctx, d, od, x, ox, sx, y, oy, sy, n):
    """d[od:od+8] -= sum_{p < n} x[ox + p sx:+8] * y[oy + p sy:+8], lane-wise, one fused
    multiply-add per p in order (four accumulators were faster but cost more cold compile,
    see docs/performance.md, 'Compile time')."""
    def codegen(context, builder, sig, args):
        ad, aod, ax, aox, asx, ay, aoy, asy, an = args
        zero = ir.Constant(_VT, [0.0] * LANES)
        acc = cgutils.alloca_once_value(builder, zero)
        with cgutils.for_range(builder, an) as loop:
            p = loop.index
            vx = builder.load(_vptr(context, builder, x, ax, builder.add(aox, builder.mul(p, asx))), align=8)
            vy = builder.load(_vptr(context, builder, y, ay, builder.add(aoy, builder.mul(p, asy))), align=8)
            builder.store(_vfma(builder, vx, vy, builder.load(acc)), acc)
        tot = builder.load(acc)
        pd = _vptr(context, builder, d, ad, aod)
        builder.store(builder.fsub(builder.load(pd, align=8), tot), pd, align=8)
        return context.get_dummy_value()

    return types.void(d, od, x, ox, sx, y, oy, sy, n), codegen


@intrinsic
def lane_sqdist(typingctx, d, od, x, ox, y, oy, n):
    """d[od:od+8] = sum_{j < n} (x[ox + j 8:+8] - y[oy + j 8:+8])**2, lane-wise, in order."""
    def codegen(context, builder, sig, args):
        ad, aod, ax, aox, ay, aoy, an = args
        i64 = ir.IntType(64)
        acc = cgutils.alloca_once_value(builder, ir.Constant(_VT, [0.0] * LANES))
        with cgutils.for_range(builder, an) as loop:
            off = builder.mul(loop.index, ir.Constant(i64, LANES))
            vx = builder.load(_vptr(context, builder, x, ax, builder.add(aox, off)), align=8)
            vy = builder.load(_vptr(context, builder, y, ay, builder.add(aoy, off)), align=8)
            e = builder.fsub(vx, vy)
            builder.store(_vfma(builder, e, e, builder.load(acc)), acc)
        builder.store(builder.load(acc), _vptr(context, builder, d, ad, aod), align=8)
        return context.get_dummy_value()

    return types.void(d, od, x, ox, y, oy, n), codegen


@intrinsic
def lane_mul(typingctx, d, od, x, ox):
    """d[od:od+8] *= x[ox:ox+8]."""
    def codegen(context, builder, sig, args):
        pd = _vptr(context, builder, d, args[0], args[1])
        vx = builder.load(_vptr(context, builder, x, args[2], args[3]), align=8)
        builder.store(builder.fmul(builder.load(pd, align=8), vx), pd, align=8)
        return context.get_dummy_value()

    return types.void(d, od, x, ox), codegen


@intrinsic
def lane_dot4_sub(typingctx, d, od, sd, x, ox, sxr, sx, y, oy, sy, n):
    """d[od + r sd:+8] -= sum_{p < n} x[ox + r sxr + p sx:+8] * y[oy + p sy:+8] for the four
    rows r < 4, lane-wise, one fused multiply-add per p in order: four rows against one
    (five loads per four multiply-adds, four independent chains instead of one)."""
    def codegen(context, builder, sig, args):
        ad, aod, asd, ax, aox, asxr, asx, ay, aoy, asy, an = args
        i64 = ir.IntType(64)
        zero = ir.Constant(_VT, [0.0] * LANES)
        accs = [cgutils.alloca_once_value(builder, zero) for _ in range(4)]
        with cgutils.for_range(builder, an) as loop:
            p = loop.index
            vy = builder.load(_vptr(context, builder, y, ay, builder.add(aoy, builder.mul(p, asy))), align=8)
            base = builder.add(aox, builder.mul(p, asx))
            for r, acc in enumerate(accs):
                off = builder.add(base, builder.mul(ir.Constant(i64, r), asxr))
                vx = builder.load(_vptr(context, builder, x, ax, off), align=8)
                builder.store(_vfma(builder, vx, vy, builder.load(acc)), acc)
        for r, acc in enumerate(accs):
            pd = _vptr(context, builder, d, ad, builder.add(aod, builder.mul(ir.Constant(i64, r), asd)))
            builder.store(builder.fsub(builder.load(pd, align=8), builder.load(acc)), pd, align=8)
        return context.get_dummy_value()

    return types.void(d, od, sd, x, ox, sxr, sx, y, oy, sy, n), codegen


@intrinsic
def lane_dot4x2_sub(typingctx, d, od, od2, sd, x, ox, sxr, sx, y, oy, oy2, sy, n):
    """As :func:`lane_dot4_sub` for two columns at once: d[od + r sd:+8] -= the sum against
    y[oy + p sy:+8] and d[od2 + r sd:+8] -= the sum against y[oy2 + p sy:+8] (six loads per
    eight multiply-adds)."""
    def codegen(context, builder, sig, args):
        ad, aod, aod2, asd, ax, aox, asxr, asx, ay, aoy, aoy2, asy, an = args
        i64 = ir.IntType(64)
        zero = ir.Constant(_VT, [0.0] * LANES)
        accs = [[cgutils.alloca_once_value(builder, zero) for _ in range(4)] for _ in range(2)]
        with cgutils.for_range(builder, an) as loop:
            p = loop.index
            py = builder.mul(p, asy)
            vys = [builder.load(_vptr(context, builder, y, ay, builder.add(o, py)), align=8) for o in (aoy, aoy2)]
            base = builder.add(aox, builder.mul(p, asx))
            for r in range(4):
                off = builder.add(base, builder.mul(ir.Constant(i64, r), asxr))
                vx = builder.load(_vptr(context, builder, x, ax, off), align=8)
                for vy, acc in zip(vys, accs, strict=True):
                    builder.store(_vfma(builder, vx, vy, builder.load(acc[r])), acc[r])
        for o, acc in zip((aod, aod2), accs, strict=True):
            for r in range(4):
                pd = _vptr(context, builder, d, ad, builder.add(o, builder.mul(ir.Constant(i64, r), asd)))
                builder.store(builder.fsub(builder.load(pd, align=8), builder.load(acc[r])), pd, align=8)
        return context.get_dummy_value()

    return types.void(d, od, od2, sd, x, ox, sxr, sx, y, oy, oy2, sy, n), codegen
