"""The paper's baselines (Section 5.3, Appendix B.1).

Every baseline uses the trajectory's step embeddings and token costs and the shared packing
policy of :func:`retrieval.base.pack`. Each docstring states what the baseline does and which
choices the paper leaves open. Summaries are an embedding with a token cost: they spend budget
and are never evidence.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from .base import BaseRetriever, RetrievalResult, check_setting, greedy_pack, pack
from .osumem import adaptive_k
from .trajectory import Trajectory

__all__ = [
    "BASELINES",
    "BudgetTruncatedReplay",
    "CoverageAware",
    "DisjointHierarchy",
    "FlatMMR",
    "FlatVector",
    "NoLTMemory",
    "PeriodicSummary",
    "SlidingWindow",
    "TreeAbstraction",
]


def _summary_cost(costs: NDArray[np.float64]) -> float:
    """A summary's cost: the mean cost of what it summarizes, at least 5 tokens."""
    return float(max(5.0, round(float(costs.mean())))) if costs.size else 5.0


def _newest_that_fit(
    costs: NDArray[np.float64], end: int, budget: float
) -> tuple[list[int], float]:
    """The steps before `end`, newest first, until the next one does not fit `budget` (a
    contiguous recent suffix), and the tokens they use: Budget-Truncated Replay's whole
    selection and Periodic Summary's recent window."""
    chosen: list[int] = []
    used = 0.0
    for s in range(end - 1, -1, -1):
        if used + costs[s] > budget:
            break
        chosen.append(s)
        used += float(costs[s])
    return chosen, used


class NoLTMemory(BaseRetriever):
    """No long-term memory: always returns an empty context."""

    name: ClassVar[str] = "No LT Memory"

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        return self._result([], 0.0)


class BudgetTruncatedReplay(BaseRetriever):
    """The most recent steps, newest first, until the next one does not fit.

    Open choice: replay stops at the first step that does not fit (a contiguous recent
    suffix), unlike the skip-and-continue packing of the similarity methods.
    """

    name: ClassVar[str] = "Budget-Truncated Replay"

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        chosen, used = _newest_that_fit(self.trajectory_.costs, end, budget)
        return self._result(chosen, used)


