"""The peers users would pick instead of fastrbf on a CPU, in the rows of the k-means,
kNN and ``gram_matvec`` workloads: scikit-learn-intelex (oneDAL) ``KMeans`` and brute
``NearestNeighbors``, faiss (k-means, exact kNN ``IndexFlatL2``), pykeops (the
Gaussian kernel sum without storing the matrix).

Decisions:

- **Never a silent omission.**  :func:`optional_peer` returns a contender even when its
  module is absent: the row says ``not installed`` and the legend how to install it; a
  peer whose import or warm-up raises becomes a ``failed: <exception type>`` row (the
  suite catches it), with the message in the legend.
- **They are in the ``[bench]`` extra**: in a fresh virtual environment ``pip install
  scikit-learn-intelex pykeops`` took under 20 s with all their dependencies, and
  both run here.  scikit-learn-intelex only on x86-64, where its wheels exist;
  pykeops also needs g++ when it runs, without which its row says ``failed``.
- **The run's thread limit** (``--threads``) reaches oneDAL (``daal4py.daalinit``:
  its TBB threads are out of threadpoolctl's reach) and faiss's OpenMP pool before
  each call.
- **scikit-learn-intelex is called directly** (``sklearnex.cluster.KMeans``,
  ``sklearnex.neighbors.NearestNeighbors``), without patching scikit-learn, so the
  scikit-learn rows stay scikit-learn's.  Which oneDAL code path runs on this CPU (the
  instruction set oneDAL dispatched to, and whether each call ran oneDAL or fell back
  to scikit-learn) is read once per run from a fresh process with ``ONEDAL_VERBOSE=1``
  and ``SKLEARNEX_VERBOSE=INFO`` (:func:`sklearnex_code_path`) and put in the legend.
- **pykeops compiles with g++ on its first call** (cached on disk afterwards): the
  contender is marked ``compiles="g++"``, so that call is part of the untimed warm-up
  and the suite reports its time apart.
- faiss works in float32 only: its rows convert float64 data once, in the set-up (the
  index) or per call (k-means).
"""

import contextlib
import functools
import importlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..harness import PEER, Contender

#: how to install each peer (the legend of a row that says "not installed")
INSTALL = {"sklearn": "pip install scikit-learn", "scipy": "pip install scipy",
           "sklearnex": "pip install scikit-learn-intelex", "pykeops": "pip install pykeops (needs g++)",
           "faiss": "pip install faiss-cpu", "pykdtree": "pip install pykdtree", "ferreus_rbf": "pip install ferreus-rbf",
           "gpboost": "pip install gpboost", "tslearn": "pip install tslearn",
           "cupy": "pip install cupy-cuda12x"}


def optional_peer(label: str, module: str, fn: Callable[[dict], Any], *, package: str,
                  note: str | Callable[[], str] = "", compiles: str = "", full: bool = True) -> Contender:
    """A peer contender that needs ``module``: a row marked ``not installed`` (with the
    install line in its note) when the module is not found.

    Only the module's presence is checked here, so listing the workloads stays cheap; the
    import happens in the warm-up, where an error makes the row ``failed: <exception
    type>``.

    Examples
    --------
    >>> c = optional_peer("x", "no_such_module_here.sub", lambda a: None, package="faiss")
    >>> c.missing, c.note
    ('not installed', 'not installed: pip install faiss-cpu')
    """
    try:
        found = importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return Contender(label, PEER, fn, full=full, missing="not installed", note=f"not installed: {INSTALL[package]}")
    return Contender(label, PEER, fn, full=full, note=note, compiles=compiles)


# ---------------------------------------------------------------- scikit-learn-intelex
def run_threads() -> int:
    """The threads the run gives every contender (numba's count, which ``--threads`` limits)."""
    import numba

    return int(numba.get_num_threads())


def _limit_onedal() -> None:
    """oneDAL's threads (TBB, which threadpoolctl does not limit) set to the run's."""
    importlib.import_module("daal4py").daalinit(run_threads())


def sklearnex_lloyd(a: dict, n_iter: int) -> None:
    """``n_iter`` Lloyd iterations of scikit-learn-intelex's ``KMeans`` from the centres ``a["C"]``."""
    _limit_onedal()
    KMeans = importlib.import_module("sklearnex.cluster").KMeans  # (no type information shipped)
    KMeans(a["C"].shape[0], init=a["C"], n_init=1, max_iter=n_iter, tol=0, algorithm="lloyd").fit(a["X"])


def sklearnex_knn_index(X: np.ndarray, k: int) -> Any:
    """scikit-learn-intelex's brute ``NearestNeighbors`` fitted on ``X`` (set-up, untimed)."""
    _limit_onedal()
    NearestNeighbors = importlib.import_module("sklearnex.neighbors").NearestNeighbors
    return NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X)


