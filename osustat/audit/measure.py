"""Phase 1 of the audit: pair the records and recompute each claim's statistics.

Nothing here judges a claim; :mod:`osustat.audit.verdicts` does that after the family
corrections (:mod:`osustat.audit.run`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from osustat._validation import list_some
from osustat.audit.claim import Claim
from osustat.bootstrap import BootstrapCI, bootstrap_ci
from osustat.cells import CELLS, cell_codes
from osustat.combine import SeedDependence
from osustat.equivalence import EquivalenceResult, tost_signflip
from osustat.interaction import InteractionResult, interaction_test
from osustat.ratio import RatioResult, ratio_of_means
from osustat.records import PairedRecords, paired
from osustat.reproduction import ReproductionMeasures, reproduction_measures
from osustat.schema import ValidatedRecords, validate_records
from osustat.seeds import PerSeedValues, between_seed_dependence, per_seed_values, seed_tests
from osustat.signflip import SignFlipResult, signflip_tests

__all__ = ["NOTE_CODES", "Measured", "Note", "Pairings", "measure"]

#: Note codes (:func:`osustat.reports._audit_words.note_text` words them):
#: ``seed-dependence-unmeasured`` (``detail`` says why), ``fieller-independent-queries`` (a
#: relative claim on clustered queries), ``one-seed`` (a pooled/Fisher claim on one seed).
#: ``seeds-share-units``: the seeds hold different but overlapping units (``detail`` gives the
#: counts); the seed-averaged test then has one unit per distinct unit id, each averaged over
#: the seeds it appears in, and Fisher combines per-seed tests on each seed's own units.
NOTE_CODES = (
    "mc-resampled",  # the p was resampled sequentially near alpha (``detail``: the last B)
    "seed-dependence-unmeasured",
    "fieller-independent-queries",
    "one-seed",
    "seeds-share-units",
)


@dataclass(frozen=True)
class Note:
    """Something the reader of a claim's check should know; ``code`` is in :data:`NOTE_CODES`."""

    code: str
    detail: str = ""


#: The paper's interaction test (Section 6.3) and the calibrated one (docs/statistics.md).
AS_TESTED_INTERACTION = "centered-signflip"
STRICT_INTERACTION = "studentized-signflip"


@dataclass(frozen=True)
class Measured:
    """Phase-1 result of one claim, before the family corrections."""

    claim: Claim
    missing: str | None = None
    n: int = 0
    n_seeds: int = 0
    d: NDArray[np.float64] | None = None
    #: the units' treatment and baseline values behind `d` (the MDE's tilted model of count
    #: ratios moves the treatment's rate); None where no MDE is stated (interactions)
    pairs: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
    treatment_mean: float = math.nan
    baseline_mean: float = math.nan
    test: SignFlipResult | None = None
    ci: BootstrapCI | None = None
    seeds: SeedDependence | None = None
    per_seed_pvalues: tuple[float, ...] = ()
    pooled: SignFlipResult | None = None
    equivalence: EquivalenceResult | None = None
    ratio: RatioResult | None = None
    interaction: InteractionResult | None = None
    interaction_as_tested: InteractionResult | None = None
    notes: tuple[Note, ...] = ()
    reproduction: ReproductionMeasures | None = None


@dataclass(frozen=True, eq=False)
class SeedPairings:
    """Per-seed pairings when the seeds hold different (overlapping) units.

    ``pairs[j]`` is seed ``seeds[j]``'s pairing on its own units.
    """

    seeds: tuple[int, ...]
    pairs: tuple[PairedRecords, ...]

    def counts(self, units: NDArray[np.str_]) -> str:
        """``'3 seeds: 200, 200, 200 units; 358 distinct, 140 in >= 2 seeds'`` for `units`."""
        keep = set(units.tolist())
        per = [int(np.isin(p.ids, units).sum()) for p in self.pairs]
        seen: dict[str, int] = {}
        for p in self.pairs:
            for u in p.ids.tolist():
                if u in keep:
                    seen[u] = seen.get(u, 0) + 1
        shared = sum(v > 1 for v in seen.values())
        return (
            f"{len(self.seeds)} seeds hold {', '.join(map(str, per))} units; {len(seen)} "
            f"distinct, {shared} in two or more seeds"
        )


