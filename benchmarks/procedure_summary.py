"""Side by side: the row-procedure tables of `benchmarks/mde_procedure.py` runs, summarized by
kind of design (issue 35 items 2-4).

Reads each results file's table (one row per design x n x pilot) and prints, per kind
(held-out shifts, items, episodes; the fixed designs by name) and pilot, over cells with
n >= 20: how many cells have at most 20% of all rows printing an MDE whose true power is < .6,
how many medians of the printed rows' true power lie within .80 +- .07 (cells with at least one
row printing a number), the range of those medians, and how many cells have rows printing
"underpowered at any effect" (the true MDE is in each row of the table). For the old-vs-new
comparison of the count-ratio model (`--call differences` against the default `--call pairs`
on one design seed)::

    .venv/bin/python benchmarks/procedure_summary.py \\
        benchmarks/results-mde_procedure-heldout-seed36-differences.md \\
        benchmarks/results-mde_procedure-heldout-seed36.md
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import NamedTuple


class Cell(NamedTuple):
    design: str
    n: int
    pilot: str
    median: float  # the printed rows' median true power (nan: no row printed a number)
    low_share: float  # share of all rows printing an MDE whose true power is < .6
    underpowered: float  # share of all rows printing "underpowered at any effect"


def cells(path: Path) -> list[Cell]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) != 13 or not cols[1].isdigit():
            continue
        median = float(cols[7]) if cols[7] != "-" else math.nan
        out.append(Cell(cols[0], int(cols[1]), cols[2], median, float(cols[9]), float(cols[10])))
    return out


def kind(design: str) -> str:
    for word in ("items", "episodes"):
        if word in design:
            return word
    return "shifts" if design.startswith("h") and design[1].isdigit() else design


def summary(rows: list[Cell]) -> str:
    big = [r for r in rows if r.n >= 20]
    ok_share = sum(r.low_share <= 0.2 for r in big)
    medians = [r.median for r in big if not math.isnan(r.median)]
    inside = sum(abs(m - 0.8) <= 0.07 for m in medians)
    worst = max((r.low_share for r in big), default=math.nan)
    span = f"{min(medians):.3f}-{max(medians):.3f}" if medians else "-"
    under = sum(r.underpowered > 0 for r in big)
    most = max((r.underpowered for r in big), default=math.nan)
    return (
        f"{ok_share}/{len(big)} cells <= 20% (largest {worst:.2f}); {inside}/{len(medians)} "
        f"medians in .80 +- .07 ({span}); {under} with 'underpowered' rows (up to {most:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    tables = {f.name: cells(f) for f in args.files}
    kinds = sorted({kind(r.design) for rows in tables.values() for r in rows})
    print("| kind | pilot | " + " | ".join(tables) + " |")
    print("|---|---|" + "---|" * len(tables))
    for k in kinds:
        for pilot in ("null", "at effect"):
            parts = [
                summary([r for r in rows if kind(r.design) == k and r.pilot == pilot])
                for rows in tables.values()
            ]
            print(f"| {k} | {pilot} | " + " | ".join(parts) + " |")


if __name__ == "__main__":
    main()
