"""The pairing of two methods' records (the schema itself is in :mod:`osustat.schema`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import list_some, query_key
from .cells import as_cells
from .metrics import normalize_metric
from .schema import (
    validate_records,
)

__all__ = ["PairedRecords", "paired"]


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
    n_queries : int or None
        The queries paired (at ``unit='episode'`` the units average them; else ``n``); None
        where not known.
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
    n_queries: int | None = None  # None: not known (a hand-built PairedRecords)

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
    records: pd.DataFrame | str | Path,
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
    records : pandas.DataFrame or path
        Long-format records, or the path of a records file (read with
        :func:`osustat.load_records`, as :func:`osustat.analyze` reads one); validated with
        :func:`validate_records`.
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
    if isinstance(records, str | Path):
        from osustat.io.reading import load_records  # the reader analyze() uses

        records = load_records(records)
    df = _selection(validate_records(records), treatment, baseline, metric, budget, seed, benchmark)
    t, b, n_seeds = _sides(df, treatment, baseline, metric, budget)
    tv, bv, ids, episodes, cells = _units(
        t, b, unit, f"{treatment!r} and {baseline!r}", metric, budget
    )
    where = f"{treatment!r} vs {baseline!r} on {metric} at budget {budget}"
    diff = _differences(tv, bv, ids, unit, where, t.index)
    return PairedRecords(
        treatment=tv,
        baseline=bv,
        differences=diff,
        ids=ids,
        episode_ids=episodes,
        cells=cells,
        unit=unit,
        metric=str(metric).strip().lower(),
        budget=int(budget),
        n_seeds=n_seeds,
        treatment_name=str(treatment),
        baseline_name=str(baseline),
        n_queries=len(t),
    )


def _selection(
    df: pd.DataFrame,
    treatment: str,
    baseline: str,
    metric: str,
    budget: int,
    seed: int | None,
    benchmark: str | None,
) -> pd.DataFrame:
    """The rows of the two methods at the metric, budget (and seed, benchmark) chosen, after
    checking that each exists (listing the known ones when not)."""
    df = _choose(df, "benchmark", benchmark, "benchmark")
    methods = sorted(df["method"].unique().tolist())
    for name, m in (("treatment", treatment), ("baseline", baseline)):
        if m not in methods:
            raise ValueError(
                f"`{name}` method {m!r} is not in the records; known methods: {methods}."
            )
    if treatment == baseline:
        raise ValueError("`treatment` and `baseline` must be different methods.")
    df = _choose(df, "metric", normalize_metric(metric), "metric")
    if budget is None or not float(budget).is_integer():
        raise ValueError(
            f"`budget` must be an integer budget of the records; got {budget!r}; known budgets: "
            f"{sorted(df['budget'].unique().tolist())}."
        )
    df = _choose(df, "budget", int(budget), "budget")
    if seed is not None:
        df = _choose(df, "seed", int(seed), "seed")
    return df


#: A method's per-query aggregates over its seeds (`paired`).
PER_QUERY: dict[str, tuple[str, str]] = {
    "value": ("value", "mean"),
    "n_seeds": ("seed", "nunique"),
    "cell": ("cell", "first"),
}


def _sides(
    df: pd.DataFrame, treatment: str, baseline: str, metric: str, budget: int
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Each method's per-query mean over seeds (and seed count and cell), on the same queries
    in the same order, and the most seeds any query has; unpaired queries and queries run
    with different seeds by the two methods are errors that list them."""
    # With one seed in the selection every query's seeds are that one: the per-query seed
    # tuples (a Python call per query) are needed only to compare several seeds.
    one_seed = df["seed"].nunique() <= 1
    aggregates: dict[str, Any] = dict(PER_QUERY)
    if not one_seed:
        aggregates["seeds"] = ("seed", lambda s: tuple(sorted(s)))
    sides = {}
    for name, m in (("treatment", treatment), ("baseline", baseline)):
        part = df[df["method"] == m]
        if part.empty:
            raise ValueError(
                f"`{name}` method {m!r} has no records for metric {metric!r} at budget {budget}."
            )
        sides[name] = _one_seed_side(part) if one_seed else _grouped(part, aggregates)
    t, b = sides["treatment"], sides["baseline"]
    only_t = t.index.difference(b.index)
    only_b = b.index.difference(t.index)
    if len(only_t) or len(only_b):
        parts = [
            f"only {who!r} has {len(only)}: {list_some(query_key(e, q) for e, q in only)}"
            for who, only in ((treatment, only_t), (baseline, only_b))
            if len(only)
        ]
        raise ValueError(
            f"unpaired queries of {treatment!r} vs {baseline!r} ({metric!r} at budget "
            f"{budget}; never silently dropped); " + "; ".join(parts) + "."
        )
    b = b.loc[t.index]
    mismatch = t.index[:0] if one_seed else t.index[(t["seeds"] != b["seeds"]).to_numpy()]
    if len(mismatch):
        shown = list_some(
            (
                f"{query_key(e, q)} ({list(t.loc[(e, q), 'seeds'])} vs "
                f"{list(b.loc[(e, q), 'seeds'])})"
                for e, q in mismatch
            ),
            quote=False,
        )
        raise ValueError(
            "the two methods were run with different seeds for some queries, so their "
            f"seed averages are not comparable; {len(mismatch)} queries: {shown}. Pass `seed=` "
            "or complete the runs."
        )
    return t, b, int(t["n_seeds"].max())


