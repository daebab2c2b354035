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
from typing import Any, NamedTuple

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


def _parts(
    steps: NDArray[np.int64], group: NDArray[np.int64], gap: int, s_max: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Split each group's steps at gaps > `gap`, then chunk each segment to <= `s_max` steps.

    `steps` holds the groups one after another, each group's steps in time order, and
    ``group[i]`` is the group of ``steps[i]``. The parts are consecutive runs of `steps` (by
    group, then by time); returns the group and the size of each part.

    >>> import numpy as np
    >>> _parts(np.array([0, 1, 2, 20, 21, 3, 4, 5]), np.array([0, 0, 0, 0, 0, 1, 1, 1]), 8, 2)
    (array([0, 0, 0, 1, 1]), array([2, 1, 2, 2, 1]))
    """
    n = steps.size
    new_segment = np.ones(n, dtype=bool)
    new_segment[1:] = (group[1:] != group[:-1]) | (np.diff(steps) > gap)
    segment_start = np.flatnonzero(new_segment)
    position = np.arange(n) - segment_start[np.cumsum(new_segment) - 1]
    starts = np.flatnonzero(position % s_max == 0)
    return group[starts], np.diff(np.append(starts, n))


def _first_seen_groups(
    steps: NDArray[np.int64], keys: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Group (step, key) pairs by key, keys in order of first appearance.

    The pairs come in time order (one per step and key). Returns the keys in group order, the
    steps group after group (each group's in time order) and the group of each of them.
    """
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first)
    rank = np.empty(uniq.size, dtype=np.int64)
    rank[by_first] = np.arange(uniq.size)
    group = rank[inverse.ravel()]
    order = np.argsort(group, kind="stable")
    return uniq[by_first], steps[order], group[order]


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
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Communities merged along mutual k-NN edges, most similar first, never above `s_max`.

    Kruskal-style single-linkage merging with a size cap: every step starts alone; the mutual
    k-nearest-neighbour edges (cosine) are visited in descending similarity (ties by step
    indices) and two communities merge when the result holds at most `s_max` steps. The cap
    is what keeps the communities semantic: the uncapped components of this graph are often a
    single giant component. The k-NN graph is exact up to `exact_max` steps, approximate
    (:func:`_approximate_knn`) above.

    Returns the steps of the communities of two or more steps, community after community
    (ordered by their first step, each in time order), and the community of each.
    """
    t = emb.shape[0]
    if t < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
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

    for i, j in zip(rows[order].tolist(), cols[order].tolist(), strict=True):
        a, b = find(i), find(j)
        if a != b and size[a] + size[b] <= s_max:
            if a > b:
                a, b = b, a
            parent[b] = a  # the root is the community's first step
            size[a] += size[b]
    root = np.asarray(parent, dtype=np.int64)
    while True:  # every step's root, by pointer jumping
        up = root[root]
        if np.array_equal(up, root):
            break
        root = up
    sizes = np.bincount(root, minlength=t)
    steps = np.flatnonzero(sizes[root] >= 2)
    steps = steps[np.argsort(root[steps], kind="stable")]
    return steps, np.searchsorted(np.flatnonzero(sizes >= 2), root[steps])


class _Candidates(NamedTuple):
    """Candidate OSUs in construction order: candidate j's view, key and ``sizes[j]`` steps.

    ``steps`` holds the candidates' steps one candidate after another, each in time order.
    """

    views: list[str]
    keys: list[str]
    sizes: NDArray[np.int64]
    steps: NDArray[np.int64]


def _view_groups(
    traj: Trajectory, cfg: OSUConfig, view: str
) -> tuple[list[str], NDArray[np.int64], NDArray[np.int64], int]:
    """One view's groups: their keys, their steps group after group, the group of each, the gap.

    Entity, tool and subgoal groups come in order of their key's first step (entities of one
    step in id order), similarity communities in order of their first step.
    """
    t = traj.n_steps
    if view == "similarity":
        steps, group = _similarity_communities(
            traj.embeddings, cfg.knn_k, cfg.s_max, cfg.knn_exact_max_steps
        )
        n_groups = int(group[-1]) + 1 if group.size else 0
        return [f"community:{j}" for j in range(n_groups)], steps, group, t + 1
    if view == "entity":
        step_of = np.repeat(np.arange(t, dtype=np.int64), np.diff(traj.entity_ptr))
        ids = np.asarray(traj.entity_ids, dtype=np.int64)
        order = np.lexsort((ids, step_of))  # a step's entities are a set: sorted, once each
        step_of, ids = step_of[order], ids[order]
        once = np.ones(ids.size, dtype=bool)
        once[1:] = (step_of[1:] != step_of[:-1]) | (ids[1:] != ids[:-1])
        keys, steps, group = _first_seen_groups(step_of[once], ids[once])
        return [traj.entity_vocab[e] for e in keys.tolist()], steps, group, cfg.delta_entity
    if view == "tool":
        ids = np.asarray(traj.tool_ids, dtype=np.int64)
        skip = np.array(sorted(_boilerplate(traj, cfg)), dtype=np.int64)
        steps = np.flatnonzero((ids >= 0) & ~np.isin(ids, skip))
        keys, steps, group = _first_seen_groups(steps, ids[steps])
        return [traj.tool_vocab[k] for k in keys.tolist()], steps, group, cfg.delta_tool
    ids = np.asarray(traj.subgoal_ids, dtype=np.int64)  # subgoal
    steps = np.flatnonzero(ids >= 0)
    keys, steps, group = _first_seen_groups(steps, ids[steps])
    return [f"subgoal:{g}" for g in keys.tolist()], steps, group, cfg.delta_subgoal


def _candidates(traj: Trajectory, cfg: OSUConfig) -> _Candidates:
    """Every candidate OSU of at least ``f_min`` steps, views in `cfg`'s order.

    Within a view: group after group (:func:`_view_groups`), each group's parts in time order
    (:func:`_parts`).
    """
    views: list[str] = []
    keys: list[str] = []
    sizes, steps = [], []
    for view in cfg.views:
        names, members, group, gap = _view_groups(traj, cfg, view)
        part_group, part_size = _parts(members, group, gap, cfg.s_max)
        keep = part_size >= cfg.f_min
        views += [view] * int(keep.sum())
        keys += [names[g] for g in part_group[keep].tolist()]
        sizes.append(part_size[keep])
        steps.append(members[np.repeat(keep, part_size)])
    return _Candidates(
        views,
        keys,
        np.concatenate(sizes).astype(np.int64),
        np.concatenate(steps).astype(np.int64),
    )


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
    final, steps, sizes = _cap_memberships(cands, cfg)
    osu_of = np.repeat(np.arange(final.size), sizes)
    by_step = np.argsort(steps, kind="stable")  # each step's OSUs in order
    per_step = np.bincount(steps, minlength=t)
    return OSUPool(
        members=_runs(steps, sizes),
        views=tuple(cands.views[j] for j in final.tolist()),
        keys=tuple(cands.keys[j] for j in final.tolist()),
        centroids=_centroids(traj.embeddings, steps, sizes),
        step_osus=_runs(osu_of[by_step], per_step),
    )


def _runs(values: NDArray[np.int64], sizes: NDArray[np.int64]) -> tuple[NDArray[np.int64], ...]:
    """`values` cut into consecutive runs of the given sizes (views; ``np.split`` is slower)."""
    ends = np.cumsum(sizes)
    return tuple(values[a:b] for a, b in zip((ends - sizes).tolist(), ends.tolist(), strict=True))


def _cap_memberships(
    cands: _Candidates, cfg: OSUConfig
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Steps 2-3 of the construction: the membership cap, then the minimum size again.

    Returns the candidates that stay OSUs (in priority order: the OSUs' order), their kept
    steps OSU after OSU (each in time order) and their sizes.
    """
    n = len(cands.views)
    priority = np.array([VIEWS.index(v) for v in cands.views], dtype=np.int64)
    # the order in which a step claims its memberships: view priority, larger first, then earlier
    order = np.lexsort((np.arange(n), -cands.sizes, priority))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    cand_of = np.repeat(np.arange(n), cands.sizes)
    by_step = np.lexsort((rank[cand_of], cands.steps))  # each step's candidates in that order
    step_sorted = cands.steps[by_step]
    new_step = np.ones(step_sorted.size, dtype=bool)
    new_step[1:] = step_sorted[1:] != step_sorted[:-1]
    position = np.arange(step_sorted.size) - np.flatnonzero(new_step)[np.cumsum(new_step) - 1]
    kept = by_step[position < cfg.m_max]  # each step keeps its first m_max
    kept_size = np.bincount(cand_of[kept], minlength=n)
    final = order[kept_size[order] >= cfg.f_min]
    is_final = np.zeros(n, dtype=bool)
    is_final[final] = True
    kept = kept[is_final[cand_of[kept]]]
    kept = kept[np.lexsort((cands.steps[kept], rank[cand_of[kept]]))]
    return final, cands.steps[kept], kept_size[final]


def _centroids(
    emb: NDArray[np.float64], steps: NDArray[np.int64], sizes: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Step 4: each OSU's normalized mean embedding (its steps ``steps``, OSU after OSU).

    The OSUs of one size are summed at once; the sum along their members' axis adds the rows
    in order, as each OSU's own ``mean(axis=0)`` does, so every centroid has the same bits.
    """
    out = np.empty((sizes.size, emb.shape[1]))
    start = np.cumsum(sizes) - sizes
    for m in np.unique(sizes).tolist():
        ids = np.flatnonzero(sizes == m)
        out[ids] = emb[steps[start[ids, None] + np.arange(m)]].sum(axis=1) / m
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


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
