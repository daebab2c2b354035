"""The words of an audit: each verdict's reason and each flag's message.

:func:`osustat.audit.run.audit` returns reason and flag codes with the numbers behind them
(:data:`osustat.audit.run.REASONS`, :data:`osustat.audit.run.FLAG_CODES`); this module turns them
into the sentences of the report and of ``audit.json``.
"""

from __future__ import annotations

import math

from osustat.audit.measure import AS_TESTED_INTERACTION, STRICT_INTERACTION, Note
from osustat.audit.result import ClaimCheck
from osustat.audit.verdicts import Flag, StandardVerdict, cell_metric, claimed_magnitude
from osustat.formatting import fmt_interval, fmt_signed, p_phrase
from osustat.wording import MC_UNDECIDED_Z, not_estimable, underpowered

__all__ = [
    "UNDERPOWERED_AT_ANY_EFFECT",
    "flag_message",
    "headline_reason",
    "note_text",
    "procedure",
    "reason",
]

#: How an infinite MDE reads: no effect size reaches power .8 at this n.
UNDERPOWERED_AT_ANY_EFFECT = "underpowered at any effect"


def _level(v: StandardVerdict, word: str = "at") -> str:
    """' at 0.0125, the level holm held this claim to in its family' (`word` first) when the
    verdict's MDE is stated below the family's alpha: the level the correction held this
    claim to, given the other claims' p (:func:`osustat.multitest.held_level`)."""
    at = getattr(v.mde, "alpha", None)
    if at is None or v.alpha is None or math.isclose(at, v.alpha):
        return ""
    return f" {word} {at:.3g}, the level {v.correction} held this claim to in its family"


def _mde(v: StandardVerdict) -> str:
    mde = v.mde
    assert mde is not None
    if getattr(mde, "mde_range", None) is not None:
        return not_estimable(mde) + _level(v)
    if getattr(mde, "method", None) == "all-tied":  # no MDE: no unit differs
        return underpowered(mde)
    return (UNDERPOWERED_AT_ANY_EFFECT if math.isinf(mde) else f"MDE {mde:.3f}") + _level(v)


def _p_text(v: StandardVerdict) -> str:
    if v.pvalue_adjusted is None:
        return ""
    how = "uncorrected" if v.correction == "none" else v.correction
    said = p_phrase(v.pvalue_adjusted, alpha=v.alpha)  # .0501 never reads ".050" beside .05
    return f"{said} ({how}, m = {v.family_size})"


#: Equivalence reasons: the gap of means (``effect``) against the margin.
_EQUIVALENCE = {
    "gap-inside-margin": "gap {effect} lies inside the margin {margin} (no test)",
    "gap-outside-margin": (
        "gap {effect} lies outside the margin {margin} (descriptive, as the claim read "
        "its means; CI {ci})"
    ),
    "not-different": (
        "difference {effect} not significant ({p_text}), as the claim read it; "
        "this does not show equivalence (see strict, margin {margin})"
    ),
    "different": "difference {effect} is significant; {p_text}",
    "equivalent": "equivalent within {margin}: gap {effect}, TOST {p_text}",
    "equivalence-not-shown": (
        "equivalence within {margin} not shown: gap {effect}, CI {ci} reaches beyond the "
        "margin, TOST {p_text}"
    ),
    # the interval inside the margin, TOST's corrected p above alpha: the correction decided
    "equivalence-not-shown-inside": (
        "equivalence within {margin} not shown: gap {effect}, CI {ci} lies inside the "
        "margin but TOST's corrected p is above α ({p_text})"
    ),
    "outside-margin": ("gap {effect}: its whole CI {ci} lies outside {margin}, TOST {p_text}"),
}


def _ci(v: StandardVerdict) -> str:
    if v.interval is None:
        return "[?]"
    return fmt_interval(v.interval[0], v.interval[1])


def headline_reason(check: ClaimCheck) -> str:
    """The strict standard's reason (the claim's headline verdict); empty without one."""
    return reason(check, check.strict) if check.strict is not None else ""


