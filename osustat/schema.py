"""The long-format record schema (DESIGN.md): columns, the typed row, validation.

One row per (benchmark, episode_id, query_id, method, budget, seed, metric):

============  ========  ==============================================================
column        required  meaning
============  ========  ==============================================================
episode_id    yes       the trajectory (episode) the query is asked about
query_id      yes       the query, unique within its episode
method        yes       the retriever's name
budget        yes       token budget B (integer)
metric        yes       ``hit@k`` (1 if at least k evidence steps were retrieved, else 0;
                        the paper's Hit@2 is ``hit@2`` -- *not* TREC Success@k, which is
                        "at least one relevant item in the top k"), ``recall`` (fraction
                        of evidence steps retrieved), or any other finite metric
value         yes       the metric's value, within the metric's entry of
                        ``osustat.metrics.METRICS``: 0/1 for ``hit@k``, in [0, 1] for
                        the recalls, >= 0 for ``tokens``; other metrics only finite
benchmark     no        data set name; default ``'default'``
seed          no        run seed (integer); default 0
cell          no        the query's evidence cell (``T+E+``, ``T+E-``, ``T-E+``, ``T-E-``);
                        a property of the query, so it must agree across all its rows
============  ========  ==============================================================

Nothing is dropped silently: every inconsistency raises an error that lists the offending
rows (by DataFrame index) or ids.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._validation import list_some, query_key
from .cells import Cell
from .metrics import METRICS
from .record_row import KEY_COLUMNS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS

__all__ = [
    "ValidatedRecords",
    "validate_records",
]


class ValidatedRecords(pd.DataFrame):
    """A records table that :func:`validate_records` has checked and normalized.

    :func:`paired` uses it as it is, without checking it again. Anything derived from it
    (a row selection, a new column) is a plain DataFrame and is checked again when used;
    mutating it in place voids the guarantee. :meth:`select_rows` selects rows and keeps it
    validated.
    """

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def select_rows(self, mask: Any) -> ValidatedRecords:
        """The rows where boolean `mask` is True, still a ``ValidatedRecords``.

        Every check of :func:`validate_records` holds for any subset of the rows of a table
        that passed it (types, values, cells, unique keys), so the selection needs none
        again: the cheap path for callers that pair one comparison of a large table at a
        time (the audit, :func:`osustat.seeds.per_seed_values`).

        >>> import pandas as pd
        >>> from osustat.schema import validate_records
        >>> df = validate_records(pd.DataFrame({"episode_id": "e1", "query_id": ["q1", "q2"],
        ...     "method": "osu", "budget": 256, "metric": "hit@2", "value": [1, 0]}))
        >>> sub = df.select_rows(df["query_id"] == "q2")
        >>> type(sub).__name__, sub["query_id"].tolist()
        ('ValidatedRecords', ['q2'])
        """
        return ValidatedRecords(self[np.asarray(mask, dtype=bool)])

    def rows_by(self, column: str) -> dict[Any, np.ndarray]:
        """The positions of the rows of each value of `column`, ascending (one pass over the
        column): :meth:`take_rows` of a few values' positions selects their rows without a
        comparison over the whole table per selection.

        >>> import pandas as pd
        >>> from osustat.schema import validate_records
        >>> df = validate_records(pd.DataFrame({"episode_id": "e1", "query_id": ["q1", "q2"] * 2,
        ...     "method": ["a", "b", "b", "a"], "budget": 256, "metric": "hit@2", "value": 1}))
        >>> {m: pos.tolist() for m, pos in df.rows_by("method").items()}
        {'a': [0, 3], 'b': [1, 2]}
        """
        codes, names = pd.factorize(self[column])
        order = np.argsort(codes, kind="stable")
        ends = np.cumsum(np.bincount(codes[codes >= 0], minlength=len(names)))
        return dict(zip(names.tolist(), np.split(order[codes[order] >= 0], ends[:-1]), strict=True))

    def take_rows(self, positions: Any) -> ValidatedRecords:
        """The rows at `positions` (in the order given), still a ``ValidatedRecords`` (a
        subset of validated rows, as :meth:`select_rows`)."""
        return ValidatedRecords(self.iloc[np.asarray(positions, dtype=np.intp)])


def _rows(df: pd.DataFrame, mask: Any) -> str:
    """The rows of `mask` by index label (a loader's index is the file's lines); when the
    index repeats labels (``pd.concat`` of frames), by 0-based position, and said so."""
    mask = np.asarray(mask, dtype=bool)
    if df.index.is_unique:
        return list_some(df.index[mask].tolist())
    labels = list_some(df.index[mask].tolist())
    return f"{list_some(np.flatnonzero(mask).tolist())} (0-based positions; index labels {labels})"


def validate_records(records: pd.DataFrame) -> ValidatedRecords:
    """Check a records table against the schema and return a normalized copy.

    Parameters
    ----------
    records : pandas.DataFrame
        Long-format records (see the module docstring for the columns).

    Returns
    -------
    ValidatedRecords
        A DataFrame (copy) with the optional columns filled with their documented defaults,
        ``budget`` and ``seed`` as int64, ``value`` as float64, ``metric`` lower-cased, ids
        as str and ``cell`` as canonical labels (or None). Given a ``ValidatedRecords``, it
        is returned as it is (that is what lets :func:`paired` skip the checks).

    Raises
    ------
    TypeError
        `records` is not a DataFrame, or `value`/`budget`/`seed` are not numeric.
    ValueError
        Missing columns (listing missing and found), NaN or infinite values, non-0/1 hit
        values, recall outside [0, 1], non-integer or non-positive budgets, ids that mix
        text and numbers (``1`` and ``"1"``), unknown cell labels, a query with conflicting
        cells, or duplicate record keys -- each naming the rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.schema import validate_records
    >>> df = pd.DataFrame({"episode_id": ["e1"], "query_id": ["q1"], "method": ["osu"],
    ...                    "budget": [256], "metric": ["Hit@2"], "value": [1]})
    >>> validate_records(df).loc[0, ["metric", "seed", "benchmark"]].astype(str).tolist()
    ['hit@2', '0', 'default']
    """
    if isinstance(records, ValidatedRecords):
        return records
    if not isinstance(records, pd.DataFrame):
        raise TypeError(f"`records` must be a pandas DataFrame; got {type(records).__name__}.")
    missing = [c for c in REQUIRED_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(
            f"`records` is missing required columns {missing}; found columns "
            f"{list(map(str, records.columns))}. Required: {list(REQUIRED_COLUMNS)}."
        )
    df = records.copy()
    for col, default in OPTIONAL_COLUMNS.items():
        if col not in df.columns:
            df[col] = default

    for col in ("value", "budget", "seed"):
        numeric = pd.to_numeric(df[col], errors="coerce")
        bad = numeric.isna() & df[col].notna()
        if bad.any():
            raise TypeError(
                f"`{col}` must be numeric; non-numeric values in rows {_rows(df, bad)}."
            )
        df[col] = numeric
    nonfinite = ~np.isfinite(df["value"].to_numpy(dtype=float))
    if nonfinite.any():
        raise ValueError(f"`value` has NaN or infinite entries in rows {_rows(df, nonfinite)}.")
    for col in ("budget", "seed"):
        x = df[col].to_numpy(dtype=float)
        bad = ~np.isfinite(x) | (x != np.round(x))
        if bad.any():
            raise ValueError(f"`{col}` must hold integers; bad values in rows {_rows(df, bad)}.")
        df[col] = x.astype(np.int64)
    nonpositive = (df["budget"] <= 0).to_numpy()
    if nonpositive.any():
        raise ValueError(
            f"`budget` must be positive (a token budget); values <= 0 in rows "
            f"{_rows(df, nonpositive)}."
        )
    for col in ("benchmark", "episode_id", "query_id", "method", "metric"):
        empty = df[col].isna()
        if empty.any():
            raise ValueError(f"`{col}` has missing values in rows {_rows(df, empty)}.")
        _refuse_mixed_types(df, col)
        df[col] = df[col].astype(str)
    df["metric"] = _normalized_metrics(df["metric"])

    _check_metric_values(df)

    df["cell"] = _normalize_cells(df)
    dup = df.duplicated(list(KEY_COLUMNS), keep=False)
    if dup.any():
        raise ValueError(
            f"duplicate record keys {list(KEY_COLUMNS)} in rows {_rows(df, dup)}; each "
            "(benchmark, episode, query, method, budget, seed, metric) must appear once."
        )
    return ValidatedRecords(df)


def _refuse_mixed_types(df: pd.DataFrame, col: str) -> None:
    """Ids are compared as text: ``1`` and ``"1"`` would silently become one id, so a
    column that mixes text with numbers is refused, naming the rows of the rarer kind."""
    if df[col].dtype != object:
        return
    text = df[col].map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    if text.all() or not text.any():
        return
    rare = ~text if text.sum() >= (~text).sum() else text
    kind = "non-text" if text.sum() >= (~text).sum() else "text"
    raise ValueError(
        f"`{col}` mixes text and numbers (1 and '1' would become one id); {kind} values in "
        f"rows {_rows(df, rare)}. Use one type for the whole column."
    )


def _normalized_metrics(metric: pd.Series) -> pd.Series:
    """Metric names without whitespace and lower-cased; each distinct name is normalized once
    (a records table repeats a handful of names on every row)."""
    codes, names = pd.factorize(metric)
    normal = names.str.replace(r"\s+", "", regex=True).str.lower()
    return pd.Series(normal.take(codes), index=metric.index, dtype=metric.dtype)


def _check_metric_values(df: pd.DataFrame) -> None:
    """Every value within its metric's registry entry (:data:`osustat.metrics.METRICS`)."""
    values = df["value"].to_numpy(dtype=np.float64)
    codes, names = pd.factorize(df["metric"])
    for spec in METRICS:
        rows = np.asarray(names.str.fullmatch(spec.pattern), dtype=bool)[codes]
        if not rows.any():
            continue
        if spec.binary:
            bad = rows & (values != 0.0) & (values != 1.0)
            if bad.any():
                raise ValueError(
                    f"{spec.name} values must be 0 or 1 ({spec.meaning}); other values in "
                    f"rows {_rows(df, bad)}."
                )
            continue
        if spec.low is None and spec.high is None:
            continue
        low = -np.inf if spec.low is None else spec.low
        high = np.inf if spec.high is None else spec.high
        bad = rows & ((values < low) | (values > high))
        if bad.any():
            span = f"[{low:g}, {high:g}]" if spec.high is not None else f">= {low:g}"
            raise ValueError(
                f"{spec.name} values must lie in {span}; bad values in rows {_rows(df, bad)}."
            )


