"""SciPy's linear algebra, imported on first use.

``import scipy.linalg`` costs about 0.15 s beyond NumPy, more than the rest of
``import fastrbf`` together.  (numba loads SciPy's BLAS itself when it first compiles
or loads a kernel from its cache, so the first call pays it either way; a process that
only imports, such as a dask worker or a command line's ``--help``, does not.)

The names here stand in for the modules: ``scipy.linalg.solve(...)``,
``lapack.dpotrf(...)`` and ``blas.dsymm(...)`` import the module on the first attribute
access (an import is thread-safe and, after the first, one dictionary lookup).
"""

import importlib
from typing import Any


class _Lazy:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


class _SciPy:
    __slots__ = ()
    linalg = _Lazy("scipy.linalg")


#: stands in for the ``scipy`` package where only ``scipy.linalg`` is used
scipy = _SciPy()
blas = _Lazy("scipy.linalg.blas")
lapack = _Lazy("scipy.linalg.lapack")
