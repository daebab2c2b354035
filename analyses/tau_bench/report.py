"""τ-bench's report module: its write step (files, figures and the report's text).

The one module of :mod:`analyses.tau_bench` that imports ``reports`` (docs/architecture.md,
"Layers"): the benchmark's other modules compute, this one turns results into files and words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osustat.analyses.protocol import BenchmarkRun
from osustat.provenance import write_json

from .report_render import render_tau_bench, write_figures

__all__ = ["write_tau"]


def write_tau(
    run: BenchmarkRun, analysis: Any, folder: Path, audit: str | None, *, command: str
) -> str:
    """The write step: records, contamination records, figures and structure into `folder`;
    returns the report (the driver adds the provenance and writes ``report.md``)."""
    structure, contamination = run.state["structure"], run.state["contamination"]
    text = render_tau_bench(
        analysis["analysis"], structure, command=command, audit=audit, llm=analysis["llm"],
        claims_files=run.state.get("claims_files", ()),
    )  # fmt: skip
    run.records.to_parquet(folder / "records.parquet", index=False)
    run.records.to_csv(folder / "records.csv", index=False)
    if contamination is not None:
        contamination["records"].to_csv(folder / "records-contamination.csv", index=False)
    write_figures(analysis["analysis"], folder)
    llm = analysis["llm"]
    if llm is not None and llm["selector"] == "local":
        from osustat.reports.evidence_selection import POSITION_FIGURE, position_figure

        position_figure(llm["variants"], folder / POSITION_FIGURE)
    # timings (encode_seconds in the run state) stay out of the byte-identical outputs
    write_json(folder / "structure.json", structure, sort_keys=True)
    return text
