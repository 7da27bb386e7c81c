"""scikit-learn's Gaussian-process kernels as fastrbf's GP, for
:class:`fastrbf.sklearn.GaussianProcessRegressor` given a kernel object.

fastrbf's GP (:func:`fastrbf.gaussian_process`) has the covariance
``c * K(length_scale) [+ b] [+ noise [x == y]]``; the scikit-learn kernels of that form
are sums of at most one each of ``ConstantKernel(c) * K`` (or ``K`` alone: ``c = 1``
fixed), ``ConstantKernel(b)`` and ``WhiteKernel(noise)``, with ``K`` one of ``RBF``,
``Matern(nu=0.5 | 1.5 | 2.5 | inf)`` and ``RationalQuadratic`` with a fixed ``alpha``.

Decisions:

- scikit-learn keeps the books: the kernel object gives ``theta`` (the logs of the free
  hyperparameters, in its order), ``bounds`` and ``clone_with_theta``; a ``theta`` is
  read back through the clone into fastrbf's values, and fastrbf's gradient (one entry
  per hyperparameter) is picked in scikit-learn's order, free ones only.
- Anything else (another kernel, a product of two kernels, a learned
  ``RationalQuadratic`` ``alpha``) is a ``ValueError`` naming ``kernel`` and the part
  that is not covered; the estimator then computes the GP from the kernel object
  itself (:mod:`fastrbf.sklearn._gp_generic`).
"""

from dataclasses import dataclass

import numpy as np
from sklearn.gaussian_process import kernels as skk

#: Matern's nu -> fastrbf's kernel
_MATERN = {0.5: "matern12", 1.5: "matern32", 2.5: "matern52", np.inf: "gaussian"}
_FORM = ("fastrbf's GP covers ConstantKernel * K [+ ConstantKernel] [+ WhiteKernel] with K one of RBF, "
         "Matern(nu=0.5, 1.5, 2.5 or inf) and RationalQuadratic(alpha_bounds='fixed')")


@dataclass(frozen=True)
class GPForm:
    """Where each of fastrbf's hyperparameters sits in a scikit-learn kernel: the
    parameter name (``get_params`` key) of the amplitude (None: 1), the length scale,
    the constant and the noise (None: absent)."""

    kernel: str
    coef0: float
    amplitude: str | None
    length_scale: str
    constant: str | None
    noise: str | None

    def values(self, k: skk.Kernel) -> dict:
        """fastrbf's keyword arguments for the hyperparameter values of ``k`` (a kernel of this form)."""
        p = k.get_params()
        ls = np.array(p[self.length_scale], dtype=np.float64)
        return {"kernel": self.kernel, "coef0": self.coef0,
                "amplitude": 1.0 if self.amplitude is None else float(p[self.amplitude]),
                "length_scale": float(ls.ravel()[0]) if ls.size == 1 else ls,
                "constant": None if self.constant is None else float(p[self.constant]),
                "noise": None if self.noise is None else float(p[self.noise])}

    def free_gradient(self, k: skk.Kernel, grad: np.ndarray) -> np.ndarray:
        """fastrbf's gradient (amplitude, length scales..., [constant], [noise]) in the
        order of ``k.theta``: the free hyperparameters only."""
        p = np.size(k.get_params()[self.length_scale])
        where = {self.length_scale: slice(1, 1 + p)}
        if self.amplitude is not None:
            where[self.amplitude] = slice(0, 1)
        if self.constant is not None:
            where[self.constant] = slice(1 + p, 2 + p)
        if self.noise is not None:
            where[self.noise] = slice(grad.size - 1, grad.size)
        parts = [grad[where[hp.name]] for hp in k.hyperparameters if not hp.fixed]
        return np.concatenate(parts) if parts else np.empty(0)


def _terms(k, prefix=""):
    if isinstance(k, skk.Sum):
        return _terms(k.k1, prefix + "k1__") + _terms(k.k2, prefix + "k2__")
    return [(k, prefix)]


def _base(k, prefix):
    """(fastrbf kernel, coef0, length-scale parameter name) of a stationary kernel, or None."""
    if isinstance(k, skk.Matern):  # before RBF: scikit-learn's Matern is a subclass of RBF
        name = _MATERN.get(float(k.nu))
        if name is None:
            raise ValueError(f"`kernel`: Matern(nu={k.nu}) is not covered; {_FORM}.")
        return name, 1.0, prefix + "length_scale"
    if isinstance(k, skk.RBF):
        return "gaussian", 1.0, prefix + "length_scale"
    if isinstance(k, skk.RationalQuadratic):
        if not k.hyperparameter_alpha.fixed:
            raise ValueError(f"`kernel`: RationalQuadratic's alpha must be fixed (alpha_bounds='fixed'); {_FORM}.")
        if np.size(k.length_scale) != 1:
            raise ValueError(f"`kernel`: RationalQuadratic takes one length scale; {_FORM}.")
        return "rational_quadratic", float(k.alpha), prefix + "length_scale"
    return None


def gp_form(kernel: skk.Kernel) -> GPForm:
    """The :class:`GPForm` of a scikit-learn kernel, or a ``ValueError`` naming ``kernel``.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import ConstantKernel as C, Matern, WhiteKernel
    >>> gp_form(C(2.0) * Matern(nu=1.5) + WhiteKernel()).kernel
    'matern32'
    """
    found: dict = {}

    def put(role, value, k):
        if role in found:
            raise ValueError(f"`kernel` has more than one {role} term ({k!r}); {_FORM}.")
        found[role] = value

    for k, prefix in _terms(kernel):
        if isinstance(k, skk.ConstantKernel):
            put("constant", prefix + "constant_value", k)
        elif isinstance(k, skk.WhiteKernel):
            put("noise", prefix + "noise_level", k)
        elif isinstance(k, skk.Product):
            pairs = [(k.k1, prefix + "k1__", k.k2, prefix + "k2__"), (k.k2, prefix + "k2__", k.k1, prefix + "k1__")]
            for a, pa, b, pb in pairs:
                base = _base(b, pb)
                if isinstance(a, skk.ConstantKernel) and base is not None:
                    put("stationary", (pa + "constant_value", base), k)
                    break
            else:
                raise ValueError(f"`kernel`: the product {k!r} is not covered; {_FORM}.")
        else:
            base = _base(k, prefix)
            if base is None:
                raise ValueError(f"`kernel`: {k!r} is not covered; {_FORM}.")
            put("stationary", (None, base), k)
    if "stationary" not in found:
        raise ValueError(f"`kernel` has no stationary term; {_FORM}.")
    amp, (name, coef0, ls) = found["stationary"]
    return GPForm(name, coef0, amp, ls, found.get("constant"), found.get("noise"))
