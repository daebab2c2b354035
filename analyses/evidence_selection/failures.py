"""What went wrong in a selector's replies: parse failures, invented events, position bias.

A real model's output fails in ways the recall scores hide; :func:`failure_modes` counts them per
retrieval method from the :class:`~analyses.evidence_selection.run.SelectionOutcome` of a run
(every call counted once, none dropped):

- **parse failures** -- replies from which no event could be read (non-JSON for the id-list
  variant, an empty or marker-less reply, ...), scored as nothing listed;
- **invented events** -- listed but not in the context: for the id-list variant, ids that are not
  positions of the context; for free text, events whose largest cosine to any context step is at
  or below `threshold` (default .5, the hard-recall threshold: below it the event paraphrases no
  retrieved step). Counted only where the context is non-empty;
- **position bias** -- where in the context the listed items point (the id, or for free text the
  best-matching step): the mean listed position against the mean of a uniform pick, and the
  share of items at position 1 against the uniform share ``1/n``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from osustat.analyses.evidence_selection.run import SelectionOutcome
from osustat.analyses.evidence_selection.scoring import check_threshold

__all__ = ["failure_modes", "position_counts"]

_COUNTS = (
    *("calls", "parse_failures", "empty_context", "listed", "invented", "invalid_ids"),
    *("positions", "position_sum", "uniform_sum", "first", "uniform_first"),
)


def _outcomes_iv(outcomes: Sequence[SelectionOutcome]) -> list[SelectionOutcome]:
    if not isinstance(outcomes, Sequence) or not outcomes:
        raise ValueError("`outcomes` must be a non-empty sequence of SelectionOutcome.")
    bad = [i for i, o in enumerate(outcomes) if not isinstance(o, SelectionOutcome)]
    if bad:
        raise TypeError(f"`outcomes` must hold SelectionOutcome; other objects at {bad[:10]}.")
    return list(outcomes)


def failure_modes(outcomes: Sequence[SelectionOutcome], *, threshold: float = 0.5) -> pd.DataFrame:
    """One row per retrieval method (in first-seen order) of counted failure modes.

    Columns: ``method``, ``calls`` (query x seed), ``parse_failures``, ``empty_context``,
    ``listed`` (events listed with a non-empty context), ``invented`` (events, or ids, not in
    the context), ``invented_share`` (of ``listed`` plus invalid ids), ``positions`` (listed
    items with a position), ``mean_position``, ``uniform_mean_position`` (expected under a
    uniform pick from each context), ``first_share`` and ``uniform_first_share``.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.run import SelectionOutcome
    >>> from osustat.analyses.evidence_selection.failures import failure_modes
    >>> ok = SelectionOutcome("e", "q1", "m", 0, None, ("a",), (0.9,), positions=(1,),
    ...                       grounding=(0.95,), n_context=4)
    >>> bad = SelectionOutcome("e", "q2", "m", 0, None, (), (0.0,), failure="not JSON",
    ...                        n_context=4)
    >>> made_up = SelectionOutcome("e", "q3", "m", 0, None, ("x",), (0.1,), positions=(3,),
    ...                            grounding=(0.2,), n_context=4)
    >>> r = failure_modes([ok, bad, made_up]).iloc[0]
    >>> int(r.calls), int(r.parse_failures), int(r.listed), int(r.invented), float(r.mean_position)
    (3, 1, 2, 1, 2.0)
    """
    tau = check_threshold(threshold)
    rows: dict[str, dict[str, float]] = {}
    for o in _outcomes_iv(outcomes):
        r = rows.setdefault(o.method, dict.fromkeys(_COUNTS, 0.0))
        r["calls"] += 1
        r["parse_failures"] += o.failure is not None
        if o.n_context == 0:
            r["empty_context"] += 1
            continue
        r["listed"] += len(o.listed)
        r["invented"] += sum(g <= tau for g in o.grounding) + o.invalid_ids
        r["invalid_ids"] += o.invalid_ids
        n = len(o.positions)
        r["positions"] += n
        r["position_sum"] += sum(o.positions)
        r["uniform_sum"] += n * (o.n_context + 1) / 2
        r["first"] += sum(p == 1 for p in o.positions)
        r["uniform_first"] += n / o.n_context
    out = []
    for method, r in rows.items():
        n = r["positions"]
        out.append(
            {
                "method": method,
                "calls": int(r["calls"]),
                "parse_failures": int(r["parse_failures"]),
                "empty_context": int(r["empty_context"]),
                "listed": int(r["listed"]),
                "invented": int(r["invented"]),
                "invented_share": _ratio(r["invented"], r["listed"] + r["invalid_ids"]),
                "positions": int(n),
                "mean_position": _ratio(r["position_sum"], n),
                "uniform_mean_position": _ratio(r["uniform_sum"], n),
                "first_share": _ratio(r["first"], n),
                "uniform_first_share": _ratio(r["uniform_first"], n),
            }
        )
    return pd.DataFrame(out)


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den else float("nan")


def position_counts(outcomes: Sequence[SelectionOutcome]) -> pd.DataFrame:
    """Listed positions per method: ``method``, ``position`` (1-based), ``count``, ``share``.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.run import SelectionOutcome
    >>> from osustat.analyses.evidence_selection.failures import position_counts
    >>> o = SelectionOutcome("e", "q", "m", 0, None, ("a", "b"), (0.5,), positions=(1, 1, 3),
    ...                      n_context=5)
    >>> position_counts([o]).values.tolist()
    [['m', 1, 2, 0.6666666666666666], ['m', 3, 1, 0.3333333333333333]]
    """
    rows = [(o.method, p) for o in _outcomes_iv(outcomes) for p in o.positions]
    if not rows:
        return pd.DataFrame(columns=["method", "position", "count", "share"])
    frame = pd.DataFrame(rows, columns=["method", "position"])
    counts = frame.groupby(["method", "position"], sort=False).size().rename("count")
    counts = counts.reset_index().sort_values(["method", "position"], kind="stable")
    totals = counts.groupby("method")["count"].transform("sum")
    counts["share"] = counts["count"] / totals
    counts["count"] = counts["count"].astype(np.int64)
    return counts.reset_index(drop=True)
