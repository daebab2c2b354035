"""ToolBench's report module: its write step (files, figures and the report's text).

The one module of :mod:`analyses.toolbench` that imports ``reports`` (docs/architecture.md,
"Layers"): the benchmark's other modules compute, this one turns results into files and words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osustat.analyses.protocol import BenchmarkRun
from osustat.provenance import write_json

from .report_render import dose_response_figure, render_toolbench

__all__ = ["write_toolbench"]


def write_toolbench(
    run: BenchmarkRun,
    analysis: Any,
    folder: Path,
    audit: str | None,
    *,
    command: str,
    choices: dict[str, str],
) -> str:
    """The write step: records, episodes, structure and the dose-response figures into
    `folder`; returns the report (the driver adds the provenance and writes ``report.md``)."""
    records, state = run.records, run.state
    records.to_parquet(folder / "records.parquet", index=False)
    records.to_csv(folder / "records.csv", index=False)
    state["episodes"].to_csv(folder / "episodes.csv", index=False)
    structure = {
        "data": state["load"],
        "design": state["design"],
        "cells": {
            f"{r.benchmark}/{r.cell}": int(r.episodes) for r in analysis.structure.itertuples()
        },
        "membership": analysis.membership.to_dict(orient="records"),
    }
    write_json(folder / "structure.json", structure, sort_keys=True)
    figures = {"dose_recall": "dose_response_recall.png", "dose_hit2": "dose_response_hit2.png"}
    dose_response_figure(analysis.combined, folder / figures["dose_recall"], "recall")
    dose_response_figure(analysis.combined, folder / figures["dose_hit2"], "hit@2")
    return str(
        render_toolbench(
            analysis,
            load=state["load"],
            design=state["design"],
            figures=figures,
            command=command,
            audit_markdown=audit
            if audit is not None
            else "Not run: no claims file with ToolBench claims was found.",
            seconds={},  # timings vary run to run: printed by the CLI, kept out of report.md
            choices=choices,
            claims_files=state.get("claims_files", ()),
        )
    )