def reason(check: ClaimCheck, v: StandardVerdict) -> str:
    """Why claim `check` got verdict `v`, in one sentence (no final period).

    Examples
    --------
    >>> from osustat.audit.claim import Claim
    >>> from osustat.audit.result import ClaimCheck
    >>> from osustat.audit.verdicts import StandardVerdict
    >>> c = Claim(id="a", family="f", treatment="new", baseline="old", metric="hit@2",
    ...           budget=256, cell=None, direction="greater", threshold=0.0)
    >>> v = StandardVerdict(standard="strict", verdict="underpowered", code="underpowered",
    ...                     pvalue=0.3, pvalue_adjusted=0.3, correction="holm", family_size=1,
    ...                     test="sign-flip", effect=0.05, mde=float("inf"), magnitude=0.1)
    >>> reason(ClaimCheck(claim=c, verdict="underpowered", n=5, strict=v), v)
    'underpowered at any effect at n = 5 (claimed effect 0.100); p = .300 (holm, m = 1)'
    """
    c = check.claim
    code, p_text = v.code, _p_text(v)
    if code == "missing":
        return v.detail
    if code == "mc-undecided":
        return _undecided_reason(v, p_text)
    effect = math.nan if v.effect is None else v.effect
    sign = ">" if c.direction == "greater" else "<"
    if code in ("ordering-holds", "ordering-fails"):
        means = f"means {check.treatment_mean:.3f} vs {check.baseline_mean:.3f}"
        if code == "ordering-holds":
            return f"{means}: ordering {sign} holds (descriptive, no test)"
        tie = " (tie)" if effect == 0 else ""
        return f"{means}: ordering {sign} fails{tie} (descriptive, no test)"
    if code == "interaction":
        return f"the gap differs across cells; {p_text}"
    if code == "interaction-paper-ns":
        return (
            f"the gap differs across cells ({p_text}), where the paper printed "
            f"{c.reported_p} (no interaction)"
        )
    if code in ("no-interaction", "no-interaction-as-claimed"):
        paper = ""
        if code == "no-interaction-as-claimed":
            paper = f"; the claim itself reports {c.reported_p} (no interaction)"
        return f"no significant interaction; {p_text}{paper}"
    if code == "equivalence-not-shown" and v.interval is not None and c.margin is not None:
        if -c.margin < v.interval[0] and v.interval[1] < c.margin:
            code = "equivalence-not-shown-inside"
    equivalence = _EQUIVALENCE.get(code)
    if equivalence is not None:
        return equivalence.format(
            effect=fmt_signed(effect), margin=f"±{c.margin:g}", p_text=p_text, ci=_ci(v)
        )
    t = c.threshold
    if code in ("ratio-on-side", "ratio-off-side"):
        assert check.ratio is not None
        on = "on" if code == "ratio-on-side" else "not on"
        return (
            f"ratio of means {check.ratio.statistic:.3f} (relative {effect:+.1%}) "
            f"{on} the claimed side of {t:+.1%} (no test)"
        )
    side = "above" if c.direction == "greater" else "below"
    # an estimate exactly on the threshold is on neither side: "lies on 0.5, not above it"
    other = "below" if c.direction == "greater" else "above"
    if effect == t:
        other = f"on {t:g}, not {side}"
    what = "relative effect" if c.kind == "relative" else "estimate"
    if code == "beyond":
        return f"{what} {fmt_signed(effect)} {side} {t:g}; {p_text}"
    if code == "beyond-paper-ns":
        return (
            f"{what} {fmt_signed(effect)} {side} {t:g} and significant ({p_text}), where the paper "
            f"printed {c.reported_p} (not significant)"
        )
    if code == "significant-wrong-side":
        return f"{what} {fmt_signed(effect)} is significantly {other} {t:g}; {p_text}"
    if code == "ci-wrong-side":
        assert v.interval is not None
        return f"the CI {fmt_interval(v.interval[0], v.interval[1])} lies {other} {t:g}"
    if code == "underpowered":
        return _underpowered_reason(check, v, p_text)
    if code == "direction-only":
        unknown = (
            "; the claim prints no effect, so whether the test could have found it is unknown"
            if c.kind == "difference" and claimed_magnitude(c) is None
            else ""
        )
        return f"{what} {fmt_signed(effect)} {side} {t:g} but not significant{unknown}; {p_text}"
    if code == "wrong-side-underpowered":
        mde_text = f"; {_mde(v)}" if v.mde is not None else ""
        return (
            f"not significant: {what} {fmt_signed(effect)} lies {other} {t:g}{mde_text}; {p_text}"
        )
    if code == "wrong-side-no-magnitude":
        mde_text = f"; {_mde(v)}" if v.mde is not None else ""
        return (
            f"not significant: {what} {fmt_signed(effect)} lies {other} "
            f"{t:g}{mde_text}; the claim prints no effect, so whether the test could have "
            f"found it is unknown; {p_text}"
        )
    if code == "wrong-side":
        mde_text = f"; {_mde(v)}" if v.mde is not None else ""
        said = f"{what} {fmt_signed(effect)} lies {other} {t:g}"
        return f"{said} (not significant{mde_text}); {p_text}"
    raise ValueError(f"unknown reason code {code!r} (claim {c.id!r}).")


