"""Rendering of claim audits (:func:`osustat.audit.run.audit`): markdown here, JSON in
:mod:`osustat.reports.audit_json`.

The audit returns verdict codes and numbers under two standards; this module writes the
words: the report's first lines say which standard each column uses, a summary counts the
claims each standard lets survive, and one table per family shows the two verdicts side by
side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from osustat.audit.claim import Family
from osustat.audit.result import VERDICTS, AuditResult, ClaimCheck
from osustat.audit.verdicts import STANDARDS, UNDECIDED, StandardVerdict
from osustat.formatting import fmt_interval, fmt_number, fmt_p, fmt_signed
from osustat.wording import MC_UNDECIDED_Z, straddles

from ._audit_words import flag_message, headline_reason, note_text, procedure, reason
from ._style import IntervalTest, disagrees, interval_test_notes

__all__ = ["STANDARD_LINES", "render_markdown", "render_paper_checks"]

_UNITS = {"query": "queries", "episode": "episodes"}

#: The report's first lines: what each verdict column means.
STANDARD_LINES = (
    "- **As tested** column: each claim on its own terms — its unit and n, its seed handling "
    "(Fisher-combined or pooled seeds where the claim says so; one seed where it names one), "
    "the paper's interaction statistic (centered sign flips), and only the correction its "
    "family declares the authors applied (`correction`, default none); descriptive claims "
    "(means, printed ratios, gaps against a margin without a printed test) are checked as "
    "printed.",
    "- **Strict** column: seeds averaged per unit before testing (Appendix F), calibrated "
    "tests (studentized interaction statistic, TOST at the stated equivalence margin, a "
    "sign-flip test of the ratio for relative effects), and the family's strict correction "
    "(`strict_correction`, default Holm) over its claims that have a p.",
)


def _num(x: float | None, digits: int = 3, sign: bool = True) -> str:
    return fmt_signed(x, digits) if sign else fmt_number(x, digits)


def _pct(x: float) -> str:
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    return f"{x:+.1%}"


def _reported(check: ClaimCheck) -> str:
    c = check.claim
    parts = []
    if c.reported_effect is not None:
        effect = c.reported_effect
        parts.append(_pct(effect) if c.kind == "relative" else f"Δ {fmt_signed(effect)}")
    if c.reported_means is not None and (c.reported_effect is None or c.kind == "relative"):
        parts.append(f"{c.reported_means[0]:.3f} vs {c.reported_means[1]:.3f}")
    if c.reported_p is not None:
        parts.append(str(c.reported_p))
    if c.reported_ci is not None:
        parts.append(f"CI {fmt_interval(*c.reported_ci)}")
    if c.reported_n is not None:
        parts.append(f"n {c.reported_n}")
    return ", ".join(parts) or "—"


def _what(check: ClaimCheck) -> str:
    c = check.claim
    where = ", ".join(x for x in (c.metric, c.budget_label, c.benchmark or "") if x)
    if c.seed is not None:
        where += f", seed {c.seed}"
    statement = c.statement().replace("|", "\\|")  # a markdown table cell
    return f"{statement}, {where}"


def _recomputed(check: ClaimCheck) -> str:
    c = check.claim
    if c.kind == "means":
        return (
            f"{_num(check.treatment_mean, sign=False)} vs {_num(check.baseline_mean, sign=False)}"
        )
    if c.kind == "interaction" and check.interaction is not None:
        return "Δ by cell " + " / ".join(
            f"{cell.value} {_num(v)}" for cell, v in check.interaction.cell_means.items()
        )
    if c.kind == "relative" and check.ratio is not None:
        lo, hi = check.ratio.relative_interval
        return f"{_pct(check.ratio.relative)} [{_pct(lo)}, {_pct(hi)}]"
    if check.ci is not None:
        return f"{_num(check.effect)} [{_num(check.ci.low)}, {_num(check.ci.high)}]"
    return "—"


#: The ER legend's words for claims whose printed numbers are pooled over queries.
_POOLED = (
    " “Pooled over queries”: a claim tested per episode whose printed numbers weigh every "
    "query alike (`reported_over`): its ER and ΔRI (and whether the printed effect lies "
    "outside the records' interval) are of the values pooled over queries, resampling "
    "episodes; its test, interval and means are the episodes'."
)


def _er(check: ClaimCheck) -> str:
    """ER and ΔRI against the printed values, with their intervals (— when not printed)."""
    m = check.reproduction
    if m is None:
        return "—"
    parts = []
    if m.effect_ratio is not None:
        ci = m.effect_ratio_ci
        parts.append(
            f"ER {fmt_number(m.effect_ratio, 2)}"
            + ("" if ci is None else f" {fmt_interval(ci.low, ci.high, 2)}")
        )
    if m.delta_ri is not None:
        ci = m.delta_ri_ci
        parts.append(
            f"ΔRI {fmt_signed(m.delta_ri, 2)}"
            + ("" if ci is None else f" {fmt_interval(ci.low, ci.high, 2)}")
        )
    pooled = " (pooled over queries)" if parts and check.claim.reported_over == "query" else ""
    return "; ".join(parts) + pooled if parts else "—"


def _cell(v: StandardVerdict | None, *, corrected: bool) -> str:
    if v is None:
        return "— | —"
    p = v.pvalue_adjusted if corrected else v.pvalue
    return f"{fmt_p(p)} | **{v.verdict}**"


def _row(check: ClaimCheck) -> str:
    c = check.claim
    flags = ", ".join(f.code for f in check.flags)
    if not check.checkable:
        return (
            f"| {c.id} | {_what(check)} | {c.cell_label} | {c.kind} | — | {_reported(check)} "
            f"| — | — | **not checkable** | — | **not checkable** | — | {flags} |"
        )
    return (
        f"| {c.id} | {_what(check)} | {c.cell_label} | {c.kind} | {check.n} {_UNITS[c.unit]} | "
        f"{_reported(check)} | {_recomputed(check)} | "
        f"{_cell(check.as_tested, corrected=True)} | {_cell(check.strict, corrected=True)} | "
        f"{_er(check)} | {flags} |"
    )


def _interval_notes(result: AuditResult) -> list[str]:
    """Sentences for the claims whose printed interval and raw sign-flip p disagree about the
    claim's boundary (0 or its threshold): difference claims (bootstrap interval of the mean
    difference, with the interval that inverts the test) and relative claims (Fieller)."""
    diff, rel = [], []
    for c in result.checks:
        th = c.claim.threshold
        if not c.checkable or c.test is None:
            continue
        if straddles(c.test.pvalue, c.test.pvalue_se, 1.0 - result.level):
            continue  # the p's side of the level is Monte Carlo noise, and so any disagreement
        if c.claim.kind == "difference" and c.ci is not None:
            if not disagrees((c.ci.low, c.ci.high), c.test.pvalue, c.ci.level, th):
                continue  # nothing to explain: no need to invert the test (costly)
            inv = c.test.confidence_interval(c.ci.level)  # the test ran on d - threshold
            diff.append(
                IntervalTest(
                    c.claim.id,
                    (c.ci.low, c.ci.high),
                    c.test.pvalue,
                    (inv.low + th, inv.high + th),
                    c.test.min_pvalue,
                    null=th,
                )
            )
        elif c.claim.kind == "relative" and c.ratio is not None:
            lo, hi = c.ratio.relative_interval
            rel.append(IntervalTest(c.claim.id, (lo, hi), c.test.pvalue, None, None, null=th))
    test = "sign-flip test of the claim's boundary (raw p, before any correction)"
    boot = "bootstrap interval of the mean difference"
    return [
        *interval_test_notes(diff, level=result.level, interval=boot, test=test),
        *interval_test_notes(
            rel, level=result.level, interval="Fieller interval of the ratio − 1", test=test
        ),
    ]


def _counts_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def _survivors(result: AuditResult, standard: str) -> tuple[int, int, int]:
    """(reproduced, claims with a significance/equivalence verdict, checkable)."""
    checks = [c for c in result.checks if c.checkable]
    rep = sum((c.under(standard) or c).verdict == "reproduced" for c in checks)
    return rep, len(checks), len(result.checks)


def render_markdown(
    result: AuditResult, *, title: str | None = None, preamble: Sequence[str] = ()
) -> str:
    """Render an audit as a markdown report with the two standards side by side.

    The first lines say which standard each verdict column uses; then the caller's
    `preamble`, a summary of how many claims each standard lets survive, one table per
    correction family (claims in file order), the flags, the claims that could not be
    checked and why, and each claim's reasons under both standards.

    Parameters
    ----------
    result : AuditResult
    title : str, optional
        Defaults to the claims file's title.
    preamble : sequence of str
        Lines printed after the standards' description (inputs, exclusions, seed).

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.audit.run import audit
    >>> from osustat.audit.claims import parse_claims
    >>> spec = dict(id="a", family="f", treatment="new", baseline="old", metric="hit@2",
    ...             cell="T+E+", direction="greater")
    >>> cf = parse_claims("[[claim]]\\nbudget = 256\\n"
    ...                   + "".join(f'{k} = "{v}"\\n' for k, v in spec.items()))
    >>> df = pd.DataFrame({"episode_id": "e", "query_id": ["q1", "q2"] * 2,
    ...                    "method": ["new", "new", "old", "old"], "budget": 256,
    ...                    "metric": "hit@2", "value": [1, 1, 0, 0]})
    >>> text = render_markdown(audit(cf, df, n_resamples=99, bootstrap_resamples=20, rng=0))
    >>> text.splitlines()[2].startswith("- **As tested** column")
    True
    >>> "the records carry no `cell` column" in text
    True
    """
    out = [f"# {title or result.title or 'Audit of claims'}", "", *STANDARD_LINES, *preamble]
    out += _summary_section(result)
    for name, fam in result.families.items():
        out += _family_section(result, name, fam)
    agreement = _interval_notes(result)
    if agreement:
        out += ["## Interval and test", *agreement, ""]
    out += _flags_section(result)
    out += _not_checkable_section(result)
    out += _verdicts_explained(result)
    return "\n".join(out)


def _summary_section(result: AuditResult) -> list[str]:
    """The report's counts, how the tests were run, the verdicts' meaning and the summary
    table."""
    n = len(result.checks)
    checkable = sum(c.checkable for c in result.checks)
    kinds = ", ".join(f"{v} {k}" for k, v in result.kinds().items())
    out = [
        f"- Claims: {n} (by kind: {kinds}); checkable against these records: {checkable}.",
    ]
    for st in STANDARDS:
        rep, _, _ = _survivors(result, st)
        counts = result.counts(st)
        unchecked = counts.pop("not checkable", 0)
        aside = f"; {unchecked} more not checkable" if unchecked else ""
        open_ = counts.pop(UNDECIDED, 0)  # counted apart: neither reproduced nor not
        which = "checkable claims with a decided verdict" if open_ else "checkable claims"
        if open_:
            aside = (
                f"; {open_} more {UNDECIDED} (a p within {MC_UNDECIDED_Z} Monte Carlo "
                "standard errors of α at the resampling cap, its two sides giving different "
                "verdicts), counted "
                f"neither way{aside}"
            )
        out.append(
            f"- **{st.capitalize()}**: {rep} of {checkable - open_} {which} reproduced "
            f"({_counts_line(counts)}){aside}."
        )
    out += [
        f"- Recomputed tests: two-sided paired sign-flip, {result.n_resamples:,} resamples "
        "(exact when enumeration is cheap or the metric is 0/1); "
        f"{result.level:.0%} BCa bootstrap CIs, expanded for few units "
        f"({result.bootstrap_resamples:,} resamples, clustered by episode for queries; "
        "docs/statistics.md); Fieller CIs for ratios; MDE at power .8.",
        "- ER; ΔRI: the reproduction measures of Breuer et al. (2020) against the printed "
        "values (means, else the printed effect): ER = recomputed Δ / printed Δ (1: the same "
        "improvement), ΔRI = printed relative improvement − recomputed one (0: the same), "
        f"with {result.level:.0%} percentile bootstrap intervals of the records' sampling "
        "error only (printed values carry none we can resample); — where nothing is printed."
        + _POOLED
        * any(c.claim.reported_over == "query" for c in result.checks),
        "- p columns print the p each standard's verdict uses (corrected within its family). "
        "Verdicts: "
        "reproduced / significant (paper: n.s.) (significant on the claimed side where the "
        "paper printed a non-significant p) / direction only (not significant, estimate on "
        "the claimed side) / not significant (interaction) / equivalence not shown (the CI "
        "reaches into the margin and TOST is not significant) / opposite direction (not "
        "significant, estimate on the other side, test too weak for the claimed effect or "
        "no effect claimed to judge its power by) / "
        "contradicted (significant or the whole CI on the wrong side or outside the margin; "
        "or, adequately powered for the claimed effect, the estimate on the wrong side) / "
        "underpowered (MDE exceeds "
        f"the claimed effect) / {UNDECIDED} (the p within {MC_UNDECIDED_Z} Monte Carlo "
        "standard errors of α at the resampling cap, the two sides of α giving different "
        "verdicts) / not "
        "checkable (data missing).",
        "",
        "## Summary",
        "",
        "| verdict | as tested | strict | strict, BH in place of each family's strict correction |",
        "|---|---|---|---|",
        *(
            f"| {v} | {result.counts('as tested')[v]} | {result.counts('strict')[v]} | "
            f"{result.counts_bh()[v]} |"
            for v in VERDICTS
        ),
        f"| **total** | {n} | {n} | {n} |",
        "",
        "The last column repeats the strict standard with Benjamini–Hochberg (false "
        "discovery rate) in place of each family's strict correction.",
        "",
    ]
    return out


def _family_section(result: AuditResult, name: str, fam: Family) -> list[str]:
    """One correction family's table (nothing when no claim belongs to it)."""
    members = [c for c in result.checks if c.claim.family == name]
    if not members:
        return []
    m_t = next((c.as_tested.family_size for c in members if c.as_tested), 0)
    m_s = next((c.strict.family_size for c in members if c.strict), 0)
    return [
        f"## Family `{name}`" + (f": {fam.description}" if fam.description else ""),
        "",
        f"{len(members)} claim{'s' if len(members) != 1 else ''}, α = {fam.alpha}. "
        f"As tested: correction {fam.correction} "
        f"(m = {m_t}). Strict: {fam.strict_correction} over the {m_s} claims with a p.",
        "",
        "| id | claim | cell | kind | n | reported | recomputed [CI] | as tested p | as "
        "tested | strict p (corr.) | strict | ER; ΔRI [CI] | flags |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *(_row(c) for c in members),
        "",
    ]


