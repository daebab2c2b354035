"""τ-bench data: Stage C (concatenate episodes into groups) and Stage D (augment a group)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .formats import (
    MAX_GROUP,
    MIN_GROUP,
    MIN_MATCHED,
    MIN_STEPS,
    SHUFFLE_SEED,
    Episode,
)

__all__ = ["Group", "augment_group", "concatenate"]

# --------------------------------------------------------------------------- Stage C


@dataclass(frozen=True)
class Source:
    episode: Episode
    offset: int
    position: int  # 1-based position within the group (the namespace tag)
    focal: bool


@dataclass(frozen=True)
class Group:
    group_id: str
    sources: tuple[Source, ...]
    n_steps: int
    texts: tuple[str, ...]
    tools: tuple[str | None, ...]
    entities: tuple[frozenset[str], ...]
    subgoals: tuple[int, ...]
    costs: tuple[float, ...]
    source_of: tuple[int, ...]  # index into sources per step


def concatenate(
    episodes: Sequence[Episode], *, prefix: bool = True, seed: int = SHUFFLE_SEED
) -> tuple[list[Group], list[dict[str, Any]]]:
    """Stage C: drop short episodes, shuffle, pack into groups of [150, 300] steps.

    Returns the groups and the drops (one dict per dropped episode: file, index, reason).
    Episodes with fewer than 8 steps are dropped; episodes with fewer than 2 matched
    ground-truth actions stay as distractor content but are never focal (their drop as a
    focal source is counted too).
    """
    drops: list[dict[str, Any]] = []
    kept = []
    for ep in episodes:
        if len(ep.steps) < MIN_STEPS:
            drops.append(_drop(ep, f"fewer than {MIN_STEPS} steps"))
            continue
        if len(ep.matched) < MIN_MATCHED:
            drops.append(
                _drop(
                    ep,
                    f"fewer than {MIN_MATCHED} matched ground-truth actions "
                    "(not focal; kept as distractor)",
                )
            )
        kept.append(ep)
    order = np.random.default_rng(seed).permutation(len(kept))
    groups_eps: list[list[Episode]] = []
    cur: list[Episode] = []
    total = 0
    for k in order:
        ep = kept[int(k)]
        n = len(ep.steps)
        if total + n > MAX_GROUP:
            if total >= MIN_GROUP:
                groups_eps.append(cur)
                cur, total = [], 0
            if n > MAX_GROUP or total + n > MAX_GROUP:
                drops.append(_drop(ep, f"does not fit a group of at most {MAX_GROUP} steps"))
                continue
        cur.append(ep)
        total += n
        if total >= MIN_GROUP and total == MAX_GROUP:
            groups_eps.append(cur)
            cur, total = [], 0
    if cur and total >= MIN_GROUP:
        groups_eps.append(cur)
    elif cur:
        for ep in cur:
            drops.append(_drop(ep, f"in the trailing group of {total} < {MIN_GROUP} steps"))
    groups = [_assemble(f"g{g:03d}", eps, prefix) for g, eps in enumerate(groups_eps)]
    return groups, drops


def _drop(ep: Episode, reason: str) -> dict[str, Any]:
    return {
        "file": Path(ep.source_file).name,
        "index": ep.index,
        "task": ep.task,
        "reason": reason,
    }


def _assemble(gid: str, eps: list[Episode], prefix: bool) -> Group:
    sources, texts, tools, ents, sgs, costs, src_of = [], [], [], [], [], [], []
    offset = 0
    sg_offset = 0
    for pos, ep in enumerate(eps, start=1):
        focal = len(ep.matched) >= MIN_MATCHED
        sources.append(Source(ep, offset, pos, focal))
        tag = f"src{pos}:" if prefix else ""
        for st in ep.steps:
            texts.append(st.text)
            tools.append(None if st.tool is None else tag + st.tool)
            ents.append(frozenset(tag + e for e in st.entities))
            sgs.append(sg_offset + st.subgoal)
            costs.append(st.cost)
            src_of.append(pos - 1)
        offset += len(ep.steps)
        sg_offset += max(st.subgoal for st in ep.steps) + 1
    return Group(
        gid,
        tuple(sources),
        offset,
        tuple(texts),
        tuple(tools),
        tuple(ents),
        tuple(sgs),
        tuple(costs),
        tuple(src_of),
    )


def focal_evidence(source: Source) -> NDArray[np.int64]:
    return np.asarray([source.offset + i for i in source.episode.matched], dtype=np.int64)


# --------------------------------------------------------------------------- Stage D

N_COPIES = 3
MIN_GAP = 18
COPY_SIGMA = 0.10


@dataclass(frozen=True)
class Augmented:
    """A group with Stage-D copies inserted; `evidence` per focal source in new indices."""

    order: tuple[int, ...]  # per new step: original step index it copies (or is)
    is_copy: tuple[bool, ...]
    embeddings: NDArray[np.float64]
    evidence: dict[int, NDArray[np.int64]]  # source position -> evidence indices
    gap_relaxed: int  # focal evidence steps whose copies could not keep gap >= 18


def _positions(lo: int, hi: int, rng: np.random.Generator) -> tuple[list[int], bool]:
    """3 insertion points in [lo, hi) with pairwise gap >= 18 if the span allows."""
    span = hi - lo
    if span >= 2 * MIN_GAP + 1:
        for _ in range(200):
            p = sorted(int(x) for x in rng.integers(lo, hi, size=N_COPIES))
            if all(b - a >= MIN_GAP for a, b in pairwise(p)):
                return p, False
        step = span // N_COPIES
        return [lo + k * step for k in range(N_COPIES)], False
    step = max(1, span // N_COPIES)
    return [min(hi - 1, lo + k * step) for k in range(N_COPIES)], True


def augment_group(
    group: Group, embeddings: NDArray[np.float64], rng: np.random.Generator
) -> Augmented:
    """Stage D: 3 scattered copies of every focal evidence step within its focal segment.

    Copies are inserted after positions drawn in the focal source's segment (pairwise gap
    >= 18 when the segment spans at least 37 steps; otherwise evenly spaced and counted in
    `gap_relaxed`). A copy's embedding is the anchor's plus Gaussian noise of norm about
    .10 (per coordinate .10 / sqrt(d)), renormalized; it inherits the anchor's text, cost,
    tool, entities and subgoal, and is added as evidence of the same query.
    """
    d = embeddings.shape[1]
    inserts: dict[int, list[tuple[int, NDArray[np.float64], int]]] = {}
    relaxed = 0
    for src in group.sources:
        if not src.focal:
            continue
        lo, hi = src.offset, src.offset + len(src.episode.steps)
        for a in focal_evidence(src):
            pos, rel = _positions(lo, hi, rng)
            relaxed += int(rel)
            for p in pos:
                v = embeddings[a] + rng.normal(0.0, COPY_SIGMA / np.sqrt(d), d)
                v = v / np.linalg.norm(v)
                inserts.setdefault(p, []).append((int(a), v, src.position))
    order: list[int] = []
    is_copy: list[bool] = []
    rows: list[NDArray[np.float64]] = []
    new_index: dict[int, int] = {}
    copies_of: dict[int, list[int]] = {}  # position -> new indices of copies
    for i in range(group.n_steps):
        new_index[i] = len(order)
        order.append(i)
        is_copy.append(False)
        rows.append(embeddings[i])
        for a, v, spos in inserts.get(i, []):
            copies_of.setdefault(spos, []).append(len(order))
            order.append(a)
            is_copy.append(True)
            rows.append(v)
    evidence = {}
    for src in group.sources:
        if src.focal:
            orig = [new_index[int(a)] for a in focal_evidence(src)]
            evidence[src.position] = np.asarray(
                sorted(orig + copies_of.get(src.position, [])), dtype=np.int64
            )
    return Augmented(tuple(order), tuple(is_copy), np.vstack(rows), evidence, relaxed)


def drop_counts(drops: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Drops counted by reason and by source file."""
    out: dict[str, dict[str, int]] = {}
    for (reason, file), n in sorted(Counter((d["reason"], d["file"]) for d in drops).items()):
        out.setdefault(reason, {})[file] = n
    return out
