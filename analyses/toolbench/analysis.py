"""Statistics of the ToolBench run: Tables 3, 6, 14, 15, 16, membership, G.5, trend, seeds.

Unit of analysis: the episode (one query each). Per seed, the overlap - disjoint gap of an
episode is a paired difference and is tested by the paired sign-flip test (two-sided,
``n_resamples``); the per-seed p-values are Fisher-combined as the paper does. Because the
three seeds draw their targets from the same ~400 eligible trajectories, the same target
appears in several seeds; the seed-dependence check correlates the per-target gaps between
seeds, and the dependence-robust test averages every target's episodes (all seeds) into one
unit and runs one sign-flip test over distinct targets. The trend test in beta uses the same
target-level units: a trend in the mean gap (:func:`osustat.trend.mean_trend_test`, per-target
slopes; the claim's default) beside the within-target exchangeability test
(:func:`osustat.trend.within_block_trend_test`, whose null is "no effect of beta at all").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from osustat import bootstrap_ci, fisher_combine, seed_dependence, signflip_tests
from osustat.seeds import between_seed_dependence
from osustat.streams import stream_rng
from osustat.trend import mean_trend_test, within_block_trend_test

from .run import ALPHAS, BASELINES, BETAS, BUDGETS, cohesion_name, coverage_name

__all__ = ["ToolbenchAnalysis", "analyze_toolbench", "gap_matrix"]

PRIMARY_BETA = 0.12


@dataclass(frozen=True)
class ToolbenchAnalysis:
    table3: pd.DataFrame
    sweep: pd.DataFrame  # per (benchmark, metric, beta, budget, seed) and seed == -1 combined
    combined: pd.DataFrame  # per (benchmark, metric, beta, budget): mean gap, Fisher, target test
    consistency: dict[str, Any]
    table14: pd.DataFrame
    seed_dep: pd.DataFrame
    trend: pd.DataFrame
    membership: pd.DataFrame
    cohesion: pd.DataFrame
    structure: pd.DataFrame
    evidence_stats: pd.DataFrame
    seeds: tuple[int, ...]


def gap_matrix(records: pd.DataFrame, treatment: str, baseline: str, metric: str) -> pd.DataFrame:
    """Wide table of per-episode gaps ``treatment - baseline``.

    Index (seed, episode_id, query_id) -- ``episode_id`` is the target -- columns budgets.

    Raises ``ValueError`` when the two methods do not cover the same episodes (no silent join).
    """
    sub = records[(records["metric"] == metric) & records["method"].isin([treatment, baseline])]
    wide = sub.pivot_table(
        index=["seed", "episode_id", "query_id", "budget"],
        columns="method",
        values="value",
        aggfunc="first",
    )
    for m in (treatment, baseline):
        if m not in wide:
            raise ValueError(f"records have no method {m!r} for metric {metric!r}.")
    missing = wide[[treatment, baseline]].isna().any(axis=1)
    if missing.any():
        raise ValueError(
            f"{int(missing.sum())} (episode, budget) pairs lack {treatment!r} or {baseline!r}."
        )
    d = (wide[treatment] - wide[baseline]).unstack("budget")
    return d


def _with_target(d: pd.DataFrame) -> pd.DataFrame:
    """`d` as columns, with ``target`` = the episode id (the target trajectory)."""
    tg = d.reset_index()
    tg["target"] = tg["episode_id"]
    return tg


def analyze_toolbench(
    records: pd.DataFrame,
    episodes: pd.DataFrame,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    betas: tuple[float, ...] = BETAS,
    budgets: tuple[int, ...] = BUDGETS,
    alphas: tuple[float, ...] = ALPHAS,
    progress: bool = False,
) -> ToolbenchAnalysis:
    """All statistics of the report (see the module docstring); `progress` shows a bar over
    the (benchmark, metric, beta) points, the trend tests and the cohesion tests
    (:func:`analyses.runner.progress_bar`)."""
    from ..runner import progress_bar

    # every test draws from its own stream: the master seed and the test's name
    def rng(*name: Any) -> np.random.Generator:
        return stream_rng(seed, "toolbench analysis", *name)

    seeds = tuple(sorted(int(s) for s in records["seed"].unique()))
    benches = [
        b
        for b in ("toolbench", "toolbench-nev2", "toolbench-nev4")
        if b in set(records["benchmark"])
    ]
    main = records[records["benchmark"] == "toolbench"]
    rows: dict[str, list[dict[str, Any]]] = {"sweep": [], "comb": [], "dep": [], "trend": []}
    total = len(benches) * 2 * (len(betas) + 1) + 1
    with progress_bar(total, "toolbench analysis", progress=progress, unit="step") as bar:
        for bench in benches:
            recs = records[records["benchmark"] == bench]
            for metric in ("recall", "hit@2"):
                target_gaps: dict[float, pd.DataFrame] = {}
                for beta in betas:
                    target_gaps[beta] = _beta_point(
                        recs, bench, metric, beta, seeds, budgets, n_resamples, rng, rows
                    )
                    bar.update(1)
                rows["trend"] += _trend_rows(
                    target_gaps, bench, metric, betas, budgets, n_resamples, rng
                )
                bar.update(1)
        cohesion = pd.DataFrame(_cohesion(main, alphas, budgets, n_resamples, rng))
        bar.update(1)
    sweep = pd.DataFrame(rows["sweep"])
    struct, ev_stats = _structure(episodes)
    return ToolbenchAnalysis(
        table3=_table3(main),
        sweep=sweep,
        combined=pd.DataFrame(rows["comb"]),
        consistency=_consistency(sweep, betas, budgets),
        table14=pd.DataFrame(_table14(sweep, benches)),
        seed_dep=pd.DataFrame(rows["dep"]),
        trend=pd.DataFrame(rows["trend"]),
        membership=pd.DataFrame(_membership(episodes, benches)),
        cohesion=cohesion,
        structure=struct,
        evidence_stats=ev_stats,
        seeds=seeds,
    )


def _table3(main: pd.DataFrame) -> pd.DataFrame:
    """Table 3: mean Hit@2 and Recall per method and budget (n_ev = 3, beta = .12)."""
    t3_methods = [
        *BASELINES,
        coverage_name("overlap", PRIMARY_BETA),
        coverage_name("disjoint", PRIMARY_BETA),
    ]
    t3 = (
        main[main["method"].isin(t3_methods) & main["metric"].isin(["hit@2", "recall"])]
        .groupby(["method", "budget", "metric"])["value"]
        .agg(["mean", "count"])
        .reset_index()
    )
    return t3


def _target_level(
    d: pd.DataFrame, budgets: tuple[int, ...], n_resamples: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, pd.DataFrame, list[Any]]:
    """The dependence-robust unit: one per distinct target, its episodes over all seeds
    averaged (`d` with its targets, the per-target gaps), and a sign-flip test per budget on
    those units."""
    tg = _with_target(d)
    by_target = tg.groupby("target")[list(budgets)].mean()
    return tg, by_target, signflip_tests(by_target.to_numpy(), n_resamples=n_resamples, rng=rng)


def _beta_point(
    recs: pd.DataFrame,
    bench: str,
    metric: str,
    beta: float,
    seeds: tuple[int, ...],
    budgets: tuple[int, ...],
    n_resamples: int,
    rng: Any,
    rows: dict[str, list[dict[str, Any]]],
) -> pd.DataFrame:
    """One (benchmark, metric, beta) of the sweep: per-seed sign-flip tests, their Fisher
    combination, the target-level test and the seed dependence, appended to `rows`; returns the
    per-target gaps (the trend test's units)."""
    sweep_rows, comb_rows, dep_rows = rows["sweep"], rows["comb"], rows["dep"]
    d = gap_matrix(recs, coverage_name("overlap", beta), coverage_name("disjoint", beta), metric)
    per_seed_p: dict[int, dict[int, float]] = {}
    for s in seeds:
        ds = d.loc[s]
        tests = signflip_tests(
            ds[list(budgets)].to_numpy(),
            n_resamples=n_resamples,
            rng=rng(bench, metric, beta, "seed", s),
        )
        for b, t in zip(budgets, tests, strict=True):
            per_seed_p.setdefault(b, {})[s] = t.pvalue
            sweep_rows.append(
                {"benchmark": bench, "metric": metric, "beta": beta, "budget": b,
                 "seed": s, "gap": float(ds[b].mean()), "p": t.pvalue,
                 "n": int(ds[b].size)}
            )  # fmt: skip
    tg, by_target, tt = _target_level(d, budgets, n_resamples, rng(bench, metric, beta, "targets"))
    for b, t in zip(budgets, tt, strict=True):
        ps = [per_seed_p[b][s] for s in seeds]
        comb_rows.append(
            {
                "benchmark": bench, "metric": metric, "beta": beta, "budget": b,
                "gap": float(d[b].mean()),
                "seed_min": float(d[b].groupby(level="seed").mean().min()),
                "seed_max": float(d[b].groupby(level="seed").mean().max()),
                "fisher_p": fisher_combine(ps).pvalue if len(ps) > 1 else ps[0],
                "target_gap": float(by_target[b].mean()),
                **_target_ci(by_target[b].to_numpy(), rng(bench, metric, beta, "target ci", b)),
                "target_p": t.pvalue, "n_targets": int(by_target.shape[0]),
                "n_episodes": int(d[b].size),
            }
        )  # fmt: skip
        if len(seeds) > 1:
            all_t = tg.groupby(["target", "seed"])[b].mean().unstack("seed")
            per_t = all_t.dropna()
            if per_t.shape[0] >= 3:
                within = seed_dependence(per_t.to_numpy())
                sd = between_seed_dependence(all_t.to_numpy())
                dep_rows.append(
                    {"benchmark": bench, "metric": metric, "beta": beta, "budget": b,
                     "shared_targets": int(per_t.shape[0]),
                     "within_correlation": within.mean_correlation,
                     "mean_correlation": sd.mean_correlation,
                     "duplicate_fraction": sd.duplicate_fraction,
                     "effective_seeds": sd.effective_seeds,
                     "too_dependent": sd.too_dependent}
                )  # fmt: skip
    return by_target


def _target_ci(gaps: Any, rng: np.random.Generator) -> dict[str, float]:
    """95% percentile bootstrap interval of the target-level mean gap (units: distinct
    targets, as the target-level test; expanded for few targets, `bootstrap_ci`'s default),
    NaN with fewer than two targets."""
    if len(gaps) < 2:
        return {"target_ci_low": float("nan"), "target_ci_high": float("nan")}
    ci = bootstrap_ci(gaps, level=0.95, method="percentile", rng=rng)
    return {"target_ci_low": float(ci.low), "target_ci_high": float(ci.high)}


def _trend_rows(
    target_gaps: dict[float, pd.DataFrame],
    bench: str,
    metric: str,
    betas: tuple[float, ...],
    budgets: tuple[int, ...],
    n_resamples: int,
    rng: Any,
) -> list[dict[str, Any]]:
    """The trend in beta per budget, units = distinct targets (mean-trend and exchangeable)."""
    trend_rows: list[dict[str, Any]] = []
    for b in budgets:
        mat = pd.concat([target_gaps[beta][b].rename(beta) for beta in betas], axis=1)
        exch = within_block_trend_test(
            mat.to_numpy(),
            scores=list(betas),
            n_resamples=n_resamples,
            rng=rng(bench, metric, b, "trend"),
        )
        res = mean_trend_test(
            mat.to_numpy(),
            scores=list(betas),
            n_resamples=n_resamples,
            rng=rng(bench, metric, b, "mean trend"),
        )
        trend_rows.append(
            {"benchmark": bench, "metric": metric, "budget": b,
             "statistic": res.statistic, "p": res.pvalue, "n_targets": res.n_blocks,
             "statistic_exchangeable": exch.statistic, "p_exchangeable": exch.pvalue,
             "monotone_means": bool(np.all(np.diff(mat.mean().to_numpy()) > 0)),
             "slope_skewness": res.skewness, "skew_flagged": res.skew_flagged()}
        )  # fmt: skip
    return trend_rows


def _consistency(
    sweep: pd.DataFrame, betas: tuple[float, ...], budgets: tuple[int, ...]
) -> dict[str, Any]:
    """Directional consistency of the Recall gap over beta x B x seed (n_ev = 3)."""
    main_sweep = sweep[(sweep["benchmark"] == "toolbench") & (sweep["metric"] == "recall")]
    per_seed_pos = main_sweep.groupby("seed")["gap"].apply(lambda g: int((g > 0).sum()))
    return {
        "positive_cells": int((main_sweep["gap"] > 0).sum()),
        "cells": len(main_sweep),
        "per_seed": {int(k): int(v) for k, v in per_seed_pos.items()},
        "per_seed_cells": len(betas) * len(budgets),
    }


def _table14(sweep: pd.DataFrame, benches: list[str]) -> list[dict[str, Any]]:
    """Table 14: evidence-size sensitivity at beta = .12."""
    t14 = []
    for bench in benches:
        s = sweep[(sweep["benchmark"] == bench) & (sweep["metric"] == "recall")]
        s = s[np.isclose(s["beta"], PRIMARY_BETA)]
        b400 = s[s["budget"] == 400]
        t14.append(
            {
                "benchmark": bench,
                "significant": int((s["p"] < 0.05).sum()),
                "positive": int((s["gap"] > 0).sum()),
                "cells": len(s),
                "b400_all_seeds_p01": bool((b400["p"] < 0.01).all()) if len(b400) else False,
                "b400_gap": float(b400["gap"].mean()) if len(b400) else float("nan"),
            }
        )
    return t14


def _membership(episodes: pd.DataFrame, benches: list[str]) -> list[dict[str, Any]]:
    """Evidence–OSU membership per construction (Sections 4.1, 6.1)."""
    mem_rows = []
    for bench in benches:
        ep = episodes[episodes["benchmark"] == bench]
        for construction in ("overlap", "disjoint"):
            counts = np.array(
                [int(c) for row in ep[f"{construction}_counts"] for c in row.split()], dtype=int
            )
            mem_rows.append(
                {
                    "benchmark": bench,
                    "construction": construction,
                    "evidence_steps": int(counts.size),
                    "mean_osus": float(counts.mean()),
                    "median_osus": float(np.median(counts)),
                    "evicted_fraction": float(np.mean(counts == 0)),
                    "mean_pool_osus": float(ep[f"{construction}_n_osus"].mean()),
                }
            )
    return mem_rows


def _cohesion(
    main: pd.DataFrame,
    alphas: tuple[float, ...],
    budgets: tuple[int, ...],
    n_resamples: int,
    rng: Any,
) -> list[dict[str, Any]]:
    """The cohesion-alpha variant (Appendix G.5): overlap − disjoint gap, target-level p."""
    coh_rows = []
    if alphas and cohesion_name("overlap", alphas[0]) in set(main["method"]):
        for metric in ("hit@2", "recall"):
            for a in alphas:
                d = gap_matrix(
                    main, cohesion_name("overlap", a), cohesion_name("disjoint", a), metric
                )
                _, _, tt = _target_level(d, budgets, n_resamples, rng("cohesion", metric, a))
                for b, t in zip(budgets, tt, strict=True):
                    coh_rows.append(
                        {"metric": metric, "alpha": a, "budget": b, "gap": float(d[b].mean()),
                         "target_p": t.pvalue}
                    )  # fmt: skip
    return coh_rows


def _structure(episodes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cell of each episode's planted evidence, and the evidence steps' properties."""
    struct = episodes.groupby(["benchmark", "cell"]).size().rename("episodes").reset_index()
    ev = episodes.groupby("benchmark")[["n_ev", "evidence_truncated", "evidence_with_entities"]]
    ev_stats = ev.sum().reset_index()
    ev_stats["truncated_fraction"] = ev_stats["evidence_truncated"] / ev_stats["n_ev"]
    ev_stats["with_entities_fraction"] = ev_stats["evidence_with_entities"] / ev_stats["n_ev"]
    return struct, ev_stats
