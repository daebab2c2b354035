"""The LoCoMo report (markdown) and figures, in the τ-bench report's vocabulary: cells, forest
plot, budget curves; the paper's τ-bench values beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osustat.analyses.tau_bench.paper_values import PAPER as TAU
from osustat.formatting import fmt_interval
from osustat.formatting import fmt_p as _p
from osustat.formatting import fmt_signed as _s
from osustat.reports._style import IntervalTest, interval_test_notes
from osustat.reports._style import md_table as _table
from osustat.reports.budget_tables import breakeven_by_budget, effect_by_budget, means_by_budget

from .analysis import CELL_ORDER, LocomoAnalysis
from .data import CATEGORY_NAMES

__all__ = ["render", "write_figures"]


_COMP_WORDS = {
    "osu_flat_hit": "OSU-Mem − Flat Vector, Hit@2",
    "osu_flat_recall": "OSU-Mem − Flat Vector, Recall",
    "overlap_disjoint_hit": "overlap − disjoint (OSU-Mem − OSU-Mem (disjoint)), Hit@2",
    "overlap_disjoint_recall": "overlap − disjoint, Recall",
}
#: the τ-bench Table 4 column of each comparison (None: the paper prints none)
_PAPER_COL = {"osu_flat_hit": 1, "osu_flat_recall": 2, "overlap_disjoint_hit": 3}


#: The columns every comparison row shows at its two units (query and conversation).
_TWO_UNITS = ["Δ query", "95% cluster CI", "p query", "Δ conv", "p conv", "conversations"]


def _two_units(r: Any) -> list[Any]:
    """A row's cells under :data:`_TWO_UNITS`."""
    return [
        _s(r["effect"]),
        fmt_interval(r["ci_low"], r["ci_high"]),
        _p(r["p"]),
        _s(r["conv_effect"]),
        _p(r["conv_p"]),
        r["conv_n"],
    ]


def _agreement(rows: list[dict[str, Any]]) -> list[str]:
    """Sentences for the rows whose conversation-bootstrap interval and query-level sign-flip
    p disagree about 0 (the τ-bench report's notes, :func:`~osustat.reports._style.
    interval_test_notes`)."""
    if not rows:
        return []
    return interval_test_notes(
        (
            IntervalTest(r["cell"], (r["ci_low"], r["ci_high"]), r["p"], r["test_ci"], r["min_p"])
            for r in rows
        ),
        level=rows[0]["level"],
        interval="bootstrap interval (resampling whole conversations)",
        test="sign-flip test of the per-query differences",
    )


def _data_section(st: dict[str, Any]) -> list[str]:
    w = ["## Data and queries", ""]
    w.append(
        f"{st['conversations']} conversations, {st['sessions']} sessions, {st['turns']} turns "
        f"(mean token cost {st['mean_turn_cost']:.1f}), {st['questions']} questions. "
        f"**{st['queries']} queries**: category 1–4 questions with ≥ 2 distinct resolving "
        "evidence turns, the question embedded verbatim."
    )
    w.append("")
    w += _table(
        ["excluded because", "questions"],
        [[k, v] for k, v in sorted(st["excluded_by_reason"].items())],
    )
    w.append("")
    w.append(
        "Category 5 (adversarial) is excluded from the analysis: "
        f"{st['category5_with_2plus_evidence']} "
        "of its questions have ≥ 2 resolving evidence turns and would otherwise qualify."
    )
    w.append("")
    rep, unr = st["repaired_evidence"], st["unresolved_evidence"]
    w.append(f"Evidence ids parsed (unambiguous repairs): {len(rep)}; unresolved: {len(unr)}.")
    w.append("")
    if rep or unr:
        rows = [
            [
                r["sample_id"],
                r["qa"],
                r["category"],
                f"`{r['evidence']}`",
                "read as " + ", ".join(r["read_as"]),
            ]
            for r in rep
        ]
        rows += [
            [
                r["sample_id"],
                r["qa"],
                r["category"],
                f"`{r['evidence']}`",
                f"unresolved: {r['reason']}",
            ]
            for r in unr
        ]
        w += _table(["conversation", "qa", "cat", "evidence string", "outcome"], rows)
        w.append("")
    w.append(
        "Queries per conversation: "
        + ", ".join(f"{k} {v}" for k, v in st["queries_per_conversation"].items())
        + "."
    )
    w.append("")
    return w


