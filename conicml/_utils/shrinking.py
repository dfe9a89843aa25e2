"""The shrinking test of dual coordinate descent, compiled (needs ``numba``).

Shared by the compiled loops of ``dcd`` and of its distributed local solve: LIBLINEAR's
rule (Hsieh et al., ICML 2008, Algorithm 3).
"""

from __future__ import annotations

from numba import njit

__all__ = ["shrink_or_project"]


@njit(cache=True, nogil=True, inline="always")
def shrink_or_project(a, upper, G, pg_max_old, pg_min_old):  # pragma: no cover - compiled
    """``(shrink, PG)`` of a coordinate with multiplier ``a`` in ``[0, upper]``.

    ``shrink`` is true when ``a`` sits at a bound and its gradient ``G`` points out of
    the box by more than the previous pass's projected-gradient extreme (``G >
    pg_max_old`` at 0, ``G < pg_min_old`` at ``upper``): the coordinate is skipped
    until the active rows converge. Otherwise ``PG`` is the projected gradient:
    :math:`\\min(G, 0)` at 0, :math:`\\max(G, 0)` at ``upper``, ``G`` inside.
    """
    if a == 0.0:
        if G > pg_max_old:
            return True, 0.0
        return False, min(G, 0.0)
    if a == upper:
        if G < pg_min_old:
            return True, 0.0
        return False, max(G, 0.0)
    return False, G
