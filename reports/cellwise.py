"""Markdown and figures for cell-conditional analyses (the paper's Table 4 layout).

Everything renders an :class:`osustat.analysis_result.AnalysisResult`: the rows carry their own
corrected p, family and verdict, so nothing here recomputes statistics.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from osustat import stars
from osustat.formatting import fmt_interval, fmt_number, fmt_p, fmt_signed, p_phrase
from osustat.multitest import level_name
from osustat.power import MDE_MIN_DIFFERENCES
from osustat.wording import UNDERPOWERED, mde_description

from ._style import DPI, IntervalTest, disagrees, interval_test_notes, pyplot, save_figure

if TYPE_CHECKING:
    from collections.abc import Iterable

    from osustat.analysis_multi import MultiAnalysisResult
    from osustat.analysis_result import AnalysisResult, Comparison, Row
    from osustat.cellwise import CellConditionalResult

__all__ = [
    "budget_effects_plot",
    "forest_figure",
    "forest_plot",
    "render_analysis",
    "render_multi_analysis",
    "write_figures",
    "write_multi_figures",
]


def _sig(p: float | None, verdict: str = "") -> str:
    """The paper's marks, cut at ``p <= threshold`` (:func:`osustat.stars`): the rule every
    verdict uses, so p = .05 exactly gets ``*`` beside "helps" rather than ``.``. A row whose
    verdict is undecided at its Monte Carlo precision gets ``?``: its p's side of a cut is
    resampling noise (a mark there would be decided by the seed)."""
    if p is None:
        return ""
    if verdict.startswith("undecided"):
        return "?"
    return stars(p)


def _table(res: AnalysisResult, comp: Comparison) -> list[str]:
    """One row per cell and the aggregate; where the intervals resample whole episodes
    (clusters of the queries), a column says on how many each row's interval rests."""
    unit = {"query": "queries", "episode": "episodes"}[res.unit]
    level = round(res.level * 100)
    clustered = _clustered(comp.rows)
    # at the episode unit each unit averages its queries: how many stand behind the row
    queries = (comp.result.paired.n_queries or 0) if res.unit == "episode" else 0
    k_head = " episodes (CI's clusters) |" if clustered else ""
    k_head += " queries (averaged) |" if queries else ""
    lines = [
        f"| Cell | n ({unit}) |{k_head} share | treatment | baseline | Δ | {level}% CI | W/T/L "
        "| d_z | CLES | p raw | p method | MC SE of p | p corrected | sig. | f·Δ | MDE | verdict |",
        "|---|---|" + "---|" * (16 + clustered + bool(queries)),
    ]
    for row in comp.rows:
        e = row.effect
        se = "—" if row.exact else f"{row.pvalue_se:.4f}"
        mde = mde_description(row.mde)
        shown = row.pvalue_adjusted if row.pvalue_adjusted is not None else row.pvalue
        k = f" {e.ci.n_clusters} |" if clustered else ""
        k += (f" {queries:,} |" if row.label == "Aggregate" else " — |") if queries else ""
        lines.append(
            f"| {row.label} | {e.n} |{k} {e.fraction:.1%} | {e.treatment_mean:.3f} | "
            f"{e.baseline_mean:.3f} | {fmt_signed(e.effect)} | {fmt_interval(e.ci.low, e.ci.high)} "
            f"| {e.wins}/{e.ties}/{e.losses} | {fmt_signed(e.effect_size_dz, 2, missing='n/a')} "
            f"| {e.cles:.3f} "
            f"| {fmt_p(row.pvalue)} | {row.pvalue_method} | {se} | {fmt_p(row.pvalue_adjusted)} | "
            f"{_sig(shown, row.verdict)} | {fmt_signed(e.contribution)} | {mde} | {row.verdict} |"
        )
    return lines


