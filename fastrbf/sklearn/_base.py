"""What the estimators share: argument translation (seeds, threads, kernel names), input
validation, error messages in scikit-learn's names, the numpydoc blocks of their
docstrings, and the two base classes."""

import inspect
import numbers
import re

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _threads
from .. import _validation as _v
from .._typing import ArrayLike
from ..kernels import KERNELS, check_kernel, check_params, gram, is_user
from ..user_kernels import user_kernel

_FLOATS = [np.float64, np.float32]
_ALIASES = {"rbf": "gaussian", "poly": "polynomial", "sigmoid": "tanh"}


# ---------------------------------------------------------------- helpers
def to_seed(random_state):
    """fastrbf's ``seed`` from scikit-learn's ``random_state``, checked by fastrbf's seed
    rule (:func:`fastrbf._validation.check_seed`) under the name ``random_state``."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    try:
        _v.check_seed(random_state, name="random_state")
    except (TypeError, ValueError) as exc:
        raise type(exc)("`random_state` must be None, an int >= 0, a numpy.random.RandomState or a "
                        f"numpy.random.Generator; got {random_state!r}.") from None
    return int(random_state) if isinstance(random_state, numbers.Integral) else random_state


def random_state_of(random_state):
    """scikit-learn's ``check_random_state`` (a ``numpy.random.RandomState``: the one
    passed, the global one for None, a new one seeded by an int) for the code that draws
    as scikit-learn does, with the messages naming `random_state`; an int must be a
    RandomState seed (below 2**32), and a ``numpy.random.Generator`` seeds a new one.

    Examples
    --------
    >>> import numpy as np
    >>> random_state_of(3).randint(100) == np.random.RandomState(3).randint(100)
    True
    """
    from sklearn.utils import check_random_state

    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(int(random_state.integers(2**32)))
    to_seed(random_state)
    if isinstance(random_state, numbers.Integral) and int(random_state) >= 2**32:
        raise ValueError(f"`random_state` must be below 2**32 (a numpy.random.RandomState seed); got {random_state!r}.")
    return check_random_state(random_state)


def to_n_threads(n_jobs):
    """``n_jobs`` checked by fastrbf's rule (messages naming `n_jobs`), passed as is."""
    try:
        _threads.resolve(n_jobs)
    except (TypeError, ValueError) as exc:
        raise type(exc)(str(exc).replace("`n_threads`", "`n_jobs`")) from None
    return n_jobs


