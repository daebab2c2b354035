"""Generic figures shared by the reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._style import DPI, pyplot, save_figure

__all__ = ["dose_response"]


def dose_response(
    table: Any,
    path: Path,
    *,
    x: str,
    y: str,
    group: str | None = None,
    ci: tuple[str, str] | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str = "",
) -> Path:
    """A metric against a swept parameter (the paper's Section 6.5 dose-response layout).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per (group, x) with the columns named by `x`, `y`, optional `group` and the
        optional interval columns `ci = (low, high)`.
    path : Path
        PNG to write (6.4 x 3.6 in at 150 dpi), with an SVG of the same name beside it.
    x, y, group, ci, xlabel, ylabel, title
        Column names and labels.

    Returns
    -------
    Path
        The PNG's path.
    """
    plt = pyplot()
    missing = [c for c in (x, y, group, *(ci or ())) if c is not None and c not in table]
    if missing:
        raise ValueError(f"`table` lacks columns {missing}; found {list(table.columns)}.")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    groups = [(None, table)] if group is None else list(table.groupby(group, sort=False))
    for name, g in groups:
        g = g.sort_values(x)
        if ci is not None:
            ax.fill_between(g[x], g[ci[0]], g[ci[1]], alpha=0.2)
        ax.plot(g[x], g[y], marker="o", label=None if name is None else f"{group} = {name}")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if group is not None:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path, dpi=DPI, svg=True)


def budget_curves(
    means: Any, unit: str, title: str, path: Path, *, dpi: float | None = None
) -> None:
    """Hit@2 and Recall against the budget, one line per method (the paper's Figure 3 layout).

    `means` has columns ``method``, ``metric``, ``budget`` and `unit` (the mean at that unit,
    e.g. ``episode`` or ``conversation``); OSU-Mem variants are drawn solid, the rest dashed.
    """
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=dpi)
    for ax, metric in zip(axes, ("hit@2", "recall"), strict=True):
        for meth in means["method"].drop_duplicates():
            g = means[(means["method"] == meth) & (means["metric"] == metric)]
            g = g.sort_values("budget")
            style = "-" if meth.startswith("OSU") else "--"
            ax.plot(g["budget"], g[unit], style, marker="o", label=meth)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("token budget B")
        ax.set_ylabel(f"{metric} ({unit} level)")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)
