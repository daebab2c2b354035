"""OSU-Mem's fine stage: the greedy expansion of the coarse stage's OSUs (Algorithm 1).

:class:`Expansion` computes the rule :class:`~osustat.retrieval.osumem.OSUMem` documents
for one query: among the remaining top-K OSUs pick the one maximizing
``(r_k + lambda_nov nu_k) / (c_k + eps)`` over its C most query-similar not-yet-selected
steps, expand it, repeat. Its answers are those of the expansion before this module (main
953cdf2), number for number; what it does not redo:

- The top-K OSUs' steps before the query time sit in a padded (K, width) matrix of their
  positions in U, the distinct steps (sorted). Every row sum is a numpy reduce of that
  row's ``width`` products (candidates at their column, 0 elsewhere): the same reduce a sum
  over all rows at once makes row by row, so a row summed on its own has the same bits.
- A row's candidates, their count and their cost change only when one of its steps is
  selected: after a pick only those rows are recounted (in Python, a few rows of at most
  ``width`` steps). Without the novelty term only their scores change.
- With the novelty term every row is rescored after a pick that selected steps (one take,
  one product, one row sum over the matrix). A step's EmbNov update (its cosines with the
  newly selected steps) is made when that rescoring needs it, not after the last pick.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .trajectory import Trajectory

__all__ = ["Expansion", "csr_take"]

_EPS = 1e-6


def csr_take(
    ptr: NDArray[np.int64], rows: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Positions of the entries of `rows` in a CSR layout (row after row), and their counts."""
    n = ptr[rows + 1] - ptr[rows]
    first = np.cumsum(n) - n
    return np.arange(int(n.sum())) + np.repeat(ptr[rows] - first, n), n


