"""LoCoMo statistics, all through the core: cross-tabs, interaction, break-even, by category.

Dependence: the questions of one conversation share its haystack, and there are 10
conversations. Every comparison is therefore shown at two units:

- **query**: ``osustat.cellwise.cell_conditional`` -- sign-flip on per-query differences,
  bootstrap intervals resampling whole conversations (``episode_id`` = conversation);
- **conversation**: each method's values averaged within a conversation (per cell: over that
  cell's questions of the conversation), then an exact sign-flip over the conversation means
  (2**10 = 1,024 sign patterns when all 10 conversations are present, so the smallest
  two-sided p is 2/1,024 ~ .002; fewer conversations, a larger floor).

The verdicts of the "does the claim transfer?" section use the conversation unit; the audit of
``analyses/claims/locomo.toml`` judges at the query unit, as the paper tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CELL_ORDER", "COMPARISONS", "LocomoAnalysis", "analyze", "conversation_level"]

OSU, FLAT, DISJ = "OSU-Mem", "Flat Vector", "OSU-Mem (disjoint)"
CELL_ORDER = ("T+E+", "T+E-", "T-E+", "T-E-")
#: key -> (treatment, baseline, metric)
COMPARISONS = {
    "osu_flat_hit": (OSU, FLAT, "hit@2"),
    "osu_flat_recall": (OSU, FLAT, "recall"),
    "overlap_disjoint_hit": (OSU, DISJ, "hit@2"),
    "overlap_disjoint_recall": (OSU, DISJ, "recall"),
}
BOOTSTRAP = 2000
ALPHA = 0.05


@dataclass(frozen=True)
class LocomoAnalysis:
    primary: int
    crosstab: dict[str, list[dict[str, Any]]]  # comparison -> rows (cells + aggregate)
    by_budget: pd.DataFrame  # comparison x budget x cell
    interaction: pd.DataFrame
    clustered_contrast: pd.DataFrame
    breakeven: pd.DataFrame
    by_category: pd.DataFrame
    means: pd.DataFrame
    sensitivity: pd.DataFrame
    transfer: list[dict[str, Any]]
    audit_markdown: str | None
    forest: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def _cc(records: pd.DataFrame, t: str, b: str, metric: str, budget: int, n: int, seed: int) -> Any:
    from osustat import paired
    from osustat.cellwise import cell_conditional

    p = paired(
        records.drop(columns="category", errors="ignore"), t, b, metric=metric, budget=budget
    )
    return cell_conditional(p, n_resamples=n, bootstrap_resamples=BOOTSTRAP, rng=seed)


def conversation_level(
    records: pd.DataFrame, t: str, b: str, metric: str, budget: int, n: int, seed: int
) -> dict[str, dict[str, float]]:
    """Per cell and ``'all'``: effect over conversation means, exact sign-flip p, #conversations."""
    from osustat import paired, signflip_tests

    out: dict[str, dict[str, float]] = {}
    sub = records[records["budget"] == budget].drop(columns="category", errors="ignore")
    for cell in (*CELL_ORDER, "all"):
        part = sub if cell == "all" else sub[sub["cell"] == cell]
        if part.empty or part["episode_id"].nunique() < 2:
            continue
        p = paired(part.drop(columns="cell"), t, b, metric=metric, budget=budget, unit="episode")
        d = np.asarray(p.differences, dtype=float)
        res = signflip_tests(d[:, None], n_resamples=max(n, 1024), rng=seed)[0]
        out[cell] = {
            "effect": float(d.mean()),
            "p": float(res.pvalue),
            "n_conversations": int(d.size),
            "exact": bool(res.exact),
            "p_floor": float(2.0 / 2 ** int(np.count_nonzero(d))) if np.count_nonzero(d) else 1.0,
        }
    return out


