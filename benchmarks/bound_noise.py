"""Is a held-out cell above the 20% bound above it, or is it the table's Monte Carlo noise?

Issue 35's bound: at most 20% of rows print an MDE (or `plan` returns an n) at which the true
power is below .6. A held-out table (`benchmarks/mde_procedure.py --held-out`,
`benchmarks/plan_small_pilots.py --held-out`) estimates each cell's share from a fixed number
of rows (100 MDE rows, 40 pilots): a cell whose true share is .17 prints .22 or more about one
time in eight of 100 rows, and a cell of 40 pilots exactly at .20 prints .25 or more one time in
four. This script reads committed tables and, for every cell printed above .20, gives the
one-sided exact binomial p of its count against a true share of .20 and Holm's adjustment over
the table's cells (`osustat.adjust_pvalues`); and, per design family and n, the cells' pooled
share, with its Clopper-Pearson 95% interval (the cells of a family are different designs: the
pooled share is their average, its interval treats the rows as one sample).

Cells of a shift design whose null and at-effect lines are identical (the MDE of a shift does
not depend on where the pilot sits) are one cell, counted once.

    .venv/bin/python benchmarks/bound_noise.py TABLE.md [TABLE.md ...]

Reads the tables only; nothing is simulated. The counts are the printed shares times the rows
per cell (the shares are printed to two decimals, exact for 100 rows; for 40 pilots the count
is the nearest integer, exact since k / 40 to two decimals identifies k).
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import binomtest

from osustat import adjust_pvalues

BOUND = 0.20


@dataclass(frozen=True)
class Cell:
    kind: str  # "MDE" or "plan"
    design: str
    n: int
    pilot: str
    below: int  # rows (pilots) whose true power is below .6
    rows: int


def family(design: str) -> str:
    """``h7 uniform ties 0.32`` -> ``uniform + ties``; ``h3 episodes c7 U(..)`` -> ``episodes``."""
    words = design.split()
    name = words[1] if re.fullmatch(r"h\d+", words[0]) else words[0]
    name = re.sub(r"^t\d+$", "t", name)
    return name + (" + ties" if "ties" in words else "")


def read_table(path: Path) -> list[Cell]:
    """The cells of one MDE or `plan` table with their count below .6."""
    text = path.read_text(encoding="utf-8")
    mde = "| true MDE |" in text
    kind = "MDE" if mde else "plan"
    if mde:
        rows = int(re.search(r"--rows (\d+)", text).group(1))  # type: ignore[union-attr]
    else:
        rows = int(re.search(r"(\d+) pilots per cell", text).group(1))  # type: ignore[union-attr]
    seen: dict[tuple[str, int], list[list[str]]] = defaultdict(list)
    cells = []
    for line in text.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) < 10 or not cols[1].isdigit():
            continue
        design, n, pilot = cols[0], int(cols[1]), cols[2]
        if mde:
            share, used = cols[9], rows  # "of all rows"
        else:
            share, used = cols[7], rows - int(cols[9])  # "< .6" of the pilots planned
        if share in ("-", "nan") or used == 0:
            continue
        if n < 20 and mde:  # below 20 differences every MDE row prints a range
            continue
        if any(other == cols[3:] for other in seen[(design, n)]):
            continue  # a shift design's null and at-effect lines: the same rows
        seen[(design, n)].append(cols[3:])
        cells.append(Cell(kind, design, n, pilot, round(float(share) * used), used))
    return cells


def report(path: Path, cells: list[Cell]) -> list[str]:
    p = [binomtest(c.below, c.rows, BOUND, alternative="greater").pvalue for c in cells]
    adj = adjust_pvalues(p, method="holm").pvalues_adjusted.tolist() if cells else []
    over = sorted((i for i, c in enumerate(cells) if c.below > BOUND * c.rows), key=p.__getitem__)
    out = [
        f"## {path.name}",
        "",
        f"{len(cells)} cells; {len(over)} above .20; of them p < .05: "
        f"{sum(p[i] < 0.05 for i in over)}, Holm-adjusted p < .05: "
        f"{sum(adj[i] < 0.05 for i in over)}.",
        "",
    ]
    if over:
        out += [
            "| cell | share below .6 | one-sided p (true share .20) | Holm |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {cells[i].design}, n = {cells[i].n}, {cells[i].pilot} | "
            f"{cells[i].below}/{cells[i].rows} | {p[i]:.3f} | {adj[i]:.2f} |"
            for i in over
        ]
        out.append("")
    return out


def pooled(tables: list[list[Cell]]) -> list[str]:
    groups: dict[tuple[str, str, int, str], list[Cell]] = defaultdict(list)
    for cells in tables:
        for c in cells:
            groups[(c.kind, family(c.design), c.n, c.pilot)].append(c)
    out = [
        "## Pooled by table kind, design family, n and pilot (all tables given)",
        "",
        "| table | family | n (pilot n for plan) | pilot | cells | cells above .20 | "
        "pooled share below .6 | 95% interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (kind, name, n, pilot), cells in sorted(groups.items()):
        below, rows = sum(c.below for c in cells), sum(c.rows for c in cells)
        ci = binomtest(below, rows).proportion_ci(0.95)
        out.append(
            f"| {kind} | {name} | {n} | {pilot} | {len(cells)} | "
            f"{sum(c.below > BOUND * c.rows for c in cells)} | {below / rows:.3f} | "
            f"[{ci.low:.3f}, {ci.high:.3f}] |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+", type=Path)
    args = parser.parse_args()
    command = " ".join(["benchmarks/bound_noise.py", *(str(t) for t in args.tables)])
    lines = [
        "# Cells above the 20% bound against the tables' Monte Carlo noise",
        "",
        f"`.venv/bin/python {command}` (reads the tables; simulates nothing).",
        "",
    ]
    tables = [read_table(path) for path in args.tables]
    for path, cells in zip(args.tables, tables, strict=True):
        lines += report(path, cells)
    lines += pooled(tables)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
