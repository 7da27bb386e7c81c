"""What the models of :mod:`fastrbf.models` share: the fitted models
(:class:`KernelModel`, :class:`RBFNetwork`), the argument checks of data, queries and
targets, the polynomial tail, the n x n Gram buffer of the exact solves and
:class:`ConvergenceWarning`.

Decisions:

- float32 input is computed in float64 inside (factorisations and weights); the
  predictions are returned as float32 when the query and the training data were.
- A model owns its arrays: the caller's ``X``, ``centers``, ``landmarks`` and per-centre
  ``gamma`` are copied when the model would otherwise share their memory (:func:`owned`).
- Data whose squared distances would overflow float64 (``|x| > sqrt(max / (16 d))``)
  and weights that overflow are refused with a ``ValueError``.
- :meth:`KernelModel.without_tail` is the one way to build a model without a
  polynomial tail (kernel ridge, in memory and on dask): the empty tail's arrays are
  spelled once, here.
- ``predict(X, return_grad=True)`` (:func:`values_and_grad`) computes the values and the
  gradient in one fused pass over the centres (:mod:`fastrbf._jit.grad`), not the plain
  ``gram_matvec`` plus a second pass: the kernel's derivative comes from the same
  distances, and the plain path compiles and runs exactly as before.  Gradients are
  float64 inside, returned in the prediction's dtype; (m, d) for one output, the
  Jacobian (m, k, d) otherwise.  A classifier network's gradient is that of its
  decision function.
"""

import itertools
from dataclasses import dataclass
from functools import partial
from typing import Literal, overload

import numpy as np

from .. import _threads
from .. import _validation as _v
from .._jit import grad as _jgrad
from .._pairwise import pairwise
from .._typing import ArrayLike, FloatArray, KernelArg, Threads
from ..cuda.arrays import on_device
from ..kernels import UserKernelValueError, check_kernel, check_user_values, coef0_in, gram, gram_matvec, make_spec

_F64 = np.dtype(np.float64)


def model_data(X, name):
    """Data of a model: 2-D, finite, and with squared distances that cannot overflow."""
    Xa = _v.check_data(X, name)
    _v.check_magnitude(Xa, name, _F64)
    return Xa


def check_xy(X, Y):
    """(data ``X``, targets ``Y`` with one row per row of ``X``), both checked."""
    Xa = model_data(X, "X")
    return Xa, _v.check_targets(Y, Xa.shape[0])


def check_scalar_gamma(gamma):
    """One width for all points: a finite number > 0, as a float."""
    if gamma is None:
        raise ValueError("`gamma` must be a finite number > 0; got None.")
    if _v.ndim(gamma, "gamma") != 0:
        raise TypeError(f"`gamma` must be a number here (one width for all points); got {gamma!r}.")
    return _v.check_real(gamma, "gamma", low=0, strict=True)


def owned(arr, *sources):
    """``arr``, copied if it shares memory with an array the caller passed (and could
    still change): a model owns its arrays."""
    for src in sources:
        if src is not None and np.may_share_memory(arr, src):
            return arr.copy()
    return arr


def check_query(model_dtype, n_features, X):
    """(float64 query points, dtype of the predictions) for a model fitted on
    ``n_features`` features in ``model_dtype``."""
    Xa = model_data(X, "X")
    check_query_features(n_features, Xa.shape)
    return _v.to_dtype(Xa, _F64), _v.result_dtype(Xa, model_dtype)


def check_query_features(n_features, shape):
    """Query points of ``shape`` for a model fitted on ``n_features`` features."""
    if shape[1] != n_features:
        raise ValueError(f"`X` must have {n_features} features (as the training data); got shape {shape}.")


# ---------------------------------------------------------------- polynomial tail
def monomial_powers(d, degree):
    """Exponents of the monomials of total degree <= ``degree`` in ``d`` variables
    (SciPy's order)."""
    out = []
    for deg in range(degree + 1):
        for combo in itertools.combinations_with_replacement(range(d), deg):
            p = [0] * d
            for i in combo:
                p[i] += 1
            out.append(p)
    return np.array(out, dtype=np.int64).reshape(len(out), d)


