"""The cell-conditional analysis of one paired comparison (Sections 6.2-6.3, 7, Appendix I).

:func:`cell_conditional` runs, on one :class:`~osustat.records.PairedRecords`, everything the
paper reports about a treatment-vs-baseline comparison: the aggregate and per-cell paired
sign-flip tests, bootstrap intervals, the method x cell interaction test, the mixture
decomposition of the aggregate, break-even thresholds, the oracle ceiling and the minimum
detectable effect per cell. Reports render the result; nothing here formats text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from osustat.power import PowerValue

from ._validation import check_level
from .bootstrap import BootstrapCI, bootstrap_ci
from .breakeven import BreakEvenResult, break_even_bootstrap
from .cells import CELLS, Cell, cell_codes
from .interaction import InteractionResult, interaction_test
from .oracle import OracleCeiling, oracle_ceiling
from .power import minimum_detectable_effect
from .records import PairedRecords
from .signflip import SignFlipResult, signflip_tests

__all__ = [
    "MDE_POWER",
    "CellConditionalResult",
    "CellEffect",
    "MDELevels",
    "cell_conditional",
    "cell_labels",
    "paired_effect_sizes",
    "verdict",
]

#: Power at which every minimum detectable effect is stated.
MDE_POWER = 0.8

#: Seed of the simulated MDE (continuous differences, n <= 12): common random numbers, so
#: the MDE is a fixed function of (n, alpha, sd), the same for every analysis seed.
MDE_SEED = 0


@dataclass(frozen=True, kw_only=True)
class CellEffect:
    """One row of the cross-tab: a cell (or the aggregate) of one comparison.

    Attributes
    ----------
    cell : Cell or None
        None for the aggregate over all units.
    n : int
    fraction : float
        ``n / N``.
    treatment_mean, baseline_mean, effect : float
        Means of the two methods and of their paired difference.
    contribution : float
        ``fraction * effect``; contributions add up to the aggregate effect.
    test : SignFlipResult
    ci : BootstrapCI
    mde : PowerValue
        Minimum detectable effect of the test this row runs (power :data:`MDE_POWER`, at the
        `alpha` given to :func:`cell_conditional`), from this row's differences:
        :func:`osustat.minimum_detectable_effect` with ``differences=``, so ``mde.method``
        is ``'exact-binomial'`` for 0/1 differences, ``'empirical'`` /
        ``'empirical-tilt'`` for others, a range from too few (nonzero) differences
        (``osustat.power.too_few_differences``). Infinite when no effect reaches that power
        at this n (underpowered at any effect). Computed when first read (a property;
        :meth:`mde_at` states it at another level, as :func:`osustat.analyze` does for a
        family): a search costs milliseconds to tens of them, and a level nobody prints is
        never searched.
    wins, ties, losses : int
        Units where the treatment scores above, equal to, below the baseline (W/T/L).
    effect_size_dz : float
        Cohen's d_z, mean difference / its standard deviation (ddof = 1); NaN when every
        difference is equal (:func:`paired_effect_sizes`).
    cles : float
        Paired common-language effect size, ``(wins + ties / 2) / n``: the probability that
        the treatment beats the baseline on a unit drawn at random, ties counted half.
    """

    cell: Cell | None
    n: int
    fraction: float
    treatment_mean: float
    baseline_mean: float
    effect: float
    contribution: float
    test: SignFlipResult
    ci: BootstrapCI
    mde_levels: MDELevels = field(repr=False, compare=False)
    wins: int
    ties: int
    losses: int
    effect_size_dz: float
    cles: float

    @property
    def mde(self) -> PowerValue:
        """The MDE at the level :func:`cell_conditional` was given."""
        return self.mde_levels.at(self.mde_levels.alpha)

    def mde_at(self, alpha: float) -> PowerValue:
        """The MDE of this row's test at level `alpha` (cached per level)."""
        return self.mde_levels.at(alpha)


class MDELevels:
    """One row's differences (and the treatment's and baseline's values behind them) and the
    MDEs searched on them so far, by level: each search runs once, and only for a level that
    is asked for."""

    def __init__(
        self, differences: np.ndarray, alpha: float, pairs: tuple[np.ndarray, np.ndarray]
    ) -> None:
        self.differences = differences
        self.pairs = pairs
        self.alpha = alpha
        self._found: dict[float, PowerValue] = {}

    def task(self, alpha: float) -> MDETask:
        """What :func:`search_mde` needs to search this row's MDE at `alpha`."""
        return self.differences, alpha, self.pairs

    def at(self, alpha: float) -> PowerValue:
        if alpha not in self._found:
            self._found[alpha] = search_mde(self.task(alpha))
        return self._found[alpha]

    def searched(self, alpha: float) -> bool:
        return alpha in self._found

    def keep(self, alpha: float, mde: PowerValue) -> None:
        """Hold an MDE searched elsewhere (:func:`search_mde` in a worker) for `alpha`."""
        self._found[alpha] = mde


