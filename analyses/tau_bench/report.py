"""τ-bench's report module: its write step (files, figures and the report's text).

The one module of :mod:`analyses.tau_bench` that imports ``reports`` (docs/architecture.md,
"Layers"): the benchmark's other modules compute, this one turns results into files and words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from osustat.analyses.protocol import BenchmarkRun

from .report_render import render_tau_bench, write_figures

__all__ = ["write_tau"]


def write_tau(
    run: BenchmarkRun, analysis: Any, folder: Path, audit: str | None, *, command: str
) -> str:
    """The write step: records, contamination records, figures and structure into `folder`;
    returns the report (the driver adds the provenance and writes ``report.md``)."""
    structure, contamination = run.state["structure"], run.state["contamination"]
    text = render_tau_bench(
        analysis["analysis"], structure, command=command, audit=audit, llm=analysis["llm"]
    )
    run.records.to_parquet(folder / "records.parquet", index=False)
    run.records.to_csv(folder / "records.csv", index=False)
    if contamination is not None:
        contamination["records"].to_csv(folder / "records-contamination.csv", index=False)
    write_figures(analysis["analysis"], folder)
    # timings (encode_seconds in the run state) stay out of the byte-identical outputs
    (folder / "structure.json").write_text(
        json.dumps(_jsonable(structure), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return text


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x
