"""OSU-Mem (Algorithm 1, Section 3.6) and its variants.

- :class:`OSUMem`: coarse-to-fine retrieval over the OSU pool (Table 8 defaults); its
  `coarse` setting (:data:`COARSE`) offers a long-horizon coarse stage, off by default.
- :class:`OSUMemGF`: the same with oracle OSU selection given the evidence (**oracle**).
- ``OSUMem(osu_config=OSUConfig(m_max=1))``: disjoint; ``OSUConfig(views=("similarity",))``:
  sim-only; ``OSUMem(lambda_nov=0)``: no novelty (see :func:`variant`).
- :class:`CoverageGuidedOSU`: the coverage-guided greedy variant of Section 5.2.
- :class:`CohesionOSU`: the cohesion variant of Appendix G.5.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .base import BaseRetriever, RetrievalResult, check_setting, greedy_pack
from .expansion import Expansion
from .osu import OSUConfig, OSUPool, build_osus
from .trajectory import Trajectory

__all__ = [
    "COARSE",
    "COARSE_EF",
    "COARSE_K_MAX",
    "PAPER_MAX_STEPS",
    "REACHABILITY",
    "CohesionOSU",
    "CoverageGuidedOSU",
    "OSUMem",
    "OSUMemGF",
    "adaptive_k",
    "capped_k",
    "top_k_stable",
]

#: Which steps the greedy selectors (:class:`CoverageGuidedOSU`, :class:`CohesionOSU`) may
#: select, a retrieval choice the paper leaves open (docs/retrieval.md, "Reachability"):
#: ``'all-steps'`` (default; a step in no OSU is selectable, without a coverage bonus) or
#: ``'members-only'`` (only steps of some OSU, the reading of Sections 4.1 and 6.1's text).
REACHABILITY = ("all-steps", "members-only")


#: OSU-Mem's coarse stages (docs/retrieval.md, "The coarse stage at long horizons"):
#: ``'paper'`` (default; Section 3.6: every centroid and every step scored, K grows as |U|/10),
#: ``'capped'`` (the |U|/10 term of K capped at `coarse_k_max`, step scores computed for the
#: kept OSUs' members only, every centroid scored exactly) and ``'capped-ann'`` (the same K,
#: its OSUs found by an HNSW index over the centroids, built with the pool).
COARSE = ("paper", "capped", "capped-ann")

#: The longest trajectory the paper ran Algorithm 1 on (Section 5.1: concatenated tau-bench
#: episodes of 256 to 311 steps; its synthetic episodes have 150 to 296).
PAPER_MAX_STEPS = 311

#: Default cap on K's |U|/10 term: the largest value that term can take on a trajectory of
#: :data:`PAPER_MAX_STEPS` steps under Table 8's construction (each step in at most
#: M_max = 5 OSUs, each OSU of at least f_min = 2 steps, so |U| <= 5 * 311 / 2 = 777).
COARSE_K_MAX = (OSUConfig().m_max * PAPER_MAX_STEPS // OSUConfig().f_min) // 10

#: HNSW settings of the centroid index of ``coarse='capped-ann'`` (:func:`_centroid_index`):
#: hnswlib's documented recommendations (README: ``M = 16``, ``ef_construction = 200``), a
#: fixed seed; fixed, not tuned.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200
HNSW_SEED = 100

#: Default size of the HNSW search list over the centroids (hnswlib's ``ef``; the search
#: uses ``max(coarse_ef, K)``): :data:`HNSW_EF_CONSTRUCTION`.
COARSE_EF = HNSW_EF_CONSTRUCTION


def adaptive_k(n_osus: int, budget: float) -> int:
    """``K = min(|U|, max(8, |U| / 10, B / 30))`` (Section 3.6), floored to an integer."""
    return int(min(n_osus, max(8, n_osus // 10, int(budget // 30))))


def capped_k(n_osus: int, budget: float, k_max: int = COARSE_K_MAX) -> int:
    """:func:`adaptive_k` with its |U|/10 term capped at `k_max` (the floor 8 and B/30 kept).

    Equal to :func:`adaptive_k` whenever ``|U| // 10 <= k_max``, i.e. on every trajectory of
    the paper's sizes for the default `k_max` (:data:`COARSE_K_MAX`).

    >>> from osustat.retrieval.osumem import adaptive_k, capped_k
    >>> adaptive_k(26_489, 256), capped_k(26_489, 256), capped_k(26_489, 1600)
    (2648, 77, 77)
    >>> capped_k(600, 256) == adaptive_k(600, 256)
    True
    """
    return int(min(n_osus, max(8, min(n_osus // 10, k_max), int(budget // 30))))


def top_k_stable(values: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """The first `k` of ``np.argsort(-values, kind="stable")``, in O(n + k log k).

    The k largest values in descending order, ties in index order: a partition finds the
    k-th largest value, every larger value and the first tied ones (by index) are kept, and
    only those are sorted. Equal to the full stable sort's prefix for any input without NaN.

    >>> import numpy as np
    >>> from osustat.retrieval.osumem import top_k_stable
    >>> x = np.array([0.5, 0.9, 0.5, 0.1, 0.9, 0.5])
    >>> top_k_stable(x, 4).tolist(), np.argsort(-x, kind="stable")[:4].tolist()
    ([1, 4, 0, 2], [1, 4, 0, 2])
    """
    n = values.size
    if k >= n:
        return np.argsort(-values, kind="stable")
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = values[np.argpartition(-values, k - 1)[k - 1]]
    above = np.flatnonzero(values > kth)
    ties = np.flatnonzero(values == kth)[: k - above.size]
    keep = np.union1d(above, ties)  # sorted: ties among the kept stay in index order
    return keep[np.argsort(-values[keep], kind="stable")]


def _centroid_index(centroids: NDArray[np.float64], ef: int = COARSE_EF) -> Any:
    """An HNSW inner-product index over the (normalized) OSU centroids, searched with `ef`.

    hnswlib with :data:`HNSW_M`, :data:`HNSW_EF_CONSTRUCTION` and :data:`HNSW_SEED`, built on
    one thread, so
    the index (and every answer) is the same on every run. A search for k items uses
    ``max(ef, k)`` (hnswlib's rule), so queries never change the index's state.
    """
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "OSUMem(coarse='capped-ann') needs hnswlib: pip install 'osustat[ann]'."
        ) from exc
    n, d = centroids.shape
    index = hnswlib.Index(space="ip", dim=d)
    index.init_index(
        max_elements=n, ef_construction=HNSW_EF_CONSTRUCTION, M=HNSW_M, random_seed=HNSW_SEED
    )
    index.add_items(np.ascontiguousarray(centroids, dtype=np.float32), np.arange(n), num_threads=1)
    index.set_ef(ef)
    return index


class _OSUIndexed(BaseRetriever):
    """Shared state of the retrievers that read an OSU pool."""

    def __init__(self, *, osu_config: OSUConfig | None = None) -> None:
        if osu_config is not None and not isinstance(osu_config, OSUConfig):
            raise TypeError(
                f"`osu_config` must be an OSUConfig or None; got {type(osu_config).__name__}."
            )
        self.osu_config = osu_config

    pool_: OSUPool

    def _build(self, trajectory: Trajectory) -> None:
        self.pool_ = build_osus(trajectory, self.osu_config)
        t = trajectory.n_steps
        # CSR of step -> OSUs, and of step -> entities, for vectorized novelty/coverage terms
        counts = np.array([k.size for k in self.pool_.step_osus], dtype=np.int64)
        self._step_osu_rows = np.repeat(np.arange(t), counts)
        self._step_osu_ids = (
            np.concatenate(self.pool_.step_osus) if t else np.zeros(0, dtype=np.int64)
        ).astype(np.int64)
        self._first_member = np.array([m[0] for m in self.pool_.members], dtype=np.int64)
        # single precision is plenty for the novelty term's max cosine and halves its cost
        self._emb32 = trajectory.embeddings.astype(np.float32)
        sizes = np.array([m.size for m in self.pool_.members], dtype=np.int64)
        self._member_osu = np.repeat(np.arange(self.pool_.n_osus), sizes)
        self._member_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._member_step = (
            np.concatenate(self.pool_.members) if self.pool_.n_osus else np.zeros(0, dtype=np.int64)
        )


class OSUMem(_OSUIndexed):
    """OSU-Mem: score OSU centroids, keep the top-K, expand greedily by cost-normalized value.

    Parameters
    ----------
    osu_config : OSUConfig, optional
        OSU construction (Table 8 defaults: overlap with ``m_max = 5``, all four views).
    lambda_nov : float
        Novelty scale (.3); 0 disables novelty (the "no novelty" ablation).
    novelty_budget : float
        Novelty is active only when ``B >= novelty_budget`` (192).
    alpha : float
        Blend of embedding and structural novelty (.4).
    top_c : int
        Candidates per OSU whose cost and novelty enter the score (C = 8).
    coarse : {'paper', 'capped', 'capped-ann'}
        The coarse stage (:data:`COARSE`). ``'paper'`` (default) is Section 3.6's.
        ``'capped'`` caps K's |U|/10 term at `coarse_k_max` (:func:`capped_k`) and computes
        step-query similarities only for the kept OSUs' members; ``'capped-ann'`` also finds
        the top-K OSUs through an HNSW index over the centroids (hnswlib, extra ``ann``),
        built with the pool, instead of scoring every centroid. A long-horizon choice, not
        the paper's algorithm beyond its sizes: see Notes.
    coarse_k_max : int
        Cap on K's |U|/10 term for ``'capped'`` and ``'capped-ann'`` (:data:`COARSE_K_MAX` =
        77, the largest that term can be on the paper's trajectories); ignored by ``'paper'``.
    coarse_ef : int
        HNSW search list for ``'capped-ann'`` (``ef = max(coarse_ef, K)``; :data:`COARSE_EF`).

    Notes
    -----
    Algorithm 1: ``r_k = z_k . q`` for every OSU with a step before the query time; keep the
    top ``K = min(|U|, max(8, |U|/10, B/30))``. Repeatedly pick, among the remaining top-K
    OSUs, the one maximizing ``(r_k + lambda_nov nu_k) / (c_k + eps)`` where ``c_k`` is the
    token cost of its ``C`` most query-similar not-yet-selected steps and ``nu_k`` their mean
    blended novelty ``(1 - alpha) EmbNov + alpha StructNov`` against the selected set
    (Appendix A): ``EmbNov = 1 - max_j cos(h_i, h_j)`` (1 when nothing is selected),
    ``StructNov = min(1, .6 |Ent(i) \\ Ent(S)| + .4 [Tool(i) not in Tool(S)])`` (a step
    without a tool contributes 0 to the tool term). The chosen OSU is expanded: its steps are
    added in descending step-query similarity, skipping already selected steps at zero cost
    and steps that no longer fit. It stops when the top-K is exhausted or nothing more fits.
    The selected steps are returned in descending step-query similarity (the packing order).
    Choices the paper leaves open: K is floored; an OSU whose steps are all selected or in the
    future is dropped; OSU-Mem returns no summaries (the paper's summaries are < 1% of
    tokens and never evidence).

    The long-horizon coarse stage (``coarse='capped'`` / ``'capped-ann'``, off by default).
    Table 8 gives K's |U|/10 term the purpose "scan roughly 10% of the OSU pool at the coarse
    stage" on trajectories of at most 311 steps (Section 5.1), where it is at most 77 OSUs
    (Table 8's M_max = 5 memberships per step and f_min = 2 steps per OSU bound |U| by
    777); Appendix A describes online retrieval as "a linear scan over OSU centroids
    (O(|OSUs|)) plus bounded candidate scoring" and adds that "an approximate nearest neighbor
    (ANN) index over centroids would make the coarse stage sublinear". At 10^4-10^5 steps the
    paper's K (|U|/10, thousands of OSUs) makes the candidate scoring unbounded. The capped
    stages keep the paper's rule wherever the paper ran it (``capped_k == adaptive_k`` while
    |U|/10 <= `coarse_k_max`) and stop K growing with |U| beyond; the floor 8 and the B/30
    term stay. ``'capped'`` is exact up to rounding (member similarities are computed on the
    gathered rows, which can change their last bits); ``'capped-ann'`` can miss an OSU of the
    exact top-K (its recall is measured in ``benchmarks/retrieval_long_coarse.py``).

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.retrieval import OSUMem, Trajectory
    >>> rng = np.random.default_rng(0)
    >>> tr = Trajectory.from_steps(rng.normal(size=(40, 8)), np.full(40, 15.0),
    ...                            tools=[f"t{i % 4}" for i in range(40)],
    ...                            entities=[{f"e{i % 5}"} for i in range(40)])
    >>> res = OSUMem().build(tr).retrieve(tr.embeddings[3], budget=64)
    >>> res.tokens <= 64, len(set(res.steps.tolist())) == res.steps.size
    (True, True)
    """

    name: ClassVar[str] = "OSU-Mem"
    _coarse_stages: ClassVar[tuple[str, ...]] = COARSE

    def __init__(
        self,
        *,
        osu_config: OSUConfig | None = None,
        lambda_nov: float = 0.3,
        novelty_budget: float = 192.0,
        alpha: float = 0.4,
        top_c: int = 8,
        coarse: str = "paper",
        coarse_k_max: int = COARSE_K_MAX,
        coarse_ef: int = COARSE_EF,
    ) -> None:
        super().__init__(osu_config=osu_config)
        self.lambda_nov = check_setting("lambda_nov", lambda_nov, low=0)
        self.novelty_budget = check_setting("novelty_budget", novelty_budget, low=0)
        self.alpha = check_setting("alpha", alpha, low=0, high=1)
        self.top_c = check_setting("top_c", top_c, integer=True, low=1)
        if not isinstance(coarse, str) or coarse not in self._coarse_stages:
            raise ValueError(
                f"`coarse` must be one of {list(self._coarse_stages)} for "
                f"{type(self).__name__}; got {coarse!r}."
            )
        self.coarse = coarse
        self.coarse_k_max = check_setting("coarse_k_max", coarse_k_max, integer=True, low=1)
        self.coarse_ef = check_setting("coarse_ef", coarse_ef, integer=True, low=1)

    def _build(self, trajectory: Trajectory) -> None:
        super()._build(trajectory)
        self._centroid_index = None
        if self.coarse == "capped-ann" and self.pool_.n_osus:
            self._centroid_index = _centroid_index(self.pool_.centroids, self.coarse_ef)

    def _k(self, n_live: int, budget: float) -> int:
        """K of the coarse stage among `n_live` OSUs (:func:`adaptive_k` or :func:`capped_k`)."""
        if self.coarse == "paper":
            return adaptive_k(n_live, budget)
        return capped_k(n_live, budget, self.coarse_k_max)

    def _coarse(
        self,
        r: NDArray[np.float64],
        live: NDArray[np.bool_],
        budget: float,
        evidence: NDArray[np.int64] | None,
    ) -> list[int]:
        ids = np.flatnonzero(live)
        return ids[top_k_stable(r[ids], self._k(ids.size, budget))].tolist()

    def _coarse_ann(
        self, q: NDArray[np.float64], live: NDArray[np.bool_], budget: float
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The top-K live OSUs from the centroid index, and their exact scores.

        The index proposes K OSUs; their centroid scores are then computed exactly and they
        are ranked by them (ties by index), as :func:`top_k_stable` ranks. A pool with at
        most K live OSUs, or with OSUs wholly in the future (not reached through
        :meth:`retrieve`, whose index is built on the steps before the query time), is
        scored exactly.
        """
        centroids = self.pool_.centroids
        n_live = int(live.sum())
        k = self._k(n_live, budget)
        if k >= n_live or n_live < live.size or self._centroid_index is None:
            ids = np.flatnonzero(live)
            r = centroids[ids] @ q
            top = top_k_stable(r, k)
            return ids[top], r[top]
        labels, _ = self._centroid_index.knn_query(
            q.astype(np.float32)[None, :], k=k, num_threads=1
        )
        cand = labels[0].astype(np.int64)
        r_cand = centroids[cand] @ q
        order = np.lexsort((cand, -r_cand))
        return cand[order], r_cand[order]

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        traj, pool = self.trajectory_, self.pool_
        if pool.n_osus == 0:
            return self._result([], 0.0)
        live = self._first_member < end  # members are sorted: live if the first is in the past
        sims: NDArray[np.float64] | None = None
        if self.coarse == "capped-ann":
            top_arr, r_top = self._coarse_ann(q, live, budget)
        else:
            if self.coarse == "paper":  # every step scored, as the paper's records were
                sims = traj.embeddings[:end] @ q
            r = pool.centroids @ q
            top_arr = np.asarray(self._coarse(r, live, budget, evidence), dtype=np.int64)
            r_top = r[top_arr]
        if not top_arr.size:  # no OSU has a step before the query time
            return self._result([], 0.0)
        return self._expand(q, budget, end, top_arr, r_top, sims)

    def _expand(
        self,
        q: NDArray[np.float64],
        budget: float,
        end: int,
        top_arr: NDArray[np.int64],
        r_top: NDArray[np.float64],
        sims: NDArray[np.float64] | None,
    ) -> RetrievalResult:
        """The greedy expansion of the coarse stage's OSUs `top_arr` (scores `r_top`).

        `sims`: every step's query similarity, or None to score only the OSUs' members.
        """
        expansion = Expansion(
            self.trajectory_, self._member_ptr, self._member_step, q, end, top_arr, r_top, sims
        )
        novelty = None
        if self.lambda_nov > 0 and budget >= self.novelty_budget:
            novelty = (self.lambda_nov, self.alpha, self._emb32)
        steps, used = expansion.run(budget, self.top_c, novelty)
        return self._result(steps, used)


