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

KINDS = {"noisy-mean": 0, "weak": 1, "natural": 2}


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
) -> list[GroupQueries]:
    out = []
    for g, (group, emb) in enumerate(zip(groups, embs, strict=True)):
        rng = np.random.default_rng([seed, KINDS[kind], g])
        q = make_queries(group, emb, kind, rng, instr)
        if focal == "one" and len(q.positions) > 1:
            q = GroupQueries(q.positions[:1], q.tasks[:1], q.evidence[:1], q.embeddings[:1])
        out.append(q)
    return out


def _marginals(groups: list[Group], queries: list[GroupQueries]) -> dict[str, Any]:
    from osustat import sharing_rates

    rows = []
    for group, q in zip(groups, queries, strict=True):
        for ev in q.evidence:
            idx = [int(i) for i in ev]
            r = sharing_rates(
                [group.tools[i] for i in idx],
                [group.entities[i] for i in idx],
                subgoals=[group.subgoals[i] for i in idx],
            )
            rows.append((r.entity, r.tool, r.subgoal))
    a = np.asarray(rows, dtype=float).reshape(-1, 3)
    out: dict[str, Any] = {"queries": int(a.shape[0])}
    for k, view in enumerate(("entity", "tool", "subgoal")):
        out[view] = {
            "mean": float(np.mean(a[:, k])),
            "median": float(np.median(a[:, k])),
            "zero_fraction": float(np.mean(a[:, k] == 0)),
        }
    out["all_three_fraction"] = float(np.mean((a > 0).all(axis=1)))
    out["all_three_count"] = int((a > 0).all(axis=1).sum())
    return out


def _cross_source_sharing(groups: list[Group]) -> dict[str, float]:
    """Fraction of pairs of tool-call steps sharing an entity or tool: same vs cross source."""
    same = [0, 0]
    cross = [0, 0]
    for g in groups:
        idx = [i for i, t in enumerate(g.tools) if t is not None]
        for a_pos, i in enumerate(idx):
            for j in idx[a_pos + 1 :]:
                shared = bool(g.entities[i] & g.entities[j]) or g.tools[i] == g.tools[j]
                bucket = same if g.source_of[i] == g.source_of[j] else cross
                bucket[0] += int(shared)
                bucket[1] += 1
    return {
        "same_source": same[0] / same[1] if same[1] else float("nan"),
        "cross_source": cross[0] / cross[1] if cross[1] else float("nan"),
        "same_pairs": same[1],
        "cross_pairs": cross[1],
    }


def _load(spec: RunSpec) -> tuple[Any, list[Group], list[Any], int]:
    """Stage B and C: the files read, the groups packed (errors name file and record)."""
    loaded = load_files(list(spec.data))
    prefix = spec.choices["namespace-prefix"] == "prefixed"
    groups, drops = concatenate(loaded.episodes, prefix=prefix)
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
    embs, instr = _encode_groups(groups, encoder, instr_texts if variants else [])
    encode_seconds = time.perf_counter() - t0
    instr_emb = dict(zip(focal_keys, instr, strict=False)) if variants else None

    seed = spec.seed
    queries = _queries(groups, embs, "noisy-mean", seed, focal)
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
        **mine, **kw,
    )  # fmt: skip
    parts.append(rec_aug)
    contamination = None
    if variants:
        for kind, bench in (
            ("weak", "tau-bench-weak-query"),
            ("natural", "tau-bench-natural-query"),
        ):
            qs = _queries(groups, embs, kind, seed, focal, instr_emb if kind == "natural" else None)
            parts.append(
                run_sweep(groups, embs, qs, benchmark=bench, methods=SMALL_METHODS, **mine, **kw)[0]
            )
        other, _ = concatenate(loaded.episodes, prefix=not prefix)
        contamination_rec, _ = run_sweep(
            other, embs, queries, benchmark="tau-bench", methods=SMALL_METHODS, **kw
        )
        contamination = {
            "records": validate_records(contamination_rec),
            "sharing_prefixed": _cross_source_sharing(groups if prefix else other),
            "sharing_unprefixed": _cross_source_sharing(other if prefix else groups),
            "main_prefixed": prefix,
        }
    records = validate_records(pd.concat(parts, ignore_index=True))
    structure = _structure(loaded, groups, drops, queries, aug_info, n_focal_all, spec)
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
        "marginals": _marginals(groups, queries),
        "evidence_distance": _distances(groups, queries),
        "stage_d": {
            "copies": sum(i.get("copies", 0) for i in aug_info),
            "evidence_steps_gap_relaxed": sum(i.get("gap_relaxed", 0) for i in aug_info),
            "evidence_steps": sum(len(ev) for q in queries for ev in q.evidence),
        },
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
    return (
        "osustat reproduce tau-bench --data "
        + " ".join(Path(p).name for p in spec.data)
        + f" --out DIR --seed {spec.seed} --resamples {spec.n_resamples}"
        + ("" if spec.choices["namespace-prefix"] == "prefixed" else " --no-prefix")
        + ("" if spec.choices["focal"] == "all" else " --focal one")
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
) -> Any:
    """The τ-bench pipeline from Python, through the one driver (:mod:`analyses.driver`).

    `prefix` and `focal` are the declared choices ``namespace-prefix`` and ``focal``;
    `encoder` overrides the real encoder (tests pass a stand-in); `claims` replaces
    ``claims/paper.toml`` for the embedded audit. `n_resamples` is the number of sign flips
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
            choices=(f"focal={focal}", f"namespace-prefix={'un' * (not prefix)}prefixed"),
            progress=progress,
            options={"selector": selector, "endpoint": endpoint, "model": model,
                     "variants": variants, "budgets": tuple(budgets)},
            encoder=encoder,
            claims=None if claims is None else Path(claims),
        )
    )  # fmt: skip


def _distances(groups: list[Group], queries: list[GroupQueries]) -> dict[str, float]:
    d = [
        g.n_steps - int(i)
        for g, q in zip(groups, queries, strict=True)
        for ev in q.evidence
        for i in ev
    ]
    if not d:
        return {"mean": float("nan"), "over_50": float("nan")}
    a = np.asarray(d, dtype=float)
    return {"mean": float(a.mean()), "over_50": float(np.mean(a > 50))}


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
