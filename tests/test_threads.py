"""Thread control, concurrency, fork safety, import-time and cache behaviour."""

import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from helpers import DEPRECATED_GP
from numpy.testing import assert_array_equal

import fastrbf
from fastrbf import _threads

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_python(code, env_extra=None, timeout=600, env_drop=()):
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    for name in env_drop:
        env.pop(name, None)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=timeout)


def test_resolve():
    n = _threads.max_threads()
    assert _threads.resolve(None) == n
    assert _threads.resolve(-1) == n
    assert _threads.resolve(1) == 1
    assert _threads.resolve(10**6) == n
    assert _threads.resolve(-(10**6)) == 1


def test_threads_context_limits_numba_and_blas():
    from threadpoolctl import threadpool_info

    with fastrbf.threads(1) as n:
        assert n == 1
        assert _threads.resolve(None) == 1
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
        D = fastrbf.sqdist(np.ones((3, 2)))
    assert _threads.resolve(None) == _threads.max_threads()
    assert D.shape == (3, 3)


def test_threads_context_limits_a_blas_loaded_later(monkeypatch):
    # a controller made before a BLAS was loaded (here: one that sees no BLAS at all)
    from threadpoolctl import ThreadpoolController, threadpool_info

    stale = ThreadpoolController().select(user_api="openmp")
    monkeypatch.setattr(_threads, "_controller", stale)
    with fastrbf.threads(1):
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")


def test_eight_python_threads_give_serial_results(rng):
    X = rng.standard_normal((400, 8))
    Y = rng.standard_normal((300, 8))
    V = rng.standard_normal(300)
    Z = rng.standard_normal((3000, 40))
    jobs = [
        lambda: fastrbf.sqdist(X, Y),
        lambda: fastrbf.gram(X, gamma=0.2),
        lambda: fastrbf.gram_matvec(X, Y, V, kernel="laplacian"),
        lambda: fastrbf.gram(X, Y, kernel="polynomial"),
        lambda: fastrbf.sqdist(Z.astype(np.float32)),  # GEMM path on Python threads
        lambda: fastrbf.kmeans(Z, 30, seed=3, max_iter=4).centers,  # certified GEMM assignment
        lambda: fastrbf.kmeans(X[:, :2], 5, seed=3).centers,  # one-call small loop
    ] * 3
    serial = [f() for f in jobs[:7]]
    with ThreadPoolExecutor(8) as ex:
        results = list(ex.map(lambda f: f(), jobs))
    for i, r in enumerate(results):
        assert_array_equal(r, serial[i % 7])


WORKQUEUE_SCRIPT = """
import numpy as np, fastrbf, numba
from concurrent.futures import ThreadPoolExecutor
X = np.random.default_rng(0).standard_normal((500, 6))
ref = fastrbf.sqdist(X)
assert numba.config.THREADING_LAYER == "workqueue", numba.config.THREADING_LAYER
with ThreadPoolExecutor(8) as ex:
    res = list(ex.map(lambda _: fastrbf.gram(X, gamma=0.3), range(32)))
refg = fastrbf.gram(X, gamma=0.3)
assert all(np.array_equal(r, refg) for r in res)
print("ok")
"""