#: A row's MDE search: its differences, the level, its (treatment, baseline) values.
MDETask = tuple[np.ndarray, float, tuple[np.ndarray, np.ndarray]]


def search_mde(task: MDETask) -> PowerValue:
    """The MDE of a row's differences at level `alpha` (``task = (differences, alpha,
    (treatment, baseline))``, :meth:`MDELevels.task`): the search :class:`MDELevels` runs, at
    module level so a worker process can run it. The values behind the differences go in
    too: the tilted model of count ratios moves the treatment's rate, not both."""
    differences, alpha, pairs = task
    return minimum_detectable_effect(
        None,
        differences.size,
        alpha=alpha,
        power=MDE_POWER,
        differences=differences,
        pairs=pairs,
        rng=MDE_SEED,
    )


def paired_effect_sizes(differences: Any) -> tuple[int, int, int, float, float]:
    """Win/tie/loss counts and the two effect sizes of paired differences.

    Returns ``(wins, ties, losses, d_z, cles)``: ``d_z`` is Cohen's d for paired samples
    (mean / standard deviation with ddof = 1; NaN when that deviation is 0 or n < 2);
    ``cles`` is ``(wins + ties / 2) / n``, the probability that the treatment's value
    exceeds the baseline's on a unit drawn at random (ties half), 0.5 when nothing changes.

    >>> from osustat.cellwise import paired_effect_sizes
    >>> w, t, l, dz, cles = paired_effect_sizes([0.5, 0.0, 1.0, -0.5])
    >>> (w, t, l, round(dz, 3), cles)
    (2, 1, 1, 0.387, 0.625)
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"`differences` must be a non-empty 1-d array; got shape {d.shape}.")
    wins, ties = int((d > 0).sum()), int((d == 0).sum())
    losses = int(d.size - wins - ties)
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    dz = float(d.mean()) / sd if sd > 0 else math.nan
    return wins, ties, losses, dz, (wins + ties / 2) / d.size


@dataclass(frozen=True, kw_only=True, eq=False)
class CellConditionalResult:
    """Everything :func:`cell_conditional` computes for one comparison (compared by
    identity: it holds the paired arrays)."""

    paired: PairedRecords
    aggregate: CellEffect
    cells: tuple[CellEffect, ...]
    interaction: InteractionResult | None
    break_even: BreakEvenResult | None
    oracle: OracleCeiling | None
    n_resamples: int
    alpha: float = 0.05
    excluded_cells: dict[Cell, int] = field(default_factory=dict)


def verdict(pvalue_adjusted: float, effect: float, mde: float, *, alpha: float = 0.05) -> str:
    """Plain-language verdict for one cell.

    ``'helps'`` / ``'hurts'`` when the corrected p is at most `alpha` (the rule the
    significance marks of :mod:`osustat.reports.cellwise` follow too); otherwise
    ``'no evidence either way at this n'``, with the MDE appended when the observed effect
    is smaller than what this n could detect, or ``underpowered at any effect`` when the MDE
    is infinite.

    >>> from osustat.cellwise import verdict
    >>> verdict(0.01, 0.2, 0.1), verdict(0.3, -0.02, 0.15)
    ('helps', 'no evidence either way at this n (MDE 0.150)')
    >>> verdict(0.5, 0.4, float("inf"))
    'no evidence either way at this n (underpowered at any effect)'
    """
    if pvalue_adjusted <= alpha:
        return "helps" if effect > 0 else "hurts"
    if getattr(mde, "mde_range", None) is not None:  # its value is the range's upper end
        from .wording import not_estimable

        return f"no evidence either way at this n ({not_estimable(mde)})"
    if not math.isfinite(mde):
        return "no evidence either way at this n (underpowered at any effect)"
    if abs(effect) < mde:
        return f"no evidence either way at this n (MDE {mde:.3f})"
    return "no evidence either way at this n"


def cell_labels(data: PairedRecords) -> np.ndarray | None:
    """The unit's cell labels (``'T+E+'``, ...) as a string array, None without cells."""
    if data.cells is None:
        return None
    return np.array([c.value for c in data.cells], dtype=object).astype(str)


