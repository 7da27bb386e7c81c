"""User-defined kernels: a plain Python function of one number, compiled by numba and
fused into every kernel pass of fastrbf exactly as the built-in kernels are.

    >>> import fastrbf
    >>> from fastrbf.user_kernels import define_kernel, exp
    >>> @define_kernel(positive_definite=True)
    ... def my_gaussian(s):
    ...     return exp(-s)

A radial kernel is a function of ``s = gamma * r**2`` (``r`` the Euclidean distance), as
the built-in radial kernels are; a dot-product kernel (``radial=False``) is a function of
``t = gamma * (x . y)``.  The kernel is usable wherever a kernel name is, by object
(``kernel=my_gaussian``) or by its name (``kernel="my_gaussian"``, once the module that
defines it has been imported).

Decisions:

- **Compiled once per kernel and dtype, cached on disk.**  The function is compiled with
  fastrbf's flags (no ``nnan``/``ninf``/``reassoc``) and called inside the fused tiles,
  where LLVM inlines and vectorises it: a user kernel is as fast as a built-in one that
  does the same arithmetic (:func:`exp` is fastrbf's vectorised exponential, the one the
  built-in kernels use; ``math.exp`` is a scalar library call, several times slower).
  Each kernel is a compile-time type named after the function and a token that hashes its
  code (bytecode, constants, closure values, and the numbers and jitted functions it
  refers to globally), so kernels specialised for it are cached on disk across processes
  and a changed function never meets a stale cache entry.  A change in a function that
  the kernel function reaches only through another function is not seen: the token goes
  one level deep.
- **Refused at definition, naming the function**: a function numba cannot compile for a
  float64 argument, one that does not return a real number, or one that returns a
  non-finite value on the probe points (radial: ``s`` from 0 to 1e4; dot product: ``t``
  from -100 to 100).  A kernel that is infinite or NaN at ``s = 0`` would put NaN on the
  diagonal of every Gram matrix.
- **Declared properties.**  ``positive_definite`` (True, an int: positive definite for data
  of up to that many features, or False) and ``min_degree`` (conditionally positive
  definite of that order, with a polynomial tail) are what the solvers check: a kernel
  not declared positive definite is refused by :func:`fastrbf.kernel_ridge` (both
  solvers), naming the kernel and the remedy.  fastrbf cannot prove a declaration; a
  wrong one shows up as a failed Cholesky factorisation.
- **Derivative.**  ``derivative`` (optional) is ``d phi / d s`` (radial) or ``d phi / d t``,
  used where gradients are needed; without it a central difference in ``s`` with step
  ``eps**(1/3) * max(s, 1)`` (a one-sided second-order one below that step, as ``s >= 0``) is
  used: about ``eps**(2/3)`` relative accuracy, so give the derivative when gradients matter.
- **Pickling by reference.**  A kernel pickles as the name of the module-level variable
  that holds it (``module.name``), as functions do; models fitted with it pickle the
  same way.  A kernel that is not reachable so (defined inside a function, or bound to
  another name) cannot be pickled: the error says so.
- **Names.**  A kernel's name (the function's name unless ``name`` is given; a lambda's
  is ``lambda_`` and the start of its code token, so that two lambdas never share one and
  the same lambda has the same name in every process) must not be a built-in kernel's;
  defining a kernel under a name already used by a user kernel replaces it (re-running a
  notebook cell).
"""

import hashlib
import importlib
import math
import numbers
import pickle
import types as pytypes
from collections.abc import Callable

import numpy as np
from numba import types as nbtypes
from numba.extending import is_jitted

from . import _pairwise as _pw
from . import _validation as _v
from ._jit import kernels as _jk
from ._jit._decorators import jit
from ._jit.llvm.exp import fexp
from .kernels import KERNELS

__all__ = ["UserKernel", "define_kernel", "exp", "user_kernel"]

#: the exponential to call inside a kernel function: vectorisable, within 1 ulp of
#: ``np.exp`` (the one fastrbf's built-in kernels use)
exp = fexp

#: the probe points: s = gamma r^2 >= 0 for radial kernels, t = gamma x.y for the others
PROBE_RADIAL = (0.0, 1e-12, 1e-6, 1e-3, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0, 1e4)
PROBE_DOT = (-100.0, -10.0, -1.0, -0.5, 0.0, 0.5, 1.0, 10.0, 100.0)



