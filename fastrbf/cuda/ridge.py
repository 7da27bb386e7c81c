"""The device side of kernel ridge (``solver="nystrom-pcg"``) and of the kernel models'
``predict`` for data on a CUDA device.

Falkon's preconditioned conjugate gradients stay on the host, on m x m matrices
(:func:`fastrbf.models.falkon.falkon_solve`); what touches the n rows runs here: the
targets centred and scaled, the rows the landmarks are chosen from gathered (the same
rows, hence the same landmarks, as on the CPU for the same seed), ``K(X, L)^T T`` and
each iteration's ``K(X, L)^T (K(X, L) V)`` as two matrix-free products.  Kernel values
are computed in the data's dtype (float32 stays float32), the products' vectors and
sums in float64.  Per iteration the host sends and reads m x k numbers.

``predict``: the model's centres and weights (m x d and m x k numbers, the model's own)
are copied to the device at each call; the result is of the query's kind, in the
model's dtype.
"""

import numpy as np

from .._jit.cuda import reduce as _jr
from .._jit.cuda.target import TILE, blocks
from . import data
from .arrays import Device
from .pairwise import kernel_function, matvec


class Passes:
    """The passes over device data ``X`` (n, d) and targets ``Y`` (n,) or (n, k) of one
    Nystroem fit with registry entry ``entry`` and checked scalar parameters
    (``coef0_in``: see :func:`fastrbf.cuda.data.kernel_coef0`)."""

    def __init__(self, X, Y, entry, gamma, degree, coef0_in):
        self.dev = dev = Device(X)
        with dev.context():
            Xv = data.array(dev, X, "X")
            Yv = data.array(dev, Y, "Y", ndim=1 if len(Y.shape) == 1 else 2)
            if Yv.shape[0] != Xv.shape[0]:
                raise ValueError(f"`Y` must have one row per row of `X` ({Xv.shape[0]}); got shape {tuple(Yv.shape)}.")
            self.dtype = data.result_dtype(Xv, Yv)
            data.check_values(dev, Xv, "X", self.dtype)
            data.check_values(dev, Yv, "Y", magnitude=False)
            self.X = data.as_dtype(dev, Xv, self.dtype)
            self.Y = Yv.reshape(Yv.shape[0], 1) if Yv.ndim == 1 else Yv
            self.single = Yv.ndim == 1
            self.g_rows = data.full(dev, Xv.shape[0], gamma, self.dtype)
        self.shape = tuple(self.X.shape)
        self.phi, self.radial = kernel_function(entry, self.dtype)
        self.coef0 = data.kernel_coef0(coef0_in, self.dtype)
        self.degree = int(degree)
        self.gamma = gamma
        self.T = self.L = self.g_land = None

    def targets(self, fit_intercept):
        """Centre (when ``fit_intercept``) and scale the targets on the device: (the
        intercept (k,), the scale max|Y - intercept|, 1 when that is 0)."""
        dev, n, k = self.dev, self.shape[0], self.Y.shape[1]
        with dev.context():
            mu = np.zeros(k)
            if fit_intercept:
                from .cluster import ClusterSums

                sums = ClusterSums(dev, self.Y, data.full(dev, n, 1.0, np.float64), 1)
                sums(data.full(dev, n, 0, np.int64), dev.scratch((1, k), self.Y.dtype))
                mu = sums.sums.copy_to_host()[0] / n
            self.T = dev.scratch((n, k), np.float64)
            grid = ((blocks(n, TILE), blocks(k, TILE)), (TILE, TILE))
            _jr.affine_kernel()[grid](self.Y, dev.to_device(mu), dev.to_device(np.ones(k)), self.T)
            big = data.stats(dev, self.T)[1]
            scale = big if big > 0 else 1.0
            _jr.scale_kernel()[grid](self.T, dev.to_device(np.full(k, scale)), self.T)
        return mu, scale

    def rows(self, idx):
        """The rows ``idx`` of ``X`` (all rows when None) on the host, float64: the pool the
        landmarks are chosen from."""
        dev = self.dev
        with dev.context():
            if idx is None:
                idx = np.arange(self.shape[0])
            rows = dev.to_device(np.asarray(idx, dtype=np.int64))
            out = dev.scratch((len(idx), self.shape[1]), self.dtype)
            _jr.gather_kernel()[(blocks(len(idx), TILE), blocks(self.shape[1], TILE)), (TILE, TILE)](self.X, rows, out)
            return out.copy_to_host().astype(np.float64)

    def set_landmarks(self, L):
        """The landmarks (host, m x d) on the device, in the data's dtype."""
        with self.dev.context():
            self.L = self.dev.to_device(np.ascontiguousarray(L, dtype=self.dtype))
            self.g_land = data.full(self.dev, L.shape[0], self.gamma, self.dtype)

    def _product(self, A, B, g, V):
        out = self.dev.scratch((A.shape[0], V.shape[1]), np.float64)
        matvec(self.dev, A, B, V, g, self.phi, self.radial, self.coef0, self.degree, out)
        return out

    def cross_t(self):
        """``K(X, L)^T T`` (m, k) float64 on the host."""
        with self.dev.context():
            return self._product(self.L, self.X, self.g_rows, self.T).copy_to_host()

    def normal(self, V):
        """``K(X, L)^T (K(X, L) V)`` (m, k') float64 on the host, for ``V`` (m, k') on the host."""
        with self.dev.context():
            Vd = self.dev.to_device(np.ascontiguousarray(V, dtype=np.float64).reshape(V.shape[0], -1))
            U = self._product(self.X, self.L, self.g_land, Vd)
            return self._product(self.L, self.X, self.g_rows, U).copy_to_host()


def predict(Xq, centers, weights, intercept, entry, gamma, degree, coef0_in, dtype, single):
    """A kernel model's (or RBF network's: one ``gamma`` per centre, its bias as the
    intercept) values at device rows ``Xq`` (see the module docstring)."""
    dev = Device(Xq)
    with dev.context():
        Qv = data.array(dev, Xq, "X")
        if Qv.shape[1] != centers.shape[1]:
            raise ValueError(f"`X` must have {centers.shape[1]} features (as the training data); "
                             f"got shape {tuple(Qv.shape)}.")
        qdt = data.result_dtype(Qv) if np.dtype(dtype) == np.float32 else np.dtype(np.float64)
        data.check_values(dev, Qv, "X", qdt)
        Qc = data.as_dtype(dev, Qv, qdt)
        m = centers.shape[0]
        W = np.ascontiguousarray(weights, dtype=np.float64).reshape(m, -1)
        Cd = dev.to_device(np.ascontiguousarray(centers, dtype=qdt))
        phi, radial = kernel_function(entry, qdt)
        n, k = Qc.shape[0], W.shape[1]
        tot = dev.scratch((n, k), np.float64)
        g = np.ascontiguousarray(np.broadcast_to(np.asarray(gamma, dtype=qdt), (m,)))  # scalar or one per centre
        matvec(dev, Qc, Cd, dev.to_device(W), dev.to_device(g), phi, radial,
               data.kernel_coef0(coef0_in, qdt), int(degree), tot)
        res, ov = dev.empty((n,) if single else (n, k), dtype)
        ov2 = ov.reshape(n, 1) if single else ov
        grid = ((blocks(n, TILE), blocks(k, TILE)), (TILE, TILE))
        _jr.affine_kernel()[grid](tot, dev.to_device(-np.asarray(intercept, dtype=np.float64)), dev.to_device(np.ones(k)),
                                  ov2)
        data.check_finite_result(dev, ov, "predict", "`X` and the model's weights")
        return dev.result(res)
