"""Disjoint Hierarchy's coarse stage keeps K = min(P, max(8, P/10, B/30)) partitions: once B/30
reaches the number of partitions P it keeps them all and ranks exactly as Flat Vector (why
LoCoMo's Disjoint Hierarchy equals Flat Vector at B = 1024: at most 32 sessions; issue 38)."""

from __future__ import annotations

import numpy as np

from osustat.retrieval.baselines import DisjointHierarchy, FlatVector
from osustat.retrieval.trajectory import Trajectory


def _trajectory(n_partitions: int, per: int, rng: np.random.Generator) -> Trajectory:
    n = n_partitions * per
    emb = rng.normal(size=(n, 16))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    return Trajectory.from_steps(emb, [10.0] * n, subgoals=[f"s{i // per}" for i in range(n)])


def test_all_partitions_kept_means_flat_vector_ranking() -> None:
    rng = np.random.default_rng(0)
    traj = _trajectory(12, 10, rng)  # P = 12 > the floor 8
    dh, flat = DisjointHierarchy().build(traj), FlatVector().build(traj)
    differ = 0
    for _ in range(20):
        q = rng.normal(size=16)
        q /= np.linalg.norm(q)
        same = dh.retrieve(q, 360, time=traj.n_steps).steps.tolist()  # 360 // 30 = 12 = P
        assert same == flat.retrieve(q, 360, time=traj.n_steps).steps.tolist()
        a = dh.retrieve(q, 100, time=traj.n_steps).steps.tolist()  # K = 8 of 12 partitions
        differ += a != flat.retrieve(q, 100, time=traj.n_steps).steps.tolist()
    assert differ > 0  # below that budget the coarse stage does cut partitions