def sklearnex_kneighbors(index: Any, Q: np.ndarray) -> Any:
    """The neighbours of the rows of ``Q`` by a fitted scikit-learn-intelex index, on the run's threads."""
    _limit_onedal()
    return index.kneighbors(Q)


_PROBE = r"""
import numpy as np
from sklearnex.cluster import KMeans
from sklearnex.neighbors import NearestNeighbors
for dt in (np.float64, np.float32):
    X = np.random.default_rng(0).standard_normal((256, 4)).astype(dt)
    KMeans(4, init=X[:4], n_init=1, max_iter=2, tol=0, algorithm="lloyd").fit(X)
    NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X).kneighbors(X[:5])
"""


def parse_sklearnex_log(text: str, call: str) -> str:
    """What the verbose output of oneDAL and scikit-learn-intelex says about the code
    path of ``call``: the instruction set oneDAL dispatched to and where the call ran.

    Examples
    --------
    >>> log = ("Processor optimization: Intel(R) Advanced Vector Extensions 2\\n"
    ...        "INFO:sklearnex: sklearn.cluster.KMeans.fit: running accelerated version on CPU\\n"
    ...        "INFO:sklearnex: sklearn.neighbors.NearestNeighbors.kneighbors: fallback to original Scikit-learn\\n")
    >>> parse_sklearnex_log(log, "KMeans.fit")
    'oneDAL code path: Intel(R) Advanced Vector Extensions 2; KMeans.fit ran oneDAL on CPU'
    >>> parse_sklearnex_log(log, "NearestNeighbors.kneighbors")
    'oneDAL code path: Intel(R) Advanced Vector Extensions 2; NearestNeighbors.kneighbors ran the scikit-learn fallback'
    """
    isa = re.search(r"Processor optimization:\s*(.+)", text)
    where = set()
    for m in re.finditer(r"sklearn\.\w+\.(\w+\.\w+): (.+)", text):
        if m.group(1) == call:
            where.add("oneDAL on CPU" if "accelerated" in m.group(2) else (
                "the scikit-learn fallback" if "fallback" in m.group(2) else m.group(2).strip()))
    return (f"oneDAL code path: {isa.group(1).strip() if isa else 'not reported'}; {call} ran "
            f"{' / '.join(sorted(where)) or 'without a report'}")


@functools.lru_cache(maxsize=1)
def _sklearnex_log() -> str:
    env = dict(os.environ, ONEDAL_VERBOSE="1", SKLEARNEX_VERBOSE="INFO")
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"failed: {type(exc).__name__}"
    if proc.returncode != 0:
        return f"failed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:80]}"
    return proc.stdout + proc.stderr


def sklearnex_code_path(call: str) -> Callable[[], str]:
    """The legend's note on a scikit-learn-intelex row: the oneDAL code path ``call``
    runs on this machine (:func:`parse_sklearnex_log`), read once per process from a
    fresh process with ``ONEDAL_VERBOSE=1`` and ``SKLEARNEX_VERBOSE=INFO`` (tiny
    ``KMeans`` and ``NearestNeighbors`` calls with the workloads' parameters)."""
    def note() -> str:
        log = _sklearnex_log()
        return f"code path not read ({log})" if log.startswith("failed: ") else parse_sklearnex_log(log, call)

    return note


# ---------------------------------------------------------------- faiss
def faiss_knn_index(X: np.ndarray) -> Any:
    """faiss's exact L2 index (``IndexFlatL2``) holding ``X`` in float32 (set-up, untimed)."""
    import faiss

    index = faiss.IndexFlatL2(X.shape[1])
    index.add(np.ascontiguousarray(X, dtype=np.float32))
    return index


def faiss_knn(index: Any, Q: np.ndarray, k: int) -> Any:
    """The ``k`` nearest neighbours of the rows of ``Q`` in a faiss index (float32 queries)."""
    import faiss

    faiss.omp_set_num_threads(run_threads())  # its OpenMP pool, loaded after the run's limits were set
    return index.search(np.ascontiguousarray(Q, dtype=np.float32), k)


# ---------------------------------------------------------------- pykeops
def keops_gaussian_matvec(X: np.ndarray, Y: np.ndarray, v: np.ndarray, gamma: float) -> np.ndarray:
    """``K(X, Y) @ v`` for the Gaussian kernel by pykeops on the CPU: the kernel sum is
    reduced on the fly, the matrix never stored (the first call of a new formula compiles
    with g++)."""
    with contextlib.redirect_stdout(io.StringIO()):  # its first import says that CUDA is absent
        pykeops = importlib.import_module("pykeops")
        LazyTensor = importlib.import_module("pykeops.numpy").LazyTensor
    pykeops.set_verbose(False)  # no "Generating code ..." lines inside the run's output
    xi, yj = LazyTensor(X[:, None, :]), LazyTensor(Y[None, :, :])
    K = (-gamma * ((xi - yj) ** 2).sum(-1)).exp()
    return (K @ v[:, None])[:, 0]
