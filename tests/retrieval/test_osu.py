import numpy as np
import pytest

from osustat.retrieval import OSUConfig, Trajectory, build_osus, evidence_membership
from osustat.retrieval.osu import _parts


def traj_with(n, tools=None, entities=None, subgoals=None, emb=None):
    emb = np.eye(n) if emb is None else emb
    return Trajectory.from_steps(
        emb, np.full(n, 10.0), tools=tools, entities=entities, subgoals=subgoals
    )


class TestConstruction:
    def test_table_8_defaults(self):
        cfg = OSUConfig()
        assert (cfg.delta_entity, cfg.delta_tool, cfg.delta_subgoal) == (64, 16, 8)
        assert (cfg.s_max, cfg.f_min, cfg.m_max) == (20, 2, 5)
        assert cfg.views == ("entity", "tool", "similarity", "subgoal")

    def test_bad_config(self):
        with pytest.raises(ValueError, match="`views` has unknown views"):
            OSUConfig(views=("topic",))
        with pytest.raises(ValueError, match="`m_max` must be >= 1"):
            OSUConfig(m_max=0)

    def test_gap_split_and_size_cap(self):
        def parts(steps, gap, s_max, group=None):
            group = np.zeros(len(steps), dtype=np.int64) if group is None else np.array(group)
            part_group, sizes = _parts(np.array(steps), group, gap, s_max)
            return part_group.tolist(), sizes.tolist()

        assert parts([0, 1, 2, 20, 21], gap=8, s_max=20) == ([0, 0], [3, 2])
        assert parts([0, 1, 2, 10], gap=8, s_max=20) == ([0], [4])  # a gap of 8 is kept
        assert parts(list(range(5)), gap=8, s_max=2) == ([0, 0, 0], [2, 2, 1])
        # a new group starts a new part even when its first step is close
        assert parts([0, 1, 2, 3], gap=8, s_max=20, group=[0, 0, 1, 1]) == ([0, 1], [2, 2])
        assert parts([], gap=8, s_max=20) == ([], [])

    def test_entity_view_splits_at_64(self):
        ents = [set() for _ in range(200)]
        for i in (0, 10, 74, 75, 160):  # gaps 10, 64 (kept), 1, 85 (split)
            ents[i] = {"acct"}
        pool = build_osus(traj_with(200, entities=ents), OSUConfig(views=("entity",)))
        assert [m.tolist() for m in pool.members] == [[0, 10, 74, 75]]  # [160] alone: pruned

    def test_tool_view_splits_at_16_and_skips_boilerplate(self):
        tools = [None] * 60
        for i in (0, 16, 33, 34):  # gaps 16 (kept), 17 (split), 1
            tools[i] = "search(q)"
        tools[5] = tools[6] = "respond"
        pool = build_osus(traj_with(60, tools=tools), OSUConfig(views=("tool",)))
        assert [m.tolist() for m in pool.members] == [[0, 16], [33, 34]]
        assert set(pool.keys) == {"search(q)"}

    def test_namespaced_boilerplate_is_skipped(self):
        # τ-bench Stage C prefixes tools with "src<k>:"; the boilerplate check must see through it
        tools = [None] * 60
        tools[0] = tools[3] = "src2:think"
        tools[10] = tools[12] = "src2:transfer_to_human_agents"
        tools[20] = tools[22] = "src2:book"
        pool = build_osus(traj_with(60, tools=tools), OSUConfig(views=("tool",)))
        assert set(pool.keys) == {"src2:book"}

    def test_frequent_tool_is_boilerplate(self):
        tools = ["ping"] * 7 + ["book"] * 3
        pool = build_osus(traj_with(10, tools=tools), OSUConfig(views=("tool",)))
        assert set(pool.keys) == {"book"}

    def test_subgoal_view_splits_at_8(self):
        pool = build_osus(
            traj_with(30, subgoals=[0] * 3 + [1] * 10 + [0] * 17), OSUConfig(views=("subgoal",))
        )
        sizes = sorted(m.size for m in pool.members)
        assert sizes == [3, 10, 17]

    def test_similarity_view_mutual_knn(self):
        emb = np.vstack([np.tile([1.0, 0, 0], (4, 1)), np.tile([0, 1.0, 0], (4, 1))])
        emb += 0.01 * np.random.default_rng(0).normal(size=emb.shape)
        pool = build_osus(traj_with(8, emb=emb), OSUConfig(views=("similarity",), knn_k=3))
        assert sorted(m.tolist() for m in pool.members) == [[0, 1, 2, 3], [4, 5, 6, 7]]

    def test_membership_cap_prefers_entity_then_larger(self):
        ents = [{"a", "b"}, {"a", "b"}, {"a"}]
        tools = ["t", "t", "t"]
        pool = build_osus(
            traj_with(3, tools=tools, entities=ents), OSUConfig(views=("entity", "tool"), m_max=1)
        )
        # every step keeps its highest-priority membership: the larger entity OSU "a"
        assert [(v, k) for v, k in zip(pool.views, pool.keys, strict=True)] == [("entity", "a")]

    def test_centroids_are_normalized_means(self):
        emb = np.random.default_rng(1).normal(size=(6, 4))
        traj = traj_with(6, emb=emb, subgoals=[0] * 6)
        pool = build_osus(traj, OSUConfig(views=("subgoal",)))
        mean = traj.embeddings.mean(axis=0)
        assert np.allclose(pool.centroids[0], mean / np.linalg.norm(mean))

    def test_empty_trajectory(self):
        pool = build_osus(Trajectory.empty(4))
        assert pool.n_osus == 0 and pool.centroids.shape == (0, 4)


class TestEvidenceMembership:
    def test_counts(self):
        traj = traj_with(4, tools=["a", "a", "b", "b"], entities=[{"x"}, {"x"}, {"x"}, set()])
        over = build_osus(traj, OSUConfig(views=("entity", "tool")))
        disj = build_osus(traj, OSUConfig(views=("entity", "tool"), m_max=1))
        assert evidence_membership(over, [0, 1, 2, 3])["mean_osus_per_evidence"] == 1.75
        stats = evidence_membership(disj, [0, 1, 2, 3])
        assert stats["fraction_evidence_in_no_osu"] == 0.25  # step 3 evicted under disjoint
        assert np.isnan(evidence_membership(over, [])["mean_osus_per_evidence"])