class UserKernel:
    """A user-defined kernel (made by :func:`define_kernel`); it has the fields of a
    built-in :class:`fastrbf.kernels.Kernel` and :meth:`spec`.

    Attributes
    ----------
    name : str
    function : callable
        The kernel function of one number, as given.
    derivative : callable or None
        Its derivative, as given.
    radial : bool
    formula : str
    min_degree : int
    scale_invariant : bool
    max_dim : int or None
        Positive definite for data of up to this many features (None: any; 0: not
        declared positive definite).
    support : float or None
        The kernel is 0 where ``sqrt(s)`` exceeds it (radial kernels), if given.
    code : str
        The kernel's compile-time identity: its name, module and code token.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram
    >>> from fastrbf.user_kernels import define_kernel
    >>> cauchy = define_kernel(lambda s: 1.0 / (1.0 + s), name="cauchy", positive_definite=True)
    >>> cauchy.radial, cauchy.max_dim
    (True, None)
    >>> gram(np.array([[0.0], [1.0]]), kernel=cauchy, gamma=2.0).tolist()
    [[1.0, 0.3333333333333333], [0.3333333333333333, 1.0]]
    """

    __slots__ = (
        "_djitted",
        "_jitted",
        "_phi",
        "code",
        "derivative",
        "formula",
        "function",
        "max_dim",
        "min_degree",
        "module",
        "name",
        "qualname",
        "radial",
        "scale_invariant",
        "support",
    )

    def __init__(self, function, *, name, derivative, radial, formula, min_degree, scale_invariant, max_dim, support):
        self.function = function
        self.derivative = derivative
        self.name = name
        self.radial = radial
        self.formula = formula
        self.min_degree = min_degree
        self.scale_invariant = scale_invariant
        self.max_dim = max_dim
        self.support = support
        self.module = getattr(function, "__module__", None) or "__main__"
        self.qualname = name
        self._jitted = _compile(function, name, "kernel function")
        self._djitted = None if derivative is None else _compile(derivative, name, "derivative")
        self.code = f"user:{self.module}.{name}:{_token(function, derivative, radial)}"
        self._phi = _jk.user_phi(self.code, self._jitted, self.jitted_derivative)

    def spec(self, g: np.ndarray, coef0: float = 0.0, degree: int = 1) -> "_pw.KernelSpec":
        """The :class:`~fastrbf._pairwise.KernelSpec` with per-column gammas ``g``
        (``coef0`` and ``degree`` are not used by user kernels).

        Examples
        --------
        >>> import numpy as np
        >>> from fastrbf.user_kernels import define_kernel
        >>> k = define_kernel(lambda s: 1.0 / (1.0 + s), name="cauchy", positive_definite=True)
        >>> k.spec(np.ones(2)).dot
        False
        """
        return _pw.KernelSpec(self._phi, not self.radial, g, _pw.consts(g.dtype, coef0), 1)

    @property
    def jitted(self) -> Callable[[float], float]:
        """The numba-compiled kernel function."""
        return self._jitted

    @property
    def jitted_derivative(self) -> Callable[[float], float]:
        """The numba-compiled derivative: the one given, else a central difference."""
        if self._djitted is None:
            self._djitted = _numeric_derivative(self._jitted, self.radial)
        return self._djitted

    def __repr__(self):
        return f"UserKernel({self.name!r}, radial={self.radial})"

    def __reduce__(self):
        try:
            found = _resolve(self.module, self.qualname)
        except Exception:
            found = None
        # the same kernel (its code token), not necessarily the same object: a module
        # reloaded (or imported twice) defines its kernels again
        if getattr(found, "code", None) != self.code:
            raise pickle.PicklingError(
                f"The user kernel {self.name!r} cannot be pickled: it is pickled by reference, as "
                f"`{self.module}.{self.qualname}`, which does not name it. Define it with `@define_kernel` at the top "
                f"level of an importable module, under the name it is given."
            )
        return (_resolve, (self.module, self.qualname))


