"""Kernel (Gram) matrices and matrix-free kernel products.

Radial kernels are functions of ``s = gamma * r**2`` (``r`` the Euclidean distance),
which is SciPy ``RBFInterpolator``'s ``phi(epsilon * r)`` with ``epsilon =
sqrt(gamma)``; signs follow SciPy (multiquadric, linear and quintic are negated so that
they are conditionally positive definite of the order given by ``min_degree``).
``laplacian`` is ``exp(-sqrt(gamma) r)`` with the Euclidean ``r`` (a radial basis
function; scikit-learn's ``laplacian_kernel`` uses the L1 distance instead).
Dot-product kernels are functions of ``u = x . y``.

``gamma`` is a scalar or one value per column of the result (per-centre widths).

``kernel`` is a name of :data:`KERNELS`, or a user-defined kernel
(:func:`fastrbf.user_kernels.define_kernel`) given by object or by name.
"""

from collections import namedtuple
from functools import partial

import numpy as np

from . import _pairwise as _pw
from . import _validation as _v
from ._jit import kernels as _jk
from ._pairwise import KernelSpec
from ._typing import ArrayLike, FloatArray, KernelArg, Threads
from .cuda.arrays import on_device


class Kernel(namedtuple("Kernel", "name code radial formula min_degree scale_invariant max_dim support",
                        defaults=(None, None))):
    """Properties of a kernel: its code in the numba layer, whether it is radial
    (a function of ``r``), its formula, the minimum degree of the polynomial tail it needs to
    be (conditionally) positive definite (-1: none, as in SciPy), whether ``gamma``
    only rescales it, the largest dimension ``d`` of the data in which it is (conditionally)
    positive definite (``None``: every ``d``; ``0``: not positive definite), and its support
    (``None``: global; else the kernel is 0 where ``sqrt(gamma) r`` exceeds it).
    :meth:`spec` builds what the kernels need to evaluate it."""

    __slots__ = ()

    def spec(self, g: np.ndarray, coef0: float = 0.0, degree: int = 1) -> KernelSpec:
        """The :class:`~fastrbf._pairwise.KernelSpec` of this kernel with per-column
        gammas ``g`` (their dtype is the result dtype) and already checked ``coef0`` and
        ``degree`` (see :func:`check_params`).

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf import KERNELS
        >>> s = KERNELS["polynomial"].spec(np.full(3, 0.5), coef0=1.0, degree=2)  # one gamma per column
        >>> s.dot, s.degree, s.c.tolist()
        (True, 2, [1.0, 0.5, 1.0, 0.0])
        """
        return KernelSpec(_jk.phi(self.code), not self.radial, g, _pw.consts(g.dtype, coef0), int(degree))

#: name -> :class:`Kernel`; drives validation, dispatch and the tests
KERNELS = {
    k.name: k
    for k in (
        Kernel("gaussian", _jk.GAUSSIAN, True, "exp(-gamma r^2)", -1, False),
        Kernel("laplacian", _jk.LAPLACIAN, True, "exp(-sqrt(gamma) r)", -1, False),
        Kernel("multiquadric", _jk.MULTIQUADRIC, True, "-sqrt(1 + gamma r^2)", 0, False),
        Kernel("inverse_multiquadric", _jk.INVERSE_MULTIQUADRIC, True, "1 / sqrt(1 + gamma r^2)", -1, False),
        Kernel("inverse_quadratic", _jk.INVERSE_QUADRATIC, True, "1 / (1 + gamma r^2)", -1, False),
        Kernel("thin_plate_spline", _jk.THIN_PLATE_SPLINE, True, "(e r)^2 log(e r), e = sqrt(gamma)", 1, True),
        Kernel("cubic", _jk.CUBIC, True, "(e r)^3, e = sqrt(gamma)", 1, True),
        Kernel("quintic", _jk.QUINTIC, True, "-(e r)^5, e = sqrt(gamma)", 2, True),
        Kernel("linear", _jk.LINEAR, True, "-(e r), e = sqrt(gamma)", 0, True),
        Kernel("truncated", _jk.TRUNCATED, True, "[e r <= 1] (1 - e r)^2, e = sqrt(gamma)", -1, False, 3, 1.0),
        Kernel("polynomial", _jk.POLYNOMIAL, False, "(coef0 + gamma x.y)^degree", -1, False),
        Kernel("tanh", _jk.TANH, False, "tanh(gamma x.y + coef0)", -1, False, 0),
        # Matern: scikit-learn's Matern(nu, length_scale=l) with gamma = 1 / l^2; matern12 is
        # the laplacian under the name the Matern family uses
        Kernel("matern12", _jk.LAPLACIAN, True, "exp(-e r), e = sqrt(gamma)", -1, False),
        Kernel("matern32", _jk.MATERN32, True, "(1 + t) exp(-t), t = sqrt(3 gamma) r", -1, False),
        Kernel("matern52", _jk.MATERN52, True, "(1 + t + t^2 / 3) exp(-t), t = sqrt(5 gamma) r", -1, False),
        # Wendland's compactly supported functions psi_{3,1} and psi_{3,2}, scaled to 1 at r = 0:
        # positive definite for d <= 3, zero beyond r = 1 / sqrt(gamma)
        Kernel("wendland_c2", _jk.WENDLAND_C2, True, "[t < 1] (1 - t)^4 (4 t + 1), t = sqrt(gamma) r", -1, False, 3,
               1.0),
        Kernel("wendland_c4", _jk.WENDLAND_C4, True, "[t < 1] (1 - t)^6 (35 t^2 + 18 t + 3) / 3, t = sqrt(gamma) r", -1,
               False, 3, 1.0),
        # scikit-learn's RationalQuadratic(length_scale=l, alpha=a): gamma = 1 / l^2, coef0 = a (the shape, > 0)
        Kernel("rational_quadratic", _jk.RATIONAL_QUADRATIC, True, "(1 + gamma r^2 / (2 a))^-a, a = coef0 > 0", -1,
               False),
    )
}


