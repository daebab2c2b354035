"""LoCoMo statistics, all through the core: cross-tabs, interaction, break-even, by category.

Dependence: the questions of one conversation share its haystack, and there are 10
conversations. Every comparison is therefore shown at two units:

- **query**: ``osustat.cellwise.cell_conditional`` -- sign-flip on per-query differences,
  bootstrap intervals resampling whole conversations (``episode_id`` = conversation);
- **conversation**: each method's values averaged within a conversation (per cell: over that
  cell's questions of the conversation), then an exact sign-flip over the conversation means
  (2**10 = 1,024 sign patterns when all 10 conversations are present, so the smallest
  two-sided p is 2/1,024 ~ .002; fewer conversations, a larger floor).

The verdicts of the "does the claim transfer?" section use the conversation unit; the claims
audit of ``analyses/locomo/claims.toml`` (run by the driver, :mod:`analyses.claims_audit`)
judges the same claims at the unit they name, the query, as the paper tested, and
:func:`transfer_verdicts` puts the two side by side.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..by_budget import breakeven_columns

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
    forest: Any = None
    #: OSU-Mem − Flat Vector Hit@2 at every budget (the core's results, for the budget figure)
    budget_results: tuple[Any, ...] = ()
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
        # queries per conversation: the query-level effect weights conversation c by n_c, the
        # conversation-level one weights every conversation 1 (why the two can differ in sign)
        mine = part[(part["method"] == t) & (part["metric"] == metric)]
        n_q = mine.groupby("episode_id")["query_id"].nunique().reindex(p.ids).to_numpy(float)
        top = int(np.argmax(n_q))
        out[cell] = {
            "q_min": int(n_q.min()),
            "q_max": int(n_q.max()),
            "top_conversation": str(p.ids[top]),
            "top_share": float(n_q[top] / n_q.sum()),
            "top_effect": float(d[top]),
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
        inverted = ce.test.confidence_interval(ce.ci.level)
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
                "level": ce.ci.level,
                "test_ci": (inverted.low, inverted.high),
                "min_p": ce.test.min_pvalue,
                "mde": float(ce.mde),
                "conv_effect": c.get("effect", np.nan),
                "conv_p": c.get("p", np.nan),
                "conv_n": c.get("n_conversations", 0),
                "conv_p_floor": c.get("p_floor", np.nan),
                "conv_weights": {
                    k: c[k]
                    for k in ("q_min", "q_max", "top_conversation", "top_share", "top_effect")
                    if k in c
                },
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


@dataclass(frozen=True)
class _Settings:
    """What every comparison of one analysis shares: the comparisons, the primary budget, the
    sign flips, the seed, and the progress bar's step."""

    comps: dict[str, tuple[str, str, str]]
    primary: int
    n: int
    seed: int
    tick: Callable[[], Any]


def _per_budget(records: pd.DataFrame, cfg: _Settings) -> dict[str, Any]:
    """Every comparison at every budget: cell rows, interaction, clustered contrast, break-even."""
    comps, primary, n, seed, tick = cfg.comps, cfg.primary, cfg.n, cfg.seed, cfg.tick
    out: dict[str, Any] = {"crosstab": {}, "forest": None, "budget_results": []}
    by_budget, inter, contrast, be = [], [], [], []
    for key, (t, b, metric) in comps.items():
        for budget in sorted(set(records["budget"])):
            res = _cc(records, t, b, metric, budget, n, seed)
            rows = _rows(res, conversation_level(records, t, b, metric, budget, n, seed))
            tick()
            if budget == primary:
                out["crosstab"][key] = rows
                if key == "osu_flat_hit":
                    out["forest"] = res
            by_budget += [{"comparison": key, "budget": budget, **r} for r in rows]
            if key == "osu_flat_hit":
                out["budget_results"].append(res)
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
                be.append({"comparison": key, "budget": budget, **breakeven_columns(res)})
    out.update(by_budget=by_budget, interaction=inter, contrast=contrast, breakeven=be)
    return out


def _by_category(records: pd.DataFrame, cfg: _Settings) -> list[dict[str, Any]]:
    comps, primary, n, seed, tick = cfg.comps, cfg.primary, cfg.n, cfg.seed, cfg.tick
    rows = []
    for cat, part in records.groupby("category"):
        for key, (t, b, metric) in comps.items():
            if key.endswith("recall"):
                continue
            a = _cc(part, t, b, metric, primary, n, seed).aggregate
            conv = conversation_level(part, t, b, metric, primary, n, seed).get("all", {})
            tick()
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
    sensitivity: list[tuple[Any, pd.DataFrame, dict[str, Any]]], cfg: _Settings
) -> list[dict[str, Any]]:
    primary, n, seed, tick = cfg.primary, cfg.n, cfg.seed, cfg.tick
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
            tick()
    return rows


def analyze(
    records: pd.DataFrame,
    sensitivity: list[tuple[Any, pd.DataFrame, dict[str, Any]]],
    *,
    primary: int,
    n_resamples: int = 10_000,
    seed: int = 0,
    progress: bool = False,
) -> LocomoAnalysis:
    """Every table of the report, from the main run's `records` and the sensitivity reruns
    (``(choices, records, structure)`` each); `primary` is the budget of the cross-tab.
    `progress` shows a bar over the comparisons (:func:`analyses.runner.progress_bar`)."""
    from ..runner import progress_bar

    methods = set(records["method"])
    comps = {k: v for k, v in COMPARISONS.items() if v[0] in methods and v[1] in methods}
    total = _n_steps(records, comps, sensitivity)
    with progress_bar(total, "locomo analysis", progress=progress, unit="test") as bar:
        cfg = _Settings(comps, primary, n_resamples, seed, bar.update)
        return _analyze(records, sensitivity, cfg)