def _unbalanced_seed_tests(
    c: Claim, data: PairedRecords, sp: SeedPairings, mask: NDArray[np.bool_], n_resamples: int,
    gen: Any,
) -> tuple[tuple[float, ...], SignFlipResult, SeedDependence | None]:  # fmt: skip
    """Per-seed tests on each seed's own units, the pooled contrast, the between-seed
    dependence of the per-seed statistics (:func:`osustat.seeds.between_seed_dependence`)."""
    units = data.ids[mask]
    pos = {u: i for i, u in enumerate(units.tolist())}
    cols, diffs = [], np.full((units.size, len(sp.seeds)), np.nan)
    for j, p in enumerate(sp.pairs):
        keep = np.isin(p.ids, units)
        t, b = p.treatment[keep], p.baseline[keep]
        cols.append(_shifted(c, t, b))
        diffs[[pos[u] for u in p.ids[keep].tolist()], j] = t - b
    tests = signflip_tests([*cols, np.concatenate(cols)], n_resamples=n_resamples, rng=gen)
    dep = None
    if all(col.size >= 2 for col in cols):
        dep = between_seed_dependence(diffs)
    return tuple(x.pvalue for x in tests[:-1]), tests[-1], dep


class Pairings:
    """The records of one audit, paired once per comparison (claims share comparisons).

    Parameters
    ----------
    df : pandas.DataFrame
        Records, validated once here (:func:`osustat.validate_records`; a
        ``ValidatedRecords`` is used as it is). Each comparison pairs only its own rows,
        selected with :meth:`~osustat.schema.ValidatedRecords.select_rows` so that
        :func:`osustat.paired` does not check them again.
    """

    def __init__(self, df: pd.DataFrame, unavailable: Mapping[str, str] | None = None) -> None:
        self.df = validate_records(df)
        #: benchmark -> why its records cannot check its claims (``audit(unavailable=...)``)
        self.unavailable = dict(unavailable or {})
        self._pairs: dict[
            tuple[Any, ...], tuple[PairedRecords | str, PerSeedValues | SeedPairings | None, str]
        ]
        self._pairs = {}
        self._combos: ValidatedRecords | None = None

    def no_cells(self, c: Claim) -> str:
        """Why claim `c`'s queries have no cell: the records carry none, or only on other
        metrics (an import writes a judge's cells on ``judge.cells``)."""
        df = self.df
        if "cell" not in df or not df["cell"].notna().any():
            return "the records carry no `cell` column"
        rows = df["method"].isin([c.treatment, c.baseline]) & df["cell"].notna()
        others = sorted(set(df.loc[rows, "metric"].astype(str)))
        if not others:
            return "the records carry no cell for these methods' queries"
        return (
            f"metric {c.metric!r} carries no cell in these records; the cells are on metric(s) "
            f"{list_some(others, quote=True)}: claim that metric"
        )

    def _why_absent(self, c: Claim) -> str:
        """:func:`osustat.paired`'s own error for a comparison whose rows are absent.

        Its checks for an absent benchmark, method, metric or budget depend only on which
        (benchmark, method, metric, budget) combinations exist, so one row of each gives
        the same message as the whole table, without validating the whole table again.
        """
        if self._combos is None:
            df = self.df
            self._combos = df.select_rows(
                ~df.duplicated(["benchmark", "method", "metric", "budget"]).to_numpy()
            )
        try:
            paired(
                self._combos, c.treatment, c.baseline, metric=c.metric, budget=c.budget,
                unit=c.unit, benchmark=c.benchmark,
            )  # fmt: skip
        except ValueError as exc:
            return str(exc)
        raise AssertionError("paired() accepted a comparison whose rows are absent")

    def get(self, c: Claim) -> tuple[PairedRecords | str, PerSeedValues | SeedPairings | None, str]:
        """The seed-averaged pairing (or why there is none), per-seed values, and a note."""
        if c.benchmark in self.unavailable:
            return self.unavailable[c.benchmark], None, ""
        key = (c.benchmark, c.treatment, c.baseline, c.metric, c.budget, c.unit, c.seed)
        if key not in self._pairs:
            self._pairs[key] = self._pair(c)
        return self._pairs[key]

    def _pair(
        self, c: Claim
    ) -> tuple[PairedRecords | str, PerSeedValues | SeedPairings | None, str]:
        df = self.df
        kw: dict[str, Any] = {"metric": c.metric, "budget": c.budget, "unit": c.unit}
        mask = (
            df["method"].isin([c.treatment, c.baseline])
            & (df["metric"] == c.metric)
            & (df["budget"] == c.budget)
        )
        if c.benchmark is not None:
            mask &= df["benchmark"] == c.benchmark
        sub = df.select_rows(mask)
        if sub["method"].nunique() < 2:
            return self._why_absent(c), None, ""
        if c.seed is not None and c.seed not in set(sub["seed"].tolist()):
            known = sorted(sub["seed"].unique().tolist())
            why = f"seed {c.seed} is not in the records for this comparison; known seeds: {known}"
            return why, None, ""
        try:
            data = paired(sub, c.treatment, c.baseline, benchmark=c.benchmark, seed=c.seed, **kw)
        except ValueError as exc:
            return str(exc), None, ""
        if data.n_seeds < 2:
            return data, None, ""
        seeds = tuple(sorted(int(s) for s in sub["seed"].unique()))
        per = [
            paired(sub, c.treatment, c.baseline, benchmark=c.benchmark, seed=s, **kw) for s in seeds
        ]
        if all(np.array_equal(np.sort(p.ids), np.sort(data.ids)) for p in per):
            values = per_seed_values(
                sub, c.treatment, c.baseline, benchmark=c.benchmark, units=data.ids, **kw
            )
            return data, values, ""
        return data, SeedPairings(seeds, tuple(per)), ""