def polynomial_matrix(X, shift, scale, powers):
    """The monomials ``powers`` of ``(X - shift) / scale``, one column each."""
    Xs = (X - shift) / scale
    P = np.ones((X.shape[0], powers.shape[0]), dtype=np.float64)
    for j, p in enumerate(powers):
        for i, e in enumerate(p):
            if e:
                P[:, j] *= Xs[:, i] ** e
    return P


def polynomial_grad(X, shift, scale, powers, coef):
    """The gradient of the tail ``polynomial_matrix(X, ...) @ coef``: (m, k, d) float64,
    one (m, q) matrix of monomial derivatives at a time."""
    m, d = X.shape
    out = np.zeros((m, coef.shape[1], d))
    Xs = (X - shift) / scale
    for a in range(d):
        P = np.zeros((m, powers.shape[0]))
        for j, p in enumerate(powers):
            if not p[a]:
                continue
            col = p[a] * Xs[:, a] ** (p[a] - 1) / scale[a]
            for i, e in enumerate(p):
                if e and i != a:
                    col = col * Xs[:, i] ** e
            P[:, j] = col
        out[:, :, a] = P @ coef
    return out


def values_and_grad(Xq, centers, weights, *, kernel, gamma, degree=3, coef0=1.0, n_threads=None, length_scale=None):
    """``(K(Xq, centers) @ weights, its gradient in x)`` in one fused pass (float64,
    shapes (m, k) and (m, k, d)): the values of :func:`~fastrbf.kernels.gram_matvec`
    (to rounding) and the Jacobian of each output, no m x n matrix.  ``Xq`` is a checked
    float64 query; with per-feature ``length_scale`` the pass runs on the rescaled
    points and the gradient is divided by the scales (the chain rule)."""
    if length_scale is not None:
        Xq = _v.scale_features(Xq, length_scale, _F64, "X")
        centers = _v.scale_features(centers, length_scale, _F64, "centers")
    m, d = Xq.shape
    k = weights.shape[1]
    _v.check_memory(8 * m * k * (d + 1), f"predict with the gradient: the {m} x {k} x {d} float64 Jacobian",
                    "predict in batches of fewer query points (`X`).")
    entry = check_kernel(kernel)
    spec, _ = make_spec(entry, gamma, centers.shape[0], _F64, degree, coef0)
    out = np.empty((m, k))
    gout = np.empty((m, k, d))
    Yt = np.ascontiguousarray(centers.T, dtype=np.float64)
    Vt = np.ascontiguousarray(weights.T, dtype=np.float64)
    _jgrad.matvec_grad.run(n_threads, Xq, Yt, Vt, *spec.args, out, gout)
    _v.check_result(out, "predict", "`X` and the model's kernel")
    _v.check_result(gout, "The gradient", "`X` and the model's kernel")
    if length_scale is not None:
        gout /= length_scale
    return out, gout


def shaped(values, grad, dtype, single):
    """Predictions and their gradient as returned: ``dtype``; (m,) and (m, d) for a
    single output, else (m, k) and (m, k, d)."""
    values = values.astype(dtype, copy=False)
    grad = grad.astype(dtype, copy=False)
    return (values[:, 0], grad[:, 0]) if single else (values, grad)


