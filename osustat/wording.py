"""The words of :func:`osustat.analyze`'s results: verdicts, MDEs, p-values.

:func:`describe_verdict` says exactly what happened to one row (significant or not, after
which correction over how many tests, and whether the effect was below what this n could
detect); :func:`mde_description` prints an MDE with the method that computed it, or
:data:`UNDERPOWERED` when no effect reaches the stated power.
"""

from __future__ import annotations

import math
from typing import Any

from .formatting import p_phrase
from .multitest import level_name

__all__ = ["CORRECTION_NAMES", "UNDERPOWERED", "describe_verdict", "mde_description"]

CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "sidak": "Šidák",
    "holm-sidak": "Holm–Šidák",
    "hommel": "Hommel",
    "fdr_bh": "Benjamini–Hochberg (FDR)",
    "fdr_by": "Benjamini–Yekutieli (FDR)",
    "maxt": "Westfall–Young step-down maxT",
    "minp": "Westfall–Young step-down minP",
    "none": "no correction",
}


#: How each MDE method is named in the report.
MDE_METHOD_NAMES = {
    "exact-binomial": "exact binomial",
    "simulation": "simulated sign-flip",
    "normal": "noncentral t",
    "empirical": "sign-flip simulated from the observed differences",
    "empirical-tilt": "sign-flip simulated from the observed differences, tilted",
    "sd-range": "normal model over the sd's 80% interval",
    "q-range": "exact binomial over the 80% interval of P(d ≠ 0)",
    "shape-range": "resampled over the sd's 80% interval, differences not normal-shaped",
    "share-range": "over the 80% interval of P(d ≠ 0)",
    "ess-range": "tilted, over the sd's 80% interval: a null of few effective differences",
    "top-range": "tilted: the treatment's largest effect read off the units where it is largest",
    "all-tied": "none: the two methods tied on every unit",
}

#: What the report and the verdict say instead of an infinite MDE.
UNDERPOWERED = "underpowered at any effect"


def not_estimable(mde: Any) -> str:
    """What is printed for an MDE not estimable as one number: from too few differences
    (``'sd-range'``, ``'q-range'``), differences not normal-shaped (``'shape-range'``), a
    share of ties that caps the power (``'share-range'``), a tilted null of few effective
    differences (``'ess-range'``) or a treatment's tilt capped on the units where it is
    largest (``'top-range'``); the basis says which. A range infinite at both ends (no
    effect reaches the power even at the optimistic end) is :data:`UNDERPOWERED`, with its
    basis."""
    lo, hi = mde.mde_range
    if not math.isfinite(lo):
        return f"{UNDERPOWERED} (from n = {mde.n_differences} differences: {mde.range_basis})"
    upper = f"{hi:.3f}" if math.isfinite(hi) else "∞"
    return (
        f"MDE not estimable from n = {mde.n_differences} differences "
        f"({lo:.3f}–{upper}: {mde.range_basis})"
    )


def underpowered(mde: Any) -> str:
    """:data:`UNDERPOWERED`, with the condition it rests on where ties cap the power: the
    share of units that differ, held at the row's own (too low even at the upper end of its
    80% interval, else the MDE would be a range), caps any mean difference; "MDE not
    estimable" where every difference is 0 (``'all-tied'``)."""
    if getattr(mde, "method", None) == "all-tied":
        return (
            f"MDE not estimable: the two methods tied on all {mde.n_differences:,} units "
            "(no difference to model an effect's spread from; `osustat plan --sd` plans from "
            "a stated one)"
        )
    share = getattr(mde, "p_nonzero", None)
    if share is None or not 0.0 < share < 1.0:
        return UNDERPOWERED
    return (
        f"{UNDERPOWERED} while ties hold (P(Δ ≠ 0) = {share:.2f}; too low even at its 80% "
        "upper end)"
    )


def mde_description(mde: float) -> str:
    """``'0.276 (exact binomial)'``, or :data:`UNDERPOWERED` when no effect reaches the
    power (infinite MDE).

    >>> from osustat import minimum_detectable_effect
    >>> from osustat.wording import mde_description
    >>> mde_description(minimum_detectable_effect(0.5, 56, p_nonzero=0.25))
    '0.189 (exact binomial)'
    >>> mde_description(minimum_detectable_effect(1.0, 5))
    'underpowered at any effect'
    """
    if getattr(mde, "mde_range", None) is not None:
        return not_estimable(mde)
    if not math.isfinite(mde):
        return underpowered(mde)
    method = getattr(mde, "method", None)
    if not method:
        return f"{mde:.3f}"
    name = MDE_METHOD_NAMES.get(method, method)
    fallback = getattr(mde, "tilt_fallback", None)
    if fallback:  # given the units' values, the differences were tilted: say why
        name = f"{name}: the differences, as {fallback}"
    return f"{mde:.3f} ({name})"


#: Monte Carlo standard errors of p within which a p near α leaves the verdict undecided
#: (two-sided 99%: the side of α is then settled with error at most .01).
MC_UNDECIDED_Z = 2.576


