r"""The exponential of a Gaussian kernel's exponents, :math:`e^{\min(x, 0)}`, in place.

NumPy's float64 ``exp`` has SIMD code for AVX-512 only; on other x86 machines it calls the
C library once an element (~10 ns), most of the time of a Gaussian kernel matrix
(0.2-0.25 s of 0.35 s at 5 000 x 5 000). The numba engine runs a loop the compiler
vectorises (:mod:`conicml._utils._gaussian_exp_numba`: range reduction and a polynomial,
within 1 ulp of ``np.exp``), ~4x faster there; the NumPy engine keeps ``np.exp``
(``CONICML_ENGINE``, :mod:`conicml._utils.engines`).
"""

from __future__ import annotations

import numpy as np

from .engines import resolve_engine

__all__ = ["exp_nonpositive"]


def exp_nonpositive(a: np.ndarray) -> np.ndarray:
    """``a[...] = exp(min(a, 0))`` for a float64 array, in place; returns ``a``.

    The exponents of a Gaussian kernel, :math:`-\\|u - v\\|^2 \\le 0` up to the rounding of
    their expansion (clipped at 0 here)."""
    if (a.ndim == 2 and a.dtype == np.float64 and a.flags.c_contiguous and a.size
            and resolve_engine("the Gaussian kernel's exp", "auto") == "numba"):
        from ._gaussian_exp_numba import exp_nonpositive_rows

        exp_nonpositive_rows(a)
        return a
    np.minimum(a, 0.0, out=a)
    return np.exp(a, out=a)
