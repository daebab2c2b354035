"""Audit significance claims against records (Sections 5.3, 6.2-6.6; Appendix F).

For every claim of a :class:`~osustat.claims.ClaimsFile` the records are paired
(:func:`osustat.paired`: per-query averaging across seeds, never pooling), the paired
sign-flip test and an episode-clustered bootstrap interval are recomputed in the claimed cell,
the p-values are corrected within each declared family, and the claim gets one verdict:

============== =====================================================================
verdict        meaning
============== =====================================================================
reproduced     significant after correction, estimate beyond the threshold in the
               claimed direction
contradicted   significant on the wrong side of the threshold, or the bootstrap CI
               lies entirely on the wrong side, or (adequately powered) the estimate
               has the wrong sign
underpowered   not significant, and the minimum detectable effect at this n exceeds
               the claimed effect: the records cannot speak to the claim
direction only not significant after correction, but the estimate lies on the claimed
               side
not checkable  the records lack what the claim needs (the reason says what)
============== =====================================================================

Flags point at problems with how the claim's own numbers were obtained: a reported p below
the smallest p attainable with that n and resampling count; seeds pooled as if independent,
or Fisher-combined, although their per-query values are near-duplicates
(:func:`osustat.seed_dependence`); a reported effect outside the records' bootstrap interval;
a reported n that differs from the records'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import check_level, check_positive_int
from .bootstrap import BootstrapCI, bootstrap_ci
from .claims import Claim, ClaimsFile, Family
from .combine import SeedDependence, fisher_combine, seed_dependence
from .multitest import adjust_pvalues
from .power import minimum_detectable_effect
from .records import PairedRecords, paired, validate_records
from .signflip import SignFlipResult, signflip_tests

__all__ = ["VERDICTS", "AuditResult", "ClaimCheck", "Flag", "audit"]

VERDICTS = ("reproduced", "direction only", "contradicted", "underpowered", "not checkable")


@dataclass(frozen=True)
class Flag:
    """A problem with how a claim's own numbers were obtained.

    ``code`` is one of ``'p-below-minimum'``, ``'seeds-pooled'``, ``'fisher-dependent-seeds'``,
    ``'effect-outside-ci'``, ``'n-mismatch'``; ``message`` explains it with the numbers.
    """

    code: str
    message: str


@dataclass(frozen=True)
class ClaimCheck:
    """The audit of one claim.

    Attributes
    ----------
    claim : Claim
    verdict : str
        One of :data:`VERDICTS`.
    reason : str
        Why, in one sentence (for ``'not checkable'``: what is missing).
    n : int or None
        Units (queries or episodes) in the claimed cell; seeds averaged per unit.
    n_seeds : int or None
        Seeds present in the records for this comparison.
    effect, treatment_mean, baseline_mean : float or None
        Recomputed from the records.
    test : SignFlipResult or None
        Two-sided paired sign-flip test of ``mean(d - threshold) = 0``.
    ci : BootstrapCI or None
        Bootstrap interval of the mean difference (clustered by episode for queries).
    pvalue_adjusted : float or None
        ``test.pvalue`` corrected within the claim's family.
    family_size : int
        Checkable claims in the family (the correction's m).
    mde : float or None
        Minimum detectable effect (family alpha, power .8) at this n and observed sd.
    min_attainable_p : float or None
        Smallest p the claim's own test could have produced (see the ``p-below-minimum``
        flag).
    seed_dependence : SeedDependence or None
        Between-seed dependence of the per-unit differences (two or more seeds).
    pooled_pvalue, fisher_pvalue : float or None
        The anti-conservative contrasts: the test with every (unit, seed) pair counted as
        independent, and Fisher's combination of the per-seed tests.
    flags : tuple of Flag
    notes : tuple of str
        Further remarks (e.g. why seed dependence could not be measured).
    """

    claim: Claim
    verdict: str
    reason: str
    n: int | None = None
    n_seeds: int | None = None
    effect: float | None = None
    treatment_mean: float | None = None
    baseline_mean: float | None = None
    test: SignFlipResult | None = None
    ci: BootstrapCI | None = None
    pvalue_adjusted: float | None = None
    family_size: int = 0
    mde: float | None = None
    min_attainable_p: float | None = None
    seed_dependence: SeedDependence | None = None
    pooled_pvalue: float | None = None
    fisher_pvalue: float | None = None
    flags: tuple[Flag, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditResult:
    """All claims' checks, in file order, with the settings that produced them."""

    checks: tuple[ClaimCheck, ...]
    families: dict[str, Family]
    n_resamples: int
    bootstrap_resamples: int
    level: float
    title: str = ""
    source: str = ""

    def counts(self) -> dict[str, int]:
        """Number of claims per verdict, in :data:`VERDICTS` order."""
        return {v: sum(c.verdict == v for c in self.checks) for v in VERDICTS}


