"""fastrbf.dask.knn against the in-memory knn: the same indices and squared distances,
bit for bit, on random, clustered, duplicated and 1-D data, any chunking."""

import dask
import dask.array as da
import numpy as np
import pytest

import fastrbf
from fastrbf import dask as fd
from fastrbf.dask import neighbors as neighbors_mod
from fastrbf.neighbors import _kdtree


@pytest.fixture(autouse=True)
def threads_scheduler():
    with dask.config.set(scheduler="threads"):
        yield


def _cases(rng):
    clustered = (rng.standard_normal((5, 3)) * 10)[rng.integers(0, 5, 900)] + 0.01 * rng.standard_normal((900, 3))
    duplicated = np.repeat(rng.random((150, 2)), 6, axis=0)  # ties everywhere
    return {
        "random-3d": rng.random((1000, 3)),
        "clustered": clustered,
        "duplicated": duplicated,
        "1-d": rng.random((700, 1)),
        "grid": np.stack(np.meshgrid(np.arange(20.0), np.arange(20.0)), -1).reshape(-1, 2),  # equal distances
        "d=16": rng.standard_normal((600, 16)),
    }


@pytest.mark.parametrize("case", ["random-3d", "clustered", "duplicated", "1-d", "grid", "d=16"])
@pytest.mark.parametrize("method", ["auto", "tree", "brute"])
def test_equals_in_memory_bit_for_bit(rng, case, method):
    X = _cases(rng)[case]
    Q = np.r_[X[::7], rng.random((50, X.shape[1])) * 3]
    k = 9
    ref_idx, ref_d2 = fastrbf.knn(X, Q, k, method="brute")
    for xc, qc in [(128, 64), (X.shape[0] // 3 + 1, Q.shape[0]), (X.shape[0], 17)]:
        idx, d2 = fd.knn(da.from_array(X, chunks=(xc, X.shape[1])), da.from_array(Q, chunks=(qc, X.shape[1])), k,
                         method=method)
        assert idx.chunks[0] == d2.chunks[0] == da.from_array(Q, chunks=(qc, 1)).chunks[0]
        np.testing.assert_array_equal(idx.compute(), ref_idx)
        np.testing.assert_array_equal(d2.compute(), ref_d2)


def test_k_larger_than_a_block_and_k_equal_n(rng):
    X = rng.random((60, 2))
    Q = rng.random((11, 2))
    for k in (25, 60):
        idx, d2 = fd.knn(da.from_array(X, chunks=(7, 2)), Q, k)
        ref_idx, ref_d2 = fastrbf.knn(X, Q, k)
        np.testing.assert_array_equal(idx.compute(), ref_idx)
        np.testing.assert_array_equal(d2.compute(), ref_d2)


@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.float32, np.float64)])
def test_dtypes_and_length_scale_as_in_memory(rng, dtypes):
    X = rng.random((400, 3)).astype(dtypes[0])
    Q = rng.random((40, 3)).astype(dtypes[1])
    ls = [0.5, 2.0, 1.0]
    idx, d2 = fd.knn(da.from_array(X, chunks=(90, 3)), da.from_array(Q, chunks=(15, 3)), 5, length_scale=ls)
    ref_idx, ref_d2 = fastrbf.knn(X, Q, 5, length_scale=ls)
    assert d2.dtype == ref_d2.dtype == d2.compute().dtype
    np.testing.assert_array_equal(idx.compute(), ref_idx)
    np.testing.assert_array_equal(d2.compute(), ref_d2)


def test_threads_per_task_do_not_change_the_bits(rng):
    X = rng.random((3000, 3))
    Q = rng.random((500, 3))
    Xd = da.from_array(X, chunks=(1000, 3))
    one = [a.compute() for a in fd.knn(Xd, Q, 8, n_threads=1, method="tree")]
    two = [a.compute() for a in fd.knn(Xd, Q, 8, n_threads=2, method="tree")]
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)


def test_bad_arguments_name_themselves(rng):
    X = da.from_array(rng.random((50, 3)), chunks=(20, 3))
    with pytest.raises(ValueError, match=r"`k` must be an int in \[1, n_samples\] = \[1, 50\]; got 51"):
        fd.knn(X, rng.random((4, 3)), 51)
    with pytest.raises(ValueError, match="`Xq` must have the same number of features as `X` \\(3\\); got 2"):
        fd.knn(X, rng.random((4, 2)), 3)
    with pytest.raises(ValueError, match="`method` must be"):
        fd.knn(X, rng.random((4, 3)), 3, method="ball")
    with pytest.raises(ValueError, match="`length_scale`"):
        fd.knn(X, rng.random((4, 3)), 3, length_scale=[1.0, 2.0])