def _shifted(c: Claim, t: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-unit values whose mean is 0 under the claim's boundary null."""
    if c.kind == "relative":
        # mean(t) = (1 + r0) mean(b)  <=>  mean(t - (1 + r0) b) = 0 (Fieller's pivot).
        return t - (1.0 + c.threshold) * b
    if c.kind == "equivalence":
        return t - b
    return t - b - c.threshold


def _interaction(c: Claim, data: PairedRecords, n_resamples: int, gen: Any) -> Measured:
    assert data.cells is not None  # measure() says which metric carries the cells
    present = {x for x in data.cells if x is not None}
    if len(present) < 2:
        return Measured(c, missing=f"the records hold {len(present)} cell(s); 2 are needed")
    sizes = Counter(x for x in data.cells if x is not None)
    small = [f"{cell} (n = {sizes[cell]})" for cell in CELLS if 0 < sizes[cell] < 2]
    if small:  # the interaction test needs 2 units per cell: not testable, never a crash
        return Measured(c, missing=f"not testable: too few units in {', '.join(small)}")
    as_tested = interaction_test(
        data.differences, data.cells, method=AS_TESTED_INTERACTION, n_resamples=n_resamples,
        rng=gen,
    )  # fmt: skip
    strict = interaction_test(
        data.differences, data.cells, method=STRICT_INTERACTION, n_resamples=n_resamples,
        rng=gen,
    )  # fmt: skip
    return Measured(
        c,
        n=data.n,
        n_seeds=data.n_seeds,
        d=data.differences,
        treatment_mean=float(data.treatment.mean()),
        baseline_mean=float(data.baseline.mean()),
        interaction=strict,
        interaction_as_tested=as_tested,
    )


def _reproduction(
    c: Claim,
    t: NDArray[np.float64],
    b: NDArray[np.float64],
    clusters: NDArray[Any] | None,
    level: float,
    n_resamples: int,
    gen: np.random.Generator,
) -> ReproductionMeasures | None:
    """ER and ΔRI against the paper's printed values, when the claim prints them: its two
    means, else its effect (a difference claim's Δ feeds ER, a relative claim's RI ΔRI)."""
    printed: dict[str, Any] = {}
    if c.reported_means is not None:
        printed["original_means"] = c.reported_means
    elif c.reported_effect is not None and c.kind in ("difference", "relative"):
        key = "original_relative" if c.kind == "relative" else "original_effect"
        printed[key] = c.reported_effect
    if not printed or c.kind in ("interaction", "equivalence"):
        return None
    return reproduction_measures(
        t, b, **printed, clusters=clusters, level=level, n_resamples=n_resamples, rng=gen
    )


def _as_printed(
    c: Claim,
    pairings: Pairings,
    t: NDArray[np.float64],
    b: NDArray[np.float64],
    clusters: NDArray[Any] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any] | None] | str:
    """The values ER and ΔRI compare with the printed means or effect: the tested units' own,
    or with ``reported_over = 'query'`` the queries of an episode-unit claim, pooled (every
    query weighs alike), resampled by episode. The test, its interval and the recomputed means
    stay the tested units'. A string says why the queries cannot be paired."""
    if c.reported_over != "query":
        return t, b, clusters
    queries, _, _ = pairings.get(replace(c, unit="query"))
    if isinstance(queries, str):
        return f"its printed numbers are pooled over queries (`reported_over`): {queries}"
    ids = queries.episode_ids
    return queries.treatment, queries.baseline, ids if np.unique(ids).size >= 2 else None


