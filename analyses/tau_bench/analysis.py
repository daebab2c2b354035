"""τ-bench analysis: cross-tabs (query level, CIs clustered by task), task-level tests, Stage D.

Dependence: one task recurs across sources (four trials in the τ-bench file, once in each
τ²-bench file), so every comparison is computed twice: at the query level (sign-flip on
per-query differences; bootstrap intervals resampling whole tasks) and at the task level
(each method's values averaged within a task first, then a sign-flip over tasks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .run import BUDGETS, MAIN_METHODS

__all__ = ["TauAnalysis", "analyze"]

OSU, FLAT, DISJ = "OSU-Mem", "Flat Vector", "OSU-Mem (disjoint)"
CELL_ORDER = ("T+E+", "T+E-", "T-E+", "T-E-")


@dataclass(frozen=True)
class TauAnalysis:
    crosstab: dict[str, Any]  # (benchmark) -> {metric/comparison -> rows}
    table5: pd.DataFrame
    interaction: pd.DataFrame
    breakeven: pd.DataFrame
    table11: pd.DataFrame
    table12: pd.DataFrame
    variants: pd.DataFrame
    contamination: dict[str, Any] | None
    augmented_cells: dict[str, int]
    forest: Any
    strict: pd.DataFrame


def _by_task(records: pd.DataFrame) -> pd.DataFrame:
    # cluster = task: episode_id := task (query ids stay globally unique)
    return records.assign(episode_id=records["task"])


def _cc(
    records: pd.DataFrame, t: str, b: str, metric: str, budget: int, bench: str, n: int, seed: int
) -> Any:
    from osustat import paired
    from osustat.cellwise import cell_conditional

    p = paired(_by_task(records), t, b, metric=metric, budget=budget, benchmark=bench)
    return cell_conditional(p, n_resamples=n, bootstrap_resamples=2000, rng=seed)


def _task_level(
    records: pd.DataFrame, t: str, b: str, metric: str, budget: int, bench: str, n: int, seed: int
) -> dict[str, tuple[float, float, int]]:
    """Per cell (and 'all'): task-level effect, p, number of tasks."""
    from osustat import paired
    from osustat.cellwise import cell_conditional

    out: dict[str, tuple[float, float, int]] = {}
    sub = records[(records["benchmark"] == bench) & (records["budget"] == budget)]
    for cell in (*CELL_ORDER, "all"):
        part = sub if cell == "all" else sub[sub["cell"] == cell]
        if part["task"].nunique() < 2:
            continue
        p = paired(
            _by_task(part).drop(columns="cell"), t, b, metric=metric, budget=budget, unit="episode"
        )
        r = cell_conditional(p, n_resamples=n, bootstrap_resamples=200, rng=seed)
        out[cell] = (r.aggregate.effect, r.aggregate.test.pvalue, r.aggregate.n)
    return out


def _rows(res: Any) -> list[dict[str, Any]]:
    rows = []
    for ce in (*res.cells, res.aggregate):
        rows.append(
            {
                "cell": "Aggregate" if ce.cell is None else ce.cell.value,
                "n": ce.n,
                "effect": ce.effect,
                "p": ce.test.pvalue,
                "ci": (ce.ci.low, ce.ci.high),
                "mde": ce.mde,
                "clusters": ce.ci.n_clusters,
            }
        )
    return rows


def _oracle_ci(
    records: pd.DataFrame, bench: str, budget: int, seed: int, n_boot: int = 2000
) -> tuple[float, float]:
    """Cluster (task) bootstrap interval of the oracle-routed Hit@2 gain over Flat Vector."""
    sub = records[
        (records["benchmark"] == bench)
        & (records["budget"] == budget)
        & (records["metric"] == "hit@2")
    ]
    w = sub.pivot_table(
        index=["query_id", "task", "cell"], columns="method", values="value"
    ).reset_index()
    d = (w[OSU] - w[FLAT]).to_numpy()
    tasks = w["task"].to_numpy()
    cells = w["cell"].to_numpy()
    uniq = np.unique(tasks)
    members = [np.flatnonzero(tasks == t) for t in uniq]
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_boot):
        pick = np.concatenate([members[i] for i in rng.integers(len(uniq), size=len(uniq))])
        dd, cc = d[pick], cells[pick]
        gain = 0.0
        for c in CELL_ORDER:
            m = cc == c
            if m.any() and dd[m].mean() > 0:
                gain += dd[m].sum()
        vals.append(gain / len(pick))
    lo, hi = np.quantile(vals, [0.025, 0.975])
    return float(lo), float(hi)


def _t5_rows(res: Any, tl: dict[str, Any], budget: int, bench: str) -> list[dict[str, Any]]:
    out = []
    for r in _rows(res):
        key = r["cell"] if r["cell"] != "Aggregate" else "all"
        effect, p, _ = tl.get(key, (np.nan, np.nan, 0))
        out.append({"benchmark": bench, "budget": budget, **r, "task_effect": effect, "task_p": p})
    return out


def analyze(
    records: pd.DataFrame,
    structure: dict[str, Any],
    contamination: dict[str, Any] | None,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> TauAnalysis:
    benches = set(records["benchmark"])
    budgets = sorted(set(records["budget"]))
    main_b = 256 if 256 in budgets else budgets[len(budgets) // 2]
    crosstab: dict[str, Any] = {}
    forest = None
    readings = sorted(b for b in benches if b.startswith("tau-bench-query-"))
    for bench in ("tau-bench", *readings):
        comps: dict[str, Any] = {}
        for key, (t, b, metric) in {
            "osu_flat_hit": (OSU, FLAT, "hit@2"),
            "osu_flat_recall": (OSU, FLAT, "recall"),
            "overlap_disjoint_hit": (OSU, DISJ, "hit@2"),
        }.items():
            res = _cc(records, t, b, metric, main_b, bench, n_resamples, seed)
            if key == "osu_flat_hit" and bench == "tau-bench":
                forest = res
            comps[key] = {
                "rows": _rows(res),
                "task": _task_level(records, t, b, metric, main_b, bench, n_resamples, seed),
            }
        sub = records[
            (records["benchmark"] == bench)
            & (records["budget"] == main_b)
            & (records["metric"] == "hit@2")
        ]
        comps["mean_hit"] = {
            str(k): float(v) for k, v in sub.groupby("method")["value"].mean().items()
        }
        crosstab[bench] = comps
    # Table 5, interaction, break-even per budget
    t5, inter, be = [], [], []
    for budget in budgets:
        for bench in readings:
            res_o = _cc(records, OSU, FLAT, "hit@2", budget, bench, n_resamples, seed)
            tl_o = _task_level(records, OSU, FLAT, "hit@2", budget, bench, n_resamples, seed)
            t5.extend(_t5_rows(res_o, tl_o, budget, bench))
        res_h = _cc(records, OSU, FLAT, "hit@2", budget, "tau-bench", n_resamples, seed)
        res_r = _cc(records, OSU, FLAT, "recall", budget, "tau-bench", n_resamples, seed)
        tl = _task_level(records, OSU, FLAT, "hit@2", budget, "tau-bench", n_resamples, seed)
        t5.extend(_t5_rows(res_h, tl, budget, "tau-bench"))
        inter.append(
            {
                "budget": budget,
                "hit_p": None if res_h.interaction is None else res_h.interaction.pvalue,
                "recall_p": None if res_r.interaction is None else res_r.interaction.pvalue,
            }
        )
        bh = res_h.break_even
        oc = res_h.oracle
        be.append(
            {
                "budget": budget,
                "d_tpep": next((r["effect"] for r in _rows(res_h) if r["cell"] == "T+E+"), np.nan),
                "d_tmem": next((r["effect"] for r in _rows(res_h) if r["cell"] == "T-E-"), np.nan),
                "p_star": None if bh is None else bh.p_star,
                "p_star_ci": None if bh is None or bh.ci is None else (bh.ci.low, bh.ci.high),
                "pi_tool": None if bh is None else bh.pi_tool,
                "pi_tool_ci": (
                    None
                    if bh is None or bh.pi_tool_ci is None
                    else (bh.pi_tool_ci.low, bh.pi_tool_ci.high)
                ),
                "pi_any": None if bh is None else bh.pi_any,
                "never_negative": None if bh is None else bh.never_negative,
                "oracle_gain": None if oc is None else oc.gain_over_baseline,
                "oracle_ci": _oracle_ci(records, "tau-bench", budget, seed),
                "aggregate": res_h.aggregate.effect,
            }
        )
    # Stage D: Table 11 (query- and episode-level means), Table 12 (episode-level tests)
    t11, t12 = pd.DataFrame(), pd.DataFrame()
    aug_cells: dict[str, int] = {}
    if "tau-bench-augmented" in benches:  # episode-level tests need >= 2 groups
        aug = records[records["benchmark"] == "tau-bench-augmented"]
        q = aug.groupby(["method", "budget", "metric"])["value"].mean().rename("query")
        e = (
            aug.groupby(["method", "budget", "metric", "episode_id"])["value"]
            .mean()
            .groupby(["method", "budget", "metric"])
            .mean()
            .rename("episode")
        )
        t11 = pd.concat([q, e], axis=1).reset_index()
        cells = aug.drop_duplicates("query_id")["cell"].value_counts()
        aug_cells = {str(k): int(v) for k, v in cells.items()}
        from osustat import paired
        from osustat.cellwise import cell_conditional

        rows = []
        for budget in budgets if aug["episode_id"].nunique() >= 2 else []:
            for base in MAIN_METHODS:
                if base in (OSU, "No LT Memory"):
                    continue
                p = paired(aug, OSU, base, metric="hit@2", budget=budget, unit="episode")
                ep = cell_conditional(p, n_resamples=n_resamples, bootstrap_resamples=500, rng=seed)
                rows.append(
                    {
                        "budget": budget,
                        "baseline": base,
                        "effect": ep.aggregate.effect,
                        "p": ep.aggregate.test.pvalue,
                        "n": ep.aggregate.n,
                    }
                )
        t12 = pd.DataFrame(rows, columns=["budget", "baseline", "effect", "p", "n"])
    # variants at the main budget
    vrows = []
    for bench in sorted(benches):
        sub = records[records["benchmark"] == bench]
        if (
            OSU not in set(sub["method"])
            or FLAT not in set(sub["method"])
            or "hit@2" not in set(sub["metric"])
        ):
            continue
        res = _cc(records, OSU, FLAT, "hit@2", main_b, bench, n_resamples, seed)
        for r in _rows(res):
            vrows.append({"benchmark": bench, **r})
    # strict one-focal reading: the first focal source of each group (same retrievals)
    first = (
        records[records["benchmark"] == "tau-bench"]
        .assign(_pos=lambda d: d["query_id"].str.extract(r"src(\d+)$")[0].astype(int))
        .sort_values(["episode_id", "_pos"])
    )
    keep = set(first.groupby("episode_id")["query_id"].first())
    strict_rec = records[(records["benchmark"] == "tau-bench") & records["query_id"].isin(keep)]
    srows = []
    try:
        res = _cc(strict_rec, OSU, FLAT, "hit@2", main_b, "tau-bench", n_resamples, seed)
        srows = _rows(res)
    except ValueError:
        pass
    cont = None
    if contamination is not None:
        crec = contamination["records"]
        cont = {k: v for k, v in contamination.items() if k != "records"}
        for label, rec in (("main", records), ("flipped", crec)):
            sub = rec[
                (rec["benchmark"] == "tau-bench")
                & (rec["budget"] == main_b)
                & (rec["metric"] == "hit@2")
            ]
            means = sub.groupby("method")["value"].mean()
            cont[label] = {
                "osu": float(means.get(OSU, np.nan)),
                "disjoint": float(means.get(DISJ, np.nan)),
                "flat": float(means.get(FLAT, np.nan)),
            }
        # the test of overlap - disjoint in the unprefixed run
        res = _cc(crec, OSU, DISJ, "hit@2", main_b, "tau-bench", n_resamples, seed)
        cont["flipped_overlap_disjoint_p"] = res.aggregate.test.pvalue
    return TauAnalysis(
        crosstab,
        pd.DataFrame(t5),
        pd.DataFrame(inter),
        pd.DataFrame(be),
        t11,
        t12,
        pd.DataFrame(vrows),
        cont,
        aug_cells,
        forest,
        pd.DataFrame(srows),
    )


_ = BUDGETS