class OSUMemGF(OSUMem):
    """OSU-Mem + GF: **oracle** OSU selection given the ground-truth evidence.

    Not a deployable method: the coarse stage keeps the OSUs that hold the most evidence
    steps (ties by centroid score), up to the same K, padded with the best-scoring other
    OSUs; expansion is OSU-Mem's. It bounds what better coarse routing could give.
    """

    name: ClassVar[str] = "OSU-Mem + GF"
    oracle: ClassVar[bool] = True

    #: its oracle ranks OSUs by evidence: a centroid index has nothing to do
    _coarse_stages: ClassVar[tuple[str, ...]] = ("paper", "capped")

    def _coarse(
        self,
        r: NDArray[np.float64],
        live: NDArray[np.bool_],
        budget: float,
        evidence: NDArray[np.int64] | None,
    ) -> list[int]:
        assert evidence is not None  # guaranteed by BaseRetriever.retrieve for oracles
        ids = np.flatnonzero(live)
        is_evidence = np.zeros(self.trajectory_.n_steps, dtype=bool)
        is_evidence[evidence] = True
        hits = np.bincount(
            self._member_osu, weights=is_evidence[self._member_step], minlength=self.pool_.n_osus
        )[ids]
        order = ids[np.lexsort((-r[ids], -hits))]
        return order[: self._k(ids.size, budget)].tolist()