@dataclass(frozen=True)
class _Measured:
    """Phase-1 result of one claim, before the family correction."""

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
    notes: tuple[str, ...] = ()


def audit(
    claims: ClaimsFile,
    records: pd.DataFrame,
    *,
    n_resamples: int = 10_000,
    bootstrap_resamples: int = 2_000,
    level: float = 0.95,
    rng: Any = None,
) -> AuditResult:
    """Check every claim of a claims file against long-format records.

    Parameters
    ----------
    claims : ClaimsFile
        From :func:`osustat.claims.load_claims` or :func:`~osustat.claims.parse_claims`.
    records : pandas.DataFrame
        Long-format records (:func:`osustat.validate_records`; invalid records raise, they
        are not reported as "not checkable").
    n_resamples : int
        Sign vectors for the recomputed tests.
    bootstrap_resamples : int
        Resamples for the bootstrap intervals.
    level : float
        Confidence level of the intervals (used by the ``effect-outside-ci`` flag).
    rng : {None, int, numpy.random.Generator}
        One child seed per claim is spawned from it in file order: the same `rng`, claims
        and records give the same audit.

    Returns
    -------
    AuditResult

    Notes
    -----
    Each test is the two-sided paired sign-flip test of ``H0: mean(d) = threshold`` on the
    per-unit differences ``d`` (seeds averaged per unit first, Appendix F); the verdict then
    requires the estimate to lie on the claimed side. p-values are corrected within each
    family over its checkable claims only (the report says how many). The MDE uses the
    family's alpha, two-sided, power .8, and the claimed magnitude is the reported effect (or
    the difference of the reported means) minus the threshold, else the threshold.

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.audit import audit
    >>> from osustat.claims import parse_claims
    >>> cf = parse_claims('''
    ... [[claim]]
    ... id = "a"
    ... family = "f"
    ... treatment = "new"
    ... baseline = "old"
    ... metric = "hit@2"
    ... budget = 256
    ... cell = "aggregate"
    ... direction = "greater"
    ... ''')
    >>> df = pd.DataFrame({"episode_id": [f"e{i % 10}" for i in range(80)] * 2,
    ...                    "query_id": [f"q{i}" for i in range(80)] * 2,
    ...                    "method": ["new"] * 80 + ["old"] * 80, "budget": 256,
    ...                    "metric": "hit@2", "value": [1, 1, 1, 0] * 20 + [1, 0, 0, 0] * 20})
    >>> res = audit(cf, df, n_resamples=999, bootstrap_resamples=200, rng=0)
    >>> check = res.checks[0]
    >>> check.verdict, check.n, round(check.effect, 2)
    ('reproduced', 80, 0.5)
    """
    if not isinstance(claims, ClaimsFile):
        raise TypeError(f"`claims` must be a ClaimsFile; got {type(claims).__name__}.")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    bootstrap_resamples = check_positive_int(bootstrap_resamples, "bootstrap_resamples", minimum=2)
    level = check_level(level)
    df = validate_records(records)
    gen = np.random.default_rng(rng)
    children = np.random.SeedSequence(int(gen.integers(2**63 - 1))).spawn(len(claims.claims))
    cache: dict[Any, Any] = {}
    measured = [
        _measure(c, df, cache, n_resamples, bootstrap_resamples, level, np.random.default_rng(s))
        for c, s in zip(claims.claims, children, strict=True)
    ]

    # A ClaimsFile built by hand may omit families: they default to Holm at .05.
    families = {**{c.family: Family(c.family) for c in claims.claims}, **claims.families}
    adjusted: dict[int, float] = {}
    sizes: dict[str, int] = {}
    for name, fam in families.items():
        members = [i for i, m in enumerate(measured) if m.claim.family == name and m.test]
        sizes[name] = len(members)
        if members:
            pvals = [measured[i].test.pvalue for i in members]  # type: ignore[union-attr]
            adj = adjust_pvalues(pvals, method=fam.correction, alpha=fam.alpha)
            adjusted.update(zip(members, adj.pvalues_adjusted.tolist(), strict=True))

    checks = tuple(
        _judge(m, adjusted.get(i), sizes[m.claim.family], families[m.claim.family])
        for i, m in enumerate(measured)
    )
    return AuditResult(
        checks, families, n_resamples, bootstrap_resamples, level,
        claims.title, claims.source,
    )  # fmt: skip


