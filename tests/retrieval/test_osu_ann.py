"""The similarity view's approximate k-NN graph (above ``knn_exact_max_steps``).

pynndescent (the ``ann`` extra) is imported, not skipped: ``make test`` installs it, so CI
runs these tests.
"""

import subprocess
import sys

import numpy as np
import pynndescent  # noqa: F401  (fail loudly when the ann extra is missing)
import pytest

from osustat.retrieval import OSUConfig, OSUMem, Trajectory, build_osus
from osustat.retrieval.osu import _approximate_knn, _exact_knn


def clustered(n, dim=48, seed=0):
    """Unit vectors around n / 10 random centres (a trajectory with topics)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 10), dim))
    x = centres[rng.integers(len(centres), size=n)] + 0.6 * rng.normal(size=(n, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def trajectory(emb, seed=0):
    rng = np.random.default_rng(seed)
    n = len(emb)
    return Trajectory.from_steps(
        emb,
        rng.uniform(5, 25, n),
        tools=[f"t{k}" for k in rng.integers(6, size=n)],
        entities=[{f"e{k}"} for k in rng.integers(30, size=n)],
        subgoals=np.sort(rng.integers(n // 12, size=n)).tolist(),
    )


def recall(approx, exact):
    return np.mean(
        [len(set(a) & set(e)) / 5 for a, e in zip(approx.tolist(), exact.tolist(), strict=True)]
    )


def topics(n, dim=384, seed=0):
    """``benchmarks/growth.py``'s long-trajectory vectors: ~n / 10 topics in runs of ~10 steps,
    within-topic cosine ~ 0.7, across ~ 0."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 10), dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    topic = np.sort(rng.integers(len(centres), size=n))
    x = centres[topic] + rng.normal(scale=0.6 / np.sqrt(dim), size=(n, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_recall_against_exact_knn():
    emb = clustered(600)
    exact, _ = _exact_knn(emb, 5)
    approx = _approximate_knn(emb, 5)
    assert approx.shape == (600, 5)
    assert not (approx == np.arange(600)[:, None]).any()  # never a step's own neighbour
    assert all(len(set(row)) == 5 for row in approx.tolist())
    assert recall(approx, exact) >= 0.99


def test_recall_meets_the_declared_criterion_on_topic_vectors():
    """The acceptance criterion (5-NN recall >= 0.99, docs/performance.md) on the benchmark's
    kind of trajectory at a moderate size (the benchmark checks 16,000 steps and real
    vectors)."""
    emb = topics(3000, seed=5)
    assert recall(_approximate_knn(emb, 5), _exact_knn(emb, 5)[0]) >= 0.99


def test_duplicate_steps_never_list_themselves():
    emb = clustered(300, seed=2)
    emb[100:110] = emb[99]  # eleven identical steps
    approx = _approximate_knn(emb, 5)
    assert not (approx == np.arange(300)[:, None]).any()
    assert all(len(set(row)) == 5 for row in approx.tolist())


def test_forced_threshold_gives_valid_osus_close_to_exact():
    traj = trajectory(clustered(500))
    cfg_ann = OSUConfig(knn_exact_max_steps=100)  # 500 steps > 100: the approximate graph
    ann, exact = build_osus(traj, cfg_ann), build_osus(traj, OSUConfig())
    for pool, cfg in ((ann, cfg_ann), (exact, OSUConfig())):
        assert pool.n_osus > 0
        for m in pool.members:
            assert cfg.f_min <= m.size <= cfg.s_max
            assert np.all(np.diff(m) > 0) and m.min() >= 0 and m.max() < traj.n_steps
        assert pool.membership_counts().max() <= cfg.m_max
        for k, m in enumerate(pool.members):  # step_osus is the inverse of members
            assert all(k in pool.step_osus[s].tolist() for s in m.tolist())
        np.testing.assert_allclose(np.linalg.norm(pool.centroids, axis=1), 1.0)

    # only the similarity view may change, and most of its communities do not
    def by_view(pool, view):
        return {
            tuple(m.tolist()) for m, v in zip(pool.members, pool.views, strict=True) if v == view
        }

    for view in ("entity", "tool", "subgoal"):
        assert by_view(ann, view) == by_view(exact, view)
    a, e = by_view(ann, "similarity"), by_view(exact, "similarity")
    assert len(a & e) >= 0.8 * len(e)
    res = OSUMem(osu_config=cfg_ann).build(traj).retrieve(traj.embeddings[7], budget=256)
    assert res.tokens <= 256 and res.steps.size > 0


def test_approximate_graph_is_deterministic():
    traj = trajectory(clustered(300, seed=3), seed=3)
    cfg = OSUConfig(knn_exact_max_steps=50)
    a, b = build_osus(traj, cfg), build_osus(traj, cfg)
    assert [m.tolist() for m in a.members] == [m.tolist() for m in b.members]
    emb = clustered(800, seed=4)
    np.testing.assert_array_equal(_approximate_knn(emb, 5), _approximate_knn(emb, 5))


_GRAPH = """
import hashlib, numpy as np
from osustat.retrieval.osu import _approximate_knn
rng = np.random.default_rng(4)
x = rng.normal(size=(80, 48))[rng.integers(80, size=800)] + 0.6 * rng.normal(size=(800, 48))
x /= np.linalg.norm(x, axis=1, keepdims=True)
digest = hashlib.sha256(_approximate_knn(x, 5).tobytes()).hexdigest()
"""


@pytest.mark.slow
def test_same_graph_in_another_process():
    """The graph of a fresh process (its own seed state and JIT) equals this process's."""
    here: dict = {}
    exec(_GRAPH, here)
    there = subprocess.run(
        [sys.executable, "-c", _GRAPH + "print(digest)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert there == here["digest"]


def test_exact_path_at_or_below_the_threshold():
    """At or below the threshold the exact graph is used: the pool equals the one built with
    an (absurdly) high threshold, and differs from the forced approximate one only through
    the similarity view."""
    traj = trajectory(clustered(200, seed=1), seed=1)
    at = build_osus(traj, OSUConfig(knn_exact_max_steps=200))
    high = build_osus(traj, OSUConfig(knn_exact_max_steps=10**9))
    assert [m.tolist() for m in at.members] == [m.tolist() for m in high.members]
    assert at.keys == high.keys
    np.testing.assert_array_equal(at.centroids, high.centroids)


def test_threshold_is_validated():
    with pytest.raises(ValueError, match="`knn_exact_max_steps` must be >= 1"):
        OSUConfig(knn_exact_max_steps=0)
    assert OSUConfig().knn_exact_max_steps == 4096