def _agreement(res: AnalysisResult, comp: Comparison) -> list[str]:
    """Sentences for the rows whose bootstrap interval and raw sign-flip p disagree about 0,
    with the interval that inverts that test (``SignFlipResult.confidence_interval``)."""
    rows = []
    for row in comp.rows:
        e = row.effect
        if not disagrees((e.ci.low, e.ci.high), row.pvalue, e.ci.level):
            continue  # nothing to explain: no need to invert the test (costly)
        inverted = e.test.confidence_interval(e.ci.level)
        rows.append(
            IntervalTest(
                row.label,
                (e.ci.low, e.ci.high),
                row.pvalue,
                (inverted.low, inverted.high),
                e.test.min_pvalue,
            )
        )
    clustered = _clustered(comp.rows)
    unit = "whole episodes" if clustered else f"{res.unit} units"
    return interval_test_notes(
        rows,
        level=comp.rows[-1].effect.ci.level,
        interval=f"bootstrap interval (resampling {unit})",
        test=f"sign-flip test beside it (raw p; flipping the sign of each {res.unit}'s difference)",
    )


def _few_units(comp: Comparison) -> list[str]:
    """A note naming the rows whose interval rests on 5 or fewer units or clusters: no
    bootstrap interval of a mean can hold the true mean 95% of the time there."""
    few = [
        f"{row.label} (k = {row.effect.ci.n_clusters})" for row in comp.rows if _few(row.effect.ci)
    ]
    if not few:
        return []
    return [
        "",
        f"Intervals from 5 or fewer units or clusters: {', '.join(few)}. No bootstrap interval "
        "of a mean can hold the true mean at the stated level there: it lies within the k "
        "units' (clusters') range, which misses the mean of a continuous symmetric law with "
        "chance 2^(1−k) — coverage at most .94 at k = 5, .88 at 4, .75 at 3, .50 at 2 (with "
        "ties the mean can sit on an end of the range, and measured coverage can be higher); "
        "read them as the spread of these units, not as 95% intervals.",
    ]