def _cells_section(st: dict[str, Any]) -> list[str]:
    n = st["queries"] or 1
    w = ["## Cells and view marginals (Definition 2; Appendix C style)", ""]
    w.append(
        "T = the session view (two evidence turns in one session), E = the entity view (two "
        "evidence turns share a named entity). Speaker sharing is a marginal."
    )
    w.append("")
    paper = TAU["table4"]
    w += _table(
        ["cell", "n", "share", "τ-bench n (share)"],
        [
            [
                c,
                st["cells"].get(c, 0),
                f"{st['cells'].get(c, 0) / n:.1%}",
                f"{paper[c][0]} ({paper[c][0] / 328:.1%})",
            ]
            for c in CELL_ORDER
        ],
    )
    w.append("")
    m = st["marginals"]
    if m:
        rows = []
        for view in ("session", "speaker", "entity"):
            v = m[view]
            cats = ", ".join(f"{c}: {x:.0%}" for c, x in v["by_category_any"].items())
            rows.append(
                [view, f"{v['mean']:.1%}", f"{v['median']:.1%}", f"{v['any_sharing']:.1%}", cats]
            )
        w += _table(
            [
                "view",
                "mean pairwise sharing",
                "median",
                "queries with any sharing",
                "any sharing by category",
            ],
            rows,
        )
        w.append("")
        w.append(
            f"Mean evidence turns per query {m['mean_evidence']:.2f}; mean "
            "evidence-to-query distance "
            f"{m['mean_distance']:.0f} turns. Turns with at least one entity: "
            f"{st['turns_with_entity']} of {st['turns']}."
        )
        w.append("")
    mem = pd.DataFrame(st.get("membership", []))
    if not mem.empty:
        g = mem.groupby("_membership")[
            ["mean_osus_per_evidence", "fraction_evidence_in_no_osu"]
        ].mean()
        w.append(
            "Evidence-OSU membership (mean over conversations; Section 6.1): "
            + "; ".join(
                f"{k}: {r['mean_osus_per_evidence']:.2f} OSUs per evidence turn, "
                f"{r['fraction_evidence_in_no_osu']:.1%} in no OSU"
                for k, r in g.iterrows()
            )
            + "."
        )
        w.append("")
    return w


def _crosstab_section(a: LocomoAnalysis) -> list[str]:
    w = [f"## Cross-tab at B = {a.primary} (Table 4 layout)", ""]
    w.append(
        "Query level: sign-flip on per-query differences, 95% bootstrap CI resampling whole "
        "conversations. Conversation level: the methods' values averaged within each "
        "conversation (within the cell), exact sign-flip over the conversation means "
        "(2^m patterns for m conversations; with all 10 the smallest two-sided p is "
        "2/1024 ≈ .002). τ-bench: the paper's Table 4 at its B = 256."
    )
    w.append("")
    for key, rows in a.crosstab.items():
        w.append(f"### {_COMP_WORDS[key]}")
        w.append("")
        col = _PAPER_COL.get(key)
        body = []
        for r in rows:
            paper = TAU["table4"].get(r["cell"])
            body.append(
                [
                    r["cell"],
                    r["n"],
                    f"{r['treatment_mean']:.3f} / {r['baseline_mean']:.3f}",
                    *_two_units(r)[:-1],
                    f"{r['conv_n']} (floor {_p(r['conv_p_floor'])})",
                    "—" if col is None or paper is None else _s(paper[col]),
                ]
            )
        w += _table(["cell", "n", "means", *_TWO_UNITS, "τ-bench Δ"], body)
        w += _agreement(rows)
        w += _unit_flips(rows)
        w.append("")
    return w


def _unit_flips(rows: list[dict[str, Any]]) -> list[str]:
    """Where the query-level and conversation-level Δ differ in sign, say why, from the data:
    the query level weights each conversation by its queries in the cell, the conversation
    level weights every conversation equally."""
    out = []
    for r in rows:
        q, c, wts = r["effect"], r["conv_effect"], r.get("conv_weights") or {}
        # opposite signs beyond rounding (a mean of exact zeros can come out as -1e-17)
        if not wts or not np.isfinite(c) or round(q, 9) * round(c, 9) >= 0:
            continue
        out.append(
            f"- {r['cell']}: Δ {_s(q)} per query but {_s(c)} per conversation — not a "
            "contradiction: the query level weights each conversation by its queries in this "
            f"cell ({wts['q_min']}–{wts['q_max']} per conversation), the conversation level "
            f"weights all {r['conv_n']} equally; `{wts['top_conversation']}` alone holds "
            f"{wts['top_share']:.0%} of the queries, with Δ {_s(wts['top_effect'])}."
        )
    return ["", *out] if out else []