class _StepGreedy(_OSUIndexed):
    """Greedy step selection over the steps `reachability` allows (:data:`REACHABILITY`)."""

    def __init__(
        self, *, osu_config: OSUConfig | None = None, reachability: str = "all-steps"
    ) -> None:
        super().__init__(osu_config=osu_config)
        if reachability not in REACHABILITY:
            raise ValueError(
                f"`reachability` must be one of {list(REACHABILITY)}; got {reachability!r}."
            )
        self.reachability = reachability

    def _scores(self, sims: NDArray[np.float64], state: dict[str, Any]) -> NDArray[np.float64]:
        return sims

    def _update(self, s: int, state: dict[str, Any]) -> None:
        """Record that step `s` was selected."""

    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        traj = self.trajectory_
        sims = traj.embeddings[:end] @ q
        reachable = None  # all-steps: every step before the query time
        if self.reachability == "members-only":
            reachable = np.array([self.pool_.step_osus[i].size > 0 for i in range(end)], dtype=bool)
        state: dict[str, Any] = {
            "end": end,
            "used_osus": np.zeros(self.pool_.n_osus, bool),
            "max_sim": np.full(end, -np.inf),
        }
        chosen, used = greedy_pack(
            traj.costs[:end],
            budget,
            lambda: self._scores(sims, state),
            lambda s: self._update(s, state),
            reachable,
        )
        return self._result(chosen, used)


