"""The LoCoMo pipeline end to end: load, build, encode, sweep, analyse, write.

Everything is computed in memory and validated before the first file is written; a malformed
input raises :class:`~.data.LocomoDataError` (exit 2 from the CLI) with nothing written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .build import QueryTable, build_queries, conversation_steps
from .choices import Choices, declared, variants
from .data import Conversation, LocomoDataError, load_audit, load_locomo
from .entities import EntityExtractor
from .run import BENCHMARK, BUDGETS, MAIN_METHODS, PRIMARY_BUDGET, run_sweep

__all__ = ["LocomoResult", "prepare", "reproduce_locomo"]


@dataclass(frozen=True)
class LocomoResult:
    out: Path
    n_records: int
    seconds: float
    encode_seconds: float
    structure: dict[str, Any]


@dataclass(frozen=True)
class Prepared:
    """One choice setting, ready to run: steps, queries and embeddings per conversation."""

    choices: Choices
    steps: list[Any]
    tables: list[QueryTable]
    embeddings: list[NDArray[np.float64]]
    query_embeddings: list[NDArray[np.float64]]


def _audit_path(data: Path) -> Path:
    return data.parent / "audit" / "errors.json"


def _encode(encoder: Any, texts: Sequence[str]) -> NDArray[np.float64]:
    if not texts:
        return np.zeros((0, int(encoder.dim)))
    return np.asarray(encoder.encode(list(texts)), dtype=np.float64)


def prepare(
    convs: list[Conversation],
    choices: Choices,
    encoder: Any,
    audit: dict[tuple[str, int], tuple[str, ...]] | None,
) -> Prepared:
    """Build steps and queries for `choices` and embed them (through the encoder's cache)."""
    extractor = EntityExtractor.fit(t.text for c in convs for t in c.turns)
    steps = [conversation_steps(c, choices, extractor) for c in convs]
    tables = [build_queries(c, s, choices, audit) for c, s in zip(convs, steps, strict=True)]
    # one encode call for every text: the cache and the model see one batch
    texts = [x for s in steps for x in s.texts]
    qtexts = [q.question for t in tables for q in t.queries]
    allv = _encode(encoder, texts + qtexts)
    embs, qembs, i, j = [], [], 0, len(texts)
    for s, t in zip(steps, tables, strict=True):
        embs.append(allv[i : i + s.n_steps])
        qembs.append(allv[j : j + len(t.queries)])
        i += s.n_steps
        j += len(t.queries)
    return Prepared(choices, steps, tables, embs, qembs)


def _structure(convs: list[Conversation], prep: Prepared) -> dict[str, Any]:
    tables = prep.tables
    queries = [q for t in tables for q in t.queries]
    excluded = [e for t in tables for e in t.excluded]
    reasons: dict[str, int] = {}
    for e in excluded:
        reasons[e["reason"]] = reasons.get(e["reason"], 0) + 1
    cells: dict[str, int] = {}
    for q in queries:
        cells[q.cell] = cells.get(q.cell, 0) + 1
    marg = pd.DataFrame([m for t in tables for m in t.marginals])
    return {
        "choices": prep.choices.__dict__,
        "conversations": len(convs),
        "turns": sum(s.n_steps for s in prep.steps),
        "sessions": sum(c.n_sessions for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "queries": len(queries),
        "queries_per_conversation": {
            s.sample_id: len(t.queries) for s, t in zip(prep.steps, tables, strict=True)
        },
        "excluded_by_reason": reasons,
        "category5_with_2plus_evidence": sum(
            1 for e in excluded if e["category"] == 5 and e["n_evidence"] >= 2
        ),
        "repaired_evidence": [dict(r) for t in tables for r in t.repaired],
        "unresolved_evidence": [dict(r) for t in tables for r in t.unresolved],
        "cells": cells,
        "mean_turn_cost": float(np.mean([c for s in prep.steps for c in s.costs])),
        "turns_with_entity": int(sum(bool(e) for s in prep.steps for e in s.entities)),
        "marginals": _marginal_summary(marg),
    }


def _marginal_summary(marg: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if marg.empty:
        return out
    for view in ("session", "speaker", "entity"):
        v = marg[view]
        out[view] = {
            "mean": float(v.mean()),
            "median": float(v.median()),
            "any_sharing": float((v > 0).mean()),
            "by_category_any": {
                int(c): float((g[view] > 0).mean()) for c, g in marg.groupby("category")
            },
        }
    out["mean_distance"] = float(marg["distance"].mean())
    out["mean_evidence"] = float(marg["n_evidence"].mean())
    return out


def reproduce_locomo(
    data: str | Path,
    out: str | Path,
    *,
    choices: Choices | None = None,
    sensitivity: bool = False,
    cache: str | Path | None = None,
    encoder: Any = None,
    jobs: int = 1,
    seed: int = 0,
    n_resamples: int = 10_000,
    budgets: Sequence[int] = BUDGETS,
    methods: Sequence[str] = tuple(MAIN_METHODS),
    retrievers: Sequence[Any] = (),
    progress: bool = True,
    scheduler: Any = None,
    checkpoint: str | Path | None = None,
    claims: str | Path | None = None,
    force: bool = False,
) -> LocomoResult:
    """Run the LoCoMo analysis on ``locomo10.json`` at `data` and write it into `out`.

    Parameters
    ----------
    data : path
        ``locomo10.json``; the audit overlay is read from ``audit/errors.json`` beside it when
        `choices` (or `sensitivity`) needs it.
    out : path
        Output folder (written atomically, only after everything is computed).
    choices : Choices, optional
        The main run's setting of the open choices (default: ``choices.toml``'s defaults).
    sensitivity : bool
        Also rerun at every other option of each choice (one at a time), with OSU-Mem, its
        disjoint variant and Flat Vector, and report the cell table of each.
    encoder : TextEncoder, optional
        Overrides the real encoder (tests pass a stand-in); `cache` is then unused.
    n_resamples : int
        Sign flips per test (the conversation-level tests use at least 1,024, so 10
        conversation means are enumerated exactly).
    force : bool
        Replace a non-empty `out` made from other inputs (or not by osustat).
    """
    from osustat import validate_records
    from osustat.provenance import Provenance, check_target

    from .analysis import analyze
    from .report import render

    _check_args(jobs, n_resamples, budgets)
    choices = choices or Choices()
    start = time.perf_counter()
    data = Path(data)
    if not data.is_file():
        raise LocomoDataError(f"{data}: no such file.")
    convs = load_locomo(data)
    audit_file = _audit_path(data)
    needs_audit = choices.labels == "audit" or sensitivity
    audit = load_audit(audit_file, convs) if needs_audit and audit_file.is_file() else None
    files = [("data", data)] + ([("audit", audit_file)] if audit is not None else [])
    command = f"osustat reproduce locomo --data {data.name} --out DIR --seed {seed}" + (
        " --sensitivity" if sensitivity else ""
    )
    prov = Provenance.for_files(
        files,
        command=command,
        seeds={"master": seed},
        resamples={"sign-flip": n_resamples, "bootstrap": 2000},
    )
    check_target(out, prov.inputs_digest, force=force)
    if choices.labels == "audit" and audit is None:
        raise LocomoDataError(f"{audit_file}: the audit overlay is needed for labels='audit'.")
    if encoder is None:
        from osustat.retrieval import CachedEncoder, SentenceTransformerEncoder, default_cache_dir

        encoder = CachedEncoder(
            SentenceTransformerEncoder(), Path(cache) if cache else default_cache_dir()
        )
    t0 = time.perf_counter()
    prep = prepare(convs, choices, encoder, audit)
    encode_seconds = time.perf_counter() - t0
    kw: dict[str, Any] = {
        "jobs": jobs,
        "progress": progress,
        "scheduler": scheduler,
        "checkpoint": checkpoint,
        "budgets": tuple(budgets),
    }
    records, membership = run_sweep(
        prep.steps,
        prep.embeddings,
        [t.queries for t in prep.tables],
        prep.query_embeddings,
        methods=methods,
        retrievers=retrievers,
        **kw,
    )
    if records.empty:
        raise LocomoDataError(f"{data}: no question has >= 2 resolving evidence turns.")
    validate_records(records)
    structure = _structure(convs, prep)
    structure["membership"] = membership.to_dict(orient="records")
    sens = _sensitivity_runs(convs, encoder, audit, methods, kw) if sensitivity else []
    primary = PRIMARY_BUDGET if PRIMARY_BUDGET in budgets else sorted(budgets)[len(budgets) // 2]
    result = analyze(
        records, sens, primary=primary, n_resamples=n_resamples, seed=seed, claims=claims
    )
    report = render(result, structure, declared(), sens_structures=[s for _, _, s in sens])
    if retrievers:
        from osustat.reports.user_methods import render_user_methods

        names = [r.name for r in retrievers]
        refs = tuple(m for m in ("OSU-Mem", "Flat Vector") if m in methods)
        report += "\n" + render_user_methods(records, names, references=refs) + "\n"
    excl = tuple(sorted(structure["excluded_by_reason"].items()))
    prov = replace(prov, exclusions=excl)
    report += "\n" + "\n".join(prov.markdown()) + "\n"
    seconds = time.perf_counter() - start
    _write(Path(out), records, structure, report, result, prov, force)
    return LocomoResult(Path(out), len(records), seconds, encode_seconds, structure)


def _check_args(jobs: Any, n_resamples: Any, budgets: Sequence[Any]) -> None:
    for name, v in (("jobs", jobs), ("n_resamples", n_resamples)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {v!r}.")
    bad = [b for b in budgets if isinstance(b, bool) or not isinstance(b, int) or b <= 0]
    if bad or not budgets:
        raise ValueError(f"`budgets` must be positive integers; got {list(budgets)}.")


def _sensitivity_runs(
    convs: list[Conversation],
    encoder: Any,
    audit: dict[tuple[str, int], tuple[str, ...]] | None,
    methods: Sequence[str],
    kw: dict[str, Any],
) -> list[tuple[Choices, pd.DataFrame, dict[str, Any]]]:
    """Every other option of each choice, one at a time, with OSU-Mem, its disjoint variant
    and Flat Vector. The audit-label variant is skipped (and so absent from the report) when
    the overlay file is missing."""
    small = tuple(m for m in ("Flat Vector", "OSU-Mem", "OSU-Mem (disjoint)") if m in methods)
    out = []
    for ch in variants()[1:]:
        if ch.labels == "audit" and audit is None:
            continue
        p = prepare(convs, ch, encoder, audit)
        rec, _ = run_sweep(
            p.steps,
            p.embeddings,
            [t.queries for t in p.tables],
            p.query_embeddings,
            methods=small,
            **kw,
        )
        out.append((ch, rec, _structure(convs, p)))
    return out


def _write(
    out: Path,
    records: pd.DataFrame,
    structure: dict[str, Any],
    report: str,
    result: Any,
    prov: Any,
    force: bool,
) -> None:
    from osustat.provenance import atomic_output

    from .report import write_figures

    with atomic_output(out, inputs_digest=prov.inputs_digest, force=force) as tmp:
        tmp = Path(tmp)
        (tmp / "provenance.json").write_text(
            json.dumps(prov.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        records.to_csv(tmp / "records.csv", index=False)
        (tmp / "structure.json").write_text(
            json.dumps(_jsonable(structure), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        (tmp / "report.md").write_text(report, encoding="utf-8")
        write_figures(result, tmp)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating | float):
        v = float(x)
        return None if v != v else v
    return x


_ = BENCHMARK
