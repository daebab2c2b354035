"""One choice setting made ready to run: steps, queries and embeddings per conversation, and
the structure counts (every exclusion, repair and marginal) the report states."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .build import QueryTable, build_queries, conversation_steps
from .choices import Choices
from .data import Conversation
from .entities import EntityExtractor

__all__ = ["Prepared", "audit_path", "prepare", "structure"]


@dataclass(frozen=True)
class Prepared:
    """One choice setting, ready to run: steps, queries and embeddings per conversation."""

    choices: Choices
    steps: list[Any]
    tables: list[QueryTable]
    embeddings: list[NDArray[np.float64]]
    query_embeddings: list[NDArray[np.float64]]


def audit_path(data: Path) -> Path:
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


def structure(convs: list[Conversation], prep: Prepared) -> dict[str, Any]:
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
        "choices": prep.choices.as_mapping(),
        "conversations": len(convs),
        "turns": sum(s.n_steps for s in prep.steps),
        "sessions": sum(c.n_sessions for c in convs),
        "sessions_max": max((c.n_sessions for c in convs), default=0),
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
