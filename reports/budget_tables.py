"""The by-budget tables every real-data report writes (τ-bench, LoCoMo): one renderer for each
table that means the same thing on every benchmark.

* :func:`effect_by_budget` -- the paper's Table 5 layout: a treatment − baseline effect per
  cell (rows) at every budget (columns), with its query-level p and the p of the same
  comparison at the benchmark's cluster unit (tasks, conversations);
* :func:`means_by_budget` -- the Table 11 / Figure 3 numbers: every method's Hit@2 and Recall
  at every budget, query level with the cluster level in parentheses;
* :func:`breakeven_by_budget` -- Appendix I (Table 17): break-even share p*, π_T+*, π_any+*
  with their bootstrap bands, the oracle ceiling and the aggregate effect per budget (the
  analyses build its rows from the core's result with
  :func:`osustat.analyses.by_budget.breakeven_columns`).

Each takes the long frame its benchmark's analysis builds (columns named in the docstring)
and returns markdown lines; numbers are written by :mod:`osustat.formatting`. Paper values
are optional columns for reading beside ours, never inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from osustat.formatting import fmt_interval, fmt_number, fmt_p, fmt_signed

from ._style import md_table

__all__ = ["breakeven_by_budget", "effect_by_budget", "means_by_budget"]

#: The rows of the by-cell tables: the four cells of Definition 2, then the aggregate.
CELLS = ("T+E+", "T+E-", "T-E+", "T-E-", "Aggregate")


def effect_by_budget(
    frame: pd.DataFrame,
    *,
    cluster: str,
    cluster_p: str,
    cells: Sequence[str] = CELLS,
    paper: Mapping[str, Sequence[float]] | None = None,
    paper_header: str = "paper",
    cell_n: Mapping[str, int] | None = None,
    untestable: str = "—",
) -> list[str]:
    """The Table 5 layout: one row per cell (``cell (n=…)``), one column per budget holding
    ``Δ (p) [cluster-level p]``, and the paper's effects beside when `paper` is given.

    `frame` has one row per (budget, cell) with columns ``budget``, ``cell``, ``n``,
    ``effect``, ``p`` (query level) and `cluster_p` (the p at the `cluster` unit, e.g.
    ``task``). A cell absent at a budget prints ``—``; its n is the one of the largest
    budget that has it. `cell_n` (cell → its number of queries, also where no test ran) makes
    an absent cell that has queries print `untestable` (e.g. "not testable (< 2 queries)")
    and label its row with that n.

    Examples
    --------
    >>> import pandas as pd
    >>> from osustat.reports.budget_tables import effect_by_budget
    >>> f = pd.DataFrame({"budget": [64, 128], "cell": ["T+E+", "T+E+"], "n": [9, 9],
    ...                   "effect": [0.1, -0.2], "p": [0.5, 0.04], "task_p": [0.6, 0.1]})
    >>> effect_by_budget(f, cluster="task", cluster_p="task_p", cells=["T+E+"])[2]
    '| T+E+ (n=9) | +0.100 (.500) [.600] | -0.200 (.040) [.100] |'
    """
    budgets = sorted(set(frame["budget"]))
    header = ["cell", *(f"B={b}: Δ (p) [{cluster}-level p]" for b in budgets)]
    if paper is not None:
        header.append(paper_header)
    rows = []
    for c in cells:
        line: list[Any] = []
        n = 0 if cell_n is None else cell_n.get(c, 0)  # 0: no query at any budget
        for b in budgets:
            r = frame[(frame["budget"] == b) & (frame["cell"] == c)]
            if r.empty:
                line.append(untestable if n else "—")
                continue
            r = r.iloc[0]
            n = int(r["n"])
            line.append(f"{fmt_signed(r['effect'])} ({fmt_p(r['p'])}) [{fmt_p(r[cluster_p])}]")
        if paper is not None:
            pv = paper.get(c)
            line.append("—" if pv is None else ", ".join(fmt_signed(x) for x in pv))
        rows.append([f"{c} (n={n})", *line])
    return md_table(header, rows)


def means_by_budget(
    means: pd.DataFrame,
    unit: str,
    *,
    metrics: Sequence[tuple[str, str]] = (("hit@2", "Hit@2"), ("recall", "Recall")),
    paper: Mapping[str, str] | None = None,
    paper_header: str = "paper",
) -> list[str]:
    """Every method's means at every budget: ``query (unit)`` per metric and budget, methods
    in their order of appearance.

    `means` has columns ``method``, ``budget``, ``metric``, ``query`` (the mean over queries)
    and `unit` (the mean over that unit's means, e.g. ``episode`` or ``conversation``).
    `metrics` maps each metric to its column word; `paper` maps a method to its paper cell.

    >>> import pandas as pd
    >>> from osustat.reports.budget_tables import means_by_budget
    >>> m = pd.DataFrame({"method": ["A"], "budget": [64], "metric": ["hit@2"],
    ...                   "query": [0.5], "task": [0.25]})
    >>> means_by_budget(m, "task", metrics=[("hit@2", "Hit@2")])[2]
    '| A | 0.500 (0.250) |'
    """
    budgets = sorted(set(means["budget"]))
    header = ["method", *(f"B={b} {word}" for b in budgets for _, word in metrics)]
    if paper is not None:
        header.append(paper_header)
    rows = []
    for meth in means["method"].drop_duplicates():
        line: list[Any] = [meth]
        for b in budgets:
            for metric, _ in metrics:
                r = means[
                    (means["method"] == meth) & (means["budget"] == b) & (means["metric"] == metric)
                ]
                line.append("—" if r.empty else f"{r['query'].iloc[0]:.3f} ({r[unit].iloc[0]:.3f})")
        if paper is not None:
            line.append(paper.get(meth, "—"))
        rows.append(line)
    return md_table(header, rows)


def breakeven_by_budget(
    frame: pd.DataFrame,
    *,
    level: float,
    cluster: str,
    treatment: str = "OSU-Mem",
    baseline: str = "Flat",
    label: Callable[[Any], str] | None = None,
    paper: Mapping[int, str] | None = None,
    paper_header: str = "paper p*, π_T+*",
) -> list[str]:
    """Break-even and the oracle ceiling per budget (Appendix I, Table 17 layout).

    `frame` has one row per budget (per comparison and budget when `label` names the row's
    comparison) with columns ``budget``, ``d_tpep`` and ``d_tmem`` (the T+E+ and T−E− effects),
    ``p_star`` with ``p_star_ci`` and ``band_level``, ``pi_tool`` with ``pi_tool_ci``,
    ``pi_any``, ``never_negative``, ``oracle_gain``, ``aggregate`` and optionally
    ``oracle_ci`` (a `level` cluster-bootstrap interval of the oracle gain) and ``d_nf``
    (the pooled effect of the non-favourable cells, weighted by their sizes). p* is 0 when
    the break-even rule finds no negative side — the T+E+ effect and the *pooled* effect of
    the other three cells both ≥ 0, which can hold while T−E− alone is negative — and "none"
    when the treatment is never ahead.

    >>> import pandas as pd
    >>> from osustat.reports.budget_tables import breakeven_by_budget
    >>> f = pd.DataFrame([{"budget": 256, "d_tpep": 0.2, "d_tmem": -0.1, "p_star": 0.333,
    ...     "p_star_ci": (0.1, 0.6), "band_level": 0.9, "pi_tool": 0.4, "pi_tool_ci": None,
    ...     "pi_any": 0.5, "never_negative": False, "oracle_gain": 0.05, "aggregate": 0.01}])
    >>> breakeven_by_budget(f, level=0.95, cluster="task")[2]
    '| 256 | +0.200 | -0.100 | 0.333 [0.100, 0.600] | 0.400 | 0.500 | +0.050 | +0.010 |'
    """
    levels = {f"{v:.0%}" for v in frame.get("band_level", pd.Series()).dropna()}
    band = "/".join(sorted(levels)) or "—"
    with_ci = "oracle_ci" in frame and frame["oracle_ci"].notna().any()
    oracle = f"oracle gain over {baseline}" + (
        f" [{level:.0%} {cluster}-bootstrap CI]" if with_ci else ""
    )
    header = [
        *(["comparison"] if label is not None else []),
        "budget",
        "Δ T+E+",
        "Δ T−E−",
        f"p* [{band} band]",
        f"π_T+* [{band} band]",
        "π_any+*",
        oracle,
        "aggregate Δ",
        *([paper_header] if paper is not None else []),
    ]
    rows = []
    for _, r in frame.iterrows():
        b = int(r["budget"])
        line: list[Any] = [] if label is None else [label(r)]
        line += [
            b,
            fmt_signed(r["d_tpep"]),
            fmt_signed(r["d_tmem"]),
            _pstar(r, treatment) + _band(r["p_star_ci"]),
            fmt_number(r["pi_tool"]) + _band(r["pi_tool_ci"]),
            fmt_number(r["pi_any"]),
            fmt_signed(r["oracle_gain"]) + (_band(r["oracle_ci"], signed=True) if with_ci else ""),
            fmt_signed(r["aggregate"]),
        ]
        if paper is not None:
            line.append(paper.get(b, "—"))
        rows.append(line)
    return md_table(header, rows)


def _band(ci: Any, *, signed: bool = False) -> str:
    """`` [low, high]`` after a value; nothing when there is no interval."""
    if ci is None or (isinstance(ci, float) and math.isnan(ci)):
        return ""
    return " " + fmt_interval(ci[0], ci[1], signed=signed)


def _pstar(r: Any, treatment: str) -> str:
    """p* in words where it is not a share; ``—`` where no break-even was computed."""
    flag = r["never_negative"]
    if flag is None or pd.isna(flag):
        return "—"
    if flag:  # the rule pools T+E−, T−E+ and T−E− (size-weighted), not T−E− alone
        d_nf = r.get("d_nf")
        pooled = "" if d_nf is None or pd.isna(d_nf) else f" {fmt_signed(d_nf)}"
        return f"0 (T+E+ Δ ≥ 0 and pooled non-T+E+ Δ{pooled} ≥ 0)"
    if r["p_star"] is None or not math.isfinite(r["p_star"]):
        return f"none ({treatment} never ahead)"
    return fmt_number(r["p_star"])
