"""τ-bench on the benchmark protocol: Stage B/C/D, the query variants, the sweeps, the analysis.

:data:`BENCHMARK` implements :class:`analyses.protocol.Benchmark` (``osustat reproduce
tau-bench`` runs it through :mod:`analyses.driver`). Writes ``records.parquet`` /
``records.csv`` (benchmarks ``tau-bench``, ``tau-bench-augmented``, ``tau-bench-weak-query``,
``tau-bench-natural-query``; a ``cell`` and a ``task`` column), ``records-contamination.csv``
(the run with namespace prefixing flipped), ``structure.json`` (drops, groups, queries,
marginals) and the figures; the driver adds ``report.md`` and ``provenance.json``, atomically.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from osustat._validation import renamed
from osustat.analyses.protocol import (
    BenchmarkRun,
    ClaimSelection,
    DataSpec,
    RunSpec,
    load_choices,
)
from osustat.analyses.tau_bench.formats import MIN_MATCHED, MIN_STEPS, TauDataError, load_files

from . import structure as st
from .data import Group, concatenate, drop_counts
from .run import (
    BUDGETS,
    MAIN_METHODS,
    SMALL_METHODS,
    GroupQueries,
    make_queries,
    run_sweep,
)

__all__ = ["BENCHMARK", "TauBench", "analyze_tau", "reproduce_tau_bench", "run_tau", "write_tau"]

KINDS = {"noisy-mean": 0, "weak": 1, "instruction": 2}
OTHER_NOISE = {"per-coordinate": "per-norm", "per-norm": "per-coordinate"}
SENSITIVITY_GRID = Path(__file__).with_name("sensitivity.toml")


def _encode_groups(
    groups: list[Group], encoder: Any, extra: list[str]
) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    texts = sorted({t for g in groups for t in g.texts} | set(extra))
    vecs = np.asarray(encoder.encode(texts), dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    row = {t: i for i, t in enumerate(texts)}
    embs = [vecs[[row[t] for t in g.texts]] for g in groups]
    return embs, np.vstack([vecs[row[t]] for t in extra]) if extra else vecs[:0]


def _queries(
    groups: list[Group],
    embs: list[NDArray[np.float64]],
    kind: str,
    seed: int,
    focal: str,
    instr: dict[str, NDArray[np.float64]] | None = None,
    noise: str = "per-coordinate",
) -> list[GroupQueries]:
    out = []
    for g, (group, emb) in enumerate(zip(groups, embs, strict=True)):
        rng = np.random.default_rng([seed, KINDS[kind], g])
        q = make_queries(group, emb, kind, rng, instr, noise=noise)
        if focal == "one" and len(q.positions) > 1:
            q = GroupQueries(q.positions[:1], q.tasks[:1], q.evidence[:1], q.embeddings[:1])
        out.append(q)
    return out


def _load(spec: RunSpec) -> tuple[Any, list[Group], list[Any], int]:
    """Stage B and C: the files read, the groups packed (errors name file and record)."""
    loaded = load_files(list(spec.data), matching=spec.choices["matching"])
    prefix = spec.choices["namespace-prefix"] == "prefixed"
    groups, drops = concatenate(loaded.episodes, prefix=prefix, packing=spec.choices["packing"])
    n_focal_all = sum(s.focal for g in groups for s in g.sources)
    if n_focal_all == 0:
        counts = drop_counts(drops)
        raise TauDataError(
            "no usable episode: every episode was dropped or left without a group "
            f"(rules: >= {MIN_STEPS} steps, >= {MIN_MATCHED} matched ground-truth actions, "
            f"groups of 150-300 steps); drops by reason and file: {json.dumps(counts)}."
        )
    return loaded, groups, drops, n_focal_all


def _llm_records(
    spec: RunSpec,
    encoder: Any,
    groups: list[Group],
    queries: list[GroupQueries],
    rec: Any,
    info: Any,
) -> tuple[pd.DataFrame, str, str]:
    """§6.6: the B = 256 retrievals of OSU-Mem and Flat Vector read by the selector."""
    from .llm import make_selector, run_llm_selection

    selector = spec.options.get("selector", "extractive")
    sel = make_selector(
        selector, encoder, endpoint=spec.options.get("endpoint"), model=spec.options.get("model")
    )
    retrieved = {k: v for i in info for k, v in i["retrieved"].items()}
    cells = dict(zip(rec["query_id"], rec["cell"], strict=True))
    with_q = [(g, q) for g, q in zip(groups, queries, strict=True) if q.positions]
    rec_llm = run_llm_selection(
        [g for g, _ in with_q], [q for _, q in with_q], retrieved, cells, sel, encoder
    )
    return rec_llm, selector, getattr(sel, "name", selector)


def run_tau(spec: RunSpec) -> BenchmarkRun:
    """Stages B-D, the query variants and every sweep through the one runner, as records."""
    from osustat.schema import validate_records

    focal = spec.choices["focal"]
    prefix = spec.choices["namespace-prefix"] == "prefixed"
    variants = bool(spec.options.get("variants", True))
    budgets = tuple(spec.options.get("budgets", BUDGETS))
    loaded, groups, drops, n_focal_all = _load(spec)
    encoder = spec.text_encoder()
    focal_keys = [s.episode.episode_key for g in groups for s in g.sources if s.focal]
    by_key = {s.episode.episode_key: s.episode for g in groups for s in g.sources}
    instr_texts = [by_key[k].instruction or "(no instruction)" for k in focal_keys]
    t0 = time.perf_counter()
    embs, instr = _encode_groups(groups, encoder, instr_texts)
    encode_seconds = time.perf_counter() - t0
    instr_emb = dict(zip(focal_keys, instr, strict=False))

    seed = spec.seed
    c = spec.choices
    noise = c["query-noise"]
    queries = _queries(groups, embs, c["query-kind"], seed, focal, instr_emb, noise)
    b = spec.backend
    kw: dict[str, Any] = {
        "seed": seed,
        "jobs": b.jobs,
        "progress": b.progress,
        "budgets": budgets,
        "scheduler": b.scheduler,
        "checkpoint": b.checkpoint,
    }
    mine: dict[str, Any] = {"retrievers": tuple(spec.retrievers)}
    methods = list(MAIN_METHODS)
    parts = []
    keep = tuple((m, 256) for m in ("OSU-Mem", "Flat Vector")) if 256 in budgets else ()
    rec, main_info = run_sweep(
        groups, embs, queries, benchmark="tau-bench", methods=methods, keep=keep, **mine, **kw
    )
    parts.append(rec)
    llm = None
    if spec.options.get("selector", "extractive") is not None and keep:
        rec_llm, selector, name = _llm_records(spec, encoder, groups, queries, rec, main_info)
        parts.append(rec_llm)
        llm = {"selector": selector, "name": name, "records": rec_llm}
    rec_aug, aug_info = run_sweep(
        groups, embs, queries, benchmark="tau-bench-augmented", methods=methods, augment=True,
        copy_noise=c["copy-noise"], **mine, **kw,
    )  # fmt: skip
    parts.append(rec_aug)
    contamination = None
    if variants:
        other_noise = OTHER_NOISE[noise]
        for kind, bench, nz in (
            ("noisy-mean", f"tau-bench-query-{other_noise}", other_noise),
            ("weak", "tau-bench-weak-query", noise),
            ("instruction", "tau-bench-natural-query", noise),
        ):
            qs = _queries(groups, embs, kind, seed, focal, instr_emb, nz)
            parts.append(
                run_sweep(groups, embs, qs, benchmark=bench, methods=SMALL_METHODS, **mine, **kw)[0]
            )
        other, _ = concatenate(loaded.episodes, prefix=not prefix)
        contamination_rec, _ = run_sweep(
            other, embs, queries, benchmark="tau-bench", methods=SMALL_METHODS, **kw
        )
        contamination = {
            "records": validate_records(contamination_rec),
            "sharing_prefixed": st.cross_source_sharing(groups if prefix else other),
            "sharing_unprefixed": st.cross_source_sharing(other if prefix else groups),
            "main_prefixed": prefix,
        }
    records = validate_records(pd.concat(parts, ignore_index=True))
    structure = _structure(loaded, groups, drops, queries, aug_info, n_focal_all, spec)
    structure["query_rank"] = _ranks(groups, embs, seed, focal, instr_emb)
    state = {
        "structure": structure,
        "contamination": contamination,
        "llm": llm,
        "encode_seconds": round(encode_seconds, 1),
    }
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
        seed=spec.seed,
    )  # fmt: skip
    llm = None
    if s.get("llm") is not None:
        llm = {k: v for k, v in s["llm"].items() if k != "records"}
        llm["tables"] = llm_tables(
            s["llm"]["records"], n_resamples=spec.n_resamples, seed=spec.seed
        )
    return {"analysis": analysis, "llm": llm}


def _command(spec: RunSpec) -> str:
    if spec.command is not None:
        return spec.command
    return (
        "osustat reproduce tau-bench --data "
        + " ".join(Path(p).name for p in spec.data)
        + f" --out DIR --seed {spec.seed} --resamples {spec.n_resamples}"
        + ("" if spec.choices["namespace-prefix"] == "prefixed" else " --no-prefix")
        + ("" if spec.choices["focal"] == "all" else " --focal one")
        + "".join(
            f" --choice {k}={spec.choices[k]}"
            for k in CHOICE_NAMES
            if spec.choices[k] != TauBench.choices.defaults()[k]
        )
        + "".join(f" --retriever {r.source or r.name}" for r in spec.retrievers)
    )


def write_tau(
    run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
) -> str:
    """Records, contamination records, figures and structure into `folder`; the report."""
    from osustat.reports.tau_bench import render_tau_bench, write_figures

    structure, contamination = run.state["structure"], run.state["contamination"]
    text = render_tau_bench(
        analysis["analysis"], structure, command=_command(spec), audit=audit, llm=analysis["llm"]
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


class TauBench:
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
    multi_seed = False

    def methods(self) -> tuple[str, ...]:
        return tuple(MAIN_METHODS)

    def check(self, spec: RunSpec) -> None:
        selector = spec.options.get("selector", "extractive")
        if selector not in ("extractive", "chat", None):
            raise ValueError(f"`--selector` must be extractive or chat; got {selector!r}.")
        if selector == "chat" and (
            not spec.options.get("endpoint") or not spec.options.get("model")
        ):
            raise ValueError("`--selector chat` needs `--endpoint URL` and `--model NAME`.")

    grid_file = SENSITIVITY_GRID  # the issue-20 grid, the default of --sensitivity

    run = staticmethod(run_tau)
    analyze = staticmethod(analyze_tau)
    write = staticmethod(write_tau)


BENCHMARK = TauBench()


def reproduce_tau_bench(
    data: list[str | Path],
    out: str | Path,
    *,
    cache: str | Path | None = None,
    jobs: int = 1,
    seed: int = 0,
    n_resamples: int | None = None,
    prefix: bool = True,
    focal: str = "all",
    progress: bool = True,
    encoder: Any = None,
    budgets: tuple[int, ...] = BUDGETS,
    variants: bool = True,
    claims: str | Path | None = None,
    selector: str | None = "extractive",
    endpoint: str | None = None,
    model: str | None = None,
    retrievers: Sequence[Any] = (),
    scheduler: str | None = None,
    force: bool = False,
    resamples: int | None = None,
    query_noise: str = "per-coordinate",
    copy_noise: str = "per-norm",
    matching: str = "order-free",
    packing: str = "any",
    query_kind: str = "noisy-mean",
) -> Any:
    """The τ-bench pipeline from Python, through the one driver (:mod:`analyses.driver`).

    `prefix` and `focal` are the declared choices ``namespace-prefix`` and ``focal``;
    `query_noise`, `copy_noise`, `matching`, `packing` and `query_kind` the declared choices of
    the same names (hyphenated; ``choices.toml`` gives values, defaults and the paper's words);
    `encoder` overrides the real encoder (tests pass a stand-in); `claims` replaces
    ``analyses/claims/paper.toml`` for the embedded audit. `n_resamples` is the number of sign flips
    per test (old name `resamples`, deprecated).
    """
    from osustat.analyses.driver import Request, reproduce

    n = renamed(n_resamples, resamples, "n_resamples", "resamples", 10_000)
    return reproduce(
        Request(
            "tau-bench",
            Path(out),
            data=tuple(str(p) for p in data),
            force=force,
            seed=seed,
            n_resamples=n,
            cache=None if cache is None else str(cache),
            jobs=jobs,
            scheduler=scheduler,
            retrievers=tuple(retrievers),
            choices=(
                f"focal={focal}", f"namespace-prefix={'un' * (not prefix)}prefixed",
                f"query-noise={query_noise}", f"copy-noise={copy_noise}", f"matching={matching}",
                f"packing={packing}", f"query-kind={query_kind}",
            ),
            progress=progress,
            options={"selector": selector, "endpoint": endpoint, "model": model,
                     "variants": variants, "budgets": tuple(budgets)},
            encoder=encoder,
            claims=None if claims is None else Path(claims),
        )
    )  # fmt: skip


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
            q = _queries(groups, embs, kind, seed, focal, noise=noise)
            out[f"{kind} {noise}"] = st.query_ranks(embs, q)
    q = _queries(groups, embs, "instruction", seed, focal, instr)
    out["instruction"] = st.query_ranks(embs, q)
    return out


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
