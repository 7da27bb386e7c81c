"""User kernels defined at the top level of an importable module (the tests import it
as ``user_kernel_defs``), so that models fitted with them pickle by reference."""

import math

from fastrbf.user_kernels import define_kernel, exp


@define_kernel(positive_definite=True, derivative=lambda s: -exp(-s))
def gauss_user(s):
    """The built-in gaussian, written as a user kernel."""
    return exp(-s)


@define_kernel(positive_definite=True)
def matern52_user(s):
    """scikit-learn's Matern(nu=2.5) with gamma = 1 / length_scale**2."""
    t = math.sqrt(5.0 * s)
    return (1.0 + t + t * t / 3.0) * math.exp(-t)


@define_kernel(radial=False, positive_definite=True)
def poly2_user(t):
    """The built-in polynomial kernel of degree 2 and coef0 1."""
    b = 1.0 + t
    return b * b


@define_kernel
def mq_user(s):
    """The multiquadric without its sign (not declared positive definite)."""
    return math.sqrt(1.0 + s)


@define_kernel
def sine_user(s):
    """Not positive definite (not declared so)."""
    return math.cos(math.sqrt(s))
