"""Calibration of the audit's equivalence test (TOST) and ratio-of-means interval.

TOST (osustat.tost_signflip): true mean difference exactly on the margin (the least
favourable null), rejection rate at alpha = .05 should be <= .05. Designs: normal
differences, and 0/1-metric differences (values in {-1, 0, 1}, the paper's Hit@2) whose mean
sits on the margin. Fieller (osustat.ratio_of_means): coverage of the 95% interval for the
true ratio, normal pairs and per-episode means of 0/1 hits (8 queries per episode). Run:

    .venv/bin/python benchmarks/equivalence_ratio_calibration.py [--reps 2000] [--seed 0]
        [--sections tost,fieller,skew]

Section ``skew`` (issue 23): skewed differences (exponential, lognormal; sd .15) whose mean
sits on the upper or on the lower margin, for the sign-flip TOST, the t-based TOST
(statsmodels ``ttost_paired``) and the studentized bootstrap TOST (``tost_bootstrap_t``).

Results: benchmarks/results-equivalence_ratio_calibration.md and docs/audit.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from osustat import ratio_of_means, tost_signflip
from osustat.equivalence import tost_bootstrap_t

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


def skewed(kind, n, side):
    """Mean exactly on the margin `side` * MARGIN; right-skewed noise with sd .15."""
    if kind == "exponential":
        return lambda rng: side * MARGIN + 0.15 * (rng.exponential(1.0, n) - 1.0)
    s2 = np.log(2.0)  # lognormal(0, sqrt(log 2)): mean sqrt(2), variance 2
    scale = 0.15 / np.sqrt((np.exp(s2) - 1) * np.exp(s2))
    return lambda rng: side * MARGIN + scale * (rng.lognormal(0.0, np.sqrt(s2), n) - np.exp(s2 / 2))


def t_tost(d):
    from statsmodels.stats.weightstats import ttost_paired

    return ttost_paired(d, np.zeros_like(d), -MARGIN, MARGIN)[0]


def skew_section(args, rng):
    print("\nTOST type-I error at the margin, skewed differences (alpha = .05; 99% CI)")
    print(
        "| design | margin hit | n | sign-flip TOST | t TOST | bootstrap-t TOST |\n"
        "|---|---|---|---|---|---|"
    )
    for kind in ("exponential", "lognormal"):
        for side, label in ((1, "upper"), (-1, "lower")):
            for n in (10, 30, 100):
                draw = skewed(kind, n, side)
                hits = np.zeros(3, dtype=int)
                for _ in range(args.reps):
                    d = draw(rng)
                    hits += (
                        np.array(
                            [
                                tost_signflip(
                                    d, MARGIN, n_resamples=args.resamples, rng=rng
                                ).pvalue,
                                t_tost(d),
                                tost_bootstrap_t(
                                    d, MARGIN, n_resamples=args.resamples, rng=rng
                                ).pvalue,
                            ]
                        )
                        <= 0.05
                    )
                cells = " | ".join(interval(int(h), args.reps) for h in hits)
                print(f"| {kind} | {label} | {n} | {cells} |", flush=True)


def interval(k, reps):
    lo, hi = stats.binomtest(k, reps).proportion_ci(0.99)
    return f"{k / reps:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sections", default="tost,fieller,skew")
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    rng = np.random.default_rng(args.seed)
    print(f"reps = {args.reps}, sign-flip resamples = {args.resamples}, seed = {args.seed}\n")
    if "skew" in sections:
        skew_section(args, rng)
    if "tost" in sections:
        print("TOST type-I error at the margin (alpha = .05; 99% CI)")
        print("| design | n | rejection rate |\n|---|---|---|")
    for name, make in (
        (("normal", tost_normal), ("0/1 differences", tost_trinomial)) if "tost" in sections else ()
    ):
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
    if "fieller" in sections:
        print("\nFieller 95% interval coverage of the true ratio (99% CI)")
        print("| design | n | coverage | unbounded |\n|---|---|---|---|")
    for name, make in (
        (("normal", ratio_normal), ("episode means of 0/1 hits", ratio_hits))
        if "fieller" in sections
        else ()
    ):
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
