"""Run the ToolBench planted-retrieval sweep as records (Sections 5.1-5.2, 6.1, 6.5, App. G).

Steps and queries are embedded once (the caller's encoder; the pipeline uses the real
all-MiniLM-L6-v2 through the shared disk cache). One task per chunk of episodes goes through
``analyses.runner.run_tasks``: each episode becomes a :class:`~osustat.retrieval.Trajectory`,
every method retrieves the target's query at every budget, and the retrievals become records.

Methods: ``Flat Vector``, ``Flat + MMR``, ``Disjoint Hierarchy``; the coverage-guided greedy
(Section 5.2) over the overlap pool (M_max = 5) and the disjoint pool (M_max = 1) at every
coverage bonus b, named ``coverage-overlap-beta<b>`` / ``coverage-disjoint-beta<b>``; and at
evidence size 3 the cohesion variant (Appendix G.5) ``cohesion-overlap-alpha<a>`` /
``cohesion-disjoint-alpha<a>``. The pools are built once per episode and construction
(Table 8 defaults) is the only difference between overlap and disjoint.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from osustat.analyses.protocol import Backend
from osustat.analyses.runner import run_tasks
from osustat.cells import label_cell
from osustat.retrieval import (
    CohesionOSU,
    CoverageGuidedOSU,
    DisjointHierarchy,
    FlatMMR,
    FlatVector,
    OSUConfig,
    QueryOutcome,
    Trajectory,
    evidence_membership,
    outcomes_to_records,
)
from osustat.retrieval.contract import build_in
from osustat.retrieval.registry import PAPER_METHODS, MethodSpec, user_factories

from .data import ToolTrajectory
from .episodes import PlantedEpisode

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ALPHAS",
    "BENCHMARKS",
    "BETAS",
    "BUDGETS",
    "StepTable",
    "ToolbenchRun",
    "cohesion_name",
    "coverage_name",
    "episode_trajectory",
    "run_episodes",
    "step_table",
]

BUDGETS = (200, 400, 800, 1600)
BETAS = (0.04, 0.08, 0.12, 0.16, 0.20)
ALPHAS = (0.0, 0.005, 0.01, 0.02, 0.04)
BENCHMARKS = {3: "toolbench", 2: "toolbench-nev2", 4: "toolbench-nev4"}
BASELINES = PAPER_METHODS["toolbench"]


def coverage_name(construction: str, beta: float) -> str:
    """``coverage-overlap-beta0.12`` (the claims file's names)."""
    return f"coverage-{construction}-beta{beta:.2f}"


def cohesion_name(construction: str, alpha: float) -> str:
    return f"cohesion-{construction}-alpha{alpha:.3f}"


def benchmark_name(n_ev: int) -> str:
    return BENCHMARKS.get(n_ev, f"toolbench-nev{n_ev}")


@dataclass(frozen=True, eq=False)
class StepTable:
    """Every loaded step, flattened: embeddings and annotations indexed by (trajectory, step)."""

    offsets: NDArray[np.int64]
    embeddings: NDArray[np.float32]
    costs: NDArray[np.float64]
    tools: tuple[str, ...]
    entities: tuple[tuple[str, ...], ...]
    subgoals: NDArray[np.int64]
    truncated: NDArray[np.bool_]
    query_embeddings: NDArray[np.float32]

    def rows(self, refs: NDArray[np.int64]) -> NDArray[np.int64]:
        return self.offsets[refs[:, 0]] + refs[:, 1]


def step_table(trajectories: tuple[ToolTrajectory, ...], encoder: Any) -> StepTable:
    """Embed every step text and every query with `encoder` (anything with ``encode``)."""
    steps = [s for t in trajectories for s in t.steps]
    offsets = np.cumsum([0] + [len(t.steps) for t in trajectories])[:-1].astype(np.int64)
    emb = np.asarray(encoder.encode([s.text for s in steps]), dtype=np.float32)
    qemb = np.asarray(encoder.encode([t.query for t in trajectories]), dtype=np.float32)
    return StepTable(
        offsets=offsets,
        embeddings=emb,
        costs=np.array([s.cost for s in steps], dtype=np.float64),
        tools=tuple(s.tool for s in steps),
        entities=tuple(s.entities for s in steps),
        subgoals=np.array([s.subgoal for s in steps], dtype=np.int64),
        truncated=np.array([s.truncated for s in steps], dtype=bool),
        query_embeddings=qemb,
    )


def episode_trajectory(table: StepTable, ep: PlantedEpisode) -> Trajectory:
    rows = table.rows(ep.steps)
    return Trajectory.from_steps(
        table.embeddings[rows].astype(np.float64),
        table.costs[rows],
        tools=[table.tools[r] for r in rows],
        entities=[table.entities[r] for r in rows],
        subgoals=table.subgoals[rows].tolist(),
    )


def method_names(
    betas: tuple[float, ...] = BETAS, alphas: tuple[float, ...] = ALPHAS
) -> tuple[str, ...]:
    """Every method name a ToolBench run can write (user retrievers must not reuse one)."""
    names = list(BASELINES)
    for construction in ("overlap", "disjoint"):
        names += [coverage_name(construction, b) for b in betas]
        names += [cohesion_name(construction, a) for a in alphas]
    return tuple(names)


def _retrievers(
    traj: Trajectory,
    betas: tuple[float, ...],
    alphas: tuple[float, ...],
    extra: tuple[tuple[str, Callable[[], Any]], ...] = (),
    reachability: str = "all-steps",
    episode: str = "",
) -> tuple[dict[str, Any], dict[str, Any]]:
    out: dict[str, Any] = {
        "Flat Vector": FlatVector().build(traj),
        "Flat + MMR": FlatMMR().build(traj),
        "Disjoint Hierarchy": DisjointHierarchy().build(traj),
    }
    for name, factory in extra:
        out[name] = build_in(factory, traj, episode)
    pools = {}
    for construction, cfg in (("overlap", OSUConfig()), ("disjoint", OSUConfig(m_max=1))):
        cov = CoverageGuidedOSU(osu_config=cfg, reachability=reachability).build(traj)
        pools[construction] = cov.pool_
        for b in betas:
            r = copy.copy(cov)  # shares the built pool; retrieval never mutates it
            r.beta = b
            out[coverage_name(construction, b)] = r
        if alphas:
            coh = CohesionOSU(osu_config=cfg, reachability=reachability)
            coh.trajectory_ = traj
            coh.__dict__.update({k: v for k, v in vars(cov).items() if k.startswith("_")})
            coh.pool_ = cov.pool_
            for a in alphas:
                r = copy.copy(coh)
                r.alpha = a
                out[cohesion_name(construction, a)] = r
    return out, pools


def _chunk_task(
    table: StepTable,
    episodes: list[PlantedEpisode],
    budgets: tuple[int, ...],
    betas: tuple[float, ...],
    alphas: tuple[float, ...],
    extra: tuple[tuple[str, Callable[[], Any]], ...] = (),
    reachability: str = "all-steps",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from threadpoolctl import threadpool_limits

    rows: list[dict[str, Any]] = []
    info: list[dict[str, Any]] = []
    with threadpool_limits(1):
        for ep in episodes:
            traj = episode_trajectory(table, ep)
            ev_rows = table.rows(ep.steps[ep.evidence])
            cell = label_cell(
                [table.tools[r] for r in ev_rows], [set(table.entities[r]) for r in ev_rows]
            ).value
            q = table.query_embeddings[ep.target].astype(np.float64)
            retrievers, pools = _retrievers(
                traj, betas, alphas if ep.n_ev == 3 else (), extra, reachability, ep.episode_id
            )
            outcomes = []
            for name, r in retrievers.items():
                kwargs = {"evidence": ep.evidence} if r.oracle else {}
                for b in budgets:
                    res = r.retrieve(q, b, **kwargs)
                    outcomes.append(
                        QueryOutcome(
                            benchmark_name(ep.n_ev),
                            ep.episode_id,
                            ep.query_id,
                            name,
                            b,
                            ep.seed,
                            tuple(res.steps.tolist()),
                            tuple(ep.evidence.tolist()),
                            traj.n_steps,
                            res.tokens,
                            None,  # a target's cell differs between seeds: episodes.csv has it
                        )
                    )
            rows.extend(outcomes_to_records(outcomes, near_far=False))
            row: dict[str, Any] = {
                "benchmark": benchmark_name(ep.n_ev),
                "episode_id": ep.episode_id,
                "query_id": ep.query_id,
                "seed": ep.seed,
                "n_ev": ep.n_ev,
                "target": ep.target,
                "cell": cell,
                "evidence_truncated": int(table.truncated[ev_rows].sum()),
                "evidence_with_entities": int(sum(bool(table.entities[r]) for r in ev_rows)),
            }
            for construction, pool in pools.items():
                for k, v in evidence_membership(pool, ep.evidence).items():
                    row[f"{construction}_{k}"] = v
                row[f"{construction}_n_osus"] = pool.n_osus
                counts = pool.membership_counts()[ep.evidence]
                row[f"{construction}_counts"] = " ".join(str(int(c)) for c in counts)
            info.append(row)
    return rows, info


@dataclass(frozen=True)
class ToolbenchRun:
    records: pd.DataFrame
    episodes: pd.DataFrame


def run_episodes(
    table: StepTable,
    episodes: list[PlantedEpisode],
    *,
    budgets: tuple[int, ...] = BUDGETS,
    betas: tuple[float, ...] = BETAS,
    alphas: tuple[float, ...] = ALPHAS,
    chunk: int = 10,
    retrievers: Sequence[MethodSpec] = (),
    backend: Backend = Backend(),
    reachability: str = "all-steps",
) -> ToolbenchRun:
    """Run every method and the user `retrievers` over `episodes`; records sorted stably.

    The step table is the runner's ``shared`` object: a Dask worker receives it once, and a
    chunk task carries only its episodes. `backend` (worker processes, Dask, resuming, the
    progress bar) goes to ``run_tasks``; the records do not depend on it. `reachability` is
    the greedy selectors' declared choice (:data:`osustat.retrieval.osumem.REACHABILITY`).

    Record ids: ``episode_id`` is the target (``t<index>``), the unit shared across seeds;
    ``seed`` is the seed; the records carry no ``cell`` (a target's planted evidence, hence
    its cell, differs between seeds; ``episodes.csv`` has each episode's cell).
    """
    from osustat.retrieval.osumem import REACHABILITY

    if reachability not in REACHABILITY:
        raise ValueError(
            f"`reachability` must be one of {list(REACHABILITY)}; got {reachability!r}."
        )
    extra = user_factories(retrievers, taken=method_names(tuple(betas), tuple(alphas)))
    tasks = [
        (
            episodes[i : i + chunk],
            tuple(budgets),
            tuple(betas),
            tuple(alphas),
            extra,
            reachability,
        )
        for i in range(0, len(episodes), chunk)
    ]
    results = run_tasks(
        _chunk_task, tasks, backend=backend, shared=table, desc="toolbench episodes", unit="chunk"
    )
    import pandas as pd  # on use: retrieval-only workers import this module

    records = pd.DataFrame([r for rs, _ in results for r in rs])
    info = pd.DataFrame([r for _, rs in results for r in rs])
    if not records.empty:
        records = records.sort_values(
            ["benchmark", "method", "budget", "seed", "episode_id", "query_id", "metric"],
            kind="stable",
        ).reset_index(drop=True)
    return ToolbenchRun(records, info)
