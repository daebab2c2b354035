"""The contract every retriever passes (one parametrized test, scikit-learn style)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osustat.retrieval import (
    BASELINES,
    CohesionOSU,
    CoverageGuidedOSU,
    OSUConfig,
    OSUMem,
    OSUMemGF,
    Retriever,
    Trajectory,
)

from .trajectories import random_query, random_trajectory, trajectories

FACTORIES = {
    **{name: cls for name, cls in BASELINES.items()},
    "OSU-Mem": OSUMem,
    "OSU-Mem + GF": OSUMemGF,
    "OSU-Mem (disjoint)": lambda: OSUMem(osu_config=OSUConfig(m_max=1)),
    "OSU-Mem (sim only)": lambda: OSUMem(osu_config=OSUConfig(views=("similarity",))),
    "OSU-Mem (no novelty)": lambda: OSUMem(lambda_nov=0.0),
    "coverage-guided": CoverageGuidedOSU,
    "cohesion": CohesionOSU,
}


def run(retriever, traj, q, budget, time=None, evidence=None):
    kwargs = {"time": time}
    if retriever.oracle:
        kwargs["evidence"] = evidence if evidence is not None else np.zeros(0, dtype=np.int64)
    return retriever.retrieve(q, budget, **kwargs)


@pytest.mark.parametrize("name", sorted(FACTORIES))
class TestRetrieverContract:
    def test_protocol(self, name):
        assert isinstance(FACTORIES[name](), Retriever)

    @settings(max_examples=25)
    @given(
        traj=trajectories(min_steps=1),
        budget=st.sampled_from([0, 7, 64, 128, 256, 512]),
        seed=st.integers(0, 1000),
    )
    def test_budget_duplicates_indices(self, name, traj, budget, seed):
        rng = np.random.default_rng(seed)
        query = random_query(rng, traj)
        time = int(rng.integers(0, traj.n_steps + 1))
        retriever = FACTORIES[name]().build(traj)
        res = run(
            retriever,
            traj,
            query.embedding,
            budget,
            time=time,
            evidence=query.evidence[query.evidence < time],
        )
        steps = res.steps
        assert res.tokens <= budget + 1e-9
        assert traj.costs[steps].sum() + res.summary_tokens == pytest.approx(res.tokens)
        assert np.unique(steps).size == steps.size
        assert np.all((steps >= 0) & (steps < time))

    @settings(max_examples=15)
    @given(traj=trajectories(min_steps=2), seed=st.integers(0, 1000))
    def test_future_steps_do_not_shape_the_answer(self, name, traj, seed):
        rng = np.random.default_rng(seed)
        query = random_query(rng, traj)
        time = int(rng.integers(1, traj.n_steps))
        ev = query.evidence[query.evidence < time]
        full = run(
            FACTORIES[name]().build(traj), traj, query.embedding, 256, time=time, evidence=ev
        )
        prefix = traj.prefix(time)
        alone = run(FACTORIES[name]().build(prefix), prefix, query.embedding, 256, evidence=ev)
        assert full.steps.tolist() == alone.steps.tolist()
        assert full.tokens == alone.tokens

    def test_early_query_time_with_disjoint_pool(self, name):
        # OSUs exist, but none starts before time 2 (crashed OSU-Mem once)
        traj = Trajectory.from_steps(
            np.eye(6), [10.0] * 6, entities=[set(), set(), set(), {"x"}, {"x"}, set()]
        )
        res = run(
            FACTORIES[name]().build(traj), traj, np.ones(6), 64, time=2, evidence=np.array([1])
        )
        assert np.all(res.steps < 2)

    def test_deterministic(self, name):
        traj = random_trajectory(np.random.default_rng(1), n=120)
        query = random_query(np.random.default_rng(2), traj)
        a = run(FACTORIES[name]().build(traj), traj, query.embedding, 256, evidence=query.evidence)
        b = run(FACTORIES[name]().build(traj), traj, query.embedding, 256, evidence=query.evidence)
        assert np.array_equal(a.steps, b.steps) and a.tokens == b.tokens

    def test_empty_trajectory_and_zero_budget(self, name):
        empty = FACTORIES[name]().build(Trajectory.empty(16))
        assert run(empty, None, np.ones(16), 256).steps.size == 0
        traj = random_trajectory(np.random.default_rng(3), n=30)
        res = run(FACTORIES[name]().build(traj), traj, np.ones(16), 0)
        assert res.steps.size == 0 and res.tokens == 0

    def test_unbuilt_is_an_error(self, name):
        with pytest.raises(RuntimeError, match="is not built"):
            run(FACTORIES[name](), None, np.ones(16), 64)

    def test_bad_arguments(self, name):
        traj = random_trajectory(np.random.default_rng(3), n=30)
        r = FACTORIES[name]().build(traj)
        with pytest.raises(ValueError, match="`budget` must be a finite number >= 0"):
            run(r, traj, np.ones(16), -1)
        with pytest.raises(ValueError, match=r"`query` must have shape \(16,\)"):
            run(r, traj, np.ones(8), 64)
        with pytest.raises(ValueError, match=r"`time` must be in \[0, 30\]"):
            run(r, traj, np.ones(16), 64, time=31)

    def test_evidence_only_for_oracles(self, name):
        traj = random_trajectory(np.random.default_rng(3), n=30)
        r = FACTORIES[name]().build(traj)
        if r.oracle:
            with pytest.raises(TypeError, match="is an oracle: pass `evidence=`"):
                r.retrieve(np.ones(16), 64)
        else:
            with pytest.raises(TypeError, match="must not see evidence"):
                r.retrieve(np.ones(16), 64, evidence=[1, 2])
