"""The record schema's row: its columns and the typed key and row every producer builds.

Standard library only, so that the producers of records (``retrieval``, the readers in
``osustat.io``) load without pandas; the validation of a records table is
:mod:`osustat.schema`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

__all__ = ["KEY_COLUMNS", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "QueryKey", "RecordRow"]

REQUIRED_COLUMNS = ("episode_id", "query_id", "method", "budget", "metric", "value")
OPTIONAL_COLUMNS = {"benchmark": "default", "seed": 0, "cell": None}


@dataclass(frozen=True)
class QueryKey:
    """Where one retrieval stands in the records: a record's key without its metric.

    One method's retrieval of one query at one budget and seed; its records are one row per
    metric (:meth:`row`). The fields are the first columns of a records table, in order.
    ``retrieval.metrics.QueryOutcome`` extends it with what was retrieved.
    """

    benchmark: str
    episode_id: str
    query_id: str
    method: str
    budget: int
    seed: int

    def row(self, cell: str | None, metric: str, value: float) -> RecordRow:
        """The record of `metric` for this retrieval."""
        return RecordRow(
            self.benchmark,
            self.episode_id,
            self.query_id,
            self.method,
            self.budget,
            self.seed,
            cell,
            metric,
            value,
        )


@dataclass(frozen=True)
class RecordRow(QueryKey):
    """One row of the record schema, as every producer of records builds it.

    The field order is the column order of a records table. ``row._asdict()`` is the
    plain dict for ``pandas.DataFrame(rows)``; ``RecordRow._fields`` the column names.
    """

    cell: str | None
    metric: str
    value: float

    _fields: ClassVar[tuple[str, ...]]

    def _asdict(self) -> dict[str, Any]:
        """The row as a dict, in column order."""
        return dict(self.__dict__)


RecordRow._fields = tuple(f.name for f in fields(RecordRow))
KEY_COLUMNS = (*(f.name for f in fields(QueryKey)), "metric")
