"""τ-bench data: Stage C (concatenate episodes into groups) and Stage D (augment a group)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
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

__all__ = [
    "NOISE_READINGS",
    "PACKINGS",
    "Group",
    "augment_group",
    "concatenate",
    "noise_sd",
    "twins",
]

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


PACKINGS = ("any", "one-episode-per-task-per-group")


def concatenate(
    episodes: Sequence[Episode],
    *,
    prefix: bool = True,
    seed: int = SHUFFLE_SEED,
    packing: str = "any",
) -> tuple[list[Group], list[dict[str, Any]]]:
    """Stage C: drop short episodes, shuffle, pack into groups of [150, 300] steps.

    Returns the groups and the drops (one dict per dropped episode: file, index, reason).
    Episodes with fewer than 8 steps are dropped; episodes with fewer than 2 matched
    ground-truth actions stay as distractor content but are never focal (their drop as a
    focal source is counted too). `packing` ``'any'`` (default; the paper: "shuffled with seed
    42 and packed") takes the episodes in shuffled order; ``'one-episode-per-task-per-group'``
    takes the first episode in shuffled order whose task is not yet in the open group, so no
    group holds two runs of one task (no same-task twins).
    """
    if packing not in PACKINGS:
        raise ValueError(f"`packing` must be one of {list(PACKINGS)}; got {packing!r}.")
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
    groups_eps = _pack([kept[int(k)] for k in order], packing != "any", drops)
    groups = [_assemble(f"g{g:03d}", eps, prefix) for g, eps in enumerate(groups_eps)]
    return groups, drops


def _pack(
    queue: list[Episode], one_per_task: bool, drops: list[dict[str, Any]]
) -> list[list[Episode]]:
    groups_eps: list[list[Episode]] = []
    cur: list[Episode] = []
    tasks: set[str] = set()
    total = 0
    while queue:
        k = next((j for j, e in enumerate(queue) if not (one_per_task and e.task in tasks)), None)
        if k is None:  # every episode left shares a task with the open group
            if total >= MIN_GROUP:
                groups_eps.append(cur)
                cur, tasks, total = [], set(), 0
                continue
            break
        ep = queue.pop(k)
        n = len(ep.steps)
        if total + n > MAX_GROUP:
            if total >= MIN_GROUP:
                groups_eps.append(cur)
                cur, tasks, total = [], set(), 0
            if n > MAX_GROUP or total + n > MAX_GROUP:
                drops.append(_drop(ep, f"does not fit a group of at most {MAX_GROUP} steps"))
                continue
        cur.append(ep)
        tasks.add(ep.task)
        total += n
        if total >= MIN_GROUP and total == MAX_GROUP:
            groups_eps.append(cur)
            cur, tasks, total = [], set(), 0
    for ep in queue:
        drops.append(_drop(ep, "only episodes of tasks already in the open group were left"))
    if cur and total >= MIN_GROUP:
        groups_eps.append(cur)
    elif cur:
        for ep in cur:
            drops.append(_drop(ep, f"in the trailing group of {total} < {MIN_GROUP} steps"))
    return groups_eps


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
NOISE_READINGS = ("per-coordinate", "per-norm")


def noise_sd(sigma: float, d: int, reading: str) -> float:
    """Per-coordinate sd of Gaussian noise "σ" on a d-dimensional vector under `reading`.

    ``'per-coordinate'``: each coordinate has sd σ (noise norm about σ·sqrt(d));
    ``'per-norm'``: the noise vector has norm about σ (per coordinate σ / sqrt(d)).
    """
    if reading == "per-coordinate":
        return sigma
    if reading == "per-norm":
        return sigma / float(np.sqrt(d))
    raise ValueError(f"noise reading must be one of {list(NOISE_READINGS)}; got {reading!r}.")


@dataclass(frozen=True)
class Placement:
    """Where one focal evidence step's copies went (original step indices, before insertion)."""

    anchor: int
    segment: int  # length of the focal segment
    positions: tuple[int, ...]
    gap_met: bool  # planned pairwise gap >= MIN_GAP
    planned_gap: int  # smallest planned gap between consecutive copies
    realized_gap: int = -1  # smallest gap between its copies in the augmented index


@dataclass(frozen=True)
class Augmented:
    """A group with Stage-D copies inserted; `evidence` per focal source in new indices."""

    order: tuple[int, ...]  # per new step: original step index it copies (or is)
    is_copy: tuple[bool, ...]
    embeddings: NDArray[np.float64]
    evidence: dict[int, NDArray[np.int64]]  # source position -> evidence indices
    placements: tuple[Placement, ...]

    @property
    def gap_relaxed(self) -> int:
        """Focal evidence steps whose segment cannot hold copies >= MIN_GAP apart."""
        return sum(not p.gap_met for p in self.placements)


def _positions(lo: int, hi: int, rng: np.random.Generator) -> tuple[list[int], bool]:
    """3 insertion points in [lo, hi): pairwise gap >= 18 whenever the span allows.

    Feasible (span >= 37): three sorted draws from [0, span - 36) shifted by 0, 18 and 36, so
    every draw meets the gap (no rejection, no fallback). Infeasible: the widest even spacing
    the segment holds, ``(span - 1) // 2``.
    """
    span = hi - lo
    room = span - (N_COPIES - 1) * MIN_GAP
    if room >= 1:
        y = sorted(int(x) for x in rng.integers(0, room, size=N_COPIES))
        return [lo + v + k * MIN_GAP for k, v in enumerate(y)], True
    step = (span - 1) // (N_COPIES - 1)
    return [lo + k * step for k in range(N_COPIES)], False


def augment_group(
    group: Group,
    embeddings: NDArray[np.float64],
    rng: np.random.Generator,
    *,
    copy_noise: str = "per-norm",
) -> Augmented:
    """Stage D: 3 scattered copies of every focal evidence step within its focal segment.

    Copies are inserted after positions drawn in the focal source's segment (pairwise gap
    >= 18 when the segment spans at least 37 steps; otherwise the widest even spacing, and
    the step is counted in `gap_relaxed`; every step's placement is in `placements`). A copy's
    embedding is the anchor's plus Gaussian noise σ = .10 under `copy_noise` (see
    :func:`noise_sd`; default ``'per-norm'``, the paper's "small embedding noise" and
    "near-duplicates"), renormalized; it inherits the anchor's text, cost, tool, entities and
    subgoal, and is added as evidence of the same query.
    """
    d = embeddings.shape[1]
    sd = noise_sd(COPY_SIGMA, d, copy_noise)
    inserts: dict[int, list[tuple[int, NDArray[np.float64], int, int]]] = {}
    plans: list[Placement] = []
    for src in group.sources:
        if not src.focal:
            continue
        lo, hi = src.offset, src.offset + len(src.episode.steps)
        for a in focal_evidence(src):
            pos, met = _positions(lo, hi, rng)
            gap = min(y - x for x, y in pairwise(pos))
            for p in pos:
                v = embeddings[a] + rng.normal(0.0, sd, d)
                v = v / np.linalg.norm(v)
                inserts.setdefault(p, []).append((int(a), v, src.position, len(plans)))
            plans.append(Placement(int(a), hi - lo, tuple(pos), met, gap))
    order: list[int] = []
    is_copy: list[bool] = []
    rows: list[NDArray[np.float64]] = []
    new_index: dict[int, int] = {}
    copies_of: dict[int, list[int]] = {}  # position -> new indices of copies
    copies_by_plan: dict[int, list[int]] = {}
    for i in range(group.n_steps):
        new_index[i] = len(order)
        order.append(i)
        is_copy.append(False)
        rows.append(embeddings[i])
        for a, v, spos, k in inserts.get(i, []):
            copies_of.setdefault(spos, []).append(len(order))
            copies_by_plan.setdefault(k, []).append(len(order))
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
    placements = tuple(
        replace(p, realized_gap=min(y - x for x, y in pairwise(sorted(copies_by_plan[k]))))
        for k, p in enumerate(plans)
    )
    return Augmented(tuple(order), tuple(is_copy), np.vstack(rows), evidence, placements)


def twins(group: Group) -> list[tuple[str, bool, bool]]:
    """Per focal evidence step: (its file, exact-text twin in another source of the group,
    twin in another run of the same task)."""
    by_text: dict[str, set[int]] = {}
    for i, t in enumerate(group.texts):
        by_text.setdefault(t, set()).add(group.source_of[i])
    out = []
    for k, src in enumerate(group.sources):
        if not src.focal:
            continue
        for a in focal_evidence(src):
            others = by_text[group.texts[int(a)]] - {k}
            same = any(group.sources[o].episode.task == src.episode.task for o in others)
            out.append((Path(src.episode.source_file).name, bool(others), same))
    return out


def drop_counts(drops: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Drops counted by reason and by source file."""
    out: dict[str, dict[str, int]] = {}
    for (reason, file), n in sorted(Counter((d["reason"], d["file"]) for d in drops).items()):
        out.setdefault(reason, {})[file] = n
    return out
