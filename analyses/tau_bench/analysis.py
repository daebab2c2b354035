from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from osustat import paired, paired_signflip_test, validate_records
from osustat.bootstrap import cluster_bootstrap_ci
from osustat.cellwise import CellConditionalResult, cell_conditional
from osustat.records import PairedRecords
from osustat.schema import ValidatedRecords
from osustat.streams import stream_rng

from ..by_budget import breakeven_columns
from .run import MAIN_METHODS

__all__ = ["TauAnalysis", "analyze"]

OSU, FLAT, DISJ = "OSU-Mem", "Flat Vector", "OSU-Mem (disjoint)"
CELL_ORDER = ("T+E+", "T+E-", "T-E+", "T-E-")

#: Prefix of every test's stream name (:func:`osustat.streams.stream_rng`).
STREAM = "tau-bench analysis"


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
    level: float = 0.95


@dataclass(frozen=True)
class _Settings:
    """What every test of one analysis shares: sizes, the interval level, the master seed."""

    n_resamples: int
    bootstrap_resamples: int
    level: float
    seed: int
    #: Called after each comparison or test (the analysis' progress bar).
    tick: Callable[[], Any] = field(default=lambda: None, compare=False)

    def rng(self, *name: Any) -> np.random.Generator:
        """The test's own stream: the master seed and the test's name, nothing else."""
        return stream_rng(self.seed, STREAM, *name)


def _tasks(records: pd.DataFrame) -> dict[str, str]:
    """Unit id (``'episode/query'``, as :func:`osustat.paired` names it) -> its task."""
    keys = records[["episode_id", "query_id", "task"]].drop_duplicates(["episode_id", "query_id"])
    units = keys["episode_id"].astype(str) + "/" + keys["query_id"].astype(str)
    return dict(zip(units, keys["task"].astype(str), strict=True))


def _cc(
    records: ValidatedRecords,
    tasks: dict[str, str],
    t: str,
    b: str,
    metric: str,
    budget: int,
    bench: str,
    cfg: _Settings,
    *name: Any,
) -> tuple[CellConditionalResult, PairedRecords]:
    """The cell-conditional analysis of one comparison on query-level pairs whose clusters are
    tasks (one task recurs across sources), and those pairs (one step of the progress bar,
    also when there are too few pairs)."""
    try:
        p = paired(records, t, b, metric=metric, budget=budget, benchmark=bench)
        p = replace(p, episode_ids=np.array([tasks[u] for u in p.ids], dtype=str))
        res = cell_conditional(
            p,
            n_resamples=cfg.n_resamples,
            bootstrap_resamples=cfg.bootstrap_resamples,
            level=cfg.level,
            rng=cfg.rng(bench, t, b, metric, budget, *name),
        )
    finally:
        cfg.tick()
    return res, p


def _task_level(p: PairedRecords, cfg: _Settings) -> dict[str, tuple[float, float, int]]:
    """Per cell (and 'all'): task-level effect, p, number of tasks (each task's per-query
    differences averaged first; a sign-flip over tasks)."""
    out: dict[str, tuple[float, float, int]] = {}
    cells = np.array([str(c) for c in p.cells]) if p.cells is not None else None
    for cell in (*CELL_ORDER, "all"):
        if cell != "all" and cells is None:
            continue
        mask = np.ones(p.n, dtype=bool) if cell == "all" else cells == cell
        by_task = pd.Series(p.differences[mask]).groupby(p.episode_ids[mask]).mean()
        if by_task.size < 2:
            continue
        name = ("task level", p.treatment_name, p.baseline_name, p.metric, p.budget, cell)
        test = paired_signflip_test(
            by_task.to_numpy(),
            np.zeros(by_task.size),
            n_resamples=cfg.n_resamples,
            rng=cfg.rng(*name),
        )
        out[cell] = (float(by_task.mean()), test.pvalue, int(by_task.size))
    return out


