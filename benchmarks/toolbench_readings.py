"""ToolBench under both reachability readings: the numbers of docs/toolbench_readings.md.

Reads two finished runs of ``osustat reproduce toolbench`` (their ``records.parquet`` and
``episodes.csv``), one per reading of the greedy selectors' reachability
(docs/retrieval.md), recomputes the statistics from those records and writes the markdown
that docs/toolbench.md quotes, so the docs' numbers come from the runs they describe:

    osustat reproduce toolbench --data ../shared/data/toolbench --out RUN_A --jobs 2
    osustat reproduce toolbench --data ../shared/data/toolbench --out RUN_B --jobs 2 \
        --choice reachability=members-only          (or osustat.reproduce(..., choices=...))
    nice .venv/bin/python benchmarks/toolbench_readings.py --all-steps RUN_A \
        --members-only RUN_B [--resamples 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osustat.analyses.toolbench.paper_values import PAPER

ROOT = Path(__file__).resolve().parents[1]

BUDGETS = (200, 400, 800, 1600)
BETAS = (0.04, 0.08, 0.12, 0.16, 0.20)
#: The paper's printed ToolBench values (Tables 3, 6, 14, 15), for comparison only: the one
#: table of printed values (analyses/toolbench/paper_values.py).
PAPER_TB = PAPER
PAPER6 = PAPER_TB["table6"]
PAPER15 = PAPER_TB["table15"]
PAPER14 = PAPER_TB["table14"]  # benchmark -> (significant, all positive, B=400 p<.01, gap)
PAPER3_FLAT = "/".join(f"{r:.3f}".lstrip("0") for _, r in PAPER_TB["table3"]["Flat Vector"])


def _stars(p: float) -> str:
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def _pp(x: float) -> str:
    return f"{100 * x:+.1f}"


def _sweep(a, metric: str, paper: dict) -> list[str]:
    c = a.combined[(a.combined["benchmark"] == "toolbench") & (a.combined["metric"] == metric)]
    out = []
    for beta in BETAS:
        row = c[np.isclose(c["beta"], beta)].set_index("budget")
        cells = [
            f"{_pp(row.loc[b, 'gap'])}{_stars(row.loc[b, 'target_p'])} ({paper[beta][k]})"
            for k, b in enumerate(BUDGETS)
        ]
        out.append(f"| {beta:.2f} | " + " | ".join(cells) + " |")
    return out


def _table3(a) -> list[str]:
    t3 = a.table3.set_index(["method", "budget", "metric"])["mean"]
    out = []
    for m in ("Flat Vector", "coverage-overlap-beta0.12", "coverage-disjoint-beta0.12"):
        cells = [f"{t3[(m, b, 'hit@2')]:.3f}/{t3[(m, b, 'recall')]:.3f}" for b in BUDGETS]
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    return out


def _survival(a) -> tuple[list[str], dict[str, int]]:
    """Table 6 cells: significance as printed vs target-level p < .05 here."""
    c = a.combined[(a.combined["benchmark"] == "toolbench") & (a.combined["metric"] == "recall")]
    counts = {"sig_paper": 0, "sig_both": 0, "sig_paper_b800": 0, "sig_both_b800": 0}
    for beta in BETAS:
        row = c[np.isclose(c["beta"], beta)].set_index("budget")
        for k, b in enumerate(BUDGETS):
            paper_sig = PAPER6[beta][k].endswith("*")
            ours = bool(row.loc[b, "target_p"] < 0.05 and row.loc[b, "gap"] > 0)
            if paper_sig:
                counts["sig_paper"] += 1
                counts["sig_both"] += ours
                if b >= 800:
                    counts["sig_paper_b800"] += 1
                    counts["sig_both_b800"] += ours
    return [], counts


def _unstarred_significant(a) -> tuple[int, int]:
    """Table 6 cells the paper left unstarred that are positive with target-level p < .05."""
    c = a.combined[(a.combined["benchmark"] == "toolbench") & (a.combined["metric"] == "recall")]
    hits = total = 0
    for beta in BETAS:
        row = c[np.isclose(c["beta"], beta)].set_index("budget")
        for k, b in enumerate(BUDGETS):
            if not PAPER6[beta][k].endswith("*"):
                total += 1
                hits += bool(row.loc[b, "target_p"] < 0.05 and row.loc[b, "gap"] > 0)
    return hits, total


def _summary(name: str, a) -> list[str]:
    """What survives under reading `name`: one bullet, numbers from the analysis."""
    _, cnt = _survival(a)
    hits, total = _unstarred_significant(a)
    t = a.trend[(a.trend["benchmark"] == "toolbench") & (a.trend["metric"] == "recall")]
    t = t.set_index("budget")
    trend = ", ".join(f"{t.loc[b, 'p']:.3g}" for b in BUDGETS)
    c = a.combined[(a.combined["benchmark"] == "toolbench") & (a.combined["metric"] == "recall")]
    b800 = c[c["budget"] >= 800]["gap"]
    t14 = a.table14.set_index("benchmark")
    sizes = "; ".join(
        f"n_ev = {label}: {t14.loc[bench, 'significant']}/12 (paper {PAPER14[bench][0]})"
        for bench, label in (("toolbench-nev2", 2), ("toolbench", 3), ("toolbench-nev4", 4))
        if bench in t14.index
    )
    flat = a.table3.set_index(["method", "budget", "metric"])["mean"]
    flat_r = "/".join(f"{flat[('Flat Vector', b, 'recall')]:.3f}" for b in BUDGETS)
    return [
        f"- **{name}**: of the paper's {cnt['sig_paper']} starred Table 6 cells, "
        f"{cnt['sig_both']} are positive with target-level p < .05 here "
        f"({cnt['sig_both_b800']} of {cnt['sig_paper_b800']} at B ≥ 800; the B ≥ 800 gaps "
        f"run {_pp(b800.min())} to {_pp(b800.max())} pp); of its {total} unstarred cells, "
        f"significant here: {hits}. Trend in β (Recall, mean-trend test, p at B = "
        f"200/400/800/1600): {trend}. Table 14, per-seed tests p < .05 of 12: {sizes}. "
        f"Cohesion α (G.5): {_cohesion(a)}. Flat Vector Recall {flat_r} (paper "
        f"{PAPER3_FLAT}).",
    ]


def _trend(a) -> list[str]:
    t = a.trend[(a.trend["benchmark"] == "toolbench")]
    out = []
    for metric in ("recall", "hit@2"):
        g = t[t["metric"] == metric].set_index("budget")
        ps = " / ".join(f"{g.loc[b, 'p']:.3g}" for b in BUDGETS)
        px = " / ".join(f"{g.loc[b, 'p_exchangeable']:.3g}" for b in BUDGETS)
        mono = " / ".join("yes" if g.loc[b, "monotone_means"] else "no" for b in BUDGETS)
        out.append(f"| {metric} | {ps} | {px} | {mono} |")
    return out


def _table14(a) -> list[str]:
    """Table 14 beside the paper's, plus the target-level count of the same 4 budgets."""
    c = a.combined[(a.combined["metric"] == "recall") & np.isclose(a.combined["beta"], 0.12)]
    out = []
    for bench, label in (("toolbench-nev2", 2), ("toolbench", 3), ("toolbench-nev4", 4)):
        r = a.table14[a.table14["benchmark"] == bench]
        if r.empty:
            out.append(f"| {label} | not run | | | | |")
            continue
        r = r.iloc[0]
        paper = PAPER14[bench]
        tl = c[c["benchmark"] == bench]
        tl_sig = int(((tl["target_p"] < 0.05) & (tl["gap"] > 0)).sum())
        out.append(
            f"| {label} | {r['significant']}/{r['cells']} ({paper[0]}) | "
            f"{r['positive']}/{r['cells']} ({paper[1]}) | "
            f"{'yes' if r['b400_all_seeds_p01'] else 'no'} ({paper[2]}) | "
            f"{_pp(r['b400_gap'])} ({paper[3]}) | {tl_sig}/{len(tl)} |"
        )
    return out


