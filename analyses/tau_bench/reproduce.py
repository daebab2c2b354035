"""``osustat reproduce tau-bench``: Stage B/C/D, the query variants, the sweeps and the analysis.

Writes into ``out``: ``records.parquet`` / ``records.csv`` (benchmarks ``tau-bench``,
``tau-bench-augmented``, ``tau-bench-weak-query``, ``tau-bench-natural-query``; a ``cell`` and a
``task`` column), ``records-contamination.csv`` (the run with namespace prefixing flipped),
``structure.json`` (drops, groups, queries, marginals), ``report.md`` and figures. Everything
is computed in memory and validated before the first file is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from osustat._validation import renamed
from osustat.analyses.tau_bench.formats import MIN_MATCHED, MIN_STEPS, TauDataError, load_files
from osustat.retrieval.registry import user_factories

from . import structure as st
from .data import NOISE_READINGS, PACKINGS, Group, concatenate, drop_counts
from .formats import MATCHINGS
from .run import (
    BUDGETS,
    MAIN_METHODS,
    QUERY_KINDS,
    SMALL_METHODS,
    GroupQueries,
    make_queries,
    run_sweep,
)

__all__ = ["TauResult", "reproduce_tau_bench"]

KINDS = {"noisy-mean": 0, "weak": 1, "instruction": 2}
OTHER_NOISE = {"per-coordinate": "per-norm", "per-norm": "per-coordinate"}


@dataclass(frozen=True)
class TauResult:
    out: Path
    n_records: int
    seconds: float
    structure: dict[str, Any]
    encode_seconds: float


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
    scheduler: Any = None,
    checkpoint: str | Path | None = None,
    resamples: int | None = None,
    query_noise: str = "per-coordinate",
    copy_noise: str = "per-norm",
    matching: str = "order-free",
    packing: str = "any",
    query_kind: str = "noisy-mean",
) -> TauResult:
    """Run the τ-bench pipeline end to end and write its outputs to `out`.

    Parameters
    ----------
    data : list of paths
        τ-bench or τ²-bench files (format detected per file).
    out : path
    cache : path, optional
        Embedding cache directory (default ``retrieval.default_cache_dir()``).
    encoder : TextEncoder, optional
        Overrides the real encoder (tests pass a stand-in); `cache` is then unused.
    prefix : bool
        Namespace prefixing of entities and tools per source (Appendix C). The contamination
        comparison always runs the other setting too.
    focal : {'all', 'one'}
        Every surviving source of a group is focal (default, an inference from the paper's
        125 groups / 328 queries) or only the first one (the strict reading).
    claims : path, optional
        Claims file audited in the report (default: the repository's ``claims/paper.toml``).
    selector : {'extractive', 'chat', None}
        §6.6 evidence selection on the B = 256 retrievals (None skips it); ``'chat'`` needs
        `endpoint` and `model` (an OpenAI-compatible server).
    variants : bool
        Also run the weak- and natural-query variants and the contamination comparison.
    retrievers : sequence of MethodSpec
        User retrievers (``retrieval.registry.load_retriever``): they join every sweep but the
        contamination comparison, and get a report section.
    scheduler, checkpoint
        A Dask cluster (address or Client) and a resume folder, passed to ``run_tasks``.
    n_resamples : int
        Sign flips per test (default 10,000; old name `resamples`, kept as an alias).
    query_noise : {'per-coordinate', 'per-norm'}
        Reading of the query's "noisy mean (σ = .25)": sd .25 per coordinate (default: the
        paper's synthetic benchmark uses the same words, "lower noise σ = .25", for
        per-coordinate noise) or a noise vector of norm .25. The other reading also runs
        (Flat Vector, OSU-Mem, OSU-Mem (disjoint); benchmark ``tau-bench-query-<reading>``).
    copy_noise : {'per-norm', 'per-coordinate'}
        Reading of Stage D's copy noise σ = .10: norm .10 (default: the paper calls it "small
        embedding noise" and the copies "near-duplicates"; per coordinate, cos to the anchor
        would be about .45) or sd .10 per coordinate.
    matching : {'order-free', 'in-order'}
        Ground-truth matching (Stage B: "greedy name plus keyword-argument equality").
    packing : {'any', 'one-episode-per-task-per-group'}
        Stage C packing; the second keeps runs of one task out of the same group.
    query_kind : {'noisy-mean', 'weak', 'instruction'}
        The query of the main benchmark ``tau-bench`` (and of Stage D).
    """
    resamples = renamed(n_resamples, resamples, "n_resamples", "resamples", 10_000)
    from osustat import validate_records
    from osustat.reports.tau_bench import render_tau_bench, write_figures

    from .analysis import analyze

    if selector == "chat" and (not endpoint or not model):
        raise ValueError("`--selector chat` needs `--endpoint URL` and `--model NAME`.")
    if focal not in ("all", "one"):
        raise ValueError(f"`focal` must be 'all' or 'one'; got {focal!r}.")
    for name, value, allowed in (
        ("query_noise", query_noise, NOISE_READINGS),
        ("copy_noise", copy_noise, NOISE_READINGS),
        ("matching", matching, MATCHINGS),
        ("packing", packing, PACKINGS),
        ("query_kind", query_kind, QUERY_KINDS),
    ):
        if value not in allowed:
            raise ValueError(f"`{name}` must be one of {list(allowed)}; got {value!r}.")
    for name, v in (("jobs", jobs), ("resamples", resamples)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {v!r}.")
    user_factories(retrievers, taken=MAIN_METHODS)  # a name clash fails before any work
    start = time.perf_counter()
    out = Path(out)
    loaded = load_files(data, matching=matching)
    groups, drops = concatenate(loaded.episodes, prefix=prefix, packing=packing)
    n_focal_all = sum(s.focal for g in groups for s in g.sources)
    if n_focal_all == 0:
        counts = drop_counts(drops)
        raise TauDataError(
            "no usable episode: every episode was dropped or left without a group "
            f"(rules: >= {MIN_STEPS} steps, >= {MIN_MATCHED} matched ground-truth actions, "
            f"groups of 150-300 steps); drops by reason and file: {json.dumps(counts)}."
        )
    if encoder is None:
        from osustat.retrieval import CachedEncoder, SentenceTransformerEncoder, default_cache_dir

        encoder = CachedEncoder(
            SentenceTransformerEncoder(), Path(cache) if cache else default_cache_dir()
        )
    focal_keys = [s.episode.episode_key for g in groups for s in g.sources if s.focal]
    by_key = {s.episode.episode_key: s.episode for g in groups for s in g.sources}
    instr_texts = [by_key[k].instruction or "(no instruction)" for k in focal_keys]
    t0 = time.perf_counter()
    embs, instr = _encode_groups(groups, encoder, instr_texts)
    encode_seconds = time.perf_counter() - t0
    instr_emb = dict(zip(focal_keys, instr, strict=False))

    queries = _queries(groups, embs, query_kind, seed, focal, instr_emb, query_noise)
    kw: dict[str, Any] = {
        "seed": seed,
        "jobs": jobs,
        "progress": progress,
        "budgets": budgets,
        "scheduler": scheduler,
        "checkpoint": checkpoint,
    }
    mine: dict[str, Any] = {"retrievers": tuple(retrievers)}
    methods = list(MAIN_METHODS)
    parts = []
    keep = tuple((m, 256) for m in ("OSU-Mem", "Flat Vector")) if 256 in budgets else ()
    rec, main_info = run_sweep(
        groups, embs, queries, benchmark="tau-bench", methods=methods, keep=keep, **mine, **kw
    )
    parts.append(rec)
    llm = None
    if selector is not None and keep:
        from .llm import llm_tables, make_selector, run_llm_selection

        sel = make_selector(selector, encoder, endpoint=endpoint, model=model)
        retrieved = {k: v for info in main_info for k, v in info["retrieved"].items()}
        cells = dict(zip(rec["query_id"], rec["cell"], strict=True))
        with_q = [(g, q) for g, q in zip(groups, queries, strict=True) if q.positions]
        rec_llm = run_llm_selection(
            [g for g, _ in with_q], [q for _, q in with_q], retrieved, cells, sel, encoder
        )
        parts.append(rec_llm)
        llm = {
            "selector": selector,
            "name": getattr(sel, "name", selector),
            "tables": llm_tables(rec_llm, n_resamples=resamples, seed=seed),
        }
    rec_aug, aug_info = run_sweep(
        groups,
        embs,
        queries,
        benchmark="tau-bench-augmented",
        methods=methods,
        augment=True,
        copy_noise=copy_noise,
        **mine,
        **kw,
    )
    parts.append(rec_aug)
    contamination: dict[str, Any] | None = None
    if variants:
        other_noise = OTHER_NOISE[query_noise]
        other_q = _queries(groups, embs, "noisy-mean", seed, focal, noise=other_noise)
        parts.append(
            run_sweep(
                groups,
                embs,
                other_q,
                benchmark=f"tau-bench-query-{other_noise}",
                methods=SMALL_METHODS,
                **mine,
                **kw,
            )[0]
        )
        weak = _queries(groups, embs, "weak", seed, focal, noise=query_noise)
        parts.append(
            run_sweep(
                groups,
                embs,
                weak,
                benchmark="tau-bench-weak-query",
                methods=SMALL_METHODS,
                **mine,
                **kw,
            )[0]
        )
        nat = _queries(groups, embs, "instruction", seed, focal, instr_emb)
        parts.append(
            run_sweep(
                groups,
                embs,
                nat,
                benchmark="tau-bench-natural-query",
                methods=SMALL_METHODS,
                **mine,
                **kw,
            )[0]
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

    n_one = sum(1 for g in groups if any(s.focal for s in g.sources))
    structure: dict[str, Any] = {
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
        "focal_reading": focal,
        "queries": sum(len(q.positions) for q in queries),
        "tasks": len({t for q in queries for t in q.tasks}),
        "prefix": prefix,
        "marginals": st.marginals(groups, queries),
        "evidence_distance": st.distances(groups, queries),
        "stage_d": st.stage_d_summary(aug_info, sum(len(q.positions) for q in queries)),
        "twins": st.twin_counts(groups),
        "agents": st.agents(loaded.episodes),
        "query_rank": _ranks(groups, embs, seed, focal, instr_emb),
        "choices": {
            "query_noise": query_noise,
            "copy_noise": copy_noise,
            "matching": matching,
            "packing": packing,
            "query_kind": query_kind,
        },
        "seed": seed,
    }
    analysis = analyze(records, structure, contamination, n_resamples=resamples, seed=seed)
    command = (
        "osustat reproduce tau-bench --data "
        + " ".join(Path(p).name for p in data)
        + f" --out DIR --seed {seed} --resamples {resamples}"
        + ("" if prefix else " --no-prefix")
        + ("" if focal == "all" else " --focal one")
        + "".join(
            f" --{k.replace('_', '-')} {v}"
            for k, v, d in (
                ("query_noise", query_noise, "per-coordinate"),
                ("copy_noise", copy_noise, "per-norm"),
                ("matching", matching, "order-free"),
                ("packing", packing, "any"),
                ("query_kind", query_kind, "noisy-mean"),
            )
            if v != d
        )
        + "".join(f" --retriever {r.source or r.name}" for r in retrievers)
    )
    from .audit import audit_tau_claims

    audit_md = audit_tau_claims(records, claims, n_resamples=resamples, seed=seed)
    text = render_tau_bench(analysis, structure, command=command, audit=audit_md, llm=llm)
    if retrievers:
        from osustat.reports.user_methods import render_user_methods

        names = [r.name for r in retrievers]
        user = render_user_methods(records, names, references=("OSU-Mem", "Flat Vector"))
        text += "\n\n" + user

    # everything is computed; only now write
    out.mkdir(parents=True, exist_ok=True)
    records.to_parquet(out / "records.parquet", index=False)
    records.to_csv(out / "records.csv", index=False)
    if contamination is not None:
        contamination["records"].to_csv(out / "records-contamination.csv", index=False)
    write_figures(analysis, out)
    # timings (encode_seconds in the result) stay out of the byte-identical outputs
    (out / "structure.json").write_text(
        json.dumps(_jsonable(structure), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
    return TauResult(
        out, len(records), time.perf_counter() - start, structure, round(encode_seconds, 1)
    )


def _ranks(
    groups: list[Group],
    embs: list[NDArray[np.float64]],
    seed: int,
    focal: str,
    instr: dict[str, NDArray[np.float64]],
) -> dict[str, Any]:
    """Median evidence rank under each query construction (how far from random each is)."""
    out: dict[str, Any] = {}
    for noise in NOISE_READINGS:
        for kind in ("noisy-mean", "weak"):
            q = _queries(groups, embs, kind, seed, focal, noise=noise)
            out[f"{kind} {noise}"] = st.query_ranks(embs, q)
    out["instruction"] = st.query_ranks(
        embs, _queries(groups, embs, "instruction", seed, focal, instr)
    )
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
