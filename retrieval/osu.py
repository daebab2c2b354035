"""Overlapping semantic units (OSUs): construction from four views (paper Sections 3.3-3.5).

Construction, with the paper's Table 8 defaults (none tuned here):

1. **Candidates per view.** Entity view: one group per entity string, tool view: one per
   non-boilerplate tool signature, subgoal view: one per subgoal id; each group's steps (in
   time order) are split wherever consecutive occurrences are more than the view's gap apart
   (``Delta_ent = max(60, 8 Delta_gap) = 64``, ``Delta_tool = max(12, 2 Delta_gap) = 16``,
   ``Delta_sg = max(8, Delta_gap) = 8``), and each segment is cut into consecutive chunks of at
   most ``S_max = 20`` steps. Similarity view ("community merging on the step-embedding k-NN
   graph"): communities merged along the edges of the mutual k-nearest-neighbour graph
   (cosine, ``k = 5``; an edge when each step is among the other's k nearest), most similar
   edge first, never beyond ``S_max`` steps (single linkage with a size cap).
   Candidates with fewer than ``f_min = 2`` steps are dropped.

   The k-NN graph is exact (every pair's cosine) up to ``knn_exact_max_steps = 4096`` steps,
   which covers the paper's trajectories (at most 311 steps) and every shared data set, so
   their OSUs are exactly the paper's construction. Longer trajectories (agent memories of
   10^4-10^5 steps) use an approximate k-NN graph instead: the exact graph needs a t x t
   matrix (128 MiB at 4,096 steps, 20 GB at 50,000) and O(t^2 d) time. The threshold is set
   by that memory bound, not by any outcome; an approximate graph can miss a true neighbour,
   which changes communities, so it is a declared part of the configuration.

   The approximate graph is NN-descent (Dong, Charikar & Li 2011) from pynndescent, the
   ``ann`` extra, with the library's defaults (``n_neighbors = 30``, its default trees and
   iterations), cosine, a fixed seed, one thread. Acceptance criterion, declared before the
   library was chosen (docs/performance.md, "OSU construction and retrieval at
   1,000-50,000 steps"): 5-NN recall against the exact graph >= 0.99 on the synthetic long
   trajectories at 16,000 steps AND on real all-MiniLM-L6-v2 step vectors; the same graph
   on every run (one thread, fixed seed); the library's documented defaults or guideline
   parameters, not tuned; installable from PyPI. Of the libraries that pass, the fastest
   build at 50,000 steps. Measured: hnswlib (M 16, ef_construction 200), faiss-cpu's HNSW
   and NN-descent (their defaults) pass but cost 2.7-7x more at 50,000 steps; faiss-cpu's
   IVF at its guideline list counts fails on the real vectors (0.65-0.98); pynndescent passes
   (0.999 synthetic, 0.998 real). Its price: numba compiles its kernels once per process
   (tens of CPU seconds, not cached on disk), paid by the first approximate build; the
   criterion compares builds with the kernels compiled (docs/performance.md gives both).
2. **Membership cap.** Each step keeps at most ``M_max = 5`` memberships, by view priority
   entity > tool > similarity > subgoal; within a view, larger candidates first, then earlier
   ones. ``M_max = 1`` is the disjoint construction: each step keeps only its highest-priority
   membership.
3. **Minimum size again.** OSUs left with fewer than ``f_min`` steps are dropped, which can
   evict steps from every OSU (the paper's 13.2% evicted evidence under disjoint on ToolBench).
4. **Centroid** ``z_k = mean(h_i, i in u_k) / ||mean||``.

Boilerplate tools (excluded from the tool view) are those in
``OSUConfig.boilerplate_tools`` (conversation turns and control actions such as
``respond``/``think``/``finish``) and any tool signature used by more than
``boilerplate_max_fraction`` (50%) of the trajectory's steps: a signature on most steps binds
nothing specific.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .trajectory import Trajectory

__all__ = ["VIEWS", "OSUConfig", "OSUPool", "build_osus", "evidence_membership"]

#: Views in priority order (Section 3.4).
VIEWS = ("entity", "tool", "similarity", "subgoal")

_DEFAULT_BOILERPLATE = frozenset(
    {"respond", "think", "finish", "final_answer", "Finish", "transfer_to_human_agents"}
)


@dataclass(frozen=True)
class OSUConfig:
    """OSU construction hyperparameters (paper Table 8; defaults fixed, not tuned)."""

    delta_gap: int = 8
    s_max: int = 20
    f_min: int = 2
    m_max: int = 5
    views: tuple[str, ...] = VIEWS
    knn_k: int = 5
    knn_exact_max_steps: int = 4096
    boilerplate_tools: frozenset[str] = field(default=_DEFAULT_BOILERPLATE)
    boilerplate_max_fraction: float = 0.5

    def __post_init__(self) -> None:
        unknown = [v for v in self.views if v not in VIEWS]
        if unknown:
            raise ValueError(f"`views` has unknown views {unknown}; known: {list(VIEWS)}.")
        for name in ("delta_gap", "s_max", "f_min", "m_max", "knn_k", "knn_exact_max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be >= 1; got {getattr(self, name)}.")

    @property
    def delta_entity(self) -> int:
        return max(60, 8 * self.delta_gap)

    @property
    def delta_tool(self) -> int:
        return max(12, 2 * self.delta_gap)

    @property
    def delta_subgoal(self) -> int:
        return max(8, self.delta_gap)


@dataclass(frozen=True, eq=False)
class OSUPool:
    """The OSUs of one trajectory.

    Attributes
    ----------
    members : tuple of ndarray
        Step indices of each OSU (sorted).
    views : tuple of str
        The view each OSU came from.
    keys : tuple of str
        What the OSU is keyed on (entity string, tool signature, subgoal id, community).
    centroids : ndarray, shape (n_osus, d)
    step_osus : tuple of ndarray
        For each step, the OSUs it belongs to (empty when evicted or never grouped).
    """

    members: tuple[NDArray[np.int64], ...]
    views: tuple[str, ...]
    keys: tuple[str, ...]
    centroids: NDArray[np.float64]
    step_osus: tuple[NDArray[np.int64], ...]

    @property
    def n_osus(self) -> int:
        return len(self.members)

    def membership_counts(self) -> NDArray[np.int64]:
        return np.array([k.size for k in self.step_osus], dtype=np.int64)


def _split(steps: list[int], gap: int, s_max: int) -> list[list[int]]:
    """Split time-ordered steps at gaps > `gap`, then chunk each segment to <= `s_max`."""
    segments: list[list[int]] = []
    for s in steps:
        if segments and s - segments[-1][-1] <= gap:
            segments[-1].append(s)
        else:
            segments.append([s])
    return [seg[i : i + s_max] for seg in segments for i in range(0, len(seg), s_max)]


def _strip_namespace(name: str) -> str:
    """``"src3:think"`` -> ``"think"``: a namespace tag ``src<k>:`` is not part of the name."""
    head, sep, rest = name.partition(":")
    if sep and head.startswith("src") and head[3:].isdigit():
        return rest
    return name


def _boilerplate(traj: Trajectory, cfg: OSUConfig) -> set[int]:
    counts = np.bincount(traj.tool_ids[traj.tool_ids >= 0], minlength=len(traj.tool_vocab))
    out = set()
    for k, name in enumerate(traj.tool_vocab):
        base = _strip_namespace(name.split("(")[0].strip())
        if name in cfg.boilerplate_tools or base in cfg.boilerplate_tools:
            out.add(k)
        elif traj.n_steps and counts[k] > cfg.boilerplate_max_fraction * traj.n_steps:
            out.add(k)
    return out


#: NN-descent settings of the approximate k-NN graph: pynndescent's defaults (its
#: ``n_neighbors = 30``, trees and iterations; none passed here), cosine, a fixed seed and one
#: thread (``n_jobs = 1``: the same graph on every run). Fixed, not tuned.
NND_NEIGHBORS = 30
NND_SEED = 100


def _exact_knn(emb: NDArray[np.float64], k: int) -> tuple[NDArray[np.int64], Any]:
    """The k nearest (unordered) per step and the negated cosine of any pair, exactly."""
    # the one O(t^2 d) step: exact k-NN needs every pair's cosine; negated in place (no
    # second t x t array), so the k nearest are the k smallest
    neg = emb @ emb.T
    np.negative(neg, out=neg)
    np.fill_diagonal(neg, np.inf)
    nn = np.argpartition(neg, k - 1, axis=1)[:, :k]
    return nn, lambda rows, cols: neg[rows, cols]


def _approximate_knn(emb: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """The k nearest other steps of every step (cosine) from NN-descent's k-NN graph.

    pynndescent's ``NNDescent`` with its defaults (:data:`NND_NEIGHBORS` neighbours per step,
    sorted by distance), seed :data:`NND_SEED` and one thread, so the graph (and the result)
    is the same on every run. Each step keeps the first k of its list that are not itself.
    """
    try:
        from pynndescent import NNDescent
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "trajectories longer than `knn_exact_max_steps` need pynndescent: "
            "pip install 'osustat[ann]' (or raise `knn_exact_max_steps`)."
        ) from exc
    t = emb.shape[0]
    index = NNDescent(
        np.ascontiguousarray(emb, dtype=np.float32),
        metric="cosine",
        n_neighbors=min(NND_NEIGHBORS, t),
        random_state=NND_SEED,
        n_jobs=1,
    )
    labels = np.asarray(index.neighbor_graph[0], dtype=np.int64)
    other = (labels != np.arange(t)[:, None]) & (labels >= 0)
    keep = other & (np.cumsum(other, axis=1) <= k)  # the first k that are not the step itself
    if not np.all(keep.sum(axis=1) == k):
        short = int(np.flatnonzero(keep.sum(axis=1) < k)[0])
        raise ValueError(f"NN-descent found fewer than {k} neighbours for step {short}.")
    return labels[keep].reshape(t, k)


def _similarity_communities(
    emb: NDArray[np.float64], k: int, s_max: int, exact_max: int = 4096
) -> list[list[int]]:
    """Communities merged along mutual k-NN edges, most similar first, never above `s_max`.

    Kruskal-style single-linkage merging with a size cap: every step starts alone; the mutual
    k-nearest-neighbour edges (cosine) are visited in descending similarity (ties by step
    indices) and two communities merge when the result holds at most `s_max` steps. The cap
    is what keeps the communities semantic: the uncapped components of this graph are often a
    single giant component. The k-NN graph is exact up to `exact_max` steps, approximate
    (:func:`_approximate_knn`) above.
    """
    t = emb.shape[0]
    if t < 2:
        return []
    k = min(k, t - 1)
    if t <= exact_max:
        nn, neg_cos = _exact_knn(emb, k)
    else:
        nn = _approximate_knn(emb, k)

        def neg_cos(rows: NDArray[np.int64], cols: NDArray[np.int64]) -> NDArray[np.float64]:
            # in blocks of edges: two (edges, d) gathers at once would be ~0.4 GB at 50,000
            # steps and cost more than the products
            out = np.empty(rows.size)
            for a in range(0, rows.size, 8192):
                r, c = rows[a : a + 8192], cols[a : a + 8192]
                out[a : a + 8192] = np.einsum("ij,ij->i", emb[r], emb[c])
            return np.negative(out, out=out)

    # mutual edges without a t x t adjacency matrix: (i, j) is kept when (j, i) is also a
    # k-NN pair; keys i*t + j, so sorting the O(t k) keys finds the reverse pairs
    src = np.repeat(np.arange(t, dtype=np.int64), k)
    dst = nn.ravel().astype(np.int64)
    keys = np.sort(src * t + dst)
    mutual = np.isin(dst * t + src, keys, assume_unique=True) & (src < dst)
    rows, cols = src[mutual], dst[mutual]  # each mutual edge once (i < j)
    order = np.lexsort((cols, rows, neg_cos(rows, cols)))
    parent = list(range(t))
    size = [1] * t

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for e in order.tolist():
        a, b = find(int(rows[e])), find(int(cols[e]))
        if a != b and size[a] + size[b] <= s_max:
            if a > b:
                a, b = b, a
            parent[b] = a
            size[a] += size[b]
    groups: dict[int, list[int]] = {}
    for i in range(t):
        groups.setdefault(find(i), []).append(i)
    return [g for _, g in sorted(groups.items()) if len(g) >= 2]


def _candidates(traj: Trajectory, cfg: OSUConfig) -> list[tuple[str, str, list[int]]]:
    """(view, key, steps) for every candidate OSU, views in priority order."""
    out: list[tuple[str, str, list[int]]] = []
    t = traj.n_steps
    for view in cfg.views:
        groups: list[tuple[str, list[int], int]] = []
        if view == "entity":
            by_key: dict[int, list[int]] = {}
            for i in range(t):
                for e in sorted(traj.entities_of(i)):
                    by_key.setdefault(e, []).append(i)
            groups = [(traj.entity_vocab[e], s, cfg.delta_entity) for e, s in by_key.items()]
        elif view == "tool":
            skip = _boilerplate(traj, cfg)
            by_key = {}
            for i in range(t):
                k = int(traj.tool_ids[i])
                if k >= 0 and k not in skip:
                    by_key.setdefault(k, []).append(i)
            groups = [(traj.tool_vocab[k], s, cfg.delta_tool) for k, s in by_key.items()]
        elif view == "subgoal":
            by_key = {}
            for i in range(t):
                g = int(traj.subgoal_ids[i])
                if g >= 0:
                    by_key.setdefault(g, []).append(i)
            groups = [(f"subgoal:{g}", s, cfg.delta_subgoal) for g, s in by_key.items()]
        else:  # similarity
            comms = _similarity_communities(
                traj.embeddings, cfg.knn_k, cfg.s_max, cfg.knn_exact_max_steps
            )
            groups = [(f"community:{j}", c, t + 1) for j, c in enumerate(comms)]
        for key, steps, gap in groups:
            for part in _split(steps, gap, cfg.s_max):
                if len(part) >= cfg.f_min:
                    out.append((view, key, part))
    return out


def build_osus(traj: Trajectory, config: OSUConfig | None = None) -> OSUPool:
    """Build the OSU pool of a trajectory (see the module docstring for the procedure).

    Parameters
    ----------
    traj : Trajectory
    config : OSUConfig, optional
        Defaults to the paper's Table 8 values (overlap, ``m_max = 5``).

    Returns
    -------
    OSUPool

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.retrieval import Trajectory, OSUConfig, build_osus
    >>> tr = Trajectory.from_steps(np.eye(4), [10] * 4, tools=["a", "a", "b", "b"],
    ...                            entities=[{"x"}, {"x"}, {"x"}, set()])
    >>> pool = build_osus(tr, OSUConfig(views=("entity", "tool")))
    >>> [(v, k, m.tolist()) for v, k, m in zip(pool.views, pool.keys, pool.members)]
    [('entity', 'x', [0, 1, 2]), ('tool', 'a', [0, 1]), ('tool', 'b', [2, 3])]
    >>> disjoint = build_osus(tr, OSUConfig(views=("entity", "tool"), m_max=1))
    >>> [m.tolist() for m in disjoint.members], disjoint.step_osus[3].tolist()
    ([[0, 1, 2]], [])
    """
    cfg = config or OSUConfig()
    t = traj.n_steps
    cands = _candidates(traj, cfg)
    priority = {v: r for r, v in enumerate(VIEWS)}
    # order in which a step claims its memberships: view priority, larger first, then earlier
    order = sorted(range(len(cands)), key=lambda j: (priority[cands[j][0]], -len(cands[j][2]), j))
    rank = np.empty(len(cands), dtype=np.int64)
    rank[order] = np.arange(len(cands))
    per_step: list[list[int]] = [[] for _ in range(t)]
    for j in order:
        for s in cands[j][2]:
            per_step[s].append(j)
    kept: list[set[int]] = [set() for _ in cands]
    for s in range(t):
        for j in per_step[s][: cfg.m_max]:
            kept[j].add(s)
    final = [j for j in range(len(cands)) if len(kept[j]) >= cfg.f_min]
    final.sort(key=lambda j: rank[j])
    members = tuple(np.array(sorted(kept[j]), dtype=np.int64) for j in final)
    step_lists: list[list[int]] = [[] for _ in range(t)]
    for k, m in enumerate(members):
        for s in m.tolist():
            step_lists[s].append(k)
    if members:
        centroids = np.stack([traj.embeddings[m].mean(axis=0) for m in members])
        norms = np.linalg.norm(centroids, axis=1, keepdims=True)
        centroids = centroids / np.where(norms > 0, norms, 1.0)
    else:
        centroids = np.zeros((0, traj.dim))
    return OSUPool(
        members=members,
        views=tuple(cands[j][0] for j in final),
        keys=tuple(cands[j][1] for j in final),
        centroids=centroids,
        step_osus=tuple(np.array(x, dtype=np.int64) for x in step_lists),
    )


def evidence_membership(pool: OSUPool, evidence: Any) -> dict[str, float]:
    """Evidence-OSU membership statistics (Sections 4.1-4.2, 6.1).

    Returns
    -------
    dict
        ``mean_osus_per_evidence``, ``median_osus_per_evidence`` and
        ``fraction_evidence_in_no_osu`` over the given evidence steps (NaN when empty).

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.retrieval import Trajectory, OSUConfig, build_osus, evidence_membership
    >>> tr = Trajectory.from_steps(np.eye(4), [10] * 4, tools=["a", "a", "b", "b"],
    ...                            entities=[{"x"}, {"x"}, {"x"}, set()])
    >>> pool = build_osus(tr, OSUConfig(views=("entity", "tool")))
    >>> evidence_membership(pool, [0, 3])  # doctest: +NORMALIZE_WHITESPACE
    {'mean_osus_per_evidence': 1.5, 'median_osus_per_evidence': 1.5, \
'fraction_evidence_in_no_osu': 0.0}
    """
    ev = np.asarray(evidence, dtype=np.int64)
    if ev.size == 0:
        nan = float("nan")
        return {
            "mean_osus_per_evidence": nan,
            "median_osus_per_evidence": nan,
            "fraction_evidence_in_no_osu": nan,
        }
    counts = pool.membership_counts()[ev]
    return {
        "mean_osus_per_evidence": float(counts.mean()),
        "median_osus_per_evidence": float(np.median(counts)),
        "fraction_evidence_in_no_osu": float(np.mean(counts == 0)),
    }