def _flags_section(result: AuditResult) -> list[str]:
    """Every flag of every claim, in words (nothing when no claim is flagged)."""
    flagged = [c for c in result.checks if c.flags]
    if not flagged:
        return []
    out = ["## Flags", ""]
    for c in flagged:
        for f in c.flags:
            out.append(f"- **{c.claim.id}** `{f.code}`: {flag_message(c, f).rstrip('.')}.")
    out.append("")
    return out


def _not_checkable_section(result: AuditResult) -> list[str]:
    """The claims the records cannot check, and why (nothing when all are checkable)."""
    missing = [c for c in result.checks if not c.checkable]
    if not missing:
        return []
    out = ["## Not checkable", ""]
    out += [
        f"- **{c.claim.id}** ({c.claim.describe()}): {headline_reason(c).rstrip('.')}."
        for c in missing
    ]
    out.append("")
    return out


def _verdicts_explained(result: AuditResult) -> list[str]:
    """Each checkable claim's verdict with its reasons under both standards."""
    out = ["## Verdicts explained", ""]
    for c in result.checks:
        if not c.checkable:
            continue
        src = f" [{c.claim.source}]" if c.claim.source else ""
        extra = ""
        if c.seed_dependence is not None:
            dep = c.seed_dependence
            extra = (
                f" Seeds: {c.n_seeds}, mean between-seed correlation "
                f"{dep.mean_correlation:.2f}, effective seeds {dep.effective_seeds:.2f}; "
                f"pooled p {fmt_p(c.pooled_pvalue)}, Fisher p {fmt_p(c.fisher_pvalue)} "
                "(anti-conservative contrasts; used as tested only when the claim says so)."
            )
        notes = "".join(f" Note: {note_text(c, n)}." for n in c.notes)
        line = f"- **{c.claim.id}**{src}: {c.verdict} — {headline_reason(c)}."
        if c.as_tested is not None:
            line += (
                f" As tested ({procedure(c, c.as_tested)}): {c.as_tested.verdict} — "
                f"{reason(c, c.as_tested)}."
            )
        out.append(line + extra + notes)
    out.append("")
    return out


