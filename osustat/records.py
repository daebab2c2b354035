"""The long-format record schema (DESIGN.md) and the pairing of two methods' records.

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
value         yes       the metric's value; 0/1 for ``hit@k``, in [0, 1] for ``recall``
benchmark     no        data set name; default ``'default'``
seed          no        run seed (integer); default 0
cell          no        the query's evidence cell (``T+E+``, ``T+E-``, ``T-E+``, ``T-E-``);
                        a property of the query, so it must agree across all its rows
============  ========  ==============================================================

Nothing is dropped silently: every inconsistency raises an error that lists the offending
rows (by DataFrame index) or ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import list_some
from .cells import Cell

__all__ = [
    "KEY_COLUMNS",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "PairedRecords",
    "paired",
    "validate_records",
]

REQUIRED_COLUMNS = ("episode_id", "query_id", "method", "budget", "metric", "value")
OPTIONAL_COLUMNS = {"benchmark": "default", "seed": 0, "cell": None}
KEY_COLUMNS = ("benchmark", "episode_id", "query_id", "method", "budget", "seed", "metric")
_HIT = re.compile(r"^hit@(\d+)$")


def _rows(df: pd.DataFrame, mask: Any) -> str:
    return list_some(df.index[np.asarray(mask, dtype=bool)].tolist())


def validate_records(records: pd.DataFrame) -> pd.DataFrame:
    """Check a records table against the schema and return a normalized copy.

    Parameters
    ----------
    records : pandas.DataFrame
        Long-format records (see the module docstring for the columns).

    Returns
    -------
    pandas.DataFrame
        A copy with the optional columns filled with their documented defaults, ``budget``
        and ``seed`` as int64, ``value`` as float64, ``metric`` lower-cased, ids as str and
        ``cell`` as canonical labels (or None).

    Raises
    ------
    TypeError
        `records` is not a DataFrame, or `value`/`budget`/`seed` are not numeric.
    ValueError
        Missing columns (listing missing and found), NaN or infinite values, non-0/1 hit
        values, recall outside [0, 1], non-integer budgets, unknown cell labels, a query with
        conflicting cells, or duplicate record keys -- each naming the rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.records import validate_records
    >>> df = pd.DataFrame({"episode_id": ["e1"], "query_id": ["q1"], "method": ["osu"],
    ...                    "budget": [256], "metric": ["Hit@2"], "value": [1]})
    >>> validate_records(df).loc[0, ["metric", "seed", "benchmark"]].astype(str).tolist()
    ['hit@2', '0', 'default']
    """
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
    for col in ("benchmark", "episode_id", "query_id", "method", "metric"):
        empty = df[col].isna()
        if empty.any():
            raise ValueError(f"`{col}` has missing values in rows {_rows(df, empty)}.")
        df[col] = df[col].astype(str)
    df["metric"] = df["metric"].str.replace(r"\s+", "", regex=True).str.lower()

    hits = df["metric"].str.match(_HIT.pattern).to_numpy()
    bad = hits & ~df["value"].isin([0.0, 1.0]).to_numpy()
    if bad.any():
        raise ValueError(
            "hit@k values must be 0 or 1 (at least k evidence steps retrieved or not); "
            f"other values in rows {_rows(df, bad)}."
        )
    rec = (df["metric"] == "recall").to_numpy()
    bad = rec & ~df["value"].between(0.0, 1.0).to_numpy()
    if bad.any():
        raise ValueError(f"recall values must lie in [0, 1]; bad values in rows {_rows(df, bad)}.")

    df["cell"] = _normalize_cells(df)
    dup = df.duplicated(list(KEY_COLUMNS), keep=False)
    if dup.any():
        raise ValueError(
            f"duplicate record keys {list(KEY_COLUMNS)} in rows {_rows(df, dup)}; each "
            "(benchmark, episode, query, method, budget, seed, metric) must appear once."
        )
    return df


def _normalize_cells(df: pd.DataFrame) -> pd.Series:
    raw = df["cell"]
    present = raw.notna()
    # parse each distinct label once (records repeat a query's cell on every row)
    canonical: dict[Any, str | None] = {}
    for value in pd.unique(raw[present]):
        try:
            canonical[value] = Cell.parse(value).value
        except ValueError:
            canonical[value] = None
    parsed = raw[present].map(canonical)
    bad = np.zeros(len(df), dtype=bool)
    bad[np.flatnonzero(present.to_numpy())[parsed.isna().to_numpy()]] = True
    if bad.any():
        raise ValueError(
            f"`cell` has unknown labels in rows {_rows(df, bad)}; expected one of "
            f"{[c.value for c in Cell]}."
        )
    labels = pd.Series(None, index=df.index, dtype=object)
    labels[present] = parsed
    cells = labels
    if present.any():
        keyed = pd.DataFrame(
            {"b": df["benchmark"], "e": df["episode_id"], "q": df["query_id"], "c": cells}
        )[present.to_numpy()]
        counts = keyed.groupby(["b", "e", "q"])["c"].nunique()
        conflicting = counts[counts > 1]
        if len(conflicting):
            ids = [f"{e}/{q}" for _, e, q in conflicting.index]
            raise ValueError(
                "a query's cell is a property of its evidence and must be the same on all its "
                f"rows; conflicting cells for queries {list_some(ids)}."
            )
    return cells


@dataclass(frozen=True, kw_only=True, eq=False)
class PairedRecords:
    """Two methods' values aligned on the same units.

    Attributes
    ----------
    treatment, baseline : numpy.ndarray
        Per-unit values (averaged over seeds, and over queries for ``unit='episode'``).
    differences : numpy.ndarray
        ``treatment - baseline``.
    ids : numpy.ndarray of str
        Unit ids: ``'episode/query'`` for queries, the episode id for episodes.
    episode_ids : numpy.ndarray of str
        The episode of each unit (clusters for a cluster bootstrap).
    cells : numpy.ndarray of Cell or None
        Cell per unit for ``unit='query'`` when the records carry cells; None otherwise
        (episodes mix cells).
    unit : str
    metric : str
    budget : int
    n_seeds : int
        Seeds averaged per unit (1 when a single seed was selected or present).
    treatment_name, baseline_name : str
        The two methods' names (``treatment``/``baseline`` hold their values).
    """

    treatment: NDArray[np.float64]
    baseline: NDArray[np.float64]
    differences: NDArray[np.float64]
    ids: NDArray[np.str_]
    episode_ids: NDArray[np.str_]
    cells: NDArray[np.object_] | None
    unit: str
    metric: str
    budget: int
    n_seeds: int
    treatment_name: str = ""
    baseline_name: str = ""

    @property
    def n(self) -> int:
        return int(self.differences.size)


def _choose(df: pd.DataFrame, column: str, value: Any, what: str) -> pd.DataFrame:
    known = sorted(df[column].unique().tolist())
    if value is None:
        if len(known) > 1:
            raise ValueError(f"the records hold several {what}s {known}; pass `{column}=`.")
        return df
    chosen = df[df[column] == value]
    if chosen.empty:
        raise ValueError(f"{what} {value!r} is not in the records; known {what}s: {known}.")
    return chosen


def paired(
    records: pd.DataFrame,
    treatment: str,
    baseline: str,
    *,
    metric: str,
    budget: int,
    unit: str = "query",
    seed: int | None = None,
    benchmark: str | None = None,
) -> PairedRecords:
    """Align two methods' records on the same queries (or episodes).

    Parameters
    ----------
    records : pandas.DataFrame
        Long-format records; validated with :func:`validate_records`.
    treatment, baseline : str
        Method names.
    metric : str
        e.g. ``'hit@2'`` or ``'recall'`` (case-insensitive).
    budget : int
    unit : {'query', 'episode'}
        ``'episode'`` averages each method's values within an episode first (the paper's
        episode-level tests, Table 10).
    seed : int, optional
        Use one seed. By default every seed is used and each query's values are averaged
        across seeds before pairing (Appendix F: per-query averaging, not pooling seeds as
        independent queries).
    benchmark : str, optional
        Required when the records hold several benchmarks.

    Returns
    -------
    PairedRecords

    Raises
    ------
    ValueError
        Unknown method, metric, budget, seed or benchmark (listing the known ones), or a
        query present for one method and not the other (listing them: never a silent
        inner join).

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.records import paired
    >>> df = pd.DataFrame({"episode_id": ["e1"] * 4, "query_id": ["q1", "q2"] * 2,
    ...                    "method": ["osu", "osu", "flat", "flat"], "budget": 256,
    ...                    "metric": "hit@2", "value": [1, 1, 0, 1],
    ...                    "cell": ["T+E+", "T-E-"] * 2})
    >>> p = paired(df, "osu", "flat", metric="hit@2", budget=256)
    >>> p.differences.tolist(), [str(c) for c in p.cells]
    ([1.0, 0.0], ['T+E+', 'T-E-'])
    """
    if unit not in ("query", "episode"):
        raise ValueError(f"`unit` must be one of {{'query', 'episode'}}; got {unit!r}.")
    df = validate_records(records)
    df = _choose(df, "benchmark", benchmark, "benchmark")
    methods = sorted(df["method"].unique().tolist())
    for name, m in (("treatment", treatment), ("baseline", baseline)):
        if m not in methods:
            raise ValueError(
                f"`{name}` method {m!r} is not in the records; known methods: {methods}."
            )
    if treatment == baseline:
        raise ValueError("`treatment` and `baseline` must be different methods.")
    df = _choose(df, "metric", "".join(str(metric).split()).lower(), "metric")
    if budget is None or not float(budget).is_integer():
        raise ValueError(
            f"`budget` must be an integer budget of the records; got {budget!r}; known budgets: "
            f"{sorted(df['budget'].unique().tolist())}."
        )
    df = _choose(df, "budget", int(budget), "budget")
    if seed is not None:
        df = _choose(df, "seed", int(seed), "seed")

    sides = {}
    for name, m in (("treatment", treatment), ("baseline", baseline)):
        part = df[df["method"] == m]
        if part.empty:
            raise ValueError(
                f"`{name}` method {m!r} has no records for metric {metric!r} at budget {budget}."
            )
        sides[name] = part.groupby(["episode_id", "query_id"], sort=True).agg(
            value=("value", "mean"),
            n_seeds=("seed", "nunique"),
            seeds=("seed", lambda s: tuple(sorted(s))),
            cell=("cell", "first"),
        )
    t, b = sides["treatment"], sides["baseline"]
    only_t = t.index.difference(b.index)
    only_b = b.index.difference(t.index)
    if len(only_t) or len(only_b):
        parts = []
        if len(only_t):
            parts.append(
                f"only {treatment!r} has {len(only_t)}: {list_some(f'{e}/{q}' for e, q in only_t)}"
            )
        if len(only_b):
            parts.append(
                f"only {baseline!r} has {len(only_b)}: {list_some(f'{e}/{q}' for e, q in only_b)}"
            )
        raise ValueError("unpaired queries (never silently dropped); " + "; ".join(parts) + ".")
    b = b.loc[t.index]
    mismatch = t.index[(t["seeds"] != b["seeds"]).to_numpy()]
    if len(mismatch):
        shown = list_some(
            (
                f"{e}/{q} ({list(t.loc[(e, q), 'seeds'])} vs {list(b.loc[(e, q), 'seeds'])})"
                for e, q in mismatch
            ),
            quote=False,
        )
        raise ValueError(
            "the two methods were run with different seeds for some queries, so their "
            f"seed averages are not comparable; {len(mismatch)} queries: {shown}. Pass `seed=` "
            "or complete the runs."
        )
    n_seeds = int(t["n_seeds"].max())
    if unit == "episode":
        tv = t["value"].groupby(level="episode_id").mean()
        bv = b["value"].groupby(level="episode_id").mean().loc[tv.index]
        ids = tv.index.to_numpy(dtype=str)
        episodes = ids
        cells = None
    else:
        tv, bv = t["value"], b["value"]
        ids = np.array([f"{e}/{q}" for e, q in t.index], dtype=str)
        episodes = t.index.get_level_values("episode_id").to_numpy(dtype=str)
        cell_labels = t["cell"].where(t["cell"].notna(), b["cell"])
        if cell_labels.isna().all():
            cells = None
        elif cell_labels.isna().any():
            lacking = [f"{e}/{q}" for (e, q), v in cell_labels.items() if v is None or v != v]
            raise ValueError(
                f"`cell` is missing for queries {list_some(lacking)} while other queries have one."
            )
        else:
            cells = np.array([Cell.parse(c) for c in cell_labels], dtype=object)
    tv_arr = tv.to_numpy(dtype=np.float64)
    bv_arr = bv.to_numpy(dtype=np.float64)
    return PairedRecords(
        treatment=tv_arr,
        baseline=bv_arr,
        differences=tv_arr - bv_arr,
        ids=ids,
        episode_ids=episodes,
        cells=cells,
        unit=unit,
        metric=str(metric).strip().lower(),
        budget=int(budget),
        n_seeds=n_seeds,
        treatment_name=str(treatment),
        baseline_name=str(baseline),
    )
