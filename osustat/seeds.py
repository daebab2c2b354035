"""Seed-aware paired testing: per-seed values, the seed-averaged test, the pooled contrast.

With several seeds per unit (query or episode), Appendix F prescribes averaging each unit's
values across seeds first and testing the ``n`` per-unit differences. Two other analyses are
common and anti-conservative when seeds are near-duplicates (temperature 0, deterministic
retrieval): pooling every (unit, seed) difference as an independent pair (``n * k`` pairs),
and Fisher-combining one test per seed. This module computes all three from one sign matrix,
plus :func:`osustat.seed_dependence` of the ``(n, k)`` differences, so the audit
(:mod:`osustat.audit.run`) and the evidence-selection analysis share one implementation:

* :func:`per_seed_values` -- records to ``(n_units, n_seeds)`` matrices of both methods,
  aligned on the units of the seed-averaged pairing (:func:`osustat.paired`); every seed must
  cover the same units;
* :func:`seed_tests` -- the seed-averaged, per-seed and pooled sign-flip tests of an
  ``(n, k)`` matrix, and the seeds' dependence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from osustat.schema import validate_records

from .combine import SeedDependence, fisher_combine, seed_dependence
from .records import paired
from .signflip import SignFlipResult, signflip_tests

__all__ = [
    "PerSeedValues",
    "SeedTests",
    "between_seed_dependence",
    "per_seed_values",
    "seed_matrix",
    "seed_tests",
]


@dataclass(frozen=True, eq=False)
class PerSeedValues:
    """Two methods' per-unit values, one column per seed.

    Attributes
    ----------
    ids : numpy.ndarray of str, shape (n_units,)
        The units, in the order of :func:`osustat.paired` (``'episode/query'`` or episode ids).
    seeds : tuple of int
        The seeds, ascending; column ``j`` holds seed ``seeds[j]``.
    treatment, baseline : numpy.ndarray, shape (n_units, n_seeds)
    """

    ids: NDArray[np.str_]
    seeds: tuple[int, ...]
    treatment: NDArray[np.float64]
    baseline: NDArray[np.float64]

    @property
    def differences(self) -> NDArray[np.float64]:
        """``treatment - baseline``, shape ``(n_units, n_seeds)``."""
        return self.treatment - self.baseline


def per_seed_values(
    records: pd.DataFrame,
    treatment: str,
    baseline: str,
    *,
    metric: str,
    budget: int,
    unit: str = "query",
    benchmark: str | None = None,
    units: Any = None,
) -> PerSeedValues:
    """Pair two methods once per seed and stack the seeds as columns.

    Parameters
    ----------
    records : pandas.DataFrame
        Long-format records, validated once with :func:`osustat.validate_records` (a
        ``ValidatedRecords`` is used as it is); the per-seed pairings check them no more.
    treatment, baseline, metric, budget, unit, benchmark
        As in :func:`osustat.paired`.
    units : array_like of str, optional
        The units every seed must cover, e.g. ``paired(...).ids`` of the seed-averaged
        pairing; rows follow this order. Default: the first seed's units.

    Returns
    -------
    PerSeedValues

    Raises
    ------
    ValueError
        What :func:`osustat.paired` raises for one seed, or a seed that lacks some of the
        units (or has others), naming the seed and up to 10 units.

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.seeds import per_seed_values
    >>> df = pd.DataFrame({"episode_id": "e", "query_id": ["q1", "q2"] * 4,
    ...                    "method": ["new"] * 4 + ["old"] * 4, "seed": [0, 0, 1, 1] * 2,
    ...                    "budget": 256, "metric": "hit@2", "value": [1, 0, 1, 1, 0, 0, 0, 1]})
    >>> v = per_seed_values(df, "new", "old", metric="hit@2", budget=256)
    >>> v.seeds, v.differences.tolist()
    ((0, 1), [[1.0, 1.0], [0.0, 0.0]])
    """
    df = validate_records(records)
    mask = (
        df["method"].isin([treatment, baseline])
        & (df["metric"] == "".join(str(metric).split()).lower())
        & (df["budget"] == budget)
    )
    if benchmark is not None:
        mask &= df["benchmark"] == benchmark
    chosen = df.select_rows(mask)  # validated once: paired() checks none of it again
    seeds = tuple(sorted(int(s) for s in chosen["seed"].unique()))
    if chosen["method"].nunique() < 2:
        # A method, metric, budget or benchmark is absent: paired() says which, listing the
        # known ones of the whole table.
        paired(df, treatment, baseline, metric=metric, budget=budget, unit=unit,
               benchmark=benchmark)  # fmt: skip
    ids = None if units is None else np.asarray(units, dtype=str)
    t_cols, b_cols = [], []
    for s in seeds:
        one = paired(
            chosen, treatment, baseline, metric=metric, budget=budget, unit=unit, seed=s,
            benchmark=benchmark,
        )  # fmt: skip
        if ids is None:
            ids = one.ids
        if not np.array_equal(np.sort(one.ids), np.sort(ids)):
            lacking = sorted(set(ids.tolist()) - set(one.ids.tolist()))
            extra = sorted(set(one.ids.tolist()) - set(ids.tolist()))
            what = (
                f"lacks {_plural(unit)} {lacking[:10]}"
                if lacking
                else f"has other {_plural(unit)} {extra[:10]}"
            )
            raise ValueError(
                f"every {unit} needs every seed to compare the seed-averaged, per-seed and "
                f"pooled tests; seed {s} {what}."
            )
        order = {u: i for i, u in enumerate(ids)}
        idx = [order[u] for u in one.ids]
        t_col, b_col = np.empty(ids.size), np.empty(ids.size)
        t_col[idx], b_col[idx] = one.treatment, one.baseline
        t_cols.append(t_col)
        b_cols.append(b_col)
    assert ids is not None  # both methods have rows, so there is a seed
    return PerSeedValues(ids, seeds, np.column_stack(t_cols), np.column_stack(b_cols))


def _plural(unit: str) -> str:
    return "queries" if unit == "query" else f"{unit}s"


@dataclass(frozen=True, eq=False)
class SeedTests:
    """The three seed analyses of one ``(n, k)`` matrix of paired differences.

    Attributes
    ----------
    averaged : SignFlipResult
        The valid test (Appendix F): each unit's differences averaged across seeds, one pair
        per unit (``n``).
    per_seed : tuple of SignFlipResult
        One test per seed column (``n`` each), the inputs of a Fisher combination.
    pooled : SignFlipResult
        Every (unit, seed) difference as an independent pair (``n * k``): the
        anti-conservative contrast, never to be reported as the result.
    dependence : SeedDependence or None
        :func:`osustat.seed_dependence` of the differences; None with one seed or fewer than
        3 units.
    """

    averaged: SignFlipResult
    per_seed: tuple[SignFlipResult, ...]
    pooled: SignFlipResult
    dependence: SeedDependence | None

    @property
    def n_units(self) -> int:
        return self.averaged.n

    @property
    def n_seeds(self) -> int:
        return len(self.per_seed)

    @property
    def fisher_pvalue(self) -> float:
        """Fisher's combination of the per-seed p-values (assumes independent seeds)."""
        return fisher_combine([t.pvalue for t in self.per_seed]).pvalue