def render_paper_checks(checks: Sequence[Any], *, title: str = "") -> str:
    """Markdown of :func:`osustat.audit.paper_checks.check_paper`: findings about the paper.

    One line per check (how many printed cells break the relation), then every violating
    cell with the printed numbers and the bound.
    """
    n_bad = sum(not c.holds for c in checks)
    out = [
        f"## {title or 'Findings about the paper (its own printed numbers)'}",
        "",
        f"{n_bad} of {len(checks)} consistency checks fail on the paper's printed numbers. "
        "These are findings about the paper, not about any records: no run of ours enters.",
        "",
        "| check | source | relation | cells violating |",
        "|---|---|---|---|",
    ]
    for c in checks:
        out.append(
            f"| {c.id} | {c.source} | {c.statement} | {len(c.violations)} of {len(c.rows)} |"
        )
    for c in checks:
        if c.holds:
            continue
        out += ["", f"**{c.id}** ({c.source}): {c.statement}.", ""]
        for r in c.violations:
            printed = ", ".join(f"{x:.3f}" for x in r.printed)
            if c.kind == "recall-hit-bound":
                what = f"Hit, Recall = {printed}; Recall bound {r.bound:.3f}"
            elif c.kind == "interaction-p-attainable":
                what = (
                    f"printed p = {printed}; the largest p the printed cells allow "
                    f"(every 0/1 difference ±1) is {r.bound:.3g}"
                )
            elif c.kind == "printed-gap-within-margin":
                gap = r.printed[0] - r.printed[1]
                what = f"printed {printed}: gap {gap:+.3f} outside ±{r.bound:g}"
            else:
                what = f"printed {printed} exceeds {r.bound:.3f}"
            out.append(f"- {r.label}: {what}")
    return "\n".join(out)
