"""Phase 2 of the audit: the p each standard uses, the verdict rules, and the flags.

Two standards judge every claim (docs/audit.md):

* **as tested** -- the claim's own procedure: its unit and n, its seed handling (pooled or
  Fisher-combined seeds as the claim says), the paper's interaction statistic, and the
  correction its family declares it applied (``'none'`` by default). Descriptive claims
  (means, relative effects without a printed p, equivalence without a printed p) are checked
  as printed: ordering, ratio or gap.
* **strict** -- seeds averaged per unit (Appendix F), the calibrated studentized interaction
  statistic, TOST for equivalence, a test of the ratio for relative effects, and the family's
  strict correction (Holm by default) over its checkable claims.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._audit_measure import AS_TESTED_INTERACTION, STRICT_INTERACTION, Measured
from .claims import Family
from .combine import fisher_combine
from .intervals import ConfidenceInterval
from .power import minimum_detectable_effect

__all__ = ["STANDARDS", "Flag", "StandardVerdict", "flags", "judge", "min_attainable", "raw_pvalue"]

STANDARDS = ("as tested", "strict")


@dataclass(frozen=True)
class Flag:
    """A problem with how a claim's own numbers were obtained.

    ``code`` is one of ``'p-below-minimum'``, ``'seeds-pooled'``, ``'fisher-dependent-seeds'``,
    ``'effect-outside-ci'``, ``'n-mismatch'``; ``message`` explains it with the numbers.
    """

    code: str
    message: str


@dataclass(frozen=True)
class StandardVerdict:
    """A claim's verdict under one standard.

    Attributes
    ----------
    standard : str
        ``'as tested'`` or ``'strict'``.
    verdict : str
        One of :data:`osustat.audit.VERDICTS`.
    reason : str
        Why, in one sentence.
    pvalue : float or None
        The uncorrected p of the test this standard uses (None for descriptive checks).
    pvalue_adjusted : float or None
        ``pvalue`` after the standard's correction within the family.
    correction : str
        ``'none'`` or the correction applied.
    family_size : int
        Claims of the family with a p under this standard (the correction's m).
    test : str
        The procedure, e.g. ``'sign-flip, seeds averaged'``, ``'Fisher over 3 seeds'``,
        ``'TOST ±0.01'``, ``'ordering of means'``.
    """

    standard: str
    verdict: str
    reason: str
    pvalue: float | None
    pvalue_adjusted: float | None
    correction: str
    family_size: int
    test: str


def raw_pvalue(m: Measured, standard: str) -> tuple[float | None, str]:
    """The uncorrected p the `standard` uses for claim `m`, and the name of its test."""
    c = m.claim
    if m.missing is not None:
        return None, "—"
    if c.kind == "means":
        return None, "ordering of means (descriptive)"
    if c.kind == "interaction":
        res = m.interaction_as_tested if standard == "as tested" else m.interaction
        name = AS_TESTED_INTERACTION if standard == "as tested" else STRICT_INTERACTION
        return (res.pvalue if res else None), f"interaction, {name}"
    assert m.test is not None
    if standard == "strict":
        if c.kind == "equivalence":
            assert m.equivalence is not None
            return m.equivalence.pvalue, f"TOST ±{c.margin:g}, seeds averaged"
        what = "ratio test" if c.kind == "relative" else "sign-flip"
        return m.test.pvalue, f"{what}, seeds averaged"
    # -- as tested --
    if c.kind == "equivalence":
        if c.reported_p is None:
            return None, f"|gap of means| ≤ {c.margin:g} (descriptive)"
        return m.test.pvalue, "difference test, p > α read as 'indistinguishable'"
    if c.kind == "relative" and c.reported_p is None:
        return None, "ratio of means (descriptive)"
    if c.seed is not None:
        return m.test.pvalue, f"sign-flip, seed {c.seed}"
    if c.seeds == "fisher" and m.per_seed_pvalues:
        k = len(m.per_seed_pvalues)
        return fisher_combine(list(m.per_seed_pvalues)).pvalue, f"Fisher over {k} seeds"
    if c.seeds == "pooled" and m.pooled is not None:
        return m.pooled.pvalue, f"sign-flip, {m.n_seeds} seeds pooled"
    return m.test.pvalue, "sign-flip" + (", seeds averaged" if m.n_seeds > 1 else "")


def _difference(
    m: Measured, p_adj: float, alpha: float, p_text: str, effect: float, ci: ConfidenceInterval
) -> tuple[str, str]:
    """The difference-claim rules (also relative claims on the ratio scale)."""
    c = m.claim
    t = c.threshold
    beyond = effect > t if c.direction == "greater" else effect < t
    wrong_ci = ci[1] < t if c.direction == "greater" else ci[0] > t
    side = "above" if c.direction == "greater" else "below"
    other = "below" if c.direction == "greater" else "above"
    what = "relative effect" if c.kind == "relative" else "estimate"
    sig = p_adj <= alpha
    if sig and beyond:
        return "reproduced", f"{what} {effect:+.3f} {side} {t:g}; {p_text}"
    if sig:
        return "contradicted", f"{what} {effect:+.3f} is significantly {other} {t:g}; {p_text}"
    if wrong_ci:
        return "contradicted", f"the CI [{ci[0]:+.3f}, {ci[1]:+.3f}] lies {other} {t:g}"
    mde, magnitude = _mde(m, alpha)
    if magnitude is not None and mde is not None and mde > magnitude:
        return (
            "underpowered",
            f"MDE {mde:.3f} at n = {m.n} exceeds the claimed effect {magnitude:.3f}; {p_text}",
        )
    if beyond:
        return "direction only", f"{what} {effect:+.3f} {side} {t:g} but not significant; {p_text}"
    mde_text = f"; MDE {mde:.3f}" if mde is not None else ""
    return (
        "contradicted",
        f"{what} {effect:+.3f} lies {other} {t:g} (not significant{mde_text}); {p_text}",
    )


def _mde(m: Measured, alpha: float) -> tuple[float | None, float | None]:
    """MDE (difference scale) and the claimed magnitude it is compared with."""
    c = m.claim
    if c.kind != "difference" or m.d is None:
        return None, None
    mde = minimum_detectable_effect(float(m.d.std(ddof=1)), m.n, alpha=alpha)
    t = c.threshold
    if c.reported_effect is not None or c.reported_means is not None:
        return mde, abs((c.claimed_effect or 0.0) - t)
    return mde, (abs(t) if t != 0 else None)


def judge(
    m: Measured,
    standard: str,
    pvalue: float | None,
    p_adj: float | None,
    family_size: int,
    fam: Family,
    test_name: str,
) -> StandardVerdict:
    """Verdict of claim `m` under `standard`, given its corrected p."""
    c = m.claim
    correction = fam.correction if standard == "as tested" else fam.strict_correction
    if m.missing is not None:
        return StandardVerdict(
            standard, "not checkable", m.missing, None, None, correction, family_size, "—"
        )
    alpha = fam.alpha
    p_text = (
        f"p = {p_adj:.3g} ({'uncorrected' if correction == 'none' else correction}, "
        f"m = {family_size})"
        if p_adj is not None
        else ""
    )

    def out(verdict: str, reason: str) -> StandardVerdict:
        return StandardVerdict(
            standard, verdict, reason, pvalue, p_adj, correction, family_size, test_name
        )

    if c.kind == "means":
        gap = m.treatment_mean - m.baseline_mean
        holds = gap > 0 if c.direction == "greater" else gap < 0
        sign = ">" if c.direction == "greater" else "<"
        means = f"means {m.treatment_mean:.3f} vs {m.baseline_mean:.3f}"
        if holds:
            return out("reproduced", f"{means}: ordering {sign} holds (descriptive, no test)")
        tie = " (tie)" if gap == 0 else ""
        return out("contradicted", f"{means}: ordering {sign} fails{tie} (descriptive, no test)")
    if c.kind == "interaction":
        assert p_adj is not None
        if p_adj <= alpha:
            return out("reproduced", f"the gap differs across cells; {p_text}")
        paper = ""
        if c.reported_p is not None and c.reported_p.upper > alpha:
            paper = f"; the claim itself reports {c.reported_p} (no interaction)"
        return out("not significant", f"no significant interaction; {p_text}{paper}")
    if c.kind == "equivalence":
        assert m.d is not None and c.margin is not None
        gap = float(m.d.mean())
        margin = f"±{c.margin:g}"
        if standard == "as tested":
            if p_adj is None:
                inside = abs(gap) <= c.margin
                verdict = "reproduced" if inside else "contradicted"
                where = "inside" if inside else "outside"
                return out(verdict, f"gap {gap:+.3f} lies {where} the margin {margin} (no test)")
            if p_adj > alpha:
                return out(
                    "reproduced",
                    f"difference {gap:+.3f} not significant ({p_text}), as the claim read it; "
                    f"this does not show equivalence (see strict, margin {margin})",
                )
            return out("contradicted", f"difference {gap:+.3f} is significant; {p_text}")
        assert p_adj is not None and m.test is not None and m.equivalence is not None
        if p_adj <= alpha:
            return out("reproduced", f"equivalent within {margin}: gap {gap:+.3f}, TOST {p_text}")
        if m.test.pvalue <= alpha and abs(gap) > c.margin:
            return out(
                "contradicted",
                f"gap {gap:+.3f} is significantly nonzero and outside {margin} "
                f"(difference p = {m.test.pvalue:.3g})",
            )
        return out(
            "underpowered",
            f"equivalence within {margin} not shown: gap {gap:+.3f}, TOST {p_text}",
        )
    # difference and relative
    assert m.d is not None
    if c.kind == "relative":
        assert m.ratio is not None
        effect = m.ratio.relative
        ci = m.ratio.relative_interval
        if p_adj is None:  # as tested, descriptive
            t = c.threshold
            holds = effect > t if c.direction == "greater" else effect < t
            return out(
                "reproduced" if holds else "contradicted",
                f"ratio of means {m.ratio.statistic:.3f} (relative {effect:+.1%}) "
                f"{'on' if holds else 'not on'} the claimed side of {t:+.1%} (no test)",
            )
    else:
        assert m.ci is not None
        effect = float(m.d.mean())
        ci = m.ci  # a BootstrapCI is a ConfidenceInterval
    assert p_adj is not None
    verdict, reason = _difference(m, p_adj, alpha, p_text, effect, ci)
    return out(verdict, reason)


def min_attainable(m: Measured) -> float:
    """Smallest p the claim's own test could give with its n and resampling count."""
    c, test = m.claim, m.test
    assert test is not None  # internal invariant: only called for tested claims
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
    if c.seeds == "fisher" and c.seed is None:
        k = max(m.n_seeds, len(m.per_seed_pvalues), 1)
        floor = fisher_combine([floor] * k).pvalue if k > 1 else floor
    return floor


def flags(m: Measured, floor: float | None) -> list[Flag]:
    """The flags of a checkable claim (``floor``: :func:`min_attainable`, None if untested)."""
    c = m.claim
    out = []
    rp = c.reported_p
    if (
        floor is not None
        and rp is not None
        and (
            (rp.relation in ("=", "<=") and rp.value < floor * (1 - 1e-9))
            or (rp.relation == "<" and rp.value <= floor)
        )
    ):
        how = f"{c.reported_resamples:,}" if c.reported_resamples else "exact"
        out.append(
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
        out.append(
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
    if dep is not None and dep.too_dependent and c.seeds == "fisher" and m.per_seed_pvalues:
        fisher = fisher_combine(list(m.per_seed_pvalues)).pvalue
        out.append(
            Flag(
                "fisher-dependent-seeds",
                f"Fisher combination assumes independent seeds, but the mean between-seed "
                f"correlation is {dep.mean_correlation:.2f} (effective seeds "
                f"{dep.effective_seeds:.2f} of {k}); Fisher p = {fisher:.3g} vs per-unit "
                f"averaged p = {m.test.pvalue if m.test else math.nan:.3g}",
            )
        )
    claimed = c.claimed_effect if c.reported_effect is not None or c.reported_means else None
    if claimed is not None and c.kind == "relative" and m.ratio is not None:
        lo, hi = m.ratio.relative_interval
        if not lo <= claimed <= hi:
            out.append(
                Flag(
                    "effect-outside-ci",
                    f"reported relative effect {claimed:+.1%} lies outside the records' "
                    f"{m.ratio.level:.0%} Fieller CI [{lo:+.1%}, {hi:+.1%}] "
                    f"(estimate {m.ratio.relative:+.1%})",
                )
            )
    elif claimed is not None and c.kind in ("difference", "equivalence") and m.ci is not None:
        ci = m.ci
        if not ci.low <= claimed <= ci.high:
            what = "reported effect" if c.reported_effect is not None else "reported means' gap"
            out.append(
                Flag(
                    "effect-outside-ci",
                    f"{what} {claimed:+.3f} lies outside the records' {ci.level:.0%} bootstrap "
                    f"CI [{ci.low:+.3f}, {ci.high:+.3f}] (estimate {ci.statistic:+.3f})",
                )
            )
    if c.reported_n is not None and c.reported_n != m.n and not pooled_n:
        out.append(Flag("n-mismatch", f"reported n = {c.reported_n}, the records hold n = {m.n}"))
    return out