def _n_steps(
    records: pd.DataFrame,
    comps: dict[str, tuple[str, str, str]],
    sensitivity: list[tuple[Any, pd.DataFrame, dict[str, Any]]],
) -> int:
    """How many comparisons :func:`analyze` runs (the progress bar's total): every comparison
    at every budget, the non-recall ones per category, the Hit@2 ones per sensitivity rerun."""
    n = len(comps) * records["budget"].nunique()
    n += records["category"].nunique() * sum(not k.endswith("recall") for k in comps)
    for _, rec, _ in sensitivity:
        for key in ("osu_flat_hit", "overlap_disjoint_hit"):
            n += set(COMPARISONS[key][:2]) <= set(rec["method"])
    return n


def _analyze(
    records: pd.DataFrame,
    sensitivity: list[tuple[Any, pd.DataFrame, dict[str, Any]]],
    cfg: _Settings,
) -> LocomoAnalysis:
    pb = _per_budget(records, cfg)
    return LocomoAnalysis(
        primary=cfg.primary,
        crosstab=pb["crosstab"],
        by_budget=pd.DataFrame(pb["by_budget"]),
        interaction=pd.DataFrame(pb["interaction"]),
        clustered_contrast=pd.DataFrame(pb["contrast"]),
        breakeven=pd.DataFrame(pb["breakeven"]),
        by_category=pd.DataFrame(_by_category(records, cfg)),
        means=_means(records),
        sensitivity=pd.DataFrame(_sensitivity(sensitivity, cfg)),
        forest=pb["forest"],
        budget_results=tuple(pb["budget_results"]),
    )


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


def _audited(audit: Any, key: str, cell: str | None, primary: int) -> Any:
    """The audit's check of the claim on comparison `key` in `cell` (None: the interaction)
    at the primary budget, or None when the audit did not judge it."""
    t, b, metric = COMPARISONS[key]
    for ch in () if audit is None else audit.checks:
        c = ch.claim
        if (c.treatment, c.baseline, c.metric, c.budget) != (t, b, metric, primary):
            continue
        if (cell is None and c.kind == "interaction") or (
            cell is not None and c.kind == "difference" and c.cell_label == cell
        ):
            return ch
    return None


def _query_unit(ch: Any, effect: float, p: float) -> dict[str, Any]:
    """The query-unit columns: the audit's "as tested" numbers and verdict when it judged the
    claim, else the analysis' own (``effect``, ``p``) marked as not audited."""
    if ch is None or ch.as_tested is None:
        return {"effect": effect, "p_query": p, "audit": "not audited", "audit_id": None}
    at = ch.as_tested
    return {
        "effect": effect if at.effect is None else at.effect,
        "p_query": np.nan if at.pvalue is None else at.pvalue,
        "audit": at.verdict,
        "audit_id": ch.claim.id,
    }


def transfer_verdicts(ana: LocomoAnalysis, audit: Any = None) -> list[dict[str, Any]]:
    """The paper's three central claims on LoCoMo: the query unit from the claims audit of
    ``analyses/locomo/claims.toml`` (`audit`, an :class:`osustat.audit.result.AuditResult` as
    the driver ran it; None: the analysis' own query-level tests), the verdict at the
    conversation unit (alpha .05) from the conversation means."""
    out: list[dict[str, Any]] = []
    for key in ("overlap_disjoint_hit", "osu_flat_hit"):
        rows = {r["cell"]: r for r in ana.crosstab.get(key, [])}
        for cell, sign, words in (("T+E+", 1, "helps in T+E+"), ("T-E-", -1, "hurts in T-E-")):
            r = rows.get(cell)
            ch = _audited(audit, key, cell, ana.primary)
            if r is None:
                out.append(
                    {
                        "comparison": key,
                        "claim": words,
                        **_query_unit(ch, np.nan, np.nan),
                        "verdict": "not testable (cell empty)",
                    }
                )
                continue
            q = _query_unit(ch, r["effect"], r["p"])
            out.append(
                {
                    "comparison": key,
                    "claim": words,
                    "n": r["n"],
                    **q,
                    "conv_effect": r["conv_effect"],
                    "p_conv": r["conv_p"],
                    "conv_n": r["conv_n"],
                    "p_floor": r["conv_p_floor"],
                    "verdict": _verdict(
                        r["conv_p"], r["conv_effect"], q["p_query"], q["effect"], sign
                    ),
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
        q = _query_unit(_audited(audit, key, None, ana.primary), np.nan, pq)
        out.append(
            {
                "comparison": key,
                "claim": "method x cell interaction",
                **q,
                "conv_effect": ec,
                "p_conv": pc,
                "conv_n": int(ct["n_conversations"].iloc[0]) if len(ct) else 0,
                # the interaction predicted: the effect is larger in T+E+ than in T-E-
                "verdict": _verdict(pc, ec, q["p_query"], 1.0, 1),
            }
        )
    return out