# -- phase 1: recompute ------------------------------------------------------------------


def _pair(
    df: pd.DataFrame, c: Claim, cache: dict[Any, Any]
) -> tuple[PairedRecords | str, dict[int, PairedRecords], str]:
    key = (c.benchmark, c.treatment, c.baseline, c.metric, c.budget, c.unit)
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
    else:
        try:
            data = paired(sub, c.treatment, c.baseline, benchmark=c.benchmark, **kw)
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


def _measure(
    c: Claim,
    df: pd.DataFrame,
    cache: dict[Any, Any],
    n_resamples: int,
    bootstrap_resamples: int,
    level: float,
    gen: np.random.Generator,
) -> _Measured:
    data, per_seed, note = _pair(df, c, cache)
    if isinstance(data, str):
        return _Measured(c, missing=data)
    if c.cell is None:
        mask = np.ones(data.n, dtype=bool)
    elif data.cells is None:
        return _Measured(c, missing="the records carry no `cell` column for these queries")
    else:
        mask = np.fromiter((x is c.cell for x in data.cells), dtype=bool, count=data.n)
    n = int(mask.sum())
    if n < 2:
        return _Measured(
            c, missing=f"cell {c.cell_label} has {n} {c.unit}(s) in the records; 2 are needed"
        )
    d = data.differences[mask]
    test = signflip_tests([d - c.threshold], n_resamples=n_resamples, rng=gen)[0]
    clusters = data.episode_ids[mask] if c.unit == "query" else None
    if clusters is not None and np.unique(clusters).size < 2:
        clusters = None
    ci = bootstrap_ci(d, level=level, clusters=clusters, n_resamples=bootstrap_resamples, rng=gen)
    notes = [note] if note else []
    dep = pooled = None
    per_seed_p: tuple[float, ...] = ()
    if per_seed:
        order = {u: i for i, u in enumerate(data.ids)}
        cols = []
        for one in per_seed.values():
            col = np.empty(data.n)
            col[[order[u] for u in one.ids]] = one.differences
            cols.append(col[mask])
        matrix = np.column_stack(cols)
        if n >= 3:
            dep = seed_dependence(matrix)
        else:
            notes.append("seed dependence not measured: fewer than 3 units")
        tests = signflip_tests(
            [matrix[:, j] - c.threshold for j in range(matrix.shape[1])]
            + [matrix.ravel() - c.threshold],
            n_resamples=n_resamples,
            rng=gen,
        )
        per_seed_p = tuple(t.pvalue for t in tests[:-1])
        pooled = tests[-1]
    elif c.seeds != "average" and data.n_seeds == 1:
        notes.append(
            f"the claim's p {'pooled' if c.seeds == 'pooled' else 'Fisher-combined'} seeds, "
            "but these records hold one seed: seed dependence cannot be measured"
        )
    return _Measured(
        c,
        n=n,
        n_seeds=data.n_seeds,
        d=d,
        treatment_mean=float(data.treatment[mask].mean()),
        baseline_mean=float(data.baseline[mask].mean()),
        test=test,
        ci=ci,
        seeds=dep,
        per_seed_pvalues=per_seed_p,
        pooled=pooled,
        notes=tuple(notes),
    )