class SlidingWindow(BaseRetriever):
    """A rolling window of the last ``W`` steps, ``W = floor(B / mean step cost)``.

    Open choice: the window is sized in steps from the trajectory's mean step cost (so a
    window of expensive recent steps holds fewer tokens than Budget-Truncated Replay) and
    then packed newest first with skip-and-continue packing.
    """

    name: ClassVar[str] = "Sliding Window"

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        costs = self.trajectory_.costs
        width = int(budget // float(costs.mean()))
        window = list(range(end - 1, max(end - 1 - width, -1), -1))
        chosen, used = pack(window, costs, budget)
        return self._result(chosen, used)


class PeriodicSummary(BaseRetriever):
    """A recent window plus one summary per older chunk of ``period`` steps.

    Half the budget (``recent_fraction = .5``) goes to the most recent steps (newest first);
    the rest to summaries of the older history, one per chunk of ``period = 20`` steps, the
    most recent chunks first. A summary is the chunk's normalized mean embedding at the
    chunk's mean step cost. Open choices (the paper gives none): the split, the period, the
    summary cost, and that summaries are query-independent. Summaries never count as
    evidence, so this baseline's recall comes from its window alone.
    """

    name: ClassVar[str] = "Periodic Summary"

    def __init__(self, *, period: int = 20, recent_fraction: float = 0.5) -> None:
        self.period = check_setting("period", period, integer=True, low=1)
        self.recent_fraction = check_setting("recent_fraction", recent_fraction, low=0, high=1)

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        costs = self.trajectory_.costs
        chosen, used = _newest_that_fit(costs, end, self.recent_fraction * budget)
        oldest_recent = min(chosen) if chosen else end
        summary_tokens, n_summaries = 0.0, 0
        for stop in range(oldest_recent, 0, -self.period):
            c = _summary_cost(costs[max(0, stop - self.period) : stop])
            if used + c > budget:
                break
            used += c
            summary_tokens += c
            n_summaries += 1
        return self._result(chosen, used, summary_tokens, n_summaries)


class FlatVector(BaseRetriever):
    """Top-cosine steps ``h_i . q``, packed in descending similarity."""

    name: ClassVar[str] = "Flat Vector"

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        sims = self.trajectory_.embeddings[:end] @ q
        chosen, used = pack(np.argsort(-sims, kind="stable"), self.trajectory_.costs, budget)
        return self._result(chosen, used)


class FlatMMR(BaseRetriever):
    """Maximal marginal relevance: ``lam * cos(q, h_i) - (1 - lam) * max_{j in S} cos(h_i, h_j)``.

    ``lam = .7`` (Section 5.3); greedy, one step per iteration among those that still fit.
    """

    name: ClassVar[str] = "Flat + MMR"

    def __init__(self, *, lam: float = 0.7) -> None:
        self.lam = check_setting("lam", lam, low=0, high=1)

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        emb = self.trajectory_.embeddings[:end]
        sims = emb @ q
        redundancy = np.zeros(end)

        def update(s: int) -> None:
            np.maximum(redundancy, emb @ emb[s], out=redundancy)

        chosen, used = greedy_pack(
            self.trajectory_.costs[:end],
            budget,
            lambda: self.lam * sims - (1 - self.lam) * redundancy,
            update,
        )
        return self._result(chosen, used)


class CoverageAware(BaseRetriever):
    """Step-level greedy ``s_i + beta * [subgoal of i not yet covered]``.

    ``beta = .12``: the paper gives no value for this baseline; we use its coverage bonus of
    Table 8. Steps without a subgoal never get the bonus.
    """

    name: ClassVar[str] = "Coverage-Aware"

    def __init__(self, *, beta: float = 0.12) -> None:
        self.beta = check_setting("beta", beta, low=0)

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        traj = self.trajectory_
        sims = traj.embeddings[:end] @ q
        sg = traj.subgoal_ids[:end]
        covered = np.zeros(int(sg.max(initial=-1)) + 2, dtype=bool)  # last slot: "no subgoal"
        sg_idx = np.where(sg >= 0, sg, covered.size - 1)
        covered[-1] = True

        def update(s: int) -> None:
            covered[sg_idx[s]] = True

        chosen, used = greedy_pack(
            traj.costs[:end], budget, lambda: sims + self.beta * ~covered[sg_idx], update
        )
        return self._result(chosen, used)


def _segments(values: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """Maximal runs of consecutive equal values (a new run also starts at every -1)."""
    if values.size == 0:
        return []
    starts = np.flatnonzero(np.r_[True, (values[1:] != values[:-1]) | (values[1:] < 0)])
    bounds = np.r_[starts, values.size]
    return [np.arange(bounds[i], bounds[i + 1]) for i in range(starts.size)]


class DisjointHierarchy(BaseRetriever):
    """Disjoint subgoal partitions; top-cosine steps within the selected partitions.

    Partitions are maximal runs of consecutive steps with the same subgoal id (every step in
    exactly one). Partitions are scored by their normalized mean embedding; the top
    ``K = min(P, max(8, P/10, B/30))`` partitions (OSU-Mem's adaptive K, an open choice) are
    selected and all their steps packed in descending step-query cosine.
    """

    name: ClassVar[str] = "Disjoint Hierarchy"

    def _build(self, trajectory: Trajectory) -> None:
        self.partitions_ = _segments(trajectory.subgoal_ids)
        if self.partitions_:
            cents = np.stack([trajectory.embeddings[p].mean(axis=0) for p in self.partitions_])
            norms = np.linalg.norm(cents, axis=1, keepdims=True)
            self.centroids_ = cents / np.where(norms > 0, norms, 1.0)

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        traj = self.trajectory_
        live = [j for j, p in enumerate(self.partitions_) if p[0] < end]
        if not live:
            return self._result([], 0.0)
        scores = self.centroids_[live] @ q
        top = [live[j] for j in np.argsort(-scores, kind="stable")[: adaptive_k(len(live), budget)]]
        steps = np.concatenate([self.partitions_[j] for j in top])
        steps = steps[steps < end]
        sims = traj.embeddings[steps] @ q
        chosen, used = pack(steps[np.argsort(-sims, kind="stable")], traj.costs, budget)
        return self._result(chosen, used)


class TreeAbstraction(BaseRetriever):
    """RAPTOR-style tree: recursive k-means of the steps, coarse-to-fine expansion.

    Build: the steps are clustered with spherical k-means into ``ceil(n / branching)``
    clusters (``branching = 8``; k-means++ seeding from ``seed``; 20 Lloyd iterations), then
    the cluster centroids are clustered again, until at most ``branching`` nodes remain. A
    node's summary is the normalized mean of its steps at their mean cost.
    Retrieve: best-first expansion from the top level by centroid-query cosine: pop the best
    node; a step is packed if it fits; an internal node pushes its children. The summary of
    the first top-level node expanded is packed first (RAPTOR's coarse context); the paper
    gives no summary policy, so this single summary is an open choice.
    """

    name: ClassVar[str] = "Tree Abstraction"

    def __init__(self, *, branching: int = 8, seed: int = 0) -> None:
        self.branching = check_setting("branching", branching, integer=True, low=2)
        self.seed = check_setting("seed", seed, integer=True, low=0)

    def _build(self, trajectory: Trajectory) -> None:
        rng = np.random.default_rng(self.seed)
        emb = trajectory.embeddings
        n = trajectory.n_steps
        # node arrays: children lists, centroid, member steps
        self.children_: list[list[int]] = [[] for _ in range(n)]
        self.members_: list[NDArray[np.int64]] = [np.array([i]) for i in range(n)]
        cents = [emb[i] for i in range(n)]
        level = list(range(n))
        while len(level) > self.branching:
            k = int(np.ceil(len(level) / self.branching))
            labels = _spherical_kmeans(np.stack([cents[j] for j in level]), k, rng)
            new_level = []
            for c in range(k):
                kids = [level[j] for j in np.flatnonzero(labels == c)]
                if not kids:
                    continue
                steps = np.concatenate([self.members_[j] for j in kids])
                mean = emb[steps].mean(axis=0)
                norm = float(np.linalg.norm(mean))
                cents.append(mean / norm if norm > 0 else mean)
                self.children_.append(kids)
                self.members_.append(np.sort(steps))
                new_level.append(len(cents) - 1)
            if len(new_level) == len(level):  # no progress: stop rather than loop
                break
            level = new_level
        self.centroids_ = np.stack(cents) if cents else np.zeros((0, trajectory.dim))
        self.top_ = level

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        import heapq

        costs = self.trajectory_.costs
        n = self.trajectory_.n_steps
        scores = self.centroids_ @ q
        heap = [(-scores[j], j) for j in self.top_ if self.members_[j][0] < end]
        heapq.heapify(heap)
        chosen: list[int] = []
        used = summary_tokens = 0.0
        n_summaries = 0
        while heap and used < budget:
            _, j = heapq.heappop(heap)
            if j < n:
                if used + costs[j] <= budget:
                    chosen.append(j)
                    used += float(costs[j])
                continue
            if n_summaries == 0 and j in self.top_:
                c = _summary_cost(costs[self.members_[j]])
                if used + c <= budget:
                    used += c
                    summary_tokens += c
                    n_summaries = 1
            for child in self.children_[j]:
                if self.members_[child][0] < end:
                    heapq.heappush(heap, (-scores[child], child))
        return self._result(chosen, used, summary_tokens, n_summaries)


def _spherical_kmeans(
    x: NDArray[np.float64], k: int, rng: np.random.Generator, iterations: int = 20
) -> NDArray[np.int64]:
    """Cosine k-means with k-means++ seeding; returns a label per row."""
    n = x.shape[0]
    centers = [x[int(rng.integers(n))]]
    for _ in range(1, k):
        d = 1.0 - np.max(x @ np.stack(centers).T, axis=1)
        d = np.maximum(d, 0.0)
        p = d / d.sum() if d.sum() > 0 else np.full(n, 1.0 / n)
        centers.append(x[int(rng.choice(n, p=p))])
    c = np.stack(centers)
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        new = np.argmax(x @ c.T, axis=1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        for j in range(k):
            pts = x[labels == j]
            if pts.size:
                m = pts.mean(axis=0)
                norm = float(np.linalg.norm(m))
                c[j] = m / norm if norm > 0 else m
    return labels


#: The paper's Table 9 baselines, in its row order.
BASELINES: dict[str, type[BaseRetriever]] = {
    cls.name: cls
    for cls in (
        NoLTMemory,
        BudgetTruncatedReplay,
        SlidingWindow,
        PeriodicSummary,
        FlatVector,
        FlatMMR,
        CoverageAware,
        DisjointHierarchy,
        TreeAbstraction,
    )
}