def _budget_section(a: LocomoAnalysis) -> list[str]:
    w = ["## Effect by budget (Table 5 layout)", ""]
    for key in ("osu_flat_hit", "overlap_disjoint_hit"):
        sub = a.by_budget[a.by_budget["comparison"] == key] if len(a.by_budget) else a.by_budget
        if sub.empty:
            continue
        w.append(f"### {_COMP_WORDS[key]}")
        w.append("")
        w += effect_by_budget(
            sub,
            cluster="conversation",
            cluster_p="conv_p",
            paper=TAU["table5"] if key == "osu_flat_hit" else None,
            paper_header="τ-bench B=64, 128, 256, 512",
        )
        w.append("")
    it = a.interaction
    ct = a.clustered_contrast
    w.append("### Method × cell interaction")
    w.append("")
    w.append(
        "Query level: the core's interaction test over the four cells (studentized sign-flip). "
        "Conversation level: per conversation, mean Δ in T+E+ minus mean Δ in T−E− "
        "(conversations with both cells), exact sign-flip over conversations."
    )
    w.append("")
    rows = []
    for _, r in it.iterrows():
        c = ct[(ct["comparison"] == r["comparison"]) & (ct["budget"] == r["budget"])]
        rows.append(
            [
                _COMP_WORDS[r["comparison"]],
                r["budget"],
                _p(r["p"]),
                _s(c["effect"].iloc[0]) if len(c) else "—",
                _p(c["p"].iloc[0]) if len(c) else "—",
                int(c["n_conversations"].iloc[0]) if len(c) else 0,
            ]
        )
    w += _table(
        [
            "comparison",
            "B",
            "p interaction (query)",
            "T+E+ − T−E− (conv)",
            "p (conv)",
            "conversations",
        ],
        rows,
    )
    w.append("")
    w.append("τ-bench (paper, Hit@2): p = .308 / .081 / .002 / .558 at B = 64/128/256/512.")
    w.append("")
    return w


def _breakeven_section(a: LocomoAnalysis) -> list[str]:
    w = ["## Break-even and oracle ceiling (Appendix I)", ""]
    w += breakeven_by_budget(
        a.breakeven,
        level=0.95,
        cluster="conversation",
        baseline="Flat Vector",
        label=lambda r: _COMP_WORDS[r["comparison"]],
    )
    w.append("")
    w.append(
        "π_T+*: the break-even share of T+ queries, T being the session view here. The "
        "oracle gain is in-sample (each cell routed to its better method on these same "
        "queries): a ceiling, not a method."
    )
    w.append("")
    return w


def _category_section(a: LocomoAnalysis) -> list[str]:
    w = [f"## By question category (B = {a.primary})", ""]
    w.append(
        "Category names as the repository's evaluation code implies them (README): "
        + ", ".join(f"{k} = {v}" for k, v in CATEGORY_NAMES.items() if k != 5)
        + "."
    )
    w.append("")
    rows = [
        [
            int(r["category"]),
            CATEGORY_NAMES[int(r["category"])],
            _COMP_WORDS[r["comparison"]],
            r["n"],
            *_two_units(r),
        ]
        for _, r in a.by_category.iterrows()
    ]
    w += _table(["cat", "name", "comparison", "n", *_TWO_UNITS], rows)
    w.append("")
    return w


