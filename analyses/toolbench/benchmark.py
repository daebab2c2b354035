"""The ToolBench probe on the benchmark protocol: load, plant, run, analyze and write.

:data:`BENCHMARK` implements :class:`analyses.protocol.Benchmark` (``osustat reproduce
toolbench`` runs it through :mod:`analyses.driver`). Writes ``records.parquet`` /
``records.csv`` (benchmarks ``toolbench``, ``toolbench-nev2``, ``toolbench-nev4``),
``episodes.csv`` (one row per episode: target, evidence cell, evidence-OSU memberships),
``structure.json`` (data and design counts) and the dose-response figures; the driver adds
``report.md`` and ``provenance.json``. Same inputs and seeds give identical files.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from osustat.analyses.protocol import (
    Benchmark,
    BenchmarkRun,
    ClaimSelection,
    DataSpec,
    Option,
    RunSpec,
    integer,
    integers,
    load_choices,
)

from .paper_values import PAPER

__all__ = [
    "BENCHMARK",
    "TOOLBENCH_SEEDS",
    "ToolBench",
    "analyze_toolbench_run",
    "run_toolbench",
]

TOOLBENCH_SEEDS = (42, 123, 456)
N_EVS = (3, 2, 4)  # the primary evidence size first; 2 and 4 for Table 14
EPISODES = 200
BACKGROUND = 500


def run_toolbench(spec: RunSpec) -> BenchmarkRun:
    """Load (G.1), plant the episodes per seed and evidence size, sweep through the one runner."""
    from osustat.schema import validate_records

    from .data import load_toolbench
    from .episodes import build_episodes, design_summary
    from .run import benchmark_name, run_episodes, step_table

    seeds = spec.seeds or TOOLBENCH_SEEDS
    n_evs = tuple(spec.options.get("n_evs", N_EVS))
    episodes = spec.episodes or EPISODES
    background = int(spec.options.get("background", BACKGROUND))
    splits = {"g1-g2": "G1-G2", "g1-g2-g3": "G1-G2-G3"}[spec.choices["trajectory-groups"]]
    loaded = load_toolbench(spec.data[0], splits=splits)
    trajectories = loaded.trajectories
    table = step_table(trajectories, spec.text_encoder())
    all_eps = []
    design: dict[str, Any] = {}
    for n_ev in n_evs:
        by_seed = {
            s: build_episodes(
                trajectories,
                table.query_embeddings,
                n_episodes=episodes,
                seed=s,
                n_ev=n_ev,
                background=background,
            )
            for s in seeds
        }
        design[benchmark_name(n_ev)] = design_summary(by_seed, trajectories)
        all_eps.extend(e for eps in by_seed.values() for e in eps)
    run = run_episodes(
        table, all_eps, retrievers=spec.retrievers, backend=spec.backend,
        reachability=spec.choices["reachability"],
    )  # fmt: skip
    records = validate_records(run.records)
    state = {"episodes": run.episodes, "load": loaded.summary(), "design": design}
    return BenchmarkRun(records, state)


def analyze_toolbench_run(run: BenchmarkRun, spec: RunSpec) -> Any:
    """The analysis step: Tables 3, 6, 14-16, membership, G.5, trend, seed dependence."""
    from .analysis import analyze_toolbench

    return analyze_toolbench(
        run.records,
        run.state["episodes"],
        n_resamples=spec.n_resamples,
        progress=spec.backend.progress,
    )


class ToolBench(Benchmark):
    """The ToolBench planted-retrieval probe on the protocol (analyses.protocol)."""

    name = "toolbench"
    description = "ToolBench answer trajectories with planted evidence (Appendix G.1)"
    data = DataSpec("directory", "one ToolBench data directory")
    choices = load_choices("osustat.analyses.toolbench", "toolbench")
    claims = ClaimSelection(
        "Audit of the paper's ToolBench claims", benchmark_prefixes=("toolbench",),
        bootstrap_resamples=1000,
    )  # fmt: skip
    references = ("Flat Vector", "coverage-overlap-beta0.12", "Disjoint Hierarchy")
    #: The paper's printed values its report compares with (written beside the report).
    paper_values = MappingProxyType(PAPER)
    multi_seed = True
    counts_episodes = True
    datasets = ("toolbench",)
    options = (
        Option(
            "--n-evs", "evidence sizes planted, comma-separated; must include the primary 3 "
            f"(default {','.join(map(str, N_EVS))})", default=N_EVS, convert=integers(1),
        ),
        Option(
            "--background", f"background steps per episode (default {BACKGROUND})",
            default=BACKGROUND, convert=integer(1),
        ),
    )  # fmt: skip

    def methods(self) -> tuple[str, ...]:
        from .run import method_names

        return tuple(method_names())

    def check(self, spec: RunSpec) -> None:
        n_evs = tuple(spec.options.get("n_evs", N_EVS))
        if 3 not in n_evs:
            raise ValueError("the evidence sizes must include the primary 3.")

    run = staticmethod(run_toolbench)
    analyze = staticmethod(analyze_toolbench_run)

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        """Files and report (:func:`analyses.toolbench.report.write_toolbench`)."""
        from .report import write_toolbench

        return write_toolbench(
            run, analysis, folder, audit, command=spec.command, choices=dict(spec.choices)
        )


BENCHMARK = ToolBench()
