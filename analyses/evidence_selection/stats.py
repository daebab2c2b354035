"""Statistics of the evidence-selection check: seed-averaged vs. pooled-seed tests (Appendix F).

:func:`compare_selection` tests a treatment against a baseline on per-query records (from
:func:`analyses.evidence_selection.run.selection_records`, or any records in the
:mod:`osustat.records` schema) the way Appendix F prescribes: each query's values are averaged
across seeds first, then one paired sign-flip test runs over the per-query differences. Beside
it, the pooled-seed test treats every (query, seed) difference as an independent pair -- the
anti-conservative analysis the paper first ran and then corrected -- and
:func:`osustat.seed_dependence` measures how dependent the seeds are.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from osustat import (
    CELLS,
    ConfidenceInterval,
    SeedDependence,
    SignFlipResult,
    adjust_pvalues,
    paired,
    validate_records,
)
from osustat._deprecation import renamed_attribute
from osustat.cells import cell_codes
from osustat.multitest import CORRECTIONS
from osustat.seeds import per_seed_values, seed_matrix, seed_tests

__all__ = [
    "EvidenceSelectionComparison",
    "SeedAwareTest",
    "compare_selection",
    "seed_aware_test",
]


@dataclass(frozen=True)
class SeedAwareTest:
    """Treatment vs. baseline on one scope (the aggregate or one cell), two ways.

    Attributes
    ----------
    scope : str
        ``'aggregate'`` or a cell label.
    n_queries, n_seeds : int
    treatment_mean, baseline_mean : float
        Means over queries of the seed-averaged per-query values.
    per_query : SignFlipResult
        The valid test: each query's values averaged across seeds, one pair per query
        (``n = n_queries``).
    pooled : SignFlipResult
        The anti-conservative contrast: every (query, seed) difference as an independent pair
        (``n = n_queries * n_seeds``). Shown, never to be reported as the result.
    dependence : SeedDependence or None
        :func:`osustat.seed_dependence` of the ``(n_queries, n_seeds)`` differences; None with
        one seed or fewer than 3 queries.
    pvalue_adjusted : float or None
        ``per_query.pvalue`` adjusted across the cells by :func:`compare_selection` (the name
        :func:`osustat.adjust_pvalues` uses; ``pvalue_corrected`` is its former name, a
        deprecated read-only alias); None for the aggregate and for a test made on its own.
    """

    scope: str
    n_queries: int
    n_seeds: int
    treatment_mean: float
    baseline_mean: float
    per_query: SignFlipResult
    pooled: SignFlipResult
    dependence: SeedDependence | None
    pvalue_adjusted: float | None = None

    pvalue_corrected = renamed_attribute("pvalue_adjusted")

    @property
    def effect(self) -> float:
        """Mean per-query difference, treatment minus baseline."""
        return self.per_query.statistic

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """CI of the mean per-query difference, inverting the per-query sign-flip test."""
        return self.per_query.confidence_interval(level)


def seed_aware_test(
    treatment: Any,
    baseline: Any,
    *,
    scope: str = "aggregate",
    n_resamples: int = 20_000,
    dependence_threshold: float = 0.3,
    rng: Any = None,
) -> SeedAwareTest:
    """Seed-averaged paired test of one scope, with the pooled-seed test beside it.

    Parameters
    ----------
    treatment, baseline : array_like, shape (n_queries, n_seeds)
        Per-query values of the two methods, one column per seed (the same queries and seeds,
        in the same order, in both). A 1-D array is one seed.
    scope : str
        Label of the scope (``'aggregate'`` or a cell).
    n_resamples : int
        Random sign vectors when a test is not exact (the paper: 20,000).
    dependence_threshold : float
        Passed to :func:`osustat.seed_dependence`.
    rng : {None, int, numpy.random.Generator}
        Both tests share one set of sign vectors drawn from it.

    Returns
    -------
    SeedAwareTest

    Notes
    -----
    The tests and the dependence are :func:`osustat.seeds.seed_tests` of ``treatment -
    baseline`` (the one implementation the audit shares); its Notes say why the per-query
    averaged test is the valid one and the pooled test anti-conservative.

    Examples
    --------
    Three seeds that merely repeat each query's value: pooling triples ``n`` and shrinks p.

    >>> import numpy as np
    >>> from osustat.analyses.evidence_selection.stats import seed_aware_test
    >>> rng = np.random.default_rng(0)
    >>> t = np.repeat(rng.normal(0.1, 0.5, size=(30, 1)), 3, axis=1)
    >>> res = seed_aware_test(t, np.zeros((30, 3)), rng=0)
    >>> res.per_query.n, res.pooled.n, bool(res.pooled.pvalue < res.per_query.pvalue)
    (30, 90, True)
    >>> res.dependence.too_dependent, res.dependence.duplicate_fraction
    (True, 1.0)
    """
    t = seed_matrix(treatment, "treatment", "query")
    b = seed_matrix(baseline, "baseline", "query")
    if t.shape != b.shape:
        raise ValueError(
            f"`treatment` and `baseline` must have the same shape (queries x seeds); got "
            f"{t.shape} and {b.shape}."
        )
    if not isinstance(scope, str):
        raise TypeError(f"`scope` must be a str; got {type(scope).__name__}.")
    res = seed_tests(
        t - b, n_resamples=n_resamples, dependence_threshold=dependence_threshold, rng=rng
    )
    return SeedAwareTest(
        scope=scope,
        n_queries=res.n_units,
        n_seeds=res.n_seeds,
        treatment_mean=float(t.mean()),
        baseline_mean=float(b.mean()),
        per_query=res.averaged,
        pooled=res.pooled,
        dependence=res.dependence,
    )


@dataclass(frozen=True)
class EvidenceSelectionComparison:
    """Result of :func:`compare_selection`.

    Attributes
    ----------
    treatment, baseline, metric : str
    budget : int
    seeds : tuple of int
    aggregate : SeedAwareTest
    cells : tuple of SeedAwareTest
        One per cell with at least 2 queries, in ``T+E+, T+E-, T-E+, T-E-`` order; empty when
        the records carry no cells or ``by_cell=False``.
    skipped_cells : tuple of (str, int)
        Cells with fewer than 2 queries (too few to test) and their query counts.
    correction : str
        Multiple-testing correction applied across the cells' per-query p-values.
    n_resamples : int
    level : float
        Confidence level of the intervals in :meth:`to_frame`.
    """

    treatment: str
    baseline: str
    metric: str
    budget: int
    seeds: tuple[int, ...]
    aggregate: SeedAwareTest
    cells: tuple[SeedAwareTest, ...]
    skipped_cells: tuple[tuple[str, int], ...]
    correction: str
    n_resamples: int
    level: float

    def to_frame(self) -> pd.DataFrame:
        """One row per scope (cells, then the aggregate).

        Columns: ``scope``, ``unit``, ``n``, ``n_seeds``, ``treatment``, ``baseline``,
        ``effect``, ``ci_low``, ``ci_high``, ``p_per_query``, ``p_corrected``,
        ``n_pooled_pairs``, ``p_pooled`` (anti-conservative contrast), ``seed_correlation``,
        ``effective_seeds``, ``seeds_too_dependent``.
        """
        rows = []
        for t in (*self.cells, self.aggregate):
            dep = t.dependence
            ci = t.confidence_interval(self.level)
            rows.append(
                {
                    "scope": t.scope,
                    "unit": "query (seed-averaged)",
                    "n": t.n_queries,
                    "n_seeds": t.n_seeds,
                    "treatment": t.treatment_mean,
                    "baseline": t.baseline_mean,
                    "effect": t.effect,
                    "ci_low": ci.low,
                    "ci_high": ci.high,
                    "p_per_query": t.per_query.pvalue,
                    "p_corrected": t.pvalue_adjusted,
                    "n_pooled_pairs": t.pooled.n,
                    "p_pooled": t.pooled.pvalue,
                    "seed_correlation": None if dep is None else dep.mean_correlation,
                    "effective_seeds": None if dep is None else dep.effective_seeds,
                    "seeds_too_dependent": None if dep is None else dep.too_dependent,
                }
            )
        return pd.DataFrame(rows)


def compare_selection(
    records: pd.DataFrame,
    treatment: str,
    baseline: str,
    *,
    metric: str = "hard_recall@0.5",
    budget: int,
    benchmark: str | None = None,
    by_cell: bool = True,
    correction: str = "holm",
    n_resamples: int = 20_000,
    level: float = 0.95,
    dependence_threshold: float = 0.3,
    rng: Any = None,
) -> EvidenceSelectionComparison:
    """Treatment vs. baseline from records: seed-averaged tests, pooled tests beside them.

    Parameters
    ----------
    records : pandas.DataFrame
        Records in the ``osustat.records`` schema (e.g. from
        :func:`analyses.evidence_selection.run.selection_records`); every query must have every
        seed for both methods.
    treatment, baseline : str
        Method names.
    metric : str
        ``'soft_recall'`` or ``'hard_recall@<tau>'`` (any metric works).
    budget : int
    benchmark : str, optional
        Required when the records hold several benchmarks.
    by_cell : bool
        Also test each cell (records must carry ``cell``), with `correction` across cells.
    correction : str
        As in :func:`osustat.adjust_pvalues` (default Holm, as the paper's "after correction").
    n_resamples : int
        Random sign vectors per Monte Carlo test (the paper: 20,000).
    level : float
        Confidence level of the intervals in :meth:`EvidenceSelectionComparison.to_frame`.
    dependence_threshold : float
        Passed to :func:`osustat.seed_dependence`.
    rng : {None, int, numpy.random.Generator}
        Split into one child generator per scope (``Generator.spawn``).

    Returns
    -------
    EvidenceSelectionComparison

    Notes
    -----
    Each scope is tested with :func:`seed_aware_test`; see its Notes for why the per-query
    averaged test is the valid one and the pooled test the anti-conservative contrast.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from osustat.analyses.evidence_selection.stats import compare_selection
    >>> rng = np.random.default_rng(0)
    >>> base = rng.normal(0.1, 0.5, size=30)  # per-query effect, repeated by 3 seeds
    >>> rows = [dict(episode_id="e", query_id=f"q{i}", method=m, budget=256, seed=s,
    ...              metric="soft_recall", value=(base[i] if m == "osu" else 0.0) + 1e-3 * s)
    ...         for i in range(30) for m in ("osu", "flat") for s in range(3)]
    >>> res = compare_selection(pd.DataFrame(rows), "osu", "flat", metric="soft_recall",
    ...                         budget=256, rng=0)
    >>> a = res.aggregate
    >>> res.seeds, a.per_query.n, a.pooled.n, bool(a.pooled.pvalue < a.per_query.pvalue)
    ((0, 1, 2), 30, 90, True)
    """
    if not isinstance(by_cell, bool):
        raise TypeError(f"`by_cell` must be a bool; got {type(by_cell).__name__}.")
    if correction not in CORRECTIONS:
        raise ValueError(f"`correction` must be one of {sorted(CORRECTIONS)}; got {correction!r}.")
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(f"`level` must be a number in (0, 1); got {level!r}.")
    kw: dict[str, Any] = {"metric": metric, "budget": budget, "benchmark": benchmark}
    records = validate_records(records)  # once: paired() and per_seed_values() reuse it
    averaged = paired(records, treatment, baseline, **kw)  # checks the arguments
    values = per_seed_values(records, treatment, baseline, units=averaged.ids, **kw)
    t_mat, b_mat, seeds = values.treatment, values.baseline, values.seeds
    scopes: list[tuple[str, NDArray[np.bool_]]] = [("aggregate", np.ones(averaged.n, bool))]
    skipped: list[tuple[str, int]] = []
    if by_cell and averaged.cells is not None:
        codes = cell_codes(averaged.cells)
        for k, cell in enumerate(CELLS):
            mask = codes == k
            if mask.sum() >= 2:
                scopes.append((cell.value, mask))
            elif mask.any():
                skipped.append((cell.value, int(mask.sum())))
    children = np.random.default_rng(rng).spawn(len(scopes))
    tests = [
        seed_aware_test(
            t_mat[mask],
            b_mat[mask],
            scope=scope,
            n_resamples=n_resamples,
            dependence_threshold=dependence_threshold,
            rng=child,
        )
        for (scope, mask), child in zip(scopes, children, strict=True)
    ]
    if len(tests) > 1:
        adjusted = adjust_pvalues([t.per_query.pvalue for t in tests[1:]], method=correction)
        tests[1:] = [
            replace(t, pvalue_adjusted=float(p))
            for t, p in zip(tests[1:], adjusted.pvalues_adjusted, strict=True)
        ]
    return EvidenceSelectionComparison(
        treatment,
        baseline,
        averaged.metric,
        averaged.budget,
        tuple(seeds),
        tests[0],
        tuple(tests[1:]),
        tuple(skipped),
        correction,
        n_resamples,
        level,
    )
