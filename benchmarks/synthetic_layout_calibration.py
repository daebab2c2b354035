"""Infer the synthetic layout from the paper's recency rows only (issue 14).

The paper's Budget-Truncated Replay and Sliding Window rows (Table 9: Hit@2 .000 up to B = 256
and <= .008 at 512; Recall ~.004 at B <= 128, .149/.136 at 256, .321/.314 at 512) are a
statement about *where evidence sits relative to the query*: with steps of ~15 tokens a budget
holds ~B/15 recent steps, so at most one evidence step is recent and it lies roughly 8-40 steps
before the query. These two methods look only at recency, so fitting the layout to them never
looks at a score of OSU-Mem or of any method under comparison.

Criterion (fixed before any candidate was run): the mean absolute difference between our and
the paper's 16 recency numbers (Replay and Window x Hit@2 and Recall x B in {64, 128, 256,
512}), among candidates whose structural statistics stay within the paper's (>= 190 episodes
with queries of 200, 850-960 queries, mean evidence 2.3-2.7). The candidates: spacing between
consecutive evidence steps in {(5,15), (10,30), (20,60), (30,90)} x query gap after the last
evidence step in {(1,16), (4,24), (8,40), (16,64)}, plus the first version's "segment" layout
for reference. Only Budget-Truncated Replay and Sliding Window are run.

    .venv/bin/python benchmarks/synthetic_layout_calibration.py [--episodes 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from osustat.analyses.synthetic.generator import (
    SEGMENT_CONFIG,
    GeneratorConfig,
    generate_episodes,
    structural_statistics,
)
from osustat.analyses.synthetic.paper_values import PAPER
from osustat.retrieval import BudgetTruncatedReplay, SlidingWindow
from osustat.retrieval.metrics import hit_at_k, recall

TABLE_9 = PAPER["table9"]

BUDGETS = (64, 128, 256, 512)
METHODS = {"Budget-Truncated Replay": BudgetTruncatedReplay, "Sliding Window": SlidingWindow}
SPACINGS = ((5, 15), (10, 30), (20, 60), (30, 90))
GAPS = ((1, 16), (4, 24), (8, 40), (16, 64))


def score(cfg: GeneratorConfig, episodes: int, seed: int) -> tuple[float, dict, dict]:
    eps = generate_episodes(episodes, seed, cfg)
    means: dict[tuple[str, int, str], list[float]] = {}
    for ep in eps:
        for name, factory in METHODS.items():
            r = factory().build(ep.trajectory)
            for q in ep.queries:
                for b in BUDGETS:
                    got = r.retrieve(q.embedding, b, time=q.time).steps
                    means.setdefault((name, b, "hit@2"), []).append(hit_at_k(got, q.evidence))
                    means.setdefault((name, b, "recall"), []).append(recall(got, q.evidence))
    ours = {k: float(np.mean(v)) for k, v in means.items()}
    err = []
    for (name, b, metric), v in ours.items():
        paper = TABLE_9[name][b][0 if metric == "hit@2" else 1]
        err.append(abs(v - paper))
    return float(np.mean(err)), ours, structural_statistics(eps)


def admissible(s: dict) -> bool:
    return (
        s["episodes_with_queries"] >= 190 * s["episodes"] / 200
        and 850 * s["episodes"] / 200 <= s["queries"] <= 960 * s["episodes"] / 200
        and 2.3 <= s["mean_evidence_per_query"] <= 2.7
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = [("segment (first version)", SEGMENT_CONFIG)]
    for sp, gap in itertools.product(SPACINGS, GAPS):
        rows.append((f"spread spacing {sp} gap {gap}", GeneratorConfig(spacing=sp, gap=gap)))
    head = "| candidate | MAE vs paper | admissible | queries | "
    head += " | ".join(f"Replay B={b} H/R" for b in BUDGETS)
    head += " | " + " | ".join(f"Window B={b} H/R" for b in BUDGETS) + " |"
    print(f"episodes = {args.episodes}, seed = {args.seed}")
    print(head)
    print("|" + "---|" * (4 + 2 * len(BUDGETS)))
    paper = " | ".join(
        f"{TABLE_9[m][b][0]:.3f}/{TABLE_9[m][b][1]:.3f}" for m in METHODS for b in BUDGETS
    )
    print(f"| paper | 0 | | 907 | {paper} |")
    best = None
    for label, cfg in rows:
        mae, ours, s = score(cfg, args.episodes, args.seed)
        ok = admissible(s)
        cells = " | ".join(
            f"{ours[(m, b, 'hit@2')]:.3f}/{ours[(m, b, 'recall')]:.3f}"
            for m in METHODS
            for b in BUDGETS
        )
        print(f"| {label} | {mae:.4f} | {ok} | {s['queries']} | {cells} |", flush=True)
        if ok and cfg.layout == "spread" and (best is None or mae < best[0]):
            best = (mae, label)
    print(f"\nchosen (lowest MAE among admissible spread candidates): {best}")


if __name__ == "__main__":
    main()
