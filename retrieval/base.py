"""The retriever protocol, its lifecycle, and the packing policy every retriever shares.

Lifecycle (scikit-learn style): ``__init__`` stores keyword-only hyperparameters and nothing
else; :meth:`BaseRetriever.build` indexes one trajectory and sets trailing-underscore state;
:meth:`BaseRetriever.retrieve` answers a query under a token budget. Retrieving from an unbuilt
retriever is an error. Only oracle retrievers (``oracle = True``) accept the evidence.

Packing policy (shared, Section 5.3 "same token-cost estimation and packing policy"): a
retriever produces a priority order of steps; steps are taken in that order and a step whose
cost does not fit in the remaining budget is skipped (later, cheaper steps may still fit).
Summaries (Periodic Summary, Tree Abstraction) spend budget but are never evidence.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from .trajectory import Trajectory

__all__ = [
    "BaseRetriever",
    "RetrievalResult",
    "Retriever",
    "check_setting",
    "greedy_pack",
    "pack",
]


@dataclass(frozen=True, eq=False)
class RetrievalResult:
    """What a retriever returns for one query.

    Attributes
    ----------
    steps : ndarray of int
        Retrieved step indices in packing order (no duplicates).
    tokens : float
        Tokens used, steps plus summaries; never above the budget.
    summary_tokens : float
        Tokens spent on summaries (they are not steps and never count as evidence).
    n_summaries : int
    """

    steps: NDArray[np.int64]
    tokens: float
    summary_tokens: float = 0.0
    n_summaries: int = 0


@runtime_checkable
class Retriever(Protocol):
    """What every retriever implements."""

    name: ClassVar[str]
    oracle: ClassVar[bool]

    def build(self, trajectory: Trajectory) -> Retriever: ...

    def retrieve(
        self,
        query: Any,
        budget: float,
        *,
        time: int | None = None,
        evidence: Any = None,
    ) -> RetrievalResult: ...


def check_setting(
    name: str,
    value: Any,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
) -> Any:
    """Validate one retriever setting at construction (scikit-learn's "refuse bad settings").

    Raises ``TypeError`` for a non-number (or a non-integer where one is needed) and
    ``ValueError`` for a non-finite value or one outside ``[low, high]``.

    >>> from osustat.retrieval.base import check_setting
    >>> check_setting("period", 0, integer=True, low=1)
    Traceback (most recent call last):
    ...
    ValueError: `period` must be >= 1; got 0.
    """
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds):
        want = "an integer" if integer else "a number"
        raise TypeError(f"`{name}` must be {want}; got {value!r}.")
    if not np.isfinite(value):
        raise ValueError(f"`{name}` must be finite; got {value!r}.")
    if low is not None and value < low:
        raise ValueError(f"`{name}` must be >= {low}; got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"`{name}` must be <= {high}; got {value!r}.")
    return value


def pack(
    order: Any, costs: NDArray[np.float64], budget: float, used: float = 0.0
) -> tuple[list[int], float]:
    """Take steps in `order`, skipping any that do not fit in ``budget - used``.

    >>> import numpy as np
    >>> from osustat.retrieval.base import pack
    >>> pack([2, 0, 1], np.array([10.0, 30.0, 25.0]), budget=40)
    ([2, 0], 35.0)
    """
    chosen = []
    for i in order:
        c = float(costs[i])
        if used + c <= budget:
            chosen.append(int(i))
            used += c
    return chosen, used


def greedy_pack(
    costs: NDArray[np.float64],
    budget: float,
    score: Callable[[], NDArray[np.float64]],
    update: Callable[[int], None],
    reachable: NDArray[np.bool_] | None = None,
) -> tuple[list[int], float]:
    """One step per iteration: the best-scoring reachable step that still fits.

    ``score()`` returns the current score of every step; ``update(s)`` is told each chosen
    step so that the next scores can change (MMR redundancy, coverage bonuses, ...).
    """
    open_ = np.ones(costs.size, dtype=bool) if reachable is None else reachable.copy()
    chosen: list[int] = []
    used = 0.0
    while True:
        open_ &= used + costs <= budget
        if not open_.any():
            return chosen, used
        s = int(np.argmax(np.where(open_, score(), -np.inf)))
        chosen.append(s)
        used += float(costs[s])
        open_[s] = False
        update(s)


class BaseRetriever(ABC):
    """Shared lifecycle: validation, empty trajectories, zero budgets, future-step masking."""

    name: ClassVar[str] = "base"
    oracle: ClassVar[bool] = False

    trajectory_: Trajectory

    def build(self, trajectory: Trajectory) -> BaseRetriever:
        """Index one trajectory (OSU-Mem rebuilds per episode: Table 8's R = full batch)."""
        if not isinstance(trajectory, Trajectory):
            raise TypeError(f"`trajectory` must be a Trajectory; got {type(trajectory).__name__}.")
        self.trajectory_ = trajectory
        self.__dict__.pop("_prefix_cache_", None)
        self._build(trajectory)
        return self

    def _build(self, trajectory: Trajectory) -> None:  # noqa: B027 - optional hook
        """Subclasses that need an index build it here; the default keeps only the data."""

    def retrieve(
        self,
        query: Any,
        budget: float,
        *,
        time: int | None = None,
        evidence: Any = None,
    ) -> RetrievalResult:
        """Retrieve steps for `query` (an embedding) within `budget` tokens.

        Parameters
        ----------
        query : array_like, shape (d,)
            Query embedding (normalized here).
        budget : float
            Token budget B >= 0.
        time : int, optional
            Query time: only steps ``< time`` exist for the query (default: all steps). When
            ``time`` is before the end, the answer comes from an index built on the first
            ``time`` steps (built once per distinct time and cached), so future steps never
            influence it.
        evidence : array_like, optional
            Ground-truth evidence steps; accepted only by oracle retrievers.
        """
        if not hasattr(self, "trajectory_"):
            raise RuntimeError(f"{type(self).__name__} is not built; call .build(trajectory).")
        traj = self.trajectory_
        budget = float(budget)
        if not np.isfinite(budget) or budget < 0:
            raise ValueError(f"`budget` must be a finite number >= 0; got {budget}.")
        q = np.asarray(query, dtype=np.float64)
        if q.shape != (traj.dim,):
            raise ValueError(f"`query` must have shape ({traj.dim},); got {q.shape}.")
        norm = float(np.linalg.norm(q))
        q = q / norm if norm > 0 else q
        end = traj.n_steps if time is None else int(time)
        if not 0 <= end <= traj.n_steps:
            raise ValueError(f"`time` must be in [0, {traj.n_steps}]; got {time}.")
        if evidence is not None and not self.oracle:
            raise TypeError(
                f"{type(self).__name__} is not an oracle retriever and must not see evidence."
            )
        if self.oracle and evidence is None:
            raise TypeError(f"{type(self).__name__} is an oracle: pass `evidence=`.")
        if end == 0 or budget <= 0:
            return RetrievalResult(np.zeros(0, dtype=np.int64), 0.0)
        ev = None if evidence is None else np.asarray(evidence, dtype=np.int64)
        if end < traj.n_steps:
            # Future steps must not shape the index either (OSU pruning, centroids, k-NN
            # graph, window sizes): answer from an index built on the first `end` steps.
            return self._prefix_retriever(end)._retrieve(q, budget, end, ev)
        return self._retrieve(q, budget, end, ev)

    def _prefix_retriever(self, end: int) -> BaseRetriever:
        """This retriever built on the trajectory's first `end` steps (cached per `end`)."""
        cache: dict[int, BaseRetriever] = self.__dict__.setdefault("_prefix_cache_", {})
        if end not in cache:
            clone = copy.copy(self)
            clone.__dict__.pop("_prefix_cache_", None)
            cache[end] = clone.build(self.trajectory_.prefix(end))
        return cache[end]

    @abstractmethod
    def _retrieve(
        self, q: NDArray[np.float64], budget: float, end: int, evidence: NDArray[np.int64] | None
    ) -> RetrievalResult:
        """Retrieve among steps ``< end`` with validated inputs (``budget > 0``, ``end > 0``)."""

    def _result(
        self, steps: list[int], used: float, summary_tokens: float = 0.0, n_summaries: int = 0
    ) -> RetrievalResult:
        return RetrievalResult(
            np.array(steps, dtype=np.int64), float(used), float(summary_tokens), int(n_summaries)
        )

    def __repr__(self) -> str:
        params = ", ".join(
            f"{k}={v!r}"
            for k, v in vars(self).items()
            if not k.endswith("_") and not k.startswith("_")
        )
        return f"{type(self).__name__}({params})"
