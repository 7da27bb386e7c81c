"""The roofline of the benchmark: this machine's floors, measured once at the start of a
run, and how far each row is from them.

:func:`measure_floors` times, on the threads the run uses (about 2-3 s in all):

- DGEMM and SGEMM through NumPy's BLAS (``A @ B``, square, the best of a few calls):
  the peak GFLOP/s of a compute-bound row, with the BLAS library, its version and its
  kernel (core type) as ``threadpoolctl`` names them;
- memory read and write bandwidth (GB/s): a sum and a fill of a 256 MiB array (less
  when memory is short), split into one block per thread;
- the vectorised-exp rate (Gelem/s) of ``np.exp`` on float64 and float32 (one block per
  thread: the ufunc releases the GIL), and of fastrbf's own ``fexp`` through the public
  :func:`fastrbf.kernels.gram_matvec` with ``d = 1`` (per entry: one exp and a handful of
  flops, no memory traffic; its first call compiles untimed, cached on disk afterwards).

Decisions:

- **A workload declares its essential work** (:class:`Cost`): flops, bytes read and
  written and exps that any implementation of the task must do (the GEMM form of the
  distances, half the exps of a symmetric Gram matrix, the output written once); the
  same cost for every contender of the workload, so the fraction says how close each
  gets to what the machine allows for the *task*, not for its own algorithm.
- **The binding floor** is the largest of the three lower bounds on the time: flops
  over the GEMM peak of the workload's dtype, bytes read over the read bandwidth plus
  bytes written over the write bandwidth, and exps over the exp rate (the faster of
  ``np.exp`` and ``fexp`` for the dtype: the fastest exp known to run here).  The
  *floor fraction* is that bound over the row's median time (1 = at the floor); the
  *achieved rate* is the row's rate in the binding floor's unit (GFLOP/s, GB/s or
  Gexp/s).
- Floors are the best of a few short calls, so they are the machine's ceiling at the
  moment of the run (other processes on a shared machine lower them and the rows
  alike).  They are measured once per run, not per row.
"""

import os
import textwrap
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

#: what each binding floor is called in the table, and the unit of its achieved rate
BOUNDS = {"flop": "GFLOP/s", "mem": "GB/s", "exp": "Gexp/s"}


@dataclass(frozen=True)
class Cost:
    """The essential work of one call of a workload: what any implementation must do.

    ``flops`` (floating-point operations, the GEMM form where there is one),
    ``bytes_read`` and ``bytes_written`` (the inputs read and the output written once),
    ``exps`` (exponentials evaluated).
    """

    flops: float = 0.0
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    exps: float = 0.0


#: before each timed call, wait (at most SETTLE_MAX_S) until this process's other threads
#: rest: the helper threads of the contender before (OpenBLAS's spin for about 0.1 s after
#: a call; OpenMP's and TBB's for less) would otherwise take cores from the next one.
#: Where ``/proc/self/task`` lists the threads, "rest" is: none of them running or
#: runnable in two looks SETTLE_STEP_S apart; elsewhere, using less than SETTLE_IDLE of a
#: core over a step of SETTLE_CPU_STEP_S (a step of at least one scheduler tick: the CPU
#: time of a thread that runs without a system call is counted at ticks, every 4 ms at
#: 250 Hz, 10 ms at 100 Hz)
SETTLE_STEP_S, SETTLE_CPU_STEP_S, SETTLE_MAX_S, SETTLE_IDLE = 0.001, 0.01, 0.25, 0.1


