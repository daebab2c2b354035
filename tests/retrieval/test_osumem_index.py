"""OSU-Mem's retrieval index: the partial top-K equals the full stable sort's prefix, and the
retriever's answers do not depend on it (against the full sort, ties included)."""

from __future__ import annotations

import numpy as np
import pytest

import osustat.retrieval.osumem as osumem
from osustat.retrieval import OSUMem, Trajectory


@pytest.mark.parametrize("seed", range(40))
def test_top_k_stable_is_the_stable_sorts_prefix(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    # few distinct values: many ties, also at the k-th place; signed zeros among them
    values = rng.choice(np.array([-0.0, 0.0, 0.25, -0.5, 0.9, 1.0]), n) * rng.choice([1, 1e-9])
    if seed % 2:
        values = rng.normal(size=n)
    full = np.argsort(-values, kind="stable")
    for k in {0, 1, n // 3, n // 2, n - 1, n, n + 5}:
        got = osumem.top_k_stable(values, k)
        np.testing.assert_array_equal(got, full[: max(k, 0)])


def _old_coarse(self, r, live, budget, evidence):
    """OSU-Mem's coarse stage as it was: a full stable sort of every live OSU."""
    ids = np.flatnonzero(live)
    order = ids[np.argsort(-r[ids], kind="stable")]
    return order[: osumem.adaptive_k(ids.size, budget)].tolist()


def test_retrieval_is_unchanged_by_the_partial_top_k(monkeypatch):
    rng = np.random.default_rng(7)
    n = 500
    # a handful of distinct embeddings: centroid scores tie often
    emb = rng.normal(size=(6, 16))[rng.integers(6, size=n)]
    traj = Trajectory.from_steps(
        emb,
        rng.integers(5, 40, size=n).astype(float),
        tools=[f"t{i % 7}" for i in range(n)],
        entities=[{f"e{i % 11}", f"f{i % 13}"} for i in range(n)],
    )
    queries = [rng.normal(size=16) for _ in range(6)]
    budgets = (64, 256, 1024)
    new = [OSUMem().build(traj).retrieve(q, b) for q in queries for b in budgets]
    monkeypatch.setattr(OSUMem, "_coarse", _old_coarse)
    old = [OSUMem().build(traj).retrieve(q, b) for q in queries for b in budgets]
    for a, b in zip(new, old, strict=True):
        np.testing.assert_array_equal(a.steps, b.steps)
        assert a.tokens == b.tokens
