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