def _rows(res: Any, conv: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    rows = []
    for ce in (*res.cells, res.aggregate):
        key = "all" if ce.cell is None else ce.cell.value
        c = conv.get(key, {})
        rows.append(
            {
                "cell": "Aggregate" if ce.cell is None else ce.cell.value,
                "n": ce.n,
                "treatment_mean": ce.treatment_mean,
                "baseline_mean": ce.baseline_mean,
                "effect": ce.effect,
                "p": ce.test.pvalue,
                "ci_low": ce.ci.low,
                "ci_high": ce.ci.high,
                "clusters": ce.ci.n_clusters,
                "mde": float(ce.mde),
                "conv_effect": c.get("effect", np.nan),
                "conv_p": c.get("p", np.nan),
                "conv_n": c.get("n_conversations", 0),
                "conv_p_floor": c.get("p_floor", np.nan),
            }
        )
    return rows


def _contrast(
    records: pd.DataFrame, t: str, b: str, metric: str, budget: int, n: int, seed: int
) -> dict[str, Any]:
    """Conversation-clustered interaction contrast: per conversation, mean d in T+E+ minus
    mean d in T-E- (conversations with both cells), exact sign-flip over conversations."""
    from osustat import paired, signflip_tests

    p = paired(
        records.drop(columns="category", errors="ignore"), t, b, metric=metric, budget=budget
    )
    d = np.asarray(p.differences, dtype=float)
    df = pd.DataFrame(
        {"conv": np.asarray(p.episode_ids), "cell": [c.value for c in p.cells], "d": d}
    )
    m = df.groupby(["conv", "cell"])["d"].mean().unstack()
    if "T+E+" not in m or "T-E-" not in m:
        return {"effect": np.nan, "p": np.nan, "n_conversations": 0}
    c = (m["T+E+"] - m["T-E-"]).dropna().to_numpy()
    if c.size < 2:
        return {
            "effect": float(c.mean()) if c.size else np.nan,
            "p": np.nan,
            "n_conversations": int(c.size),
        }
    res = signflip_tests(c[:, None], n_resamples=max(n, 1024), rng=seed)[0]
    return {"effect": float(c.mean()), "p": float(res.pvalue), "n_conversations": int(c.size)}


def _means(records: pd.DataFrame) -> pd.DataFrame:
    """Query-level and conversation-level means of every method at every budget."""
    sub = records[records["metric"].isin(["hit@2", "recall"])]
    q = sub.groupby(["method", "budget", "metric"], sort=False)["value"].mean().rename("query")
    e = (
        sub.groupby(["method", "budget", "metric", "episode_id"], sort=False)["value"]
        .mean()
        .groupby(["method", "budget", "metric"], sort=False)
        .mean()
        .rename("conversation")
    )
    return pd.concat([q, e], axis=1).reset_index()


def _breakeven_row(key: str, budget: int, res: Any) -> dict[str, Any]:
    bh, oc = res.break_even, res.oracle
    return {
        "comparison": key,
        "budget": budget,
        "p_star": None if bh is None else bh.p_star,
        "p_star_ci": None if bh is None or bh.ci is None else (bh.ci.low, bh.ci.high),
        "pi_tool": None if bh is None else bh.pi_tool,
        "pi_any": None if bh is None else bh.pi_any,
        "never_negative": None if bh is None else bh.never_negative,
        "oracle_gain": None if oc is None else oc.gain_over_baseline,
        "aggregate": res.aggregate.effect,
    }


def _per_budget(
    records: pd.DataFrame, comps: dict[str, tuple[str, str, str]], primary: int, n: int, seed: int
) -> dict[str, Any]:
    """Every comparison at every budget: cell rows, interaction, clustered contrast, break-even."""
    out: dict[str, Any] = {"crosstab": {}, "forest": None}
    by_budget, inter, contrast, be = [], [], [], []
    for key, (t, b, metric) in comps.items():
        for budget in sorted(set(records["budget"])):
            res = _cc(records, t, b, metric, budget, n, seed)
            rows = _rows(res, conversation_level(records, t, b, metric, budget, n, seed))
            if budget == primary:
                out["crosstab"][key] = rows
                if key == "osu_flat_hit":
                    out["forest"] = res
            by_budget += [{"comparison": key, "budget": budget, **r} for r in rows]
            it = res.interaction
            inter.append(
                {
                    "comparison": key,
                    "budget": budget,
                    "p": None if it is None else it.pvalue,
                    "method": None if it is None else it.method,
                }
            )
            contrast.append(
                {
                    "comparison": key,
                    "budget": budget,
                    **_contrast(records, t, b, metric, budget, n, seed),
                }
            )
            if key in ("osu_flat_hit", "osu_flat_recall"):
                be.append(_breakeven_row(key, budget, res))
    out.update(by_budget=by_budget, interaction=inter, contrast=contrast, breakeven=be)
    return out


def _by_category(
    records: pd.DataFrame, comps: dict[str, tuple[str, str, str]], primary: int, n: int, seed: int
) -> list[dict[str, Any]]:
    rows = []
    for cat, part in records.groupby("category"):
        for key, (t, b, metric) in comps.items():
            if key.endswith("recall"):
                continue
            a = _cc(part, t, b, metric, primary, n, seed).aggregate
            conv = conversation_level(part, t, b, metric, primary, n, seed).get("all", {})
            rows.append(
                {
                    "category": int(cat),
                    "comparison": key,
                    "n": a.n,
                    "effect": a.effect,
                    "p": a.test.pvalue,
                    "ci_low": a.ci.low,
                    "ci_high": a.ci.high,
                    "conv_effect": conv.get("effect", np.nan),
                    "conv_p": conv.get("p", np.nan),
                    "conv_n": conv.get("n_conversations", 0),
                }
            )
    return rows


def _sensitivity(
    sensitivity: list[tuple[Any, pd.DataFrame, dict[str, Any]]], primary: int, n: int, seed: int
) -> list[dict[str, Any]]:
    rows = []
    for ch, rec, _ in sensitivity:
        for key in ("osu_flat_hit", "overlap_disjoint_hit"):
            t, b, metric = COMPARISONS[key]
            if not {t, b} <= set(rec["method"]):
                continue
            res = _cc(rec, t, b, metric, primary, n, seed)
            p_int = None if res.interaction is None else res.interaction.pvalue
            for r in _rows(res, conversation_level(rec, t, b, metric, primary, n, seed)):
                rows.append({"variant": ch.label(), "comparison": key, "interaction_p": p_int, **r})
    return rows


def analyze(
    records: pd.DataFrame,
    sensitivity: list[tuple[Any, pd.DataFrame, dict[str, Any]]],
    *,
    primary: int,
    n_resamples: int = 10_000,
    seed: int = 0,
    claims: str | Path | None = None,
) -> LocomoAnalysis:
    """Every table of the report, from the main run's `records` and the sensitivity reruns
    (``(choices, records, structure)`` each); `primary` is the budget of the cross-tab."""
    methods = set(records["method"])
    comps = {k: v for k, v in COMPARISONS.items() if v[0] in methods and v[1] in methods}
    pb = _per_budget(records, comps, primary, n_resamples, seed)
    ana = LocomoAnalysis(
        primary=primary,
        crosstab=pb["crosstab"],
        by_budget=pd.DataFrame(pb["by_budget"]),
        interaction=pd.DataFrame(pb["interaction"]),
        clustered_contrast=pd.DataFrame(pb["contrast"]),
        breakeven=pd.DataFrame(pb["breakeven"]),
        by_category=pd.DataFrame(_by_category(records, comps, primary, n_resamples, seed)),
        means=_means(records),
        sensitivity=pd.DataFrame(_sensitivity(sensitivity, primary, n_resamples, seed)),
        transfer=[],
        audit_markdown=audit_locomo_claims(records, claims, n_resamples=n_resamples, seed=seed),
        forest=pb["forest"],
    )
    return replace(ana, transfer=transfer_verdicts(ana))


def _verdict(p_conv: float, e_conv: float, p_query: float, e_query: float, sign: int) -> str:
    """Conversation unit first; the query unit only qualifies a non-verdict."""
    sig_conv = p_conv == p_conv and p_conv <= ALPHA
    if sig_conv and np.sign(e_conv) == sign:
        return "transfers"
    if sig_conv:
        return "reversed (significant, opposite sign)"
    if p_query == p_query and p_query <= ALPHA:
        same = np.sign(e_query) == sign
        return "query level only" if same else "reversed at the query level only"
    return "does not transfer at this n"


def transfer_verdicts(ana: LocomoAnalysis) -> list[dict[str, Any]]:
    """The paper's three central claims, judged on LoCoMo at the conversation unit (alpha .05),
    with the query-level result beside."""
    out = []
    for key in ("overlap_disjoint_hit", "osu_flat_hit"):
        rows = {r["cell"]: r for r in ana.crosstab.get(key, [])}
        for cell, sign, words in (("T+E+", 1, "helps in T+E+"), ("T-E-", -1, "hurts in T-E-")):
            r = rows.get(cell)
            if r is None:
                out.append(
                    {"comparison": key, "claim": words, "verdict": "not testable (cell empty)"}
                )
                continue
            out.append(
                {
                    "comparison": key,
                    "claim": words,
                    "n": r["n"],
                    "effect": r["effect"],
                    "p_query": r["p"],
                    "conv_effect": r["conv_effect"],
                    "p_conv": r["conv_p"],
                    "conv_n": r["conv_n"],
                    "p_floor": r["conv_p_floor"],
                    "verdict": _verdict(r["conv_p"], r["conv_effect"], r["p"], r["effect"], sign),
                }
            )
        it = ana.interaction[
            (ana.interaction["comparison"] == key) & (ana.interaction["budget"] == ana.primary)
        ]
        ct = ana.clustered_contrast[
            (ana.clustered_contrast["comparison"] == key)
            & (ana.clustered_contrast["budget"] == ana.primary)
        ]
        pq = float(it["p"].iloc[0]) if len(it) and it["p"].iloc[0] is not None else np.nan
        pc = float(ct["p"].iloc[0]) if len(ct) else np.nan
        ec = float(ct["effect"].iloc[0]) if len(ct) else np.nan
        out.append(
            {
                "comparison": key,
                "claim": "method x cell interaction",
                "p_query": pq,
                "conv_effect": ec,
                "p_conv": pc,
                "conv_n": int(ct["n_conversations"].iloc[0]) if len(ct) else 0,
                # the interaction predicted: the effect is larger in T+E+ than in T-E-
                "verdict": _verdict(pc, ec, pq, 1.0, 1),
            }
        )
    return out


def audit_locomo_claims(
    records: pd.DataFrame, claims_path: str | Path | None, *, n_resamples: int, seed: int
) -> str | None:
    """Audit ``analyses/claims/locomo.toml`` (the transfer claims; `claims_path` overrides it)
    against `records`; markdown, or None when none of its claims applies to these budgets. A
    missing file is a ``FileNotFoundError`` naming it."""
    from osustat import audit_claims, load_claims
    from osustat.reports.audit import render_markdown

    from ..claims_audit import check_claims_file, claims_file

    path = claims_file("locomo") if claims_path is None else check_claims_file(claims_path)
    claims = load_claims(path)
    budgets = set(records["budget"])
    kept = tuple(c for c in claims.claims if c.benchmark == "locomo" and c.budget in budgets)
    if not kept:
        return None
    used = {c.family for c in kept}
    sub = replace(
        claims, claims=kept, families={k: v for k, v in claims.families.items() if k in used}
    )
    cols = [c for c in records.columns if c != "category"]
    result = audit_claims(sub, records[cols], n_resamples=n_resamples, rng=seed)
    return render_markdown(
        result, title="Audit of the transfer claims (analyses/claims/locomo.toml)"
    )