def _reproduction(comp: Comparison) -> list[str]:
    """ER and ΔRI of the rows that have an original (reference run or printed means)."""
    rows = [r for r in comp.rows if r.reproduction is not None]
    if not rows:
        return []
    first = rows[0].reproduction
    assert first is not None

    def value(x: float | None, ci: Any, fmt: Any = fmt_number) -> str:
        if x is None:
            return "—"
        return fmt(x) + ("" if ci is None else f" {fmt_interval(ci.low, ci.high)}")

    out = [
        "",
        f"Reproduction against the original ({first.origin}; Breuer et al. 2020 as repro_eval "
        "computes them): ER = our mean Δ / the original's (1: the same improvement); ΔRI = "
        "the original's relative improvement over its baseline minus ours (0: the same). "
        + (
            "Intervals: percentile bootstrap of this run only (printed values carry no "
            "sampling error we can resample)."
            if first.origin == "paper values"
            else "Intervals: percentile bootstrap resampling both runs' units."
        ),
        "",
        "| row | our Δ | original Δ | ER [CI] | our RI | original RI | ΔRI [CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        m = r.reproduction
        assert m is not None
        out.append(
            f"| {r.label} | {fmt_signed(m.improvement)} | {fmt_signed(m.improvement_original)} "
            f"| {value(m.effect_ratio, m.effect_ratio_ci)} | {fmt_signed(m.relative)} "
            f"| {fmt_signed(m.relative_original)} "
            f"| {value(m.delta_ri, m.delta_ri_ci, fmt_signed)} |"
        )
    return out


#: How a bootstrap interval's `method` reads in a caption.
_INTERVAL_NAMES = {
    "bca": "BCa",
    "percentile": "percentile",
    "expanded-bca": "expanded BCa",
    "expanded-percentile": "expanded percentile",
}


def _interval_name(method: str) -> str:
    return _INTERVAL_NAMES.get(method, method)


#: The measured coverage the preamble quotes (benchmarks/results-ci_coverage.md; a test reads
#: them off that table, so a re-run that moves them fails until this follows).
COVERAGE_FIGURES = {
    "normal": ".86–.92",
    "normal expanded": ".94–.96",
    "lognormal expanded": ".84–.89",
    "zero-inflated expanded": ".87–.94",
    "clustered 5 expanded": ".91–.97",
    "clustered 10 expanded": ".94–.96",
}


def _expansion_note(res: AnalysisResult) -> str:
    """Why the intervals are expanded (once, in the preamble; nothing when they are not)."""
    if not res.comparisons[0].rows[-1].effect.ci.method.startswith("expanded-"):
        return ""
    f = COVERAGE_FIGURES
    return (
        " (expanded: the quantiles are read at the level whose normal quantile is "
        "sqrt(k/(k−1))·t(k−1), k the units or clusters resampled — Hesterberg 2015 — since the "
        "textbook interval of a mean from few units is too narrow: normal samples of 6 and 10 "
        f"covered {f['normal']} of the time at 95%, expanded {f['normal expanded']}; queries "
        f"in 5 and 10 conversations, expanded, {f['clustered 5 expanded']} and "
        f"{f['clustered 10 expanded']}; skewed or tie-heavy samples of 6–20 fall short of "
        f".95, some lines below .90, among them lognormal {f['lognormal expanded']} and half "
        f"ties {f['zero-inflated expanded']}; "
        "docs/validation.md, “The printed interval as a procedure”)"
    )


def _clustered(rows: Iterable[Row]) -> bool:
    """Whether any of `rows`' intervals resamples whole episodes (fewer clusters than units)."""
    return any(r.effect.ci.n_clusters < r.effect.ci.n for r in rows)


def _ci_caption(res: AnalysisResult) -> str:
    first = res.comparisons[0].rows[-1].effect.ci
    clustered = _clustered(r for c in res.comparisons for r in c.rows)
    cis = [r.effect.ci for c in res.comparisons for r in c.rows]
    exact = sum(ci.exact for ci in cis)
    every = "every distinct resample, enumerated (10 or fewer units or clusters)"
    if not exact:
        how = f"{res.bootstrap_resamples:,} resamples"
    elif exact == len(cis):
        how = every
    else:
        how = f"{res.bootstrap_resamples:,} resamples; {every} for {exact} of the {len(cis)} rows"
    return (
        f"{first.level:.0%} {_interval_name(first.method)} bootstrap intervals"
        + (" (resampling episodes: clusters of queries)" if clustered else "")
        + f", {how}"
    )


def render_analysis(res: AnalysisResult, figures: dict[Any, str] | None) -> str:
    """The markdown report of an :class:`osustat.analysis_result.AnalysisResult`.

    `figures` maps a comparison heading to its forest plot's base name, and ``('budgets',
    metric)`` to the budget plot's base name (each written as ``.svg`` and ``.png``); None
    for a report shown without files, an empty map for a saved one whose records allow no
    figure (the report says why).
    """
    shown = figures or {}
    out = _head(
        res,
        f"Cell-conditional analysis: {res.treatment} vs {res.baseline}",
        f"Treatment `{res.treatment}` vs baseline `{res.baseline}`",
        "",
        res.family_sentence(),
        res.methods_not_compared,
    )
    out += _sections(res, shown, "##")
    out += _budget_figures(res, shown, "##")
    out += _no_figures(figures, "##")
    out += res.provenance.markdown()
    return "\n".join(out)


def _no_figures(figures: dict[Any, str] | None, level: str) -> list[str]:
    """Why a saved report has no figure (none where the report is shown without files)."""
    if figures is None or figures:
        return []
    return [
        f"{level} Figures",
        "",
        "None drawn: a forest plot needs cells (an evidence file, or a `cell` column in the "
        "records) and an effect-by-budget plot one metric at two or more budgets or depths "
        "(a measure named with its depth, `ap@10` and `ap@100`, is a metric per depth); these "
        "records have neither.",
        "",
    ]


def render_multi_analysis(res: MultiAnalysisResult, figures: dict[Any, str] | None) -> str:
    """The markdown report of several method pairs: the family over all of them, a summary
    of Δ and corrected p per pair, then each pair's tables (as :func:`render_analysis`).

    `figures` maps ``(pair index, key)`` to base names, `key` as in :func:`render_analysis`
    (None or empty: as there).
    """
    names = ", ".join(f"{t} vs {b}" for t, b in res.pairs)
    out = _head(
        res.first,
        f"Cell-conditional analysis of {len(res.pairs)} method pairs",
        f"Method pairs (treatment vs baseline): {names}",
        " Each pair's raw numbers equal its analysis alone with the same seed.",
        res.family_sentence(),
        res.methods_not_compared,
    )
    out += [
        "## Summary: Δ (marks on the corrected p) and corrected p, per pair (raw p for "
        "aggregate rows outside every family)",
        "",
    ]
    out += _summary(res)
    out.append("")
    for k, pair in enumerate(res.results):
        mine = {key: name for (q, key), name in (figures or {}).items() if q == k}
        out += [f"## {pair.treatment} vs {pair.baseline}", ""]
        out += _sections(pair, mine, "###")
        out += _budget_figures(pair, mine, "###")
    out += _no_figures(figures, "##")
    out += res.provenance.markdown()
    return "\n".join(out)


def _head(
    res: AnalysisResult,
    title: str,
    who: str,
    after: str,
    family: str,
    not_compared: tuple[str, ...],
) -> list[str]:
    """Title, input notes, who is compared on which unit, the family and the legend."""
    out = [f"# {title}", ""]
    out += [f"- {n}" for n in res.input_notes]
    out += [
        f"- {who}; unit of analysis: {res.unit}; seeds averaged per unit: "
        f"{res.comparisons[0].result.paired.n_seeds}"
        + (f"; benchmark `{res.benchmark}`" if res.benchmark not in (None, "default") else "")
        + f".{after}",
        family,
    ]
    if res.provenance.exclusions:  # the reading's note says what reading dropped, not this
        out.append(
            "- Excluded, by reason (each listed under Provenance, “Excluded”): "
            + "; ".join(f"{count} {reason}" for reason, count in res.provenance.exclusions)
            + "."
        )
    if not_compared:
        out.append(
            f"- Not compared: {len(not_compared)} method(s) of the records "
            f"({', '.join(map(repr, not_compared))}) are in no pair; name them as treatment or "
            "baseline, or pass --all-pairs (all_pairs=True)."
        )
    return out + _method_lines(res)


def _summary(res: MultiAnalysisResult) -> list[str]:
    heads = [f"{t} − {b}" for t, b in res.pairs]
    lines = [
        "| comparison | cell | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    first = res.first
    for c, comp in enumerate(first.comparisons):
        for i, row in enumerate(comp.rows):
            cells = []
            for pair in res.results:
                r = pair.comparisons[c].rows[i]
                shown = r.pvalue_adjusted if r.pvalue_adjusted is not None else r.pvalue
                mark = _sig(shown, r.verdict)
                cells.append(f"{fmt_signed(r.effect.effect)}{mark} ({fmt_p(shown)})")
            lines.append(f"| {comp.heading} | {row.label} | " + " | ".join(cells) + " |")
    return lines


def _level_said(correction: str) -> str:
    """The MDE's level in a corrected family, named for `correction` (its strictest step)."""
    name = level_name(correction)
    if correction == "fdr_by":
        return f"{name} (Benjamini–Yekutieli's first threshold, H_m = 1 + 1/2 + … + 1/m)"
    if name != "α/m":
        return f"{name} 1 − (1 − α)^(1/m) (its first step)"
    return (
        "α/m (Bonferroni's level, Holm's first step: conservative for the step-down, BH and "
        "Westfall–Young corrections)"
    )


def _method_lines(res: AnalysisResult) -> list[str]:
    """The MDE, seed and test/interval/mark legend lines shared by every analysis report: one
    bullet per idea (a reader looks up one column's rule, not a paragraph)."""
    m = MDE_MIN_DIFFERENCES
    return [
        "- MDE: the smallest true Δ that the test each row runs detects with power .80, at "
        f"{_level_said(res.correction)} inside a corrected family of m tests, "
        f"α = {res.alpha:g} otherwise, computed from the row's differences by the method "
        "named beside it:",
        "  - 0/1 differences: exact binomial (P(Δ ≠ 0) held at its observed share);",
        "  - other differences: the test run on 2,000 data sets resampled from them (fixed "
        "seed), shifted (their spread scaled by the bootstrap's estimate of how far a "
        "sample's sd falls below its law's);",
        "  - count ratios (recall over a few items): exponentially tilted from their own null "
        "(the units' pairs of values tilted back to mean difference 0, then made symmetric by "
        "swapping, its spread raised by what a pilot of that size falls short in the median); "
        "the effect tilts the treatment's values, each unit's baseline kept beside its "
        "treatment value, or the differences where that tilt cannot reach the row's own mean, "
        "said in the row;",
        "  - the power at the MDE is checked on data sets drawn at it; "
        f"“{UNDERPOWERED}” where no Δ reaches power .80 at that n.",
        "- MDE not one number: the row prints “MDE not estimable from n = … differences” with "
        "the range the sd (or P(Δ ≠ 0)) allows over its 80% interval, where the row has",
        f"  - fewer than {m} differences (or fewer than {m} nonzero ones of several sizes: "
        "they alone carry the spread) — no upper end where ties held at that interval's lower "
        f"end cap the power below .80 (a tie cannot vote), and “{UNDERPOWERED}” where they "
        "cap it even at its upper end and cannot move;",
        "  - differences not normal-shaped, for the resampled (shifted) model only — 0/1 rows "
        "and tilted count ratios are not checked for shape (Shapiro–Wilk p < .05, unless 20 "
        "or more nonzero ones are significantly platykurtic: a skewed or heavy-tailed "
        "sample's sd is far below its law's in most samples);",
        "  - its own share of pairs that differ capping the power;",
        "  - every difference 0 (the two methods tied on every unit): “MDE not estimable: the "
        "two methods tied on all n units”, nothing showing how an effect would spread;",
        f"  - a count-ratio null (its differences tilted) resting on fewer than {m} effective "
        "differences, or a treatment's largest effect, read off the few units where the "
        "treatment is largest, falling short.",
        "- MDE, measured limit (docs/validation.md, “The printed MDE as a procedure”): a "
        "heavy-tailed or skewed sample that passes the shape check has mostly missed its law's "
        "rare large values, so the number it prints is optimistic (differences drawn from a t "
        "law with 3 df, 20 or 50 per row: median true power .70–.71 at the printed MDE, not "
        ".80; .67–.70 at a cell's α/4 = .0125); read an MDE of such data (latencies, token "
        "counts) as a lower bound.",
        "- MDE, the effect it models: every unit moved alike (docs/validation.md, “An effect "
        "carried by some units”). An effect carried by some units only — one kind of query "
        "within the cell — needs more: differences showing no effect, the effect on a random "
        "half of 20 or 50 units: median true power .67–.73 at the printed MDE; on a quarter "
        "of 50 units .62; on a quarter of 20 no effect reaches power .80, yet 95% of rows "
        "print a number (at α = .05; at a cell's α/4 = .0125 lower still: half of 50 units "
        ".68). Rows whose differences carry such an effect print an MDE that holds "
        "(.78–.80).",
        f"- Master seed {res.seed}: the same seed and inputs give the same report; each "
        "(metric, budget) draws from its own random stream, named by them, so its rows are "
        "the same whichever other metrics and budgets are analysed with it.",
        "",
        "Legend of the tables:",
        "",
        f"- Paired sign-flip tests: exact (binomial for 0/1 differences, or full enumeration "
        f"when 2^n ≤ {res.resamples:,}, n the nonzero differences) or Monte Carlo with "
        f"{res.resamples:,} random sign vectors, named per row with the Monte Carlo standard "
        "error of p.",
        f"- Intervals: {_ci_caption(res)}{_expansion_note(res)}."
        + (
            " Column “episodes (CI's clusters)”: the k episodes each row's interval resamples."
            if _clustered(r for c in res.comparisons for r in c.rows)
            else ""
        ),
        "- Significance marks (column sig., on the corrected p; raw p for rows outside a "
        "family; also on the interaction p): . ≤ .10, * ≤ .05, ** ≤ .01, *** ≤ .001 (the "
        "verdicts' p ≤ α rule); ? where the verdict is undecided at its Monte Carlo "
        "precision (which side of α the p falls on is resampling noise).",
        "- f·Δ: each cell's contribution to the aggregate (they sum to the aggregate Δ).",
        "- W/T/L: units where the treatment scores above / equal to / below the baseline; "
        "d_z: mean Δ / SD of the differences (Cohen's d for paired samples, n/a when every "
        "difference is equal); CLES: (W + T/2) / n, P(treatment above baseline) + ½ "
        "P(tie) on a unit drawn at random.",
        *_interaction_legend(res),
        *_break_even_legend(res),
        "",
    ]


#: The studentized interaction test's measured type-I error at .05 the legend quotes
#: (benchmarks/results-interaction_type1.md; a test reads them off that table).
INTERACTION_FIGURES = {
    "symmetric": ".0445–.0635",
    "skewed tau-bench": ".0745",
    "skewed small cell": ".0945",
    "asymmetric binary": ".0830",
}


def _interaction_legend(res: AnalysisResult) -> list[str]:
    """What the interaction line's p can be trusted for, where one is printed: its measured
    type-I error, above the level with skewed or asymmetric 0/1 differences in small cells."""
    methods = {c.result.interaction.method for c in res.comparisons if c.result.interaction}
    if "studentized-signflip" not in methods:
        return []
    f = INTERACTION_FIGURES
    return [
        "- Method × cell interaction (studentized sign-flip: does Δ differ across the cells?): "
        f"measured type-I error at α = .05 {f['symmetric']} with symmetric differences, but "
        f"{f['skewed tau-bench']} with skewed ones at τ-bench's cell sizes, "
        f"{f['skewed small cell']} with a skewed 5-unit cell and {f['asymmetric binary']} with "
        "asymmetric 0/1 differences (docs/statistics.md): read a p near .05 with cells under "
        "~50 units and skewed or asymmetric 0/1 differences as weaker evidence."
    ]


def _break_even_legend(res: AnalysisResult) -> list[str]:
    """What the break-even line's symbols mean (nothing when no table has one)."""
    if not any(c.result.break_even is not None for c in res.comparisons):
        return []
    return [
        "- Break-even (the paper's Appendix I): p* is the share of T+E+ units at which the "
        "aggregate Δ would be 0 with the other cells keeping their relative shares, "
        "−Δ_rest / (Δ_T+E+ − Δ_rest); π_T+* and π_any+* the shares of units with a T+ label "
        "and with any + label at that point; p* = 0%† when the other cells do not lose (any "
        "share gives an aggregate ≥ 0). Its band is a stratified percentile bootstrap "
        "(cells resampled apart, not expanded for small n); a band of [0%, 100%] says these "
        "data do not locate p*."
    ]


def _budget_figures(res: AnalysisResult, figures: dict[Any, str], level: str) -> list[str]:
    """The closing section with each metric's effect-by-budget figure (if any)."""
    out: list[str] = []
    closing = [(m, figures[("budgets", m)]) for m in _metrics(res) if ("budgets", m) in figures]
    if closing:
        axis = "depth" if res.budget_kind == "depth" else "budget"
        out += [f"{level} Effects across {axis}s", ""]
        for metric, name in closing:
            out += [
                f"![Effect on {metric} by {axis}]({name}.png)",
                "",
                f"*Figure: Δ {metric} (per cell and aggregate) against the {res.budget_axis}, with "
                f"{_ci_caption(res)}. Vector version: [{name}.svg]({name}.svg).*",
                "",
            ]
    return out


def _sections(res: AnalysisResult, figures: dict[Any, str], level: str) -> list[str]:
    """One section per (metric, budget) comparison: its table, notes and forest plot."""
    out: list[str] = []
    for comp in res.comparisons:
        r = comp.result
        out += [f"{level} {comp.heading}", ""]
        out += _table(res, comp)
        out += _agreement(res, comp)
        out += _few_units(comp)
        out += _reproduction(comp)
        out.append("")
        if r.excluded_cells:
            listed = ", ".join(f"{c.value} (n = {k})" for c, k in r.excluded_cells.items())
            out.append(
                f"- Left out of the per-cell rows, the interaction test and the break-even "
                f"(fewer than 2 {r.paired.unit} units): {listed}. They remain in the "
                "aggregate, so the f·Δ column sums to the aggregate minus their share, and "
                "the oracle ceiling routes them too."
            )
        if r.interaction is not None:
            it = r.interaction
            mark = _sig(it.pvalue)
            out.append(
                f"- Method × cell interaction ({it.method}, {it.n_resamples:,} resamples): "
                f"statistic {it.statistic:.3f}, {p_phrase(it.pvalue)}"
                + (f" ({mark})" if mark else "")
                + "."
            )
        if r.break_even is not None:
            be = r.break_even
            if be.never_negative:
                out.append(
                    "- Break-even: the non-favorable mixture's effect is ≥ 0, so any "
                    "T+E+ share gives a non-negative aggregate (p* = 0%†)."
                )
            elif be.never_positive:
                out.append("- Break-even: no T+E+ share makes the aggregate positive.")
            else:
                band = ""
                if be.ci is not None and be.pi_tool_ci is not None and be.level is not None:
                    band = (
                        f" ({be.level:.0%} bootstrap band for p*: [{be.ci[0]:.1%}, "
                        f"{be.ci[1]:.1%}]; π_T+ [{be.pi_tool_ci[0]:.1%}, "
                        f"{be.pi_tool_ci[1]:.1%}])"
                    )
                out.append(
                    f"- Break-even (Appendix I family): p* = {be.p_star:.1%} T+E+, "
                    f"π_T+* = {be.pi_tool:.1%}, π_any+* = {be.pi_any:.1%}{band}."
                )
        if r.oracle is not None:
            o = r.oracle
            routed = ", ".join(c.value for c in o.routed_cells) or "none"
            out.append(
                f"- Oracle ceiling, **{o.label}**: routing {routed} to the treatment gives "
                f"{fmt_signed(o.gain_over_baseline)} over the baseline and "
                f"{fmt_signed(o.gain_over_treatment)} over the treatment (aggregate Δ "
                f"{fmt_signed(o.aggregate)})."
            )
        name = figures.get(comp.heading)
        if name:
            out += [
                "",
                f"![Per-cell effects, {comp.heading}]({name}.png)",
                "",
                f"*Figure: Δ per cell with {_ci_caption(res)}; aggregate in black"
                + (
                    "; hollow points: intervals from 5 or fewer units or clusters (k, no 95%)"
                    if any(_few(r.effect.ci) for r in comp.rows)
                    else ""
                )
                + f". Vector version: [{name}.svg]({name}.svg).*",
            ]
        out.append("")
    return out


def _metrics(res: AnalysisResult) -> list[str]:
    return list(dict.fromkeys(c.metric for c in res.comparisons))


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "" for ch in text.replace("@", ""))


def write_figures(res: AnalysisResult, folder: Path, *, stem: str = "") -> dict[Any, str]:
    """Write the forest plots (one per comparison with cells) and budget plots (one per
    metric with two or more budgets) as SVG + PNG into `folder`; return the name map for
    :func:`render_analysis`. `stem` starts every file name (one per method pair)."""
    names: dict[Any, str] = {}
    prefix = {"depth": "-depth", "answers": ""}.get(res.budget_kind, "-B")
    for comp in res.comparisons:
        if comp.result.cells:
            at = f"{prefix}{comp.budget}" if prefix else ""  # answers: no budget to name
            name = f"{stem}forest-{_slug(comp.metric)}{at}"
            forest_plot(
                comp.result,
                folder / f"{name}.png",
                title=f"{res.treatment} − {res.baseline}, {comp.heading}",
            )
            names[comp.heading] = name
    for metric in _metrics(res):
        chosen = [c.result for c in res.comparisons if c.metric == metric]
        if len(chosen) >= 2:
            name = f"{stem}{'depths' if res.budget_kind == 'depth' else 'budgets'}-{_slug(metric)}"
            budget_effects_plot(
                chosen,
                metric,
                folder / f"{name}.png",
                title=f"{res.treatment} − {res.baseline}, {metric}",
                xlabel=res.budget_axis,
            )
            names[("budgets", metric)] = name
    return names


def write_multi_figures(res: MultiAnalysisResult, folder: Path) -> dict[Any, str]:
    """Each pair's figures (:func:`write_figures`), file names starting with the pair;
    keys ``(pair index, key)`` for :func:`render_multi_analysis`."""
    names: dict[Any, str] = {}
    for k, pair in enumerate(res.results):
        stem = f"{_slug(pair.treatment)}-vs-{_slug(pair.baseline)}-"
        for key, name in write_figures(pair, folder, stem=stem).items():
            names[(k, key)] = name
    return names


def budget_effects_plot(
    results: list[CellConditionalResult],
    metric: str,
    path: Path,
    *,
    title: str,
    xlabel: str = "token budget B",
) -> Path:
    """Per-cell effect against the budget (or depth) with bootstrap intervals (the paper's
    Table 5 as a figure): PNG (6.4 x 3.6 in at 150 dpi) and SVG beside it. Needs results
    for at least two budgets."""
    plt = pyplot()
    chosen = sorted(
        (r for r in results if r.paired.metric == metric), key=lambda r: r.paired.budget
    )
    if len({r.paired.budget for r in chosen}) < 2:
        raise ValueError(f"a budget plot needs at least two budgets for {metric!r}.")
    # at the PNG's resolution: the layout pass and the PNG share one renderer
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=DPI)
    labels = [_label(row) for row in (*chosen[0].cells, chosen[0].aggregate)]
    for k, label in enumerate(labels):
        xs, ys, lo, hi = [], [], [], []
        for r in chosen:
            for row in (*r.cells, r.aggregate):
                if _label(row) == label:
                    xs.append(r.paired.budget * (1 + 0.03 * (k - len(labels) / 2)))
                    ys.append(row.effect)
                    lo.append(row.effect - row.ci.low)
                    hi.append(row.ci.high - row.effect)
        bold = label == "Aggregate"
        ax.errorbar(
            xs,
            ys,
            yerr=[lo, hi],
            marker="o",
            capsize=3,
            label=label,
            color="black" if bold else None,
            lw=2 if bold else 1.5,
        )
    ax.axhline(0, color="grey", lw=0.8, ls="--")
    budgets = [r.paired.budget for r in chosen]
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [str(b) for b in budgets])
    ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"Δ {metric} (treatment − baseline)")
    ax.set_title(title, fontsize=10)
    # outside the axes, so the legend never hides an interval
    ax.legend(
        fontsize=8, title="cell", title_fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5)
    )
    fig.tight_layout()
    if not ax.yaxis.get_offset_text().get_text():
        # Fixed where matplotlib's automatic placement put it (the axes' top: nothing above
        # it but a y-axis offset text such as "1e-5"), so no drawing re-measures the y labels.
        ax.set_title(title, fontsize=10, y=1.0)
    return save_figure(fig, Path(path).with_suffix(".png"), svg=True)


