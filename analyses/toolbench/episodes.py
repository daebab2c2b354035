"""Planted-retrieval episodes over ToolBench trajectories (paper Section 5.1, Appendix G.1).

Per episode: a target trajectory with at least ``n_ev`` plantable steps (every call but
``Finish``), ``n_ev`` of them drawn as evidence; a background of ``background`` steps, a
fraction ``confounder_fraction`` drawn from the steps of the target's ``n_neighbours``
query-embedding nearest-neighbour trajectories (confounders) and the rest from the other
trajectories (unrelated); the background shuffled and the evidence inserted at evenly spaced
positions; the query is the target's natural-language query (embedded verbatim by the caller)
asked after the last step. All episodes of a seed come from ``default_rng(seed)``.

Targets are drawn without replacement within a seed while the data has enough eligible
trajectories; otherwise with replacement, and the repeats are counted. Background steps are
drawn without replacement from their pool while it is large enough, else with replacement
(a 30-neighbour pool of ~4-step trajectories holds far fewer than 375 steps, so confounder
steps repeat); :func:`design_summary` counts all of it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .data import ToolTrajectory

__all__ = ["PlantedEpisode", "build_episodes", "design_summary", "evenly_spaced"]


@dataclass(frozen=True, eq=False)
class PlantedEpisode:
    """One planted episode: which global steps it holds, in order, and where the evidence is.

    ``steps[i] = (trajectory index, step index)``; ``evidence`` are positions into ``steps``.
    ``episode_id`` names the target (``t<index>``, the unit that repeats across seeds);
    ``query_id`` is the same, with ``.<k>`` appended for the k-th repeat of a target within
    one seed (only when the data holds fewer eligible targets than episodes).
    """

    episode_id: str
    query_id: str
    seed: int
    n_ev: int
    target: int
    steps: NDArray[np.int64]
    evidence: NDArray[np.int64]
    n_confounder: int
    n_unrelated: int


def evenly_spaced(n_ev: int, n_total: int) -> NDArray[np.int64]:
    """Positions ``round((k + 1) n_total / (n_ev + 1))``, k = 0..n_ev-1 (interior, distinct).

    >>> evenly_spaced(3, 503).tolist()
    [126, 252, 377]
    """
    return np.array([round((k + 1) * n_total / (n_ev + 1)) for k in range(n_ev)], dtype=np.int64)


def _draw(rng: np.random.Generator, pool: NDArray[np.int64], size: int) -> NDArray[np.int64]:
    if size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    idx = rng.choice(len(pool), size=size, replace=len(pool) < size)
    return pool[idx]


def build_episodes(
    trajectories: tuple[ToolTrajectory, ...] | list[ToolTrajectory],
    query_embeddings: Any,
    *,
    n_episodes: int = 200,
    seed: int = 42,
    n_ev: int = 3,
    background: int = 500,
    confounder_fraction: float = 0.75,
    n_neighbours: int = 30,
) -> list[PlantedEpisode]:
    """Build `n_episodes` planted episodes (see the module docstring).

    Raises
    ------
    ValueError
        When the data cannot supply the design: no target with `n_ev` plantable steps, fewer
        than ``n_neighbours + 1`` other trajectories, or no unrelated step; the message says
        what could be built instead.
    """
    q = np.asarray(query_embeddings, dtype=np.float64)
    n = len(trajectories)
    if q.shape[0] != n:
        raise ValueError(f"`query_embeddings` has {q.shape[0]} rows for {n} trajectories.")
    if n_episodes < 1 or n_ev < 1 or background < 1 or not 0 <= confounder_fraction <= 1:
        raise ValueError(
            "`n_episodes`, `n_ev` and `background` must be >= 1 and "
            "`confounder_fraction` in [0, 1]."
        )
    eligible = [i for i, t in enumerate(trajectories) if len(t.evidence_candidates) >= n_ev]
    if not eligible:
        best = max((len(t.evidence_candidates) for t in trajectories), default=0)
        raise ValueError(
            f"no trajectory has {n_ev} plantable steps (the longest has {best}); "
            f"n_ev <= {best} could be built."
        )
    if n - 1 < n_neighbours + 1:
        raise ValueError(
            f"{n} trajectories cannot give {n_neighbours} neighbours plus unrelated steps; "
            f"at most n_neighbours = {max(n - 2, 0)} could be built."
        )
    norms = np.linalg.norm(q, axis=1, keepdims=True)
    qn = q / np.where(norms > 0, norms, 1.0)
    step_refs = [
        np.array([(i, s) for s in range(len(t.steps))], dtype=np.int64).reshape(-1, 2)
        for i, t in enumerate(trajectories)
    ]
    rng = np.random.default_rng(seed)
    if len(eligible) >= n_episodes:
        targets = rng.choice(eligible, size=n_episodes, replace=False)
    else:
        targets = rng.choice(eligible, size=n_episodes, replace=True)
    n_conf = round(background * confounder_fraction)
    n_unrel = background - n_conf
    episodes = []
    seen: Counter[int] = Counter()
    for target in targets.tolist():
        sims = qn @ qn[target]
        sims[target] = -np.inf
        nbrs = np.argsort(-sims, kind="stable")[:n_neighbours]
        others = np.setdiff1d(np.arange(n), np.r_[nbrs, target])
        conf_pool = np.concatenate([step_refs[i] for i in nbrs])
        unrel_pool = np.concatenate([step_refs[i] for i in others])
        if len(unrel_pool) == 0 and n_unrel:
            raise ValueError(
                "no unrelated steps: confounder_fraction = 1 is all that can be built."
            )
        cands = np.array(trajectories[target].evidence_candidates, dtype=np.int64)
        ev_steps = np.sort(rng.choice(cands, size=n_ev, replace=False))
        bg = np.concatenate([_draw(rng, conf_pool, n_conf), _draw(rng, unrel_pool, n_unrel)])
        bg = bg[rng.permutation(len(bg))]
        total = background + n_ev
        pos = evenly_spaced(n_ev, total)
        steps = np.zeros((total, 2), dtype=np.int64)
        is_ev = np.zeros(total, dtype=bool)
        is_ev[pos] = True
        steps[pos] = np.column_stack([np.full(n_ev, target), ev_steps])
        steps[~is_ev] = bg
        unit = f"t{target:04d}"
        repeat = seen[target]
        seen[target] += 1
        episodes.append(
            PlantedEpisode(
                unit,
                f"{unit}.{repeat}" if repeat else unit,
                seed,
                n_ev,
                target,
                steps,
                pos,
                n_conf,
                n_unrel,
            )
        )
    return episodes


def design_summary(
    episodes_by_seed: dict[int, list[PlantedEpisode]], trajectories: Any, n_neighbours: int = 30
) -> dict[str, Any]:
    """How many distinct targets and background steps the episodes use, and how they repeat."""
    all_eps = [e for eps in episodes_by_seed.values() for e in eps]
    per_seed = {
        str(s): {
            "episodes": len(eps),
            "distinct_targets": len({e.target for e in eps}),
        }
        for s, eps in episodes_by_seed.items()
    }
    counts = Counter(e.target for e in all_eps)
    seed_sets = [{e.target for e in eps} for eps in episodes_by_seed.values()]
    in_all = set.intersection(*seed_sets) if seed_sets else set()
    conf_src: set[int] = set()
    dup_fraction = []
    for e in all_eps:
        bg = e.steps[np.setdiff1d(np.arange(len(e.steps)), e.evidence)]
        conf_src.update(bg[:, 0].tolist())
        uniq = len({(int(a), int(b)) for a, b in bg})
        dup_fraction.append(1 - uniq / len(bg))
    n_ev = all_eps[0].n_ev if all_eps else 0
    eligible = sum(len(t.evidence_candidates) >= n_ev for t in trajectories)
    return {
        "n_ev": n_ev,
        "eligible_targets": eligible,
        "episodes": len(all_eps),
        "per_seed": per_seed,
        "distinct_targets_all_seeds": len(counts),
        "targets_used_more_than_once": sum(c > 1 for c in counts.values()),
        "episodes_whose_target_repeats": sum(c for c in counts.values() if c > 1),
        "targets_in_every_seed": len(in_all),
        "distinct_background_source_trajectories": len(conf_src),
        "mean_duplicate_background_fraction": float(np.mean(dup_fraction)) if dup_fraction else 0.0,
        "n_neighbours": n_neighbours,
    }
