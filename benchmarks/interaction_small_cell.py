"""Size of the centred interaction statistic (the audit's "as tested" column) with one small
cell at equal variances (issue 35 item 5): the smallest cell size from which its type-I error
stays <= .06.

Null: four cells of normal paired differences, mean 0 and sd 1 in every cell (equal
variances), sizes (k, 12, 60, 250) for the smallest cell k (`--others`: the other three);
`interaction_test(..., method='centered-signflip')` at alpha = .05. Per k: the rejection
rate and its Wilson 95% interval.

    nice -n 10 .venv/bin/python benchmarks/interaction_small_cell.py [--reps 2000]

With ``--random N``: N cell configurations drawn at random (2-4 cells, sizes log-uniform on
3..300, seed 35), each tested as above, beside the size the audit computes for them
(:func:`osustat.interaction.centered_size_at_equal_variances`) and its flag (size > 1.2
alpha = .06, the rule the audit prints): the flag's catch rate among the configurations whose
measured rate exceeds .06.

    nice -n 10 .venv/bin/python benchmarks/interaction_small_cell.py --random 60 --reps 2000

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
from osustat.interaction import centered_size_at_equal_variances

ROOT = Path(__file__).resolve().parents[1]
CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")
ALPHA = 0.05
FLAG_ABOVE = 1.2 * ALPHA  # the audit's rule (osustat.audit.verdicts.LIBERAL_SIZE)


def rejection_rate(sizes: tuple[int, ...], reps: int, resamples: int, seed: int) -> int:
    """Rejections at ALPHA of the centred test over `reps` normal equal-variance nulls."""
    labels = np.repeat(CELLS[: len(sizes)], sizes)
    gen = np.random.default_rng(seed)
    hits = 0
    for r in range(reps):
        d = gen.standard_normal(sum(sizes))
        res = interaction_test(d, labels, method="centered-signflip", n_resamples=resamples, rng=r)
        hits += res.pvalue <= ALPHA
    return hits


def random_configurations(args: argparse.Namespace, load: float) -> list[str]:
    """The --random section: measured vs computed size and the flag, per configuration."""
    gen = np.random.default_rng(35)
    lines = [
        "# Centred interaction statistic: the audit's size and flag on random cell sizes "
        "(issue 35 item 5)",
        "",
        f"`nice -n 10 .venv/bin/python benchmarks/interaction_small_cell.py --random "
        f"{args.random} --reps {args.reps} --resamples {args.resamples}`; 2-4 cells, sizes "
        f"log-uniform on 3..300 (seed 35), sd 1 each, alpha = .05; measured = rejection rate of "
        f"`interaction_test` over {args.reps} nulls; computed = "
        "`centered_size_at_equal_variances` (4,000 data sets, 999 flips); flag = computed > "
        f".06; load average at the start {load:.1f}.",
        "",
        "| cells | measured | Wilson 95% | computed | flag |",
        "|---|---|---|---|---|",
    ]
    above = caught = clear = clear_caught = false_flags = below = 0
    diffs = []
    for i in range(args.random):
        k = int(gen.integers(2, 5))
        sizes = tuple(sorted(np.exp(gen.uniform(np.log(3), np.log(300), k)).astype(int)))
        hits = rejection_rate(sizes, args.reps, args.resamples, seed=1000 + i)
        rate = hits / args.reps
        lo, hi = proportion_confint(hits, args.reps, alpha=0.05, method="wilson")
        size = centered_size_at_equal_variances(sizes, alpha=ALPHA)
        flag = size > FLAG_ABOVE
        diffs.append(size - rate)
        if rate > FLAG_ABOVE:
            above += 1
            caught += flag
        else:
            below += 1
            false_flags += flag
        if lo > FLAG_ABOVE:
            clear += 1
            clear_caught += flag
        cells = "/".join(map(str, sizes))
        lines.append(
            f"| {cells} | {rate:.3f} | [{lo:.3f}, {hi:.3f}] | {size:.3f} | "
            f"{'flagged' if flag else ''} |"
        )
        print(lines[-1], flush=True)
    d = np.asarray(diffs)
    lines += [
        "",
        f"Flag caught {caught} of {above} configurations measured above .06, {clear_caught} of "
        f"{clear} whose whole interval is above .06; flagged {false_flags} of {below} measured "
        f"at or below .06. Computed − measured: mean {d.mean():+.4f}, sd {d.std(ddof=1):.4f} "
        f"(the two Monte Carlo errors alone: about "
        f"{np.sqrt(0.07 * 0.93 * (1 / args.reps + 1 / 4000)):.4f}).",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--sizes", default="4,5,6,8,10,15,20,30")
    parser.add_argument("--others", default="12,60,250", help="sizes of the other three cells")
    parser.add_argument("--random", type=int, default=0, help="random configurations instead")
    args = parser.parse_args()
    start, load = time.time(), os.getloadavg()[0]
    if args.random:
        lines = random_configurations(args, load)
        lines += ["", f"Total {time.time() - start:.0f} s."]
        out = ROOT / "benchmarks" / "results-interaction_small_cell.md"
        with out.open("a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")
        return
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
        hits = rejection_rate(sizes, args.reps, args.resamples, seed=k)
        lo, hi = proportion_confint(hits, args.reps, alpha=0.05, method="wilson")
        lines.append(f"| {k} | {hits / args.reps:.3f} | [{lo:.3f}, {hi:.3f}] |")
        print(lines[-1], flush=True)
    lines += ["", f"Total {time.time() - start:.0f} s."]
    out = ROOT / "benchmarks" / "results-interaction_small_cell.md"
    with out.open("a", encoding="utf-8") as f:  # one section per design
        f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