def _undecided_reason(v: StandardVerdict, p_text: str) -> str:
    """An undecided verdict: the p, its Monte Carlo error, and the verdict of each side."""
    assert v.sides is not None and v.pvalue_adjusted is not None
    which = "p" if v.correction == "none" else "p_adj"
    se = f" ± {v.pvalue_se:.4f}" if v.pvalue_se is not None else ""
    alpha = f" = {v.alpha:g}" if v.alpha is not None else ""
    low, high = v.sides
    return (
        f"{which} = {v.pvalue_adjusted:.4f}{se} lies within {MC_UNDECIDED_Z} Monte Carlo "
        f"standard errors of α at the resampling cap: {low} if the exact {which} ≤ "
        f"α{alpha}, {high} if above; "
        f"{p_text}"
    )


def flag_message(check: ClaimCheck, flag: Flag) -> str:
    """What flag `flag` of claim `check` means, with the numbers (no final period)."""
    c = check.claim
    k = check.n_seeds or 0
    averaged_p = check.test.pvalue if check.test else math.nan
    dep = check.seed_dependence
    if flag.code == "p-below-minimum":
        floor = check.min_attainable_p if check.min_attainable_p is not None else math.nan
        how = f"{c.reported_resamples:,}" if c.reported_resamples else "exact"
        return (
            f"reported {c.reported_p} is below the smallest attainable p {floor:.3g} "
            f"for this n ({check.n} units, {check.test.n_nonzero if check.test else 0} nonzero "
            f"differences) with {how} sign flips"
            + (" and Fisher over the seeds" if c.seeds == "fisher" else "")
        )
    if flag.code == "seeds-pooled":
        assert dep is not None
        why = "the claim says so" if c.seeds == "pooled" else f"reported n = {check.n} × {k} seeds"
        pooled = check.pooled_pvalue if check.pooled_pvalue is not None else math.nan
        return (
            f"seeds pooled as if independent ({why}), but they are near-duplicates: mean "
            f"between-seed correlation {dep.mean_correlation:.2f}, "
            f"{dep.duplicate_fraction:.0%} identical values, effective seeds "
            f"{dep.effective_seeds:.2f} of {k}; pooled {p_phrase(pooled)} vs per-unit "
            f"averaged {p_phrase(averaged_p)}"
        )
    if flag.code == "fisher-dependent-seeds":
        assert dep is not None and check.fisher_pvalue is not None
        return (
            f"Fisher combination assumes independent seeds, but the mean between-seed "
            f"correlation is {dep.mean_correlation:.2f} (effective seeds "
            f"{dep.effective_seeds:.2f} of {k}); Fisher {p_phrase(check.fisher_pvalue)} "
            f"vs per-unit averaged {p_phrase(averaged_p)}"
        )
    if flag.code == "skewed-equivalence":
        assert check.equivalence is not None and flag.value is not None
        if check.equivalence.constant:
            return (
                f"every one of the n = {check.equivalence.n} differences is the same value: "
                "the sign-flip TOST assumes differences symmetric about the margin, and a "
                "sample without spread cannot show that (a null with its mean on the margin "
                "can put any probability on such a sample): an 'equivalent' verdict on these "
                "differences is not shown at the family's α"
            )
        return (
            f"the differences are skewed (skewness {check.equivalence.skewness:+.2f}, "
            f"n = {check.equivalence.n}): the sign-flip TOST assumes differences symmetric "
            f"about the margin, and at this skewness and n theory puts its false-equivalence "
            f"rate about {flag.value:.3f} above the family's α (docs/statistics.md): an "
            "'equivalent' verdict on these differences is not shown at that level"
        )
    if flag.code == "liberal-interaction":
        res = check.interaction_as_tested
        assert res is not None and flag.value is not None
        cells = "/".join(str(k) for k in res.cell_n.values())
        return (
            f"the paper's centred interaction statistic (the as-tested column) rejects "
            f"{flag.value:.3f} of true nulls at the family's α with these cell sizes "
            f"(n = {cells}) and normal differences of equal variance, more than 1.2 α: its p "
            "is too small by the cells' sizes alone (4,000 simulated nulls; "
            "docs/validation.md §4.7b); "
            "the strict column's studentized statistic is the calibrated one"
        )
    if flag.code == "mc-undecided":
        return _undecided_message(check, flag)
    if flag.code == "effect-outside-ci":
        claimed = c.claimed_effect
        assert claimed is not None
        if c.reported_over == "query":
            return _outside_pooled_message(check, claimed)
        if c.kind == "relative":
            assert check.ratio is not None
            lo, hi = check.ratio.relative_interval
            return (
                f"reported relative effect {claimed:+.1%} lies outside the records' "
                f"{check.ratio.level:.0%} Fieller CI [{lo:+.1%}, {hi:+.1%}] "
                f"(estimate {check.ratio.relative:+.1%})"
            )
        ci = check.ci
        assert ci is not None
        what = "reported effect" if c.reported_effect is not None else "reported means' gap"
        return (
            f"{what} {fmt_signed(claimed)} lies outside the records' {ci.level:.0%} bootstrap "
            f"CI {fmt_interval(ci.low, ci.high)} (estimate {fmt_signed(ci.statistic)})"
        )
    if flag.code == "n-mismatch":
        return f"reported n = {c.reported_n}, the records hold n = {check.n}"
    if flag.code == "gap-outside-margin":
        assert flag.value is not None and c.margin is not None
        return (
            f"reproduced as tested only in the claim's reading (not significantly different): "
            f"the gap {fmt_signed(flag.value)} itself lies outside the margin ±{c.margin:g}, "
            "so the records do not show the difference small — see the strict TOST"
        )
    if flag.code == "query-unit-clustered":
        return _clustered_message(check, flag)
    raise ValueError(f"unknown flag code {flag.code!r} (claim {c.id!r}).")