def _running_threads() -> int | None:
    """How many of this process's other threads are running or runnable (state ``R`` in
    ``/proc/self/task/*/stat``), or None where that cannot be read."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    me = threading.get_native_id()
    n = 0
    for tid in tids:
        if tid == str(me):
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        end = stat.rfind(b")")  # the name in parentheses may hold spaces
        n += stat[end + 2:end + 3] == b"R"
    return n


def settle(max_s: float = SETTLE_MAX_S) -> float:
    """Wait until this process's other threads rest; return the seconds waited.

    Where the threads' states can be read (Linux), the wait ends when none of them is
    running or runnable in two looks :data:`SETTLE_STEP_S` apart.  Elsewhere the calling
    thread sleeps in steps of :data:`SETTLE_CPU_STEP_S`; while it sleeps the process's CPU
    time (``time.process_time``: all its threads) grows only by what the other threads
    run, and the wait ends at the first step where that is below :data:`SETTLE_IDLE` of
    a core.  Either way it gives up after ``max_s`` seconds (a thread that never rests
    costs at most that).

    Examples
    --------
    >>> 0.0 < settle() < 1.0
    True
    """
    t_start = time.perf_counter()
    quiet = 0
    while True:
        running = _running_threads()
        if running is None:
            w0, c0 = time.perf_counter(), time.process_time()
            time.sleep(SETTLE_CPU_STEP_S)
            w1, c1 = time.perf_counter(), time.process_time()
            done = c1 - c0 < SETTLE_IDLE * (w1 - w0)
        else:
            quiet = quiet + 1 if running == 0 else 0
            done = quiet >= 2
            if not done:
                time.sleep(SETTLE_STEP_S)
            w1 = time.perf_counter()
        if done or w1 - t_start >= max_s:
            return w1 - t_start


def _best(fn: Callable[[], object], calls: int) -> float:
    """The shortest wall time of ``calls`` calls of ``fn`` (after one untimed call), each
    on a process whose helper threads have gone idle (:func:`settle`)."""
    fn()
    best = float("inf")
    for _ in range(calls):
        settle()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _blocks(a: np.ndarray, n: int) -> list[np.ndarray]:
    return [b for b in np.array_split(a, n) if b.size]


def _gemm_gflops(dtype, n: int, calls: int) -> float:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(dtype)
    B = rng.standard_normal((n, n)).astype(dtype)
    C = np.empty((n, n), dtype=dtype)
    return 2.0 * n**3 / _best(lambda: np.matmul(A, B, out=C), calls) / 1e9


def _bandwidth(pool: ThreadPoolExecutor, n_threads: int, nbytes: int, calls: int) -> tuple[float, float]:
    """Read and write GB/s: a sum and a fill of an array of ``nbytes``, one block per thread."""
    a = np.ones(max(1024, nbytes // 8))
    parts = _blocks(a, n_threads)
    read = a.nbytes / _best(lambda: list(pool.map(np.sum, parts)), calls) / 1e9
    write = a.nbytes / _best(lambda: list(pool.map(lambda b: b.fill(1.5), parts)), calls) / 1e9
    return read, write


def _exp_gelems(pool: ThreadPoolExecutor, n_threads: int, dtype, n: int, calls: int) -> float:
    x = -np.random.default_rng(0).random(n).astype(dtype) * 10
    out = np.empty_like(x)
    pairs = list(zip(_blocks(x, n_threads), _blocks(out, n_threads), strict=True))
    return n / _best(lambda: list(pool.map(lambda p: np.exp(p[0], out=p[1]), pairs)), calls) / 1e9


def _fexp_gelems(n: int, calls: int) -> float:
    """fastrbf's ``fexp`` rate, through ``gram_matvec`` with ``d = 1`` (float64)."""
    from fastrbf.kernels import gram_matvec

    rng = np.random.default_rng(0)
    X, Y, v = rng.random((n, 1)), rng.random((n, 1)), rng.standard_normal(n)
    gram_matvec(X[:8], Y[:8], v[:8], gamma=0.5)  # compiles on a cold cache, untimed
    return n * n / _best(lambda: gram_matvec(X, Y, v, gamma=0.5), calls) / 1e9


def blas_library() -> dict:
    """The BLAS NumPy calls, as ``threadpoolctl`` names it: ``internal_api``, ``version``,
    ``architecture`` (the kernel / core type it chose) and ``num_threads``.

    Examples
    --------
    >>> sorted(blas_library())
    ['architecture', 'internal_api', 'num_threads', 'version']
    """
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    # NumPy's own BLAS when SciPy loaded another one too (``A @ B`` calls NumPy's)
    info = next((i for i in blas if "numpy" in os.path.basename(os.path.dirname(i.get("filepath", "")))),
                blas[0] if blas else {})
    return {k: info.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}