def test_nan_in_a_block_names_the_global_row(rng):
    Xn = rng.random((50, 2))
    Xn[33, 1] = np.nan
    idx, _ = fd.knn(da.from_array(Xn, chunks=(20, 2)), rng.random((4, 2)), 3)
    with pytest.raises(ValueError, match=r"`X`.*33"):
        idx.compute()
    Q = rng.random((30, 2))
    Q[21, 0] = np.inf
    idx, _ = fd.knn(rng.random((50, 2)), da.from_array(Q, chunks=(10, 2)), 3)
    with pytest.raises(ValueError, match=r"`Xq`.*21"):
        idx.compute()


def test_inputs_not_modified(rng):
    X = rng.random((100, 2))
    Q = rng.random((10, 2))
    X0, Q0 = X.copy(), Q.copy()
    [a.compute() for a in fd.knn(da.from_array(X, chunks=(30, 2)), Q, 4)]
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Q, Q0)


def _count_builds(monkeypatch):
    calls = []
    build = _kdtree.build

    def counted(Xc, n_threads):
        calls.append(Xc.shape[0])
        return build(Xc, n_threads)

    monkeypatch.setattr(_kdtree, "build", counted)
    return calls


@pytest.mark.parametrize("one_tree", [True, False], ids=["one-tree", "tree-per-block"])
@pytest.mark.parametrize("case", ["random-3d", "clustered", "duplicated", "1-d"])
def test_tree_built_once_equals_in_memory(rng, monkeypatch, case, one_tree):
    if not one_tree:
        monkeypatch.setattr(neighbors_mod, "TREE_MEMORY", 0.0)  # all of X never fits: a tree per block of X
    calls = _count_builds(monkeypatch)
    X = _cases(rng)[case]
    Q = np.r_[X[::5], rng.random((60, X.shape[1])) * 3]
    for k in (1, 9, 40):
        idx, d2 = dask.compute(*fd.knn(da.from_array(X, chunks=(300, X.shape[1])),
                                       da.from_array(Q, chunks=(50, X.shape[1])), k, method="tree"))
        ref_idx, ref_d2 = fastrbf.knn(X, Q, k, method="brute")
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_array_equal(d2, ref_d2)
    sizes = [X.shape[0]] if one_tree else [len(b) for b in np.array_split(X, range(300, X.shape[0], 300))]
    assert sorted(calls) == sorted(sizes * 3)  # each tree built once per compute, whatever the blocks of queries


def test_auto_takes_one_tree_for_many_queries(rng, monkeypatch):
    calls = _count_builds(monkeypatch)
    X = rng.standard_normal((20000, 2))
    Q = rng.standard_normal((20000, 2))
    idx, d2 = dask.compute(*fd.knn(da.from_array(X, chunks=(5000, 2)), da.from_array(Q, chunks=(4000, 2)), 5))
    assert calls == [20000]  # one tree for the five blocks of queries
    ref_idx, ref_d2 = fastrbf.knn(X, Q, 5)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(d2, ref_d2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tree_k_equal_n_float32_and_queries_far_larger(rng, monkeypatch, dtype):
    calls = _count_builds(monkeypatch)
    X = rng.standard_normal((300, 3)).astype(dtype)
    Xd = da.from_array(X, chunks=(100, 3))
    big = np.ldexp(rng.standard_normal((20, 3)), np.finfo(dtype).maxexp // 2 + 8).astype(dtype)
    Q = np.r_[rng.standard_normal((20, 3)).astype(dtype), big]  # the second block changes the scaling
    for k in (300, 7):
        calls.clear()
        idx, d2 = dask.compute(*fd.knn(Xd, da.from_array(Q, chunks=(20, 3)), k, method="tree"))
        assert calls == [300, 300]  # the tree of X, and one for the far block of queries
        ref_idx, ref_d2 = fastrbf.knn(X, Q[:20], k, method="brute")
        ref_idx2, ref_d22 = fastrbf.knn(X, Q[20:], k, method="brute")
        assert d2.dtype == dtype
        np.testing.assert_array_equal(idx, np.r_[ref_idx, ref_idx2])
        np.testing.assert_array_equal(d2, np.r_[ref_d2, ref_d22])