def _grouped(part: pd.DataFrame, aggregates: dict[str, Any]) -> pd.DataFrame:
    """A method's rows aggregated per query (mean over its seeds), in key order."""
    return part.groupby(["episode_id", "query_id"], sort=True).agg(**aggregates)


def _one_seed_side(part: pd.DataFrame) -> pd.DataFrame:
    """:func:`_grouped` of rows with one seed: a validated table holds each (episode, query)
    once per method, metric, budget and seed, so every group is one row and its aggregates
    are that row's value, 1 and its cell -- the same frame as the groupby's (the tests
    compare them), without its per-group aggregation (a fifth of `analyze` on small
    records; issue 37)."""
    keys = ["episode_id", "query_id"]
    part = part.sort_values(keys, kind="stable")
    index = pd.MultiIndex.from_frame(part[keys])
    return pd.DataFrame(
        {
            # + 0.0: the groupby's mean of a lone -0.0 is 0.0
            "value": part["value"].to_numpy(dtype=np.float64) + 0.0,
            "n_seeds": np.ones(len(part), dtype=np.int64),
            "cell": pd.Series(
                part["cell"].to_numpy(dtype=object, na_value=None), index=index, dtype=object
            ),
        },
        index=index,
    )


def _units(
    t: pd.DataFrame, b: pd.DataFrame, unit: str, who: str, metric: str, budget: int
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.str_],
    NDArray[np.str_],
    NDArray[np.object_] | None,
]:
    """Per-unit values of the two sides, unit ids, their episodes and cells (queries), or
    the episodes' means (episodes: at least 2 of them, no cells)."""
    if unit == "episode":
        tv = t["value"].groupby(level="episode_id").mean()
        bv = b["value"].groupby(level="episode_id").mean().loc[tv.index]
        ids = tv.index.to_numpy(dtype=str)
        if len(ids) < 2:
            raise ValueError(
                f"{who} share {len(ids)} episode with values of {metric} at budget "
                f"{budget} ({list_some(ids.tolist())}): episode-level (e.g. "
                "conversation-level) inference is impossible with one unit; no p is given. "
                "Compare at unit='query' (query level, whose questions share that episode)."
            )
        return tv.to_numpy(dtype=np.float64), bv.to_numpy(dtype=np.float64), ids, ids, None
    ids = np.array([f"{e}/{q}" for e, q in t.index], dtype=str)
    episodes = t.index.get_level_values("episode_id").to_numpy(dtype=str)
    cell_labels = t["cell"].where(t["cell"].notna(), b["cell"])
    missing = cell_labels.isna()
    cells = None
    if missing.any() and not missing.all():
        lacking = [query_key(e, q) for (e, q), v in cell_labels.items() if v is None or v != v]
        raise ValueError(
            f"`cell` is missing for queries {list_some(lacking)} while other queries have one."
        )
    if not missing.all():
        cells = as_cells(cell_labels.tolist())
    tv, bv = t["value"], b["value"]
    return tv.to_numpy(dtype=np.float64), bv.to_numpy(dtype=np.float64), ids, episodes, cells


def _differences(
    tv: NDArray[np.float64],
    bv: NDArray[np.float64],
    ids: NDArray[np.str_],
    unit: str,
    where: str,
    index: Any = None,
) -> NDArray[np.float64]:
    """``tv - bv``, checked: at least 2 units, and differences and their spread finite.
    Messages name the units as the records do (:func:`query_key` of `index`'s (episode,
    query) pairs at the query unit)."""
    units = "queries" if unit == "query" else "episodes"
    if tv.size < 2:
        raise ValueError(
            f"{where}: {tv.size} paired {unit} ({list_some(ids.tolist())}); a paired test "
            f"and its interval need at least 2 {units}."
        )
    with np.errstate(over="ignore", invalid="ignore"):
        diff = tv - bv
        bad = np.flatnonzero(~np.isfinite(diff) | ~np.isfinite(diff - diff.mean()))
        spread_ok = bad.size == 0 and bool(np.isfinite(np.std(diff)))
    if not spread_ok:
        largest = max(float(np.abs(tv).max()), float(np.abs(bv).max()))
        if not bad.size:  # the spread overflows: the units whose squares cannot be summed
            with np.errstate(over="ignore", invalid="ignore"):
                bad = np.flatnonzero(np.abs(diff) > np.sqrt(np.finfo(np.float64).max / diff.size))
            bad = bad if bad.size else np.argsort(-np.abs(diff), kind="stable")[:10]
        shown = (
            [query_key(*index[i]) for i in bad]
            if index is not None and unit == "query"
            else ids[bad].tolist()
        )
        raise ValueError(
            f"{where}: values too large for float64 arithmetic (|value| up to {largest:.3g}: "
            f"their differences or spread overflow) at {len(bad)} of the {diff.size} {units}: "
            f"{list_some(shown)}; rescale the metric."
        )
    return diff
