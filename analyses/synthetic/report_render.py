"""The synthetic benchmark's report: markdown tables beside the paper's, and figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osustat import stars
from osustat.formatting import fmt_p, fmt_signed
from osustat.reports._style import pyplot, save_figure

from .paper_values import PAPER as SYNTHETIC

__all__ = ["budget_curves", "near_far_figure", "render_synthetic"]

CURVE_METHODS = (
    "Flat Vector",
    "Flat + MMR",
    "Coverage-Aware",
    "Disjoint Hierarchy",
    "Tree Abstraction",
    "Budget-Truncated Replay",
    "OSU-Mem",
    "OSU-Mem (disjoint)",
)


def _paper_budget(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (method, budget rows) with Table 9's printed Hit@2 and Recall beside ours."""
    printed = [
        SYNTHETIC["table9"][m][b] for m, b in zip(frame["method"], frame["budget"], strict=True)
    ]
    return frame.assign(
        **{"paper_hit@2": [h for h, _ in printed], "paper_recall": [r for _, r in printed]}
    )


def _paper_tests(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (metric, baseline rows) with Table 10's printed Δ and p ("n/a" if none)."""
    printed = [
        SYNTHETIC["table10"].get((m, b), (np.nan, "n/a"))
        for m, b in zip(frame["metric"], frame["baseline"], strict=True)
    ]
    return frame.assign(paper_delta=[d for d, _ in printed], paper_p=[p for _, p in printed])


def _setting(value: Any) -> str:
    """A generator setting as the grid's TOML writes it (``true``, not Python's ``True``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _num(x: Any) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "n/a"
    if isinstance(x, float) and not float(x).is_integer():
        return f"{x:.3f}"
    return str(int(x)) if isinstance(x, float) else str(x)


def _budget_table(frame: pd.DataFrame, key: str, header: str, *, with_paper: bool) -> list[str]:
    """Rows of Hit@2 and Recall at every budget, one line per `key` (paper values in
    parentheses when `with_paper`)."""
    lines = [
        f"| {header} | "
        + " | ".join(f"B={b} Hit@2 | B={b} Recall" for b in (64, 128, 256, 512))
        + " |",
        "|---|" + "---|" * 8,
    ]
    for name, grp in frame.groupby(key, sort=False):
        cells = []
        for _, r in grp.iterrows():
            for metric, paper in (("hit@2", "paper_hit@2"), ("recall", "paper_recall")):
                cells.append(
                    f"{r[metric]:.3f} ({r[paper]:.3f})" if with_paper else f"{r[metric]:.3f}"
                )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


RECENCY_METHODS = ("Budget-Truncated Replay", "Sliding Window")


def _layout_check(table9: pd.DataFrame) -> list[str]:
    """Table 9's recency rows, ours beside the paper's, and their mean absolute difference."""
    rows = table9[table9["method"].isin(RECENCY_METHODS)]
    diffs = np.abs(
        np.concatenate(
            [
                (rows["hit@2"] - rows["paper_hit@2"]).to_numpy(),
                (rows["recall"] - rows["paper_recall"]).to_numpy(),
            ]
        )
    )
    out = _budget_table(rows, "method", "Method", with_paper=True)
    out += [
        "",
        f"Mean absolute difference over these 16 numbers: {float(np.mean(diffs)):.4f}. These "
        "two methods see only recency, so the rows say where evidence sits relative to the "
        "query; the default layout's spacing and query gap were chosen to match them "
        "(benchmarks/synthetic_layout_calibration.py), never by a score of a compared method.",
    ]
    return out


def _p_is(p: Any) -> str:
    """``= .047`` or ``< .001`` (fmt_p's bound keeps its own sign)."""
    text = fmt_p(p)
    return text if text.startswith(("<", ">")) else f"= {text}"


def _summary(a: Any, n_episodes: int, config: dict[str, Any] | None, robust: bool) -> list[str]:
    """The report's opening: what was run, the headline with unit and n, the open choices."""
    n_queries = int(a.structure.set_index("statistic").loc["queries", "ours"])
    out = [
        "## Summary",
        "",
        f"**What was run.** {n_episodes} generated episodes ({n_queries:,} queries), every "
        "method of the paper's Table 9 at every budget, the ablations of Section 6.4 and the "
        "M_max sweep; paired sign-flip tests at the episode level (Table 10).",
        "",
        "**Headline findings** (OSU-Mem − each retrieval baseline at B = 256, unit = episode, "
        f"n = {a.n_episodes_tested} episodes, Holm over {len(a.table10)} tests):",
        "",
    ]
    for _, r in a.table10.iterrows():
        if r["baseline"] in ("Flat Vector", "Flat + MMR"):
            out.append(
                f"- {r['metric']}, {r['comparison']}: Δ = {fmt_signed(r['delta'], 4)}, "
                f"p {_p_is(r['p'])}, Holm p {_p_is(r['p_holm'])}."
            )
    out += [
        "- Every comparison, the budgets and the claims audit follow below (Table 10; the audit "
        "closes the report).",
        "",
        "**Open choices these depend on.** The generator's: the evidence layout "
        + (f"(`layout={config['layout']}` here)" if config and "layout" in config else "")
        + " and every setting the paper leaves open (configuration below; "
        "`analyses/synthetic/generator.py`). "
        + (
            "The sensitivity grid's verdict per claim is in 'Which claims are robust to the "
            "generator'."
            if robust
            else "`--sensitivity` reruns every claim over the generator grid (robust / "
            "choice-dependent)."
        ),
        "",
    ]
    return out


def render_synthetic(
    analysis: Any,
    *,
    n_episodes: int,
    seed: int,
    figures: dict[str, str],
    command: str,
    config: dict[str, Any] | None = None,
    robustness: pd.DataFrame | None = None,
) -> str:
    """Markdown report of a synthetic run (see ``analyses.synthetic.analysis``).

    `config` is the generator configuration (printed); `robustness` the sensitivity grid's
    per-claim summary (``analyses.synthetic.sensitivity``), if it was run.
    """
    a = analysis
    out = [
        "# Synthetic benchmark: reproduction of the paper's Sections 6.1 and 6.4",
        "",
        f"Command: `{command}` (master seed {seed}, {n_episodes} episodes). The same seed "
        "gives byte-identical records whatever `--jobs` or `--scheduler`, and the same "
        "command line a byte-identical report (this line names the options as given).",
        "",
        "Generator: `analyses/synthetic/generator.py` documents every choice the paper leaves "
        "open. "
        "The paper's numbers are printed beside ours; nothing was tuned to match them.",
        "",
    ]
    out += _summary(a, n_episodes, config, robustness is not None)
    if config is not None:
        out += [
            "Generator configuration: "
            + ", ".join(f"`{k}={_setting(v)}`" for k, v in config.items())
            + ".",
            "",
        ]
    out += ["## Layout check: the recency rows of Table 9", ""]
    out += _layout_check(_paper_budget(a.table9))
    out.append("")

    out += _structure_section(a)
    out += _table9_section(a, figures)
    out += _table10_section(a)
    out += _near_far_section(a, figures)
    out += _ablation_section(a, figures)
    out += _claims_section(a, robustness)
    out.append("")
    return "\n".join(out)


def _structure_section(a: Any) -> list[str]:
    """Structural statistics of the generated data beside the paper's."""
    out = [
        "## Structural statistics of the generated data",
        "",
        "| statistic | ours | paper |",
        "|---|---|---|",
    ]
    for _, r in a.structure.iterrows():
        paper = SYNTHETIC["structure"].get(r["statistic"])
        out.append(f"| {r['statistic']} | {_num(r['ours'])} | {_num(paper)} |")
    out.append("")
    return out


def _table9_section(a: Any, figures: dict[str, str]) -> list[str]:
    """Table 9 (Hit@2 and Recall at every budget) and the budget curves."""
    out = [
        "## Table 9: Hit@2 and Recall at every budget",
        "",
        "Query-level means over all queries (unit: query; n = "
        f"{int(a.structure.set_index('statistic').loc['queries', 'ours'])}). "
        "Hit@2 = at least 2 evidence steps retrieved. Paper values in parentheses.",
        "",
    ]
    out += _budget_table(_paper_budget(a.table9), "method", "Method", with_paper=True)
    if "OSU-Mem + GF" in set(a.table9["method"]):
        out += [
            "",
            "OSU-Mem + GF (oracle OSU selection) is far above OSU-Mem here, while the paper has "
            "them equal: the cause is the coarse stage, measured by `benchmarks/gf_routing.py` "
            "(200 episodes, seed 0, B = 256, 2026-12-04): it keeps K = 8 of about 79 OSUs, and "
            "ranked by centroid cosine the kept OSUs hold ≥ 2 evidence steps for 32% of the "
            "queries, ranked by evidence (GF) for all; expansion retrieves only what the kept "
            "OSUs hold. On this generator routing is OSU-Mem's bottleneck; in the paper it was "
            "not (benchmarks/results-gf_routing.md).",
        ]
    out += ["", f"![Budget curves]({figures['budget_curves']})", ""]
    out += [_figure_scope(a.table9["method"], "Table 9"), ""]
    return out


def _table10_section(a: Any) -> list[str]:
    """Table 10: OSU-Mem vs each baseline at B = 256, and how its p's relate to the audit's."""
    out = [
        "## Table 10: paired sign-flip tests at B = 256 (episode level)",
        "",
        f"OSU-Mem vs each retrieval baseline; per-episode means, n = {a.n_episodes_tested} "
        f"episodes; {a.n_resamples:,} resamples; Holm over the {len(a.table10)} tests. "
        "Marks (sig.) on the Holm-corrected p.",
        "",
        "The claims audit at the end of this report tests the same comparisons again, so the "
        "same comparison shows two raw p's and two corrected ones. Raw p: each side draws its "
        f"own {a.n_resamples:,} Monte Carlo sign vectors from its own random stream (this "
        "table: one per comparison; the audit: one per claim), so the two agree within Monte "
        f"Carlo error (standard error √(p(1−p)/{a.n_resamples:,}), ≈ .002 at p ≈ .05), not "
        f"digit for digit. Corrected p: here Holm over these {len(a.table10)} tests; the "
        "audit's strict p is Holm over its family `table10` (these tests plus Table 10's two "
        "no-novelty rows as equivalence claims), so it is larger. Both are right for their "
        "family; this table's is the one for the question it asks.",
        "",
        "| Metric | Comparison | Δ | p (2-sided) | p Holm | sig. | n | paper Δ | paper p |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in _paper_tests(a.table10).iterrows():
        out.append(
            f"| {r['metric']} | {r['comparison']} | {fmt_signed(r['delta'], 4)} | "
            f"{fmt_p(r['p'])} | {fmt_p(r['p_holm'])} | {stars(r['p_holm'])} | {r['n']} | "
            f"{fmt_signed(r['paper_delta'], 4)} | {r['paper_p']} |"
        )
    out.append("")
    return out


def _near_far_section(a: Any, figures: dict[str, str]) -> list[str]:
    """Near vs far evidence recall (Figure 2) at B = 256."""
    out = [
        "## Near vs far evidence (Figure 2), B = 256",
        "",
        "Recall over evidence within 50 steps of the query time (near) and beyond (far); "
        "unit: query, n = queries with evidence in that range.",
        "",
        "| Method | near recall | n | far recall | n |",
        "|---|---|---|---|---|",
    ]
    nf = a.near_far.pivot(index="method", columns="metric", values=["mean", "size"])
    for method in [m for m in a.table9["method"].unique() if m in nf.index]:
        r = nf.loc[method]
        out.append(
            f"| {method} | {r[('mean', 'recall_near')]:.3f} | "
            f"{int(r[('size', 'recall_near')])} | {r[('mean', 'recall_far')]:.3f} | "
            f"{int(r[('size', 'recall_far')])} |"
        )
    out += [
        "",
        "Paper (Figure 2): OSU-Mem near .196, far .218.",
        "",
        f"![Near and far recall]({figures['near_far']})",
        "",
        _figure_scope(
            [m for m in a.table9["method"].unique() if m in set(a.near_far["method"])],
            "the table above",
        ),
        "",
    ]
    return out


def _ablation_section(a: Any, figures: dict[str, str]) -> list[str]:
    """Section 6.4's ablations, their tests, the M_max sweep and the membership."""
    out = [
        "## Ablations (Section 6.4)",
        "",
    ]
    out += _budget_table(_paper_budget(a.ablation), "method", "Variant", with_paper=True)
    out += [
        "",
        "OSU-Mem + GF is an **oracle** (it sees the evidence when choosing OSUs).",
        "",
        "Paired sign-flip tests at B = 256, episode level (Holm over these tests):",
        "",
        "| Metric | Comparison | Δ | p | p Holm | sig. | n | paper Δ | paper p |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in _paper_tests(a.ablation_tests).iterrows():
        out.append(
            f"| {r['metric']} | {r['comparison']} | {fmt_signed(r['delta'], 4)} | "
            f"{fmt_p(r['p'])} | {fmt_p(r['p_holm'])} | {stars(r['p_holm'])} | {r['n']} | "
            f"{fmt_signed(r['paper_delta'], 4)} | {r['paper_p']} |"
        )
    out += [
        "",
        "M_max sweep (1 = disjoint, 5 = default):",
        "",
    ]
    out += _budget_table(a.mmax, "m_max", "M_max", with_paper=False)
    out += ["", f"![M_max sweep]({figures['mmax']})"]
    if not a.membership.empty:
        out += [
            "",
            "Evidence-OSU membership (mean over queries of the per-query mean):",
            "",
            "| construction | OSUs per evidence step | evidence in no OSU |",
            "|---|---|---|",
        ]
        for _, r in a.membership.iterrows():
            out.append(
                f"| {r['construction']} | {r['mean_osus_per_evidence']:.2f} | "
                f"{r['fraction_evidence_in_no_osu']:.1%} |"
            )
    return out


def _claims_section(a: Any, robustness: pd.DataFrame | None) -> list[str]:
    """The claims of Sections 6.1 and 6.4 and their robustness to the generator."""
    from .report_sensitivity import robustness_lines

    out = [
        "",
        "## Claims of Sections 6.1 and 6.4",
        "",
        "| Claim | Paper | Ours | Verdict |",
        "|---|---|---|---|",
    ]
    for c in a.claims:
        out.append(f"| {c.claim} | {c.paper} | {c.ours} | **{c.verdict}** |")
    out += ["", "## Which claims are robust to the generator", ""]
    if robustness is None:
        out.append(
            "The generator sensitivity grid was not run with this report (add `--sensitivity`); "
            "the verdicts above are for this one generator configuration only."
        )
    else:
        out += [
            "From the sensitivity grid (`sensitivity/report.md`): a claim is robust only if it "
            "holds at every grid point after Holm over the points.",
            "",
        ]
        out += robustness_lines(robustness)
    return out


def _drawn(methods: Any) -> tuple[list[str], list[str]]:
    """(drawn, left out): the figures draw :data:`CURVE_METHODS` of the methods present."""
    present = list(dict.fromkeys(str(m) for m in methods))
    drawn = [m for m in CURVE_METHODS if m in present]
    return drawn, [m for m in present if m not in CURVE_METHODS]


def _figure_scope(methods: Any, table: str) -> str:
    """The caption line that names what the figure leaves out (and where those methods are)."""
    drawn, left = _drawn(methods)
    said = f"*The figure draws {len(drawn)} of {len(drawn) + len(left)} methods"
    if not left:
        return said + ".*"
    return f"{said}; left out (their numbers are in {table}): {', '.join(left)}.*"


def budget_curves(table9: pd.DataFrame, path: Path) -> Path:
    """Hit@2 and Recall against the budget for :data:`CURVE_METHODS` (PNG, 10 x 4 in,
    100 dpi); its title says how many of the run's methods it draws."""
    plt = pyplot()
    drawn, left = _drawn(table9["method"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    for ax, metric in zip(axes, ("hit@2", "recall"), strict=True):
        for method in drawn:
            g = table9[table9["method"] == method]
            style = "-" if method.startswith("OSU") else "--"
            ax.plot(g["budget"], g[metric], style, marker="o", label=method)
        ax.set_xscale("log", base=2)
        ax.set_xticks([64, 128, 256, 512], ["64", "128", "256", "512"])
        ax.set_xlabel("token budget B")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="upper left")
    scope = f" — {len(drawn)} of {len(drawn) + len(left)} methods" if left else ""
    fig.suptitle(f"Synthetic benchmark: metric vs budget (query level){scope}", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def near_far_figure(near_far: pd.DataFrame, path: Path) -> Path:
    """Near vs far recall at B = 256 (PNG, 8 x 4 in, 100 dpi)."""
    plt = pyplot()
    methods = [m for m in CURVE_METHODS if m in set(near_far["method"])]
    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    width = 0.4
    for k, (metric, label) in enumerate(
        (("recall_near", "near (≤50 steps)"), ("recall_far", "far (>50 steps)"))
    ):
        vals = [
            float(
                near_far[(near_far["method"] == m) & (near_far["metric"] == metric)]["mean"].iloc[0]
            )
            for m in methods
        ]
        ax.bar([i + (k - 0.5) * width for i in range(len(methods))], vals, width, label=label)
    ax.set_xticks(range(len(methods)), methods, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("recall at B = 256")
    ax.legend()
    ax.set_title("Near vs far evidence recall (Figure 2)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