def measure_floors(n_threads: int | None = None, *, scale: float = 1.0, fexp: bool = True) -> dict:
    """Measure this machine's floors (about 2-3 s at ``scale=1``).

    Parameters
    ----------
    n_threads : int, optional
        Threads of the memory and exp measures (default: the BLAS threads, else the
        cores); GEMM uses whatever threads the BLAS is limited to.
    scale : float
        Multiplies the sizes of the arrays (a smaller scale for a quick check).
    fexp : bool
        Also measure fastrbf's ``fexp`` (through ``gram_matvec``).

    Returns
    -------
    dict
        ``blas`` (:func:`blas_library`), ``threads``, ``dgemm_gflops``,
        ``sgemm_gflops``, ``read_gbs``, ``write_gbs``, ``exp_f64_gelems``,
        ``exp_f32_gelems``, ``fexp_f64_gelems`` (None when not measured), ``seconds``
        (what the measure took).

    Examples
    --------
    >>> f = measure_floors(1, scale=0.02, fexp=False)
    >>> f["dgemm_gflops"] > 0 and f["write_gbs"] > 0 and f["fexp_f64_gelems"] is None
    True
    """
    t0 = time.perf_counter()
    blas = blas_library()
    n = n_threads or blas.get("num_threads") or os.cpu_count() or 1
    calls = 5
    gemm_n = max(64, int(1024 * scale ** (1 / 3)))
    out = {"blas": blas, "threads": n, "dgemm_gflops": _gemm_gflops(np.float64, gemm_n, calls),
           "sgemm_gflops": _gemm_gflops(np.float32, gemm_n, calls)}
    nbytes = int(256 * 2**20 * scale)
    try:  # a machine short of memory measures on a smaller array
        nbytes = min(nbytes, os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 8)
    except (AttributeError, ValueError, OSError):
        pass
    with ThreadPoolExecutor(n) as pool:
        out["read_gbs"], out["write_gbs"] = _bandwidth(pool, n, nbytes, calls)
        m = max(4096, int(8 * 2**20 * scale))
        out["exp_f64_gelems"] = _exp_gelems(pool, n, np.float64, m, calls)
        out["exp_f32_gelems"] = _exp_gelems(pool, n, np.float32, m, calls)
    out["fexp_f64_gelems"] = _fexp_gelems(max(64, int(2000 * scale**0.5)), calls) if fexp else None
    out["seconds"] = time.perf_counter() - t0
    return out


def format_floors(floors: dict) -> str:
    """The floors as the run header prints them (lines of at most 120 characters).

    Examples
    --------
    >>> f = dict(blas=dict(internal_api="openblas", version="0.3.31", architecture="SkylakeX", num_threads=2),
    ...          threads=2, dgemm_gflops=101.2, sgemm_gflops=198.0, read_gbs=15.25, write_gbs=9.5,
    ...          exp_f64_gelems=0.81, exp_f32_gelems=1.9, fexp_f64_gelems=1.2, seconds=2.1)
    >>> print(format_floors(f))
    floors (2 threads, measured in 2.1 s): DGEMM 101 / SGEMM 198 GFLOP/s (openblas 0.3.31 SkylakeX); memory read 15.2 /
      write 9.50 GB/s; exp float64 0.81 / float32 1.90 Gelem/s (np.exp); fexp float64 1.20 Gelem/s (fastrbf gram_matvec,
      d=1)
    """
    def num(v):
        return "?" if v is None else (f"{v:.0f}" if v >= 100 else (f"{v:.1f}" if v >= 10 else f"{v:.2f}"))

    b = floors.get("blas") or {}
    lib = " ".join(str(b[k]) for k in ("internal_api", "version", "architecture") if b.get(k))
    fx = floors.get("fexp_f64_gelems")
    text = (f"floors ({floors.get('threads', '?')} threads, measured in {floors.get('seconds', 0):.1f} s): "
            f"DGEMM {num(floors.get('dgemm_gflops'))} / SGEMM {num(floors.get('sgemm_gflops'))} GFLOP/s "
            f"({lib or 'BLAS unknown'}); memory read {num(floors.get('read_gbs'))} / write "
            f"{num(floors.get('write_gbs'))} GB/s; exp float64 {num(floors.get('exp_f64_gelems'))} / float32 "
            f"{num(floors.get('exp_f32_gelems'))} Gelem/s (np.exp); "
            + (f"fexp float64 {num(fx)} Gelem/s (fastrbf gram_matvec, d=1)" if fx is not None else "fexp not measured"))
    return textwrap.fill(text, 120, subsequent_indent="  ", break_on_hyphens=False)


