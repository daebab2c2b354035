"""``osustat reproduce synthetic``: run, analyze and write the synthetic benchmark's outputs.

Writes into ``out``: ``records.parquet`` and ``records.csv`` (the long record schema),
``structure.json`` (the generated data's structural statistics), ``membership.csv``
(evidence-OSU membership per query), ``report.md`` and the figures ``budget_curves.png`` and
``near_far.png`` and ``mmax_sweep.png``. The same seed gives byte-identical files.

With ``sensitivity=True`` it also runs the generator sensitivity grid
(``analyses.synthetic.sensitivity``) into ``out/sensitivity/`` and adds its robustness verdicts
to ``report.md``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osustat._validation import renamed

__all__ = ["ReproduceResult", "reproduce_synthetic", "reproduce_synthetic_sensitivity"]

#: The paper's methods shown beside user retrievers in the report.
USER_REFERENCES = ("OSU-Mem", "Flat Vector", "Tree Abstraction")


@dataclass(frozen=True)
class ReproduceResult:
    out: Path
    n_records: int
    seconds: float


def reproduce_synthetic(
    out: Path,
    *,
    episodes: int = 200,
    seed: int = 0,
    jobs: int = 1,
    n_resamples: int | None = None,
    progress: bool = True,
    layout: str = "spread",
    sensitivity: bool = False,
    grid: Path | None = None,
    retrievers: Sequence[Any] = (),
    scheduler: Any = None,
    checkpoint: Path | None = None,
    resamples: int | None = None,
) -> ReproduceResult:
    """Run the synthetic benchmark end to end and write its outputs to `out`.

    `layout` is the generator's layout (``"spread"``, the default inferred from the paper's
    recency rows, or ``"segment"``, the first version's); with `sensitivity` the grid
    (`grid`, default the shipped ``grid.toml``) runs too, into ``out/sensitivity``.
    `retrievers` (``MethodSpec`` of user retrievers) run beside the paper's methods and get a
    report section; `scheduler` (Dask) and `checkpoint` (resuming) go to the runner.
    `n_resamples` is the number of sign flips per test (old name `resamples`, kept as an
    alias).
    """
    resamples = renamed(n_resamples, resamples, "n_resamples", "resamples", 10_000)
    from osustat import validate_records
    from osustat.analyses.synthetic.grid import load_grid
    from osustat.reports.figures import dose_response
    from osustat.reports.synthetic import budget_curves, near_far_figure, render_synthetic
    from osustat.reports.user_methods import render_user_methods
    from osustat.retrieval.registry import user_factories

    from .analysis import analyze_synthetic
    from .generator import GeneratorConfig
    from .run import method_factories, run_synthetic

    start = time.perf_counter()
    config = GeneratorConfig(layout=layout)  # validates `layout` before anything is written
    user_factories(retrievers, taken=method_factories())  # so does a retriever's name
    grid_spec = load_grid(grid) if sensitivity else None  # a bad grid fails before the run
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = None
    if grid_spec is not None:
        summary = reproduce_synthetic_sensitivity(
            out / "sensitivity",
            grid_spec,
            jobs=jobs,
            progress=progress,
            scheduler=scheduler,
            checkpoint=checkpoint,
        )
    run = run_synthetic(
        episodes,
        seed,
        jobs=jobs,
        progress=progress,
        config=config,
        retrievers=retrievers,
        scheduler=scheduler,
        checkpoint=checkpoint,
    )
    records = validate_records(run.records)  # the contract holds before anything is written
    records.to_parquet(out / "records.parquet", index=False)
    records.to_csv(out / "records.csv", index=False)
    run.membership.to_csv(out / "membership.csv", index=False)
    (out / "structure.json").write_text(
        json.dumps(run.structure, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    analysis = analyze_synthetic(run, n_resamples=resamples)
    figures = {
        "budget_curves": "budget_curves.png",
        "near_far": "near_far.png",
        "mmax": "mmax_sweep.png",
    }
    budget_curves(analysis.table9, out / figures["budget_curves"])
    near_far_figure(analysis.near_far, out / figures["near_far"])
    dose_response(
        analysis.mmax,
        out / figures["mmax"],
        x="m_max",
        y="recall",
        group="budget",
        xlabel="M_max (memberships per step; 1 = disjoint)",
        ylabel="recall",
        title="OSU-Mem recall by M_max and budget (query level)",
    )
    command = f"osustat reproduce synthetic --out DIR --episodes {episodes} --seed {seed}"
    if layout != "spread":
        command += f" --layout {layout}"
    if sensitivity:
        command += " --sensitivity" + (f" --grid {grid}" if grid is not None else "")
    command += "".join(f" --retriever {r.source or r.name}" for r in retrievers)
    text = render_synthetic(
        analysis,
        n_episodes=episodes,
        seed=seed,
        figures=figures,
        command=command,
        config=config.as_dict(),
        robustness=summary,
    )
    if retrievers:
        names = [r.name for r in retrievers]
        text += "\n\n" + render_user_methods(records, names, references=USER_REFERENCES)
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
    return ReproduceResult(out, len(records), time.perf_counter() - start)


def reproduce_synthetic_sensitivity(
    out: Path,
    grid: Any,
    *,
    jobs: int = 1,
    progress: bool = True,
    scheduler: Any = None,
    checkpoint: Path | None = None,
) -> Any:
    """Run the generator sensitivity grid and write its outputs to `out`; returns the summary.

    Writes ``grid.toml`` (the grid file as read), ``points.csv``, ``effects.csv``,
    ``summary.csv``, ``episode_means.parquet``, ``report.md`` and ``effects.png``.
    """
    from osustat.analyses.synthetic.grid import load_grid
    from osustat.reports.synthetic_sensitivity import effects_figure, render_sensitivity

    from .sensitivity import run_sensitivity

    spec = grid if not isinstance(grid, (str, Path)) and grid is not None else load_grid(grid)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = run_sensitivity(
        spec, jobs=jobs, progress=progress, scheduler=scheduler, checkpoint=checkpoint
    )
    (out / "grid.toml").write_text(Path(spec.source).read_text(encoding="utf-8"), "utf-8")
    result.points.to_csv(out / "points.csv", index=False)
    result.effects.to_csv(out / "effects.csv", index=False)
    result.summary.to_csv(out / "summary.csv", index=False)
    result.episode_means.to_parquet(out / "episode_means.parquet", index=False)
    effects_figure(result, out / "effects.png")
    text = render_sensitivity(result, figure="effects.png")
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
    return result.summary