def straddles(pvalue: float, se: float, alpha: float) -> bool:
    """Whether `pvalue` (Monte Carlo standard error `se`) lies within
    :data:`MC_UNDECIDED_Z` standard errors of `alpha`: which side of `alpha` it falls on is
    then resampling noise (the one rule of ``analyze``'s verdicts and the audit's)."""
    return se > 0 and abs(pvalue - alpha) <= MC_UNDECIDED_Z * se


def corrected_se(se: float, pvalue: float, pvalue_adjusted: float | None) -> float:
    """The Monte Carlo standard error of a corrected p: the raw p's `se` scaled by the
    correction's factor ``pvalue_adjusted / pvalue`` (`se` itself without a correction)."""
    return se * (pvalue_adjusted / pvalue) if pvalue_adjusted and pvalue > 0 else se


def describe_verdict(
    effect: float,
    pvalue: float,
    pvalue_adjusted: float | None,
    *,
    alpha: float,
    correction: str,
    family_size: int,
    mde: float,
    mde_alpha: float,
    pvalue_se: float = 0.0,
    pvalue_adjusted_se: float | None = None,
) -> str:
    """Verdict words that say exactly what happened.

    A Monte Carlo p (`pvalue_se` > 0, its standard error) within
    :data:`MC_UNDECIDED_Z` standard errors of `alpha` -- the corrected p's error taken as the
    raw p's times the correction's factor ``p_adj / p``, or `pvalue_adjusted_se` where the
    corrected p is a Monte Carlo p of its own (Westfall–Young) -- decides nothing: the verdict is
    "undecided at this Monte Carlo precision" (issue 35: .055 printed where the exact p was
    .050), with the resample count to raise.

    Examples
    --------
    >>> from osustat.wording import describe_verdict
    >>> describe_verdict(0.16, 0.004, 0.064, alpha=0.05, correction="holm", family_size=16,
    ...                  mde=0.2, mde_alpha=0.05 / 16)
    'not significant after Holm over m = 16 (raw p = .004)'
    >>> describe_verdict(0.3, 0.001, 0.004, alpha=0.05, correction="holm", family_size=4,
    ...                  mde=0.2, mde_alpha=0.0125)
    'helps: significant after Holm over m = 4 (p_adj = .004)'
    >>> describe_verdict(0.01, 0.6, 1.0, alpha=0.05, correction="holm", family_size=4,
    ...                  mde=0.15, mde_alpha=0.0125)
    'not significant (raw p = .600); effect below the MDE 0.150 at α/m'
    >>> describe_verdict(0.4, 0.12, 0.48, alpha=0.05, correction="holm", family_size=4,
    ...                  mde=float("inf"), mde_alpha=0.0125)
    'not significant (raw p = .120); underpowered at any effect at α/m'
    >>> describe_verdict(0.2, 0.0505, None, alpha=0.05, correction="none", family_size=1,
    ...                  mde=0.1, mde_alpha=0.05, pvalue_se=0.0022)[:45]
    'undecided at this Monte Carlo precision: p = '
    """
    name = CORRECTION_NAMES.get(correction, correction)
    direction = "helps" if effect > 0 else "hurts"
    used = pvalue if pvalue_adjusted is None else pvalue_adjusted
    se = (
        pvalue_adjusted_se
        if pvalue_adjusted_se is not None
        else corrected_se(pvalue_se, pvalue, pvalue_adjusted)
    )
    if straddles(used, se, alpha):
        which = "p" if pvalue_adjusted is None else "p_adj"
        return (
            f"undecided at this Monte Carlo precision: {which} = {used:.4f} ± {se:.4f} (MC SE) "
            f"is within {MC_UNDECIDED_Z} SE of α = {alpha:g}; raise the resamples"
        )
    if pvalue_adjusted is None:  # outside every family: raw p
        if pvalue <= alpha:
            return f"{direction}: {p_phrase(pvalue)} uncorrected (not in a family)"
        return f"not significant ({p_phrase(pvalue)}, uncorrected)"
    corrected = correction != "none" and family_size > 1
    if pvalue_adjusted <= alpha:
        if corrected:
            return (
                f"{direction}: significant after {name} over m = {family_size} "
                f"({p_phrase(pvalue_adjusted, name='p_adj')})"
            )
        return f"{direction}: significant at α = {alpha:g} ({p_phrase(pvalue)})"
    where = f" at {level_name(correction)}" if corrected else ""
    if corrected and pvalue <= alpha:
        said = f"not significant after {name} over m = {family_size} (raw {p_phrase(pvalue)})"
        ranged = getattr(mde, "mde_range", None) is not None
        if ranged or not math.isfinite(mde):
            return f"{said}; {not_estimable(mde) if ranged else underpowered(mde)}{where}"
        return said
    if getattr(mde, "mde_range", None) is not None:
        return f"not significant (raw {p_phrase(pvalue)}); {not_estimable(mde)}{where}"
    if not math.isfinite(mde):
        return f"not significant (raw {p_phrase(pvalue)}); {underpowered(mde)}{where}"
    if abs(effect) < mde:
        return f"not significant (raw {p_phrase(pvalue)}); effect below the MDE {mde:.3f}{where}"
    return f"not significant (raw {p_phrase(pvalue)})"
