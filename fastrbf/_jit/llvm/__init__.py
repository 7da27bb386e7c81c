"""The low-level layer: code that emits LLVM IR or leans on numba's internals.

Reach for it only when numba's typed Python cannot express what a measured kernel needs:
a register-blocked micro-kernel in vector IR (``micro``), one vector operation over
independent problems (``lanes``), vectorised ``exp``/``log``/``sin``/``cos`` (``exp``,
``trig``), LAPACK without the GIL (``lapack``), kernels called by address and atomics for
a compiled loop that threads share (``addressed``, ``spin``), or a hook into numba itself
(``internals``).  An ordinary kernel never imports ``numba.core``, ``llvmlite`` or
``intrinsic``: it uses the functions here (``tests/test_layout.py`` keeps it so), so a
numba release that moves an internal breaks this folder only.
"""
