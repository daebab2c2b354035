"""The paper's Propositions 1-3 as property tests on generated trajectories (Section 4)."""

from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from osustat.retrieval import OSUConfig, Trajectory, build_osus

from .trajectories import trajectories

OVERLAP = OSUConfig()  # M_max = 5
DISJOINT = OSUConfig(m_max=1)


class TestProposition1:
    """Overlap never reaches fewer steps than disjoint construction."""

    @given(trajectories(min_steps=2, max_steps=80))
    def test_disjoint_coverage_is_subset_of_overlap_coverage(self, traj):
        # steps in at least one OSU
        over = set(np.flatnonzero(build_osus(traj, OVERLAP).membership_counts()).tolist())
        disj = set(np.flatnonzero(build_osus(traj, DISJOINT).membership_counts()).tolist())
        assert disj <= over

    @given(trajectories(min_steps=2, max_steps=80), st.data())
    def test_evicted_evidence_under_overlap_is_subset_of_disjoint(self, traj, data):
        evidence = data.draw(st.sets(st.integers(0, traj.n_steps - 1), min_size=1, max_size=5))
        over = build_osus(traj, OVERLAP).membership_counts()
        disj = build_osus(traj, DISJOINT).membership_counts()
        evicted_over = {e for e in evidence if over[e] == 0}
        evicted_disj = {e for e in evidence if disj[e] == 0}
        assert evicted_over <= evicted_disj

    @given(trajectories(min_steps=2, max_steps=80))
    def test_memberships_respect_caps(self, traj):
        for cfg in (OVERLAP, DISJOINT):
            pool = build_osus(traj, cfg)
            assert pool.membership_counts().max(initial=0) <= cfg.m_max
            assert all(cfg.f_min <= m.size <= cfg.s_max for m in pool.members)

    @given(st.lists(st.integers(0, 100), min_size=1, max_size=4), st.integers(0, 3))
    def test_reachability_under_independence(self, percents, star):
        # exact rationals, so the strict inequality is not lost to float underflow
        p = [Fraction(k, 100) for k in percents]
        star = star % len(p)  # the disjoint assignment's view v*
        miss = Fraction(1)
        for pv in p:
            miss *= 1 - pv
        over = 1 - miss
        assert over >= max(p) >= p[star]
        if p[star] < 1 and any(pv > 0 for j, pv in enumerate(p) if j != star):
            assert over > p[star]  # the strict inequality of Proposition 1