def _resolve(module, qualname):
    """The object named ``qualname`` in ``module`` (importing it)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _fname(function):
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or repr(function)


def _py_function(function, name, what):
    if is_jitted(function):
        function = function.py_func
    if not isinstance(function, pytypes.FunctionType):
        raise TypeError(f"The {what} of user kernel {name!r} must be a Python function (or a numba-jitted one); "
                        f"got {type(function).__name__}.")
    return function


def _compile(function, name, what):
    """``function`` jitted with fastrbf's flags and compiled for float64 (TypeError
    naming the function if numba cannot, or if it does not return a real number)."""
    py = _py_function(function, name, what)
    jitted = jit(py)
    try:
        jitted.compile((nbtypes.float64,))
    except Exception as exc:  # numba's typing and lowering errors, any of them
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TypeError(f"The {what} `{_fname(py)}` of user kernel {name!r} cannot be compiled by numba for a "
                        f"float64 argument: {first}") from None
    ret = jitted.nopython_signatures[-1].return_type
    if not isinstance(ret, (nbtypes.Float, nbtypes.Integer)) or isinstance(ret, nbtypes.Boolean):
        raise TypeError(f"The {what} `{_fname(py)}` of user kernel {name!r} must return a real number; it "
                        f"returns {ret}.")
    return jitted


def _probe(jitted, points, name, what, py):
    for v in points:
        try:
            out = float(jitted(v))
        except Exception as exc:
            raise ValueError(f"The {what} `{_fname(py)}` of user kernel {name!r} fails at {v!r}: {exc}") from None
        if not math.isfinite(out):
            raise ValueError(f"The {what} `{_fname(py)}` of user kernel {name!r} returns {out!r} at {v!r}: a kernel "
                             f"must be finite at every argument it can meet.")


def _code_bytes(code, depth=0):
    """Bytes that change when the code object's behaviour can (nested code objects
    included)."""
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            parts.append(_code_bytes(const, depth + 1))
        else:
            parts.append(repr(const).encode())
    return b"\x00".join(parts)


def _value_bytes(value, depth):
    if isinstance(value, (bool, numbers.Number, str, bytes, type(None))):
        return repr(value).encode()
    if isinstance(value, np.ndarray):
        return value.dtype.str.encode() + repr(value.shape).encode() + value.tobytes()
    if is_jitted(value):
        value = value.py_func
    if isinstance(value, pytypes.FunctionType):
        return _function_bytes(value, depth + 1) if depth < 1 else _code_bytes(value.__code__)
    if isinstance(value, pytypes.ModuleType):
        return value.__name__.encode()
    return type(value).__qualname__.encode()


def _function_bytes(function, depth=0):
    parts = [_code_bytes(function.__code__)]
    for cell in function.__closure__ or ():
        try:
            parts.append(_value_bytes(cell.cell_contents, depth))
        except ValueError:  # an empty cell
            parts.append(b"<empty>")
    g = function.__globals__
    for name in function.__code__.co_names:
        if name in g:
            parts.append(name.encode() + b"=" + _value_bytes(g[name], depth))
    return b"\x01".join(parts)


def _token(function, derivative, radial):
    h = hashlib.sha256()
    h.update(b"radial" if radial else b"dot")
    h.update(_function_bytes(_py_function(function, "", "")))
    if derivative is not None:
        h.update(b"\x02" + _function_bytes(_py_function(derivative, "", "")))
    return h.hexdigest()[:16]


#: the step of the central difference, relative to max(s, 1)
DIFF_STEP = float(np.finfo(np.float64).eps) ** (1.0 / 3.0)


def _numeric_derivative(f, radial):
    step = DIFF_STEP

    def df(s):
        h = step * max(abs(s), 1.0)
        if radial and s < h:  # s >= 0: one-sided, second order
            return (4.0 * f(s + h) - 3.0 * f(s) - f(s + h + h)) / (h + h)
        return (f(s + h) - f(s - h)) / (h + h)

    return jit(df)


def define_kernel(function: Callable[[float], float] | None = None, *, name: str | None = None, radial: bool = True,
                  derivative: Callable[[float], float] | None = None, positive_definite: bool | int = False,
                  min_degree: int = -1, scale_invariant: bool = False, support: float | None = None,
                  formula: str | None = None) -> "UserKernel | Callable[[Callable[[float], float]], UserKernel]":
    """Define a kernel from a plain Python function of one number (a decorator, or a
    call).

    Parameters
    ----------
    function : callable
        ``phi(s)`` of ``s = gamma * r**2`` (radial) or ``phi(t)`` of ``t = gamma * (x .
        y)``: one float in, one float out, in the subset of Python numba compiles
        (``math``, NumPy scalar functions, :func:`exp` for a fast exponential).
    name : str, optional
        Default: the function's name; for a lambda, ``lambda_`` and 12 hex digits of a
        hash of its code and of the values it captures (the same name in every process
        for the same code).  Not a built-in kernel's name.
    radial : bool, default True
    derivative : callable, optional
        ``d phi / d s`` (or ``d phi / d t``), for gradients; default: a central
        difference (see the module docstring).
    positive_definite : bool or int, default False
        Declared positive definite for data of any dimension (True), of up to that many
        features (an int >= 1), or not (False: refused by the solvers that need it).
    min_degree : int, default -1
        The polynomial tail degree the kernel needs to be conditionally positive
        definite (-1: none), as :data:`fastrbf.KERNELS` states for the built-in kernels.
    scale_invariant : bool, default False
        Whether ``gamma`` only rescales the kernel (then :func:`fastrbf.interpolate`
        does not need ``gamma``).
    support : float, optional
        Radial kernels that are 0 where ``sqrt(s)`` exceeds it.
    formula : str, optional
        A description, shown in the registry.

    Returns
    -------
    UserKernel
        Usable as ``kernel=`` by object, or by ``name`` in this process.

    Raises
    ------
    TypeError
        ``function`` (or ``derivative``) is not a function, numba cannot compile it for
        a float64 argument, or it does not return a real number.
    ValueError
        It returns a non-finite value on a probe point, or the name is a built-in one.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import gram, kernel_ridge
    >>> from fastrbf.user_kernels import define_kernel, exp
    >>> @define_kernel(positive_definite=True, derivative=lambda s: -exp(-s))
    ... def gauss(s):
    ...     return exp(-s)
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> bool(np.array_equal(gram(X, kernel=gauss, gamma=0.5), gram(X, kernel="gaussian", gamma=0.5)))
    True
    >>> m = kernel_ridge(X, [0.0, 1.0, 0.0], kernel="gauss", gamma=1.0, alpha=0.1)  # by name
    >>> m.predict([[1.0]]).round(4).tolist()
    [0.8976]
    """
    if function is None:
        def decorate(f):
            return define_kernel(f, name=name, radial=radial, derivative=derivative,
                                 positive_definite=positive_definite, min_degree=min_degree,
                                 scale_invariant=scale_invariant, support=support, formula=formula)
        return decorate
    py = _py_function(function, name or "?", "kernel function")
    if name is None:
        name = py.__name__
        if not name.isidentifier():  # a lambda: named after its code, the same name in every process
            name = f"lambda_{_token(function, derivative, _v.check_bool(radial, 'radial'))[:12]}"
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"`name` must be an identifier; got {name!r}.")
    if name in KERNELS:
        raise ValueError(f"`name` must not be a built-in kernel's name; got {name!r}.")
    radial = _v.check_bool(radial, "radial")
    scale_invariant = _v.check_bool(scale_invariant, "scale_invariant")
    if isinstance(positive_definite, (bool, np.bool_)):
        max_dim = None if positive_definite else 0
    else:
        max_dim = _v.check_int(positive_definite, "positive_definite", 1, None)
    min_degree = _v.check_int(min_degree, "min_degree", -1, None)
    if support is not None:
        support = _v.check_real(support, "support", low=0.0, strict=True)
        if not radial:
            raise ValueError("`support` is only for radial kernels (radial=True).")
    if formula is not None and not isinstance(formula, str):
        raise TypeError(f"`formula` must be a string; got {type(formula).__name__}.")
    kernel = UserKernel(function, name=name, derivative=derivative, radial=radial,
                        formula=formula or f"user function {_fname(py)}", min_degree=min_degree,
                        scale_invariant=scale_invariant, max_dim=max_dim, support=support)
    _probe(kernel.jitted, PROBE_RADIAL if radial else PROBE_DOT, name, "kernel function", py)
    if derivative is not None:
        dpy = _py_function(derivative, name, "derivative")
        _probe(kernel._djitted, [p for p in (PROBE_RADIAL if radial else PROBE_DOT) if p != 0.0], name,
               "derivative", dpy)
    _jk.USER_KERNELS[name] = kernel
    return kernel


def user_kernel(name: str) -> "UserKernel | None":
    """The user kernel defined under ``name`` in this process, or None.

    Examples
    --------
    >>> from fastrbf.user_kernels import define_kernel, user_kernel
    >>> k = define_kernel(lambda s: 1.0 / (1.0 + s), name="cauchy", positive_definite=True)
    >>> user_kernel("cauchy") is k, user_kernel("no_such_kernel")
    (True, None)
    """
    return _jk.USER_KERNELS.get(name)
