"""RBF networks fitted on dask arrays: per-block TSQR factors folded in a tree, the
small solve on the client.  The centre checks, the factor of a block, the fold and the
solve are the in-memory ones (:mod:`fastrbf.models.network`); only the passes are here.

``centers="forward"``: the candidates' Gram matrix is a sum over row blocks, so each
block's Gram (the in-memory :func:`fastrbf.models.forward.gram_pass`) is summed in a
tree and the selection (:func:`fastrbf.models.forward.select`) runs on the client; the
targets are centred with their mean from one more pass over ``Y``, as in memory.
"""


import dataclasses

import dask.array as da
import numpy as np
from dask import delayed
from numpy.typing import ArrayLike

from .. import _progress
from .. import _validation as _v
from .. import models as _m
from .._progress import ProgressArg
from .._typing import KernelArg
from ..kernels import check_kernel, check_params, kernel_value
from ..models import common as _mc
from ..models import forward as _fwd
from ..models import network as _mn
from .cluster import kmeans_named
from .common import (
    Data,
    aligned,
    as_in_memory,
    as_rows,
    check_kind,
    check_threads,
    checked_block,
    checked_targets,
    in_memory,
    is_dask,
    offsets,
    row_blocks,
    tree,
)


# ---------------------------------------------------------------- RBF network
def _block_targets(Yb, offset, classes):
    """The targets (n_b, k) of one row block: the values, or the class codes."""
    if classes is None:
        T, _ = _mc.as_targets(checked_targets(Yb, offset))
        return T
    Ya = np.asarray(Yb)
    _v.check_finite_labels(Ya)
    return _mc.class_codes(np.searchsorted(classes, Ya), classes.shape[0])


def _rbf_block(Xb, offset, Yb, C, spec, classes, n_threads):
    """R factor (upper triangular) of ``[Phi 1 T]`` of one row block."""
    X = checked_block(Xb, offset)
    T = _block_targets(Yb, offset, classes)
    Xd = _v.to_dtype(X, np.float64)
    return _mn.tsqr(C, Xd, spec, T, n_threads)


def _target_sum(Yb, offset, classes):
    """Column sums of the targets of one row block."""
    return _block_targets(Yb, offset, classes).sum(axis=0)


def _gram_block(Xb, offset, Yb, Cc, spec, classes, mean, n_threads):
    """The candidates' Gram of ``[Phi 1 T - mean]`` over one row block."""
    Xd = _v.to_dtype(checked_block(Xb, offset), np.float64)
    T = _block_targets(Yb, offset, classes)
    return _fwd.gram_pass(Cc, Xd, spec, T if mean is None else T - mean, n_threads)


def _add(*arrays):
    out = arrays[0].copy()
    for a in arrays[1:]:
        out += a
    return out


def _forward_candidates(X, candidates, rng):
    """The forward selection's candidates (in-memory float64) of the dask data ``X``."""
    rows = _fwd.candidate_rows(candidates, X.shape[0], rng)
    if rows is None:
        Cand = in_memory(candidates, "candidates")
        _v.check_features(np.empty((0, X.shape[1])), Cand, "X", "candidates")
    else:
        Cand = _mc.model_data(np.asarray(X[rows].compute()), "X")
    return _v.to_dtype(Cand, np.float64)


