"""Run every Table 9 method (and the M_max sweep) over the synthetic benchmark as records.

One task per episode: generate it from its own child seed, build each retriever once
(Table 8's full-batch rebuild per episode), retrieve every query at every budget, and turn the
retrievals into records (``retrieval.outcomes_to_records``). Episodes run through the one
runner (``analyses.runner.run_tasks``, with the run's ``Backend``: worker processes or Dask);
the records are sorted before they are returned, so the output does not depend on the backend.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from osustat.analyses.protocol import Backend
from osustat.analyses.runner import child_seeds, run_tasks
from osustat.retrieval import (
    OSUConfig,
    OSUMem,
    QueryOutcome,
    build_osus,
    evidence_membership,
    outcomes_to_records,
)
from osustat.retrieval.base import BaseRetriever
from osustat.retrieval.contract import build_in
from osustat.retrieval.registry import MethodSpec, paper_methods, user_factories

from .generator import GeneratorConfig, generate_episode, structural_statistics

DEFAULT_CONFIG = GeneratorConfig()

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BUDGETS",
    "MAIN_METHODS",
    "MMAX_SWEEP",
    "SyntheticRun",
    "method_factories",
    "run_synthetic",
]

BUDGETS = (64, 128, 256, 512)

#: The paper's Table 9 rows, in its order, and how to build each.
MAIN_METHODS: dict[str, Callable[[], Any]] = paper_methods("synthetic")

#: M_max values run on top of the main methods (1 is "OSU-Mem (disjoint)", 5 is "OSU-Mem").
MMAX_SWEEP = {m: f"OSU-Mem (M_max={m})" for m in (2, 3, 4, 6)}


@dataclass(frozen=True)
class SyntheticRun:
    """Records and the generated data's statistics of one synthetic run."""

    records: pd.DataFrame
    structure: dict[str, float]
    membership: pd.DataFrame
    n_episodes: int
    seed: int
    config: GeneratorConfig = DEFAULT_CONFIG


def method_factories() -> dict[str, Callable[[], BaseRetriever]]:
    """Every method a synthetic run can use: Table 9's rows, then the M_max sweep."""
    methods = dict(MAIN_METHODS)
    for m, name in MMAX_SWEEP.items():
        methods[name] = functools.partial(OSUMem, osu_config=OSUConfig(m_max=m))
    return methods


def _episode_task(
    index: int,
    seed_seq: np.random.SeedSequence,
    master_seed: int,
    budgets: tuple[int, ...],
    config: GeneratorConfig | None = None,
    method_names: tuple[str, ...] | None = None,
    with_membership: bool = True,
    extra: tuple[tuple[str, Callable[[], Any]], ...] = (),
) -> tuple[list[dict[str, Any]], dict[str, float], list[dict[str, Any]]]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small matrices: one BLAS thread is many times faster
        ep = generate_episode(f"ep{index:03d}", np.random.default_rng(seed_seq), config)
        structure = structural_statistics([ep])
        if not ep.queries:
            return [], structure, []
        methods = method_factories()
        if method_names is not None:
            methods = {k: methods[k] for k in method_names}
        methods.update(extra)
        outcomes = []
        for name, factory in methods.items():
            retriever = build_in(factory, ep.trajectory, ep.episode_id)
            for q, cell in zip(ep.queries, ep.cells, strict=True):
                for b in budgets:
                    kwargs = {"evidence": q.evidence} if retriever.oracle else {}
                    res = retriever.retrieve(q.embedding, b, time=q.time, **kwargs)
                    outcomes.append(
                        QueryOutcome(
                            "synthetic",
                            ep.episode_id,
                            q.query_id,
                            name,
                            b,
                            master_seed,
                            tuple(res.steps.tolist()),
                            tuple(q.evidence.tolist()),
                            q.time,
                            res.tokens,
                            cell,
                        )
                    )
        membership: list[dict[str, Any]] = []
        for label, cfg in (
            ()
            if not with_membership
            else (
                ("overlap (M_max=5)", OSUConfig()),
                ("disjoint (M_max=1)", OSUConfig(m_max=1)),
            )
        ):
            pool = build_osus(ep.trajectory, cfg)
            for q in ep.queries:
                row = evidence_membership(pool, q.evidence)
                membership.append(
                    {
                        "construction": label,
                        "episode_id": ep.episode_id,
                        "query_id": q.query_id,
                        **row,
                    }
                )
        return outcomes_to_records(outcomes), structure, membership


