"""Audit significance claims against records under two standards (Sections 5.3, 6; App. F).

For every claim of a :class:`~osustat.audit.claim.ClaimsFile` the records are paired
(:func:`osustat.paired`: per-unit averaging across seeds, never pooling; or one seed when the
claim names it), the claim's statistics are recomputed in the claimed cell
(:mod:`osustat.audit.measure`) and the claim is judged twice
(:mod:`osustat.audit.verdicts`):

* **as tested** -- on the claim's own terms: its unit and n, its seed handling (pooled or
  Fisher-combined when it says so), the paper's interaction statistic, the correction its
  family says was applied (none by default); descriptive claims checked as printed;
* **strict** -- seeds averaged per unit, calibrated tests (studentized interaction, TOST for
  equivalence, a test of the ratio for relative effects), the family's strict correction
  (Holm by default).

============== =====================================================================
verdict        meaning
============== =====================================================================
reproduced     significant after correction with the estimate beyond the threshold on
               the claimed side; for ``means``: the ordering holds; for
               ``equivalence``: equivalent within the margin (strict) or not
               significantly different / gap within the margin (as tested)
contradicted   significant on the wrong side, or the CI lies entirely on the wrong
               side, or (adequately powered) the estimate has the wrong sign; the
               ordering fails; significantly outside the equivalence margin
underpowered   not significant, and the minimum detectable effect exceeds the claimed
               effect; for ``equivalence`` (strict): equivalence not shown
direction only not significant after correction, but the estimate lies on the claimed side
not significant an interaction claim without a significant interaction
not checkable  the records lack what the claim needs (the reason says what)
============== =====================================================================

Flags point at problems with how the claim's own numbers were obtained: a reported p below
the smallest p attainable with that n and resampling count; seeds pooled as if independent,
or Fisher-combined, although their per-unit values are near-duplicates
(:func:`osustat.seed_dependence`); a reported effect outside the records' interval; a reported
n that differs from the records'.

The audit returns codes and numbers; :mod:`osustat.reports.audit` writes the words around
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd

from osustat._validation import check_level, check_resamples
from osustat.audit.claim import ClaimsFile, Family
from osustat.combine import fisher_combine
from osustat.multitest import adjust_pvalues, held_level
from osustat.power import PowerValue
from osustat.schema import validate_records
from osustat.streams import stream_seed
from osustat.wording import corrected_se, straddles

from .measure import (
    Measured,
    Note,
    Pairings,
    measure,
)
from .precision import next_resamples, raw_pvalue_se
from .result import AuditResult, ClaimCheck
from .verdicts import (
    STANDARDS,
    Flag,
    StandardVerdict,
    cell_metric,
    flags,
    judge,
    mde_of,
    min_attainable,
    undecided,
)
from .verdicts import raw_pvalue as _raw_pvalue

__all__ = ["audit"]


def _claim_seeds(claims: ClaimsFile, master: int) -> list[np.random.SeedSequence]:
    """One stream per claim, named by its id (and, for a hand-built file that repeats an id,
    by the repeat's number): never by its place in the file."""
    seen: dict[str, int] = {}
    out = []
    for c in claims.claims:
        k = seen[c.id] = seen.get(c.id, -1) + 1
        out.append(stream_seed(master, "audit-claim", c.id, *((k,) if k else ())))
    return out


def audit(
    claims: ClaimsFile,
    records: pd.DataFrame,
    *,
    n_resamples: int = 10_000,
    bootstrap_resamples: int = 2_000,
    level: float = 0.95,
    rng: Any = None,
    unavailable: Mapping[str, str] | None = None,
    progress: bool = False,
    max_resamples: int = 2**20,
    episode_benchmarks: Collection[str] = (),
) -> AuditResult:
    """Check every claim of a claims file against long-format records.

    Parameters
    ----------
    claims : ClaimsFile
        From :func:`osustat.audit.claims.load_claims` or :func:`~osustat.audit.claims.parse_claims`.
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
        Each claim draws from its own stream, named by the claim's id under a master seed
        drawn from `rng` (:func:`osustat.streams.stream_seed`): the same `rng`, claims and
        records give the same audit, and a claim's numbers do not move when other claims are
        added, removed or reordered.
    unavailable : mapping of str to str, optional
        Benchmarks whose records cannot check the claims made about them, each with the
        reason (e.g. ``{"tau-bench-llm": "no LLM run: ..."}`` when a stand-in replaced the
        model a claim is about): their claims are "not checkable" with that reason, whatever
        the records hold.
    progress : bool
        A progress bar on stderr over the claims (done / total, rate, ETA): an audit of many
        claims with 10,000 sign flips each runs for half a minute.
    episode_benchmarks : collection of str
        Benchmarks whose records declare the episode as their unit (LoCoMo: a conversation's
        questions share one memory; the CLI passes the registered ones): a claim tested at the
        query unit on them is flagged ``'query-unit-clustered'`` with the same claim's raw p
        at the episode unit beside it (its verdict is the query-level one, as claimed).
    max_resamples : int
        Cap of the sequential resampling: a claim whose Monte Carlo p (corrected, under
        either standard) lies within 2.576 standard errors of alpha is tested again with 4x
        the resamples, on fresh draws, until it is settled or the next count would exceed
        this (at most 2^25; :mod:`osustat.audit.precision`). Still within the band at the cap:
        the flag ``mc-undecided``. Set it to `n_resamples` for no sequential resampling.

    Returns
    -------
    AuditResult

    Notes
    -----
    Each claim is judged under two standards (:data:`STANDARDS`), each with its own p and
    correction; ``ClaimCheck.verdict`` is the strict one. A difference claim's test is the
    two-sided paired sign-flip test of ``H0: mean(d) = threshold`` on the per-unit
    differences ``d``; the verdict then requires the estimate on the claimed side. As tested,
    a claim with ``seeds = 'fisher'`` (``'pooled'``) uses Fisher's combination of the
    per-seed tests (the pooled test); strict always averages seeds per unit first (Appendix
    F). Interaction claims: the paper's centered sign-flip statistic as tested, the
    studentized one strict (:func:`osustat.interaction_test`). Equivalence claims: as tested,
    "not significantly different" (with a printed p) or "gap within the margin" (without);
    strict, TOST at the margin (:func:`osustat.equivalence.tost_signflip`). Relative claims:
    the ratio of means with Fieller's interval (:func:`osustat.ratio.ratio_of_means`); strict
    tests ``mean(t - (1 + threshold) b) = 0``. ``means`` claims check the ordering only,
    under both standards. p-values are corrected within each family over the claims that
    have a p under that standard (the report prints m). The MDE is that of the test each
    standard ran (difference claims only): at the level the family's correction held the
    claim to, the other claims' p as observed (:func:`osustat.multitest.held_level`; the
    family's alpha uncorrected); two-sided, power .8, and the claimed magnitude is the
    reported effect (or the difference of the reported means) minus the threshold -- none
    where the claim prints neither.

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.audit.run import audit
    >>> from osustat.audit.claims import parse_claims
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
    >>> check.as_tested.correction, check.strict.correction, res.summary()["strict"]["reproduced"]
    ('none', 'holm', 1)
    """
    if not isinstance(claims, ClaimsFile):
        raise TypeError(f"`claims` must be a ClaimsFile; got {type(claims).__name__}.")
    n_resamples = check_resamples(n_resamples)
    max_resamples = check_resamples(max_resamples, "max_resamples", minimum=n_resamples)
    bootstrap_resamples = check_resamples(bootstrap_resamples, "bootstrap_resamples", minimum=2)
    level = check_level(level)
    df = validate_records(records)
    _check_scales(claims, df)
    gen = np.random.default_rng(rng)
    master = int(gen.integers(2**63 - 1))
    children = _claim_seeds(claims, master)
    pairings = Pairings(df, unavailable)
    from tqdm.auto import tqdm

    with tqdm(
        total=len(claims.claims), desc="claims audit", unit="claim", disable=not progress
    ) as bar:
        measured = []
        for c, s in zip(claims.claims, children, strict=True):
            rng_c = np.random.default_rng(s)
            measured.append(measure(c, pairings, n_resamples, bootstrap_resamples, level, rng_c))
            bar.update(1)
    # A ClaimsFile built by hand may omit families: no correction as tested, Holm strict.
    families = {**{c.family: Family(c.family) for c in claims.claims}, **claims.families}
    # resample-free (the differences do not change with the resamples): each claim's MDE
    # searched once per level its correction holds it to (a level moves with the others' p)
    searched: dict[tuple[int, float], PowerValue | None] = {}
    first = list(measured)

    def mde_at(i: int, level: float) -> PowerValue | None:
        key = (i, float(f"{level:.6g}"))
        if key not in searched:
            searched[key] = mde_of(first[i], key[1])
        return searched[key]

    def at_episodes(i: int, **changes: Any) -> Measured:
        # claim i at the episode unit, on a stream of its own named by the claim's id
        c = claims.claims[i]
        gen = np.random.default_rng(stream_seed(master, "audit-claim-episode-unit", c.id, i))
        return measure(dataclasses.replace(c, unit="episode", **changes), pairings,
                       n_resamples, bootstrap_resamples, level, gen)  # fmt: skip

    def remeasure(i: int, b: int, look: int) -> Measured:
        # a fresh stream per look, derived from the claim's own: same rng, same audit
        child = children[i]
        gen = np.random.default_rng(
            np.random.SeedSequence(child.entropy, spawn_key=(*child.spawn_key, look))
        )
        m = measure(claims.claims[i], pairings, b, bootstrap_resamples, level, gen)
        return dataclasses.replace(m, notes=(*m.notes, Note("mc-resampled", f"{b}")))

    measured, verdicts, mc_flags = _settle(
        measured, mde_at, families, n_resamples, max_resamples, remeasure
    )
    # a p still straddling alpha at the cap takes neither side: its verdict is undecided
    verdicts = {st: _resolve(measured, verdicts[st], families) for st in STANDARDS}
    # the strict standard again with Benjamini-Hochberg in place of each family's strict
    # correction: the FDR reading beside the familywise one (issue 23)
    bh = {k: dataclasses.replace(f, strict_correction="fdr_bh") for k, f in families.items()}
    # (only its counts are printed: no MDE searched where the verdict does not read one)
    strict_bh = _resolve(measured, _standard(measured, mde_at, bh, "strict", lazy=True), bh)
    checks = tuple(
        dataclasses.replace(
            _check(
                m,
                verdicts["as tested"][i],
                verdicts["strict"][i],
                verdicts["strict"][i].mde,
                families[m.claim.family].alpha,
            ),
            strict_bh=strict_bh[i],
        )
        for i, m in enumerate(measured)
    )
    for i, flag in _clustered(measured, pairings, set(episode_benchmarks), at_episodes).items():
        mc_flags.setdefault(i, []).insert(0, flag)
    checks = tuple(
        dataclasses.replace(c, flags=(*c.flags, *mc_flags[i])) if mc_flags.get(i) else c
        for i, c in enumerate(checks)
    )
    return AuditResult(
        checks, families, n_resamples, bootstrap_resamples, level,
        claims.title, claims.source,
    )  # fmt: skip


def _check_scales(claims: ClaimsFile, df: pd.DataFrame) -> None:
    """A claim's printed numbers outside what a metric whose values in the records all lie in
    [0, 1] allows (a judge's 0/1 grade; the claims file cannot know its scale, as it knows
    hit@k's and recall's) are an error naming the claim: a percentage point written as a
    metric unit would be judged against an impossible difference."""
    bounded: dict[str, bool] = {}
    for c in claims.claims:
        if c.metric not in bounded:
            v = df.loc[df["metric"] == c.metric, "value"]
            bounded[c.metric] = bool(len(v)) and bool(v.between(0.0, 1.0).all())
        if not bounded[c.metric]:
            continue
        bad = _out_of_scale(c)
        if bad:
            line = f" (line {c.line})" if c.line else ""
            k, x, why = bad[0]
            raise ValueError(
                f"claims file {claims.source!r}, claim {c.id!r}{line}: `{k}` = {x:g} is impossible "
                f"for metric {c.metric!r}, whose values in the records all lie in [0, 1] ({why}); "
                "effects are in metric units, not percentage points."
            )


def _out_of_scale(c: Any) -> list[tuple[str, float, str]]:
    """(key, value, why) of claim `c`'s numbers impossible on a [0, 1] metric."""
    gap = "differences lie in [-1, 1]"
    out: list[tuple[str, float, str]] = []
    if c.kind in ("difference", "equivalence"):
        # nothing lies beyond a threshold or margin of ±1 ("1 point"): nothing to claim
        for key, x in (("threshold", c.threshold), ("margin", c.margin)):
            if x is not None and abs(x) >= 1.0:
                out.append((key, x, gap + ", and none beyond ±1"))
        if c.reported_effect is not None and abs(c.reported_effect) > 1.0:
            out.append(("reported_effect", c.reported_effect, gap))
        out += [("reported_ci", x, gap) for x in c.reported_ci or () if abs(x) > 1.0]
    out += [
        ("reported_means", x, "so do its means")
        for x in c.reported_means or ()
        if not 0.0 <= x <= 1.0
    ]
    return out


def _clustered(
    measured: list[Measured],
    pairings: Pairings,
    episode_benchmarks: set[str],
    at_episodes: Any,
) -> dict[int, Flag]:
    """``'query-unit-clustered'`` flags: each tested claim at the query unit on a benchmark
    whose records declare the episode as its unit, with the raw p of the same claim's strict
    test at the episode unit (TOST for an equivalence; ``at_episodes(i)`` measures it); for a
    per-cell claim, that test on the metric holding the cell's queries per episode where the
    records carry one (:func:`~osustat.audit.verdicts.cell_metric`: an import's
    ``judge.t+e+``) -- None where there is none, for an interaction claim (an episode mixes
    cells), or where the episodes cannot test it. ``means`` claims have no test."""
    if not episode_benchmarks:
        return {}
    names = pairings.df["benchmark"].astype(str).unique().tolist()
    only = names[0] if len(names) == 1 else None  # a claim without `benchmark` is about it
    metrics = set(pairings.df["metric"].astype(str).unique())
    out = {}
    for i, m in enumerate(measured):
        c = m.claim
        on = c.benchmark or only
        if c.unit != "query" or m.missing is not None or on not in episode_benchmarks:
            continue
        if c.kind == "means":
            continue
        value = None
        if c.kind != "interaction" and (c.cell is None or cell_metric(c) in metrics):
            # a cell's queries as their own metric (an import's `judge.t+e+`): its test there
            ep = (
                at_episodes(i)
                if c.cell is None
                else at_episodes(i, metric=cell_metric(c), cell=None)
            )
            value = _raw_pvalue(ep, "strict")[0] if ep.missing is None else None
        out[i] = Flag("query-unit-clustered", value)
    return out


def _undecided(m: Measured, v: StandardVerdict, alpha: float) -> float | None:
    """The Monte Carlo SE of the corrected p verdict `v` used, if that p is within 2.576 of
    them of `alpha` (the side of alpha is then resampling noise); else None."""
    if v.pvalue is None or v.pvalue_adjusted is None:
        return None
    se = corrected_se(raw_pvalue_se(m, v.test), v.pvalue, v.pvalue_adjusted)
    return se if straddles(v.pvalue_adjusted, se, alpha) else None


def _resolve(
    measured: list[Measured],
    verdicts: list[StandardVerdict],
    families: dict[str, Family],
) -> list[StandardVerdict]:
    """`verdicts` (one standard's, after the sequential resampling), each whose corrected p
    still straddles alpha made :func:`~osustat.audit.verdicts.undecided`."""
    out = []
    for m, v in zip(measured, verdicts, strict=True):
        fam = families[m.claim.family]
        se = _undecided(m, v, fam.alpha)
        out.append(v if se is None else undecided(m, v, fam, se, v.mde))
    return out


def _settle(
    measured: list[Measured],
    mde_at: Any,
    families: dict[str, Family],
    n_resamples: int,
    max_resamples: int,
    remeasure: Any,
) -> tuple[list[Measured], dict[str, list[StandardVerdict]], dict[int, list[Flag]]]:
    """Verdicts under both standards, resampling further every claim whose p is undecided.

    Each round re-measures (``remeasure(i, B, look)``) the claims whose corrected p under
    either standard straddles alpha with 4x their resamples, then re-judges every claim (a
    family's correction couples its claims), until none straddles or each that does is at
    the cap. Returns the final measurements, verdicts and, per claim still undecided, its
    ``mc-undecided`` flags (one per standard).
    """
    measured = list(measured)
    resamples = [n_resamples] * len(measured)
    looks = [0] * len(measured)
    while True:
        verdicts = {st: _standard(measured, mde_at, families, st) for st in STANDARDS}
        pending: dict[int, list[Flag]] = {}
        for i, m in enumerate(measured):
            alpha = families[m.claim.family].alpha
            for st in STANDARDS:
                se = _undecided(m, verdicts[st][i], alpha)
                if se is not None:
                    pending.setdefault(i, []).append(Flag("mc-undecided", se, standard=st))
        grow = {i: next_resamples(resamples[i], max_resamples) for i in pending}
        if not any(grow.values()):
            return measured, verdicts, pending
        for i, b in grow.items():
            if b is not None:
                looks[i] += 1
                resamples[i] = b
                measured[i] = remeasure(i, b, looks[i])


def _standard(
    measured: list[Measured],
    mde_at: Any,
    families: dict[str, Family],
    standard: str,
    lazy: bool = False,
) -> list[StandardVerdict]:
    """Every claim's verdict under `standard`: raw p, correction within family, the MDE at
    the level the correction held the claim to (:func:`osustat.multitest.held_level`;
    ``mde_at(i, level)`` searches it), rules. `lazy`: only where the verdict reads it (a
    difference not significant after correction)."""
    raw = [_raw_pvalue(m, standard) for m in measured]
    adjusted: dict[int, float] = {}
    held: dict[int, float] = {}
    sizes: dict[str, int] = {}
    for name, fam in families.items():
        members = [
            i for i, m in enumerate(measured) if m.claim.family == name and raw[i][0] is not None
        ]
        sizes[name] = len(members)
        method = fam.correction if standard == "as tested" else fam.strict_correction
        if not members:
            continue
        pvals = [float(raw[i][0]) for i in members]  # type: ignore[arg-type]
        if method == "none":
            adj = pvals
        else:
            adj = adjust_pvalues(pvals, method=method, alpha=fam.alpha).pvalues_adjusted.tolist()
        adjusted.update(zip(members, adj, strict=True))
        for k, i in enumerate(members):
            if measured[i].claim.kind != "difference":  # the only kind whose verdict reads one
                continue
            if not lazy or adjusted[i] > fam.alpha:
                held[i] = held_level(pvals, k, method, fam.alpha)
    return [
        judge(
            m,
            standard,
            raw[i][0],
            adjusted.get(i),
            sizes[m.claim.family],
            families[m.claim.family],
            raw[i][1],
            mde_at(i, held[i]) if i in held else None,
        )
        for i, m in enumerate(measured)
    ]


def _gap_outside(m: Measured, as_tested: StandardVerdict) -> tuple[Flag, ...]:
    """``'gap-outside-margin'``: an equivalence reproduced as tested because the difference
    was not significant (the claim's reading), while the gap itself lies outside the margin."""
    c = m.claim
    if as_tested.code != "not-different" or m.d is None or c.margin is None:
        return ()
    gap = float(m.d.mean())
    return (Flag("gap-outside-margin", gap),) if abs(gap) > c.margin else ()


def _check(
    m: Measured,
    as_tested: StandardVerdict,
    strict: StandardVerdict,
    mde: PowerValue | None,
    alpha: float,
) -> ClaimCheck:
    c = m.claim
    if m.missing is not None:
        return ClaimCheck(
            claim=c, verdict="not checkable", family_size=strict.family_size,
            as_tested=as_tested, strict=strict,
        )  # fmt: skip
    floor = min_attainable(m) if m.test is not None else None
    fisher = fisher_combine(list(m.per_seed_pvalues)).pvalue if m.per_seed_pvalues else None
    return ClaimCheck(
        claim=c,
        verdict=strict.verdict,
        n=m.n,
        n_seeds=m.n_seeds,
        effect=float(m.d.mean()) if m.d is not None else None,
        treatment_mean=m.treatment_mean,
        baseline_mean=m.baseline_mean,
        test=m.test,
        ci=m.ci,
        pvalue_adjusted=strict.pvalue_adjusted,
        family_size=strict.family_size,
        mde=mde,
        min_attainable_p=floor,
        seed_dependence=m.seeds,
        pooled_pvalue=m.pooled.pvalue if m.pooled is not None else None,
        fisher_pvalue=fisher,
        flags=(*flags(m, floor, alpha), *_gap_outside(m, as_tested)),
        notes=m.notes,
        as_tested=as_tested,
        strict=strict,
        equivalence=m.equivalence,
        ratio=m.ratio,
        interaction=m.interaction,
        interaction_as_tested=m.interaction_as_tested,
        reproduction=m.reproduction,
    )
