"""OSU-Mem's greedy expansion (retrieval/expansion.py) against a plain reference of the rule
OSUMem documents (one OSU and one step at a time, no matrices, no incremental state), on many
small random trajectories, with and without the novelty term. (Against the expansion as it
was at main 953cdf2, number for number: benchmarks/retrieval_identity.py and
benchmarks/retrieval_greedy.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from osustat.retrieval import OSUMem
from osustat.retrieval.osu import build_osus
from osustat.retrieval.osumem import adaptive_k

from .trajectories import random_trajectory

BUDGETS = (48, 128, 192, 256, 512, 1600)


def reference(traj, pool, q, budget, *, top_c=8, lam=0.3, alpha=0.4, novelty_budget=192.0):
    """Algorithm 1 with the paper's coarse stage on `pool`, one OSU and one step at a time."""
    q = q / np.linalg.norm(q)
    r = pool.centroids @ q
    top = sorted(range(pool.n_osus), key=lambda i: (-r[i], i))[: adaptive_k(pool.n_osus, budget)]
    sims = traj.embeddings @ q
    rows = [sorted(pool.members[i].tolist(), key=lambda s: -sims[s]) for i in top]
    emb32 = traj.embeddings.astype(np.float32)
    novelty = lam > 0 and budget >= novelty_budget
    selected: list[int] = []
    seen_ents: set[int] = set()
    seen_tools: set[int] = set()

    max_cos = np.full(traj.n_steps, -np.inf)  # each step's largest cosine to the selected

    def nu(s):
        emb_nov = 1.0 - float(max_cos[s]) if selected else 1.0
        tool = int(traj.tool_ids[s])
        new_tool = tool >= 0 and tool not in seen_tools
        struct = min(1.0, 0.6 * len(traj.entities_of(s) - seen_ents) + 0.4 * new_tool)
        return (1 - alpha) * emb_nov + alpha * struct

    remaining = list(range(len(top)))
    used = 0.0
    while used < budget and remaining:
        best, best_score = None, -np.inf
        for k in list(remaining):
            cands = [s for s in rows[k] if s not in selected][:top_c]
            if not cands:  # nothing left in it: dropped
                remaining.remove(k)
                continue
            value = r[top[k]]
            if novelty:
                value += lam * sum(nu(s) for s in cands) / len(cands)
            score = value / (sum(traj.costs[s] for s in cands) + 1e-6)
            if best is None or score > best_score:
                best, best_score = k, score
        if best is None:
            break
        remaining.remove(best)
        for s in rows[best]:
            if s not in selected and used + traj.costs[s] <= budget:
                selected.append(s)
                np.maximum(max_cos, emb32 @ emb32[s], out=max_cos)
                used += traj.costs[s]
                seen_ents |= traj.entities_of(s)
                seen_tools.add(int(traj.tool_ids[s]))
    order = sorted(selected, key=lambda s: (-sims[s], s))
    return order, used


@pytest.mark.parametrize("seed", range(24))
def test_the_expansion_is_the_plain_greedy(seed):
    rng = np.random.default_rng(seed)
    traj = random_trajectory(rng, n=int(rng.integers(20, 160)), dim=int(rng.choice([8, 16])))
    r = OSUMem().build(traj)
    pool = build_osus(traj)
    for _ in range(3):
        q = traj.embeddings[rng.choice(traj.n_steps, 3)].mean(axis=0)
        q = q + 0.3 * rng.normal(size=traj.dim)
        for b in BUDGETS:
            got = r.retrieve(q, b)
            steps, used = reference(traj, pool, q, b)
            assert got.steps.tolist() == steps
            assert got.tokens == pytest.approx(used, rel=1e-12)
