"""The JSON form of a claim audit (:func:`to_json`).

The same numbers as the markdown, with the words of :mod:`osustat.reports._audit_words`.
"""

from __future__ import annotations

import math
from typing import Any

from osustat.audit.result import VERDICTS, AuditResult, ClaimCheck
from osustat.audit.verdicts import STANDARDS, StandardVerdict
from osustat.power import PowerValue

from ._audit_words import flag_message, headline_reason, note_text, procedure, reason

__all__ = ["to_json"]


def _standard_json(check: ClaimCheck, v: StandardVerdict | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {
        "verdict": v.verdict,
        "code": v.code,
        "reason": reason(check, v),
        "test": procedure(check, v),
        "pvalue": v.pvalue,
        "pvalue_adjusted": v.pvalue_adjusted,
        "correction": v.correction,
        "family_size": v.family_size,
        # the MDE of the test this standard ran (difference claims), at its mde_alpha
        **_mde_json(v.mde),
        # an undecided verdict: the Monte Carlo error of the corrected p, and each side's verdict
        "pvalue_se": v.pvalue_se,
        "sides": (
            None
            if v.sides is None
            else {"at_or_below_alpha": v.sides[0], "above_alpha": v.sides[1]}
        ),
    }


def _stated_json(check: ClaimCheck) -> dict[str, Any]:
    """What the claims file states: the claim, its cell/unit/seeds and the printed numbers."""
    cl = check.claim
    rp = cl.reported_p
    return {
        "id": cl.id,
        "family": cl.family,
        "kind": cl.kind,
        "source": cl.source,
        "claim": cl.describe(),
        "treatment": cl.treatment,
        "baseline": cl.baseline,
        "metric": cl.metric,
        "budget": cl.budget,
        "cell": cl.cell_label,
        "unit": cl.unit,
        "benchmark": cl.benchmark,
        "seed": cl.seed,
        "direction": cl.direction,
        "threshold": cl.threshold,
        "margin": cl.margin,
        "reported": {
            "effect": cl.reported_effect,
            "means": list(cl.reported_means) if cl.reported_means else None,
            "p": {"relation": rp.relation, "value": rp.value, "text": rp.text} if rp else None,
            "ci": list(cl.reported_ci) if cl.reported_ci else None,
            "n": cl.reported_n,
            "resamples": cl.reported_resamples,
            "seeds": cl.seeds,
            "over": cl.reported_over or cl.unit,
        },
    }


def _judged_json(check: ClaimCheck) -> dict[str, Any]:
    """The verdicts (headline = strict), both standards, the flags and the notes, worded."""
    return {
        "verdict": check.verdict,
        "reason": headline_reason(check),
        "as_tested": _standard_json(check, check.as_tested),
        "strict": _standard_json(check, check.strict),
        # value: the number the flag measured (None where it has none), standard: whose
        "flags": [
            {
                "code": f.code,
                "message": flag_message(check, f),
                "value": f.value,
                "standard": f.standard,
            }
            for f in check.flags
        ],
        "notes": [note_text(check, n) for n in check.notes],
    }


def _mde_json(mde: PowerValue | None) -> dict[str, Any]:
    """The MDE fields: null when infinite or a range (not estimable as one number,
    mde_range, whose null end is infinite); mde_note says which in words; mde_alpha the
    level it is stated at (alpha / m in a corrected family of m claims)."""
    from osustat.wording import not_estimable, underpowered

    mde_range = getattr(mde, "mde_range", None)
    note = None
    if mde_range is not None:
        note = not_estimable(mde)
    elif mde is not None and not math.isfinite(mde):
        note = underpowered(mde)
    return {
        "mde": (
            float(mde) if mde is not None and math.isfinite(mde) and mde_range is None else None
        ),
        "mde_range": None if mde_range is None else [float(x) for x in mde_range],
        "mde_method": mde.method if mde is not None else None,
        "mde_note": note,
        "mde_alpha": mde.alpha if mde is not None else None,
    }


def _recomputed_json(check: ClaimCheck) -> dict[str, Any]:
    """The numbers recomputed from the records (a checkable claim's ``recomputed``)."""
    c = check
    rec: dict[str, Any] = {
        "n": c.n,
        "n_seeds": c.n_seeds,
        "effect": c.effect,
        "treatment_mean": c.treatment_mean,
        "baseline_mean": c.baseline_mean,
        "pvalue_adjusted": c.pvalue_adjusted,
        "family_size": c.family_size,
        # the strict standard's (the headline's); null when infinite (underpowered at any
        # effect) or a range: mde_note says which
        **_mde_json(c.mde),
        "min_attainable_p": c.min_attainable_p,
        "pooled_pvalue": c.pooled_pvalue,
        "fisher_pvalue": c.fisher_pvalue,
        "seed_correlation": c.seed_dependence.mean_correlation if c.seed_dependence else None,
    }
    if c.test is not None and c.ci is not None:
        rec.update(
            ci=[c.ci.low, c.ci.high],
            ci_level=c.ci.level,
            pvalue=c.test.pvalue,
            pvalue_method=c.test.method,
        )
    rec.update(_procedures_json(c))
    if c.reproduction is not None:  # ER/ΔRI against the printed values
        rec.update(c.reproduction.to_dict())
    return rec


def _procedures_json(c: ClaimCheck) -> dict[str, Any]:
    """The kind-specific tests run: TOST, the ratio, the two interaction statistics."""
    out: dict[str, Any] = {}
    if c.equivalence is not None:
        e = c.equivalence
        out["tost"] = {
            "pvalue": e.pvalue,
            "pvalue_low": e.pvalue_low,
            "pvalue_high": e.pvalue_high,
            "margin": [e.low, e.high],
        }
    if c.ratio is not None:
        r = c.ratio
        out["ratio"] = {
            "statistic": r.statistic,
            "ci": [r.low, r.high],
            "level": r.level,
            "bounded": r.bounded,
        }
    for key, res in (
        ("interaction", c.interaction),
        ("interaction_as_tested", c.interaction_as_tested),
    ):
        if res is not None:
            out[key] = {
                "statistic": res.statistic,
                "pvalue": res.pvalue,
                "method": res.method,
                "cell_means": {k.value: v for k, v in res.cell_means.items()},
                "cell_n": {k.value: v for k, v in res.cell_n.items()},
            }
    return out


def _claim_json(check: ClaimCheck) -> dict[str, Any]:
    """One claim: as stated, as judged, and (if checkable) as recomputed."""
    item = {**_stated_json(check), **_judged_json(check)}
    if check.checkable:
        item["recomputed"] = _recomputed_json(check)
    return item


def to_json(result: AuditResult) -> dict[str, Any]:
    """The audit as plain JSON-serializable data (same numbers as the markdown).

    ``verdict``/``reason``/``counts`` are the strict standard's (as before the two
    standards); ``as_tested``/``strict`` per claim and ``summary`` hold both.
    """
    return {
        "title": result.title,
        "claims_file": result.source,
        "standards": list(STANDARDS),
        "settings": {
            "n_resamples": result.n_resamples,
            "bootstrap_resamples": result.bootstrap_resamples,
            "level": result.level,
        },
        "families": {
            k: {
                "correction": f.correction,
                "strict_correction": f.strict_correction,
                "alpha": f.alpha,
                "description": f.description,
            }
            for k, f in result.families.items()
        },
        "counts": {v: result.counts()[v] for v in VERDICTS},
        "summary": result.summary(),
        "claims": [_claim_json(c) for c in result.checks],
    }