def rbf_network(X: Data, Y: Data, *, gamma: ArrayLike, n_centers: int | None = None, centers: str | ArrayLike = "kmeans",
                alpha: float = 0.0, bias: bool = True, kernel: KernelArg = "gaussian", classify: bool = False,
                seed: int | np.random.Generator | None = None, max_iter: int = 300, n_init: int = 1,
                learn_gamma: bool = False, validation: object = None, n_threads: int | None = 1,
                progress: ProgressArg = False, length_scale: ArrayLike | None = None,
                candidates: int | str | ArrayLike | None = None, tol: float | None = None) -> _m.RBFNetwork:
    """An RBF network fitted on dask arrays: per-block TSQR factors reduced across workers,
    the small solve on the client.

    Parameters
    ----------
    X : dask.array.Array of shape (N, d), chunked by rows
    Y : dask.array.Array or array_like of shape (N,) or (N, k)
        The same row chunks as ``X``; class labels with ``classify=True``.
    gamma, n_centers, alpha, bias, kernel, classify :
        As in :func:`fastrbf.rbf_network`.
    centers : "kmeans", "forward" or array_like of shape (K, d)
        k-means centres of ``X`` by :func:`fastrbf.dask.kmeans` (k-means|| start, so not
        the in-memory k-means++ centres), chosen by forward selection as in memory (the
        same candidates for the same ``seed``; the selection and the weights equal the
        in-memory fit to rounding: the Gram is summed over blocks), or given (then the
        weights equal the in-memory fit to rounding).
    candidates, tol :
        Of ``centers="forward"``, as in :func:`fastrbf.rbf_network` (a subsample's rows
        are computed from ``X``; a given array is in memory).
    seed, max_iter, n_init :
        Passed to :func:`fastrbf.dask.kmeans`.
    learn_gamma, validation :
        Not supported on dask arrays (``NotImplementedError``).
    n_threads : int, default 1
        Threads of each task.
    progress : bool, logging.Logger or callable, default False
        Report the iterations of the k-means (task ``"dask.rbf_network kmeans"``, as
        :func:`kmeans`); the factorisation is one dask compute.

    length_scale : float or array_like of shape (d,), optional
        Per-feature widths, as in the in-memory fit (the blocks are rescaled lazily).

    Returns
    -------
    RBFNetwork
        The in-memory model (small, picklable); :func:`predict` evaluates it on dask
        arrays.

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> from fastrbf import dask as fd
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> Xd = da.from_array(X, chunks=(2, 2))
    >>> with dask.config.set(scheduler="threads"):
    ...     net = fd.rbf_network(Xd, np.array([1.0, -1.0, -1.0, 1.0]), gamma=1.0,
    ...                          centers=np.array([[0.0, 0.2], [1.0, 0.7]]))
    >>> print(np.round(net.bias, 3), np.round(net.weights[:, 0], 3))
    [-7.848] [7.397 7.823]
    """
    if learn_gamma or validation is not None:
        raise NotImplementedError("`learn_gamma` and `validation` are not supported on dask arrays: learn the "
                                  "width on an in-memory sample with fastrbf.rbf_network, then fit here with it.")
    forward = isinstance(centers, str) and centers == "forward"
    if length_scale is not None:  # the fit on the rescaled data (lazily, blockwise); the centres back in units
        Xr = as_rows(X)
        ls = _v.check_length_scale(length_scale, Xr.shape[1])
        Cg = None if isinstance(centers, str) else _v.to_dtype(in_memory(centers, "centers"), np.float64)
        Cf = None  # the forward selection's candidates in the data's units
        if forward:
            _fwd.check_tol(tol)
            Cf = _forward_candidates(Xr, candidates, _v.check_seed(seed))
        net = rbf_network((Xr / ls).astype(Xr.dtype), Y, gamma=gamma, n_centers=n_centers,
                          centers=centers if Cg is None else _v.scale_features(Cg, ls, np.float64, "centers"),
                          alpha=alpha, bias=bias, kernel=kernel, classify=classify, seed=seed, max_iter=max_iter,
                          n_init=n_init, n_threads=n_threads, progress=progress, tol=tol,
                          candidates=None if Cf is None else _v.scale_features(Cf, ls, np.float64, "candidates"))
        C_units = Cg if Cf is None else Cf[net.selection]
        return dataclasses.replace(net, centers=net.centers * ls if C_units is None else C_units, length_scale=ls)
    nt = check_threads(n_threads)
    rep = _progress.reporter(progress, "dask.rbf_network")
    entry = check_kernel(kernel)
    bias = _v.check_bool(bias, "bias", text="a bool")  # as the in-memory fit checks them
    classify = _v.check_bool(classify, "classify", text="a bool")
    X = as_rows(X)
    n, d = X.shape
    if not is_dask(Y) and not classify:
        Y = _v.check_targets(as_in_memory(Y, "Y"), n)
    Yd = aligned(Y, X, "Y", ndims=(1,) if classify else (1, 2))
    if not classify:
        check_kind(Yd.dtype, "Y")
    if isinstance(centers, str) and centers == "all":
        raise NotImplementedError('`centers="all"` (one centre per training point) is not supported on dask '
                                  "arrays; use k-means centres or given ones.")
    Ca = None if isinstance(centers, str) else in_memory(centers, "centers")
    if forward:  # K: the candidates (their widths)
        tol = _fwd.check_tol(tol)
        Cand = _forward_candidates(X, candidates, _v.check_seed(seed))
        K = Cand.shape[0]
    else:
        _fwd.check_forward_unused(candidates, tol)
        K = _mn.check_centers_arg(centers if Ca is None else Ca, n_centers, n, d, choices=("kmeans",))
    C = None if Ca is None else _v.to_dtype(Ca, np.float64)
    if C is None and not forward:
        _v.check_seed(seed)  # checked before the k-means runs (which takes `seed` as it is)
    g, _ = _v.check_gamma(gamma, K, np.float64)
    deg, coef0 = check_params(entry, 3, 1.0)
    a = _mn.check_network_alpha(alpha)
    if C is None and not forward:
        assert n_centers is not None
        # the k-means reports through this fit's reporter (as a part of it); its cluster
        # count is our `n_centers`
        km = kmeans_named(X, n_centers, name="n_centers", seed=seed, max_iter=max_iter, n_init=n_init,
                          n_threads=nt, progress=rep)
        C = _v.to_dtype(km.centers, np.float64)
    classes = None
    if classify:
        classes = np.asarray(da.unique(Yd).compute())
        _v.check_finite_labels(classes)
        _mc.check_n_classes(classes.shape[0])
        k = 1 if classes.shape[0] == 2 else classes.shape[0]
        single = classes.shape[0] == 2
    else:
        k = 1 if Yd.ndim == 1 else Yd.shape[1]
        single = Yd.ndim == 1
    blocks = list(zip(row_blocks(X), offsets(X)[:-1], row_blocks(Yd), strict=True))
    selection = selection_error = None
    if forward:
        keep = _fwd.distinct_candidates(Cand, g)
        K_sel = _fwd.check_n_select(n_centers, keep.shape[0])
        _fwd.check_gram_memory(int(max(X.chunks[0])), d, keep.shape[0], k, K_sel, nt)  # the client's Gram, a block's
        mean = None
        if bias:
            mean = tree([delayed(_target_sum, pure=False)(yb, off, classes) for _, off, yb in blocks], _add).compute() / n
        Cd, sd = delayed(np.ascontiguousarray(Cand[keep])), delayed(entry.spec(g[keep], coef0, deg))
        G = tree([delayed(_gram_block, pure=False)(xb, off, yb, Cd, sd, classes, mean, nt) for xb, off, yb in blocks],
                 _add).compute()
        sel, selection_error = _fwd.select(G, k, K_sel, a, bias, tol)
        selection = keep[sel]
        C, g = Cand[selection], g[selection]
        K = C.shape[0]
    assert C is not None
    Cd, sd = delayed(C), delayed(entry.spec(g, coef0, deg))
    parts = [delayed(_rbf_block, pure=False)(xb, off, yb, Cd, sd, classes, nt) for xb, off, yb in blocks]
    R = tree(parts, _mn.fold_factors).compute()
    W, b = _mn.weights_from_factor(R, n, K, k, a, bias, None)
    dtype = _v.result_dtype(X.dtype) if classify else _v.result_dtype(X.dtype, Yd.dtype)
    return _m.RBFNetwork(C, g, W, b, kernel_value(entry), classes, dtype, single, None, None, selection,
                         selection_error)