def _cohesion(a) -> str:
    if a.cohesion.empty:
        return "not run"
    g = a.cohesion
    r = g[g["metric"] == "recall"]["gap"]
    h = g[g["metric"] == "hit@2"]["gap"]
    sig = int((g["target_p"] < 0.05).sum())
    return (
        f"Recall {_pp(r.min())} to {_pp(r.max())} pp, Hit@2 {_pp(h.min())} to {_pp(h.max())} "
        f"pp; {sig} of {len(g)} cells with target-level p < .05"
    )


def _seed_dep(a) -> str:
    d = a.seed_dep
    d = d[(d["benchmark"] == "toolbench") & (d["metric"] == "recall")]
    d = d[np.isclose(d["beta"], 0.12)].set_index("budget")
    parts = [
        f"B={b}: within {d.loc[b, 'within_correlation']:.2f}, "
        f"between {d.loc[b, 'mean_correlation']:.2f}, "
        f"effective seeds {d.loc[b, 'effective_seeds']:.2f}"
        for b in BUDGETS
    ]
    flagged = int(a.seed_dep["too_dependent"].sum())
    return "; ".join(parts) + f" (flagged too dependent: {flagged} of {len(a.seed_dep)})"


def main() -> None:
    sys.path.insert(0, str(ROOT))
    args = _arguments()
    runs = {
        "all-steps": [Path(d) for d in args.all_steps],
        "members-only": [Path(d) for d in args.members_only],
    }
    res, benches = _analyses(runs, args.resamples)
    L = [
        "# ToolBench under both reachability readings (generated)",
        "",
        "Generated by `benchmarks/toolbench_readings.py` from the runs of "
        "`osustat reproduce toolbench` listed under each reading (G1/G2 splits, seeds "
        "42/123/456, 200 episodes per seed; "
        f"benchmarks {', '.join(sorted(benches))}; statistics recomputed from their records "
        f"with {args.resamples:,} "
        "resamples). Do not edit by hand. Stars: target-level sign-flip p (one unit per "
        "distinct target, averaged over the seeds it appears in; two-sided); paper in "
        "parentheses with its Fisher stars.",
        "",
    ]
    for name, a in res.items():
        L += _reading_section(name, a, runs[name])
    summary = [
        f"What survives ({args.resamples:,} resamples; generated by "
        "`benchmarks/toolbench_readings.py` with docs/toolbench_readings.md, do not edit by "
        "hand):",
        "",
    ]
    for name, a in res.items():
        summary += _summary(name, a)
    L[4:4] = ["## What survives", "", *summary[2:], ""]
    _write(args.out, L, summary)


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    # one run per reading, or several whose evidence sizes together make one (each
    # benchmark -- toolbench, toolbench-nev2, toolbench-nev4 -- from exactly one run)
    ap.add_argument("--all-steps", required=True, nargs="+")
    ap.add_argument("--members-only", required=True, nargs="+")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--out", default=str(ROOT / "docs" / "toolbench_readings.md"))
    return ap.parse_args()


