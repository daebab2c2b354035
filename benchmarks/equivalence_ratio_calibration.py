"""Calibration of the audit's equivalence test (TOST) and ratio-of-means interval.

TOST (osustat.tost_signflip): true mean difference exactly on the margin (the least
favourable null), rejection rate at alpha = .05 should be <= .05. Designs: normal
differences, and 0/1-metric differences (values in {-1, 0, 1}, the paper's Hit@2) whose mean
sits on the margin. Fieller (osustat.ratio_of_means): coverage of the 95% interval for the
true ratio, normal pairs and per-episode means of 0/1 hits (8 queries per episode). Run:

    .venv/bin/python benchmarks/equivalence_ratio_calibration.py [--reps 2000] [--seed 0]

Results: benchmarks/results-equivalence_ratio_calibration.md and docs/audit.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from osustat import ratio_of_means, tost_signflip

MARGIN = 0.05


def tost_normal(n):
    return lambda rng: rng.normal(MARGIN, 0.15, n)


def tost_trinomial(n):
    # P(+1) - P(-1) = MARGIN with P(+1) + P(-1) = .3
    p_pos, p_neg = (0.3 + MARGIN) / 2, (0.3 - MARGIN) / 2
    return lambda rng: rng.choice([1.0, -1.0, 0.0], n, p=[p_pos, p_neg, 1 - p_pos - p_neg])


def ratio_normal(n):
    def draw(rng):
        b = rng.normal(0.3, 0.1, n)
        return 1.4 * b + rng.normal(0, 0.08, n), b, 1.4

    return draw


def ratio_hits(n, q=8):
    # per-episode means of q 0/1 hits, baseline rate .15, treatment rate .21 (ratio 1.4)
    def draw(rng):
        b = rng.binomial(q, 0.15, n) / q
        t = rng.binomial(q, 0.21, n) / q
        return t, b, 1.4

    return draw


def interval(k, reps):
    lo, hi = stats.binomtest(k, reps).proportion_ci(0.99)
    return f"{k / reps:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"reps = {args.reps}, sign-flip resamples = {args.resamples}, seed = {args.seed}\n")
    print("TOST type-I error at the margin (alpha = .05; 99% CI)")
    print("| design | n | rejection rate |\n|---|---|---|")
    for name, make in (("normal", tost_normal), ("0/1 differences", tost_trinomial)):
        for n in (12, 50, 200):
            start = time.perf_counter()
            draw = make(n)
            k = sum(
                tost_signflip(draw(rng), MARGIN, n_resamples=args.resamples, rng=rng).pvalue <= 0.05
                for _ in range(args.reps)
            )
            print(
                f"| {name} | {n} | {interval(k, args.reps)} | ({time.perf_counter() - start:.1f} s)"
            )
    print("\nFieller 95% interval coverage of the true ratio (99% CI)")
    print("| design | n | coverage | unbounded |\n|---|---|---|---|")
    for name, make in (("normal", ratio_normal), ("episode means of 0/1 hits", ratio_hits)):
        for n in (20, 50, 200):
            draw = make(n)
            k = unbounded = 0
            for _ in range(args.reps):
                t, b, true = draw(rng)
                res = ratio_of_means(t, b)
                k += res.low <= true <= res.high
                unbounded += not res.bounded
            print(f"| {name} | {n} | {interval(k, args.reps)} | {unbounded} |")


if __name__ == "__main__":
    main()