def _label(row: Any) -> str:
    return "Aggregate" if row.cell is None else row.cell.value


def forest_plot(res: CellConditionalResult, path: Path, *, title: str) -> Path:
    """Per-cell effects with their bootstrap intervals: PNG (6.4 x 3.2 in at 150 dpi) and
    SVG beside it."""
    return save_figure(forest_figure(res, title=title), Path(path).with_suffix(".png"), svg=True)


def _few(ci: Any) -> bool:
    """An interval resting on 5 or fewer units or clusters (see :func:`_few_units`)."""
    return bool(ci.n_clusters <= 5)


def _row_label(r: Any) -> str:
    """A forest row's label: its cell, n, and k where whole clusters were resampled."""
    k = f", k={r.ci.n_clusters}" if r.ci.n_clusters < r.n else ""
    return f"{_label(r)} (n={r.n}{k})"


def forest_figure(res: CellConditionalResult, *, title: str) -> Any:
    """The figure :func:`forest_plot` writes: one point per cell (blue) and the aggregate
    (black, bottom row) at its Δ, with its interval as error bar, labelled ``cell (n=…)``
    (``, k=…`` where whole episodes were resampled), hollow where the interval rests on 5 or
    fewer units or clusters.

    Drawn at the PNG's resolution, so the layout pass and the PNG share one renderer (and
    its text measurements); the cells are one error-bar artist, the aggregate another.
    """
    plt = pyplot()
    rows = [*res.cells, res.aggregate]
    fig, ax = plt.subplots(figsize=(6.4, 3.2), dpi=DPI)
    ys = list(range(len(rows)))[::-1]
    for group, color in ((slice(0, -1), "tab:blue"), (slice(-1, None), "black")):
        chosen, at = rows[group], ys[group]
        if not chosen:
            continue
        ax.errorbar(
            [r.effect for r in chosen],
            at,
            xerr=[[r.effect - r.ci.low for r in chosen], [r.ci.high - r.effect for r in chosen]],
            fmt="o",
            color=color,
            capsize=3,
        )
        few = [(r.effect, y) for r, y in zip(chosen, at, strict=True) if _few(r.ci)]
        if few:  # no bootstrap interval reaches 95% from so few (the report names them)
            ax.plot(*zip(*few, strict=True), "o", color=color, markerfacecolor="white", zorder=3)
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(ys, [_row_label(r) for r in rows])
    level = res.aggregate.ci.level
    ax.set_xlabel(
        f"Δ {res.paired.metric} (treatment − baseline), {level:.0%} "
        f"{_interval_name(res.aggregate.ci.method)} CI"
    )
    # At the axes' top, where matplotlib's automatic placement puts it too (the y axis has
    # text labels, so no offset text can push it up), without re-measuring the y axis's
    # labels in every drawing.
    ax.set_title(title, fontsize=10, y=1.0)
    fig.tight_layout()
    return fig