@st.composite
def t_plus_e_plus(draw):
    """A trajectory whose evidence is T+E+ within the splitting gaps (Proposition 2)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(30, 80))
    n_ev = draw(st.integers(3, 5))
    start = draw(st.integers(0, n - 16))
    evidence = np.sort(rng.choice(np.arange(start, start + 16), size=n_ev, replace=False))
    tools = [f"bg{rng.integers(4)}" if rng.random() < 0.8 else None for _ in range(n)]
    entities = [{f"b{rng.integers(6)}"} if rng.random() < 0.7 else set() for _ in range(n)]
    for j, e in enumerate(evidence):
        tools[e] = f"ev_tool_{j}"
        entities[e] = {f"ev_ent_{j}"} | ({"b0"} if rng.random() < 0.5 else set())
    # the shared pairs: an entity pair and a tool pair (they need not be the same pair)
    pe = rng.choice(n_ev, size=2, replace=False)
    # the tool pair reaches an evidence step outside the entity pair (the strict case)
    outside = [j for j in range(n_ev) if j not in pe]
    pt = np.array([outside[int(rng.integers(len(outside)))], pe[int(rng.integers(2))]])
    for j in pe:
        entities[evidence[j]] = entities[evidence[j]] | {"SHARED_ENTITY"}
    for j in pt:
        tools[evidence[j]] = "SHARED_TOOL(x)"
    traj = Trajectory.from_steps(
        rng.normal(size=(n, 8)),
        np.full(n, 15.0),
        tools=tools,
        entities=entities,
        subgoals=[i // 10 for i in range(n)],
    )
    return traj, evidence


class TestProposition2:
    @given(t_plus_e_plus())
    def test_overlap_binds_evidence_from_both_views(self, case):
        traj, evidence = case
        n = evidence.size
        over = build_osus(traj, OVERLAP)

        def evidence_in(pool, k):
            return set(np.intersect1d(pool.members[k], evidence).tolist())

        ent = [
            k for k, v in enumerate(over.views) if v == "entity" and len(evidence_in(over, k)) >= 2
        ]
        tool = [
            k for k, v in enumerate(over.views) if v == "tool" and len(evidence_in(over, k)) >= 2
        ]
        assert ent and tool
        # fix the entity OSU keyed on the shared entity, as in the proposition
        u_ent = next(k for k in ent if over.keys[k] == "SHARED_ENTITY")
        best_tool = max(tool, key=lambda k: len(evidence_in(over, k)))
        combined = len(evidence_in(over, u_ent) | evidence_in(over, best_tool)) / n
        assert combined >= 2 / n
        shared_tool = next(k for k in tool if over.keys[k] == "SHARED_TOOL(x)")
        # strict: the tool OSU adds evidence the entity OSU does not reach
        assert evidence_in(over, shared_tool) - evidence_in(over, u_ent)
        disj = build_osus(traj, DISJOINT)
        disj_ent = [
            k
            for k, key in enumerate(disj.keys)
            if disj.views[k] == "entity" and key == "SHARED_ENTITY"
        ]
        cr_disj = len(evidence_in(disj, disj_ent[0])) / n if disj_ent else 0.0
        assert combined >= cr_disj


def busy_trajectory(rng: np.random.Generator, n: int) -> Trajectory:
    """Steps with up to 4 entities each, so that 7 candidate memberships compete for 5."""
    tools = [f"t{rng.integers(3)}" for _ in range(n)]
    entities = [
        {f"e{k}" for k in rng.choice(6, size=int(rng.integers(0, 5)), replace=False)}
        for _ in range(n)
    ]
    return Trajectory.from_steps(
        rng.normal(size=(n, 8)),
        np.full(n, 10.0),
        tools=tools,
        entities=entities,
        subgoals=[i // 6 for i in range(n)],
    )


class TestPerKeyMonotonicity:
    @given(st.integers(0, 2**32 - 1), st.integers(10, 60))
    def test_every_disjoint_osu_is_inside_an_overlap_osu_of_the_same_key(self, seed, n):
        traj = busy_trajectory(np.random.default_rng(seed), n)
        over = build_osus(traj, OVERLAP)
        disj = build_osus(traj, DISJOINT)
        over_sets = [
            (v, k, set(m.tolist()))
            for v, k, m in zip(over.views, over.keys, over.members, strict=True)
        ]
        for v, k, m in zip(disj.views, disj.keys, disj.members, strict=True):
            assert any(v == ov and k == ok and set(m.tolist()) <= om for ov, ok, om in over_sets)

    def test_the_cap_binds_in_this_generator(self):
        counts = [
            build_osus(busy_trajectory(np.random.default_rng(s), 40), OVERLAP)
            .membership_counts()
            .max()
            for s in range(5)
        ]
        assert max(counts) == OVERLAP.m_max


class TestProposition3:
    @given(st.integers(0, 2**32 - 1), st.integers(1, 3))
    def test_centroid_tends_to_non_evidence_mean(self, seed, m_e):
        rng = np.random.default_rng(seed)
        dim = 8
        ev = rng.normal(size=(m_e, dim)) + 2.0
        q = ev.mean(axis=0) / np.linalg.norm(ev.mean(axis=0))
        gaps = []
        for m_non in (10, 100, 1000):
            non = rng.normal(size=(m_non, dim)) * 0.3 + rng.normal(size=dim)
            emb = np.vstack([ev, non])
            cfg = OSUConfig(views=("subgoal",), s_max=10_000, delta_gap=10_000)
            traj = Trajectory.from_steps(emb, np.full(len(emb), 10.0), subgoals=[0] * len(emb))
            z = build_osus(traj, cfg).centroids[0]
            h_e = traj.embeddings[:m_e].mean(axis=0)
            h_n = traj.embeddings[m_e:].mean(axis=0)
            f = m_e / len(emb)
            target = h_n / np.linalg.norm(h_n) @ q
            gap = abs(z @ q - target)
            # normalization is 2-Lipschitz relative to the norm: the gap vanishes with f
            assert gap <= 2 * f * np.linalg.norm(h_e - h_n) / np.linalg.norm(h_n) + 1e-12
            gaps.append(gap)
        assert gaps[-1] <= gaps[0] + 1e-12 or gaps[-1] < 1e-2
