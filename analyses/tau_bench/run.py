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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from osustat.analyses.protocol import Backend
from osustat.analyses.runner import child_seeds, run_tasks, sort_records
from osustat.retrieval import (
    QueryOutcome,
    Trajectory,
    outcomes_to_records,
)
from osustat.retrieval.contract import build_in
from osustat.retrieval.registry import MethodSpec, paper_methods, user_factories

from .data import Group, augment_group, focal_evidence, noise_sd

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BUDGETS",
    "MAIN_METHODS",
    "QUERY_KINDS",
    "QUERY_SIGMA",
    "SMALL_METHODS",
    "GroupQueries",
    "QuerySet",
    "evidence_sharing",
    "make_queries",
    "run_sweep",
    "run_sweeps",
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


@dataclass(frozen=True)
class QuerySet:
    """One sweep on a shared trajectory (:func:`run_sweeps`): the records' benchmark label,
    the methods (names), the records' seed, and `key`, which names the query construction:
    sets with equal keys must hold equal queries (their retrievals are done once).
    `keep`: the (method, budget) pairs whose retrieved steps the sweep's info keeps."""

    benchmark: str
    methods: tuple[str, ...]
    seed: int
    key: tuple[Any, ...]
    keep: tuple[tuple[str, int], ...] = ()


def _group_task(
    group: Group,
    emb: NDArray[np.float64],
    sets: tuple[tuple[QuerySet, GroupQueries], ...],
    factories: tuple[tuple[str, Callable[[], Any]], ...],
    budgets: tuple[int, ...],
    augment_seed: np.random.SeedSequence | None,
    copy_noise: str = "per-norm",
) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """One group's records and info per query set: each method's retriever is built once on
    the group's trajectory and answers every set that names it."""
    from threadpoolctl import threadpool_limits

    common: dict[str, Any] = {}
    positions = sets[0][1].positions
    with threadpool_limits(1):
        order: tuple[int, ...] | None = None
        evidence = list(sets[0][1].evidence)
        if augment_seed is not None:
            aug = augment_group(
                group, emb, np.random.default_rng(augment_seed), copy_noise=copy_noise
            )
            order, emb = aug.order, aug.embeddings
            evidence = [aug.evidence[p] for p in positions]
            common["gap_relaxed"] = aug.gap_relaxed
            common["placements"] = aug.placements
            common["copies"] = int(sum(aug.is_copy))
            common["sharing"] = [evidence_sharing(group, ev, order) for ev in evidence]
        traj = _trajectory(group, emb, order)
        t = traj.n_steps
        cells = [cell_of(group, ev, order) for ev in evidence]
        common["cells"] = cells
        qids = [f"{group.group_id}/src{pos}" for pos in positions]
        outcomes: list[list[QueryOutcome]] = [[] for _ in sets]
        infos: list[dict[str, Any]] = [{**common, "retrieved": {}} for _ in sets]
        for name, factory in factories:
            users = [i for i, (s, _) in enumerate(sets) if name in s.methods]
            if not users:
                continue
            retriever = build_in(factory, traj, group.group_id)
            done: dict[tuple[Any, ...], Any] = {}
            for i in users:
                qset, queries = sets[i]
                for k, ev in enumerate(evidence):
                    for b in budgets:
                        res = done.get((qset.key, k, b))
                        if res is None:
                            kwargs = {"evidence": ev} if retriever.oracle else {}
                            res = retriever.retrieve(queries.embeddings[k], b, time=t, **kwargs)
                            done[(qset.key, k, b)] = res
                        steps = tuple(res.steps.tolist())
                        if (name, b) in qset.keep:
                            infos[i]["retrieved"][(name, qids[k])] = steps
                        outcomes[i].append(
                            QueryOutcome(
                                qset.benchmark, group.group_id, qids[k], name, b, qset.seed,
                                steps, tuple(ev.tolist()), t, res.tokens, cells[k],
                            )
                        )  # fmt: skip
        task_of = dict(zip(qids, sets[0][1].tasks, strict=True))
        out = []
        for outs, info in zip(outcomes, infos, strict=True):
            rows = outcomes_to_records(outs, near_far=False)
            for r in rows:
                r["task"] = task_of[r["query_id"]]
            out.append((rows, info))
    return out