def _analyses(runs: dict[str, list[Path]], resamples: int) -> tuple[dict, set[str]]:
    """Each reading's analysis from its runs' records (each benchmark from exactly one run),
    and the benchmarks read."""
    from osustat import validate_records
    from osustat.analyses.toolbench.analysis import analyze_toolbench

    res = {}
    benches: set[str] = set()
    for name, dirs in runs.items():
        parts = [pd.read_parquet(d / "records.parquet") for d in dirs]
        owners: dict[str, Path] = {}
        for d, part in zip(dirs, parts, strict=True):
            for bench in part["benchmark"].unique():
                if bench in owners:
                    raise ValueError(f"{bench} is in both {owners[bench]} and {d}")
                owners[bench] = d
        recs = validate_records(pd.concat(parts, ignore_index=True))
        eps = pd.concat([pd.read_csv(d / "episodes.csv") for d in dirs], ignore_index=True)
        res[name] = analyze_toolbench(recs, eps, n_resamples=resamples)
        benches |= set(recs["benchmark"].unique())
    return res, benches


def _reading_section(name: str, a: Any, dirs: list[Path]) -> list[str]:
    """One reading's runs and tables."""
    _, cnt = _survival(a)
    L = [f"## Reading `{name}`", ""]
    for d in dirs:
        prov = json.loads((d / "provenance.json").read_text(encoding="utf-8"))
        settings = json.loads(prov["inputs"][-1]["path"])
        L.append(
            f"- Run `{prov['command']}`: choices {prov['choices']}, evidence sizes "
            f"{settings['options'].get('n_evs', '(3, 2, 4)')}, inputs digest "
            f"`{prov['inputs_digest'][:12]}`."
        )
    L += [
        "",
        "**Table 3** (β = .12, n_ev = 3, Hit@2/Recall)",
        "",
        "| method | B=200 | B=400 | B=800 | B=1600 |",
        "|---|---|---|---|---|",
        *_table3(a),
        "",
        "**Table 6** (overlap − disjoint Recall, pp)",
        "",
        "| β | B=200 | B=400 | B=800 | B=1600 |",
        "|---|---|---|---|---|",
        *_sweep(a, "recall", PAPER6),
        "",
        "**Table 15** (Hit@2, pp)",
        "",
        "| β | B=200 | B=400 | B=800 | B=1600 |",
        "|---|---|---|---|---|",
        *_sweep(a, "hit@2", PAPER15),
        "",
        "**Trend in β** (p at B = 200/400/800/1600, one-sided: the mean-trend test — "
        "each target's least-squares slope of its gap on β, sign-flip test of mean slope "
        "0, `osustat.trend.mean_trend_test` — and beside it the within-target "
        "exchangeability test, whose null is no effect of β at all; whether the five "
        "mean gaps strictly increase)",
        "",
        "| metric | p (mean trend) | p (exchangeable) | monotone means |",
        "|---|---|---|---|",
        *_trend(a),
        "",
        f"**Cohesion α (G.5)**: {_cohesion(a)}.",
        "",
        f"**Seed dependence** (Recall, β = .12): {_seed_dep(a)}.",
        "",
        "**Table 14** (overlap − disjoint Recall, β = .12, 3 seeds × 4 budgets; the "
        "paper's per-seed tests, paper in parentheses; last column: budgets with a "
        "positive gap and target-level p < .05)",
        "",
        "| n_ev | per-seed p < .05 | positive | B = 400 all seeds p < .01 | B = 400 gap, pp "
        "| target-level p < .05 |",
        "|---|---|---|---|---|---|",
        *_table14(a),
        "",
        f"**Which Table 6 claims survive**: of the {cnt['sig_paper']} cells the paper stars, "
        f"{cnt['sig_both']} are positive with target-level p < .05 here; at B >= 800 "
        f"{cnt['sig_both_b800']} of {cnt['sig_paper_b800']}.",
        "",
    ]
    return L


def _write(out: str, L: list[str], summary: list[str]) -> None:
    """The page, and its summary into docs/toolbench.md when the page is the shipped one."""
    Path(out).write_text("\n".join(L) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    doc = ROOT / "docs" / "toolbench.md"
    body = doc.read_text(encoding="utf-8")
    begin, end = "<!-- readings:begin -->", "<!-- readings:end -->"
    if out == str(ROOT / "docs" / "toolbench_readings.md") and begin in body:
        head, rest = body.split(begin)
        _, tail = rest.split(end)
        text = "\n".join(summary)
        doc.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")
        print(f"updated {doc}")


if __name__ == "__main__":
    main()