def _normalize_cells(df: pd.DataFrame) -> pd.Series:
    """Canonical cell labels (NaN where missing); unknown labels and a query with two
    different cells are errors that name the rows or queries."""
    raw = df["cell"]
    # parse each distinct label once (records repeat a query's cell on every row)
    codes, uniques = pd.factorize(raw)
    canonical: list[str | None] = []
    for value in uniques.tolist():
        try:
            canonical.append(Cell.parse(value).value)
        except ValueError:
            canonical.append(None)
    present = codes >= 0
    known = np.array([c is not None for c in canonical] + [True], dtype=bool)
    bad = ~known[codes] & present  # codes == -1 (missing) index the final True
    if bad.any():
        raise ValueError(
            f"`cell` has unknown labels in rows {_rows(df, bad)}; expected one of "
            f"{[c.value for c in Cell]}."
        )
    labels = np.array([*canonical, np.nan], dtype=object)[codes]  # missing: NaN, as pandas
    cells = pd.Series(labels, index=df.index, dtype=object)
    if present.any():
        _refuse_conflicting_cells(df, labels, present)
    return cells


def _refuse_conflicting_cells(df: pd.DataFrame, labels: np.ndarray, present: np.ndarray) -> None:
    """A query's rows (per benchmark) that carry a cell must all carry the same one."""
    # integer codes of (benchmark, episode, query) and of the canonical label: the check is
    # a min/max per query over integers, not a grouping of a million strings
    key = np.zeros(len(df), dtype=np.int64)
    for col in ("benchmark", "episode_id", "query_id"):
        part, names = pd.factorize(df[col])
        key, _ = pd.factorize(key * len(names) + part)  # below len(df): never overflows
    cell_code, _ = pd.factorize(labels)
    by_query = pd.DataFrame({"k": key[present], "c": cell_code[present]}).groupby("k")["c"]
    conflicting = by_query.min() != by_query.max()
    if conflicting.any():
        first = pd.Series(np.flatnonzero(present), index=key[present]).groupby(level=0).first()
        rows = first[conflicting[conflicting].index].to_numpy()
        ids = sorted(
            zip(
                df["benchmark"].to_numpy()[rows],
                df["episode_id"].to_numpy()[rows],
                df["query_id"].to_numpy()[rows],
                strict=True,
            )
        )
        raise ValueError(
            "a query's cell is a property of its evidence and must be the same on all its "
            f"rows; conflicting cells for queries {list_some(query_key(e, q) for _, e, q in ids)}."
        )
