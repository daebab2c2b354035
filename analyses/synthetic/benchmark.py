"""The synthetic benchmark on the protocol: generate, run, analyze and write.

:data:`BENCHMARK` implements :class:`analyses.protocol.Benchmark` (``osustat reproduce
synthetic`` runs it through :mod:`analyses.driver`). Writes ``records.parquet`` and
``records.csv`` (the long record schema), ``structure.json`` (the generated data's structural
statistics), ``membership.csv`` (evidence-OSU membership per query) and the figures
``budget_curves.png``, ``near_far.png`` and ``mmax_sweep.png`` (and ``.svg``); the driver adds
``report.md`` and ``provenance.json``. The same seed gives byte-identical records whatever the
jobs, and the same command line byte-identical files.

Its ``--sensitivity`` is its own generator grid (``grid.toml``,
:mod:`analyses.synthetic.sensitivity`), run into ``out/sensitivity/``; the robustness verdicts
go into ``report.md``.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from osustat.analyses.protocol import (
    Backend,
    Benchmark,
    BenchmarkRun,
    ClaimSelection,
    DataSpec,
    Option,
    RunSpec,
    load_choices,
)

from .paper_values import PAPER

__all__ = [
    "BENCHMARK",
    "Synthetic",
    "analyze_synthetic_run",
    "reproduce_synthetic_sensitivity",
    "run_synthetic_benchmark",
]

#: The paper's methods user retrievers are compared with (means and paired tests).
USER_REFERENCES = ("OSU-Mem", "Flat Vector", "Tree Abstraction")
EPISODES = 200


def run_synthetic_benchmark(spec: RunSpec) -> BenchmarkRun:
    """Generate the episodes and run every Table 9 method through the one runner."""
    from osustat.schema import validate_records

    from .generator import GeneratorConfig
    from .run import run_synthetic

    config = GeneratorConfig(layout=spec.choices["layout"])
    run = run_synthetic(
        spec.episodes or EPISODES,
        spec.seed,
        config=config,
        retrievers=spec.retrievers,
        backend=spec.backend,
    )
    records = validate_records(run.records)  # the contract holds before anything is written
    return BenchmarkRun(records, {"run": run, "config": config})


def analyze_synthetic_run(run: BenchmarkRun, spec: RunSpec) -> Any:
    """The analysis step: Table 9, near/far, the M_max sweep, the claim checks."""
    from .analysis import analyze_synthetic

    return analyze_synthetic(run.state["run"], n_resamples=spec.n_resamples)


class Synthetic(Benchmark):
    """The synthetic benchmark on the protocol (analyses.protocol)."""

    name = "synthetic"
    description = "generated episodes with the paper's factor structure (Sections 3.2, 5.1)"
    data = DataSpec("none", "generated; no input files")
    choices = load_choices("osustat.analyses.synthetic", "synthetic")
    claims = ClaimSelection(
        "Audit of the paper's synthetic claims", benchmark_prefixes=("synthetic",)
    )
    references = USER_REFERENCES
    #: The paper's printed values its report compares with (written beside the report).
    paper_values = MappingProxyType(PAPER)
    multi_seed = False
    counts_episodes = True
    options = (
        Option(
            "--layout", "same as --choice layout=VALUE", ("spread", "segment"),
            choice="layout",
        ),
    )  # fmt: skip

    def methods(self) -> tuple[str, ...]:
        from .run import method_factories

        return tuple(method_factories())

    def check(self, spec: RunSpec) -> None:
        from .generator import GeneratorConfig

        GeneratorConfig(layout=spec.choices["layout"])  # validates before anything runs

    def load_grid(self, path: Path | None) -> Any:
        """The generator sensitivity grid (``grid.toml`` or `path`): the benchmark's own."""
        from .grid import load_grid

        return load_grid(path)

    def sensitivity(self, grid: Any, spec: RunSpec, folder: Path) -> Any:
        """Run the generator grid into `folder`; its summary goes into the report."""
        return reproduce_synthetic_sensitivity(folder, grid, backend=spec.backend)

    run = staticmethod(run_synthetic_benchmark)
    analyze = staticmethod(analyze_synthetic_run)

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        """Files and report (:func:`analyses.synthetic.report.write_synthetic`)."""
        from .report import write_synthetic

        n = spec.episodes or EPISODES
        return write_synthetic(
            run, analysis, folder, audit, n_episodes=n, seed=spec.seed, command=spec.command
        )


BENCHMARK = Synthetic()


def reproduce_synthetic_sensitivity(
    out: Path,
    grid: Any,
    *,
    backend: Backend = Backend(),
) -> Any:
    """Run the generator sensitivity grid and write its outputs to `out`; returns the summary.

    `backend` is how the grid's one sweep runs (``analyses.runner.run_tasks``).

    Writes ``grid.toml`` (the grid file as read), ``points.csv``, ``effects.csv``,
    ``summary.csv``, ``episode_means.parquet``, ``report.md`` and ``effects.png``.
    """
    from .grid import load_grid
    from .report import write_sensitivity
    from .sensitivity import run_sensitivity

    spec = grid if not isinstance(grid, (str, Path)) and grid is not None else load_grid(grid)
    result = run_sensitivity(spec, backend=backend)
    write_sensitivity(result, Path(out))
    return result.summary
