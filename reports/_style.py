"""What every report writes the same way: markdown tables and figure files.

Numbers (p-values, signed effects, intervals, yes/no) are written by :mod:`osustat.formatting`,
the one set of formatters the core's verdict words share with every report.

* :func:`md_table` -- a markdown table from a header and rows of cells;
* :func:`interval_test_notes` -- the sentences a table needs where an interval and the p-value
  beside it disagree about 0 (and why, with the interval that inverts the test);
* :func:`pyplot` -- matplotlib's pyplot on the non-interactive Agg backend, imported lazily
  (reports must run on machines without a display, and importing matplotlib is slow);
* :func:`save_figure` -- write a figure (PNG, optionally an SVG beside it) with no software
  version, date or random id salt in it, so the same data give the same bytes; then close it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osustat.formatting import fmt_interval, fmt_p, p_phrase

__all__ = [
    "DPI",
    "IntervalTest",
    "disagrees",
    "interval_test_notes",
    "md_table",
    "pyplot",
    "save_figure",
]

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


@dataclass(frozen=True)
class IntervalTest:
    """One table row's interval and the test printed beside it.

    `inverted` is the interval that inverts that same test (e.g.
    :meth:`osustat.SignFlipResult.confidence_interval`), None when not available; `min_p` the
    smallest p the test can reach with these data (None when unknown); `null` the value the
    test's null hypothesis puts the effect at (0 unless a claim names a threshold).
    """

    label: str
    interval: tuple[float, float]
    pvalue: float
    inverted: tuple[float, float] | None = None
    min_p: float | None = None
    null: float = 0.0


def disagrees(
    interval: tuple[float, float], pvalue: float, level: float, null: float = 0.0
) -> bool:
    """Whether a ``level`` interval and a p disagree about `null` (one says significant, the
    other not): the rows :func:`interval_test_notes` explains. Callers use it to compute the
    costly interval that inverts the test only for such rows."""
    low, high = interval
    excludes = not (low <= null <= high)
    return excludes != (pvalue <= 1.0 - level + 1e-12)


def interval_test_notes(
    rows: Iterable[IntervalTest], *, level: float, interval: str, test: str
) -> list[str]:
    """Lines that explain every row whose interval and p disagree about 0 (the row's `null`).

    A row disagrees when its ``level`` interval excludes 0 (the row's ``null``) but
    ``p > 1 - level``, or holds it but ``p <= 1 - level``: the two come from different
    procedures (`interval`, e.g. "bootstrap interval resampling whole tasks", and `test`, e.g.
    "sign-flip test of the per-query differences"). Each such row gets a sentence with the
    reason the test gives (it cannot reach the level at this n) and the interval that inverts
    the test, which agrees with its p. No lines when every row agrees.

    Examples
    --------
    >>> from osustat.reports._style import IntervalTest, interval_test_notes
    >>> rows = [IntervalTest("T+E+", (-1.0, -0.33), 0.0625, (-1.0, 0.0), 0.0625),
    ...         IntervalTest("T-E-", (0.1, 0.3), 0.01, (0.05, 0.35))]
    >>> lines = interval_test_notes(rows, level=0.95, interval="bootstrap interval",
    ...                             test="sign-flip test")
    >>> len(lines), lines[-1].split(": ", 1)[0]
    (4, '- T+E+')
    >>> "excludes 0 but p = .062 > α = 0.05 (the test cannot go below p = .062" in lines[-1]
    True
    >>> lines[-1].endswith("the interval inverting the test is [-1.000, 0.000].")
    True
    """
    alpha = 1.0 - level
    notes: list[str] = []
    nulls: set[float] = set()
    for r in rows:
        low, high = r.interval
        if r.pvalue is None or low is None or high is None:
            continue
        if not disagrees((low, high), r.pvalue, level, r.null):
            continue
        excludes = not (low <= r.null <= high)
        null = f"{r.null:g}"
        said = (
            f"excludes {null} but {p_phrase(r.pvalue)} > α = {alpha:g}"
            if excludes
            else f"holds {null} but {p_phrase(r.pvalue)} ≤ α = {alpha:g}"
        )
        why = ""
        if excludes and r.min_p is not None and r.min_p > alpha:
            why = f" (the test cannot go below p = {fmt_p(r.min_p)} with these differences)"
        inverted = (
            ""
            if r.inverted is None
            else f"; the interval inverting the test is {fmt_interval(*r.inverted)}"
        )
        nulls.add(r.null)
        notes.append(
            f"- {r.label}: the {level:.0%} {interval} {fmt_interval(low, high)} {said}{why}"
            f"{inverted}."
        )
    if not notes:
        return []
    rows_word = "row" if len(notes) == 1 else "rows"
    about = "0" if nulls == {0.0} else "the value each test's null hypothesis states"
    return [
        "",
        f"Interval and test disagree about {about} in {len(notes)} {rows_word} (the "
        f"{interval} and the {test} are different procedures; the interval that inverts the "
        "test agrees with its p):",
        "",
        *notes,
    ]


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
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    # `tight_layout` leaves a placeholder engine on the figure, and savefig runs a
    # layout-only draw for any engine: one more draw per file for nothing (the layout is
    # done). Without it each file is drawn once, to the same bytes.
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        off = {"figure.autolayout": False, "figure.constrained_layout.use": False}
        with matplotlib.rc_context(off):  # else None means the rc's engine
            fig.set_layout_engine(None)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    kw: dict[str, Any] = {} if dpi is None else {"dpi": dpi}
    # zlib's fastest level: the same pixels, ~5 ms less per figure, a ~10 % larger file
    fig.savefig(path, metadata={"Software": None}, pil_kwargs={"compress_level": 1}, **kw)
    if svg:
        # A fixed salt: matplotlib otherwise salts the SVG's element ids at random per run.
        with matplotlib.rc_context({"svg.hashsalt": "osustat"}):
            fig.savefig(path.with_suffix(".svg"), metadata={"Date": None, "Creator": None})
    pyplot().close(fig)
    return path