#: the largest polynomial ``degree`` (the power is computed by repeated multiplication)
MAX_DEGREE = 1000

#: kernels whose values lie in [-1, 1] whatever the input: their Gram matrices cannot
#: overflow, so they skip the O(n m) scan of the result
_BOUNDED = frozenset({_jk.GAUSSIAN, _jk.LAPLACIAN, _jk.INVERSE_MULTIQUADRIC, _jk.INVERSE_QUADRATIC, _jk.TRUNCATED,
                      _jk.TANH, _jk.MATERN32, _jk.MATERN52, _jk.WENDLAND_C2, _jk.WENDLAND_C4, _jk.RATIONAL_QUADRATIC})


def check_kernel(kernel):
    """The registry entry of ``kernel``: a name of :data:`KERNELS` or of a user kernel
    defined in this process, or a kernel object (ValueError naming `kernel` otherwise)."""
    if is_user(kernel):
        return kernel
    if isinstance(kernel, Kernel) and KERNELS.get(kernel.name) == kernel:
        return kernel
    if isinstance(kernel, str) and kernel not in KERNELS:
        found = _jk.USER_KERNELS.get(kernel)
        if found is not None:
            return found
    return KERNELS[_v.check_choice(kernel, "kernel", sorted(KERNELS))]


def kernel_value(entry):
    """What a model stores for kernel ``entry``: the name of a built-in kernel, the
    object of a user kernel (so that the model pickles with a reference to it)."""
    return entry if is_user(entry) else entry.name


def is_user(entry):
    """Whether ``entry`` is a user-defined kernel (:class:`~fastrbf.user_kernels.UserKernel`:
    its code is a string)."""
    return hasattr(entry, "spec") and isinstance(getattr(entry, "code", None), str)


def undeclared(entry, d):
    """Whether ``entry`` is a user kernel not declared positive definite for data of
    ``d`` features (None: for any number)."""
    return is_user(entry) and (entry.max_dim == 0 or (entry.max_dim is not None and d is not None and d > entry.max_dim))


class UserKernelValueError(ValueError):
    """A user kernel that is not finite where fastrbf evaluates it (not an overflow of
    the data): the message names the kernel and the value of its argument."""


