"""Multiple-testing correction and the paper's significance stars."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import check_level, list_some

__all__ = [
    "CORRECTIONS",
    "AdjustedPValues",
    "adjust_pvalues",
    "held_level",
    "level_name",
    "stars",
    "strictest_level",
]

#: statsmodels' names, which we pass through unchanged.
CORRECTIONS = ("holm", "bonferroni", "sidak", "holm-sidak", "hommel", "fdr_bh", "fdr_by")


def strictest_level(m: int, alpha: float, correction: str) -> float:
    """The level a test inside a family of `m` corrected tests is held to at the correction's
    strictest step -- the largest p it rejects whatever the other tests give: ``alpha / m``
    for Bonferroni, Holm, Hommel and Benjamini-Hochberg; ``1 - (1 - alpha) ** (1 / m)`` for
    Sidak and Holm-Sidak; ``alpha / (m * H_m)`` for Benjamini-Yekutieli (``H_m = 1 + 1/2 +
    ... + 1/m``); ``alpha / m`` for the Westfall-Young step-down (``maxt``, ``minp``: a
    conservative bound, their threshold depends on the tests' correlation); `alpha` for one
    test or ``correction = 'none'``. A power or MDE stated for such a test is stated at this
    level (``analyze``'s rows, the audit's claims, ``plan``'s cells).

    >>> strictest_level(4, 0.05, "holm"), strictest_level(4, 0.05, "none")
    (0.0125, 0.05)
    >>> round(strictest_level(4, 0.05, "fdr_by"), 5), round(strictest_level(4, 0.05, "sidak"), 5)
    (0.006, 0.01274)
    """
    if m <= 1 or correction == "none":
        return alpha
    if correction in ("sidak", "holm-sidak"):
        return float(-np.expm1(np.log1p(-alpha) / m))
    if correction == "fdr_by":
        return alpha / (m * float(np.sum(1.0 / np.arange(1, m + 1))))
    return alpha / m


def level_name(correction: str) -> str:
    """How a report names :func:`strictest_level`'s value for `correction`: ``'α/m'``,
    ``"Šidák's level"`` (Šidák, Holm-Šidák) or ``'α/(m·H_m)'`` (Benjamini-Yekutieli).

    >>> level_name("holm"), level_name("fdr_by")
    ('α/m', 'α/(m·H_m)')
    """
    if correction in ("sidak", "holm-sidak"):
        return "Šidák's level"
    return "α/(m·H_m)" if correction == "fdr_by" else "α/m"


@dataclass(frozen=True, kw_only=True, eq=False)
class AdjustedPValues:
    """Result of a multiple-testing correction.

    Attributes
    ----------
    reject : numpy.ndarray of bool
        ``pvalues_adjusted <= alpha``.
    pvalues_adjusted : numpy.ndarray
        Adjusted p-values (in input order), capped at 1.
    method : str
    alpha : float
    """

    reject: NDArray[np.bool_]
    pvalues_adjusted: NDArray[np.float64]
    method: str
    alpha: float


def adjust_pvalues(pvalues: Any, *, method: str = "holm", alpha: float = 0.05) -> AdjustedPValues:
    """Adjust a family of p-values for multiple testing (wraps statsmodels' ``multipletests``).

    Parameters
    ----------
    pvalues : array_like
        The family's p-values in ``[0, 1]``.
    method : str
        One of ``'holm'`` (default; valid under any dependence), ``'bonferroni'``,
        ``'sidak'``, ``'holm-sidak'``, ``'hommel'``, ``'fdr_bh'``, ``'fdr_by'``.
    alpha : float
        Family-wise error rate (or FDR level for the ``fdr_*`` methods).

    Returns
    -------
    AdjustedPValues

    Examples
    --------
    >>> from osustat import adjust_pvalues
    >>> adj = adjust_pvalues([0.01, 0.04, 0.03])
    >>> adj.pvalues_adjusted.round(4).tolist(), adj.reject.tolist()
    ([0.03, 0.06, 0.06], [True, False, False])
    """
    from statsmodels.stats.multitest import multipletests

    if method not in CORRECTIONS:
        raise ValueError(f"`method` must be one of {sorted(CORRECTIONS)}; got {method!r}.")
    alpha = check_level(alpha, "alpha")
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"`pvalues` must be a non-empty 1-D array; got shape {p.shape}.")
    bad = np.flatnonzero(~np.isfinite(p) | (p < 0) | (p > 1))
    if bad.size:
        raise ValueError(f"`pvalues` must lie in [0, 1]; bad values at positions {list_some(bad)}.")
    # Sidak's 1 - (1 - p)^m is computed as -expm1(m log1p(-p)): p = 1 takes log1p(-1) =
    # -inf, which gives the right adjusted value 1 but warns (issue 23); silence only that.
    if method == "holm":
        sm_reject, adjusted = _holm(p, alpha)
    else:
        with np.errstate(divide="ignore"):
            sm_reject, adjusted, _, _ = multipletests(p, alpha=alpha, method=method)
    adjusted = np.minimum(np.asarray(adjusted, dtype=np.float64), 1.0)
    reject = np.asarray(sm_reject, dtype=bool)
    # statsmodels decides by comparing p with alpha / m (etc.) while the adjusted value is
    # m * p; at exact boundaries such as p = 0.05/11 the product rounds to
    # 0.05000000000000001. Decisions are statsmodels'; an adjusted value that rounding put
    # on the wrong side of alpha (by at most a few ulps) is moved onto alpha's correct side,
    # so reject == (p_adj <= alpha) still holds exactly.
    near = np.abs(adjusted - alpha) <= 64 * np.finfo(np.float64).eps * alpha
    adjusted = np.where(near & reject & (adjusted > alpha), alpha, adjusted)
    adjusted = np.where(near & ~reject & (adjusted <= alpha), np.nextafter(alpha, 1.0), adjusted)
    if not np.array_equal(reject, adjusted <= alpha):  # a real disagreement, not rounding
        raise FloatingPointError(
            "statsmodels' decisions disagree with its adjusted p-values beyond rounding."
        )
    return AdjustedPValues(reject=reject, pvalues_adjusted=adjusted, method=method, alpha=alpha)


def held_level(pvalues: Any, k: int, method: str, alpha: float) -> float:
    """The level test `k` of a family is held to by `method`, the other tests' p as given:
    the largest p it could have and still be rejected (the decision is monotone in its own
    p). α/m at Holm's first step, up to α at its last (or BH's, where the others are
    rejected); `alpha` for ``'none'`` or one test. By bisection on the correction's own
    decisions, snapped to :func:`strictest_level` or `alpha` where within 1e-7 of them.

    >>> round(held_level([0.001, 0.002, 0.5], 2, "holm", 0.05), 6)  # the last step: alpha
    0.05
    >>> round(held_level([0.3, 0.4, 0.5], 2, "holm", 0.05), 6)  # the first: alpha / 3
    0.016667
    """
    from statsmodels.stats.multitest import multipletests

    ps = np.asarray(pvalues, dtype=float).copy()
    m = ps.size
    if method == "none" or m == 1:
        return alpha

    def rejected(p: float) -> bool:
        ps[k] = p
        if method == "holm":
            return bool(_holm(ps, alpha)[0][k])
        return bool(multipletests(ps, alpha=alpha, method=method)[0][k])

    lo, hi = 0.0, alpha
    if rejected(alpha):
        return alpha
    for _ in range(34):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rejected(mid) else (lo, mid)
    strictest = strictest_level(m, alpha, method)
    return strictest if abs(lo - strictest) <= 1e-7 * strictest else lo


def _holm(p: NDArray[np.float64], alpha: float) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Holm's step-down, statsmodels' ``multipletests(method='holm')`` line for line.

    statsmodels' Holm branch ends with ``gc.collect()``, a full garbage collection per call
    (0.2 s in a test process with a large heap; an analysis corrects one family per table).
    The same arithmetic here gives the same decisions and bits (tests compare the two).
    """
    m = p.size
    order = np.argsort(p)
    ps = p[order]
    notreject = ps > alpha / np.arange(m, 0, -1)
    nr = np.nonzero(notreject)[0]
    notreject[(nr.min() if nr.size else m) :] = True
    adjusted_sorted = np.maximum.accumulate(ps * np.arange(m, 0, -1))
    reject = np.empty(m, dtype=bool)
    adjusted = np.empty(m)
    reject[order] = ~notreject
    adjusted[order] = adjusted_sorted
    return reject, adjusted


def stars(p: float) -> str:
    """The paper's significance marks: ``.`` p <= .10, ``*`` <= .05, ``**`` <= .01, ``***`` <= .001.

    The cut-offs are inclusive, as the decisions are (:func:`adjust_pvalues` rejects when
    ``p_adj <= alpha``, :func:`osustat.cellwise.verdict` too), so p = .05 is marked ``*``
    beside a verdict that counts it as significant.

    >>> from osustat import stars
    >>> [stars(p) for p in (0.2, 0.07, 0.05, 0.005, 0.001)]
    ['', '.', '*', '**', '***']
    """
    p = float(p)
    if not np.isfinite(p) or p < 0 or p > 1:
        raise ValueError(f"`p` must be a p-value in [0, 1]; got {p}.")
    for threshold, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.10, ".")):
        if p <= threshold:
            return mark
    return ""
