"""τ-bench structure figures for ``structure.json`` and the report: sharing marginals, evidence
distances, cross-source sharing, query ranks, same-task twins, agents, Stage-D placement.

Every function reads groups, queries or sweep infos and returns plain JSON-able values.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .data import MIN_GAP, Group, twins
from .formats import Episode
from .run import GroupQueries, evidence_sharing

__all__ = [
    "agents",
    "cross_source_sharing",
    "distances",
    "marginals",
    "query_ranks",
    "stage_d_summary",
    "twin_counts",
]


def _summarize(rows: list[tuple[float, float, float]]) -> dict[str, Any]:
    a = np.asarray(rows, dtype=float).reshape(-1, 3)
    out: dict[str, Any] = {"queries": int(a.shape[0])}
    if not a.shape[0]:
        return out
    for k, view in enumerate(("entity", "tool", "subgoal")):
        out[view] = {
            "mean": float(np.mean(a[:, k])),
            "median": float(np.median(a[:, k])),
            "zero_fraction": float(np.mean(a[:, k] == 0)),
        }
    out["all_three_fraction"] = float(np.mean((a > 0).all(axis=1)))
    out["all_three_count"] = int((a > 0).all(axis=1).sum())
    out["zero_in_some_view_fraction"] = float(np.mean((a == 0).any(axis=1)))
    return out


def marginals(groups: list[Group], queries: list[GroupQueries]) -> dict[str, Any]:
    """Appendix C marginals: pairwise entity / tool / subgoal sharing of each query's evidence."""
    rows = [
        evidence_sharing(group, ev)
        for group, q in zip(groups, queries, strict=True)
        for ev in q.evidence
    ]
    return _summarize(rows)


def cross_source_sharing(groups: list[Group]) -> dict[str, float]:
    """Fraction of pairs of tool-call steps sharing an entity or tool: same vs cross source."""
    same = [0, 0]
    cross = [0, 0]
    for g in groups:
        idx = [i for i, t in enumerate(g.tools) if t is not None]
        for a_pos, i in enumerate(idx):
            for j in idx[a_pos + 1 :]:
                shared = bool(g.entities[i] & g.entities[j]) or g.tools[i] == g.tools[j]
                bucket = same if g.source_of[i] == g.source_of[j] else cross
                bucket[0] += int(shared)
                bucket[1] += 1
    return {
        "same_source": same[0] / same[1] if same[1] else float("nan"),
        "cross_source": cross[0] / cross[1] if cross[1] else float("nan"),
        "same_pairs": same[1],
        "cross_pairs": cross[1],
    }


def distances(groups: list[Group], queries: list[GroupQueries]) -> dict[str, float]:
    d = [
        g.n_steps - int(i)
        for g, q in zip(groups, queries, strict=True)
        for ev in q.evidence
        for i in ev
    ]
    if not d:
        return {"mean": float("nan"), "over_50": float("nan")}
    a = np.asarray(d, dtype=float)
    return {"mean": float(a.mean()), "over_50": float(np.mean(a > 50))}


def query_ranks(
    embs: list[NDArray[np.float64]], queries: list[GroupQueries]
) -> dict[str, float | int]:
    """Rank (1 = most similar by cosine) of every focal evidence step among its group's steps.

    How far a query construction is from random: a random query puts the median evidence rank
    near half the group length.
    """
    ranks: list[int] = []
    sizes: list[int] = []
    for emb, q in zip(embs, queries, strict=True):
        for k, ev in enumerate(q.evidence):
            sims = emb @ q.embeddings[k]
            order = np.argsort(-sims, kind="stable")
            pos = np.empty(order.size, dtype=np.int64)
            pos[order] = np.arange(1, order.size + 1)
            ranks.extend(int(pos[int(i)]) for i in ev)
            sizes.append(emb.shape[0])
    if not ranks:
        return {"pairs": 0}
    return {
        "pairs": len(ranks),
        "median_rank": float(np.median(ranks)),
        "mean_rank": float(np.mean(ranks)),
        "top10_fraction": float(np.mean(np.asarray(ranks) <= 10)),
        "median_group_steps": float(np.median(sizes)),
    }


def twin_counts(groups: list[Group]) -> dict[str, dict[str, int]]:
    """Focal evidence steps with an exact-text twin in another source of the same group, by
    file: ``{file: {evidence_steps, twin_any_source, twin_same_task}}`` plus ``'all'``."""
    out: dict[str, dict[str, int]] = {}
    for g in groups:
        for file, any_twin, same_task in twins(g):
            for key in (file, "all"):
                c = out.setdefault(
                    key, {"evidence_steps": 0, "twin_any_source": 0, "twin_same_task": 0}
                )
                c["evidence_steps"] += 1
                c["twin_any_source"] += int(any_twin)
                c["twin_same_task"] += int(same_task)
    return dict(sorted(out.items()))


def agents(episodes: list[Episode]) -> dict[str, Any]:
    """Agents by file, how many files share an agent with another file, task x agent units."""
    by_file: dict[str, Counter[str]] = {}
    for ep in episodes:
        by_file.setdefault(Path(ep.source_file).name, Counter())[ep.agent] += 1
    files_of: dict[str, set[str]] = {}
    for f, c in by_file.items():
        for a in c:
            files_of.setdefault(a, set()).add(f)
    shared = {a: sorted(fs) for a, fs in sorted(files_of.items()) if len(fs) > 1}
    sharing_files = sorted({f for fs in shared.values() for f in fs})
    return {
        "by_file": {f: dict(sorted(c.items())) for f, c in sorted(by_file.items())},
        "shared_agents": shared,
        "files_sharing_an_agent": sharing_files,
        "tasks": len({ep.task for ep in episodes}),
        "task_agent_units": len({(ep.task, ep.agent) for ep in episodes}),
    }


def stage_d_summary(infos: list[dict[str, Any]], n_queries: int) -> dict[str, Any]:
    """Stage-D placement counted per focal evidence step, and post-augmentation sharing."""
    plans = [p for i in infos for p in i.get("placements", ())]
    infeasible = [p for p in plans if not p.gap_met]
    spacing = Counter(p.planned_gap for p in infeasible)
    rows = [r for i in infos for r in i.get("sharing", ())]
    return {
        "copies": sum(i.get("copies", 0) for i in infos),
        "evidence_steps": len(plans),
        "gap_met": len(plans) - len(infeasible),
        "gap_infeasible": len(infeasible),
        "infeasible_spacing": {str(k): v for k, v in sorted(spacing.items())},
        "realized_gap_below_min": sum(p.realized_gap < MIN_GAP for p in plans),
        "segment_median": float(np.median([p.segment for p in plans])) if plans else None,
        "sharing": _summarize(rows),
        "queries": n_queries,
    }