def check_user_values(entry, out, X, Y, g, upper=False, row0=0):
    """After ``out = phi(X, Y)`` of a user kernel ``entry`` (per-column widths ``g``): a
    non-finite entry that the kernel function itself gives is refused naming the kernel,
    the entry and the value of ``s`` (radial) or ``t`` (dot product) there.  ``upper``:
    only the upper triangle was written; ``row0``: ``out`` holds the rows from ``row0`` on
    (the entry is named in full).  ``X``, ``Y`` dense float arrays or CSR rows.
    Nothing is done for a built-in kernel, or when every entry is finite."""
    if not is_user(entry):
        return
    if not upper:  # one vectorised pass: a finite sum has no inf or NaN (the rows are scanned only if not)
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.add.reduce(out, axis=None)):
                return
    for i in range(out.shape[0]):
        row = out[i, i:] if upper else out[i]
        if np.isfinite(row).all():
            continue
        j = int(np.flatnonzero(~np.isfinite(row))[0]) + (i if upper else 0)
        x, y = (A.rows([r])[0] if hasattr(A, "rows") else np.asarray(A[r]) for A, r in ((X, i), (Y, j)))
        x, y = x.astype(np.float64), y.astype(np.float64)
        arg = float(g[j]) * (float(np.sum((x - y) ** 2)) if entry.radial else float(x @ y))
        try:
            value = float(entry.jitted(arg))
        except Exception as exc:  # the function raised there
            value, how = None, f"raises {type(exc).__name__}: {exc}"
        else:
            how = f"returns {value!r}"
        if value is None or not np.isfinite(value):
            name = "s" if entry.radial else "t"
            raise UserKernelValueError(
                f"The user kernel {entry.name!r} {how} at {name} = {arg:.6g} (entry [{row0 + i}, {j}] of the kernel "
                f"matrix); a kernel must be finite wherever it is evaluated: fix the function there, or rescale the "
                "data or `gamma` so that it is not evaluated there.")
        return  # the kernel is finite there: an overflow, which the caller reports


def check_positive_definite(entry, d, what):
    """Refuse a user kernel that is not declared positive definite for data of ``d``
    features (None: for any), in a solver (``what``) that needs one."""
    if undeclared(entry, d):
        decl = "not declared positive definite" if entry.max_dim == 0 else \
            f"declared positive definite for up to {entry.max_dim} features, and the data have {d}"
        raise ValueError(f"{what} needs a positive definite kernel; the user kernel {entry.name!r} is {decl}. "
                         f"Declare it with `define_kernel(..., positive_definite=True)` if it is, or use a solver "
                         f"that does not need it (`rbf_network`, `interpolate`).")


def check_params(spec, degree, coef0):
    """Checked ``(degree, coef0)`` of registry entry ``spec`` (``degree`` is 1 where the
    kernel has none)."""
    deg = _v.check_int(degree, "degree", 1, MAX_DEGREE) if spec.code == _jk.POLYNOMIAL else 1
    if spec.code == _jk.RATIONAL_QUADRATIC:
        return deg, _v.check_real(coef0, "coef0", low=0, strict=True,
                                  text="a finite number > 0 (the shape of the rational quadratic kernel)")
    return deg, _v.check_real(coef0, "coef0")


def coef0_in(spec, coef0, dtype):
    """``coef0`` for a kernel of ``dtype``: 0 where the kernel does not use it, else
    checked to be finite in the result dtype."""
    if spec.code not in (_jk.POLYNOMIAL, _jk.TANH, _jk.RATIONAL_QUADRATIC):
        return 0.0
    if abs(coef0) > float(np.finfo(dtype).max):
        raise ValueError(f"`coef0` must be a finite number in {np.dtype(dtype)} (the result dtype); got {coef0!r}.")
    return coef0


def make_spec(entry, gamma, m, dtype, degree=3, coef0=1.0, name="gamma"):
    """Check the kernel parameters of registry ``entry`` for a result of ``m`` columns of
    ``dtype`` and return ``(KernelSpec, gamma_is_scalar)``."""
    deg, coef0 = check_params(entry, degree, coef0)
    g, scalar = _v.check_gamma(gamma, m, dtype, name)
    return entry.spec(g, coef0_in(entry, coef0, dtype), deg), scalar