def cell_conditional(
    data: PairedRecords,
    *,
    n_resamples: int = 10_000,
    bootstrap_resamples: int = 2_000,
    level: float = 0.95,
    alpha: float = 0.05,
    rng: Any = None,
) -> CellConditionalResult:
    """Run the cell-conditional analysis of one paired comparison.

    Parameters
    ----------
    data : PairedRecords
        From :func:`osustat.paired`. Per-cell results need ``data.cells`` (query unit);
        with episodes only the aggregate is computed. Cells with a single query get no
        per-cell row, interaction or break-even role; they are listed in
        ``excluded_cells`` (and stay in the aggregate).
    n_resamples : int
        Sign vectors for the tests (shared across the cells' tests; see
        :func:`osustat.signflip_tests`).
    bootstrap_resamples : int
        Resamples for the bootstrap intervals (clustered by episode at the query unit).
    level : float
        Confidence level of the intervals.
    alpha : float
        Level at which each row's minimum detectable effect is stated (:class:`CellEffect`;
        :func:`osustat.analyze` restates it at the level each row is tested at).
    rng : {None, int, numpy.random.Generator}
        Seeds the tests and bootstraps; the MDE uses its own fixed seed (:data:`MDE_SEED`).

    Returns
    -------
    CellConditionalResult

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat import paired
    >>> from osustat.cellwise import cell_conditional
    >>> df = pd.DataFrame({
    ...     "episode_id": [f"e{i % 6}" for i in range(24)] * 2,
    ...     "query_id": [f"q{i}" for i in range(24)] * 2,
    ...     "method": ["osu"] * 24 + ["flat"] * 24, "budget": 256, "metric": "hit@2",
    ...     "value": [1, 1, 0, 1, 1, 0] * 4 + [0, 1, 0, 1, 0, 0] * 4,
    ...     "cell": ["T+E+", "T-E-"] * 24})
    >>> res = cell_conditional(paired(df, "osu", "flat", metric="hit@2", budget=256),
    ...                        n_resamples=999, bootstrap_resamples=200, rng=0)
    >>> [(str(r.cell), r.n, round(r.effect, 3)) for r in res.cells]
    [('T+E+', 12, 0.667), ('T-E-', 12, 0.0)]
    >>> round(res.aggregate.effect, 3), res.oracle.label
    (0.333, 'in-sample upper bound (oracle cell labels)')
    """
    alpha = check_level(alpha, "alpha")
    gen = np.random.default_rng(rng)
    d = data.differences
    # Integer cell codes (positions in CELLS): every mask below is an array compare.
    codes = None if data.cells is None else cell_codes(data.cells)
    groups: list[tuple[Cell | None, np.ndarray]] = [(None, np.ones(d.size, dtype=bool))]
    if codes is not None:
        for k, c in enumerate(CELLS):
            mask = codes == k
            if mask.sum() >= 2:
                groups.append((c, mask))
    tests = signflip_tests([d[m] for _, m in groups], n_resamples=n_resamples, rng=gen)
    rows = []
    for (cell, mask), test in zip(groups, tests, strict=True):
        clusters = data.episode_ids[mask] if data.unit == "query" else None
        if clusters is not None and np.unique(clusters).size < 2:
            clusters = None
        ci = bootstrap_ci(
            d[mask], level=level, clusters=clusters, n_resamples=bootstrap_resamples, rng=gen
        )
        n = int(mask.sum())
        effect = float(d[mask].mean())
        wins, ties, losses, dz, cles = paired_effect_sizes(d[mask])
        rows.append(
            CellEffect(
                cell=cell,
                n=n,
                fraction=n / d.size,
                treatment_mean=float(data.treatment[mask].mean()),
                baseline_mean=float(data.baseline[mask].mean()),
                effect=effect,
                contribution=n / d.size * effect,
                test=test,
                ci=ci,
                mde_levels=MDELevels(d[mask], alpha, (data.treatment[mask], data.baseline[mask])),
                wins=wins,
                ties=ties,
                losses=losses,
                effect_size_dz=dz,
                cles=cles,
            )
        )
    aggregate, per_cell = rows[0], tuple(rows[1:])
    interaction = be = oracle = None
    excluded: dict[Cell, int] = {}
    if codes is not None:
        counts_by_code = np.bincount(codes, minlength=len(CELLS))
        kept_cells = {r.cell for r in per_cell}
        for k, c in enumerate(CELLS):
            if counts_by_code[k] and c not in kept_cells:
                # a cell of one query: no test, no interaction, no break-even
                excluded[c] = int(counts_by_code[k])
    if codes is not None and len(per_cell) >= 2:
        keep = ~np.isin(codes, [CELLS.index(c) for c in excluded])
        cells_arr = np.array(CELLS, dtype=object)[codes[keep]]
        interaction = interaction_test(d[keep], cells_arr, n_resamples=n_resamples, rng=gen)
        effects = {r.cell: r.effect for r in per_cell}
        counts = {r.cell: r.n for r in per_cell}
        for c, n in excluded.items():  # a cell too small to test still routes: its mean counts
            effects[c] = float(d[codes == CELLS.index(c)].mean())
            counts[c] = n
        oracle = oracle_ceiling(effects, counts)  # over every cell: its aggregate is the table's
        if Cell.TE in kept_cells:  # a one-query T+E+ routes in the oracle, has no break-even
            be = break_even_bootstrap(
                d[keep], cells_arr, level=0.90, n_resamples=bootstrap_resamples, rng=gen
            )
    return CellConditionalResult(
        paired=data,
        aggregate=aggregate,
        cells=per_cell,
        interaction=interaction,
        break_even=be,
        oracle=oracle,
        n_resamples=n_resamples,
        alpha=alpha,
        excluded_cells=excluded,
    )
