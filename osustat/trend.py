"""Within-block permutation test of a monotone trend across ordered conditions.

Used for the dose-response of the ToolBench overlap - disjoint gap in the coverage bonus
beta (paper Section 6.5): each block (a target, or an episode) carries one value per
ordered condition, and under the null the values within a block are exchangeable across
conditions, so the conditions' labels are permuted within each block and never across blocks
(the paired structure is kept). With within-block ranks as data the test is Page's (1963)
L test, which is how it is checked against ``scipy.stats.page_trend_test``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._resampling import chunk_rows
from ._validation import check_alternative, check_resamples, check_rng, list_some

__all__ = ["TrendResult", "within_block_trend_test"]

_MAX_EXACT = 10**6


@dataclass(frozen=True, kw_only=True)
class TrendResult:
    """Result of :func:`within_block_trend_test`.

    Attributes
    ----------
    statistic : float
        Mean over blocks of the linear contrast ``sum_j (s_j - mean(s)) x_bj``.
    pvalue : float
        Permutation p-value (exact, or ``(b + 1) / (B + 1)`` by Monte Carlo).
    exact : bool
        Whether every within-block permutation was enumerated.
    n_resamples : int
        Permutations used (``(k!)^n`` when exact).
    n_blocks : int
    n_conditions : int
    alternative : str
    """

    statistic: float
    pvalue: float
    exact: bool
    n_resamples: int
    n_blocks: int
    n_conditions: int
    alternative: str


def _trend_iv(
    data: Any, scores: Any, alternative: str, n_resamples: Any
) -> tuple[NDArray[np.float64], NDArray[np.float64], str, int]:
    x = np.asarray(data, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(
            f"`data` must be 2-D with shape (n_blocks >= 1, n_conditions >= 2); got {x.shape}."
        )
    bad = np.flatnonzero(~np.isfinite(x).all(axis=1))
    if bad.size:
        raise ValueError(f"`data` has NaN or infinite values in blocks {list_some(bad)}.")
    k = x.shape[1]
    s = np.arange(k, dtype=np.float64) if scores is None else np.asarray(scores, dtype=np.float64)
    if s.shape != (k,):
        raise ValueError(f"`scores` must have one entry per condition ({k}); got shape {s.shape}.")
    if not np.all(np.isfinite(s)) or np.ptp(s) == 0:
        raise ValueError("`scores` must be finite and not all equal.")
    return (
        x,
        s - s.mean(),
        check_alternative(alternative),
        check_resamples(n_resamples),
    )


def _extreme(null: NDArray[np.float64], observed: float, alternative: str, tol: float) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(null >= observed - tol))
    if alternative == "less":
        return int(np.count_nonzero(null <= observed + tol))
    return int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))


def within_block_trend_test(
    data: Any,
    *,
    scores: Any = None,
    alternative: str = "greater",
    n_resamples: int = 10_000,
    rng: Any = None,
) -> TrendResult:
    """Test for a monotone trend across ordered conditions, permuting within blocks.

    Parameters
    ----------
    data : array_like, shape (n_blocks, n_conditions)
        One value per block and condition (conditions in increasing dose order). No NaN.
    scores : array_like, shape (n_conditions,), optional
        Dose of each condition (default ``0, 1, ..., k-1``); only their centred values matter.
    alternative : {'greater', 'less', 'two-sided'}
        'greater': the values increase with the scores.
    n_resamples : int
        Exact enumeration when ``(k!)^n_blocks <= n_resamples`` (and at most 10^6),
        otherwise this many random within-block permutations.
    rng : {None, int, numpy.random.Generator}

    Returns
    -------
    TrendResult

    Notes
    -----
    H0: within every block, the joint distribution of the ``k`` values is invariant under
    permutations of the conditions (no dose effect). Statistic
    ``T = (1/n) sum_b sum_j (s_j - s_bar) x_bj``. The permutation distribution permutes each
    block's row independently; Monte Carlo p is ``(b + 1) / (B + 1)`` (Phipson & Smyth 2010),
    ties within a relative tolerance of 1e-9 count as extreme. The null is symmetric, so the
    two-sided p compares ``|T|``. Blocks must be independent of each other: when several
    blocks share a unit (e.g. the same ToolBench target in several seeds), average them into
    one block first. With within-block ranks as data, T is an increasing affine function of
    Page's L and the exact p equals Page's exact p.

    References
    ----------
    Page, E. B. (1963). Ordered hypotheses for multiple treatments. JASA 58, 216-230.
    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.trend import within_block_trend_test
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(40, 5)) + 0.3 * np.arange(5)
    >>> res = within_block_trend_test(x, rng=1)
    >>> res.pvalue < 0.001, res.exact
    (True, False)
    """
    x, c, alternative, n_resamples = _trend_iv(data, scores, alternative, n_resamples)
    n, k = x.shape
    observed = float((x @ c).mean())
    tol = 1e-9 * max(1.0, float(np.abs(x).max()) * float(np.abs(c).sum()))
    n_perm = math.factorial(k) ** n if n * math.log(math.factorial(k)) < 60 else None
    if n_perm is not None and n_perm <= min(n_resamples, _MAX_EXACT):
        # each block's contribution over its k! orderings; the null is their sum over blocks
        perms = np.array(list(itertools.permutations(range(k))))
        contrib = x[:, perms] @ c  # (n, k!)
        null = np.zeros(1)
        for b in range(n):
            null = (null[:, None] + contrib[b][None, :]).ravel()
        null = null / n
        count = _extreme(null, observed, alternative, tol)
        return TrendResult(
            statistic=observed,
            pvalue=min(1.0, count / null.size),
            exact=True,
            n_resamples=null.size,
            n_blocks=n,
            n_conditions=k,
            alternative=alternative,
        )
    gen = check_rng(rng)
    count = 0
    done = 0
    chunk = min(n_resamples, chunk_rows(n * k))
    while done < n_resamples:
        m = min(chunk, n_resamples - done)
        order = np.argsort(gen.random((m, n, k)), axis=2)
        null = (c[order] * x[None, :, :]).sum(axis=2).mean(axis=1)
        count += _extreme(null, observed, alternative, tol)
        done += m
    pvalue = (count + 1) / (n_resamples + 1)
    return TrendResult(
        statistic=observed,
        pvalue=min(1.0, pvalue),
        exact=False,
        n_resamples=n_resamples,
        n_blocks=n,
        n_conditions=k,
        alternative=alternative,
    )
