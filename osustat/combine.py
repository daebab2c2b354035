"""Combining per-seed p-values, and checking that the seeds are independent enough to do so.

The paper Fisher-combines per-seed permutation p-values across ToolBench seeds (Section 5.3).
Fisher's and Stouffer's methods assume independent p-values; seeds that re-score nearly the
same per-query values are not independent and their combination is anti-conservative
(Appendix F). :func:`seed_dependence` measures that dependence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ._validation import as_float_matrix, list_some

__all__ = [
    "CombinedResult",
    "SeedDependence",
    "fisher_combine",
    "seed_dependence",
    "stouffer_combine",
]


@dataclass(frozen=True, kw_only=True)
class CombinedResult:
    """Result of combining independent p-values.

    Attributes
    ----------
    statistic : float
        Fisher's ``-2 sum log p`` or Stouffer's ``Z``.
    pvalue : float
        Combined p-value.
    method : str
        ``'fisher'`` or ``'stouffer'``.
    n_pvalues : int
        Number of p-values combined.
    """

    statistic: float
    pvalue: float
    method: str
    n_pvalues: int


def _pvalues_iv(pvalues: Any) -> NDArray[np.float64]:
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"`pvalues` must be a non-empty 1-D array; got shape {p.shape}.")
    bad = np.flatnonzero(~np.isfinite(p) | (p <= 0) | (p > 1))
    if bad.size:
        raise ValueError(
            f"`pvalues` must lie in (0, 1]; bad values at positions {list_some(bad)} "
            f"({list_some(p[bad].tolist())}). Permutation p-values are never 0: use (b+1)/(B+1)."
        )
    return p


def fisher_combine(pvalues: Any) -> CombinedResult:
    r"""Fisher's method: ``X = -2 sum_i log p_i ~ chi^2_{2k}`` under the joint null.

    Parameters
    ----------
    pvalues : array_like
        Independent p-values in ``(0, 1]``.

    Returns
    -------
    CombinedResult

    Notes
    -----
    Valid only for independent p-values; check seeds with :func:`seed_dependence` first.

    References
    ----------
    .. [1] Fisher, R. A. (1932). Statistical Methods for Research Workers, 4th ed.

    Examples
    --------
    >>> from osustat import fisher_combine
    >>> res = fisher_combine([0.01, 0.2, 0.3])
    >>> round(res.statistic, 10), round(res.pvalue, 10)
    (14.8371618055, 0.0215617513)
    """
    p = _pvalues_iv(pvalues)
    statistic = float(-2.0 * np.log(p).sum())
    pvalue = float(stats.chi2.sf(statistic, 2 * p.size))
    return CombinedResult(
        statistic=statistic, pvalue=pvalue, method="fisher", n_pvalues=int(p.size)
    )


def stouffer_combine(pvalues: Any) -> CombinedResult:
    r"""Stouffer's method: ``Z = sum_i Phi^{-1}(1 - p_i) / sqrt(k)``, ``p = 1 - Phi(Z)``.

    Parameters
    ----------
    pvalues : array_like
        Independent one-sided p-values in ``(0, 1]``.

    Returns
    -------
    CombinedResult

    Notes
    -----
    One ``p = 1`` vetoes the combination: ``Phi^{-1}(0) = -inf``, so ``Z = -inf`` and the
    combined p is 1 whatever the other p-values (``scipy.stats.combine_pvalues`` does the
    same). An exact 1 comes from discrete tests (a sign-flip test whose differences are all
    0). :func:`fisher_combine` is not vetoed (a p of 1 adds 0 to its statistic); with
    Stouffer, report the veto rather than drop the p-value.

    Examples
    --------
    >>> from osustat import stouffer_combine
    >>> res = stouffer_combine([0.01, 0.2, 0.3])
    >>> round(res.statistic, 6), round(res.pvalue, 6)
    (2.131791, 0.016512)
    """
    p = _pvalues_iv(pvalues)
    z = stats.norm.isf(p)
    statistic = float(z.sum() / np.sqrt(p.size))
    return CombinedResult(
        statistic=statistic,
        pvalue=float(stats.norm.sf(statistic)),
        method="stouffer",
        n_pvalues=int(p.size),
    )


@dataclass(frozen=True, kw_only=True, eq=False)
class SeedDependence:
    """How dependent the seeds of a multi-seed run are.

    Attributes
    ----------
    correlation : numpy.ndarray
        ``(k, k)`` Pearson correlation of the per-query differences between seeds.
    mean_correlation : float
        Mean off-diagonal correlation ``rho``.
    duplicate_fraction : float
        Fraction of (query, seed pair) cells whose values are identical across the two seeds.
    effective_seeds : float
        ``k / (1 + (k - 1) rho)`` (the design effect of equicorrelated seeds), at least 1.
    too_dependent : bool
        ``mean_correlation > threshold``: combining the seeds' p-values as if independent
        (Fisher, Stouffer, or pooling queries across seeds) would be anti-conservative;
        average per query across seeds and run one paired test instead.
    threshold : float
        The correlation above which `too_dependent` is set.
    """

    correlation: NDArray[np.float64]
    mean_correlation: float
    duplicate_fraction: float
    effective_seeds: float
    too_dependent: bool
    threshold: float

    @classmethod
    def from_correlation(
        cls, corr: NDArray[np.float64], duplicates: list[float], threshold: float
    ) -> SeedDependence:
        """The summary of a ``(k, k)`` between-seed correlation matrix and the duplicate share
        of each seed pair (empty: no pair shares a unit)."""
        k = corr.shape[0]
        rho = float(corr[np.triu_indices(k, 1)].mean())
        eff = float(k / (1.0 + (k - 1) * max(rho, 0.0)))
        return cls(
            correlation=corr,
            mean_correlation=rho,
            duplicate_fraction=float(np.mean(duplicates)) if duplicates else 0.0,
            effective_seeds=max(eff, 1.0),
            too_dependent=rho > threshold,
            threshold=float(threshold),
        )


def seed_dependence(per_seed_differences: Any, *, threshold: float = 0.3) -> SeedDependence:
    """Measure the dependence between seeds of the per-query paired differences.

    Parameters
    ----------
    per_seed_differences : array_like, shape (n_queries, n_seeds)
        Paired difference of each query under each seed (same queries in every column).
    threshold : float
        Mean correlation above which the seeds are flagged as too dependent to combine.
        Measured (docs/statistics.md; 1,000 null replications, 60 queries, alpha = .05):
        Fisher over 5 seeds whose per-query differences correlate at rho rejects 4.3% at
        rho = 0, 4.5% at .2, 8.0% at .3, 8.5% at .5 and 15.7% at .9; over 3 seeds 3.9%,
        5.2%, 4.3%, 7.6% and 10.4%. The default .3 is where 5 seeds turn anti-conservative.

    Returns
    -------
    SeedDependence

    Notes
    -----
    Columns with zero variance have undefined correlation; they are treated as perfectly
    correlated with an identical column and uncorrelated otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat import seed_dependence
    >>> rng = np.random.default_rng(0)
    >>> base = rng.normal(size=(200, 1))
    >>> dep = seed_dependence(base + 0.05 * rng.normal(size=(200, 3)))
    >>> dep.too_dependent, round(dep.effective_seeds, 2)
    (True, 1.0)
    """
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise TypeError(f"`threshold` must be a number in [-1, 1]; got {threshold!r}.") from None
    if not -1.0 <= threshold <= 1.0:  # also refuses NaN, which would never flag
        raise ValueError(f"`threshold` must be a correlation in [-1, 1]; got {threshold}.")
    x = as_float_matrix(
        per_seed_differences,
        "per_seed_differences",
        shape="(n_queries >= 3, n_seeds >= 2)",
        min_rows=3,
        min_cols=2,
    )
    k = x.shape[1]
    sd = x.std(axis=0)
    corr = np.eye(k)
    dup = []
    for i in range(k):
        for j in range(i + 1, k):
            same = np.isclose(x[:, i], x[:, j], rtol=0, atol=1e-12)
            dup.append(float(same.mean()))
            if sd[i] > 0 and sd[j] > 0:
                r = float(np.corrcoef(x[:, i], x[:, j])[0, 1])
            else:
                r = 1.0 if same.all() else 0.0
            corr[i, j] = corr[j, i] = r
    return SeedDependence.from_correlation(corr, dup, threshold)