def gram(X: ArrayLike, Y: ArrayLike | None = None, *, kernel: KernelArg = "gaussian", gamma: ArrayLike = 1.0,
         out: FloatArray | None = None, n_threads: Threads = None, degree: int = 3, coef0: float = 1.0,
         length_scale: ArrayLike | None = None) -> FloatArray:
    """Kernel matrix ``K[i, j] = k(X[i], Y[j])``, fused: each tile of distances becomes
    kernel values while it is in cache; nothing of size n x m besides the result.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n, d)
        Sparse input is never densified (the distances of :func:`fastrbf.sqdist`'s
        sparse path; dot products from SciPy's sparse product).
    Y : array_like or scipy.sparse matrix of shape (m, d), optional
        Defaults to ``X``; with a scalar ``gamma`` one triangle is computed and mirrored
        (exactly symmetric, diagonal exactly ``k(x, x)``).
    kernel : str
        A name in :data:`KERNELS`: gaussian, laplacian, multiquadric,
        inverse_multiquadric, inverse_quadratic, thin_plate_spline, cubic, quintic,
        linear, truncated, polynomial, tanh, matern12 (= laplacian), matern32,
        matern52 (scikit-learn's ``Matern(nu=1.5 | 2.5, length_scale=l)`` is
        ``gamma = 1 / l**2``), wendland_c2, wendland_c4 (compactly supported: 0 beyond
        ``r = 1 / sqrt(gamma)``; positive definite for up to 3 features),
        rational_quadratic (``(1 + gamma r**2 / (2 coef0))**-coef0``: scikit-learn's
        ``RationalQuadratic(length_scale=l, alpha=a)`` is ``gamma = 1 / l**2, coef0 = a``).
        Or a user kernel (:func:`fastrbf.user_kernels.define_kernel`), by object or name.
    gamma : float or array_like of shape (m,)
        Width, or one width per column of the result (per-centre widths).  > 0.
    out : ndarray of shape (n, m), optional
        C-contiguous buffer of the result dtype; it is returned.
    n_threads : int, optional
        ``None`` = ambient default (all cores), ``-1`` = all cores.
    degree, coef0 : int, float
        Parameters of the polynomial (``degree`` in [1, 1000], ``coef0``) and tanh
        (``coef0``) kernels; ``coef0`` > 0 is the shape of the rational quadratic one.
        ``gamma`` and ``coef0`` must be finite in the result dtype
        (float32 when every input is float32).
    length_scale : float or array_like of shape (d,), optional
        Per-feature widths: each feature is divided by its length scale before the
        kernel, ``s = gamma * sum_k ((x_k - y_k) / length_scale_k)**2`` (dot-product
        kernels: ``sum_k x_k y_k / length_scale_k**2``).  With ``gamma = 1`` this is
        scikit-learn's anisotropic ``length_scale`` of ``Matern`` and
        ``RationalQuadratic``; its ``RBF(length_scale=l)`` is ``gamma=0.5,
        length_scale=l``.

    Raises
    ------
    ValueError
        Bad input or parameters, data whose squared distances would overflow the result
        dtype, or kernel values that overflow it (the exact values are not representable).

    Returns
    -------
    K : ndarray of shape (n, m), float32 if every input is float32, else float64.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> gram(X, gamma=0.5).round(4)
    array([[1.    , 0.6065, 0.0111],
           [0.6065, 1.    , 0.1353],
           [0.0111, 0.1353, 1.    ]])
    >>> gram(X, X[:2], kernel="multiquadric", gamma=[1.0, 4.0]).round(3)
    array([[-1.   , -2.236],
           [-1.414, -1.   ],
           [-3.162, -4.123]])
    """
    entry = check_kernel(kernel)
    if on_device(X, Y, gamma, out):
        from .cuda import pairwise as _cuda

        deg, c0 = check_params(entry, degree, coef0)
        return _cuda.gram(X, Y, entry, gamma, deg, partial(coef0_in, entry, c0), out, length_scale,
                          is_user(entry) or entry.code not in _BOUNDED)
    Xc, Yc, dtype, sparse = _pw.prepare_scaled(X, Y, length_scale)
    _v.check_magnitude(Xc, "X")
    if Yc is not None:
        _v.check_magnitude(Yc, "Y")
    m = Xc.shape[0] if Yc is None else Yc.shape[0]
    spec, scalar = make_spec(entry, gamma, m, dtype, degree, coef0)
    symmetric = Yc is None and scalar
    Yc = Xc if Yc is None else Yc
    # every array argument, and what was made of it, must be apart from `out`
    inputs = (Xc.data, Yc.data, gamma, spec.g) if sparse else (X, Y, gamma, Xc, Yc, spec.g)
    out = _pw.allocate(out, (Xc.shape[0], m), dtype, inputs, "gram")
    if entry.radial:
        if sparse:
            _pw.sparse_pairwise(Xc, Yc, spec, symmetric, out, n_threads)
        else:
            _pw.pairwise(Xc, Yc, spec, symmetric, out, n_threads)
        names = "`X`, `Y` and `gamma`"
    else:
        if sparse:
            _pw.sparse_dot_products(Xc, Yc, spec, out, n_threads)
        else:
            _pw.dot_products(Xc, Yc, spec, out, n_threads)
        names = "`X`, `Y`, `gamma`, `degree` and `coef0`"
    check_user_values(entry, out, Xc, Yc, spec.g)
    if entry.code not in _BOUNDED:
        _v.check_result(out, "gram", names)
    return out