@dataclass(frozen=True, eq=False)
class KernelModel:
    """A fitted kernel expansion ``f(x) = sum_i w_i k(x, x_i) + p(x) + b``.

    From :func:`kernel_ridge` and :func:`interpolate`.  Arrays only; picklable.

    Attributes
    ----------
    centers : ndarray of shape (n, d), float64
        The training points (the m landmarks for ``solver="nystrom-pcg"``).
    weights : ndarray of shape (n, k), float64
    kernel, gamma, degree, coef0 :
        The kernel: name and parameters.
    intercept : ndarray of shape (k,)
    poly_powers : ndarray of shape (q, d)
        Exponents of the polynomial tail's monomials (q = 0: none).
    poly_shift, poly_scale : ndarray of shape (d,)
        The monomials are of ``(x - shift) / scale``.
    poly_coef : ndarray of shape (q, k)
    dtype : numpy.dtype
        float32 when the training data were float32.
    single_output : bool
        ``Y`` was 1-D: predictions are 1-D.
    jitter : float
        Jitter added to the diagonal by ``jitter="auto"`` (0 if none).
    solver : str
        ``"cholesky"`` or ``"nystrom-pcg"`` (then ``centers`` are the landmarks and
        ``weights`` the Nystroem coefficients ``beta``); "cholesky" for
        :func:`interpolate` too.
    n_iter : int
        Conjugate-gradient iterations (fused passes over the data) of "nystrom-pcg"; 0
        for a direct solve.
    length_scale : ndarray of shape (d,) or None
        Per-feature widths the kernel sees the data through (``centers`` are in the
        data's own units).
    residual : float
        Final relative residual of the preconditioned system ("nystrom-pcg"; the largest
        over the outputs); 0.0 for a direct solve.
    converged : bool
        Whether "nystrom-pcg" reached ``tol`` (always True for a direct solve).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import interpolate
    >>> m = interpolate(np.array([[0.0], [1.0], [2.0]]), [1.0, 3.0, 2.0], kernel="cubic")
    >>> m.centers.shape, m.poly_powers.shape, m.predict([[1.0]]).round(12).tolist()
    ((3, 1), (2, 1), [3.0])
    """

    centers: np.ndarray
    weights: np.ndarray
    kernel: KernelArg
    gamma: float
    degree: int
    coef0: float
    intercept: np.ndarray
    poly_powers: np.ndarray
    poly_shift: np.ndarray
    poly_scale: np.ndarray
    poly_coef: np.ndarray
    dtype: np.dtype
    single_output: bool
    jitter: float = 0.0
    solver: str = "cholesky"
    n_iter: int = 0
    residual: float = 0.0
    converged: bool = True
    length_scale: np.ndarray | None = None

    @classmethod
    def without_tail(cls, centers: np.ndarray, weights: np.ndarray, *, kernel: KernelArg, gamma: float, degree: int,
                     coef0: float, intercept: np.ndarray, dtype: np.dtype, single_output: bool, jitter: float = 0.0,
                     solver: str = "cholesky", n_iter: int = 0, residual: float = 0.0,
                     converged: bool = True, length_scale: np.ndarray | None = None) -> "KernelModel":
        """A model without a polynomial tail (``q = 0`` monomials), as kernel ridge fits.

        Examples
        --------
        >>> import numpy as np
        >>> m = KernelModel.without_tail(np.zeros((2, 3)), np.ones((2, 1)), kernel="gaussian", gamma=1.0,
        ...                              degree=3, coef0=1.0, intercept=np.zeros(1),
        ...                              dtype=np.dtype(np.float64), single_output=True)
        >>> m.poly_powers.shape, m.poly_coef.shape, m.predict(np.zeros((1, 3))).tolist()
        ((0, 3), (0, 1), [2.0])
        """
        d, k = centers.shape[1], weights.shape[1]
        return cls(centers, weights, kernel, gamma, degree, coef0, intercept, np.zeros((0, d), dtype=np.int64),
                   np.zeros(d), np.ones(d), np.zeros((0, k)), dtype, single_output, jitter, solver, n_iter,
                   residual, converged, length_scale)

    @overload
    def predict(self, X: ArrayLike, *, return_grad: Literal[False] = False,
                n_threads: Threads = None) -> np.ndarray: ...

    @overload
    def predict(self, X: ArrayLike, *, return_grad: Literal[True],
                n_threads: Threads = None) -> tuple[np.ndarray, np.ndarray]: ...

    def predict(self, X: ArrayLike, *, return_grad: bool = False,
                n_threads: Threads = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Evaluate the model at the rows of ``X`` (fused: no n_query x n matrix).

        Parameters
        ----------
        X : array_like of shape (m, d)
        return_grad : bool, default False
            Also return the gradient of the model in ``x`` (kernel terms and polynomial
            tail), computed in the same pass over the centres as the values.
        n_threads : int, optional

        Returns
        -------
        ndarray of shape (m,) or (m, k)
            The values.
        grad : ndarray of shape (m, d) or (m, k, d)
            With ``return_grad=True``: ``grad[i, a]`` (``grad[i, q, a]``: the Jacobian
            of the k outputs) is the derivative of the prediction at ``X[i]`` in
            feature ``a``.  The values returned with it agree with ``predict(X)`` to
            rounding (a few ulp of ``sum_j |w_j k(x, x_j)|``).  Kernels whose
            derivative is infinite at a centre (laplacian/matern12, linear,
            truncated) contribute 0 there (the symmetric subgradient);
            thin_plate_spline's contribution there is its limit, 0.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import kernel_ridge
        >>> X = np.linspace(0, 1, 20)[:, None]
        >>> m = kernel_ridge(X, np.sin(3 * X[:, 0]), gamma=10.0, alpha=1e-6)
        >>> bool(abs(m.predict([[0.5]])[0] - np.sin(1.5)) < 1e-3)
        True
        >>> f, grad = m.predict([[0.5]], return_grad=True)
        >>> grad.shape, bool(abs(grad[0, 0] - 3 * np.cos(1.5)) < 1e-2)
        ((1, 1), True)
        """
        want_grad = _v.check_bool(return_grad, "return_grad")
        if on_device(X):
            return self._predict_device(X, want_grad)
        Xq, dtype = check_query(self.dtype, self.centers.shape[1], X)
        if want_grad:
            out, grad = values_and_grad(Xq, self.centers, self.weights, kernel=self.kernel, gamma=self.gamma,
                                        degree=self.degree, coef0=self.coef0, n_threads=n_threads,
                                        length_scale=self.length_scale)
        else:
            out = gram_matvec(Xq, self.centers, self.weights, kernel=self.kernel, gamma=self.gamma,
                              degree=self.degree, coef0=self.coef0, n_threads=n_threads,
                              length_scale=self.length_scale)
        if self.poly_powers.shape[0]:
            with _threads.serial_blas():
                out += polynomial_matrix(Xq, self.poly_shift, self.poly_scale, self.poly_powers) @ self.poly_coef
                if want_grad:
                    grad += polynomial_grad(Xq, self.poly_shift, self.poly_scale, self.poly_powers, self.poly_coef)
        out += self.intercept
        if want_grad:
            return shaped(out, grad, dtype, self.single_output)
        out = out.astype(dtype, copy=False)
        return out[:, 0] if self.single_output else out

    def _predict_device(self, X, want_grad):
        # rows on a CUDA device: the kernel terms there (fastrbf.cuda.ridge.predict)
        if want_grad or self.poly_powers.shape[0] or self.length_scale is not None:
            raise ValueError("predict on a CUDA device gives values of models without a polynomial tail or "
                             "`length_scale` (kernel_ridge, its Nystroem solvers); pass host rows for gradients "
                             "and for the interpolants.")
        from ..cuda import ridge as _cr

        entry = check_kernel(self.kernel)
        return _cr.predict(X, self.centers, self.weights, self.intercept, entry, self.gamma, self.degree,
                           partial(coef0_in, entry, self.coef0), self.dtype, self.single_output)


def as_targets(Ya):
    """(float64 Fortran-ordered copy of the checked targets as (n, k), were they 1-D?)."""
    single = Ya.ndim == 1
    return np.array(Ya.reshape(Ya.shape[0], -1), dtype=np.float64, order="F", copy=True), single



def gram_buffer(Xd, kernel, gamma, degree, coef0, n_threads, what, whole=True):
    """The n x n float64 Gram matrix; ``whole=False``: radial kernels fill only the
    upper triangle (all that the in-place Cholesky reads)."""
    n = Xd.shape[0]
    _v.check_memory(8 * n * n, f"{what}: the {n} x {n} float64 kernel matrix",
                    "use `rbf_network` with fewer centres for large n.")
    B = np.empty((n, n), dtype=np.float64)
    entry = check_kernel(kernel)
    if entry.radial and not whole:
        spec = entry.spec(np.full(n, gamma), coef0, degree)
        pairwise(Xd, Xd, spec, True, B, n_threads, mirror=False)
        check_user_values(entry, B, Xd, Xd, spec.g, upper=True)
        return B, False
    try:
        gram(Xd, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, out=B, n_threads=n_threads)
    except UserKernelValueError:
        raise
    except ValueError:  # the only refusal left for validated input: an overflow
        names = "`X` and `gamma`" if entry.radial else "`X`, `gamma`, `degree` and `coef0`"
        raise ValueError(f"{what}: the kernel matrix overflows float64 for these {names}; rescale the data or use "
                         "a smaller `gamma`.") from None
    return B, True



class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before reaching ``tol`` (the result
    is returned, with ``converged=False``).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from fastrbf import ConvergenceWarning, kernel_ridge
    >>> X = np.linspace(0, 1, 200)[:, None]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     m = kernel_ridge(X, np.sin(6 * X[:, 0]), gamma=30.0, alpha=1e-8, solver="nystrom-pcg",
    ...                      n_landmarks=50, max_iter=2)
    >>> m.converged, caught[0].category is ConvergenceWarning
    (False, True)
    """



def check_model_weights(W):
    """Refuse weights that overflowed (a ``ValueError`` naming what to change)."""
    _v.check_result(W, "The model's weight matrix", "`Y`, `alpha` and `gamma`",
                    "rescale `Y`, or use a larger `alpha` (or `gamma`).")


@dataclass(frozen=True, eq=False)
class RBFNetwork:
    """A fitted RBF network ``f(x) = sum_j w_j phi(||x - c_j||^2; gamma_j) + b``.

    From :func:`rbf_network`.  Arrays only; picklable.

    Attributes
    ----------
    centers : ndarray of shape (K, d), float64
    gamma : ndarray of shape (K,)
        One width per centre.
    weights : ndarray of shape (K, k)
    bias : ndarray of shape (k,)
        Zeros when fitted with ``bias=False``.
    kernel : str
    classes : ndarray or None
        The class labels for a classifier (``.predict`` returns them), else None.
    dtype : numpy.dtype
    single_output : bool
    error_history : ndarray or None
        With ``learn_gamma``: the objective of the gamma steps / N after each accepted
        step, the starting value first (non-increasing).
    length_scale : ndarray of shape (d,) or None
        Per-feature widths the kernel sees the data through (``centers`` are in the
        data's own units).
    selection : ndarray of shape (K,), int64, or None
        With ``centers="forward"``: the chosen candidates' indices into the candidate
        set, in the order they were chosen (``centers[i]`` is candidate
        ``selection[i]``).
    selection_error : ndarray of shape (K,) or None
        With ``centers="forward"``: the relative training error after each added centre
        (non-increasing; see :func:`rbf_network`'s ``tol``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import rbf_network
    >>> X = np.linspace(0, 1, 50)[:, None]
    >>> net = rbf_network(X, np.sin(4 * X[:, 0]), centers=X[::5], gamma=20.0)
    >>> net.centers.shape, net.weights.shape, net.bias.shape
    ((10, 1), (10, 1), (1,))
    """

    centers: np.ndarray
    gamma: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    kernel: KernelArg
    classes: np.ndarray | None
    dtype: np.dtype
    single_output: bool
    error_history: np.ndarray | None = None
    length_scale: np.ndarray | None = None
    selection: np.ndarray | None = None
    selection_error: np.ndarray | None = None

    @overload
    def decision_function(self, X: ArrayLike, *, return_grad: Literal[False] = False,
                          n_threads: Threads = None) -> FloatArray: ...

    @overload
    def decision_function(self, X: ArrayLike, *, return_grad: Literal[True],
                          n_threads: Threads = None) -> tuple[FloatArray, FloatArray]: ...

    def decision_function(self, X: ArrayLike, *, return_grad: bool = False,
                          n_threads: Threads = None) -> FloatArray | tuple[FloatArray, FloatArray]:
        """The network's output: regression values, or the scores of a classifier
        (1-D for two classes, one column per class otherwise).

        With ``return_grad=True`` also its gradient in ``x``, from the same pass over
        the centres: shape (m, d) for one output, (m, k, d) (the Jacobian) otherwise; the
        values agree with the plain call to rounding.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import rbf_network
        >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        >>> net = rbf_network(X, [1, -1, -1, 1], centers=np.array([[0.0, 0.2], [1.0, 0.7]]), gamma=1.0)
        >>> net.decision_function(X).round(3)
        array([ 1.022, -1.317, -0.441,  0.737])
        >>> s, grad = net.decision_function(X[:1], return_grad=True)
        >>> grad.shape
        (1, 2)
        """
        want_grad = _v.check_bool(return_grad, "return_grad")
        if on_device(X):
            # rows on a CUDA device: the kernel terms there (fastrbf.cuda.ridge.predict)
            if want_grad or self.length_scale is not None:
                raise ValueError("decision_function on a CUDA device gives values of networks without "
                                 "`length_scale`; pass host rows for gradients.")
            from ..cuda import ridge as _cr

            entry = check_kernel(self.kernel)
            return _cr.predict(X, self.centers, self.weights, self.bias, entry, self.gamma, 3,
                               partial(coef0_in, entry, 1.0), self.dtype, self.single_output)
        Xq, dtype = check_query(self.dtype, self.centers.shape[1], X)
        if want_grad:
            out, grad = values_and_grad(Xq, self.centers, self.weights, kernel=self.kernel, gamma=self.gamma,
                                        n_threads=n_threads, length_scale=self.length_scale)
            out += self.bias
            return shaped(out, grad, dtype, self.single_output)
        out = gram_matvec(Xq, self.centers, self.weights, kernel=self.kernel, gamma=self.gamma, n_threads=n_threads,
                          length_scale=self.length_scale)
        out += self.bias
        out = out.astype(dtype, copy=False)
        return out[:, 0] if self.single_output else out

    @overload
    def predict(self, X: ArrayLike, *, return_grad: Literal[False] = False,
                n_threads: Threads = None) -> np.ndarray: ...

    @overload
    def predict(self, X: ArrayLike, *, return_grad: Literal[True],
                n_threads: Threads = None) -> tuple[np.ndarray, FloatArray]: ...

    def predict(self, X: ArrayLike, *, return_grad: bool = False,
                n_threads: Threads = None) -> np.ndarray | tuple[np.ndarray, FloatArray]:
        """Regression values, or class labels for a classifier (sign for two classes,
        the largest one-vs-rest score otherwise).

        With ``return_grad=True`` also a gradient in ``x``, as
        :meth:`decision_function` gives it: of the values for regression; for a
        classifier of the decision function (the scores) only, since the labels are
        piecewise constant.

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import rbf_network
        >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        >>> net = rbf_network(X, ["a", "b", "b", "a"], centers=X, gamma=1.0, classify=True)
        >>> net.predict(X).tolist()
        ['a', 'b', 'b', 'a']
        >>> labels, score_grad = net.predict(X, return_grad=True)
        >>> labels.tolist(), score_grad.shape
        (['a', 'b', 'b', 'a'], (4, 2))
        """
        if self.classes is not None and on_device(X):
            raise ValueError("a classifier's labels are made on the host: pass host rows, or take the scores on the "
                             "device with decision_function.")
        if _v.check_bool(return_grad, "return_grad"):
            s, grad = self.decision_function(X, return_grad=True, n_threads=n_threads)
        else:
            s = self.decision_function(X, n_threads=n_threads)
        labels = s if self.classes is None else (
            self.classes[(s > 0).astype(np.int64)] if s.ndim == 1 else self.classes[np.argmax(s, axis=1)])
        return (labels, grad) if return_grad else labels



def network_targets(Y, n, classify, name="Y"):
    """(float64 targets (n, k) Fortran-ordered, single output?, classes or None): the
    values for regression, -1/+1 codes (two classes) or one-vs-rest codes."""
    if not classify:
        Ya = _v.check_targets(Y, n, name)
        T, single = as_targets(Ya)
        return T, single, None
    classes, idx = _v.check_class_labels(Y, n, name)
    check_n_classes(classes.shape[0])
    return class_codes(idx, classes.shape[0]), classes.shape[0] == 2, classes


def check_n_classes(n_classes):
    """A classifier needs at least two classes."""
    if n_classes < 2:
        raise ValueError(f"`Y` must have at least 2 classes with `classify=True`; got {n_classes}.")


def class_codes(idx, n_classes):
    """-1/+1 targets: one column (the second class positive) for two classes, one per
    class (one-vs-rest) otherwise; Fortran-ordered float64."""
    if n_classes == 2:
        return np.asfortranarray(np.where(idx == 1, 1.0, -1.0)[:, None])
    T = np.full((idx.shape[0], n_classes), -1.0, order="F")
    T[np.arange(idx.shape[0]), idx] = 1.0
    return T

