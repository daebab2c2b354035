"""Rendering of claim audits (:func:`osustat.audit.audit`): markdown and JSON."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from osustat import stars
from osustat.audit import VERDICTS, AuditResult, ClaimCheck

__all__ = ["render_markdown", "to_json"]

_UNITS = {"query": "queries", "episode": "episodes"}


def _num(x: float | None, digits: int = 3, sign: bool = True) -> str:
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def _p(p: float | None) -> str:
    if p is None:
        return "—"
    return "<.001" if p < 0.001 else f"{p:.3f}"


def _reported(check: ClaimCheck) -> str:
    c = check.claim
    parts = []
    if c.reported_effect is not None:
        parts.append(f"Δ {c.reported_effect:+.3f}")
    elif c.reported_means is not None:
        parts.append(f"{c.reported_means[0]:.3f} vs {c.reported_means[1]:.3f}")
    if c.reported_p is not None:
        parts.append(str(c.reported_p))
    if c.reported_ci is not None:
        parts.append(f"CI [{c.reported_ci[0]:+.3f}, {c.reported_ci[1]:+.3f}]")
    if c.reported_n is not None:
        parts.append(f"n {c.reported_n}")
    return ", ".join(parts) or "—"


def _row(check: ClaimCheck) -> str:
    c = check.claim
    sign = ">" if c.direction == "greater" else "<"
    what = f"{c.treatment} − {c.baseline} {sign} {c.threshold:g}, {c.metric}, B={c.budget}"
    if c.benchmark:
        what += f", {c.benchmark}"
    flags = ", ".join(f.code for f in check.flags) or ""
    if check.test is None or check.ci is None:
        return (
            f"| {c.id} | {what} | {c.cell_label} | — | {_reported(check)} | — | — | — | — | "
            f"**{check.verdict}** | {flags} |"
        )
    p_adj = check.pvalue_adjusted if check.pvalue_adjusted is not None else math.nan
    return (
        f"| {c.id} | {what} | {c.cell_label} | {check.n} {_UNITS[c.unit]} | {_reported(check)} | "
        f"{_num(check.effect)} [{_num(check.ci.low)}, {_num(check.ci.high)}] | "
        f"{_p(check.test.pvalue)} | {_p(p_adj)}{stars(p_adj)} | {_num(check.mde, sign=False)} | "
        f"**{check.verdict}** | {flags} |"
    )


def render_markdown(
    result: AuditResult, *, title: str | None = None, preamble: Sequence[str] = ()
) -> str:
    """Render an audit as a markdown report.

    One table per correction family (claims in file order), then the flags with their
    explanations, the claims that could not be checked and why, and further notes.

    Parameters
    ----------
    result : AuditResult
    title : str, optional
        Defaults to the claims file's title.
    preamble : sequence of str
        Lines printed under the title (inputs, exclusions, seed).

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
    ... cell = "T+E+"
    ... direction = "greater"
    ... ''')
    >>> df = pd.DataFrame({"episode_id": "e", "query_id": ["q1", "q2"] * 2,
    ...                    "method": ["new", "new", "old", "old"], "budget": 256,
    ...                    "metric": "hit@2", "value": [1, 1, 0, 0]})
    >>> text = render_markdown(audit(cf, df, n_resamples=99, bootstrap_resamples=20, rng=0))
    >>> "the records carry no `cell` column" in text
    True
    """
    counts = result.counts()
    n = len(result.checks)
    summary = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    out = [f"# {title or result.title or 'Audit of claims'}", "", *preamble]
    out += [
        f"- Claims: {n} ({summary}).",
        f"- Recomputed tests: two-sided paired sign-flip, {result.n_resamples:,} resamples "
        "(exact when enumeration is cheap or the metric is 0/1), seeds averaged per unit "
        f"before pairing; {result.level:.0%} bootstrap CIs ({result.bootstrap_resamples:,} "
        "resamples, clustered by episode for queries); MDE at power .8.",
        "- Stars on the corrected p: . <.10, * <.05, ** <.01, *** <.001. Verdicts: "
        "reproduced / direction only (not significant after correction) / contradicted / "
        "underpowered (MDE exceeds the claimed effect) / not checkable (data missing).",
        "",
    ]
    for name, fam in result.families.items():
        members = [c for c in result.checks if c.claim.family == name]
        if not members:
            continue
        checkable = sum(c.test is not None for c in members)
        out += [
            f"## Family `{name}`" + (f": {fam.description}" if fam.description else ""),
            "",
            f"{fam.correction} correction over the {checkable} checkable of {len(members)} "
            f"claims, α = {fam.alpha}.",
            "",
            "| id | claim | cell | n | reported | Δ [CI] | p raw | p corrected | MDE | verdict "
            "| flags |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            *(_row(c) for c in members),
            "",
        ]
    flagged = [c for c in result.checks if c.flags]
    if flagged:
        out += ["## Flags", ""]
        for c in flagged:
            for f in c.flags:
                out.append(f"- **{c.claim.id}** `{f.code}`: {f.message.rstrip('.')}.")
        out.append("")
    missing = [c for c in result.checks if c.verdict == "not checkable"]
    if missing:
        out += ["## Not checkable", ""]
        out += [
            f"- **{c.claim.id}** ({c.claim.describe()}): {c.reason.rstrip('.')}." for c in missing
        ]
        out.append("")
    out += ["## Verdicts explained", ""]
    for c in result.checks:
        if c.verdict == "not checkable":
            continue
        src = f" [{c.claim.source}]" if c.claim.source else ""
        extra = ""
        if c.seed_dependence is not None:
            dep = c.seed_dependence
            extra = (
                f" Seeds: {c.n_seeds}, mean between-seed correlation "
                f"{dep.mean_correlation:.2f}, effective seeds {dep.effective_seeds:.2f}; "
                f"pooled p {_p(c.pooled_pvalue)}, Fisher p {_p(c.fisher_pvalue)} "
                "(anti-conservative contrasts, not used for the verdict)."
            )
        notes = "".join(f" Note: {n}." for n in c.notes)
        out.append(f"- **{c.claim.id}**{src}: {c.verdict} — {c.reason}.{extra}{notes}")
    out.append("")
    return "\n".join(out)


def to_json(result: AuditResult) -> dict[str, Any]:
    """The audit as plain JSON-serializable data (same numbers as the markdown)."""
    claims = []
    for c in result.checks:
        cl = c.claim
        item: dict[str, Any] = {
            "id": cl.id,
            "family": cl.family,
            "source": cl.source,
            "claim": cl.describe(),
            "treatment": cl.treatment,
            "baseline": cl.baseline,
            "metric": cl.metric,
            "budget": cl.budget,
            "cell": cl.cell_label,
            "unit": cl.unit,
            "benchmark": cl.benchmark,
            "direction": cl.direction,
            "threshold": cl.threshold,
            "reported": {
                "effect": cl.reported_effect,
                "means": list(cl.reported_means) if cl.reported_means else None,
                "p": (
                    {
                        "relation": cl.reported_p.relation,
                        "value": cl.reported_p.value,
                        "text": cl.reported_p.text,
                    }
                    if cl.reported_p
                    else None
                ),
                "ci": list(cl.reported_ci) if cl.reported_ci else None,
                "n": cl.reported_n,
                "resamples": cl.reported_resamples,
                "seeds": cl.seeds,
            },
            "verdict": c.verdict,
            "reason": c.reason,
            "flags": [{"code": f.code, "message": f.message} for f in c.flags],
            "notes": list(c.notes),
        }
        if c.test is not None and c.ci is not None:
            item["recomputed"] = {
                "n": c.n,
                "n_seeds": c.n_seeds,
                "effect": c.effect,
                "treatment_mean": c.treatment_mean,
                "baseline_mean": c.baseline_mean,
                "ci": [c.ci.low, c.ci.high],
                "ci_level": c.ci.level,
                "pvalue": c.test.pvalue,
                "pvalue_method": c.test.method,
                "pvalue_adjusted": c.pvalue_adjusted,
                "family_size": c.family_size,
                "mde": c.mde,
                "min_attainable_p": c.min_attainable_p,
                "pooled_pvalue": c.pooled_pvalue,
                "fisher_pvalue": c.fisher_pvalue,
                "seed_correlation": (
                    c.seed_dependence.mean_correlation if c.seed_dependence else None
                ),
            }
        claims.append(item)
    return {
        "title": result.title,
        "claims_file": result.source,
        "settings": {
            "n_resamples": result.n_resamples,
            "bootstrap_resamples": result.bootstrap_resamples,
            "level": result.level,
        },
        "families": {
            k: {"correction": f.correction, "alpha": f.alpha, "description": f.description}
            for k, f in result.families.items()
        },
        "counts": {v: result.counts()[v] for v in VERDICTS},
        "claims": claims,
    }