def floor_times(cost: Cost, floors: dict, dtype: str) -> dict:
    """Seconds each floor allows for ``cost`` (``flop``, ``mem``, ``exp``; a floor the
    cost does not use is 0).

    The GEMM peak and the exp rate are those of ``dtype`` (float32: SGEMM and the
    float32 exp; otherwise the float64 ones); the exp rate is the faster of ``np.exp``
    and fastrbf's ``fexp``.

    Examples
    --------
    >>> f = dict(dgemm_gflops=100.0, sgemm_gflops=200.0, read_gbs=20.0, write_gbs=10.0,
    ...          exp_f64_gelems=1.0, exp_f32_gelems=2.0, fexp_f64_gelems=None)
    >>> floor_times(Cost(flops=2e9, bytes_read=2e9, bytes_written=1e9, exps=1e9), f, "float32")
    {'flop': 0.01, 'mem': 0.2, 'exp': 0.5}
    """
    f32 = dtype == "float32"
    peak = floors.get("sgemm_gflops" if f32 else "dgemm_gflops")
    exp_rates = [floors.get("exp_f32_gelems")] if f32 else [floors.get("exp_f64_gelems"), floors.get("fexp_f64_gelems")]
    exp_rate = max((r for r in exp_rates if r), default=None)
    out = {"flop": cost.flops / (peak * 1e9) if cost.flops and peak else 0.0,
           "mem": 0.0, "exp": cost.exps / (exp_rate * 1e9) if cost.exps and exp_rate else 0.0}
    if cost.bytes_read and floors.get("read_gbs"):
        out["mem"] += cost.bytes_read / (floors["read_gbs"] * 1e9)
    if cost.bytes_written and floors.get("write_gbs"):
        out["mem"] += cost.bytes_written / (floors["write_gbs"] * 1e9)
    return out


def roofline_fields(cost: Cost | None, floors: dict | None, dtype: str, median_s: float | None) -> dict:
    """The roofline fields of a row: ``floor_bound`` (``flop``, ``mem`` or ``exp``: the
    binding floor), ``floor_s`` (the time it allows), ``floor_fraction`` (``floor_s`` over
    the median time), ``achieved_rate`` in ``achieved_unit`` (GFLOP/s, GB/s or Gexp/s),
    and the cost (``flops``, ``bytes_read``, ``bytes_written``, ``exps``).  All None
    without a cost, floors or a time.

    Examples
    --------
    >>> f = dict(dgemm_gflops=100.0, read_gbs=20.0, write_gbs=10.0, exp_f64_gelems=1.0)
    >>> r = roofline_fields(Cost(flops=1e9, bytes_written=2e8), f, "float64", 0.04)
    >>> r["floor_bound"], r["floor_s"], round(r["floor_fraction"], 3), round(r["achieved_rate"], 3), r["achieved_unit"]
    ('mem', 0.02, 0.5, 5.0, 'GB/s')
    """
    out: dict = dict(floor_bound=None, floor_s=None, floor_fraction=None, achieved_rate=None, achieved_unit=None,
                     flops=None, bytes_read=None, bytes_written=None, exps=None)
    if cost is None:
        return out
    out.update(flops=cost.flops, bytes_read=cost.bytes_read, bytes_written=cost.bytes_written, exps=cost.exps)
    if not floors:
        return out
    times = floor_times(cost, floors, dtype)
    bound = max(times, key=lambda k: times[k])
    if times[bound] <= 0:
        return out
    out.update(floor_bound=bound, floor_s=times[bound])
    if median_s:
        work = {"flop": cost.flops, "mem": cost.bytes_read + cost.bytes_written, "exp": cost.exps}[bound]
        out.update(floor_fraction=times[bound] / median_s, achieved_rate=work / median_s / 1e9,
                   achieved_unit=BOUNDS[bound])
    return out


def format_fraction(row: dict) -> str:
    """The table's ``floor`` cell: the fraction of the binding floor in percent (which
    floor binds is the same for every row of a workload: the legend names it).

    Examples
    --------
    >>> format_fraction({"floor_fraction": 0.123, "floor_bound": "exp"}), format_fraction({})
    ('12%', '-')
    >>> format_fraction({"floor_fraction": 0.0004, "floor_bound": "flop"})
    '<1%'
    """
    f = row.get("floor_fraction")
    if f is None:
        return "-"
    pct = 100 * f
    return f"{pct:.0f}%" if pct >= 1 else "<1%"
