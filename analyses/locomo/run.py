"""The LoCoMo sweep: every method at every budget on every query, one task per conversation.

Budgets are matched to turn costs: the paper's τ-bench budgets {64, 128, 256, 512} hold about
4, 8, 16 and 32 steps ("At B=64 only ~4 steps fit", Appendix D.3: ~16 tokens a step). A LoCoMo
turn costs ~28 tokens (mean over the 5,882 turns, captions in), so the same numbers of turns fit
in B in {128, 256, 512, 1024}; the primary budget B = 512 matches τ-bench's primary B = 256.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from osustat.retrieval import QueryOutcome, outcomes_to_records
from osustat.retrieval.contract import build_in
from osustat.retrieval.registry import MethodSpec, paper_methods, user_factories

from ..protocol import Backend
from ..runner import run_tasks, sort_records
from .build import ConvSteps, LocomoQuery, trajectory

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BENCHMARK", "BUDGETS", "MAIN_METHODS", "PRIMARY_BUDGET", "run_sweep"]

BENCHMARK = "locomo"
BUDGETS = (128, 256, 512, 1024)
PRIMARY_BUDGET = 512

#: The paper's real-data method set (its τ-bench Table 11 rows), read from the registry.
MAIN_METHODS: dict[str, Callable[[], Any]] = paper_methods("tau-bench")


def _conv_task(
    steps: ConvSteps,
    emb: NDArray[np.float64],
    queries: tuple[LocomoQuery, ...],
    q_emb: NDArray[np.float64],
    benchmark: str,
    methods: tuple[tuple[str, Callable[[], Any]], ...],
    budgets: tuple[int, ...],
) -> list[dict[str, Any]]:
    from threadpoolctl import threadpool_limits

    from osustat.retrieval import OSUConfig, build_osus, evidence_membership

    with threadpool_limits(1):
        traj = trajectory(steps, emb)
        outcomes = []
        for name, factory in methods:
            retriever = build_in(factory, traj, steps.sample_id)
            for k, q in enumerate(queries):
                ev = np.array(q.evidence, dtype=np.int64)
                for b in budgets:
                    kwargs = {"evidence": ev} if retriever.oracle else {}
                    res = retriever.retrieve(q_emb[k], b, time=q.time, **kwargs)
                    outcomes.append(
                        QueryOutcome(
                            benchmark,
                            steps.sample_id,
                            q.query_id,
                            name,
                            b,
                            0,
                            tuple(res.steps.tolist()),
                            q.evidence,
                            q.time,
                            res.tokens,
                            q.cell,
                        )
                    )
        rows = outcomes_to_records(outcomes, near_far=False)
        cat = {q.query_id: q.category for q in queries}
        for r in rows:
            r["category"] = cat[r["query_id"]]
        # evidence-OSU membership at the full conversation (overlap vs disjoint, Section 6.1)
        ev_all = sorted({i for q in queries for i in q.evidence})
        for label, m in (("overlap", 5), ("disjoint", 1)):
            stats = evidence_membership(build_osus(traj, OSUConfig(m_max=m)), ev_all)
            rows.append({"_membership": label, "episode_id": steps.sample_id, **stats})
    return rows


def run_sweep(
    steps: Sequence[ConvSteps],
    embeddings: Sequence[NDArray[np.float64]],
    queries: Sequence[tuple[LocomoQuery, ...]],
    query_embeddings: Sequence[NDArray[np.float64]],
    *,
    methods: Sequence[str] = tuple(MAIN_METHODS),
    budgets: Sequence[int] = BUDGETS,
    benchmark: str = BENCHMARK,
    retrievers: Sequence[MethodSpec] = (),
    backend: Backend | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Records of every (method, budget, query), sorted; and evidence-OSU membership per
    conversation. Independent of the `backend` (jobs, scheduler, checkpoint, progress)."""
    unknown = [m for m in methods if m not in MAIN_METHODS]
    if unknown:
        raise ValueError(f"unknown `methods` {unknown}; choose from {list(MAIN_METHODS)}.")
    factories = tuple((m, MAIN_METHODS[m]) for m in methods)
    factories += user_factories(retrievers, taken=MAIN_METHODS)
    tasks = [
        (s, e, q, qe, benchmark, factories, tuple(budgets))
        for s, e, q, qe in zip(steps, embeddings, queries, query_embeddings, strict=True)
        if q
    ]
    results = run_tasks(
        _conv_task, tasks, backend=backend or Backend(), desc=benchmark, unit="conversation"
    )
    import pandas as pd

    flat = [r for rows in results for r in rows]
    membership = pd.DataFrame([r for r in flat if "_membership" in r])
    records = pd.DataFrame([r for r in flat if "_membership" not in r])
    if not records.empty:
        records = sort_records(
            records, [*MAIN_METHODS, *(m for m, _ in factories if m not in MAIN_METHODS)]
        )
    return records, membership
