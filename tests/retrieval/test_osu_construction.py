"""OSU construction (retrieval/osu.py, array at a time) against a plain reading of the rules in
its module docstring: one step, one group and one edge at a time, dicts and lists, on many small
random trajectories under the paper's configuration and under non-default ones. (Against the
construction as it was at main 98ba1c3, pool for pool: benchmarks/osu_build.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from osustat.retrieval import OSUConfig, Trajectory, build_osus
from osustat.retrieval.osu import VIEWS, _boilerplate

from .trajectories import random_trajectory


def split(steps, gap, s_max):
    """Cut time-ordered steps at gaps > gap, then into chunks of at most s_max."""
    segments = []
    for s in steps:
        if segments and s - segments[-1][-1] <= gap:
            segments[-1].append(s)
        else:
            segments.append([s])
    return [seg[i : i + s_max] for seg in segments for i in range(0, len(seg), s_max)]


def communities(emb, k, s_max):
    """Mutual k-NN edges (exact cosine), most similar first, merged up to s_max steps."""
    t = len(emb)
    if t < 2:
        return []
    k = min(k, t - 1)
    cos = emb @ emb.T
    near = [
        set(sorted((j for j in range(t) if j != i), key=lambda j: -cos[i, j])[:k]) for i in range(t)
    ]
    edges = [(i, j) for i in range(t) for j in near[i] if i < j and i in near[j]]
    edges.sort(key=lambda e: (-cos[e], e[0], e[1]))
    label = list(range(t))  # community of each step: its first step
    for i, j in edges:
        a, b = label[i], label[j]
        if a != b and label.count(a) + label.count(b) <= s_max:
            label = [min(a, b) if x in (a, b) else x for x in label]
    out: dict[int, list[int]] = {}
    for i, a in enumerate(label):
        out.setdefault(a, []).append(i)
    return [c for _, c in sorted(out.items()) if len(c) >= 2]


def reference(traj, cfg):
    """(views, keys, members, centroids, step_osus) by the docstring's four steps."""
    t = traj.n_steps
    cands = []  # (view, key, steps)
    for view in cfg.views:
        keyed: dict = {}
        if view == "entity":
            for i in range(t):
                for e in sorted(traj.entities_of(i)):
                    keyed.setdefault(traj.entity_vocab[e], []).append(i)
            gap = cfg.delta_entity
        elif view == "tool":
            skip = _boilerplate(traj, cfg)
            for i in range(t):
                if traj.tool_ids[i] >= 0 and traj.tool_ids[i] not in skip:
                    keyed.setdefault(traj.tool_vocab[traj.tool_ids[i]], []).append(i)
            gap = cfg.delta_tool
        elif view == "subgoal":
            for i in range(t):
                if traj.subgoal_ids[i] >= 0:
                    keyed.setdefault(f"subgoal:{traj.subgoal_ids[i]}", []).append(i)
            gap = cfg.delta_subgoal
        else:
            for j, c in enumerate(communities(traj.embeddings, cfg.knn_k, cfg.s_max)):
                keyed[f"community:{j}"] = c
            gap = t + 1
        for key, steps in keyed.items():
            cands += [(view, key, p) for p in split(steps, gap, cfg.s_max) if len(p) >= cfg.f_min]
    # membership cap: view priority, larger first, then earlier; each step keeps m_max
    order = sorted(
        range(len(cands)), key=lambda j: (VIEWS.index(cands[j][0]), -len(cands[j][2]), j)
    )
    claimed = {s: 0 for s in range(t)}
    kept: dict[int, list[int]] = {j: [] for j in order}
    for s in range(t):
        for j in order:
            if s in cands[j][2] and claimed[s] < cfg.m_max:
                kept[j].append(s)
                claimed[s] += 1
    final = [j for j in order if len(kept[j]) >= cfg.f_min]
    members = [sorted(kept[j]) for j in final]
    means = np.array([traj.embeddings[m].mean(axis=0) for m in members]).reshape(-1, traj.dim)
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    centroids = means / np.where(norms > 0, norms, 1.0)
    step_osus = [[k for k, m in enumerate(members) if s in m] for s in range(t)]
    views = [cands[j][0] for j in final]
    keys = [cands[j][1] for j in final]
    return views, keys, members, centroids, step_osus


CONFIGS = [
    OSUConfig(),
    OSUConfig(m_max=1),
    OSUConfig(m_max=2, f_min=3),
    OSUConfig(f_min=1, s_max=3),
    OSUConfig(delta_gap=2, knn_k=3),
    OSUConfig(views=("subgoal", "similarity", "tool", "entity")),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"m{c.m_max}f{c.f_min}s{c.s_max}")
def test_matches_the_plain_rules(cfg):
    rng = np.random.default_rng(cfg.m_max * 100 + cfg.f_min * 10 + cfg.s_max)
    for trial in range(12):
        n = int(rng.integers(0, 90))
        traj = random_trajectory(rng, n, dim=int(rng.choice([2, 3, 16])), n_entities=6)
        pool = build_osus(traj, cfg)
        views, keys, members, centroids, step_osus = reference(traj, cfg)
        assert list(pool.views) == views, trial
        assert list(pool.keys) == keys, trial
        assert [m.tolist() for m in pool.members] == members, trial
        assert [k.tolist() for k in pool.step_osus] == step_osus, trial
        # the same bits as each OSU's own mean: what keeps retrieval records identical
        assert np.array_equal(pool.centroids, centroids), trial


def test_entity_ids_given_unsorted_and_repeated():
    """A Trajectory built directly may repeat or disorder a step's entity ids: a set each."""
    base = random_trajectory(np.random.default_rng(3), 50)
    ids = np.random.default_rng(4).integers(0, 4, size=150)
    traj = Trajectory(
        embeddings=base.embeddings,
        costs=base.costs,
        tool_ids=base.tool_ids,
        entity_ptr=np.arange(0, 151, 3),
        entity_ids=ids,
        subgoal_ids=base.subgoal_ids,
        tool_vocab=base.tool_vocab,
        entity_vocab=("a", "b", "c", "d"),
    )
    cfg = OSUConfig(views=("entity",))
    _, keys, members, _, _ = reference(traj, cfg)
    pool = build_osus(traj, cfg)
    assert (list(pool.keys), [m.tolist() for m in pool.members]) == (keys, members)
