"""The trajectory data model: steps as parallel numpy arrays, queries with their evidence.

A trajectory of ``t`` steps holds an ``(t, d)`` matrix of l2-normalized step embeddings, the
token cost of each step, a tool signature id per step (``-1`` for none), the entity set of each
step in compressed sparse row form (``entity_ptr``/``entity_ids``), a subgoal id per step
(``-1`` for none), and optional text and source tags. Vocabularies map the ids back to strings.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Query", "Trajectory"]


def _normalize_rows(x: NDArray[np.float64]) -> NDArray[np.float64]:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


@dataclass(frozen=True, eq=False)
class Trajectory:
    """An agent trajectory of ``t`` steps (vectorized; no object per step).

    Attributes
    ----------
    embeddings : ndarray, shape (t, d)
        l2-normalized step embeddings (rows of zeros stay zero).
    costs : ndarray of float, shape (t,)
        Token cost of each step (> 0).
    tool_ids : ndarray of int, shape (t,)
        Index into `tool_vocab` of the step's tool signature, -1 when the step calls no tool.
    entity_ptr, entity_ids : ndarray of int
        The entities of step ``i`` are ``entity_ids[entity_ptr[i]:entity_ptr[i + 1]]``
        (indices into `entity_vocab`, sorted, unique).
    subgoal_ids : ndarray of int, shape (t,)
        Subgoal id of each step, -1 when unknown.
    tool_vocab, entity_vocab : tuple of str
    text : tuple of str or None
    source : tuple of str or None
        Optional source tag per step (e.g. the source episode of a concatenated trajectory).
    """

    embeddings: NDArray[np.float64]
    costs: NDArray[np.float64]
    tool_ids: NDArray[np.int64]
    entity_ptr: NDArray[np.int64]
    entity_ids: NDArray[np.int64]
    subgoal_ids: NDArray[np.int64]
    tool_vocab: tuple[str, ...] = ()
    entity_vocab: tuple[str, ...] = ()
    text: tuple[str, ...] | None = None
    source: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        t = self.embeddings.shape[0]
        if self.embeddings.ndim != 2:
            raise ValueError(
                f"`embeddings` must be 2-D (steps x dim); got {self.embeddings.shape}."
            )
        for name in ("costs", "tool_ids", "subgoal_ids"):
            if getattr(self, name).shape != (t,):
                raise ValueError(
                    f"`{name}` must have one entry per step ({t}); got {getattr(self, name).shape}."
                )
        if self.entity_ptr.shape != (t + 1,):
            raise ValueError(f"`entity_ptr` must have t + 1 = {t + 1} entries.")
        bad = np.flatnonzero(~np.isfinite(self.costs) | (self.costs <= 0))
        if bad.size:
            raise ValueError(
                f"step costs must be finite and > 0; bad at steps {bad[:10].tolist()}."
            )
        if not np.all(np.isfinite(self.embeddings)):
            rows = np.flatnonzero(~np.isfinite(self.embeddings).all(axis=1))
            raise ValueError(
                f"`embeddings` has NaN or infinite values at steps {rows[:10].tolist()}."
            )

    @cached_property
    def _entity_sets(self) -> tuple[frozenset[int], ...]:
        # made on first use: most trajectories (a prefix per query time) are never asked
        ptr = self.entity_ptr.tolist()
        ids = self.entity_ids.tolist()
        return tuple(frozenset(ids[a:b]) for a, b in pairwise(ptr))

    @property
    def n_steps(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    def entities_of(self, i: int) -> frozenset[int]:
        """Entity ids of step `i`."""
        return self._entity_sets[i]

    def tool_of(self, i: int) -> str | None:
        k = int(self.tool_ids[i])
        return None if k < 0 else self.tool_vocab[k]

    def entity_names(self, i: int) -> frozenset[str]:
        return frozenset(self.entity_vocab[k] for k in self._entity_sets[i])

    def prefix(self, end: int) -> Trajectory:
        """The trajectory's first `end` steps (same vocabularies).

        >>> import numpy as np
        >>> from osustat.retrieval import Trajectory
        >>> tr = Trajectory.from_steps(np.eye(3), [5, 6, 7], entities=[{"a"}, {"b"}, {"a"}])
        >>> p = tr.prefix(2)
        >>> p.n_steps, p.costs.tolist(), sorted(p.entity_names(1))
        (2, [5.0, 6.0], ['b'])
        """
        if not 0 <= end <= self.n_steps:
            raise ValueError(f"`end` must be in [0, {self.n_steps}]; got {end}.")
        stop = int(self.entity_ptr[end])
        return Trajectory(
            embeddings=self.embeddings[:end],
            costs=self.costs[:end],
            tool_ids=self.tool_ids[:end],
            entity_ptr=self.entity_ptr[: end + 1],
            entity_ids=self.entity_ids[:stop],
            subgoal_ids=self.subgoal_ids[:end],
            tool_vocab=self.tool_vocab,
            entity_vocab=self.entity_vocab,
            text=None if self.text is None else self.text[:end],
            source=None if self.source is None else self.source[:end],
        )

    @classmethod
    def from_steps(
        cls,
        embeddings: Any,
        costs: Any,
        *,
        tools: Sequence[str | None] | None = None,
        entities: Sequence[Collection[str]] | None = None,
        subgoals: Sequence[Any] | None = None,
        text: Sequence[str] | None = None,
        source: Sequence[str] | None = None,
    ) -> Trajectory:
        """Build a trajectory from per-step annotations (strings), encoding vocabularies.

        Embeddings are l2-normalized here. Subgoal labels of any hashable type are mapped to
        integer ids in order of first appearance (``None`` -> -1).

        Examples
        --------
        >>> import numpy as np
        >>> from osustat.retrieval import Trajectory
        >>> tr = Trajectory.from_steps(np.eye(3), [10, 12, 9], tools=["a(x)", None, "a(x)"],
        ...                            entities=[{"u1"}, set(), {"u1", "f9"}], subgoals=[0, 0, 1])
        >>> tr.n_steps, tr.tool_of(2), sorted(tr.entity_names(2)), tr.subgoal_ids.tolist()
        (3, 'a(x)', ['f9', 'u1'], [0, 0, 1])
        """
        emb = np.asarray(embeddings, dtype=np.float64)
        if emb.ndim != 2:
            raise ValueError(f"`embeddings` must be 2-D (steps x dim); got shape {emb.shape}.")
        t = emb.shape[0]
        cost = np.asarray(costs, dtype=np.float64)

        def check_len(name: str, values: Sequence[Any] | None) -> list[Any]:
            if values is None:
                return [None] * t
            values = list(values)
            if len(values) != t:
                raise ValueError(f"`{name}` must have one entry per step ({t}); got {len(values)}.")
            return values

        tool_list = check_len("tools", tools)
        ent_list = check_len("entities", entities)
        sg_list = check_len("subgoals", subgoals)
        tool_vocab: dict[str, int] = {}
        tool_ids = np.array(
            [
                -1 if x is None else tool_vocab.setdefault(str(x), len(tool_vocab))
                for x in tool_list
            ],
            dtype=np.int64,
        )
        ent_vocab: dict[str, int] = {}
        ptr = [0]
        flat: list[int] = []
        for i, ents in enumerate(ent_list):
            if isinstance(ents, str):
                raise TypeError(
                    f"`entities[{i}]` must be a collection of strings, not the string {ents!r}."
                )
            # ids in sorted-name order: a set's iteration order depends on PYTHONHASHSEED, and
            # the vocabulary order must not (it breaks ties in OSU construction)
            names = sorted({str(e) for e in (ents or ())})
            ids = sorted(ent_vocab.setdefault(e, len(ent_vocab)) for e in names)
            flat.extend(ids)
            ptr.append(len(flat))
        sg_vocab: dict[Any, int] = {}
        sg_ids = np.array(
            [-1 if x is None else sg_vocab.setdefault(x, len(sg_vocab)) for x in sg_list],
            dtype=np.int64,
        )
        return cls(
            embeddings=_normalize_rows(emb),
            costs=cost,
            tool_ids=tool_ids,
            entity_ptr=np.array(ptr, dtype=np.int64),
            entity_ids=np.array(flat, dtype=np.int64),
            subgoal_ids=sg_ids,
            tool_vocab=tuple(tool_vocab),
            entity_vocab=tuple(ent_vocab),
            text=None if text is None else tuple(check_len("text", text)),
            source=None if source is None else tuple(check_len("source", source)),
        )

    @classmethod
    def empty(cls, dim: int) -> Trajectory:
        """A trajectory with no steps (every retriever must handle it)."""
        return cls.from_steps(np.zeros((0, dim)), np.zeros(0))


@dataclass(frozen=True, eq=False)
class Query:
    """A query asked at time `time` about a trajectory.

    Attributes
    ----------
    query_id : str
    embedding : ndarray, shape (d,)
        l2-normalized.
    time : int
        Steps with index >= `time` are in the future and never retrievable.
    evidence : ndarray of int
        Indices of the ground-truth evidence steps (all < `time`). Only metrics and the
        oracle variant (GF) may read them.
    """

    query_id: str
    embedding: NDArray[np.float64]
    time: int
    evidence: NDArray[np.int64]

    def __post_init__(self) -> None:
        emb = np.asarray(self.embedding, dtype=np.float64)
        norm = float(np.linalg.norm(emb))
        object.__setattr__(self, "embedding", emb / norm if norm > 0 else emb)
        ev = np.unique(np.asarray(self.evidence, dtype=np.int64))
        object.__setattr__(self, "evidence", ev)
        if ev.size and (ev.min() < 0 or ev.max() >= self.time):
            raise ValueError(
                f"query {self.query_id!r}: evidence steps must lie in [0, time={self.time}); "
                f"got {ev.tolist()}."
            )