def _outside_pooled_message(check: ClaimCheck, claimed: float) -> str:
    """The ``'effect-outside-ci'`` flag of printed numbers pooled over queries: against the
    records' interval of the pooled gap (printed × ER's ends) or relative effect (printed −
    ΔRI's ends), episodes resampled."""
    r = check.reproduction
    assert r is not None
    if check.claim.kind == "relative":
        ci = r.delta_ri_ci
        assert ci is not None
        lo, hi = claimed - ci.high, claimed - ci.low
        return (
            f"reported relative effect {claimed:+.1%} lies outside the records' "
            f"{ci.level:.0%} interval of the relative effect pooled over queries "
            f"[{lo:+.1%}, {hi:+.1%}] (pooled estimate {r.relative:+.1%}; episodes resampled)"
        )
    ci = r.effect_ratio_ci
    assert ci is not None
    lo, hi = sorted((claimed * ci.low, claimed * ci.high))
    what = "reported effect" if check.claim.reported_effect is not None else "reported means' gap"
    return (
        f"{what} {fmt_signed(claimed)} lies outside the records' {ci.level:.0%} interval of the "
        f"gap pooled over queries {fmt_interval(lo, hi)} (pooled estimate "
        f"{fmt_signed(r.improvement)}; episodes resampled)"
    )


def _underpowered_reason(check: ClaimCheck, v: StandardVerdict, p_text: str) -> str:
    """An underpowered verdict: the MDE (a number, a range, or none at any effect) against
    the claimed magnitude -- for a threshold claim, its excess over the threshold."""
    assert v.mde is not None and v.magnitude is not None
    t = check.claim.threshold
    mag = f"{v.magnitude:.3f}"
    claimed = f"the claimed effect {mag}" if t == 0 else f"the claimed excess over {t:g} ({mag})"
    at = f"at n = {check.n}{_level(v, 'and')}"
    ends = getattr(v.mde, "mde_range", None)
    if math.isinf(v.mde) and (ends is None or math.isinf(ends[0])):
        # no effect reaches the power; a range infinite at both ends says why (rule Z)
        said = UNDERPOWERED_AT_ANY_EFFECT if ends is None else not_estimable(v.mde)
        return f"{said} {at} ({claimed.removeprefix('the ')}); {p_text}"
    if ends is not None:  # a range, its upper end possibly infinite
        verb = "exceeds" if ends[0] > v.magnitude else "may exceed"
        said = not_estimable(v.mde).removeprefix("MDE not estimable from n = ")
        return f"the MDE {at} is not estimable from {said} and {verb} {claimed}; {p_text}"
    return f"MDE {v.mde:.3f} {at} exceeds {claimed}; {p_text}"


def _undecided_message(check: ClaimCheck, flag: Flag) -> str:
    """The ``'mc-undecided'`` flag: the corrected p, its Monte Carlo error, what follows."""
    v = check.under(flag.standard or "strict")
    assert v is not None and v.pvalue_adjusted is not None and flag.value is not None
    which = "p" if v.correction == "none" else "p_adj"
    return (
        f"undecided at this Monte Carlo precision ({flag.standard}): {which} = "
        f"{v.pvalue_adjusted:.4f} ± {flag.value:.4f} (Monte Carlo SE) lies within "
        f"{MC_UNDECIDED_Z} standard errors of α even at the resampling cap "
        "(`max_resamples`), so its side of α is resampling noise: "
        + (
            "the verdict is left undecided, counted apart from the others"
            if v.code == "mc-undecided"
            else f"both sides give the verdict {v.verdict}"
        )
    )