# -- phase 2: verdict and flags ----------------------------------------------------------


def _min_attainable(m: _Measured) -> float:
    """Smallest p the claim's own test could give with its n and resampling count."""
    c, test = m.claim, m.test
    assert test is not None  # internal invariant: only called for checkable claims
    nonzero = test.n_nonzero
    if c.seeds == "pooled" and m.pooled is not None:
        nonzero = m.pooled.n_nonzero
    elif c.seeds == "pooled":
        nonzero *= max(m.n_seeds, 1)
    if c.reported_n is not None:
        nonzero = min(nonzero, c.reported_n)
    floor = math.ldexp(1.0, 1 - nonzero) if nonzero else 1.0  # two-sided exact minimum
    if c.reported_resamples is not None:
        floor = max(floor, 1.0 / (c.reported_resamples + 1))
    floor = min(floor, 1.0)
    if c.seeds == "fisher":
        k = max(m.n_seeds, len(m.per_seed_pvalues), 1)
        floor = fisher_combine([floor] * k).pvalue if k > 1 else floor
    return floor


def _flags(m: _Measured, floor: float) -> list[Flag]:
    c, ci = m.claim, m.ci
    assert ci is not None
    flags = []
    rp = c.reported_p
    if rp is not None and (
        (rp.relation in ("=", "<=") and rp.value < floor * (1 - 1e-9))
        or (rp.relation == "<" and rp.value <= floor)
    ):
        how = f"{c.reported_resamples:,}" if c.reported_resamples else "exact"
        flags.append(
            Flag(
                "p-below-minimum",
                f"reported {rp} is below the smallest attainable p {floor:.3g} "
                f"for this n ({m.n} units, {m.test.n_nonzero if m.test else 0} nonzero "
                f"differences) with {how} sign flips"
                + (" and Fisher over the seeds" if c.seeds == "fisher" else ""),
            )
        )
    dep = m.seeds
    k = m.n_seeds
    pooled_n = c.reported_n is not None and k > 1 and c.reported_n == m.n * k
    if dep is not None and dep.too_dependent and (c.seeds == "pooled" or pooled_n):
        why = "the claim says so" if c.seeds == "pooled" else f"reported n = {m.n} × {k} seeds"
        flags.append(
            Flag(
                "seeds-pooled",
                f"seeds pooled as if independent ({why}), but they are near-duplicates: mean "
                f"between-seed correlation {dep.mean_correlation:.2f}, "
                f"{dep.duplicate_fraction:.0%} identical values, effective seeds "
                f"{dep.effective_seeds:.2f} of {k}; pooled p = "
                f"{m.pooled.pvalue if m.pooled else math.nan:.3g} vs per-unit averaged "
                f"p = {m.test.pvalue if m.test else math.nan:.3g}",
            )
        )
    if dep is not None and dep.too_dependent and c.seeds == "fisher":
        fisher = fisher_combine(list(m.per_seed_pvalues)).pvalue
        flags.append(
            Flag(
                "fisher-dependent-seeds",
                f"Fisher combination assumes independent seeds, but the mean between-seed "
                f"correlation is {dep.mean_correlation:.2f} (effective seeds "
                f"{dep.effective_seeds:.2f} of {k}); Fisher p = {fisher:.3g} vs per-unit "
                f"averaged p = {m.test.pvalue if m.test else math.nan:.3g}",
            )
        )
    claimed = c.claimed_effect if c.reported_effect is not None or c.reported_means else None
    if claimed is not None and not ci.low <= claimed <= ci.high:
        what = "reported effect" if c.reported_effect is not None else "reported means' gap"
        flags.append(
            Flag(
                "effect-outside-ci",
                f"{what} {claimed:+.3f} lies outside the records' {ci.level:.0%} bootstrap CI "
                f"[{ci.low:+.3f}, {ci.high:+.3f}] (estimate {ci.statistic:+.3f})",
            )
        )
    if c.reported_n is not None and c.reported_n != m.n and not pooled_n:
        flags.append(Flag("n-mismatch", f"reported n = {c.reported_n}, the records hold n = {m.n}"))
    return flags


