"""Where the sign-flip test and its interval are exact (stop 59): the figures docs/statistics.md
and the CHANGELOG quote, made again.

1. **The enumeration floor.** Ten distinct positive differences (exact two-sided p = 2/1024)
   tested with ``n_resamples=999`` over 200 seeds, without the floor (``_exact_floor=0``,
   the rule before: enumerate only when ``2**m <= n_resamples``) and with it (the default).
2. **ConvolvedNull against the full convolution.** 200 random data sets (1-6 distinct nonzero
   values, 1-3 copies each, 0-39 zeros), ~40 shifts each: the largest |difference| between
   the p of ``ConvolvedNull`` and that of the full ``grouped_null``.
3. **Test and interval about 0.** 400 data sets of each design, the interval's convolved branch
   switched off (``MAX_CONVOLVED_GROUP = 0``: the Monte Carlo inversion it replaces) and on:
   how many data sets have a p and a 95% interval that disagree about 0.
4. **The interval's CPU.** 13 nonzero differences beside 2,000 / 20,000 / 60,000 zeros.
5. **Levels where p can equal alpha.** An exact p is dyadic; at levels .75 and .875 it can
   equal alpha: 120 random designs (3-8 nonzero values) beside 0, 10 and 1,500 zeros, at levels
   .5, .75, .875, .95: how many intervals disagree with p about 0.

    .venv/bin/python benchmarks/signflip_exactness.py > benchmarks/results-signflip_exactness.md
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.reference

import osustat.signflip as signflip
from osustat import signflip_tests
from tests.reference.convolved_null import largest_gap


def floor() -> None:
    d = np.arange(1.0, 11.0) + 0.1 * np.arange(10) ** 2
    print("## 1. Ten nonzero differences at `n_resamples=999` (exact p = 2/1024 = .00195)\n")
    print("| rule | method | min p | median p | max p | share of seeds with p <= .005 |")
    print("|---|---|---|---|---|---|")
    for label, low in (
        ("before (no floor)", 0),
        ("now (floor 1,024)", signflip.EXACT_ENUMERATION_FLOOR),
    ):
        res = [
            signflip_tests([d], n_resamples=999, rng=seed, _exact_floor=low)[0]
            for seed in range(200)
        ]
        ps = np.array([r.pvalue for r in res])
        print(
            f"| {label} | {res[0].method} | {ps.min():.5f} | {np.median(ps):.5f} | "
            f"{ps.max():.5f} | {np.mean(ps <= 0.005):.2f} |"
        )


def convolved() -> None:
    worst, shifts = largest_gap(200, 20)
    print("\n## 2. ConvolvedNull against the full convolution\n")
    print(f"200 data sets, {shifts:,} shifts: largest |p difference| {worst:.2g}.")


def agreement() -> None:
    print("\n## 3. p and the 95% interval about 0 (400 data sets per design)\n")
    print("| design | interval | disagreements | p in [.02, .08] |")
    print("|---|---|---|---|")
    cap = signflip.MAX_CONVOLVED_GROUP
    for nnz, zeros, b in ((10, 1100, 999), (12, 300, 10_000)):
        for label, limit in (("Monte Carlo inversion", 0), ("ConvolvedNull", cap)):
            signflip.MAX_CONVOLVED_GROUP = limit
            rng = np.random.default_rng(1)
            disagree = near = 0
            for seed in range(400):
                d = np.concatenate([rng.normal(0.55, 1, size=nnz), np.zeros(zeros)])
                res = signflip_tests([d], n_resamples=b, rng=seed)[0]
                ci = res.confidence_interval(0.95)
                near += 0.02 <= res.pvalue <= 0.08
                disagree += (res.pvalue <= 0.05) != (not ci.low <= 0 <= ci.high)
            design = f"{nnz} nonzero N(.55, 1) + {zeros:,} zeros, B = {b:,}"
            print(f"| {design} | {label} | {disagree} | {near} |")
    signflip.MAX_CONVOLVED_GROUP = cap


def interval_cpu() -> None:
    print("\n## 4. CPU of one 95% interval (13 nonzero differences beside many zeros)\n")
    print("| zeros | Monte Carlo inversion s | ConvolvedNull s |")
    print("|---|---|---|")
    cap = signflip.MAX_CONVOLVED_GROUP
    rng = np.random.default_rng(3)
    for zeros in (2_000, 20_000, 60_000):
        d = np.concatenate([rng.normal(0.5, 1, size=13), np.zeros(zeros)])
        res = signflip_tests([d], rng=0)[0]
        took = []
        for limit in (0, cap):
            signflip.MAX_CONVOLVED_GROUP = limit
            start = time.process_time()
            res.confidence_interval()
            took.append(time.process_time() - start)
        print(f"| {zeros:,} | {took[0]:.2f} | {took[1]:.2f} |")
    signflip.MAX_CONVOLVED_GROUP = cap


def dyadic_levels() -> None:
    rng = np.random.default_rng(5)
    disagree = total = 0
    for seed in range(120):
        nz = np.round(rng.normal(0.4, 1, int(rng.integers(3, 9))), 2)
        for zeros in (0, 10, 1500):
            res = signflip_tests(
                [np.concatenate([nz, np.zeros(zeros)])], n_resamples=999, rng=seed
            )[0]
            for level in (0.5, 0.75, 0.875, 0.95):
                ci = res.confidence_interval(level)
                disagree += (res.pvalue <= 1 - level) != (not ci.low <= 0 <= ci.high)
                total += 1
    print("\n## 5. Intervals at levels where an exact p can equal alpha\n")
    print(f"{disagree} of {total} intervals disagree with p about 0.")


def main() -> None:
    print("# Where the sign-flip test and its interval are exact\n")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"`benchmarks/signflip_exactness.py`, {when}\n")
    floor()
    convolved()
    agreement()
    interval_cpu()
    dyadic_levels()


if __name__ == "__main__":
    main()