def to_progress(value):
    """scikit-learn's ``verbose`` (an int >= 0, or a bool) as fastrbf's ``progress``:
    ``verbose > 0`` reports on stderr."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return _v.check_int(value, "verbose", 0) > 0


#: fastrbf's names of the parameters that every estimator calls otherwise
_RENAMES = {"seed": "random_state", "n_threads": "n_jobs", "Y": "y"}
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def call_renamed(func, *args, renames=None, replace=(), remedy=None, **kwargs):
    """``func(*args, **kwargs)`` whose error messages name the estimator's parameters:
    a backticked fastrbf name in ``_RENAMES`` or ``renames`` becomes the estimator's
    name, and each ``(old, new)`` text of ``replace`` is substituted (remedies that the
    estimator does not offer, for example).  With ``remedy``, a ``ValueError`` that names
    no argument (a solve that met the inf/NaN of an overflow) and non-finite results
    (:func:`_check_overflow`) are reported as an overflow with that remedy."""
    names = {**_RENAMES, **(renames or {})}
    try:
        out = func(*args, **kwargs)
    except (ValueError, TypeError, MemoryError) as exc:  # np.linalg.LinAlgError is a ValueError
        if exc.args and isinstance(exc.args[0], str):
            msg = _NAME.sub(lambda m: f"`{names.get(m.group(1), m.group(1))}`", exc.args[0])
            for old, new in replace:
                msg = msg.replace(old, new)
            if remedy is not None and isinstance(exc, ValueError) and not _NAME.search(msg):
                raise ValueError(_overflow(remedy)) from exc
            exc.args = (msg, *exc.args[1:])
        raise
    if remedy is not None:
        _check_overflow(out, remedy)
    return out


def check_range(X, kernel, gamma, degree, coef0, scale_name):
    """Refuse data whose kernel values overflow: a growing radial kernel at the diagonal
    of the bounding box of ``X`` (its largest value over pairs of rows, or above), a
    dot-product kernel at +-(the largest squared norm).  Cheap: a 2 x 2 kernel matrix."""
    spec = check_kernel(kernel)
    check_params(spec, degree, coef0)  # `degree`, `coef0` named here: a ValueError of gram below is an overflow
    sparse = hasattr(X, "tocsr")  # scipy.sparse: its min and max count the implicit zeros
    X = X.astype(np.float64) if sparse else np.asarray(X, dtype=np.float64)
    dense = (lambda a: np.asarray(a.todense()).reshape(-1)) if sparse else (lambda a: a)
    if spec.radial:
        P = np.stack([dense(X.min(axis=0)), dense(X.max(axis=0))])
    else:
        with np.errstate(over="ignore"):
            sq = np.asarray(X.multiply(X).sum(axis=1)).reshape(-1) if sparse else np.einsum("ij,ij->i", X, X)
            row = dense(X[int(np.argmax(sq))])
        P = np.stack([row, -row])
    g = float(np.max(gamma))  # the largest width gives the largest values of a growing kernel
    with np.errstate(all="ignore"):
        try:
            K = gram(P[:1], P, kernel=kernel, gamma=g, degree=degree, coef0=coef0, n_threads=1)
        except ValueError:  # gram refuses kernel values that overflow (its message names its own arguments)
            K = None
    if K is None or not np.all(np.isfinite(K)):
        raise ValueError(f"`X` spans too wide a range for the {spec.name!r} kernel: its values between far-apart "
                         f"points of `X` overflow float64; rescale `X` or use a smaller `{scale_name}`.")


def _overflow(remedy):
    return f"The fit of {remedy}"


XY_OVERFLOW = ("`X` and `y` overflowed (the solve met non-finite values): their magnitudes are too extreme for "
               "float64; ")


def _check_overflow(model, remedy):
    """Refuse a fitted model with non-finite weights (so that it never predicts NaN)."""
    for attr in ("weights", "bias", "poly_coef", "intercept", "alpha", "y_mean", "y_std", "normalization"):
        value = getattr(model, attr, None)
        if isinstance(value, (np.ndarray, float)) and not np.all(np.isfinite(value)):
            raise ValueError(_overflow(remedy))


def scalar_gamma(gamma):
    """One kernel width: a finite number > 0 (None is resolved before this)."""
    if not _v.is_real(gamma):
        raise TypeError(f"`gamma` must be a finite number > 0 (or None); got {gamma!r}.")
    return _v.check_real(gamma, "gamma", low=0, strict=True)


def resolve_kernel(kernel):
    """A built-in kernel's name (aliases resolved), or a user kernel (given by object
    or by name)."""
    if is_user(kernel):
        return kernel
    if isinstance(kernel, str) and kernel not in KERNELS and kernel not in _ALIASES and user_kernel(kernel):
        return user_kernel(kernel)
    name = _v.check_choice(kernel, "kernel", (*KERNELS, *_ALIASES),
                           text=f"one of {sorted(KERNELS)} or an alias {sorted(_ALIASES)}")
    return _ALIASES.get(name, name)


#: scikit-learn's kernel names that are not fastrbf's kernel of that name ("laplacian":
#: scikit-learn's uses the L1 distance, fastrbf's the Euclidean one, which is "matern12"
#: here) or not one of fastrbf's at all; the estimators that stand in for scikit-learn's
#: compute them, and callable kernels, by scikit-learn's ``pairwise_kernels``
SKLEARN_KERNELS = ("laplacian", "chi2", "additive_chi2", "cosine")


def is_sklearn_kernel(kernel, degree=None):
    """Whether ``kernel`` is one that scikit-learn computes for the estimator: a name of
    :data:`SKLEARN_KERNELS`, the polynomial kernel of a ``degree`` that is not an
    integer (fastrbf's takes integer powers), or a callable ``kernel(x, y,
    **kernel_params)`` (not a fastrbf user kernel)."""
    if isinstance(kernel, str):
        return kernel in SKLEARN_KERNELS or (
            kernel in ("poly", "polynomial") and _v.is_real(degree) and not float(degree).is_integer())
    return callable(kernel) and not is_user(kernel)


def sklearn_kernel_params(est, params=("gamma", "degree", "coef0")):
    """The keyword arguments of scikit-learn's ``pairwise_kernels`` for the estimator's
    kernel (scikit-learn's rules): ``kernel_params`` and, for a name, the parameters of
    ``params`` that are set (``filter_params`` keeps those the kernel takes); a callable
    takes ``kernel_params`` only."""
    extra = est.kernel_params
    if extra is not None and not isinstance(extra, dict):
        raise TypeError(f"`kernel_params` must be None or a dict; got {extra!r}.")
    kw = dict(extra or {})
    set_ = {p: getattr(est, p) for p in params if getattr(est, p) is not None}
    if callable(est.kernel):
        if set_:
            raise ValueError(f"Don't pass gamma, coef0 or degree to {type(est).__name__} if using a callable kernel: "
                             f"give the callable's parameters in `kernel_params`; got {set_}.")
        return kw
    return {**set_, **kw}


def sklearn_gram(X, Y, kernel, kernel_params):
    """``K(X, Y)`` (float64) of a kernel of :func:`is_sklearn_kernel`, by scikit-learn's
    ``pairwise_kernels`` (NumPy, or the callable once per pair: none of fastrbf's speed)."""
    from sklearn.metrics.pairwise import pairwise_kernels

    K = pairwise_kernels(X, Y, metric=kernel, filter_params=True, **kernel_params)
    return np.asarray(K, dtype=np.float64)


def check_no_kernel_params(est):
    """fastrbf's own kernels take ``gamma``, ``degree`` and ``coef0``, not ``kernel_params``."""
    if est.kernel_params:
        raise ValueError(f"`kernel_params` is for a callable `kernel` and scikit-learn's kernels "
                         f"{', '.join(repr(k) for k in SKLEARN_KERNELS)}; fastrbf's kernel {est.kernel!r} takes "
                         f"`gamma`, `degree` and `coef0`; got kernel_params={est.kernel_params!r}.")


def as_dot_product(kernel, gamma, degree, coef0):
    """``(kernel, gamma, degree, coef0)`` with scikit-learn's ``"linear"`` kernel ``x . y``
    as fastrbf's polynomial of degree 1 (fastrbf's own "linear", the radial ``-r`` of
    SciPy's interpolation, is not positive definite: the kernel-matrix estimators could
    not use it)."""
    if isinstance(kernel, str) and kernel == "linear":
        return "polynomial", 1.0, 1, 0.0
    return kernel, gamma, degree, coef0


def default_gamma(gamma, n_features):
    return 1.0 / n_features if gamma is None else gamma


def check_magnitude(X, name="X"):
    """Refuse, before any work, data whose float64 squared distances would overflow
    (the fits compute in float64), in the estimator's name for it."""
    _v.check_magnitude(X, name, np.float64)


def validate_xy(est, X, y, **kw) -> tuple[np.ndarray, np.ndarray]:
    """Validated (X, y) of a multi-output regressor's ``fit``: float32 or float64 ``X``
    (refused by :func:`check_magnitude` where it would overflow); numeric ``y``, one or
    more columns, cast to ``X``'s dtype."""
    X, y = validate_data(est, X, y, dtype=_FLOATS, multi_output=True, y_numeric=True, **kw)
    check_magnitude(X)
    return X, np.asarray(y, dtype=X.dtype)


def length_scaled(X, length_scale) -> tuple[np.ndarray | None, np.ndarray]:
    """(the checked ``length_scale`` or None, ``X`` as the kernel sees it): with a length
    scale each feature divided by its scale, in float64; without, ``X`` itself."""
    ls = _v.check_length_scale(length_scale, X.shape[1])
    return ls, (X if ls is None else _v.scale_features(X, ls, np.float64, "X"))


def single_column(model, values):
    """A fitted attribute in scikit-learn's shape: for a model fitted on a 1-D ``y``, the
    first column of a 2-D ``values`` (per centre and output) or the first entry of a 1-D
    one (per output); ``values`` as they are for a multi-output model."""
    if not model.single_output:
        return values
    return values[:, 0] if values.ndim == 2 else values[0]


def validate_fit_x(est, X, **kw) -> np.ndarray:
    """``X`` validated for ``fit`` (records ``n_features_in_``)."""
    return validate_data(est, X, dtype=_FLOATS, **kw)


def validate_fit_xy(est, X, y, **kw) -> tuple[np.ndarray, np.ndarray]:
    """``X``, ``y`` validated for ``fit`` (records ``n_features_in_``)."""
    return validate_data(est, X, y, dtype=_FLOATS, **kw)


def validate_x(est, X, **kw) -> np.ndarray:
    check_is_fitted(est)
    to_n_threads(est.n_jobs)
    return validate_data(est, X, dtype=_FLOATS, reset=False, **kw)


def _numpydoc_io(params, returns=""):
    """A numpydoc Parameters section of ``params`` (lines) and a Returns heading, with
    ``returns`` under it when given."""
    return "\n".join(["Parameters", "----------", *params, "", "Returns", "-------", *([returns] if returns else [])])


_X_DOC = "X : array_like of shape (n_samples, n_features)"

#: the numpydoc blocks that the estimators' docstrings share, by name (see :func:`shared_docs`)
DOCS = {
    # fit of a regressor, of a transformer (which ignores y)
    "fit_xy": _numpydoc_io([_X_DOC, "y : array_like of shape (n_samples,) or (n_samples, n_outputs)"], "self"),
    "fit_x": _numpydoc_io([_X_DOC, "y : ignored"], "self"),
    # predict, transform, decision_function: what they return follows the block
    "x_to": _numpydoc_io([_X_DOC]),
    # the last of the fitted attributes: those that validate_data records
    "features_in": "n_features_in_ : int\nfeature_names_in_ : ndarray of str, only when ``X`` had column names",
}

_FRAGMENT = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def shared_docs(cls):
    """Class decorator: write the shared numpydoc blocks into the docstrings of ``cls``
    and of the methods it defines.  A line ``%(name)s`` becomes ``DOCS[name]``, each of
    its lines indented as the marker, so that the estimators document ``fit``,
    ``predict`` and the fitted attributes that every one has in the same words, written
    once; the filled docstrings are what ``help()``, doctests and the API pages read.

    Examples
    --------
    >>> @shared_docs
    ... class Model:
    ...     \"\"\"A model.
    ...
    ...     Attributes
    ...     ----------
    ...     %(features_in)s
    ...     \"\"\"
    >>> print(Model.__doc__.splitlines()[4].strip())
    n_features_in_ : int
    """
    def fill(doc):
        return _FRAGMENT.sub(lambda m: "\n".join((m.group(1) + line).rstrip() for line in DOCS[m.group(2)].split("\n")),
                             doc)

    for obj in (cls, *filter(inspect.isfunction, vars(cls).values())):
        if obj.__doc__:
            obj.__doc__ = fill(obj.__doc__)
    return cls


@shared_docs
class MultiOutputRegressor(RegressorMixin, BaseEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The fitted model (``model_``) at the rows of ``X`` (float32 for float32 ``X``).

        %(x_to)s
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        X = validate_x(self, X)
        return self.model_.predict(X, n_threads=self.n_jobs)


@shared_docs
class DtypeTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = True
        return tags

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The fitted feature map (``model_``) at the rows of ``X`` (float32 for float32
        ``X`` and a map fitted on float32).

        %(x_to)s
        ndarray of shape (n_samples, n_features_out)
            One column per feature of the map (``get_feature_names_out()``).
        """
        X = validate_x(self, X, accept_sparse="csr")
        return self.model_.transform(X, n_threads=self.n_jobs)

