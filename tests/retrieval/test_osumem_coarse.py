"""OSU-Mem's long-horizon coarse stage (`coarse='capped'` / `'capped-ann'`, off by default):
validated, within the retriever contract, the paper's rule wherever K is not capped, capped
where it is, deterministic. No timings (those are in benchmarks/retrieval_long_coarse.py)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import osustat.retrieval.osumem as osumem
from osustat.retrieval import OSUMem, OSUMemGF
from osustat.retrieval.contract import check_retriever

from .trajectories import random_trajectory

pytest.importorskip("hnswlib")

BUDGETS = (64, 128, 192, 256, 512, 1600)


def _answers(r, traj, rng, n_queries=4):
    """(steps, tokens) of `r` for queries at several budgets and query times."""
    out = []
    for _ in range(n_queries):
        q = traj.embeddings[rng.choice(traj.n_steps, 3)].mean(axis=0) + 0.2 * rng.normal(
            size=traj.dim
        )
        t = int(rng.integers(traj.n_steps // 2, traj.n_steps + 1))
        for b in BUDGETS:
            res = r.retrieve(q, b, time=t)
            out.append((res.steps.tolist(), res.tokens))
    return out


@pytest.mark.parametrize(
    ("settings", "error", "match"),
    [
        ({"coarse": "ann"}, ValueError, "`coarse` must be one of"),
        ({"coarse": None}, ValueError, "`coarse`"),
        ({"coarse_k_max": 0}, ValueError, "`coarse_k_max` must be >= 1"),
        ({"coarse_k_max": 7.5}, TypeError, "`coarse_k_max` must be an integer"),
        ({"coarse_ef": 0}, ValueError, "`coarse_ef` must be >= 1"),
        ({"coarse_ef": "200"}, TypeError, "`coarse_ef`"),
    ],
)
def test_settings_are_validated(settings, error, match):
    with pytest.raises(error, match=match):
        OSUMem(**settings)


def test_the_oracle_refuses_the_index():
    with pytest.raises(ValueError, match=r"`coarse` must be one of .* for OSUMemGF"):
        OSUMemGF(coarse="capped-ann")
    assert OSUMemGF(coarse="capped").coarse == "capped"


def test_default_cap_is_the_paper_sizes_bound():
    """77 = (M_max * 311 // f_min) // 10: the cap never binds on the paper's trajectories."""
    assert osumem.COARSE_K_MAX == 77
    for n_osus in range(0, 5 * osumem.PAPER_MAX_STEPS // 2 + 1):
        for b in BUDGETS:
            assert osumem.capped_k(n_osus, b) == osumem.adaptive_k(n_osus, b)
    assert osumem.capped_k(26_489, 256) == 77 < osumem.adaptive_k(26_489, 256)
    assert osumem.capped_k(26_489, 6000) == 200  # the B/30 term is not capped


@pytest.mark.parametrize(
    "factory",
    [
        functools.partial(OSUMem, coarse="capped"),
        functools.partial(OSUMem, coarse="capped-ann"),
        functools.partial(OSUMem, coarse="capped-ann", coarse_k_max=1, coarse_ef=1),
        functools.partial(OSUMemGF, coarse="capped"),
    ],
    ids=["capped", "capped-ann", "capped-ann-k1-ef1", "gf-capped"],
)
def test_retriever_contract(factory):
    check_retriever(
        factory, bad_settings=[{"coarse": "x"}, {"coarse_k_max": -1}, {"coarse_ef": 0.5}]
    ).raise_if_failed()


def test_off_by_default_and_its_settings_ignored_when_off():
    """`coarse='paper'` is the default, and the cap and the index settings do not reach it;
    on a pool where the cap would bind, the capped stage answers differently (so the
    comparison can fail)."""
    traj = random_trajectory(np.random.default_rng(3), n=1000, dim=24)
    default = OSUMem().build(traj)
    assert default.coarse == "paper" and default._centroid_index is None
    off = OSUMem(coarse="paper", coarse_k_max=1, coarse_ef=1).build(traj)
    assert _answers(default, traj, np.random.default_rng(0)) == _answers(
        off, traj, np.random.default_rng(0)
    )
    capped = OSUMem(coarse="capped", coarse_k_max=1).build(traj)
    assert _answers(capped, traj, np.random.default_rng(0)) != _answers(
        default, traj, np.random.default_rng(0)
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("coarse", ["capped", "capped-ann"])
def test_the_paper_rule_where_the_cap_does_not_bind(seed, coarse):
    """On trajectories of the paper's sizes (<= 311 steps) K is the paper's, and with an
    index whose search list covers the pool (ef >= |U|) the answers are the paper rule's."""
    rng = np.random.default_rng(seed)
    traj = random_trajectory(rng, n=int(rng.integers(150, 312)), dim=32)
    paper = OSUMem().build(traj)
    other = OSUMem(coarse=coarse, coarse_ef=1000).build(traj)
    assert paper.pool_.n_osus <= 1000
    assert _answers(other, traj, np.random.default_rng(seed)) == _answers(
        paper, traj, np.random.default_rng(seed)
    )


@pytest.mark.parametrize("coarse", ["capped", "capped-ann"])
def test_a_binding_cap_keeps_only_the_top_k_centroids(coarse):
    """With `coarse_k_max = 1` on 600 steps (|U|/10 > 8), K = max(8, B/30): every retrieved
    step belongs to one of the K OSUs of highest centroid score, where the paper's K is
    larger."""
    rng = np.random.default_rng(11)
    traj = random_trajectory(rng, n=600, dim=32)
    r = OSUMem(coarse=coarse, coarse_k_max=1, coarse_ef=1000).build(traj)
    n_osus = r.pool_.n_osus
    larger = 0
    for _ in range(5):
        q = rng.normal(size=traj.dim)
        q /= np.linalg.norm(q)
        for b in BUDGETS:
            k = osumem.capped_k(n_osus, b, 1)
            assert k == max(8, b // 30)
            larger += osumem.adaptive_k(n_osus, b) > k
            top = osumem.top_k_stable(r.pool_.centroids @ q, k)
            allowed = set(np.concatenate([r.pool_.members[i] for i in top]).tolist())
            steps = set(r.retrieve(q, b).steps.tolist())
            assert steps and steps <= allowed
    assert larger > 0


def test_the_index_is_deterministic_and_close_to_the_exact_top_k():
    """Two builds answer the same; on 2,000 steps (|U| in the thousands, the index path)
    the index's top-K holds nearly all of the exact top-K."""
    rng = np.random.default_rng(5)
    traj = random_trajectory(rng, n=2000, dim=32)
    a = OSUMem(coarse="capped-ann").build(traj)
    b = OSUMem(coarse="capped-ann").build(traj)
    assert _answers(a, traj, np.random.default_rng(1)) == _answers(
        b, traj, np.random.default_rng(1)
    )
    n = a.pool_.n_osus
    live = np.ones(n, dtype=bool)
    found = total = 0
    for _ in range(20):
        q = traj.embeddings[rng.choice(traj.n_steps, 3)].mean(axis=0)
        q /= np.linalg.norm(q)
        got, scores = a._coarse_ann(q, live, 256)
        k = a._k(n, 256)
        assert got.size == k < n
        np.testing.assert_allclose(scores, a.pool_.centroids[got] @ q)
        assert np.all(np.diff(scores) <= 0)  # ranked by exact score
        found += len(set(got.tolist()) & set(osumem.top_k_stable(a.pool_.centroids @ q, k)))
        total += k
    assert found / total > 0.9