def gram_matvec(X: ArrayLike, Y: ArrayLike, V: ArrayLike, *, kernel: KernelArg = "gaussian", gamma: ArrayLike = 1.0,
                n_threads: Threads = None, degree: int = 3, coef0: float = 1.0,
                length_scale: ArrayLike | None = None) -> FloatArray:
    """``K(X, Y) @ V`` without ever holding ``K``: tiles of K are made and consumed in
    cache.  Memory O((n + m) d + n k) plus one small tile per thread.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (m, d)
    V : array_like of shape (m,) or (m, k)
    kernel, gamma, degree, coef0, length_scale :
        As in :func:`gram`.
    n_threads : int, optional

    Returns
    -------
    KV : ndarray of shape (n,) or (n, k)
        Sums are accumulated in float64 per chunk of 512 columns; float32 is returned
        when every input is float32.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram, gram_matvec
    >>> rng = np.random.default_rng(0)
    >>> X, Y, v = rng.random((5, 2)), rng.random((4, 2)), rng.random(4)
    >>> bool(np.allclose(gram_matvec(X, Y, v, gamma=2.0), gram(X, Y, gamma=2.0) @ v))
    True
    """
    entry = check_kernel(kernel)
    if on_device(X, Y, V, gamma):
        from .cuda import pairwise as _cuda

        deg, c0 = check_params(entry, degree, coef0)
        return _cuda.gram_matvec(X, Y, V, entry, gamma, deg, partial(coef0_in, entry, c0), length_scale, True)
    Xa = _v.check_data(X, "X")
    Ya = _v.check_data(Y, "Y")
    _v.check_features(Xa, Ya)
    Va = _v.as_array(V, "V", ndim=(1, 2))
    _v.check_finite(Va, "V")
    if Va.shape[0] != Ya.shape[0]:
        raise ValueError(
            f"`V` must have one row per row of `Y` ({Ya.shape[0]}); got shape {Va.shape}."
        )
    dtype = _v.result_dtype(Xa, Ya, Va)
    ls = _v.check_length_scale(length_scale, Xa.shape[1])
    if ls is not None:
        Xa, Ya = _v.scale_features(Xa, ls, dtype, "X"), _v.scale_features(Ya, ls, dtype, "Y")
    _v.check_magnitude(Xa, "X", dtype)
    _v.check_magnitude(Ya, "Y", dtype)
    spec, _ = make_spec(entry, gamma, Ya.shape[0], dtype, degree, coef0)
    vec = Va.ndim == 1
    n, m, k = Xa.shape[0], Ya.shape[0], 1 if vec else Va.shape[1]
    # the result, the transposed copies of Y and V, and any converted copy of X and Y
    need = n * k + 2 * m * Ya.shape[1] + m * k
    need += 0 if (Xa.dtype == dtype and Xa.flags.c_contiguous) else Xa.size
    _v.check_memory(need * dtype.itemsize, f"gram_matvec: the {n} x {k} {dtype} result and working copies",
                    "pass fewer rows of `X` (or columns of `V`) per call.")
    Xc, Yc = _v.to_dtype(Xa, dtype), _v.to_dtype(Ya, dtype)
    Vt = _v.to_dtype(Va.reshape(-1, 1).T if vec else Va.T, dtype)
    out = np.empty((n, k), dtype=dtype)
    _pw.matvec(Xc, Yc, Vt, spec, out, n_threads)
    if is_user(entry) and not np.isfinite(out).all():  # the kernel's own values, or an overflow?
        i = int(np.flatnonzero(~np.isfinite(out).all(axis=1))[0])
        row = np.empty((1, m), dtype=dtype)
        if entry.radial:
            _pw.pairwise(Xc[i:i + 1], Yc, spec, False, row, 1)
        else:
            _pw.dot_products(Xc[i:i + 1], Yc, spec, row, 1)
        check_user_values(entry, row, Xc[i:i + 1], Yc, spec.g, row0=i)
    _v.check_result(out, "gram_matvec", "`X`, `Y`, `V` and `gamma`")
    return out[:, 0] if vec else out