def seed_matrix(x: Any, name: str = "differences", unit: str = "unit") -> NDArray[np.float64]:
    """`x` as a finite ``(n_units >= 2, n_seeds)`` float array (1-D: one seed).

    `name` and `unit` word the errors (e.g. ``'treatment'``, ``'query'``).

    Examples
    --------
    >>> from osustat.seeds import seed_matrix
    >>> seed_matrix([0.5, 1.0]).shape
    (2, 1)
    >>> seed_matrix([[0.5, float("nan")], [1.0, 0.0]], "treatment", "query")
    Traceback (most recent call last):
    ...
    ValueError: `treatment` has NaN or infinite values in query rows [0].
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be array-like of real numbers: {exc}") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(
            f"`{name}` must have shape (n_{_plural(unit)} >= 2, n_seeds); got {np.shape(x)}."
        )
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
    if bad.size:
        raise ValueError(f"`{name}` has NaN or infinite values in {unit} rows {bad[:10].tolist()}.")
    return arr


def seed_tests(
    differences: Any,
    *,
    tested: Any = None,
    n_resamples: int = 10_000,
    dependence_threshold: float = 0.3,
    rng: Any = None,
) -> SeedTests:
    """Seed-averaged, per-seed and pooled paired sign-flip tests, and the seeds' dependence.

    Parameters
    ----------
    differences : array_like, shape (n_units, n_seeds)
        Paired differences (treatment - baseline), one column per seed; 1-D is one seed.
    tested : array_like, shape (n_units, n_seeds), optional
        The values the tests run on when they differ from `differences`, e.g. differences
        shifted so that a claim's boundary null has mean 0 (``d - threshold``). Default:
        `differences`. The dependence is always measured on `differences`.
    n_resamples : int
        Random sign vectors for the Monte Carlo tests.
    dependence_threshold : float
        Passed to :func:`osustat.seed_dependence`.
    rng : {None, int, numpy.random.Generator}
        All tests share one sign matrix drawn from it (:func:`osustat.signflip_tests`); as
        the pooled column sets the matrix's width, each p equals what that call gives for any
        subset of these columns that includes the pooled one.

    Returns
    -------
    SeedTests

    Notes
    -----
    At temperature 0, with deterministic retrieval, seeds are near-duplicate observations
    (Appendix F measured within-query SDs of 13-17% of the across-query SD). Treating the
    ``n * k`` (unit, seed) differences as independent multiplies the apparent sample size by
    up to ``k`` while adding almost no information, so the pooled test's p is too small (its
    standard error shrinks by about ``sqrt(k)``); Fisher's combination of the per-seed tests
    assumes independent seeds for the same reason. The averaged test's null hypothesis is that
    each unit's seed-averaged difference is symmetric about 0.

    Examples
    --------
    Three seeds that merely repeat each unit's value: pooling triples ``n`` and shrinks p.

    >>> import numpy as np
    >>> from osustat.seeds import seed_tests
    >>> d = np.repeat(np.random.default_rng(0).normal(0.1, 0.5, size=(30, 1)), 3, axis=1)
    >>> res = seed_tests(d, rng=0)
    >>> res.averaged.n, res.n_seeds, res.pooled.n, bool(res.pooled.pvalue < res.averaged.pvalue)
    (30, 3, 90, True)
    >>> res.dependence.too_dependent, res.dependence.duplicate_fraction
    (True, 1.0)
    """
    d = seed_matrix(differences, "differences")
    x = d if tested is None else seed_matrix(tested, "tested")
    if x.shape != d.shape:
        raise ValueError(f"`tested` must have the shape of `differences` {d.shape}; got {x.shape}.")
    n, k = x.shape
    tests = signflip_tests(
        [x.mean(axis=1), *(x[:, j] for j in range(k)), x.ravel()],
        n_resamples=n_resamples,
        rng=rng,
    )
    dep = seed_dependence(d, threshold=dependence_threshold) if k >= 2 and n >= 3 else None
    return SeedTests(tests[0], tuple(tests[1:-1]), tests[-1], dep)


def between_seed_dependence(differences: Any, *, threshold: float = 0.3) -> SeedDependence:
    """Dependence of the per-seed test statistics when seeds share only some units.

    Parameters
    ----------
    differences : array_like, shape (n_units, n_seeds)
        Paired differences, NaN where a unit is absent from a seed (each seed draws its own
        units, e.g. ToolBench targets, and some units recur across seeds).
    threshold : float
        Correlation above which the seeds are flagged too dependent (as
        :func:`osustat.seed_dependence`, whose calibration is for the correlation of the
        per-seed statistics when every unit is shared).

    Returns
    -------
    SeedDependence
        ``correlation`` is the estimated correlation of the per-seed means,
        ``sum_shared (d_us - m_s)(d_us' - m_s') / sqrt(SS_s SS_s')`` (centered within each
        seed over its own units); it equals the Pearson correlation of the columns when every
        unit is in every seed and is 0 when no unit is shared. ``effective_seeds`` is
        ``k / (1 + (k - 1) max(rho, 0))`` with ``rho`` its mean off-diagonal value;
        ``duplicate_fraction`` is over the shared (unit, seed pair)s.

    Notes
    -----
    Fisher's combination needs independent per-seed p-values, i.e. uncorrelated statistics.
    The within-unit correlation of the differences (:func:`osustat.seed_dependence` on the
    units present in every seed) overstates that correlation by the inverse share of units
    the seeds have in common.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.seeds import between_seed_dependence
    >>> d = np.array([[1.0, 1.0], [0.0, np.nan], [np.nan, 0.5], [2.0, 2.0], [1.0, np.nan]])
    >>> round(between_seed_dependence(d).mean_correlation, 3)
    0.546
    """
    x = np.asarray(differences, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(
            f"`differences` must have shape (n_units, n_seeds >= 2); got {np.shape(differences)}."
        )
    present = ~np.isnan(x)
    if np.isinf(x).any():
        raise ValueError("`differences` has infinite values.")
    k = x.shape[1]
    few = [j for j in range(k) if present[:, j].sum() < 2]
    if few:
        raise ValueError(f"`differences`: seed columns {few} have fewer than 2 units.")
    centered = np.where(present, x - np.nanmean(x, axis=0), 0.0)
    ss = (centered**2).sum(axis=0)
    corr = np.eye(k)
    dup = []
    for i in range(k):
        for j in range(i + 1, k):
            both = present[:, i] & present[:, j]
            if both.any():
                dup.append(float(np.isclose(x[both, i], x[both, j], rtol=0, atol=1e-12).mean()))
            if ss[i] > 0 and ss[j] > 0:
                r = float((centered[both, i] * centered[both, j]).sum() / np.sqrt(ss[i] * ss[j]))
            else:
                r = 0.0
            corr[i, j] = corr[j, i] = r
    return SeedDependence.from_correlation(corr, dup, threshold)
