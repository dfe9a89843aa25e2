r"""The compiled loop of :func:`conicml._utils.gaussian_exp.exp_nonpositive` (needs ``numba``).

NumPy's float64 ``exp`` has SIMD code for AVX-512 only; on other x86 machines it calls the
C library once an element (~10 ns), and a 5 000 x 5 000 kernel spends ~0.25 s there, most
of its time. The loop below has no call inside, so the compiler vectorises it (four lanes
with AVX2): Cody–Waite range reduction, :math:`x = k\ln 2 + r` with :math:`|r| \le \ln 2/2`,
and the Taylor polynomial of :math:`e^r` to degree 13 (truncation below
:math:`4\cdot 10^{-18}` relative), then the scale :math:`2^k` written into the exponent
bits (fused multiply-adds allowed: no reassociation). Within 1 ulp of the C library's
``exp`` (tested).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["exp_nonpositive_rows"]

_LOG2E = 1.4426950408889634
# ln 2 split so that k * _LN2_HI is exact for |k| < 2^11 (fdlibm's ln2_hi / ln2_lo)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# t = x log2(e) + 1.5 * 2^52 holds round(x log2(e)) in its low mantissa bits
_SHIFT = 6755399441055744.0
_SHIFT_BITS = np.float64(_SHIFT).view(np.int64).item()
# 2^k is built as 2^(k + 60) (a normal number for every k >= -1076 reached here) times
# 2^-60, so that results below the normal range are rounded once, by the last product
_BIAS_BITS = 1023 + 60 - _SHIFT_BITS
_TWO_M60 = 2.0 ** -60
_FLOOR = -746.0  # exp(-746) rounds to 0 in float64: every smaller x gives 0 as well


@njit(cache=True, nogil=True, fastmath={"contract"})
def exp_nonpositive_rows(a):  # pragma: no cover - compiled
    """``a[...] = exp(min(a, 0))`` for a C-contiguous 2-D float64 array, row by row."""
    n, m = a.shape
    scratch = np.empty(m)
    bits = scratch.view(np.int64)
    for i in range(n):
        row = a[i]
        for j in range(m):
            x = row[j]
            x = 0.0 if x > 0.0 else x  # (a NaN stays NaN)
            x = _FLOOR if x < _FLOOR else x
            t = x * _LOG2E + _SHIFT
            k = t - _SHIFT
            r = (x - k * _LN2_HI) - k * _LN2_LO
            p = 1.0 / 6227020800.0  # 1/13!, then Horner down to 1
            p = p * r + 1.0 / 479001600.0
            p = p * r + 1.0 / 39916800.0
            p = p * r + 1.0 / 3628800.0
            p = p * r + 1.0 / 362880.0
            p = p * r + 1.0 / 40320.0
            p = p * r + 1.0 / 5040.0
            p = p * r + 1.0 / 720.0
            p = p * r + 1.0 / 120.0
            p = p * r + 1.0 / 24.0
            p = p * r + 1.0 / 6.0
            p = p * r + 0.5
            p = p * r + 1.0
            p = p * r + 1.0
            row[j] = p
            scratch[j] = t
        for j in range(m):  # the bits of 2^(k + 60): k + 60 + 1023 in the exponent field
            bits[j] = (bits[j] + _BIAS_BITS) << 52
        for j in range(m):
            row[j] = row[j] * scratch[j] * _TWO_M60