class CoverageGuidedOSU(_StepGreedy):
    """Coverage-guided greedy over an OSU pool (Section 5.2; the ToolBench algorithm).

    Each iteration takes the not-yet-selected step that fits and maximizes
    ``s_i + beta * [i belongs to an OSU not used so far]``, with ``s_i`` the step-query
    cosine; the step's OSUs are then marked used. Overlap vs disjoint differ only through
    the pool. ``beta = .12`` (Table 8). Other keywords: `osu_config` and `reachability`
    (:data:`REACHABILITY`): ``'all-steps'`` lets a step in no OSU be selected on its cosine
    alone (no bonus); ``'members-only'`` never selects it.
    """

    name: ClassVar[str] = "OSU-Mem (coverage-guided)"

    def __init__(self, *, beta: float = 0.12, **pool: Any) -> None:
        super().__init__(**pool)  # osu_config, reachability
        self.beta = check_setting("beta", beta, low=0)

    def _scores(self, sims: NDArray[np.float64], state: dict[str, Any]) -> NDArray[np.float64]:
        end = state["end"]
        mask = self._step_osu_rows < end
        unused = np.bincount(
            self._step_osu_rows[mask],
            weights=~state["used_osus"][self._step_osu_ids[mask]],
            minlength=end,
        )
        return sims + self.beta * (unused > 0)

    def _update(self, s: int, state: dict[str, Any]) -> None:
        state["used_osus"][self.pool_.step_osus[s]] = True


class CohesionOSU(_StepGreedy):
    """Cohesion-style greedy (Appendix G.5): ``s_i - alpha * max_{j in S} cos(h_i, h_j)``.

    `osu_config` and `reachability` as in :class:`CoverageGuidedOSU`. ``alpha = .01`` by
    default, the middle of the paper's sweep {0, .005, .01, .02, .04} (the paper reports no
    default; it found no overlap advantage at any alpha).
    """

    name: ClassVar[str] = "OSU-Mem (cohesion)"

    def __init__(self, *, alpha: float = 0.01, **pool: Any) -> None:
        super().__init__(**pool)  # osu_config, reachability
        self.alpha = check_setting("alpha", alpha, low=0)

    def _scores(self, sims: NDArray[np.float64], state: dict[str, Any]) -> NDArray[np.float64]:
        ms = state["max_sim"]
        return sims - self.alpha * np.where(np.isfinite(ms), ms, 0.0)

    def _update(self, s: int, state: dict[str, Any]) -> None:
        emb = self.trajectory_.embeddings[: state["end"]]
        np.maximum(state["max_sim"], emb @ emb[s], out=state["max_sim"])