def _rows(res: CellConditionalResult) -> list[dict[str, Any]]:
    level = res.aggregate.ci.level
    rows = []
    for ce in (*res.cells, res.aggregate):
        inverted = ce.test.confidence_interval(level)
        rows.append(
            {
                "cell": "Aggregate" if ce.cell is None else ce.cell.value,
                "n": ce.n,
                "effect": ce.effect,
                "p": ce.test.pvalue,
                "ci": (ce.ci.low, ce.ci.high),
                "test_ci": (inverted.low, inverted.high),
                "min_p": ce.test.min_pvalue,
                "mde": ce.mde,
                "clusters": ce.ci.n_clusters,
            }
        )
    return rows


def _oracle_ci(p: PairedRecords, cfg: _Settings, *name: Any) -> tuple[float, float]:
    """Task-bootstrap interval of the oracle-routed Hit@2 gain over the baseline: the core's
    cluster bootstrap on per-task totals (per-cell sums and counts of the differences)."""
    if p.cells is None:
        return (np.nan, np.nan)
    cells = np.array([str(c) for c in p.cells])
    codes, tasks = np.unique(p.episode_ids, return_inverse=True)
    k = codes.size
    if k < 2:
        return (np.nan, np.nan)
    columns = []
    for c in CELL_ORDER:
        m = cells == c
        columns.append(np.bincount(tasks[m], weights=p.differences[m], minlength=k))
    for c in CELL_ORDER:
        columns.append(np.bincount(tasks[cells == c], minlength=k).astype(np.float64))
    table = np.column_stack([*columns, np.bincount(tasks, minlength=k)])

    def gain(tot: np.ndarray) -> np.ndarray:
        sums, counts, total = tot[:, :4], tot[:, 4:8], tot[:, 8]
        with np.errstate(invalid="ignore", divide="ignore"):
            positive = (counts > 0) & (sums / counts > 0)
        return np.where(positive, sums, 0.0).sum(axis=1) / total

    ci = cluster_bootstrap_ci(
        table,
        gain,
        level=cfg.level,
        n_resamples=cfg.bootstrap_resamples,
        rng=cfg.rng("oracle gain", *name),
        name="the oracle-routing gain",
    )
    return ci.low, ci.high


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
    bootstrap_resamples: int = 2_000,
    level: float = 0.95,
    seed: int = 0,
    progress: bool = False,
) -> TauAnalysis:
    """Every table of the τ-bench report from validated records (validated here only if
    they are not already a ``ValidatedRecords``).

    Every test and bootstrap runs through the core (:func:`osustat.cellwise.cell_conditional`,
    :func:`osustat.paired_signflip_test`, :func:`osustat.bootstrap.cluster_bootstrap_ci`)
    with its own random stream, :func:`osustat.streams.stream_rng` of `seed` and the test's
    name, so adding a comparison leaves every other p-value and interval unchanged. `level`
    is the level of every interval (the break-even band keeps the paper's 90%). `progress`
    shows a bar over the comparisons and tests (:func:`analyses.runner.progress_bar`).
    """
    from ..runner import progress_bar

    rec = records if isinstance(records, ValidatedRecords) else validate_records(records)
    benches = set(rec["benchmark"])
    budgets = sorted(set(rec["budget"]))
    # the main run and the other query-noise reading(s), side by side (Tables 4 and 5)
    readings = sorted(b for b in benches if b.startswith("tau-bench-query-"))
    total = _n_steps(rec, benches, readings, budgets, contamination is not None)
    with progress_bar(total, "tau-bench analysis", progress=progress, unit="test") as bar:
        cfg = _Settings(n_resamples, bootstrap_resamples, level, seed, lambda: bar.update(1))
        return _analyze(rec, contamination, cfg, benches, budgets, readings)


