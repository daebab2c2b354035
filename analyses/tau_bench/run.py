"""τ-bench sweep: queries per variant, Stage D, and every method through ``run_tasks``.

One task per concatenated group: build its trajectory (unaugmented or Stage-D augmented),
build each retriever once, retrieve every query at every budget at the group's final step,
and return records (``retrieval.outcomes_to_records``) with a ``task`` column.

Query variants (benchmarks): ``tau-bench`` -- the paper's noisy mean of the focal evidence
embeddings (noise σ = .25 read per coordinate by default, or per norm: see
:func:`.data.noise_sd`; then l2-normalized);
``tau-bench-weak-query`` -- one random evidence step plus the same noise (§6.3);
``tau-bench-natural-query`` -- the task's instruction text embedded verbatim (beyond the
paper; query kind ``'instruction'``); ``tau-bench-augmented`` -- the noisy-mean query on the
Stage-D cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from osustat.analyses.runner import child_seeds, run_tasks, sort_records
from osustat.retrieval import (
    QueryOutcome,
    Trajectory,
    outcomes_to_records,
)
from osustat.retrieval.registry import MethodSpec, paper_methods, user_factories

from .data import Group, augment_group, focal_evidence, noise_sd

__all__ = [
    "BUDGETS",
    "MAIN_METHODS",
    "QUERY_KINDS",
    "QUERY_SIGMA",
    "SMALL_METHODS",
    "GroupQueries",
    "evidence_sharing",
    "make_queries",
    "run_sweep",
]

BUDGETS = (64, 128, 256, 512)
QUERY_SIGMA = 0.25

MAIN_METHODS: dict[str, Callable[[], Any]] = paper_methods("tau-bench")
SMALL_METHODS = ("Flat Vector", "OSU-Mem", "OSU-Mem (disjoint)")


@dataclass(frozen=True)
class GroupQueries:
    """The queries of one group: one per focal source (position, task, evidence, embedding)."""

    positions: tuple[int, ...]
    tasks: tuple[str, ...]
    evidence: tuple[NDArray[np.int64], ...]
    embeddings: NDArray[np.float64]


QUERY_KINDS = ("noisy-mean", "weak", "instruction")


def _noisy(v: NDArray[np.float64], rng: np.random.Generator, noise: str) -> NDArray[np.float64]:
    d = v.shape[0]
    w = v + rng.normal(0.0, noise_sd(QUERY_SIGMA, d, noise), d)
    return w / np.linalg.norm(w)


def make_queries(
    group: Group,
    emb: NDArray[np.float64],
    kind: str,
    rng: np.random.Generator,
    instruction_emb: dict[str, NDArray[np.float64]] | None = None,
    *,
    noise: str = "per-coordinate",
) -> GroupQueries:
    """Queries of every focal source of `group` for query construction `kind`.

    `kind` is ``'noisy-mean'``, ``'weak'`` or ``'instruction'`` (needs `instruction_emb`, keyed
    by episode key). `noise` is the reading of the paper's σ = .25 (``'per-coordinate'`` or
    ``'per-norm'``). Random draws happen in source order from `rng`.
    """
    pos, tasks, evs, qs = [], [], [], []
    for src in group.sources:
        if not src.focal:
            continue
        ev = focal_evidence(src)
        if kind == "noisy-mean":
            q = _noisy(emb[ev].mean(axis=0), rng, noise)
        elif kind == "weak":
            q = _noisy(emb[ev[int(rng.integers(ev.size))]], rng, noise)
        elif kind == "instruction":
            if instruction_emb is None:
                raise ValueError("instruction queries need the instruction embeddings.")
            q = np.asarray(instruction_emb[src.episode.episode_key], dtype=np.float64)
        else:
            raise ValueError(f"unknown query kind {kind!r}.")
        pos.append(src.position)
        tasks.append(src.episode.task)
        evs.append(ev)
        qs.append(q)
    d = emb.shape[1]
    return GroupQueries(
        tuple(pos), tuple(tasks), tuple(evs), np.vstack(qs) if qs else np.zeros((0, d))
    )


def _trajectory(group: Group, emb: NDArray[np.float64], order: Sequence[int] | None) -> Trajectory:
    idx = list(range(group.n_steps)) if order is None else list(order)
    return Trajectory.from_steps(
        emb,
        [group.costs[i] for i in idx],
        tools=[group.tools[i] for i in idx],
        entities=[group.entities[i] for i in idx],
        subgoals=[group.subgoals[i] for i in idx],
        source=[f"src{group.source_of[i] + 1}" for i in idx],
    )


def cell_of(group: Group, ev: NDArray[np.int64], order: Sequence[int] | None = None) -> str:
    from osustat import label_cell

    idx = [int(i) if order is None else int(order[int(i)]) for i in ev]
    return label_cell([group.tools[i] for i in idx], [group.entities[i] for i in idx]).value


def evidence_sharing(
    group: Group, ev: NDArray[np.int64], order: Sequence[int] | None = None
) -> tuple[float, float, float]:
    """(entity, tool, subgoal) pairwise sharing rates of one evidence set."""
    from osustat import sharing_rates

    idx = [int(i) if order is None else int(order[int(i)]) for i in ev]
    r = sharing_rates(
        [group.tools[i] for i in idx],
        [group.entities[i] for i in idx],
        subgoals=[group.subgoals[i] for i in idx],
    )
    return (r.entity, r.tool, r.subgoal)


def _group_task(
    group: Group,
    emb: NDArray[np.float64],
    queries: GroupQueries,
    benchmark: str,
    methods: tuple[tuple[str, Callable[[], Any]], ...],
    budgets: tuple[int, ...],
    seed: int,
    augment_seed: np.random.SeedSequence | None,
    keep: tuple[tuple[str, int], ...] = (),
    copy_noise: str = "per-norm",
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from threadpoolctl import threadpool_limits

    info: dict[str, Any] = {}
    with threadpool_limits(1):
        order: tuple[int, ...] | None = None
        evidence = list(queries.evidence)
        if augment_seed is not None:
            aug = augment_group(
                group, emb, np.random.default_rng(augment_seed), copy_noise=copy_noise
            )
            order, emb = aug.order, aug.embeddings
            evidence = [aug.evidence[p] for p in queries.positions]
            info["gap_relaxed"] = aug.gap_relaxed
            info["placements"] = aug.placements
            info["copies"] = int(sum(aug.is_copy))
            info["sharing"] = [evidence_sharing(group, ev, order) for ev in evidence]
        traj = _trajectory(group, emb, order)
        t = traj.n_steps
        cells = [cell_of(group, ev, order) for ev in evidence]
        info["cells"] = cells
        info["retrieved"] = {}
        outcomes = []
        for name, factory in methods:
            retriever = factory().build(traj)
            for k, (pos, ev) in enumerate(zip(queries.positions, evidence, strict=True)):
                for b in budgets:
                    kwargs = {"evidence": ev} if retriever.oracle else {}
                    res = retriever.retrieve(queries.embeddings[k], b, time=t, **kwargs)
                    if (name, b) in keep:
                        qid = f"{group.group_id}/src{pos}"
                        info["retrieved"][(name, qid)] = tuple(res.steps.tolist())
                    outcomes.append(
                        QueryOutcome(
                            benchmark,
                            group.group_id,
                            f"{group.group_id}/src{pos}",
                            name,
                            b,
                            seed,
                            tuple(res.steps.tolist()),
                            tuple(ev.tolist()),
                            t,
                            res.tokens,
                            cells[k],
                        )
                    )
        rows = outcomes_to_records(outcomes, near_far=False)
        task_of = {
            f"{group.group_id}/src{p}": tk
            for p, tk in zip(queries.positions, queries.tasks, strict=True)
        }
        for r in rows:
            r["task"] = task_of[r["query_id"]]
    return rows, info


def run_sweep(
    groups: Sequence[Group],
    embeddings: Sequence[NDArray[np.float64]],
    queries: Sequence[GroupQueries],
    *,
    benchmark: str,
    methods: Sequence[str],
    budgets: Sequence[int] = BUDGETS,
    seed: int = 0,
    augment: bool = False,
    jobs: int = 1,
    progress: bool = True,
    keep: tuple[tuple[str, int], ...] = (),
    retrievers: Sequence[MethodSpec] = (),
    scheduler: Any = None,
    checkpoint: Any = None,
    copy_noise: str = "per-norm",
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Run `methods` (names of :data:`MAIN_METHODS`) and the user `retrievers` over every
    group's queries; records sorted (independent of `jobs` and of the backend).

    The second value holds one dict per group with queries: its cells, Stage-D counts, and
    under ``'retrieved'`` the steps retrieved by each (method, budget) in `keep`.
    `scheduler` (Dask) and `checkpoint` (resuming) go to ``run_tasks``; `copy_noise` is the
    Stage-D copy noise reading (with `augment`).
    """
    unknown = [m for m in methods if m not in MAIN_METHODS]
    if unknown:
        raise ValueError(f"unknown `methods` {unknown}; choose from {list(MAIN_METHODS)}.")
    factories = tuple((m, MAIN_METHODS[m]) for m in methods)
    factories += user_factories(retrievers, taken=MAIN_METHODS)
    aug_seeds: list[Any] = (
        list(child_seeds(seed + 1, len(groups))) if augment else [None] * len(groups)
    )
    tasks = [
        (g, e, q, benchmark, factories, tuple(budgets), seed, s, keep, copy_noise)
        for g, e, q, s in zip(groups, embeddings, queries, aug_seeds, strict=True)
        if q.positions
    ]
    results = run_tasks(
        _group_task,
        tasks,
        jobs=jobs,
        scheduler=scheduler,
        checkpoint=checkpoint,
        progress=progress,
        desc=benchmark,
        unit="group",
    )
    rows = [r for recs, _ in results for r in recs]
    records = pd.DataFrame(rows)
    if not records.empty:
        records = sort_records(
            records, [*MAIN_METHODS, *(m for m, _ in factories if m not in MAIN_METHODS)]
        )
    return records, [info for _, info in results]