def _clustered_message(check: ClaimCheck, flag: Flag) -> str:
    """The ``'query-unit-clustered'`` flag, with the claim's p at the episode unit."""
    c = check.claim
    said = (
        "tested at the query unit (the claim's, or the default), but these records' "
        "benchmark declares the episode as its unit: an episode's queries share one "
        "memory, so a query-level p can be far smaller than the episode's; "
    )
    if c.kind == "interaction":
        return said + (
            "an interaction spans the cells and an episode mixes them, so it has no "
            "episode-level test (a cell's own metric, such as an import's `judge.t+e+`, tests "
            "one cell at a time): read its p as one that treats each episode's queries as "
            "independent"
        )
    if c.cell is not None and flag.value is None:
        return said + (
            "a per-cell claim has no episode-level test here (an episode mixes cells, and no "
            f"metric `{cell_metric(c)}` holds this cell's queries alone), so read its p as "
            "one that treats each episode's queries as independent"
        )
    if flag.value is None:
        return said + "the episodes cannot test this claim (too few of them)"
    test = "TOST" if c.kind == "equivalence" else "strict test"
    if c.cell is not None:
        there = f'`metric = "{cell_metric(c)}"` (this cell\'s queries per episode)'
        return said + (
            f"the same claim's {test} on {there} at the episode unit gives "
            f'{p_phrase(flag.value)} (uncorrected) — claim that metric with `unit = "episode"` '
            "to judge it there"
        )
    return said + (
        f"the same claim's {test} at the episode unit gives {p_phrase(flag.value)} "
        '(uncorrected) — give `unit = "episode"` to judge it there'
    )


def note_text(check: ClaimCheck, note: Note) -> str:
    """What note `note` of claim `check` says (no final period)."""
    c = check.claim
    if note.code == "seed-dependence-unmeasured":
        return f"seed dependence not measured: {note.detail}"
    if note.code == "mc-resampled":
        return (
            f"a Monte Carlo p lay within {MC_UNDECIDED_Z} standard errors of α, so its side of "
            "α was resampling noise: the claim was tested again with 4× the resamples on fresh "
            f"draws until settled or at the cap, to {int(note.detail):,} resamples; its numbers "
            "are those of the last look"
        )
    if note.code == "fieller-independent-queries":
        return (
            "the ratio is of per-query means (the claim's unit); the Fieller interval treats "
            "queries as independent although they cluster in episodes, so it is too narrow "
            "when episodes' queries correlate"
        )
    if note.code == "seeds-share-units":
        return (
            f"the seeds hold different units that partly recur ({note.detail}): the "
            "seed-averaged test has one unit per distinct unit id (the records' episode id), "
            "each averaged over the seeds it appears in; Fisher combines per-seed tests on "
            "each seed's own units, and the seed dependence is the correlation of the per-seed "
            "statistics through the shared units"
        )
    if note.code == "one-seed":
        how = "pooled" if c.seeds == "pooled" else "Fisher-combined"
        return (
            f"the claim's p {how} seeds, but these records hold one seed: seed dependence "
            "cannot be measured"
        )
    raise ValueError(f"unknown note code {note.code!r} (claim {c.id!r}).")


def procedure(check: ClaimCheck, v: StandardVerdict) -> str:
    """The procedure standard verdict `v` of claim `check` used, in words."""
    c = check.claim
    margin = f"{c.margin:g}" if c.margin is not None else "?"
    names = {
        "none": "—",
        "ordering": "ordering of means (descriptive)",
        "interaction-centered": f"interaction, {AS_TESTED_INTERACTION}",
        "interaction-studentized": f"interaction, {STRICT_INTERACTION}",
        "tost": f"TOST ±{margin}, seeds averaged",
        "gap-vs-margin": f"|gap of means| ≤ {margin} (descriptive)",
        "difference-test": "difference test, p > α read as 'indistinguishable'",
        "ratio-descriptive": "ratio of means (descriptive)",
        "ratio-test": "ratio test, seeds averaged",
        "sign-flip": "sign-flip",
        "sign-flip-averaged": "sign-flip, seeds averaged",
        "sign-flip-seed": f"sign-flip, seed {c.seed}",
        "fisher": f"Fisher over {check.n_seeds} seeds",
        "pooled": f"sign-flip, {check.n_seeds} seeds pooled",
    }
    if v.test not in names:
        raise ValueError(f"unknown test code {v.test!r} (claim {c.id!r}).")
    return names[v.test]
