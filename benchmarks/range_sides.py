"""On which side a printed MDE range misses the true MDE (issue 35: the ranges' coverage).

`benchmarks/mde_procedure.py` counts the ranges that contain the design's true MDE; this says
where the others lie: entirely above it (conservative: the user reads a larger MDE than the
test needs) or entirely below it (optimistic: the test needs more than the range says). For
each design of the fixed table and each n, 100 null pilots (or ``--rows``) given to
`minimum_detectable_effect` as `analyze` calls it (with the units' values where the design has
them), the design's true power curve as in the procedure table::

    .venv/bin/python benchmarks/range_sides.py [--rows 100] [--out FILE]

Rule Z (docs/validation.md) was found with this count: where the true MDE is infinite
(zero-inflated n = 6/10, recall-like and clustered n = 6), 80-96% of the ranges lay below it.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
from mde_procedure import DESIGNS, NS, differences, power_curve, true_mde

import osustat


def sides(name: str, n: int, args: argparse.Namespace) -> str:
    draw, top = DESIGNS[name]
    grid, rates = power_curve(draw, n, top, args.curve_reps, args.resamples, n)
    truth = true_mde(grid, rates)
    drawn = draw(0.0, n, args.rows, np.random.default_rng(n + 7))
    pilots = differences(drawn)
    ranges = covers = above = below = unbounded = 0
    methods: set[str] = set()
    for j in range(args.rows):
        d = pilots[:, j]
        pairs = (drawn[0, :, j], drawn[1, :, j]) if drawn.ndim == 3 else None
        mde = osustat.minimum_detectable_effect(
            float(np.std(d, ddof=1)), n, differences=d, pairs=pairs
        )
        ends = getattr(mde, "mde_range", None)
        if ends is None:
            continue
        ranges += 1
        methods.add(mde.method)
        unbounded += math.isinf(ends[1])
        if truth < ends[0]:
            above += 1
        elif truth > ends[1]:
            below += 1
        else:
            covers += 1
    share = (lambda k: f"{k / ranges:.2f}") if ranges else (lambda k: "-")
    return (
        f"| {name} | {n} | {truth:.3f} | {ranges / args.rows:.2f} | {share(covers)} | "
        f"{share(above)} | {share(below)} | {share(unbounded)} | {', '.join(sorted(methods))} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--curve-reps", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    start, load = time.perf_counter(), os.getloadavg()[0]
    lines = [
        "# On which side printed MDE ranges miss the true MDE (`benchmarks/range_sides.py`)",
        "",
        f"Null pilots, {args.rows} rows per design and n; true power curves from "
        f"{args.curve_reps} data sets per effect; two-sided alpha = .05, target power .80; "
        f"load average at the start {load:.1f}. Of the rows printing a range: the share that "
        "contains the true MDE, lies entirely above it (conservative), entirely below it "
        "(optimistic), and has no upper end.",
        "",
        "| design | n | true MDE | range | covers | above | below | no upper end | methods |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in args.designs.split(","):
        for n in map(int, args.ns.split(",")):
            lines.append(sides(name, n, args))
            print(lines[-1], flush=True)
    lines += ["", f"Total {time.perf_counter() - start:.0f} s."]
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
