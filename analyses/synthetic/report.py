"""The synthetic benchmark's report module: its write step and the sensitivity grid's outputs.

The one module of :mod:`analyses.synthetic` that imports ``reports`` (docs/architecture.md,
"Layers"): the benchmark's other modules compute, this one turns results into files and words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osustat.analyses.protocol import BenchmarkRun
from osustat.provenance import write_json
from osustat.reports.figures import dose_response

from .report_render import budget_curves, near_far_figure, render_synthetic
from .report_sensitivity import effects_figure, render_sensitivity

__all__ = ["write_sensitivity", "write_synthetic"]


def write_synthetic(
    run: BenchmarkRun,
    analysis: Any,
    folder: Path,
    audit: str | None,
    *,
    n_episodes: int,
    seed: int,
    command: str,
) -> str:
    """The write step: records, membership, structure and the figures into `folder`; returns
    the report (the driver adds the provenance and writes ``report.md``)."""
    records, state = run.records, run.state
    records.to_parquet(folder / "records.parquet", index=False)
    records.to_csv(folder / "records.csv", index=False)
    state["run"].membership.to_csv(folder / "membership.csv", index=False)
    write_json(folder / "structure.json", state["run"].structure, sort_keys=True)
    figures = {
        "budget_curves": "budget_curves.png",
        "near_far": "near_far.png",
        "mmax": "mmax_sweep.png",
    }
    budget_curves(analysis.table9, folder / figures["budget_curves"])
    near_far_figure(analysis.near_far, folder / figures["near_far"])
    dose_response(
        analysis.mmax,
        folder / figures["mmax"],
        x="m_max",
        y="recall",
        group="budget",
        xlabel="M_max (memberships per step; 1 = disjoint)",
        ylabel="recall",
        title="OSU-Mem recall by M_max and budget (query level)",
    )
    text = render_synthetic(
        analysis,
        n_episodes=n_episodes,
        seed=seed,
        figures=figures,
        command=command,
        config=state["config"].as_dict(),
        robustness=state.get("sensitivity"),
    )
    return str(text) if audit is None else f"{text}\n\n{audit}"


def write_sensitivity(result: Any, out: Path) -> None:
    """The generator grid's outputs into `out`: ``grid.toml`` (the grid file as read),
    ``points.csv``, ``effects.csv``, ``summary.csv``, ``episode_means.parquet``,
    ``effects.png`` and ``report.md``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "grid.toml").write_text(Path(result.grid.source).read_text(encoding="utf-8"), "utf-8")
    result.points.to_csv(out / "points.csv", index=False)
    result.effects.to_csv(out / "effects.csv", index=False)
    result.summary.to_csv(out / "summary.csv", index=False)
    result.episode_means.to_parquet(out / "episode_means.parquet", index=False)
    effects_figure(result, out / "effects.png")
    text = render_sensitivity(result, figure="effects.png")
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