def _n_steps(
    rec: ValidatedRecords,
    benches: set[str],
    readings: list[str],
    budgets: list[int],
    contamination: bool,
) -> int:
    """How many comparisons and tests :func:`analyze` runs (the progress bar's total): the
    cross-tabs, Table 5 / interaction / break-even per budget, Table 12, the variants, the
    strict reading and the contamination test."""
    n = 3 * (1 + len(readings)) + len(budgets) * (len(readings) + 2)
    aug = rec[rec["benchmark"] == "tau-bench-augmented"]
    if len(aug) and aug["episode_id"].nunique() >= 2:
        n += len(budgets) * sum(m not in (OSU, "No LT Memory") for m in MAIN_METHODS)
    for bench in benches:
        sub = rec[rec["benchmark"] == bench]
        n += {OSU, FLAT} <= set(sub["method"]) and "hit@2" in set(sub["metric"])
    return n + 1 + contamination


def _analyze(
    rec: ValidatedRecords,
    contamination: dict[str, Any] | None,
    cfg: _Settings,
    benches: set[str],
    budgets: list[int],
    readings: list[str],
) -> TauAnalysis:
    tasks = _tasks(rec)
    main_b = 256 if 256 in budgets else budgets[len(budgets) // 2]
    crosstab: dict[str, Any] = {}
    forest = None
    for bench in ("tau-bench", *readings):
        comps: dict[str, Any] = {}
        for key, (t, b, metric) in {
            "osu_flat_hit": (OSU, FLAT, "hit@2"),
            "osu_flat_recall": (OSU, FLAT, "recall"),
            "overlap_disjoint_hit": (OSU, DISJ, "hit@2"),
        }.items():
            res, pr = _cc(rec, tasks, t, b, metric, main_b, bench, cfg)
            if key == "osu_flat_hit" and bench == "tau-bench":
                forest = res
            comps[key] = {"rows": _rows(res), "task": _task_level(pr, cfg)}
        sub = rec[
            (rec["benchmark"] == bench) & (rec["budget"] == main_b) & (rec["metric"] == "hit@2")
        ]
        comps["mean_hit"] = {
            str(k): float(v) for k, v in sub.groupby("method")["value"].mean().items()
        }
        # queries per cell, also of cells too small for a test (fewer than 2 queries)
        one = sub.drop_duplicates(["episode_id", "query_id"])
        comps["cell_n"] = {str(k): int(v) for k, v in one["cell"].value_counts().items()}
        crosstab[bench] = comps
    t5, inter, be = _by_budget(rec, tasks, budgets, readings, cfg)
    t11, t12, aug_cells = _stage_d(rec, budgets, cfg)
    vrows = []
    for bench in sorted(benches):
        sub = rec[rec["benchmark"] == bench]
        if not {OSU, FLAT} <= set(sub["method"]) or "hit@2" not in set(sub["metric"]):
            continue
        res, _ = _cc(rec, tasks, OSU, FLAT, "hit@2", main_b, bench, cfg)
        vrows += [{"benchmark": bench, **r} for r in _rows(res)]
    return TauAnalysis(
        crosstab,
        pd.DataFrame(t5),
        pd.DataFrame(inter),
        pd.DataFrame(be),
        t11,
        t12,
        pd.DataFrame(vrows),
        _contamination(contamination, rec, main_b, cfg),
        aug_cells,
        forest,
        pd.DataFrame(_strict_rows(rec, tasks, main_b, cfg)),
        cfg.level,
    )


def _by_budget(
    rec: ValidatedRecords,
    tasks: dict[str, str],
    budgets: list[int],
    readings: list[str],
    cfg: _Settings,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Table 5 (the main run and every other query-noise reading), the interaction test and
    break-even / oracle per budget (OSU-Mem - Flat)."""
    t5: list[dict[str, Any]] = []
    inter: list[dict[str, Any]] = []
    be: list[dict[str, Any]] = []
    for budget in budgets:
        for bench in readings:
            res_o, pr_o = _cc(rec, tasks, OSU, FLAT, "hit@2", budget, bench, cfg)
            t5.extend(_t5_rows(res_o, _task_level(pr_o, cfg), budget, bench))
        res_h, pr = _cc(rec, tasks, OSU, FLAT, "hit@2", budget, "tau-bench", cfg)
        res_r, _ = _cc(rec, tasks, OSU, FLAT, "recall", budget, "tau-bench", cfg)
        tl = _task_level(pr, cfg)
        t5.extend(_t5_rows(res_h, tl, budget, "tau-bench"))
        inter.append(
            {
                "budget": budget,
                "hit_p": None if res_h.interaction is None else res_h.interaction.pvalue,
                "recall_p": None if res_r.interaction is None else res_r.interaction.pvalue,
            }
        )
        be.append(
            {
                "budget": budget,
                **breakeven_columns(res_h),
                "oracle_ci": _oracle_ci(pr, cfg, "tau-bench", budget),
            }
        )
    return t5, inter, be


def _stage_d(
    rec: ValidatedRecords, budgets: list[int], cfg: _Settings
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """Stage D: Table 11 (query- and episode-level means), Table 12 (episode-level tests)."""
    if "tau-bench-augmented" not in set(rec["benchmark"]):
        return pd.DataFrame(), pd.DataFrame(), {}
    aug = rec.select_rows(rec["benchmark"] == "tau-bench-augmented")
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
    rows = []
    for budget in budgets if aug["episode_id"].nunique() >= 2 else []:  # >= 2 groups
        for base in MAIN_METHODS:
            if base in (OSU, "No LT Memory"):
                continue
            p = paired(aug, OSU, base, metric="hit@2", budget=budget, unit="episode")
            name = ("table 12", OSU, base, budget)
            test = paired_signflip_test(
                p.treatment, p.baseline, n_resamples=cfg.n_resamples, rng=cfg.rng(*name)
            )
            cfg.tick()
            rows.append(
                {
                    "budget": budget,
                    "baseline": base,
                    "effect": test.statistic,
                    "p": test.pvalue,
                    "n": p.n,
                }
            )
    t12 = pd.DataFrame(rows, columns=["budget", "baseline", "effect", "p", "n"])
    return t11, t12, aug_cells


def _strict_rows(
    rec: ValidatedRecords, tasks: dict[str, str], main_b: int, cfg: _Settings
) -> list[dict[str, Any]]:
    """The strict one-focal reading: the first focal source of each group (same retrievals)."""
    first = (
        rec[rec["benchmark"] == "tau-bench"]
        .assign(_pos=lambda d: d["query_id"].str.extract(r"src(\d+)$")[0].astype(int))
        .sort_values(["episode_id", "_pos"])
    )
    keep = set(first.groupby("episode_id")["query_id"].first())
    strict = rec.select_rows((rec["benchmark"] == "tau-bench") & rec["query_id"].isin(keep))
    try:
        res, _ = _cc(strict, tasks, OSU, FLAT, "hit@2", main_b, "tau-bench", cfg, "one focal")
    except ValueError:  # too few queries for the cross-tab: the report says so
        return []
    return _rows(res)


def _contamination(
    contamination: dict[str, Any] | None, main: ValidatedRecords, main_b: int, cfg: _Settings
) -> dict[str, Any] | None:
    """Means of the prefixed and unprefixed runs, and the overlap - disjoint test of the latter."""
    if contamination is None:
        return None
    crec = contamination["records"]
    crec = crec if isinstance(crec, ValidatedRecords) else validate_records(crec)
    cont = {k: v for k, v in contamination.items() if k != "records"}
    for label, rec in (("main", main), ("flipped", crec)):
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
    res, _ = _cc(crec, _tasks(crec), OSU, DISJ, "hit@2", main_b, "tau-bench", cfg, "flipped")
    cont["flipped_overlap_disjoint_p"] = res.aggregate.test.pvalue
    return cont
