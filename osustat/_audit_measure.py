"""Phase 1 of the audit: pair the records and recompute each claim's statistics.

Nothing here judges a claim; :mod:`osustat._audit_verdicts` does that after the family
corrections (:mod:`osustat.audit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .bootstrap import BootstrapCI, bootstrap_ci
from .claims import Claim
from .combine import SeedDependence, seed_dependence
from .equivalence import EquivalenceResult, tost_signflip
from .interaction import InteractionResult, interaction_test
from .ratio import RatioResult, ratio_of_means
from .records import PairedRecords, paired
from .signflip import SignFlipResult, signflip_tests

__all__ = ["Measured", "measure"]

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
    notes: tuple[str, ...] = ()


def _pair(
    df: pd.DataFrame, c: Claim, cache: dict[Any, Any]
) -> tuple[PairedRecords | str, dict[int, PairedRecords], str]:
    key = (c.benchmark, c.treatment, c.baseline, c.metric, c.budget, c.unit, c.seed)
    if key in cache:
        return cache[key]
    kw: dict[str, Any] = {"metric": c.metric, "budget": c.budget, "unit": c.unit}
    # Pair on the claim's rows only: validating the whole table once per claim would
    # dominate the run. Claims whose data is absent get their reason from _absent.
    sub = df[
        df["method"].isin([c.treatment, c.baseline])
        & (df["metric"] == c.metric)
        & (df["budget"] == c.budget)
    ]
    if c.benchmark is not None:
        sub = sub[sub["benchmark"] == c.benchmark]
    data: PairedRecords | str
    if sub["method"].nunique() < 2:
        if "combos" not in cache:
            cache["combos"] = df[["benchmark", "method", "metric", "budget"]].drop_duplicates()
        data = _absent(cache["combos"], c)
    elif c.seed is not None and c.seed not in set(sub["seed"].tolist()):
        data = (
            f"seed {c.seed} is not in the records for this comparison; known seeds: "
            f"{sorted(sub['seed'].unique().tolist())}"
        )
    else:
        try:
            data = paired(sub, c.treatment, c.baseline, benchmark=c.benchmark, seed=c.seed, **kw)
        except ValueError as exc:
            data = str(exc)
    per_seed: dict[int, PairedRecords] = {}
    note = ""
    if not isinstance(data, str) and data.n_seeds > 1:
        try:
            for s in sorted(sub["seed"].unique().tolist()):
                one = paired(sub, c.treatment, c.baseline, seed=s, benchmark=c.benchmark, **kw)
                if not np.array_equal(np.sort(one.ids), np.sort(data.ids)):
                    raise ValueError(f"seed {s} covers other units than the seed average")
                per_seed[int(s)] = one
        except ValueError as exc:
            per_seed, note = {}, f"seed dependence not measured: {exc}"
    cache[key] = (data, per_seed, note)
    return cache[key]


def _absent(combos: pd.DataFrame, c: Claim) -> str:
    """Why a claim's rows are absent, in the words of :func:`osustat.paired`."""

    def known(frame: pd.DataFrame, column: str) -> list[Any]:
        return sorted(frame[column].unique().tolist())

    frame = combos
    if c.benchmark is None and frame["benchmark"].nunique() > 1:
        return (
            f"the records hold several benchmarks {known(frame, 'benchmark')}; pass `benchmark=`."
        )
    if c.benchmark is not None:
        if c.benchmark not in set(frame["benchmark"]):
            return (
                f"benchmark {c.benchmark!r} is not in the records; known benchmarks: "
                f"{known(frame, 'benchmark')}."
            )
        frame = frame[frame["benchmark"] == c.benchmark]
    for name, m in (("treatment", c.treatment), ("baseline", c.baseline)):
        if m not in set(frame["method"]):
            return (
                f"`{name}` method {m!r} is not in the records; known methods: "
                f"{known(frame, 'method')}."
            )
    if c.metric not in set(frame["metric"]):
        return (
            f"metric {c.metric!r} is not in the records; known metrics: {known(frame, 'metric')}."
        )
    frame = frame[frame["metric"] == c.metric]
    if c.budget not in set(frame["budget"]):
        return (
            f"budget {c.budget!r} is not in the records; known budgets: {known(frame, 'budget')}."
        )
    frame = frame[frame["budget"] == c.budget]
    for name, m in (("treatment", c.treatment), ("baseline", c.baseline)):
        if m not in set(frame["method"]):
            return (
                f"`{name}` method {m!r} has no records for metric {c.metric!r} at budget "
                f"{c.budget}."
            )
    return "no records"  # pragma: no cover - unreachable: both methods have rows


