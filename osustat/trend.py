"""Trend tests across ordered conditions (doses) measured on the same blocks (units).

Two nulls, two tests (issue 23):

- :func:`mean_trend_test` (the default for a dose-response *claim*): H0 "no trend in the
  mean" -- the mean over units of each unit's least-squares slope on the doses is 0. Each
  unit may respond smoothly to the dose (AR(1) noise across doses, its own random slope);
  only the average slope is tested, by a sign-flip (or t) test on the per-unit slopes.
- :func:`within_block_trend_test`: H0 "the k values of a unit are exchangeable across
  doses" (Page's null), a sharper null. It also rejects when units have smooth responses
  with no mean trend (.09-.16 at alpha .05 on AR(1) and random-slope nulls;
  ``benchmarks/results-trend_calibration.md``), so a rejection says "not exchangeable", not
  "the mean rises with the dose".

The within-block test was used for the dose-response of the ToolBench overlap - disjoint gap
in the coverage bonus beta (paper Section 6.5): each block (a target, or an episode) carries
one value per ordered condition, and under the null the values within a block are
exchangeable across conditions, so the conditions' labels are permuted within each block and
never across blocks (the paired structure is kept). With within-block ranks as data the test
is Page's (1963) L test, which is how it is checked against ``scipy.stats.page_trend_test``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._resampling import chunk_rows
from ._skew import SKEW_TOLERANCE, sample_skewness, skew_excess
from ._validation import as_float_matrix, check_alternative, check_resamples, check_rng

__all__ = ["TrendResult", "mean_trend_test", "within_block_trend_test"]

#: Values of :func:`mean_trend_test`'s `method`.
MEAN_TREND_METHODS = ("sign-flip", "t")

_MAX_EXACT = 10**6


@dataclass(frozen=True, kw_only=True)
class TrendResult:
    """Result of :func:`within_block_trend_test` or :func:`mean_trend_test`.

    Attributes
    ----------
    statistic : float
        Mean over blocks of the linear contrast ``sum_j (s_j - mean(s)) x_bj``
        (:func:`within_block_trend_test`), or the mean per-block least-squares slope
        (:func:`mean_trend_test`, in units of the data per unit of score).
    pvalue : float
        Permutation p-value (exact, or ``(b + 1) / (B + 1)`` by Monte Carlo).
    exact : bool
        Whether every within-block permutation was enumerated.
    n_resamples : int
        Permutations used (``(k!)^n`` when exact).
    n_blocks : int
    n_conditions : int
    alternative : str
    null : str
        The null hypothesis tested: ``'exchangeable within blocks'`` or
        ``'mean slope 0'``.
    method : str
        ``'within-block permutation'``, ``'sign-flip'`` or ``'t'``.
    skewness : float
        :func:`mean_trend_test`: sample skewness (``G1``) of the per-block slopes, whose
        symmetry both of its methods assume; 0 for :func:`within_block_trend_test` (its
        permutation null needs none). See :meth:`skew_excess`.
    """

    statistic: float
    pvalue: float
    exact: bool
    n_resamples: int
    n_blocks: int
    n_conditions: int
    alternative: str
    null: str = "exchangeable within blocks"
    method: str = "within-block permutation"
    skewness: float = 0.0

    def skew_excess(self, alpha: float = 0.05) -> float:
        """Predicted excess of the level from the slopes' skewness (``osustat._skew``).

        The one-term Edgeworth error of the test of the mean slope at `alpha`, from
        ``|G1|`` whatever the side of a one-sided `alternative` (a two-sided test: its
        liberal tail at ``alpha / 2``). Above ``.2 alpha`` (a size above ``1.2 alpha``) the
        p-value should not be read at face value. The sign of the skewness is not trusted:
        reading the excess on the tested side only (its theory) missed 5-32% of the random
        designs where the test was liberal (both runs of ``benchmarks/skew_flag.py``), the
        few blocks' slopes looking skewed the other way; ``|G1|``, chosen after the first
        run, caught all 83 of the second's (``benchmarks/results-skew_flag-fresh.md``).
        """
        tail = "two-sided" if self.alternative == "two-sided" else "either"
        return skew_excess(self.skewness, self.n_blocks, alpha, tail)

    def skew_flagged(self, alpha: float = 0.05) -> bool:
        """Whether :meth:`skew_excess` passes ``SKEW_TOLERANCE * alpha`` (a size above
        ``1.2 alpha``): the p-value leans on a symmetry the slopes do not show."""
        return self.skew_excess(alpha) > SKEW_TOLERANCE * alpha


def _trend_iv(
    data: Any, scores: Any, alternative: str, n_resamples: Any
) -> tuple[NDArray[np.float64], NDArray[np.float64], str, int]:
    x = as_float_matrix(
        data, "data", shape="(n_blocks >= 1, n_conditions >= 2)", min_cols=2, rows="blocks"
    )
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
    permutations of the conditions (no dose effect of any kind). This is sharper than "no
    trend in the mean": units whose responses are smooth in the dose (AR(1) across doses,
    random slopes averaging 0) violate it, and the test rejects them .09-.16 of the time at
    alpha = .05. For a claim that the mean rises with the dose use :func:`mean_trend_test`.
    Statistic ``T = (1/n) sum_b sum_j (s_j - s_bar) x_bj``. The permutation distribution
    permutes each block's row independently; Monte Carlo p is ``(b + 1) / (B + 1)`` (Phipson
    & Smyth 2010), ties within a relative tolerance of 1e-9 count as extreme. The null is
    symmetric, so the two-sided p compares ``|T|``. Blocks must be independent of each
    other: when several blocks share a unit (e.g. the same ToolBench target in several
    seeds), average them into one block first. With within-block ranks as data, T is an
    increasing affine function of Page's L and the exact p equals Page's exact p.

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
    exact = n_perm is not None and n_perm <= min(n_resamples, _MAX_EXACT)
    if exact:
        # each block's contribution over its k! orderings; the null is their sum over blocks
        perms = np.array(list(itertools.permutations(range(k))))
        contrib = x[:, perms] @ c  # (n, k!)
        null = np.zeros(1)
        for b in range(n):
            null = (null[:, None] + contrib[b][None, :]).ravel()
        null = null / n
        used = null.size
        pvalue = _extreme(null, observed, alternative, tol) / used
    else:
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
        used = n_resamples
        pvalue = (count + 1) / (n_resamples + 1)
    return TrendResult(
        statistic=observed,
        pvalue=min(1.0, pvalue),
        exact=exact,
        n_resamples=used,
        n_blocks=n,
        n_conditions=k,
        alternative=alternative,
    )


def mean_trend_test(
    data: Any,
    *,
    scores: Any = None,
    alternative: str = "greater",
    method: str = "sign-flip",
    n_resamples: int = 10_000,
    rng: Any = None,
) -> TrendResult:
    """Test for a trend in the mean across ordered conditions: per-block slopes.

    Parameters
    ----------
    data : array_like, shape (n_blocks, n_conditions)
        One value per block (unit) and condition (in increasing dose order). No NaN.
        Blocks must be independent (average blocks that share a unit first).
    scores : array_like, shape (n_conditions,), optional
        Dose of each condition (default ``0, 1, ..., k-1``).
    alternative : {'greater', 'less', 'two-sided'}
        'greater': the mean rises with the dose.
    method : {'sign-flip', 't'}
        Test on the per-block slopes: the paired sign-flip test
        (:func:`osustat.signflip_tests`, exact when cheap; assumes slopes symmetric about 0
        under H0) or the one-sample t-test (``scipy.stats.ttest_1samp``; assumes their mean
        is about normal).
    n_resamples : int
        Random sign vectors for ``'sign-flip'`` when not enumerated exactly.
    rng : {None, int, numpy.random.Generator}

    Returns
    -------
    TrendResult
        ``statistic`` is the mean slope; ``null`` is ``'mean slope 0'``.

    Notes
    -----
    Each block's least-squares slope ``b_i = sum_j (s_j - s_bar) x_ij / sum_j (s_j -
    s_bar)^2`` summarizes its dose response; H0: ``E[b_i] = 0`` (no trend in the mean). Unlike
    :func:`within_block_trend_test` it allows any within-block dependence across doses
    (AR(1) noise, each unit's own slope), so a rejection is a statement about the mean trend.
    Calibration on exchangeable, AR(1)-across-doses and random-slope (mean 0) nulls:
    ``benchmarks/results-trend_calibration.md``. Both methods assume the slopes symmetric:
    with skewed slopes and few blocks they are liberal (8 blocks, right-skewed centred
    exponential slopes: .13 for ``alternative='less'``, .09 two-sided;
    ``benchmarks/results-skew_flag.md``); the result's `skewness` and
    :meth:`TrendResult.skew_excess` say when a p-value leans on that.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.trend import mean_trend_test
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(40, 5)) + 0.3 * np.arange(5)
    >>> res = mean_trend_test(x, rng=1)
    >>> res.pvalue < 0.001, res.null
    (True, 'mean slope 0')
    """
    from scipy import stats

    from .signflip import signflip_tests

    x, c, alternative, n_resamples = _trend_iv(data, scores, alternative, n_resamples)
    if method not in MEAN_TREND_METHODS:
        raise ValueError(f"`method` must be one of {sorted(MEAN_TREND_METHODS)}; got {method!r}.")
    if x.shape[0] < 2:
        raise ValueError("`data` must have at least 2 blocks to test the mean slope; got 1.")
    gen = check_rng(rng)
    slopes = (x @ c) / float(c @ c)
    if method == "t":
        if np.ptp(slopes) == 0:
            raise ValueError("every block has the same slope: the t statistic is undefined.")
        t = stats.ttest_1samp(slopes, 0.0, alternative=alternative)
        pvalue, exact, used = float(t.pvalue), False, 0
    else:
        res = signflip_tests([slopes], alternative=alternative, n_resamples=n_resamples, rng=gen)[0]
        pvalue, exact, used = res.pvalue, res.exact, res.n_resamples
    return TrendResult(
        statistic=float(slopes.mean()),
        pvalue=pvalue,
        exact=exact,
        n_resamples=used,
        n_blocks=x.shape[0],
        n_conditions=x.shape[1],
        alternative=alternative,
        null="mean slope 0",
        method=method,
        skewness=sample_skewness(slopes),
    )
