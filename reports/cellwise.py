"""Markdown and figures for cell-conditional analyses (the paper's Table 4 layout)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from osustat import stars
from osustat.cellwise import CellConditionalResult, CellEffect, verdict

__all__ = ["budget_effects_plot", "forest_plot", "render_markdown", "to_dataframe", "to_json"]


def _fmt(x: float, digits: int = 3) -> str:
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    if math.isnan(x):
        return "n/a"
    return f"{x:+.{digits}f}"


def _p(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}"


def _label(row: CellEffect) -> str:
    return "Aggregate" if row.cell is None else row.cell.value


def _table(res: CellConditionalResult, adjusted: dict[int, float], alpha: float) -> list[str]:
    unit = {"query": "queries", "episode": "episodes"}[res.paired.unit]
    level = int(res.aggregate.ci.level * 100)
    lines = [
        f"| Cell | n ({unit}) | share | treatment | baseline | Δ | {level}% CI (bootstrap) "
        "| p raw | p corrected | f·Δ | MDE | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in (*res.cells, res.aggregate):
        p_adj = adjusted.get(id(row), row.test.pvalue)
        lines.append(
            f"| {_label(row)} | {row.n} | {row.fraction:.1%} | {row.treatment_mean:.3f} | "
            f"{row.baseline_mean:.3f} | {_fmt(row.effect)} | [{_fmt(row.ci.low)}, "
            f"{_fmt(row.ci.high)}] | {_p(row.test.pvalue)} | {_p(p_adj)}{stars(p_adj)} | "
            f"{_fmt(row.contribution)} | {row.mde:.3f} | "
            f"{verdict(p_adj, row.effect, row.mde, alpha=alpha)} |"
        )
    return lines


def render_markdown(
    results: Sequence[tuple[str, CellConditionalResult]],
    adjusted: dict[int, float],
    *,
    title: str,
    preamble: Sequence[str] = (),
    correction: str = "holm",
    alpha: float = 0.05,
    figures: dict[str, str] | None = None,
    closing_figures: Sequence[tuple[str, str]] = (),
) -> str:
    """Render cell-conditional results as a markdown report.

    Parameters
    ----------
    results : sequence of (heading, CellConditionalResult)
    adjusted : dict
        Corrected p-value per :class:`~osustat.cellwise.CellEffect`, keyed by ``id(row)``.
    title : str
    preamble : sequence of str
        Lines printed under the title (inputs, exclusions, seeds).
    correction, alpha : str, float
        Named in the text.
    figures : dict, optional
        heading -> relative path of a PNG to link under that section.
    """
    out = [f"# {title}", "", *preamble, ""]
    out += [
        f"Paired sign-flip tests ({results[0][1].n_resamples:,} resamples; exact when "
        "enumeration is cheap or the metric is 0/1). Stars on the corrected p "
        f"({correction}, α = {alpha}): . <.10, * <.05, ** <.01, *** <.001. "
        "f·Δ is each cell's contribution to the aggregate (they sum to the aggregate Δ).",
        "",
    ]
    for heading, res in results:
        out += [f"## {heading}", ""]
        out += _table(res, adjusted, alpha)
        out.append("")
        if res.excluded_cells:
            listed = ", ".join(f"{c.value} (n={k})" for c, k in res.excluded_cells.items())
            out.append(
                f"- Left out of the per-cell rows, the interaction test and the break-even "
                f"(fewer than 2 {res.paired.unit} units): {listed}. They remain in the "
                "aggregate, so the f·Δ column sums to the aggregate minus their share."
            )
        if res.interaction is not None:
            it = res.interaction
            out.append(
                f"- Method × cell interaction ({it.method}, {it.n_resamples:,} resamples): "
                f"statistic {it.statistic:.3f}, p = {_p(it.pvalue)}{stars(it.pvalue)}."
            )
        if res.break_even is not None:
            be = res.break_even
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
        if res.oracle is not None:
            o = res.oracle
            routed = ", ".join(c.value for c in o.routed_cells) or "none"
            out.append(
                f"- Oracle ceiling, **{o.label}**: routing {routed} to the treatment gives "
                f"{_fmt(o.gain_over_baseline)} over the baseline and "
                f"{_fmt(o.gain_over_treatment)} over the treatment (aggregate Δ "
                f"{_fmt(o.aggregate)})."
            )
        if figures and heading in figures:
            out += ["", f"![Per-cell effects, {heading}]({figures[heading]})"]
        out.append("")
    if closing_figures:
        out += ["## Effects across budgets", ""]
        for caption, name in closing_figures:
            out += [f"![{caption}]({name})", ""]
    return "\n".join(out)


def to_json(
    results: Sequence[tuple[str, CellConditionalResult]], adjusted: dict[int, float]
) -> list[dict[str, Any]]:
    """The same numbers as the markdown, as plain JSON-serializable dicts."""
    payload = []
    for heading, res in results:
        rows = []
        for row in (*res.cells, res.aggregate):
            rows.append(
                {
                    "cell": _label(row),
                    "n": row.n,
                    "fraction": row.fraction,
                    "treatment_mean": row.treatment_mean,
                    "baseline_mean": row.baseline_mean,
                    "effect": row.effect,
                    "ci": [row.ci.low, row.ci.high],
                    "ci_level": row.ci.level,
                    "pvalue": row.test.pvalue,
                    "pvalue_adjusted": adjusted.get(id(row)),
                    "pvalue_method": row.test.method,
                    "contribution": row.contribution,
                    "mde": row.mde,
                }
            )
        item: dict[str, Any] = {
            "comparison": heading,
            "unit": res.paired.unit,
            "metric": res.paired.metric,
            "budget": res.paired.budget,
            "rows": rows,
        }
        if res.interaction is not None:
            item["interaction"] = {
                "method": res.interaction.method,
                "statistic": res.interaction.statistic,
                "pvalue": res.interaction.pvalue,
            }
        if res.break_even is not None:
            be = res.break_even
            item["break_even"] = {
                "p_star": be.p_star,
                "pi_tool": be.pi_tool,
                "pi_any": be.pi_any,
                "never_negative": be.never_negative,
                "never_positive": be.never_positive,
                "p_star_ci": be.ci,
            }
        if res.oracle is not None:
            o = res.oracle
            item["oracle_ceiling"] = {
                "label": o.label,
                "gain_over_baseline": o.gain_over_baseline,
                "gain_over_treatment": o.gain_over_treatment,
                "routed_cells": [c.value for c in o.routed_cells],
            }
        payload.append(item)
    return payload


def to_dataframe(
    results: Sequence[tuple[str, CellConditionalResult]], adjusted: dict[int, float]
) -> Any:
    """The same rows as the markdown tables, one per (comparison, cell), as a DataFrame."""
    import pandas as pd

    rows = []
    for item in to_json(results, adjusted):
        for row in item["rows"]:
            flat = {k: v for k, v in row.items() if k != "ci"}
            flat.update(ci_low=row["ci"][0], ci_high=row["ci"][1])
            rows.append(
                {
                    "comparison": item["comparison"],
                    "unit": item["unit"],
                    "metric": item["metric"],
                    "budget": item["budget"],
                    **flat,
                }
            )
    return pd.DataFrame(rows)


def budget_effects_plot(
    results: Sequence[tuple[str, CellConditionalResult]], metric: str, path: Path, *, title: str
) -> Path:
    """Per-cell effect against the budget with bootstrap intervals (the paper's Table 5 as a
    figure; PNG, 6.4 x 3.6 in at 100 dpi). Needs results for at least two budgets."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chosen = sorted(
        (r for _, r in results if r.paired.metric == metric), key=lambda r: r.paired.budget
    )
    if len({r.paired.budget for r in chosen}) < 2:
        raise ValueError(f"a budget plot needs at least two budgets for {metric!r}.")
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
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
    ax.set_xlabel("token budget B")
    ax.set_ylabel(f"Δ {metric} (treatment − baseline)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path


def forest_plot(res: CellConditionalResult, path: Path, *, title: str) -> Path:
    """Per-cell effects with their bootstrap intervals (PNG, 6.4 x 3.2 in at 100 dpi)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [*res.cells, res.aggregate]
    fig, ax = plt.subplots(figsize=(6.4, 3.2), dpi=100)
    ys = list(range(len(rows)))[::-1]
    for y, row in zip(ys, rows, strict=True):
        color = "black" if row.cell is None else "tab:blue"
        ax.errorbar(
            row.effect,
            y,
            xerr=[[row.effect - row.ci.low], [row.ci.high - row.effect]],
            fmt="o",
            color=color,
            capsize=3,
        )
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(ys, [f"{_label(r)} (n={r.n})" for r in rows])
    ax.set_xlabel(f"Δ {res.paired.metric} (treatment − baseline)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path