def test_workqueue_layer_concurrent_calls_do_not_abort():
    res = _run_python(WORKQUEUE_SCRIPT, {"NUMBA_THREADING_LAYER": "workqueue"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip().endswith("ok")


def _child(conn, X):
    km = fastrbf.kmeans(X, 40, seed=1, max_iter=5)  # the BLAS + Python-thread path
    conn.send((fastrbf.gram(X, gamma=0.5), km.labels))
    conn.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_forked_child_survives(rng):
    X = rng.standard_normal((200, 30))
    parent = fastrbf.gram(X, gamma=0.5)  # the parent has used the parallel layer
    parent_km = fastrbf.kmeans(X, 40, seed=1, max_iter=5).labels  # and its thread pool
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(send, X))
    p.start()
    child = recv.recv() if recv.poll(300) else None
    p.join(60)
    assert p.exitcode == 0
    assert_array_equal(child[0], parent)
    assert_array_equal(child[1], parent_km)


FORK_WHILE_COMPILING = """
import os, threading, time
import numpy as np
import fastrbf
from fastrbf import _threads

X = np.random.default_rng(0).standard_normal((300, 4))
ref = fastrbf.sqdist(X)                 # the parent has run the parallel layer
lock = _threads._compiler_lock()
worker = threading.Thread(target=lambda: fastrbf.knn(X, X, 3))
worker.start()                          # compiles (no on-disk cache): holds numba's compiler lock
deadline = time.time() + 60
held = False
while time.time() < deadline and worker.is_alive():
    if lock.acquire(blocking=False):    # free: not compiling yet (or done)
        lock.release()
        time.sleep(0.001)
        continue
    held = True
    break
assert held, "the other thread never held the compiler lock"
pid = os.fork()
if pid == 0:                            # the child compiles serial twins of its own
    try:
        ok = np.array_equal(fastrbf.sqdist(X), ref) and fastrbf.gram(X, kernel="cubic", gamma=0.5).shape == (300, 300)
        os._exit(0 if ok else 3)
    except BaseException:
        os._exit(4)
worker.join()
for _ in range(3000):                   # up to 300 s
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.1)
else:
    os.kill(pid, 9)
    raise SystemExit("the child hung")
assert os.waitstatus_to_exitcode(status) == 0, status
print("ok")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_fork_while_another_thread_compiles():
    # a child forked at any moment, here while another thread of the parent is inside
    # numba's compiler, must not hang on its own first compilation
    res = _run_python(FORK_WHILE_COMPILING, {"FASTRBF_CACHE": "0"})
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    assert res.stdout.strip().endswith("ok")


def test_serial_blas_from_worker_threads():
    # fastrbf's single-threaded BLAS must hold on any Python thread (threadpoolctl lets
    # only one thread control OpenBLAS), and the setting is restored after.  Counted: the
    # BLAS of NumPy and SciPy, which fastrbf calls (a BLAS another package loaded later,
    # such as faiss's, is not fastrbf's to limit)
    import scipy.linalg  # noqa: F401  (its BLAS is among those counted)
    from threadpoolctl import threadpool_info

    def blas():
        return [i["num_threads"] for i in threadpool_info()
                if i["user_api"] == "blas" and ("numpy" in i["filepath"] or "scipy" in i["filepath"])]

    before = blas()
    seen = []

    def inside():
        with _threads.serial_blas():
            seen.append(blas())

    with ThreadPoolExecutor(4) as ex:
        list(ex.map(lambda _: inside(), range(8)))
    assert len(before) == 2 and seen and all(s == [1, 1] for s in seen)
    assert blas() == before


def test_serial_blas_covers_scipy_blas_loaded_on_first_use():
    # import fastrbf does not import scipy.linalg; the first serial_blas must still limit its BLAS
    code = """
import sys
import fastrbf
from fastrbf import _threads
assert "scipy.linalg" not in sys.modules
with _threads.serial_blas():
    from threadpoolctl import threadpool_info
    libs = [i for i in threadpool_info() if i["user_api"] == "blas"]
    print(sorted(set(i["num_threads"] for i in libs)), any("scipy" in i["filepath"] for i in libs))
"""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("]")[0] == "[1" and res.stdout.strip().endswith("True"), res.stdout


def test_import_does_not_pull_scipy_optimize():
    # scipy.optimize (0.2 s to import) is needed by gp_regression's optimiser only
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import fastrbf"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    modules = [line.rsplit("|", 1)[-1].strip() for line in res.stderr.splitlines() if line.startswith("import time:")]
    assert "fastrbf" in modules
    assert not [m for m in modules if m == "scipy.optimize" or m.startswith("scipy.optimize.")]


def test_nothing_compiles_at_import_and_cache_can_be_off():
    code = """
    import fastrbf
    from fastrbf._jit import pairwise
    from fastrbf._jit.cluster import certify, lloyd
    kernels = [pairwise.pairwise_rows, pairwise.pairwise_upper, pairwise.mirror_upper, pairwise.gram_matvec]
    assert all(len(k.signatures) == 0 for k in kernels)
    kernels = (lloyd.assign_rows, certify.certify_cols, lloyd.update_partials, lloyd.lloyd_small, lloyd.centre_f32)
    assert all(len(k.signatures) == 0 for k in kernels)
    import numpy as np
    D = fastrbf.sqdist(np.ones((3, 2), np.float32))
    assert pairwise.pairwise_upper.signatures and not pairwise.pairwise_rows.signatures
    assert pairwise.pairwise_upper.kernel._cache.__class__.__name__ == "NullCache"
    print("ok")
    """
    res = _run_python(code, {"FASTRBF_CACHE": "0"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert "ok" in res.stdout


def test_unwritable_cache_falls_back_to_no_cache(monkeypatch):
    """A read-only install without a writable cache directory must still work: numba
    raises RuntimeError('cannot cache function ...') at decoration; we compile uncached."""
    import numba

    from fastrbf._jit import _decorators

    real = numba.njit

    def fake_njit(*args, **kwargs):
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'f': no locator available for file")
        return real(*args, **kwargs)

    monkeypatch.setattr(numba, "njit", fake_njit)

    def f(x):
        return x + 1

    k = _decorators.jit(f)
    assert k(1) == 2
    assert k._cache.__class__.__name__ == "NullCache"


NO_PARALLEL_REGION = """
import warnings
import numpy as np
import numba
import fastrbf
from fastrbf.compile import TARGETS

warnings.simplefilter("ignore")
X = np.random.default_rng(0).random((3000, 5))
fastrbf.sqdist(X)  # above the work threshold: on several threads
fastrbf.gram_matvec(X, X, X[:, 0], gamma=1.0)
for name, target in TARGETS.items():
    target(np.float64)
try:
    print(numba.threading_layer())
except ValueError:
    print("no parallel region")
"""


def test_fastrbf_opens_no_numba_parallel_region():
    # no OpenMP/TBB pool: nothing spins while idle, any threading layer is safe, forks are safe
    res = _run_python(NO_PARALLEL_REGION, {})
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip().splitlines()[-1] == "no parallel region"


class _CountingExecutor(ThreadPoolExecutor):
    def __init__(self):
        super().__init__(max_workers=_threads.max_threads(), thread_name_prefix="fastrbf-test")
        self.submitted = 0

    def submit(self, *args, **kwargs):
        self.submitted += 1
        return super().submit(*args, **kwargs)


@pytest.fixture
def counting_executor(monkeypatch):
    ex = _CountingExecutor()
    monkeypatch.setattr(_threads, "_executor", ex)
    yield ex
    ex.shutdown()


def test_map_ranges_caller_runs_ranges_and_one_range_wakes_no_worker(counting_executor):
    seen = []
    _threads.map_ranges(lambda lo, hi: seen.append((lo, hi)), 10, 1)
    _threads.map_ranges(lambda lo, hi: seen.append((lo, hi)), 3, 8, align=4)  # one aligned range
    assert seen == [(0, 10), (0, 3)]
    assert counting_executor.submitted == 0
    seen.clear()
    both = threading.Barrier(2, timeout=60)  # the two ranges run at once, on two threads
    runners = set()

    def work(lo, hi):
        runners.add(threading.get_ident())
        seen.append((lo, hi))
        both.wait()

    _threads.map_ranges(work, 10, 2)
    assert sorted(seen) == [(0, 5), (5, 10)]
    assert threading.get_ident() in runners and len(runners) == 2  # the caller ran one range itself
    assert counting_executor.submitted == 1  # and woke one worker for the other
    seen.clear()
    _threads.map_ranges(lambda lo, hi: seen.append((lo, hi)), 0, 2)
    assert seen == []


def test_small_fits_wake_no_worker(rng, counting_executor):
    # below the work threshold a fit runs on the calling thread alone
    X = rng.random((60, 3))
    y = np.sin(X[:, 0])
    fastrbf.kernel_ridge(X, y, gamma=1.0, alpha=1e-2)
    fastrbf.cholesky(fastrbf.gram(X, gamma=1.0), alpha=1e-3).solve(y)
    fastrbf.kmeans(X, 3, seed=0)
    assert counting_executor.submitted == 0


def test_gp_optimiser_runs_on_one_blas_thread(rng, monkeypatch):
    # L-BFGS-B's own LAPACK solves are tiny: on several BLAS threads they would only
    # wake threads that then spin
    import scipy.optimize

    real = scipy.optimize.minimize
    seen = []

    def minimize(*args, **kwargs):
        seen.append([k.read() for k in _threads._blas_knobs()])
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.optimize, "minimize", minimize)
    X = rng.random((30, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an optimum on a bound does not matter here
        fastrbf.gp_regression(X, np.sin(3 * X[:, 0]), n_restarts=1, seed=0)
    assert len(seen) == 2 and all(s == [1] * len(s) and s for s in seen)


def test_small_calls_run_on_the_calling_thread(rng, counting_executor):
    X = rng.random((80, 5))
    Z = rng.random((60, 64)).astype(np.float32)  # the GEMM path of the distances
    V = rng.random(80)
    fastrbf.sqdist(X)
    fastrbf.sqdist(X, X[:30])
    fastrbf.sqdist(Z)
    fastrbf.gram(X, gamma=0.5)
    fastrbf.gram(X, kernel="polynomial")
    fastrbf.gram_matvec(X, X, V)
    fastrbf.knn(X, X[:20], 3)
    fastrbf.nadaraya_watson(X, V, X[:20], gamma=1.0)
    fastrbf.cholesky(fastrbf.gram(X, gamma=1.0), alpha=1e-3)
    assert counting_executor.submitted == 0
    fastrbf.sqdist(rng.random((1500, 5)))  # above the work threshold: all threads
    assert counting_executor.submitted == (_threads.max_threads() > 1)