def _means_section(a: LocomoAnalysis, structure: dict[str, Any] | None = None) -> list[str]:
    w = ["## Methods by budget (query-level means; conversation-level in parentheses)", ""]
    w += means_by_budget(a.means, "conversation")
    w.append("")
    most = int((structure or {}).get("sessions_max", 0))
    full = sorted(int(b) for b in set(a.means["budget"]) if most and max(8, int(b) // 30) >= most)
    if full and "Disjoint Hierarchy" in set(a.means["method"]):
        w.append(
            f"Disjoint Hierarchy equals Flat Vector at B = {', '.join(map(str, full))}, by "
            "construction, not by a bug: its partitions are the sessions (at most "
            f"{most} per conversation) and its coarse stage keeps K = min(P, max(8, P/10, "
            f"B/30)) of them; max(8, B/30) ≥ {most} keeps every session, so it ranks all past "
            "turns by cosine and packs them, as Flat Vector does (`retrieval/baselines.py`)."
        )
        w.append("")
    return w


def _transfer_section(a: LocomoAnalysis, transfer: list[dict[str, Any]]) -> list[str]:
    w = ["## Does the paper's claim transfer?", ""]
    w.append(
        f"The paper's central claims, on LoCoMo at B = {a.primary} (matched to τ-bench's B = 256). "
        "**Verdict unit: the conversation** (exact sign-flip over conversation means, α = .05): "
        "the questions of one conversation share its haystack, so they are not independent. "
        "The query columns are the claims audit's (`analyses/locomo/claims.toml`, judged by "
        "`osustat audit`'s machinery at the unit each claim names, the query; 'as tested': "
        "the claim's own test, for the interaction the paper's centered sign-flip statistic), "
        "in full in the audit section below. 'query level only' means significant at the "
        "query unit (the paper's unit) but not at the conversation unit."
    )
    w.append("")
    rows = []
    for r in transfer:
        audit = r.get("audit", "—")
        rows.append(
            [
                _COMP_WORDS[r["comparison"]],
                r["claim"],
                r.get("n", "—"),
                _s(r.get("effect")),
                _p(r.get("p_query")),
                audit if r.get("audit_id") is None else f"{audit} (`{r['audit_id']}`)",
                _s(r.get("conv_effect")),
                _p(r.get("p_conv")),
                r.get("conv_n", "—"),
                f"**{r['verdict']}**",
            ]
        )
    w += _table(
        [
            "comparison",
            "claim",
            "n",
            "Δ query",
            "p query",
            "audit (query unit, as tested)",
            "Δ conv",
            "p conv",
            "conversations",
            "verdict (conversation unit)",
        ],
        rows,
    )
    w.append("")
    return w


def _sensitivity_section(a: LocomoAnalysis, skipped: list[str]) -> list[str]:
    if a.sensitivity.empty and not skipped:
        return []
    w = [f"## Sensitivity to the open choices (B = {a.primary}, Hit@2)", ""]
    w.append(
        "Each row changes one choice from its default (choices.toml); OSU-Mem, "
        "OSU-Mem (disjoint) and Flat Vector only."
    )
    w.append("")
    rows = []
    groups = (
        a.sensitivity.groupby(["variant", "comparison"], sort=False) if len(a.sensitivity) else []
    )
    for (variant, key), g in groups:
        cells = {r["cell"]: r for _, r in g.iterrows()}
        line: list[Any] = [variant, _COMP_WORDS[key]]
        for c in (*CELL_ORDER, "Aggregate"):
            r = cells.get(c)
            line.append(
                "—"
                if r is None
                else f"{_s(r['effect'])} (n={r['n']}, p={_p(r['p'])}; conv {_p(r['conv_p'])})"
            )
        line.append(_p(g["interaction_p"].iloc[0]))
        rows.append(line)
    w += _table(["variant", "comparison", *CELL_ORDER, "Aggregate", "p interaction"], rows)
    w.append("")
    for label in skipped:
        w.append(f"Not run: {label} (the audit overlay audit/errors.json is not beside the data).")
        w.append("")
    return w


def render(
    a: LocomoAnalysis,
    structure: dict[str, Any],
    choices: Any,
    *,
    transfer: list[dict[str, Any]],
    audit: str | None = None,
    skipped: list[str] | None = None,
) -> str:
    """The report's markdown: `transfer` the rows of :func:`~.analysis.transfer_verdicts`,
    `audit` the claims audit's markdown (the driver appends the choices of the run and the
    provenance)."""
    w = ["# LoCoMo: the cell-conditional analysis on long conversations with natural queries", ""]
    w.append(
        "Data: LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0, snap-research/locomo), "
        "audit overlay by dial481/locomo-audit (CC BY-NC 4.0). Mapping of views and every "
        f"choice: docs/locomo.md; the choices are declared in `{choices.source}`."
    )
    w.append("")
    w.append(
        "Choices of this run: "
        + ", ".join(f"{k} = `{v}`" for k, v in structure["choices"].items())
        + "."
    )
    w.append("")
    for part in (
        _data_section(structure),
        _cells_section(structure),
        _transfer_section(a, transfer),
        _crosstab_section(a),
        _budget_section(a),
        _breakeven_section(a),
        _category_section(a),
        _means_section(a, structure),
        _sensitivity_section(a, skipped or []),
    ):
        w += part
    if audit:
        for line in audit.splitlines():  # demote the audit's headings one level
            w.append("#" + line if line.startswith("#") else line)
    w.append("")
    w.append(
        "Figures: forest.png (cells at the primary budget), budget_effects_hit.png, "
        "budget_curves.png."
    )
    return "\n".join(w).rstrip() + "\n"


def write_figures(a: LocomoAnalysis, out: Path) -> None:
    from osustat.reports.cellwise import budget_effects_plot, forest_plot

    if a.forest is not None:
        forest_plot(
            a.forest,
            out / "forest.png",
            title=f"LoCoMo B={a.primary}: OSU-Mem − Flat Vector Hit@2 (cells: session × entity)",
        )
    if len({r.paired.budget for r in a.budget_results}) >= 2:
        budget_effects_plot(
            list(a.budget_results),
            "hit@2",
            out / "budget_effects_hit.png",
            title="LoCoMo: OSU-Mem − Flat Vector, Hit@2 (cells: session × entity)",
        )
    m = a.means
    if m["budget"].nunique() >= 2:
        from osustat.reports.figures import budget_curves

        budget_curves(
            m,
            "conversation",
            "LoCoMo: metric vs budget (Figure 3 layout)",
            out / "budget_curves.png",
        )
