"""τ-bench on the benchmark protocol: Stage B/C/D, the query variants, the sweeps, the analysis.

:data:`BENCHMARK` implements :class:`analyses.protocol.Benchmark` (``osustat reproduce
tau-bench`` runs it through :mod:`analyses.driver`). Writes ``records.parquet`` /
``records.csv`` (benchmarks ``tau-bench``, ``tau-bench-augmented``, ``tau-bench-weak-query``,
``tau-bench-natural-query``; a ``cell`` and a ``task`` column), ``records-contamination.csv``
(the run with namespace prefixing flipped), ``structure.json`` (drops, groups, queries,
marginals) and the figures; the driver adds ``report.md`` and ``provenance.json``, atomically.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

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

from . import structure as st
from .data import Group, concatenate, drop_counts
from .llm import LOCAL_QUERIES, SELECTORS
from .paper_values import PAPER
from .run import BUDGETS, MAIN_METHODS, SMALL_METHODS, GroupQueries, run_sweep
from .workspace import Workspace, audit_unavailable, group_queries, point_records, run_points

__all__ = ["BENCHMARK", "TauBench", "analyze_tau", "run_tau"]

SENSITIVITY_GRID = Path(__file__).with_name("sensitivity.toml")


def run_tau(spec: RunSpec) -> BenchmarkRun:
    """Stages B-D, the query variants and every sweep through the one runner, as records."""
    from osustat.schema import validate_records

    focal = spec.choices["focal"]
    prefix = spec.choices["namespace-prefix"] == "prefixed"
    ws = Workspace(spec)
    built = ws.built(spec)
    loaded, groups, embs = built.loaded, built.groups, built.embs
    records, llm, aug_info = point_records(ws, spec)
    c = spec.choices
    queries = ws.queries(spec, c["query-kind"], c["query-noise"])
    contamination = None
    if not spec.options.get("no_variants", False):
        other, _ = concatenate(loaded.episodes, prefix=not prefix, packing=c["packing"])
        contamination_rec, _ = run_sweep(
            other, embs, queries, benchmark="tau-bench", methods=SMALL_METHODS, seed=spec.seed,
            budgets=tuple(spec.options.get("budgets", BUDGETS)), backend=spec.backend,
        )  # fmt: skip
        contamination = {
            "records": validate_records(contamination_rec),
            "sharing_prefixed": st.cross_source_sharing(groups if prefix else other),
            "sharing_unprefixed": st.cross_source_sharing(other if prefix else groups),
            "main_prefixed": prefix,
        }
    structure = _structure(loaded, groups, built.drops, queries, aug_info, built.n_focal_all, spec)
    structure["query_rank"] = _ranks(groups, embs, spec.seed, focal, built.instr_emb)
    state = {
        "structure": structure,
        "contamination": contamination,
        "llm": llm,
        "encode_seconds": built.encode_seconds,
    }
    state["audit_unavailable"] = audit_unavailable(llm)
    return BenchmarkRun(records, state)


def _structure(
    loaded: Any,
    groups: list[Group],
    drops: Any,
    queries: list[GroupQueries],
    aug_info: Any,
    n_focal_all: int,
    spec: RunSpec,
) -> dict[str, Any]:
    n_one = sum(1 for g in groups if any(s.focal for s in g.sources))
    return {
        "files": {Path(p).name: f for p, f in loaded.formats.items()},
        "episodes_loaded": len(loaded.episodes),
        "episodes_by_file": {
            Path(p).name: sum(e.source_file == p for e in loaded.episodes) for p in loaded.formats
        },
        "drops": drop_counts(drops),
        "drops_total": {r: sum(v.values()) for r, v in drop_counts(drops).items()},
        "groups": len(groups),
        "groups_with_queries": n_one,
        "group_length": {
            "min": min(g.n_steps for g in groups),
            "median": float(np.median([g.n_steps for g in groups])),
            "max": max(g.n_steps for g in groups),
        },
        "steps": sum(g.n_steps for g in groups),
        "queries_all_focal": n_focal_all,
        "queries_one_focal": n_one,
        "focal_reading": spec.choices["focal"],
        "queries": sum(len(q.positions) for q in queries),
        "tasks": len({t for q in queries for t in q.tasks}),
        "prefix": spec.choices["namespace-prefix"] == "prefixed",
        "marginals": st.marginals(groups, queries),
        "evidence_distance": st.distances(groups, queries),
        "stage_d": st.stage_d_summary(aug_info, sum(len(q.positions) for q in queries)),
        "twins": st.twin_counts(groups),
        "agents": st.agents(loaded.episodes),
        "choices": {k: spec.choices[k] for k in CHOICE_NAMES},
        "seed": spec.seed,
    }


def analyze_tau(run: BenchmarkRun, spec: RunSpec) -> dict[str, Any]:
    """The analysis step: cross-tabs, task-level tests, Tables 5/11/12, break-even, §6.6."""
    from .analysis import analyze
    from .llm import llm_tables

    s = run.state
    analysis = analyze(
        run.records, s["structure"], s["contamination"], n_resamples=spec.n_resamples,
        seed=spec.seed, progress=spec.backend.progress,
    )  # fmt: skip
    llm = None
    if s.get("llm") is not None:
        llm = {k: v for k, v in s["llm"].items() if k != "records"}
        llm["tables"] = llm_tables(
            s["llm"]["records"], n_resamples=spec.n_resamples, seed=spec.seed
        )
        for v in llm.get("variants", ()):
            v["tables"] = llm_tables(
                s["llm"]["records"], n_resamples=spec.n_resamples, seed=spec.seed,
                benchmark=v["benchmark"],
            )  # fmt: skip
    return {"analysis": analysis, "llm": llm}


class TauBench(Benchmark):
    """τ-bench on the protocol (analyses.protocol)."""

    name = "tau-bench"
    description = "τ-bench / τ²-bench airline trajectories, concatenated into long groups"
    data = DataSpec("files", "τ-bench or τ²-bench trajectory files (JSON)")
    choices = load_choices("osustat.analyses.tau_bench", "tau-bench")
    claims = ClaimSelection(
        "Audit of the paper's τ-bench claims", benchmark_prefixes=("tau-bench",),
        drop_columns=("task",),
    )  # fmt: skip
    references = ("OSU-Mem", "Flat Vector")
    #: The paper's printed values its report compares with (written beside the report).
    paper_values = MappingProxyType(PAPER)
    multi_seed = False
    counts_episodes = False
    datasets = ("tau-bench", "tau2-bench")
    options = (
        Option(
            "--no-prefix", "same as --choice namespace-prefix=unprefixed",
            choice="namespace-prefix", const="unprefixed",
        ),
        Option("--focal", "same as --choice focal=VALUE", ("all", "one"), choice="focal"),
        Option(
            "--selector",
            "§6.6 selector: extractive (offline stand-in, not an LLM), chat (an endpoint) or "
            "local (SmolLM2-135M on 127.0.0.1, free text and constrained ids, a declared "
            "subset; osustat llm fetch)",
            ("extractive", "chat", "local"), default="extractive",
        ),
        Option("--endpoint", "OpenAI-compatible base URL (chat)"),
        Option("--model", "model name sent to the endpoint (chat)"),
        Option(
            "--llm-queries", f"size of the --selector local subset (>= 2, a paired test; "
            f"default {LOCAL_QUERIES})", default=LOCAL_QUERIES, convert=integer(2),
        ),
        Option(
            "--llm-threads", "generation threads of the local server (--selector local)",
            default=1, convert=integer(1),
        ),
        Option(
            "--budgets", "token budgets of the sweeps, comma-separated (default: the paper's)",
            default=BUDGETS, convert=integers(1),
        ),
        Option(
            "--no-variants", "skip the query-variant and contamination sweeps (faster; the "
            "report says they were not run)", default=False, const=True,
        ),
    )  # fmt: skip

    def methods(self) -> tuple[str, ...]:
        return tuple(MAIN_METHODS)

    def check(self, spec: RunSpec) -> None:
        selector = spec.options.get("selector", "extractive")
        if selector not in (*SELECTORS, None):
            raise ValueError(f"`--selector` must be one of {SELECTORS}; got {selector!r}.")
        if selector == "local":  # the extra and the model file, before any work
            from osustat.analyses.evidence_selection.local_model import model_file
            from osustat.analyses.evidence_selection.local_server import require_extra

            require_extra()
            model_file()
        if selector == "chat" and (
            not spec.options.get("endpoint") or not spec.options.get("model")
        ):
            raise ValueError("`--selector chat` needs `--endpoint URL` and `--model NAME`.")

    grid_file = SENSITIVITY_GRID  # the issue-20 grid, the default of --sensitivity

    run = staticmethod(run_tau)
    run_many = staticmethod(run_points)  # --sensitivity: the points share built data and sweeps
    analyze = staticmethod(analyze_tau)

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        """Files and report (:func:`analyses.tau_bench.report.write_tau`)."""
        from .report import write_tau

        return write_tau(run, analysis, folder, audit, command=spec.command)


BENCHMARK = TauBench()


CHOICE_NAMES = ("query-noise", "copy-noise", "matching", "packing", "query-kind")


def _ranks(
    groups: list[Group],
    embs: list[NDArray[np.float64]],
    seed: int,
    focal: str,
    instr: dict[str, NDArray[np.float64]],
) -> dict[str, Any]:
    """Median evidence rank under each query construction (how far from random each is)."""
    out: dict[str, Any] = {}
    for noise in ("per-coordinate", "per-norm"):
        for kind in ("noisy-mean", "weak"):
            q = group_queries(groups, embs, kind, seed, focal, noise=noise)
            out[f"{kind} {noise}"] = st.query_ranks(embs, q)
    q = group_queries(groups, embs, "instruction", seed, focal, instr)
    out["instruction"] = st.query_ranks(embs, q)
    return out
