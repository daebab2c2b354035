"""What every report writes the same way: markdown tables and figure files.

Numbers (p-values, signed effects, intervals, yes/no) are written by :mod:`osustat.formatting`,
the one set of formatters the core's verdict words share with every report.

* :func:`md_table` -- a markdown table from a header and rows of cells;
* :func:`pyplot` -- matplotlib's pyplot on the non-interactive Agg backend, imported lazily
  (reports must run on machines without a display, and importing matplotlib is slow);
* :func:`save_figure` -- write a figure (PNG, optionally an SVG beside it) with no software
  version, date or random id salt in it, so the same data give the same bytes; then close it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DPI", "md_table", "pyplot", "save_figure"]

#: Resolution of the PNGs written beside an SVG (issue #8: at least 150 dpi).
DPI = 150


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """The lines of a markdown table: header, ``---`` separator, one line per row.

    Examples
    --------
    >>> from osustat.reports._style import md_table
    >>> md_table(["a", "b"], [[1, "x"]])
    ['| a | b |', '| --- | --- |', '| 1 | x |']
    """
    out = [_row(header), _row(["---"] * len(header))]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row has {len(row)} cells, the header {len(header)}: {row!r}.")
        out.append(_row(row))
    return out


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, *, dpi: float | None = None, svg: bool = False) -> Path:
    """Write `fig` to `path` (PNG; `dpi`, else the figure's own), an SVG beside it if `svg`.

    The files carry no software version or date, so they are reproducible byte for byte.
    The figure is closed. Returns `path`.
    """
    import matplotlib

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    kw: dict[str, Any] = {} if dpi is None else {"dpi": dpi}
    fig.savefig(path, metadata={"Software": None}, **kw)
    if svg:
        # A fixed salt: matplotlib otherwise salts the SVG's element ids at random per run.
        with matplotlib.rc_context({"svg.hashsalt": "osustat"}):
            fig.savefig(path.with_suffix(".svg"), metadata={"Date": None, "Creator": None})
    pyplot().close(fig)
    return path