def run_synthetic(
    n_episodes: int = 200,
    seed: int = 0,
    *,
    budgets: tuple[int, ...] = BUDGETS,
    config: GeneratorConfig | None = None,
    methods: tuple[str, ...] | None = None,
    retrievers: Sequence[MethodSpec] = (),
    backend: Backend = Backend(),
) -> SyntheticRun:
    """Generate the benchmark and run every method; see the module docstring.

    Parameters
    ----------
    n_episodes : int
    seed : int
        Master seed; episode ``i`` uses child ``i`` of ``SeedSequence(seed)``.
    budgets : tuple of int
    config : GeneratorConfig, optional
        The generator's open choices (default: ``GeneratorConfig()``, the spread layout).
    methods : tuple of str, optional
        Run only these methods (names of :func:`method_factories`); default all.
    retrievers : sequence of MethodSpec
        User retrievers (``retrieval.registry.load_retriever``) run beside the methods; their
        records come after the paper's methods, in the order given.
    backend : Backend
        How the episodes run (``analyses.runner.run_tasks``: worker processes, a Dask
        cluster, a checkpoint folder for resuming, the progress bar); the records do not
        depend on it.
    """
    if n_episodes < 1:
        raise ValueError(f"`n_episodes` must be >= 1; got {n_episodes}.")
    known = method_factories()
    if methods is not None:
        unknown = [m for m in methods if m not in known]
        if unknown or not methods:
            raise ValueError(f"unknown `methods` {unknown}; choose from {list(known)}.")
    extra = user_factories(retrievers, taken=known)
    cfg = GeneratorConfig() if config is None else config
    tasks = [
        (i, c, seed, tuple(budgets), cfg, methods, methods is None, extra)
        for i, c in enumerate(child_seeds(seed, n_episodes))
    ]
    results = run_tasks(_episode_task, tasks, backend=backend, desc="synthetic episodes", unit="ep")

    import pandas as pd  # on use: retrieval-only workers import this module

    rows = [r for recs, _, _ in results for r in recs]
    names = [*MAIN_METHODS, *MMAX_SWEEP.values(), *(name for name, _ in extra)]
    order = {name: k for k, name in enumerate(names)}
    records = pd.DataFrame(rows)
    if not records.empty:
        records["_m"] = records["method"].map(order)
        records = (
            records.sort_values(["_m", "budget", "episode_id", "query_id", "metric"], kind="stable")
            .drop(columns="_m")
            .reset_index(drop=True)
        )
    # structural statistics are query-weighted sums over episodes: recompute on the whole
    structure = _merge_structure([s for _, s, _ in results])
    membership = pd.DataFrame([m for _, _, ms in results for m in ms])
    return SyntheticRun(records, structure, membership, n_episodes, seed, cfg)


def _merge_structure(parts: list[dict[str, float]]) -> dict[str, float]:
    total_q = sum(p["queries"] for p in parts)
    weighted = (
        "mean_evidence_per_query",
        "e_plus_fraction",
        "identical_signature_fraction",
        "same_action_fraction",
        "subgoal_shared_fraction",
        "t_plus_e_plus_fraction",
    )
    out: dict[str, float] = {
        "episodes": sum(p["episodes"] for p in parts),
        "episodes_with_queries": sum(p["episodes_with_queries"] for p in parts),
        "queries": total_q,
        "min_steps": min(p["min_steps"] for p in parts),
        "max_steps": max(p["max_steps"] for p in parts),
    }
    for key in weighted:
        out[key] = (
            sum(p[key] * p["queries"] for p in parts if p["queries"]) / total_q
            if total_q
            else float("nan")
        )
    return out
