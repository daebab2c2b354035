"""Type-I error of every interaction method under the null, by simulation.

Null: every cell has the same mean paired difference (0), but cells differ in size (5 to
500) and in within-cell variance. Prints, per design and method, the rejection rate at
alpha = .05 and its binomial 99% interval. Run:

    .venv/bin/python benchmarks/interaction_type1.py [--reps 2000] [--resamples 500] [--seed 0]

Results are recorded in docs/statistics.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from osustat import INTERACTION_METHODS, interaction_test

CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")


def continuous(sizes, sds):
    def draw(rng):
        d = np.concatenate([rng.normal(0, s, n) for n, s in zip(sizes, sds, strict=True)])
        return d, np.repeat(CELLS, sizes)

    return draw


def skewed(sizes, sds):
    """Centred exponential differences (mean 0, right-skewed) with cell-specific sd."""

    def draw(rng):
        d = np.concatenate(
            [s * (rng.exponential(1.0, n) - 1.0) for n, s in zip(sizes, sds, strict=True)]
        )
        return d, np.repeat(CELLS, sizes)

    return draw


def binary_shifted(sizes, p_nonzero, mean):
    """0/1-metric differences with the same nonzero mean in every cell (asymmetric)."""

    def draw(rng):
        parts = []
        for n, p in zip(sizes, p_nonzero, strict=True):
            u = rng.random(n)
            parts.append(np.where(u < (p + mean) / 2, 1.0, np.where(u < p, -1.0, 0.0)))
        return np.concatenate(parts), np.repeat(CELLS, sizes)

    return draw


def binary(sizes, p_nonzero):
    """Differences of two 0/1 metrics: -1, 0, +1 with mean 0 and cell-specific variance."""

    def draw(rng):
        parts = []
        for n, p in zip(sizes, p_nonzero, strict=True):
            nonzero = rng.random(n) < p
            parts.append(np.where(nonzero, rng.choice([-1.0, 1.0], n), 0.0))
        return np.concatenate(parts), np.repeat(CELLS, sizes)

    return draw


DESIGNS = {
    "equal n=100, equal sd": continuous((100, 100, 100, 100), (1, 1, 1, 1)),
    "n 5/40/150/500, sd 2/1/.7/.3 (small cell noisy)": continuous(
        (5, 40, 150, 500), (2.0, 1.0, 0.7, 0.3)
    ),
    "n 5/40/150/500, sd .3/.7/1/2 (small cell quiet)": continuous(
        (5, 40, 150, 500), (0.3, 0.7, 1.0, 2.0)
    ),
    "binary, n 5/40/150/500, P(d!=0) .9/.5/.2/.1": binary((5, 40, 150, 500), (0.9, 0.5, 0.2, 0.1)),
    "binary, tau-bench n 56/96/44/132, P(d!=0) .6/.3/.5/.15": binary(
        (56, 96, 44, 132), (0.6, 0.3, 0.5, 0.15)
    ),
    "skewed (centred exponential), tau-bench n, sd 2/1/.7/.3": skewed(
        (56, 96, 44, 132), (2.0, 1.0, 0.7, 0.3)
    ),
    "skewed (centred exponential), n 5/40/150/500, sd 2/1/.7/.3": skewed(
        (5, 40, 150, 500), (2.0, 1.0, 0.7, 0.3)
    ),
    "binary, common mean .3, n 5/40/150/500, P(d!=0) .9/.6/.45/.35": binary_shifted(
        (5, 40, 150, 500), (0.9, 0.6, 0.45, 0.35), 0.3
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    lo, hi = stats.binom.ppf([0.005, 0.995], args.reps, args.alpha) / args.reps
    print(
        f"reps={args.reps} resamples={args.resamples} alpha={args.alpha} "
        f"binomial 99% interval [{lo:.4f}, {hi:.4f}]\n"
    )
    print("| design | " + " | ".join(INTERACTION_METHODS) + " |")
    print("|---|" + "---|" * len(INTERACTION_METHODS))
    seeds = np.random.SeedSequence(args.seed).spawn(len(DESIGNS))
    for (name, draw), ss in zip(DESIGNS.items(), seeds, strict=True):
        rng = np.random.default_rng(ss)
        rejections = dict.fromkeys(INTERACTION_METHODS, 0)
        start = time.perf_counter()
        for _ in range(args.reps):
            d, cells = draw(rng)
            for method in INTERACTION_METHODS:
                res = interaction_test(d, cells, method=method, n_resamples=args.resamples, rng=rng)
                rejections[method] += res.pvalue <= args.alpha
        cells_txt = []
        for method in INTERACTION_METHODS:
            rate = rejections[method] / args.reps
            flag = (
                ""
                if lo <= rate <= hi
                else (" (anti-conservative)" if rate > hi else " (conservative)")
            )
            cells_txt.append(f"{rate:.4f}{flag}")
        seconds = time.perf_counter() - start
        print(f"| {name} | " + " | ".join(cells_txt) + f" |  <!-- {seconds:.0f}s -->")


if __name__ == "__main__":
    main()