def _shifted(c: Claim, t: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-unit values whose mean is 0 under the claim's boundary null."""
    if c.kind == "relative":
        # mean(t) = (1 + r0) mean(b)  <=>  mean(t - (1 + r0) b) = 0 (Fieller's pivot).
        return t - (1.0 + c.threshold) * b
    if c.kind == "equivalence":
        return t - b
    return t - b - c.threshold


def _interaction(c: Claim, data: PairedRecords, n_resamples: int, gen: Any) -> Measured:
    if data.cells is None:
        return Measured(c, missing="the records carry no `cell` column for these queries")
    present = {x for x in data.cells if x is not None}
    if len(present) < 2:
        return Measured(c, missing=f"the records hold {len(present)} cell(s); 2 are needed")
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


def measure(
    c: Claim,
    df: pd.DataFrame,
    cache: dict[Any, Any],
    n_resamples: int,
    bootstrap_resamples: int,
    level: float,
    gen: np.random.Generator,
) -> Measured:
    """Recompute everything the verdicts of claim `c` need (or say what is missing)."""
    data, per_seed, note = _pair(df, c, cache)
    if isinstance(data, str):
        return Measured(c, missing=data)
    if c.kind == "interaction":
        return _interaction(c, data, n_resamples, gen)
    if c.cell is None:
        mask = np.ones(data.n, dtype=bool)
    elif data.cells is None:
        return Measured(c, missing="the records carry no `cell` column for these queries")
    else:
        mask = np.fromiter((x is c.cell for x in data.cells), dtype=bool, count=data.n)
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
    notes = [note] if note else []
    equivalence = ratio = None
    if c.kind == "equivalence":
        assert c.margin is not None  # parse_claims guarantees it
        equivalence = tost_signflip(d, c.margin, n_resamples=n_resamples, rng=gen)
    if c.kind == "relative":
        ratio = ratio_of_means(t, b, level=level)
        if c.unit == "query" and clusters is not None:
            notes.append(
                "the Fieller interval treats queries as independent; queries cluster in "
                "episodes, so prefer unit = 'episode' for relative claims"
            )
    dep = pooled = None
    per_seed_p: tuple[float, ...] = ()
    if per_seed and c.kind in ("difference", "relative"):
        order = {u: i for i, u in enumerate(data.ids)}
        cols = []
        for one in per_seed.values():
            tcol, bcol = np.empty(data.n), np.empty(data.n)
            idx = [order[u] for u in one.ids]
            tcol[idx], bcol[idx] = one.treatment, one.baseline
            cols.append((tcol[mask], bcol[mask]))
        matrix = np.column_stack([tc - bc for tc, bc in cols])
        shifted = np.column_stack([_shifted(c, tc, bc) for tc, bc in cols])
        if n >= 3:
            dep = seed_dependence(matrix)
        else:
            notes.append("seed dependence not measured: fewer than 3 units")
        tests = signflip_tests(
            [shifted[:, j] for j in range(shifted.shape[1])] + [shifted.ravel()],
            n_resamples=n_resamples,
            rng=gen,
        )
        per_seed_p = tuple(x.pvalue for x in tests[:-1])
        pooled = tests[-1]
    elif c.seeds != "average" and data.n_seeds == 1:
        notes.append(
            f"the claim's p {'pooled' if c.seeds == 'pooled' else 'Fisher-combined'} seeds, "
            "but these records hold one seed: seed dependence cannot be measured"
        )
    return Measured(
        c,
        n=n,
        n_seeds=data.n_seeds,
        d=d,
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
    )
