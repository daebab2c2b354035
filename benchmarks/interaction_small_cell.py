"""Size of the centred interaction statistic (the audit's "as tested" column) with one small
cell at equal variances (issue 35 item 5): the smallest cell size from which its type-I error
stays <= .06.

Null: four cells of normal paired differences, mean 0 and sd 1 in every cell (equal
variances), sizes (k, 12, 60, 250) for the smallest cell k (`--others`: the other three);
`interaction_test(..., method='centered-signflip')` at alpha = .05. Per k: the rejection
rate and its Wilson 95% interval.

    nice -n 10 .venv/bin/python benchmarks/interaction_small_cell.py [--reps 2000]

Appends a section per run to benchmarks/results-interaction_small_cell.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from osustat import interaction_test

ROOT = Path(__file__).resolve().parents[1]
CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--sizes", default="4,5,6,8,10,15,20,30")
    parser.add_argument("--others", default="12,60,250", help="sizes of the other three cells")
    args = parser.parse_args()
    start, load = time.time(), os.getloadavg()[0]
    lines = [
        "# Centred interaction statistic with one small cell, equal variances (issue 35 item 5)",
        "",
        f"`nice -n 10 .venv/bin/python benchmarks/interaction_small_cell.py --reps {args.reps} "
        f"--resamples {args.resamples} --sizes {args.sizes} --others {args.others}`; cells "
        f"(k, {args.others.replace(',', ', ')}), sd 1 "
        f"each, alpha = .05; load average at the start {load:.1f}.",
        "",
        "| smallest cell k | rejection rate | Wilson 95% |",
        "|---|---|---|",
    ]
    for k in map(int, args.sizes.split(",")):
        sizes = (k, *map(int, args.others.split(",")))
        labels = np.repeat(CELLS, sizes)
        gen = np.random.default_rng(k)
        hits = 0
        for r in range(args.reps):
            d = gen.standard_normal(sum(sizes))
            res = interaction_test(
                d, labels, method="centered-signflip", n_resamples=args.resamples, rng=r
            )
            hits += res.pvalue <= 0.05
        lo, hi = proportion_confint(hits, args.reps, alpha=0.05, method="wilson")
        lines.append(f"| {k} | {hits / args.reps:.3f} | [{lo:.3f}, {hi:.3f}] |")
        print(lines[-1], flush=True)
    lines += ["", f"Total {time.time() - start:.0f} s."]
    out = ROOT / "benchmarks" / "results-interaction_small_cell.md"
    with out.open("a", encoding="utf-8") as f:  # one section per design
        f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
