"""scikit-learn compatible estimators (the optional extra ``fastrbf[sklearn]``).

Thin wrappers: ``fit`` validates its input with scikit-learn's machinery
(``validate_data``: the error messages, ``n_features_in_`` and ``feature_names_in_``
that scikit-learn's checks expect), calls the functional API and keeps the frozen
model it returns in ``model_`` (picklable, usable without scikit-learn), plus the usual
fitted attributes.  ``predict``/``transform`` validate ``X`` the same way and call the
model.  Every estimator passes ``sklearn.utils.estimator_checks.check_estimator``.

- :class:`RBFNetworkRegressor` (multi-output) and :class:`RBFNetworkClassifier`:
  :func:`fastrbf.rbf_network` (``classify=True`` for the classifier);
- :class:`KernelRidge` (multi-output): :func:`fastrbf.kernel_ridge`;
- :class:`KernelRidgeCV` (multi-output): :func:`fastrbf.kernel_ridge_cv` (``gamma`` and
  ``alpha`` chosen by closed-form leave-one-out or GCV over a grid);
- :class:`RBFInterpolatorRegressor` (multi-output): :func:`fastrbf.interpolate`;
- :class:`KMeans` (clusterer and transformer): :func:`fastrbf.kmeans`;
  :class:`KernelKMeans` (clusterer): :func:`fastrbf.kernel_kmeans`;
- :class:`RandomFourierFeatures` and :class:`Nystroem` (transformers):
  :func:`fastrbf.random_fourier` and :func:`fastrbf.nystroem`;
- :class:`GaussianProcessRegressor`: :func:`fastrbf.gaussian_process` given a
  scikit-learn kernel object (scikit-learn's names throughout), or PRML's covariance
  (``gaussian_process(kernel="prml")``) given a kernel name and its ``theta``;
- :class:`VecchiaGaussianProcessRegressor`: :func:`fastrbf.vecchia_gaussian_process`
  (millions of points; kernels by name, as the functional API).

Conventions and decisions:

- Parameter names are scikit-learn's where it has them; ``random_state`` is passed as
  fastrbf's ``seed`` (None, an int >= 0 and a ``numpy.random.Generator`` as they are; a
  ``numpy.random.RandomState`` gives one int drawn from it, as scikit-learn derives
  seeds), ``n_jobs`` as ``n_threads`` unchanged: ``None`` is fastrbf's default (the
  innermost :func:`fastrbf.threads` block, else all cores; scikit-learn's ``None``
  means one job), ``-1`` all cores, ``-2`` all but one, ``0`` an error.
- ``gamma=None`` is scikit-learn's ``1 / n_features`` (:class:`KernelRidge`,
  :class:`Nystroem`, the RBF networks); :class:`RandomFourierFeatures` defaults to
  ``gamma=1.0`` as ``RBFSampler``.
- ``kernel`` names are fastrbf's (:data:`fastrbf.KERNELS`); scikit-learn's unambiguous
  names are accepted as aliases: ``"rbf"`` (gaussian), ``"poly"`` (polynomial),
  ``"sigmoid"`` (tanh).  Beware: fastrbf's ``"linear"`` and ``"laplacian"`` are the
  radial kernels ``-r`` and ``exp(-sqrt(gamma) r)``, not scikit-learn's ``x . y`` and
  L1 Laplacian.
- dtype: float32 ``X`` gives float32 predictions and transforms.  The regressors fit
  float32 targets when ``X`` is float32 (as scikit-learn's ``Ridge``: ``y`` is cast to
  ``X``'s dtype; fastrbf solves in float64 inside either way);
  :class:`GaussianProcessRegressor` computes in float64 and casts its outputs.
- :class:`RBFInterpolatorRegressor` follows SciPy's ``RBFInterpolator``: ``kernel``,
  ``epsilon``, ``smoothing``, ``degree``.  fastrbf's radial kernels take ``gamma r^2``,
  so ``gamma = epsilon ** 2`` exactly (SciPy's ``phi(epsilon r)``).
- :class:`Nystroem` uses at most ``n_samples`` landmarks (scikit-learn's rule, without
  its warning); ``n_components_`` is the number used.  :class:`RBFNetworkRegressor`
  refuses ``n_centers > n_samples`` instead (an error naming both).
- :class:`GaussianProcessRegressor` given a scikit-learn kernel object mirrors
  scikit-learn's estimator: the kernel object keeps the books (its ``theta``, bounds and
  fixed hyperparameters; the fitted ``kernel_`` is a clone with the optimum), fastrbf
  computes the likelihood, its gradient and the predictions (see
  :mod:`fastrbf.gp._sklearn_kernels` for the kernels covered).  Given a name (PRML's GP), fastrbf's
  GP optimises a noise variance (``noise``, scikit-learn's ``WhiteKernel``) besides the
  kernel parameters, so the parameter is ``noise`` (a start), not scikit-learn's fixed
  ``alpha``; ``optimizer=None`` keeps ``theta``/``noise`` fixed.  The warning of
  :func:`fastrbf.gaussian_process` when the optimum sits on a bound is re-issued as
  scikit-learn's ``ConvergenceWarning`` (scikit-learn's category for the same event;
  the re-issue uses ``warnings.catch_warnings``, which is not thread-safe before
  Python 3.14: fitting GPs from several Python threads at once may misroute warnings).
- Progress: :class:`KMeans` has scikit-learn's ``verbose`` (``verbose > 0`` is
  ``progress=True`` of :func:`fastrbf.kmeans`: reports on stderr).  The other
  estimators' scikit-learn counterparts have no such parameter; for progress of their
  fits call :func:`fastrbf.kernel_ridge`, :func:`fastrbf.gaussian_process` or
  :func:`fastrbf.rbf_network` with ``progress``.
- Errors raised by ``fit`` name the estimator's own parameters: the messages of the
  functional API are given the estimator's names (``smoothing`` for ``alpha``,
  ``epsilon`` for ``gamma``, ``theta`` for ``theta0``, ``n_restarts_optimizer`` for
  ``n_restarts``, ``fit_intercept`` for ``bias``, ``n_centers`` for the k-means'
  ``n_clusters``, ``random_state``, ``n_jobs``, ``y``), and every parameter is checked
  before any expensive work (the k-means of the RBF networks).  Boolean parameters
  must be bools (``TypeError`` otherwise, not truthiness).  ``X`` and ``y`` are
  checked by scikit-learn (its messages).
- A fit that would overflow float64 is refused with a ``ValueError`` naming ``X`` and
  ``y`` instead of returning a model that predicts inf or NaN: ``X`` (or ``centers``)
  whose float64 squared distances overflow, refused first, as by
  :func:`fastrbf.gram` (:class:`KMeans` takes data of any magnitude, as
  :func:`fastrbf.kmeans`; :class:`RandomFourierFeatures` forms no distances); kernel
  values that overflow at the spread of ``X`` (growing kernels: thin-plate spline,
  cubic, polynomial, ...); and weights that come out non-finite.
- ``sample_weight`` is not supported (fastrbf's ``kmeans`` has it, but scikit-learn's
  weight-equivalence checks cannot pass for a randomly seeded k-means++).
"""

try:
    # the estimators need scikit-learn >= 1.6 (validate_data): say so before any of them imports it
    from sklearn.utils.validation import validate_data  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "fastrbf.sklearn needs scikit-learn >= 1.6: install the extra with "
        "`pip install 'fastrbf[sklearn]'`."
    ) from exc

from ._approx import Nystroem, RandomFourierFeatures
from ._cluster import KernelKMeans, KMeans
from ._gp import GaussianProcessRegressor, VecchiaGaussianProcessRegressor
from ._network import RBFNetworkClassifier, RBFNetworkRegressor
from ._ridge import KernelRidge, KernelRidgeCV, RBFInterpolatorRegressor

__all__ = [
    "GaussianProcessRegressor",
    "KMeans",
    "KernelKMeans",
    "KernelRidge",
    "KernelRidgeCV",
    "Nystroem",
    "RBFInterpolatorRegressor",
    "RBFNetworkClassifier",
    "RBFNetworkRegressor",
    "RandomFourierFeatures",
    "VecchiaGaussianProcessRegressor",
]
