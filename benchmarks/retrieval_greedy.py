"""OSU-Mem's greedy expansion against its reference at main (issue 25: retrieve <= 2 ms).

The expansion (``OSUMem._expand``, Algorithm 1's fine stage) was rewritten for speed with
records byte-identical. This script holds the expansion as it was at main 953cdf2
(:func:`expand_reference`, verbatim) and compares it with the package's on the long
synthetic trajectories of ``retrieval_long_coarse.py`` (one pool per size, the paper's
``OSUMem()``, answered by the coarse stages ``paper``, ``capped``, ``capped-ann`` and by
``OSUMemGF`` with ``capped``):

- ``--check``: over ``--queries`` queries (half the normalized mean of 3 random steps, as in
  ``retrieval_long_coarse.py``, half the same plus noise) x B in ``--budgets`` x the four
  retrievers, the retrieved step lists (order included) and the tokens used of the package
  against the reference; prints the counts of equal answers and a SHA-256 over the package's
  answers (run it at two revisions to compare them across revisions, too);
- ``--time``: CPU milliseconds per retrieve (``time.process_time``) of ``capped-ann`` at each
  budget, reference and package alternating query by query (after one warm-up pass), the
  medians over ``--rounds`` passes over 30 queries, their ratio and the median of the
  per-query ratios; the load (``uptime``) before and after.

    nice -n 10 .venv/bin/python benchmarks/retrieval_greedy.py --sizes 16000 50000 --check --time

``--pickle-dir DIR`` keeps each size's built pool (``retrieval_long_coarse.py``'s cache).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import copy
import hashlib
import sys
import time
import types
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from growth import load
from retrieval_long_coarse import built, on_same_pool

from osustat.retrieval import OSUMem, OSUMemGF
from osustat.retrieval.base import RetrievalResult
from osustat.retrieval.expansion import csr_take as _csr_take  # the reference's helper, unchanged

_EPS = 1e-6
BUDGETS = (64, 128, 256, 512)


def expand_reference(
    self,
    q: NDArray[np.float64],
    budget: float,
    end: int,
    top_arr: NDArray[np.int64],
    r_top: NDArray[np.float64],
    sims: NDArray[np.float64] | None,
) -> RetrievalResult:
    """``OSUMem._expand`` as it was at main 953cdf2 (verbatim but for this docstring): the
    reference the new expansion must equal. The greedy expansion of the coarse stage's OSUs
    `top_arr` (scores `r_top`).

    `sims`: every step's query similarity, or None to score only the OSUs' members.
    """
    traj = self.trajectory_
    costs = traj.costs[:end]
    # the top-K OSUs' steps before the query time, most query-similar first, as a padded
    # (K, width) matrix so that every greedy iteration scores all OSUs at once; one
    # stable lexsort (OSU rank, then -similarity, ties in member order) orders them all.
    # The top-K OSUs' members in rank order (each OSU's in member order), gathered
    # through the member CSR: work in K's members, not in every OSU's
    at, n_mem = _csr_take(self._member_ptr, top_arr)
    m_step = self._member_step[at]
    m_rank = np.repeat(np.arange(top_arr.size), n_mem)
    keep_m = m_step < end
    m_rank, m_step = m_rank[keep_m], m_step[keep_m]
    if sims is None:  # only the members' similarities are ever read: each once
        sims = np.zeros(end)
        distinct = np.unique(m_step)
        sims[distinct] = traj.embeddings[distinct] @ q
    order = np.lexsort((-sims[m_step], m_rank))
    m_rank, m_step = m_rank[order], m_step[order]
    sizes = np.bincount(m_rank, minlength=top_arr.size)
    starts = np.cumsum(sizes) - sizes
    col = np.arange(m_step.size) - np.repeat(starts, sizes)
    width = int(sizes.max())
    mat = np.zeros((top_arr.size, width), dtype=np.int64)
    mat[m_rank, col] = m_step
    # `open_[s]`: step s is not selected yet; padding (and every step of an expanded
    # OSU, in `mat_open`) points to the always-closed slot `end`
    open_ = np.ones(end + 1, dtype=bool)
    open_[end] = False
    mat_open = np.full((top_arr.size, width), end, dtype=np.int64)
    mat_open[m_rank, col] = m_step
    step_cost = costs[mat]
    novelty = self.lambda_nov > 0 and budget >= self.novelty_budget
    chosen: list[int] = []
    used = 0.0
    if novelty:
        # novelty is only ever needed for steps of the top-K OSUs: work on that union U
        # (sorted); `mat_u` holds each cell's position in U (padding cells, masked out
        # of every sum, point to any valid position)
        union = np.unique(m_step)
        emb_u = self._emb32[union]
        mat_u = np.searchsorted(union, mat)
        np.minimum(mat_u, union.size - 1, out=mat_u)
        emb_nov = np.ones(union.size)
        ent_seen = np.zeros(len(traj.entity_vocab), dtype=bool)
        tool_seen = np.zeros(len(traj.tool_vocab) + 1, dtype=bool)
        tools_u = traj.tool_ids[union]
        # the union's (step, entity) pairs, gathered through the entity CSR
        at, n_ent = _csr_take(traj.entity_ptr, union)
        ent_ids = traj.entity_ids[at]
        ent_rows = np.repeat(np.arange(union.size), n_ent)
        # structural novelty state, updated as entities and tools become seen (the counts
        # are small integers held as floats: decrements are exact in any order)
        new_ents = np.bincount(ent_rows, minlength=union.size).astype(np.float64)
        new_tool = tools_u >= 0
        struct_changed = True
        pair = np.empty((2, top_arr.size, width))  # [novelty of each cell, its cost]
        pair[1] = step_cost
        prod = np.empty_like(pair)
    dirty = True  # scores change only when steps were added
    while used < budget:
        if dirty:
            avail = open_[mat_open]
            cand = avail & (np.cumsum(avail, axis=1) <= self.top_c)  # top-C unselected
            n_cand = cand.sum(axis=1)
            if novelty:
                if struct_changed:  # StructNov moves only when a new entity/tool is seen
                    a_struct = self.alpha * np.minimum(1.0, 0.6 * new_ents + 0.4 * new_tool)
                    struct_changed = False
                nov = (1 - self.alpha) * emb_nov + a_struct
                # one product and one row-sum for the candidates' novelty and cost (each
                # row is summed exactly as on its own)
                np.take(nov, mat_u, out=pair[0])
                sums = np.multiply(pair, cand, out=prod).sum(axis=2)
                value = r_top + self.lambda_nov * (sums[0] / np.maximum(n_cand, 1))
                score = value / (sums[1] + _EPS)
            else:
                score = r_top / ((step_cost * cand).sum(axis=1) + _EPS)
            # an OSU already expanded, or with nothing left to add, is out for good
            score[n_cand == 0] = -np.inf
        best = int(np.argmax(score))
        if score[best] == -np.inf:
            break
        score[best] = -np.inf
        mat_open[best] = end
        added = []
        row = mat[best, : sizes[best]]
        row = row[open_[row]]  # reached through an earlier OSU: skipped at zero cost
        for s, c in zip(row.tolist(), costs[row].tolist(), strict=True):
            if used + c <= budget:
                open_[s] = False
                added.append(s)
                used += c
        chosen.extend(added)
        dirty = bool(added)
        if not added:
            # when not even the cheapest step left in a live OSU fits, every later pick
            # only drops an OSU: stop now (the same answer, without those picks)
            left = step_cost[open_[mat_open]]
            if left.size == 0 or used + float(left.min()) > budget:
                break
        if novelty and added:
            # EmbNov = 1 - max cosine to the selected set (1 while it is empty)
            cos = (emb_u @ self._emb32[added].T).max(axis=1)
            np.minimum(emb_nov, 1.0 - cos, out=emb_nov)
            fresh = [
                e
                for a in added
                for e in traj.entity_ids[traj.entity_ptr[a] : traj.entity_ptr[a + 1]].tolist()
                if not ent_seen[e]
            ]
            if fresh:
                ent_seen[fresh] = True
                is_fresh = np.zeros(ent_seen.size, dtype=bool)
                is_fresh[fresh] = True
                new_ents -= np.bincount(ent_rows[is_fresh[ent_ids]], minlength=union.size)
                struct_changed = True
            for t in traj.tool_ids[added].tolist():
                if t >= 0 and not tool_seen[t]:
                    tool_seen[t] = True
                    new_tool &= tools_u != t
                    struct_changed = True
    picked = np.asarray(chosen, dtype=np.int64)
    return self._result(picked[np.lexsort((picked, -sims[picked]))], used)


def with_reference(r: OSUMem) -> OSUMem:
    """A copy of the built retriever `r` that expands with :func:`expand_reference`."""
    ref = copy.copy(r)
    ref._expand = types.MethodType(expand_reference, ref)  # type: ignore[method-assign]
    return ref


def retrievers(paper: OSUMem) -> dict[str, OSUMem]:
    """The four retrievers sharing `paper`'s pool (``OSUMemGF`` as a copy with its class)."""
    stages, _, _, _ = on_same_pool(paper)
    gf = copy.copy(stages["capped"])
    gf.__class__ = OSUMemGF
    return {**stages, "GF capped": gf}


