"""``predict`` and ``decision_function`` of fitted models on dask arrays, blockwise
(the model is shipped with the graph).
"""


import dask.array as da
import numpy as np

from .. import _validation as _v
from .. import models as _m
from ..models.common import check_query_features
from .common import (
    Data,
    as_rows,
    block_offset,
    check_threads,
    raise_global,
)


# ---------------------------------------------------------------- prediction
def _predict_block(Xb, model, method, n_threads, block_info=None):
    try:
        return getattr(model, method)(Xb, n_threads=n_threads)
    except ValueError as exc:
        raise_global(exc, (Xb, block_offset(block_info), "X"))
        raise  # not reached


def predict(model: _m.RBFNetwork | _m.KernelModel | _m.PartitionOfUnityInterpolant, X: Data, *,
            n_threads: int | None = 1) -> da.Array:
    """``model.predict`` on a dask array, blockwise (the model is shipped with the graph).

    Parameters
    ----------
    model : RBFNetwork, KernelModel or PartitionOfUnityInterpolant
    X : dask.array.Array of shape (m, d), chunked by rows
    n_threads : int, default 1
        Threads of each task.

    Returns
    -------
    dask.array.Array of shape (m,) or (m, k)
        Regression values, or class labels of a classifier.

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> m = fastrbf.kernel_ridge(X, np.sin(3 * X[:, 0]), gamma=10.0, alpha=1e-6)
    >>> out = fd.predict(m, da.from_array(X, chunks=(8, 1)))
    >>> bool(np.allclose(out.compute(scheduler="threads"), m.predict(X)))
    True
    """
    return _predict(model, X, "predict", n_threads)


def decision_function(model: _m.RBFNetwork, X: Data, *, n_threads: int | None = 1) -> da.Array:
    """``model.decision_function`` of an :class:`~fastrbf.RBFNetwork` on a dask array.

    Examples
    --------
    >>> import numpy as np, dask.array as da, fastrbf
    >>> from fastrbf import dask as fd
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> net = fastrbf.rbf_network(X, [1, -1, -1, 1], centers=X[:2], gamma=1.0)
    >>> s = fd.decision_function(net, da.from_array(X, chunks=(3, 2)))
    >>> bool(np.allclose(s.compute(scheduler="threads"), net.decision_function(X)))
    True
    """
    if not isinstance(model, _m.RBFNetwork):
        raise TypeError(f"`model` must be an RBFNetwork; got {type(model).__name__}.")
    return _predict(model, X, "decision_function", n_threads)


def _predict(model, X, method, n_threads):
    nt = check_threads(n_threads)
    if not isinstance(model, (_m.RBFNetwork, _m.KernelModel, _m.PartitionOfUnityInterpolant)):
        raise TypeError(f"`model` must be an RBFNetwork or a KernelModel; got {type(model).__name__}.")
    X = as_rows(X)
    d = model.centers.shape[1]
    check_query_features(d, X.shape)
    ftype = _v.result_dtype(X.dtype, model.dtype)
    k = model.patch_w.shape[0] if isinstance(model, _m.PartitionOfUnityInterpolant) else model.weights.shape[1]
    classes = getattr(model, "classes", None)
    labels = method == "predict" and classes is not None
    dtype = np.asarray(classes).dtype if labels else ftype
    kw = {"model": model, "method": method, "n_threads": nt, "dtype": dtype}
    if labels or model.single_output:
        return X.map_blocks(_predict_block, drop_axis=1, meta=np.empty((0,), dtype), **kw)
    return X.map_blocks(_predict_block, chunks=(X.chunks[0], (k,)), meta=np.empty((0, 0), dtype), **kw)