def _judge(m: _Measured, p_adj: float | None, family_size: int, fam: Family) -> ClaimCheck:
    c = m.claim
    if m.missing is not None or m.test is None or m.ci is None or m.d is None:
        return ClaimCheck(c, "not checkable", m.missing or "no data", family_size=family_size)
    assert p_adj is not None
    effect = float(m.d.mean())
    sd = float(m.d.std(ddof=1))
    mde = minimum_detectable_effect(sd, m.n, alpha=fam.alpha)
    t = c.threshold
    beyond = effect > t if c.direction == "greater" else effect < t
    wrong_ci = m.ci.high < t if c.direction == "greater" else m.ci.low > t
    side = "above" if c.direction == "greater" else "below"
    other = "below" if c.direction == "greater" else "above"
    if c.reported_effect is not None or c.reported_means is not None:
        magnitude: float | None = abs((c.claimed_effect or 0.0) - t)
    else:
        magnitude = abs(t) if t != 0 else None
    sig = p_adj <= fam.alpha
    p_text = f"corrected p = {p_adj:.3g} ({fam.correction}, m = {family_size})"
    if sig and beyond:
        verdict, reason = "reproduced", f"estimate {effect:+.3f} {side} {t:g}; {p_text}"
    elif sig:
        verdict, reason = (
            "contradicted",
            f"estimate {effect:+.3f} is significantly {other} {t:g}; {p_text}",
        )
    elif wrong_ci:
        verdict, reason = (
            "contradicted",
            f"the {m.ci.level:.0%} CI [{m.ci.low:+.3f}, {m.ci.high:+.3f}] lies {other} {t:g}",
        )
    elif magnitude is not None and mde > magnitude:
        verdict, reason = (
            "underpowered",
            f"MDE {mde:.3f} at n = {m.n} exceeds the claimed effect {magnitude:.3f}; {p_text}",
        )
    elif beyond:
        verdict, reason = (
            "direction only",
            f"estimate {effect:+.3f} {side} {t:g} but not significant; {p_text}",
        )
    else:
        verdict, reason = (
            "contradicted",
            f"estimate {effect:+.3f} lies {other} {t:g} (not significant; MDE {mde:.3f}); "
            + p_text,
        )
    floor = _min_attainable(m)
    fisher = fisher_combine(list(m.per_seed_pvalues)).pvalue if m.per_seed_pvalues else None
    return ClaimCheck(
        claim=c,
        verdict=verdict,
        reason=reason,
        n=m.n,
        n_seeds=m.n_seeds,
        effect=effect,
        treatment_mean=m.treatment_mean,
        baseline_mean=m.baseline_mean,
        test=m.test,
        ci=m.ci,
        pvalue_adjusted=p_adj,
        family_size=family_size,
        mde=mde,
        min_attainable_p=floor,
        seed_dependence=m.seeds,
        pooled_pvalue=m.pooled.pvalue if m.pooled is not None else None,
        fisher_pvalue=fisher,
        flags=tuple(_flags(m, floor)),
        notes=m.notes,
    )