def make_queries(traj: Any, n_queries: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Queries (normalized; every other one with noise) and their 3 evidence steps."""
    rng = np.random.default_rng(2)
    n, d = traj.n_steps, traj.dim
    evidence = [np.sort(rng.choice(n, 3, replace=False)) for _ in range(n_queries)]
    queries = []
    for i, e in enumerate(evidence):
        q = traj.embeddings[e].mean(axis=0)
        if i % 2:
            q = q + rng.normal(scale=0.5 / np.sqrt(d), size=d)
        queries.append(q / np.linalg.norm(q))
    return queries, evidence


def check(n: int, rs: dict[str, OSUMem], n_queries: int, budgets: list[int]) -> None:
    """Step lists and tokens of the package's expansion against the reference's."""
    queries, evidence = make_queries(rs["paper"].trajectory_, n_queries)
    digest = hashlib.sha256()
    print(
        "\n| retriever | B | answers | equal steps (order) | equal tokens |\n|---|---|---|---|---|"
    )
    for name, r in rs.items():
        ref = with_reference(r)
        for b in budgets:
            same_steps = same_used = 0
            for q, e in zip(queries, evidence, strict=True):
                kw = {"evidence": e} if r.oracle else {}
                new, old = r.retrieve(q, b, **kw), ref.retrieve(q, b, **kw)
                same_steps += bool(np.array_equal(new.steps, old.steps))
                same_used += new.tokens == old.tokens
                digest.update(new.steps.tobytes())
                digest.update(repr(new.tokens).encode())
            print(f"| {name} | {b} | {n_queries} | {same_steps} | {same_used} |", flush=True)
    print(f"\n{n:,} steps: SHA-256 of the package's answers {digest.hexdigest()}")


def time_alternating(rs: dict[str, OSUMem], budgets: list[int], rounds: int) -> None:
    """CPU ms of ``capped-ann``'s retrieve, reference and package alternating per query."""
    ann = rs["capped-ann"]
    ref = with_reference(ann)
    queries, _ = make_queries(ann.trajectory_, 30)
    print(f"\nload before: {load()}")
    print(
        "\n| B | reference CPU ms | package CPU ms | ratio of medians | median per-query ratio |"
        "\n|---|---|---|---|---|"
    )
    for b in budgets:
        for q in queries:  # warm-up
            ref.retrieve(q, b)
            ann.retrieve(q, b)
        t_ref, t_new = [], []
        for k in range(rounds):
            for i, q in enumerate(queries):
                pair = [(ref, t_ref), (ann, t_new)]
                for r, times in pair if (i + k) % 2 else pair[::-1]:
                    c0 = time.process_time()
                    r.retrieve(q, b)
                    times.append(time.process_time() - c0)
        m_ref, m_new = 1e3 * np.median(t_ref), 1e3 * np.median(t_new)
        per = np.median(np.array(t_new) / np.array(t_ref))
        print(f"| {b} | {m_ref:.2f} | {m_new:.2f} | {m_new / m_ref:.2f} | {per:.2f} |", flush=True)
    print(f"\nload after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16000, 50000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--check", action="store_true", help="compare answers (default)")
    parser.add_argument("--time", action="store_true", help="time, alternating")
    parser.add_argument("--rounds", type=int, default=3, help="timing passes over 30 queries")
    parser.add_argument("--pickle-dir", default=None, metavar="DIR")
    args = parser.parse_args()
    for n in args.sizes:
        print(f"\n## {n:,} steps\n\nload: {load()}", flush=True)
        _, paper, _ = built(n, args.pickle_dir)
        print(f"{paper.pool_.n_osus:,} OSUs", flush=True)
        rs = retrievers(paper)
        if args.check or not args.time:
            check(n, rs, args.queries, args.budgets)
        if args.time:
            time_alternating(rs, args.budgets, args.rounds)


if __name__ == "__main__":
    main()
