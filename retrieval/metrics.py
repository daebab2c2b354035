"""Per-query retrieval metrics and their conversion to records (osustat's long schema).

**Hit@k** here means *at least k evidence steps retrieved* -- the paper's Hit@2 -- and is
NOT TREC Success@k ("at least one relevant item in the top k"; ir_measures' ``Success@k``).
With multi-step evidence, Hit@1 is satisfied by a single step; Hit@2 asks whether enough of
the cross-bound evidence came back to support a decision (Section 5.3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from osustat.metrics import count_metrics
from osustat.record_row import QueryKey

__all__ = [
    "NEAR_WINDOW",
    "QueryOutcome",
    "hit_at_k",
    "near_far_recall",
    "outcomes_to_records",
    "recall",
]

#: Evidence within this many steps of the query time is "near" (Figure 2).
NEAR_WINDOW = 50


def _overlap(retrieved: Any, evidence: Any) -> tuple[int, int]:
    # Python sets: evidence and retrievals are small, where numpy's isin is mostly overhead
    ev = {int(e) for e in np.asarray(evidence, dtype=np.int64).ravel()}
    got = {int(r) for r in np.asarray(retrieved, dtype=np.int64).ravel()}
    return len(ev & got), len(ev)


def hit_at_k(retrieved: Any, evidence: Any, k: int = 2) -> float:
    """1.0 if at least `k` distinct evidence steps were retrieved, else 0.0.

    >>> from osustat.retrieval import hit_at_k
    >>> hit_at_k([4, 9, 11], [9, 11, 30]), hit_at_k([4, 9], [9, 11, 30])
    (1.0, 0.0)
    """
    if k < 1:
        raise ValueError(f"`k` must be >= 1; got {k}.")
    found, n = _overlap(retrieved, evidence)
    if n == 0:
        raise ValueError("`evidence` is empty: Hit@k is undefined for a query with no evidence.")
    return count_metrics(found, n, (k,))[0][1]


def recall(retrieved: Any, evidence: Any) -> float:
    """Fraction of evidence steps retrieved.

    >>> from osustat.retrieval import recall
    >>> recall([4, 9, 11], [9, 11, 30])
    0.6666666666666666
    """
    found, n = _overlap(retrieved, evidence)
    if n == 0:
        raise ValueError("`evidence` is empty: recall is undefined for a query with no evidence.")
    return count_metrics(found, n, ())[-1][1]


def near_far_recall(
    retrieved: Any, evidence: Any, time: int, window: int = NEAR_WINDOW
) -> tuple[float, float]:
    """Recall over near evidence (``time - e <= window``) and over far evidence.

    Either is NaN when the query has no evidence in that range.

    >>> from osustat.retrieval import near_far_recall
    >>> near_far_recall([190, 20], [190, 195, 20, 10], time=200)
    (0.5, 0.5)
    """
    ev = {int(e) for e in np.asarray(evidence, dtype=np.int64).ravel()}
    got = {int(r) for r in np.asarray(retrieved, dtype=np.int64).ravel()}
    near = [e for e in ev if time - e <= window]
    far = [e for e in ev if time - e > window]
    return (
        sum(e in got for e in near) / len(near) if near else float("nan"),
        sum(e in got for e in far) / len(far) if far else float("nan"),
    )


@dataclass(frozen=True)
class QueryOutcome(QueryKey):
    """One retrieval of one query by one method at one budget (the unit of a record).

    Its first fields are those of ``osustat.record_row.QueryKey`` (where it stands in the
    records); then what it retrieved, the query's evidence, its time and the tokens spent.
    """

    retrieved: tuple[int, ...]
    evidence: tuple[int, ...]
    time: int
    tokens: float
    cell: str | None = None


def outcomes_to_records(
    outcomes: Iterable[QueryOutcome], *, ks: tuple[int, ...] = (2,), near_far: bool = True
) -> list[dict[str, Any]]:
    """Turn retrievals into rows of the record schema (``osustat.record_row.RecordRow``, as dicts).

    Each outcome gives ``hit@k`` for every k in `ks` and ``recall``; with `near_far`, also
    ``recall_near`` and ``recall_far`` -- only when the query has evidence in that range
    (a row is omitted otherwise, since records hold no NaN; count them with
    ``metric == 'recall_near'``).

    Examples
    --------
    >>> from osustat.retrieval.metrics import QueryOutcome, outcomes_to_records
    >>> o = QueryOutcome("syn", "e1", "q1", "OSU-Mem", 256, 0, (3, 7), (3, 7, 100), 120, 30.0,
    ...                  "T+E+")
    >>> [(r["metric"], r["value"]) for r in outcomes_to_records([o])]
    [('hit@2', 1.0), ('recall', 0.6666666666666666), ('recall_near', 0.0), ('recall_far', 1.0)]
    """
    rows: list[dict[str, Any]] = []
    for o in outcomes:
        if any(k < 1 for k in ks):
            raise ValueError(f"every k of `ks` must be >= 1; got {ks}.")
        found, n = _overlap(o.retrieved, o.evidence)
        if n == 0:
            raise ValueError(
                f"query {o.episode_id}/{o.query_id} has no evidence: hit@k and recall are "
                "undefined."
            )
        rows.extend(_row(o, metric, value) for metric, value in count_metrics(found, n, ks))
        if near_far:
            near, far = near_far_recall(o.retrieved, o.evidence, o.time)
            if near == near:
                rows.append(_row(o, "recall_near", near))
            if far == far:
                rows.append(_row(o, "recall_far", far))
    return rows


def _row(o: QueryOutcome, metric: str, value: float) -> dict[str, Any]:
    return o.row(o.cell, metric, value)._asdict()
