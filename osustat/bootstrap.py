"""Bootstrap confidence intervals for a mean paired difference, optionally by cluster."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from ._resampling import chunk_rows
from ._validation import (
    as_float_vector,
    check_level,
    check_resamples,
    check_rng,
    list_some,
    power_of_two_scale,
)
from .intervals import ConfidenceInterval

__all__ = ["BootstrapCI", "bootstrap_ci", "cluster_bootstrap_ci"]

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, kw_only=True)
class BootstrapCI(ConfidenceInterval):
    """A bootstrap confidence interval for the mean: a :class:`ConfidenceInterval` plus
    the estimate and the resampling sizes.

    Attributes
    ----------
    statistic : float
        The observed mean (over units, so a cluster weighs by its size).
    low, high : float
        Interval bounds.
    level : float
    method : str
        ``'percentile'`` or ``'bca'``.
    n : int
        Number of units.
    n_clusters : int
        Number of resampled clusters (``n`` when no clusters are given).
    n_resamples : int
        Resamples drawn, or -- ``exact`` -- the number of distinct resamples enumerated.
    exact : bool
        The whole bootstrap distribution was enumerated (every distinct multiset of the
        ``n_clusters`` units, weighted by its multinomial probability): no Monte Carlo error.
    """

    statistic: float
    n: int
    n_clusters: int
    n_resamples: int
    exact: bool = False


def bootstrap_ci(
    differences: Any,
    *,
    level: float = 0.95,
    clusters: Any = None,
    method: str = "bca",
    n_resamples: int = 10_000,
    rng: Any = None,
    expand: bool = True,
    exact: bool | None = None,
) -> BootstrapCI:
    r"""Percentile or BCa bootstrap interval for the mean, resampling units or clusters.

    Parameters
    ----------
    differences : array_like
        Per-unit values (e.g. per-query paired differences), finite, at least 2.
    level : float
        Confidence level in (0, 1).
    clusters : array_like, optional
        A cluster id per unit (e.g. the episode of each query). Whole clusters are resampled
        with replacement, which keeps the dependence between queries of one episode; the
        statistic stays the mean over all units of the resampled clusters.
    method : {'bca', 'percentile'}
        BCa (bias-corrected and accelerated; acceleration from the leave-one-cluster-out
        jackknife) or plain percentile.
    n_resamples : int
    rng : {None, int, numpy.random.Generator}
    expand : bool
        Hesterberg's small-sample expansion (2015, "What teachers should know about the
        bootstrap", The American Statistician 69(4); ``ExpandProbs`` of his R package
        ``resample``): the quantiles are taken at the level whose normal quantile is
        ``sqrt(k / (k - 1)) * t_{k-1}`` (``k`` resampled units or clusters) instead of ``z``,
        undoing the two reasons a bootstrap interval of a mean is too narrow with few units --
        the resamples' spread uses divisor ``k``, and ``z`` ignores that the spread is
        estimated. It vanishes as ``k`` grows (95%: each tail's 2.5% becomes 0.24% at
        ``k = 6``, 1.6% at 20, 2.3% at 100; with ``k`` of 2 or 3 the interval is nearly the
        resamples' whole range). No bootstrap interval of a mean reaches 95% with ``k <= 5``:
        it lies within the ``k`` values' range, which misses a symmetric law's mean with
        chance ``2^(1-k)``. The interval's ``method`` then reads
        ``'expanded-bca'`` or ``'expanded-percentile'``.
    exact : bool, optional
        Enumerate every distinct resample (the multisets of the ``k`` units or clusters,
        ``C(2k - 1, k)`` of them, each weighted by its multinomial probability) instead of
        drawing ``n_resamples``: the ideal bootstrap, with no Monte Carlo error. Default: when
        ``k <= EXACT_MAX_UNITS`` (10: 92,378 resamples), where an expanded end sits in a tail
        of a few tenths of a percent, which 2,000 draws resolve only to a few resamples (the
        printed end then moved with the seed). ``rng`` is not used then.

    Returns
    -------
    BootstrapCI

    Notes
    -----
    BCa follows Efron & Tibshirani (1993, Section 14.3): ``z0 = Phi^{-1}(P*(theta* < theta))``
    (ties count half), ``a = sum(u^3) / (6 (sum u^2)^{3/2})`` with jackknife deviations ``u``,
    and the interval takes the ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` quantiles.

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat import bootstrap_ci
    >>> d = np.random.default_rng(0).normal(0.2, 1.0, size=200)
    >>> ci = bootstrap_ci(d, rng=1)
    >>> bool(ci.low < d.mean() < ci.high), ci.method, ci.n_clusters
    (True, 'expanded-bca', 200)
    """
    d = as_float_vector(differences, "differences", min_size=2)
    level = check_level(level)
    n_resamples = check_resamples(n_resamples, minimum=2)
    if method not in ("bca", "percentile"):
        raise ValueError(f"`method` must be one of {{'bca', 'percentile'}}; got {method!r}.")
    gen = check_rng(rng)
    # Rescale by a power of two (exact) so sums of huge values cannot overflow; the bounds
    # are scaled back at the end.
    exp = power_of_two_scale(d)
    d = np.ldexp(d, -exp)
    if clusters is None:
        sums, sizes = d, np.ones_like(d)
    else:
        codes = _cluster_codes(clusters, d.size)
        sums = np.bincount(codes, weights=d).astype(np.float64)
        sizes = np.bincount(codes).astype(np.float64)
    k = sums.size
    if k < 2:
        raise ValueError("`clusters` must contain at least 2 distinct clusters.")
    theta = float(sums.sum() / sizes.sum())

    exact = k <= EXACT_MAX_UNITS if exact is None else bool(exact)
    if exact and k > EXACT_LIMIT_UNITS:
        raise ValueError(
            f"`exact=True` enumerates every distinct resample, C(2k - 1, k) of them: out of "
            f"reach for k = {k} units or clusters (at most {EXACT_LIMIT_UNITS}: "
            f"{math.comb(2 * EXACT_LIMIT_UNITS - 1, EXACT_LIMIT_UNITS):,}); leave `exact` "
            "unset or pass exact=False to draw `n_resamples`."
        )
    weights: NDArray[np.float64] | None = None
    if exact:
        counts, weights = _all_resamples(k)
        boot = (counts @ sums) / (counts @ sizes)
        n_resamples = int(boot.size)
    else:
        boot = np.empty(n_resamples)
        for start, stop, counts in _cluster_counts(k, n_resamples, gen):
            boot[start:stop] = (counts @ sums) / (counts @ sizes)

    alpha = expanded_alpha(1.0 - level, k) if expand else 1.0 - level
    if np.ptp(boot) == 0:
        low = high = float(boot[0])
    elif method == "percentile":
        low, high = (_quantile(boot, q, weights) for q in (alpha / 2, 1 - alpha / 2))
    else:
        low, high = _bca(boot, theta, sums, sizes, alpha, weights)
    if not (np.isfinite(low) and np.isfinite(high)):  # internal invariant after rescaling
        raise FloatingPointError(f"bootstrap bounds are not finite: [{low}, {high}].")
    return BootstrapCI(
        statistic=float(np.ldexp(theta, exp)),
        low=float(np.ldexp(low, exp)),
        high=float(np.ldexp(high, exp)),
        level=level,
        method=f"expanded-{method}" if expand else method,
        n=int(d.size),
        n_clusters=int(k),
        n_resamples=n_resamples,
        exact=exact,
    )


#: Up to this many units (or clusters) `bootstrap_ci` enumerates every distinct resample.
EXACT_MAX_UNITS = 10
#: The most units `exact=True` may ask for (1,352,078 resamples; 13 would hold 5.2 million).
EXACT_LIMIT_UNITS = 12


@functools.cache
def _all_resamples(k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Every distinct bootstrap resample of ``k`` units: ``counts[r, j]`` how often unit ``j``
    is drawn in resample ``r`` (the ``C(2k - 1, k)`` multisets), and each one's probability
    ``k! / prod(counts!) / k^k`` (they sum to 1)."""
    draws = np.array(list(itertools.combinations_with_replacement(range(k), k)), dtype=np.intp)
    counts = np.zeros((draws.shape[0], k))
    np.add.at(counts, (np.arange(draws.shape[0])[:, None], draws), 1.0)
    log_w = special.gammaln(k + 1.0) - special.gammaln(counts + 1.0).sum(axis=1)
    weights = np.exp(log_w - k * math.log(k))
    counts.setflags(write=False)
    weights.setflags(write=False)
    return counts, weights


def _quantile(boot: NDArray[np.float64], q: float, weights: NDArray[np.float64] | None) -> float:
    """The q-quantile of the resampled values: interpolated among drawn ones (numpy's
    default), or -- given each distinct resample's probability -- the smallest value whose
    cumulative probability reaches q (the exact distribution's inverted CDF).

    The exact one sorts only the tail it needs (a partition of the m smallest or largest
    values, m grown until the crossing lies inside them): at k = 10 a full sort of the
    92,378 resamples was most of an interval's cost."""
    if weights is None:
        return float(np.quantile(boot, q))
    size = boot.size
    total = float(weights.sum())
    target = q * total * (1 - 1e-12)
    m = min(size, 4096)
    while True:
        if m == size:
            sel = np.argsort(boot)
            cum = np.cumsum(weights[sel])
            return float(boot[sel[min(int(np.searchsorted(cum, target)), size - 1)]])
        if q <= 0.5:  # the m smallest: the crossing must lie below their largest value
            part = np.argpartition(boot, m - 1)[:m]
            sel = part[np.argsort(boot[part])]
            i = int(np.searchsorted(np.cumsum(weights[sel]), target))
            if i < m and boot[sel[i]] < boot[sel[-1]]:
                return float(boot[sel[i]])
        else:  # the m largest: every other value lies at or below them
            part = np.argpartition(boot, size - m)[size - m :]
            sel = part[np.argsort(boot[part])]
            top = weights[sel]
            rest = total - float(top.sum())
            if rest < target:
                cum = rest + np.cumsum(top)
                return float(boot[sel[min(int(np.searchsorted(cum, target)), m - 1)]])
        m = min(size, 4 * m)


def expanded_alpha(alpha: float, k: int) -> float:
    """The two-sided tail mass whose normal quantile is ``sqrt(k / (k - 1)) t_{k-1}``'s:
    Hesterberg's expanded percentile level for ``k`` units (see :func:`bootstrap_ci`).

    >>> round(expanded_alpha(0.05, 6), 4), round(expanded_alpha(0.05, 1000), 4)
    (0.0049, 0.0496)
    """
    t = float(stats.t.ppf(1.0 - alpha / 2.0, k - 1))
    return float(2.0 * stats.norm.sf(np.sqrt(k / (k - 1.0)) * t))


def _cluster_counts(
    k: int, n_resamples: int, gen: np.random.Generator
) -> Iterator[tuple[int, int, NDArray[np.float64]]]:
    """The resampling engine: ``(start, stop, counts)`` chunks, ``counts[r, j]`` how often
    cluster ``j`` is drawn in resample ``start + r`` (``k`` draws with replacement)."""
    rows = chunk_rows(k)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        counts = gen.multinomial(k, np.full(k, 1.0 / k), size=stop - start).astype(np.float64)
        yield start, stop, counts


def _strata_groups(strata: Any, k: int) -> list[NDArray[np.intp]]:
    """Row indices of each stratum (in order of first appearance); each needs 2 rows."""
    labels = np.asarray(strata)
    if labels.shape != (k,):
        raise ValueError(f"`strata` must give one label per row of `totals` ({k}); got shape "
                         f"{labels.shape}.")  # fmt: skip
    _, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    groups = [np.flatnonzero(codes == c) for c in np.argsort(first)]
    small = [str(labels[g[0]]) for g in groups if g.size < 2]
    if small:
        raise ValueError(
            f"`strata` {', '.join(small)} hold fewer than 2 rows: nothing to resample."
        )
    return groups


def _stratified_counts(
    groups: list[NDArray[np.intp]], n_resamples: int, gen: np.random.Generator
) -> Iterator[tuple[int, int, NDArray[np.float64]]]:
    """:func:`_cluster_counts` within each stratum: ``counts[r, j]`` for row ``j``."""
    k = sum(g.size for g in groups)
    rows = chunk_rows(k)
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        counts = np.zeros((stop - start, k))
        for g in groups:
            counts[:, g] = gen.multinomial(g.size, np.full(g.size, 1.0 / g.size), size=stop - start)
        yield start, stop, counts


def cluster_bootstrap_ci(
    totals: Any,
    statistic: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    level: float = 0.95,
    n_resamples: int = 2_000,
    rng: Any = None,
    name: str = "statistic",
    strata: Any = None,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of any statistic of per-cluster totals.

    The engine of :func:`bootstrap_ci` (whole clusters drawn with replacement, the same
    multinomial stream) for statistics that are not a mean, e.g. the oracle-routing gain: the
    statistic sees the column totals of each resample.

    Parameters
    ----------
    totals : array_like, shape (n_clusters, m)
        Per-cluster totals (sums of values, counts of units, per group...).
    statistic : callable
        Maps an ``(r, m)`` array of resampled column totals (rows: resamples) to ``r``
        values; it is also applied to the observed totals (one row).
    level : float
    n_resamples : int
    rng : {None, int, numpy.random.Generator}
    name : str
        What the interval is of (its ``method`` says ``'percentile bootstrap of <name>'``).
    strata : array_like of int, optional
        A stratum per row (e.g. 0 for a reproduction's clusters, 1 for an independent
        original run's): each stratum's clusters are resampled within it, as many as it has,
        so independent samples stay independent and keep their sizes. Default: one stratum
        (the same random stream as without it).

    Returns
    -------
    ConfidenceInterval

    Examples
    --------
    The mean of cluster means' pooled values, as :func:`bootstrap_ci` with ``'percentile'``
    and no small-sample expansion (this interval has none: its statistic need not be a mean):

    >>> import numpy as np
    >>> from osustat.bootstrap import bootstrap_ci, cluster_bootstrap_ci
    >>> d = np.arange(10.0); clusters = np.repeat(np.arange(5), 2)
    >>> totals = np.column_stack([np.bincount(clusters, d), np.bincount(clusters)])
    >>> a = cluster_bootstrap_ci(totals, lambda t: t[:, 0] / t[:, 1], n_resamples=500, rng=1)
    >>> b = bootstrap_ci(d, clusters=clusters, method="percentile", n_resamples=500, rng=1,
    ...                  expand=False, exact=False)
    >>> bool(np.isclose(a.low, b.low) and np.isclose(a.high, b.high))
    True
    """
    table = np.asarray(totals, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 2:
        raise ValueError(
            "`totals` must be a 2-D array with one row per cluster and at least 2 clusters; "
            f"got shape {table.shape}."
        )
    if not np.all(np.isfinite(table)):
        raise ValueError("`totals` must be finite.")
    level = check_level(level)
    n_resamples = check_resamples(n_resamples, minimum=2)
    gen = check_rng(rng)
    boot = np.empty(n_resamples)
    chunks = (
        _cluster_counts(table.shape[0], n_resamples, gen)
        if strata is None
        else _stratified_counts(_strata_groups(strata, table.shape[0]), n_resamples, gen)
    )
    for start, stop, counts in chunks:
        boot[start:stop] = statistic(counts @ table)
    alpha = 1.0 - level
    # an unbounded resampled value (e.g. a ratio over a resampled 0) cannot be interpolated:
    # then the order statistics themselves (inf where they reach it), without a warning
    cuts = [alpha / 2, 1 - alpha / 2]
    if np.all(np.isfinite(boot)):
        low, high = (float(q) for q in np.quantile(boot, cuts))
    else:
        low, high = (float(q) for q in np.quantile(boot, cuts, method="inverted_cdf"))
    return ConfidenceInterval(
        low=low, high=high, level=level, method=f"percentile bootstrap of {name}"
    )


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd

        missing = pd.isna(value)
    except (TypeError, ValueError):
        return False
    return bool(missing) if np.ndim(missing) == 0 else False


def _cluster_codes(clusters: Any, n: int) -> NDArray[np.intp]:
    """Integer codes of the cluster ids; missing or mixed-type ids are refused."""
    if hasattr(clusters, "to_numpy"):
        clusters = clusters.to_numpy(dtype=object)
    labels = np.asarray(clusters, dtype=object)
    if labels.ndim != 1 or labels.size != n:
        raise ValueError(
            f"`clusters` must give one id per unit; got {labels.size} ids for {n} units."
        )
    missing = [i for i, v in enumerate(labels) if _is_missing(v)]
    if missing:
        raise ValueError(
            f"`clusters` has missing ids at positions {list_some(missing)} (None, NaN, pd.NA "
            "or NaT); give every unit a cluster or drop it (and report it)."
        )
    is_text = np.array([isinstance(v, str | bytes) for v in labels])
    if is_text.any() and not is_text.all():
        first_text = int(np.flatnonzero(is_text)[0])
        first_other = int(np.flatnonzero(~is_text)[0])
        raise ValueError(
            "`clusters` mixes text and non-text ids (e.g. "
            f"{labels[first_text]!r} at position {first_text} and {labels[first_other]!r} at "
            f"position {first_other}), so 1 and '1' would be ambiguous; use one id type."
        )
    index: dict[Any, int] = {}
    try:
        codes = [index.setdefault(v, len(index)) for v in labels]
    except TypeError as exc:
        raise TypeError(f"`clusters` ids must be hashable: {exc}") from None
    # Number clusters in the order of their text (as before), so seeds reproduce old results.
    rank = {v: r for r, v in enumerate(sorted(index, key=str))}
    remap = np.array([rank[v] for v in index], dtype=np.intp)
    return remap[np.asarray(codes, dtype=np.intp)]


def _bca(
    boot: NDArray[np.float64],
    theta: float,
    sums: NDArray[np.float64],
    sizes: NDArray[np.float64],
    alpha: float,
    weights: NDArray[np.float64] | None = None,
) -> tuple[float, float]:
    # Ties within rounding count half: a resample whose mean equals theta mathematically can
    # differ from it by a few ulps (counts @ sums vs sums.sum()), which used to move z0.
    tol = 8.0 * sums.size * _EPS * max(float(np.max(np.abs(sums / sizes))), abs(theta))
    tie = np.abs(boot - theta) <= tol
    below: float
    if weights is None:  # drawn resamples count alike
        below = (np.count_nonzero((boot < theta) & ~tie) + 0.5 * np.count_nonzero(tie)) / boot.size
    else:  # every distinct resample, by its probability
        mass = float(weights[(boot < theta) & ~tie].sum() + 0.5 * weights[tie].sum())
        below = mass / float(weights.sum())
    z0 = float(stats.norm.ppf(below))
    jack = (sums.sum() - sums) / (sizes.sum() - sizes)
    u = jack.mean() - jack
    denom = 6.0 * float((u**2).sum()) ** 1.5
    accel = float((u**3).sum()) / denom if denom > 0 else 0.0
    # isf, not ppf(1 - alpha/2): an expanded alpha of few units can be far below 1e-16,
    # where 1 - alpha/2 rounds to 1 (z = inf, then NaN)
    z = float(stats.norm.isf(alpha / 2))
    low, high = (
        _quantile(boot, _bca_level(z0, accel, side * z, alpha), weights) for side in (-1, 1)
    )
    return low, high


def _bca_level(z0: float, accel: float, z: float, alpha: float) -> float:
    """The quantile level BCa reads for one end (normal quantile `z`, negative for the
    lower end). Where the map leaves its range -- z0 infinite (every resample on one side):
    the plain percentile level; z infinite (an expanded level of 2 units) or past the
    map's pole 1 - a (z0 + z) = 0 (a large z with a skewed sample's acceleration, which the
    map approaches with its level running to 0 or 1): the resamples' end on that side."""
    end = 0.0 if z < 0 else 1.0
    if not math.isfinite(z0):
        return alpha / 2 if z < 0 else 1 - alpha / 2
    if not math.isfinite(z):
        return end
    w = z0 + z
    denom = 1.0 - accel * w
    if denom <= 0:
        return end
    return float(stats.norm.cdf(z0 + w / denom))
