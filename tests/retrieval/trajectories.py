"""Random trajectories for the retrieval tests (hypothesis strategies and a plain generator)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from osustat.retrieval import Query, Trajectory


def random_trajectory(
    rng: np.random.Generator,
    n: int = 60,
    dim: int = 16,
    n_tools: int = 6,
    n_entities: int = 8,
    n_subgoals: int = 5,
) -> Trajectory:
    """Annotated steps with a few tools, entities and subgoal segments."""
    emb = rng.normal(size=(n, dim))
    costs = np.clip(rng.normal(15, 3, n), 5, None)
    tools = [None if rng.random() < 0.2 else f"tool{rng.integers(n_tools)}(x)" for _ in range(n)]
    entities = [
        {
            f"ent{e}"
            for e in rng.choice(
                n_entities, size=min(n_entities, int(rng.integers(0, 3))), replace=False
            )
        }
        for _ in range(n)
    ]
    subgoals = np.sort(rng.integers(0, n_subgoals, n)).tolist()
    return Trajectory.from_steps(emb, costs, tools=tools, entities=entities, subgoals=subgoals)


@st.composite
def trajectories(draw, min_steps: int = 0, max_steps: int = 60):
    n = draw(st.integers(min_steps, max_steps))
    seed = draw(st.integers(0, 2**32 - 1))
    n_tools = draw(st.integers(1, 6))
    n_entities = draw(st.integers(1, 8))
    return random_trajectory(
        np.random.default_rng(seed), n=n, n_tools=n_tools, n_entities=n_entities
    )


def random_query(rng: np.random.Generator, traj: Trajectory, n_evidence: int = 3) -> Query:
    ev = rng.choice(traj.n_steps, size=min(n_evidence, traj.n_steps), replace=False)
    q = traj.embeddings[ev].mean(axis=0) + 0.1 * rng.normal(size=traj.dim)
    return Query("q", q, traj.n_steps, ev)