class Expansion:
    """One query's greedy expansion of the coarse stage's OSUs `top_arr` (scores `r_top`).

    `member_ptr`/`member_step`: the pool's OSU -> member steps CSR (members sorted);
    `sims`: every step's query similarity, or None to compute the members' only (each once,
    on the gathered rows). :meth:`run` returns the selected steps in descending step-query
    similarity (ties by step) and the tokens they use.
    """

    def __init__(
        self,
        traj: Trajectory,
        member_ptr: NDArray[np.int64],
        member_step: NDArray[np.int64],
        q: NDArray[np.float64],
        end: int,
        top_arr: NDArray[np.int64],
        r_top: NDArray[np.float64],
        sims: NDArray[np.float64] | None,
    ) -> None:
        at, n_mem = csr_take(member_ptr, top_arr)
        m_step = member_step[at]
        m_rank = np.repeat(np.arange(top_arr.size), n_mem)
        if end < traj.n_steps:  # (a prefix index is built on its `end` steps: all before)
            keep = m_step < end
            m_rank, m_step = m_rank[keep], m_step[keep]
        # U (sorted) and every member as its position in U, from one stable sort; the rows
        # holding each step of U in `row_of[row_ptr[i]:row_ptr[i + 1]]`
        by_step = np.argsort(m_step, kind="stable")
        sorted_steps = m_step[by_step]
        first = np.empty(m_step.size, dtype=bool)
        first[:1] = True
        np.not_equal(sorted_steps[1:], sorted_steps[:-1], out=first[1:])
        union = sorted_steps[first]
        m_u = np.empty_like(by_step)
        m_u[by_step] = np.cumsum(first) - 1
        self.row_of: list[int] = m_rank[by_step].tolist()
        self.row_ptr: list[int] = np.append(np.flatnonzero(first), m_step.size).tolist()
        self.union = union
        # only members' similarities are read: each once, on the gathered rows (whose
        # float32 copy is the novelty term's, as `emb32[union]`)
        self.emb_rows: NDArray[np.float64] | None = None
        if sims is None:
            self.emb_rows = traj.embeddings[union]
            self.sims_u = self.emb_rows @ q
        else:
            self.sims_u = sims[union]
        # rows in rank order, each OSU's steps most query-similar first (ties in member order)
        order = np.lexsort((-self.sims_u[m_u], m_rank))
        m_rank, m_u = m_rank[order], m_u[order]
        k, u = top_arr.size, union.size
        sizes = np.bincount(m_rank, minlength=k)
        starts = np.cumsum(sizes) - sizes
        col = np.arange(m_u.size) - np.repeat(starts, sizes)
        # padding cells point to the slot u: never open, cost 0
        self.cells = np.full((k, int(sizes.max())), u, dtype=np.int64)
        self.cells[m_rank, col] = m_u
        cost = np.zeros(u + 1)
        cost[:u] = traj.costs[union]
        self.cell_cost = cost[self.cells]
        self.cost: list[float] = cost.tolist()
        self.by_cost: list[int] = np.argsort(cost[:u], kind="stable").tolist()
        self.sizes = sizes
        # plain lists for the per-pick work on a few rows
        self.flat: list[int] = m_u.tolist()
        self.starts: list[int] = starts.tolist()
        self.size: list[int] = sizes.tolist()
        self.traj = traj
        self.r_top = r_top

    def run(
        self,
        budget: float,
        top_c: int,
        novelty: tuple[float, float, NDArray[np.float32]] | None,
    ) -> tuple[NDArray[np.int64], float]:
        """Expand under `budget` with `top_c` candidates per OSU.

        `novelty`: None (no novelty term) or ``(lambda_nov, alpha, emb32)``, emb32 every
        step's float32 embedding.
        """
        k, width = self.cells.shape
        u = self.union.size
        n0 = np.minimum(self.sizes, top_c)
        self.cand = (np.arange(width) < n0[:, None]).astype(np.float64)  # first C open cells
        self.n1 = np.maximum(n0, 1).astype(np.float64)
        self.costeps = (self.cell_cost * self.cand).sum(axis=1) + _EPS
        self.dead = n0 == 0  # expanded, or nothing left in it: out for good
        self.open = [True] * u + [False]
        self.score = np.empty(k)
        self.novelty = novelty
        if novelty is None:
            np.divide(self.r_top, self.costeps, out=self.score)
        else:
            self._init_novelty(novelty[1], novelty[2])
            self._rescore_all()
        self.score[self.dead] = -np.inf
        by_cost = self.by_cost
        cheapest = 0  # by_cost[cheapest:] holds every open step
        chosen: list[int] = []
        pending: list[int] = []  # steps selected by the last pick
        used = 0.0
        while used < budget:
            if pending:
                self._after(pending, top_c)
                pending = []
            best = int(self.score.argmax())
            if self.score[best] == -np.inf:
                break
            self.score[best] = -np.inf
            self.dead[best] = True
            s0 = self.starts[best]
            for s in self.flat[s0 : s0 + self.size[best]]:
                # a step reached through an earlier OSU is skipped at zero cost
                if self.open[s] and used + self.cost[s] <= budget:
                    self.open[s] = False
                    pending.append(s)
                    used += self.cost[s]
            chosen.extend(pending)
            if not pending:
                # when not even the cheapest open step fits, every later pick only drops an
                # OSU: stop now (the same answer, without those picks). (An open step in no
                # live OSU was skipped when its OSU was expanded: it never fits again; so
                # this is the condition "no open step of a live OSU fits" it stopped on.)
                while cheapest < u and not self.open[by_cost[cheapest]]:
                    cheapest += 1
                if cheapest == u or used + self.cost[by_cost[cheapest]] > budget:
                    break
        loc = np.asarray(chosen, dtype=np.int64)
        steps = self.union[loc]
        return steps[np.lexsort((steps, -self.sims_u[loc]))], used

    def _after(self, added: list[int], top_c: int) -> None:
        """Scores after the steps `added` (positions in U) were selected."""
        dead = self.dead
        rows = sorted(
            {
                r
                for s in added
                for r in self.row_of[self.row_ptr[s] : self.row_ptr[s + 1]]
                if not dead[r]
            }
        )
        if rows:
            self._recount(rows, top_c)
        if self.novelty is not None:
            self._update_novelty(added)
            self._rescore_all()
            self.score[dead] = -np.inf
        elif rows:
            ix = np.array(rows)
            self.score[ix] = self.r_top[ix] / self.costeps[ix]
            self.score[ix[dead[ix]]] = -np.inf

    def _recount(self, rows: list[int], top_c: int) -> None:
        """Candidates, their count and cost for `rows` (some of their steps were selected)."""
        width = self.cells.shape[1]
        masks = []
        n1 = []
        for r in rows:
            mask = [0.0] * width
            n = 0
            s0 = self.starts[r]
            for j, s in enumerate(self.flat[s0 : s0 + self.size[r]]):
                if self.open[s]:
                    mask[j] = 1.0
                    n += 1
                    if n == top_c:
                        break
            masks.append(mask)
            n1.append(max(n, 1))
            if n == 0:
                self.dead[r] = True
        ix = np.array(rows)
        self.cand[ix] = masks
        self.n1[ix] = n1
        self.costeps[ix] = (self.cell_cost[ix] * self.cand[ix]).sum(axis=1) + _EPS

    def _rescore_all(self) -> None:
        """Every row's score with the current novelty (expanded ones are set apart)."""
        np.take(self.nov, self.nov_cells, out=self.buf)
        s = np.multiply(self.buf, self.cand, out=self.buf).sum(axis=1)
        assert self.novelty is not None
        value = self.r_top + self.novelty[0] * (s / self.n1)
        np.divide(value, self.costeps, out=self.score)

    def _init_novelty(self, alpha: float, emb32: NDArray[np.float32]) -> None:
        traj, union = self.traj, self.union
        u = union.size
        self.alpha = alpha
        # the same float32 values either way (elementwise rounding of the same float64s)
        rows = self.emb_rows
        self.emb_u = emb32[union] if rows is None else rows.astype(np.float32)
        self.emb_nov = np.ones(u)
        # structural novelty state: the entities and tools seen, each step of U's count of
        # unseen entities (a bincount of 0/1 weights: an exact integer, in any order) and
        # whether its tool is unseen
        self.ents_seen: set[int] = set()
        self.tools_seen: set[int] = set()
        self.tools_u = traj.tool_ids[union]
        self.tool_list: list[int] = self.tools_u.tolist()
        at, n_ent = csr_take(traj.entity_ptr, union)  # U's (step, entity) pairs
        self.ent_ids = traj.entity_ids[at]
        self.ent_rows = np.repeat(np.arange(u), n_ent)
        self.ent_unseen = np.ones(len(traj.entity_vocab))
        self.new_ents = np.bincount(self.ent_rows, minlength=u).astype(np.float64)
        self.new_tool = self.tools_u >= 0
        # padding cells read U's first step (0 after the candidate mask), as they always did
        self.nov_cells = np.where(self.cells == u, 0, self.cells)
        self.buf = np.empty(self.cells.shape)
        self.nov = np.empty(u)
        self._struct_nov()
        self._blend()

    def _struct_nov(self) -> None:
        self.a_struct = self.alpha * np.minimum(1.0, 0.6 * self.new_ents + 0.4 * self.new_tool)

    def _blend(self) -> None:
        np.add((1 - self.alpha) * self.emb_nov, self.a_struct, out=self.nov)

    def _update_novelty(self, added: list[int]) -> None:
        """Novelty after the steps `added` (positions in U) were selected."""
        # EmbNov = 1 - max cosine to the selected set (1 while it is empty); the maximum
        # over the new steps is exact in any order
        cos = self.emb_u @ self.emb_u[added].T
        top = cos[:, 0]
        for j in range(1, len(added)):
            top = np.maximum(top, cos[:, j])
        np.minimum(self.emb_nov, 1.0 - top, out=self.emb_nov)
        traj = self.traj
        fresh = set().union(*[traj.entities_of(a) for a in self.union[added].tolist()])
        fresh -= self.ents_seen
        changed = False
        if fresh:
            self.ents_seen |= fresh
            self.ent_unseen[list(fresh)] = 0.0
            self.new_ents = np.bincount(
                self.ent_rows, self.ent_unseen[self.ent_ids], minlength=self.union.size
            )
            changed = True
        for t in {self.tool_list[a] for a in added}:
            if t >= 0 and t not in self.tools_seen:
                self.tools_seen.add(t)
                self.new_tool &= self.tools_u != t
                changed = True
        if changed:  # StructNov moves only when a new entity/tool is seen
            self._struct_nov()
        self._blend()