def measure(
    c: Claim,
    pairings: Pairings,
    n_resamples: int,
    bootstrap_resamples: int,
    level: float,
    gen: np.random.Generator,
) -> Measured:
    """Recompute everything the verdicts of claim `c` need (or say what is missing)."""
    data, per_seed, note = pairings.get(c)
    if isinstance(data, str):
        return Measured(c, missing=data)
    if c.kind == "interaction":
        if data.cells is None:
            return Measured(c, missing=pairings.no_cells(c))
        return _interaction(c, data, n_resamples, gen)
    if c.cell is None:
        mask = np.ones(data.n, dtype=bool)
    elif data.cells is None:
        return Measured(c, missing=pairings.no_cells(c))
    else:
        mask = cell_codes(data.cells) == CELLS.index(c.cell)
    n = int(mask.sum())
    least = 3 if c.kind == "relative" else 2
    if n < least:
        return Measured(
            c, missing=f"cell {c.cell_label} has {n} {c.unit}(s) in the records; {least} are needed"
        )
    t, b = data.treatment[mask], data.baseline[mask]
    d = data.differences[mask]
    test = signflip_tests([_shifted(c, t, b)], n_resamples=n_resamples, rng=gen)[0]
    clusters = data.episode_ids[mask] if c.unit == "query" else None
    if clusters is not None and np.unique(clusters).size < 2:
        clusters = None
    ci = bootstrap_ci(d, level=level, clusters=clusters, n_resamples=bootstrap_resamples, rng=gen)
    notes = [Note("seed-dependence-unmeasured", note)] if note else []
    equivalence = ratio = None
    if c.kind == "equivalence":
        assert c.margin is not None  # parse_claims guarantees it
        equivalence = tost_signflip(d, c.margin, n_resamples=n_resamples, rng=gen)
    if c.kind == "relative":
        ratio = ratio_of_means(t, b, level=level)
        if c.unit == "query" and clusters is not None:
            notes.append(Note("fieller-independent-queries"))
    dep = pooled = None
    per_seed_p: tuple[float, ...] = ()
    if isinstance(per_seed, SeedPairings):
        notes.append(Note("seeds-share-units", per_seed.counts(data.ids[mask])))
        if c.kind in ("difference", "relative"):
            per_seed_p, pooled, dep = _unbalanced_seed_tests(
                c, data, per_seed, mask, n_resamples, gen
            )
    elif per_seed is not None and c.kind in ("difference", "relative"):
        ts, bs = per_seed.treatment[mask], per_seed.baseline[mask]
        seeds = seed_tests(ts - bs, tested=_shifted(c, ts, bs), n_resamples=n_resamples, rng=gen)
        dep = seeds.dependence
        if dep is None:
            notes.append(Note("seed-dependence-unmeasured", "fewer than 3 units"))
        per_seed_p = tuple(x.pvalue for x in seeds.per_seed)
        pooled = seeds.pooled
    elif c.seeds != "average" and data.n_seeds == 1:
        notes.append(Note("one-seed"))
    printed = _as_printed(c, pairings, t, b, clusters)
    if isinstance(printed, str):
        return Measured(c, missing=printed)
    pt, pb, p_clusters = printed
    return Measured(
        c,
        n=n,
        n_seeds=len(per_seed.seeds) if isinstance(per_seed, SeedPairings) else data.n_seeds,
        d=d,
        pairs=(t, b),
        treatment_mean=float(t.mean()),
        baseline_mean=float(b.mean()),
        test=test,
        ci=ci,
        seeds=dep,
        per_seed_pvalues=per_seed_p,
        pooled=pooled,
        equivalence=equivalence,
        ratio=ratio,
        notes=tuple(notes),
        # last: its draws come after every other draw of this claim's stream
        reproduction=_reproduction(c, pt, pb, p_clusters, level, bootstrap_resamples, gen),
    )