def run_sweeps(
    groups: Sequence[Group],
    embeddings: Sequence[NDArray[np.float64]],
    sets: Sequence[tuple[QuerySet, Sequence[GroupQueries]]],
    *,
    budgets: Sequence[int] = BUDGETS,
    augment: int | None = None,
    retrievers: Sequence[MethodSpec] = (),
    backend: Backend = Backend(),
    copy_noise: str = "per-norm",
    desc: str = "tau-bench",
) -> list[tuple[pd.DataFrame, list[dict[str, Any]]]]:
    """Several sweeps on one trajectory per group (unaugmented, or Stage D with the draws of
    seed `augment`): one task per group builds each retriever once for every query set.

    `sets` pairs each :class:`QuerySet` with its queries per group (the same focal sources in
    every set); the user `retrievers` join every set; `backend` is how the sweep runs
    (``analyses.runner.run_tasks``). Per set: records sorted (independent of the backend) and
    one info dict per group with queries (cells, Stage-D counts, under ``'retrieved'`` the
    steps of each (method, budget) of its `keep`) -- the same as one :func:`run_sweep` per set.
    """
    for qset, _ in sets:
        unknown = [m for m in qset.methods if m not in MAIN_METHODS]
        if unknown:
            raise ValueError(f"unknown `methods` {unknown}; choose from {list(MAIN_METHODS)}.")
    user = user_factories(retrievers, taken=MAIN_METHODS)
    names = [m for m in MAIN_METHODS if any(m in s.methods for s, _ in sets)]
    factories = tuple((m, MAIN_METHODS[m]) for m in names) + user
    mine = tuple(m for m, _ in user)
    sets = [(replace(s, methods=(*s.methods, *mine)), q) for s, q in sets]
    aug_seeds: list[Any] = (
        [None] * len(groups) if augment is None else list(child_seeds(augment + 1, len(groups)))
    )
    tasks = []
    for g, (group, emb, s) in enumerate(zip(groups, embeddings, aug_seeds, strict=True)):
        per_set = tuple((qset, qs[g]) for qset, qs in sets)
        if any(q.positions != per_set[0][1].positions for _, q in per_set):
            raise ValueError(f"group {group.group_id}: the query sets differ in focal sources.")
        if per_set[0][1].positions:
            tasks.append((group, emb, per_set, factories, tuple(budgets), s, copy_noise))
    results = run_tasks(_group_task, tasks, backend=backend, desc=desc, unit="group")
    import pandas as pd

    out = []
    for i in range(len(sets)):
        records = pd.DataFrame([r for res in results for r in res[i][0]])
        if not records.empty:
            records = sort_records(records, [*MAIN_METHODS, *mine])
        out.append((records, [res[i][1] for res in results]))
    return out


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
    keep: tuple[tuple[str, int], ...] = (),
    retrievers: Sequence[MethodSpec] = (),
    backend: Backend = Backend(),
    copy_noise: str = "per-norm",
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """One sweep (:func:`run_sweeps` with one query set): `methods` (names of
    :data:`MAIN_METHODS`) and the user `retrievers` over every group's queries; `augment`:
    on the Stage-D trajectory with the draws of `seed` (`copy_noise` its reading)."""
    qset = QuerySet(benchmark, tuple(methods), seed, ("queries",), keep)
    return run_sweeps(
        groups, embeddings, [(qset, queries)], budgets=budgets,
        augment=seed if augment else None, retrievers=retrievers, backend=backend,
        copy_noise=copy_noise, desc=benchmark,
    )[0]  # fmt: skip
