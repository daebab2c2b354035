"""Type-I error of the two trend tests on nulls with no trend in the mean (issue 23).

Designs (n blocks x k = 5 doses, scores 0..4), each with E[slope] = 0:

- exchangeable: iid normal values (the null of both tests);
- AR(1) across doses: x_bj = u_b + e_bj, e an AR(1) series in the dose (rho = .8);
- random slopes: x_bj = u_b + g_b * s_j + e_bj with g_b ~ N(0, .3^2), e iid N(0, 1).

Tests: ``within_block_trend_test`` (exchangeability null), ``mean_trend_test`` with
``method='sign-flip'`` (default) and ``method='t'``; one-sided 'greater' at alpha = .05.
Run:

    nice .venv/bin/python benchmarks/trend_calibration.py [--reps 2000] [--seed 0]
        [--out benchmarks/results-trend_calibration.md]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from osustat.trend import mean_trend_test, within_block_trend_test

K = 5


def exchangeable(rng, n):
    return rng.normal(size=(n, K))


def ar1(rng, n, rho=0.8):
    e = np.empty((n, K))
    e[:, 0] = rng.normal(size=n)
    for j in range(1, K):
        e[:, j] = rho * e[:, j - 1] + np.sqrt(1 - rho**2) * rng.normal(size=n)
    return rng.normal(size=(n, 1)) + e


def random_slopes(rng, n, sd=0.3):
    return (
        rng.normal(size=(n, 1)) + rng.normal(0, sd, (n, 1)) * np.arange(K) + rng.normal(size=(n, K))
    )


DESIGNS = {"AR(1) rho .8": ar1, "random slopes": random_slopes, "exchangeable": exchangeable}


def band(k, reps):
    lo, hi = stats.binomtest(k, reps).proportion_ci(0.99)
    return f"{k / reps:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results-trend_calibration.md")
    ap.add_argument("--blocks", default="10,30,100", help="numbers of blocks, comma-separated")
    args = ap.parse_args()
    t0 = time.perf_counter()
    lines = [
        "# Trend tests on nulls without a mean trend (rejection rate at alpha = .05, 99% CI)",
        "",
        f"Command: `nice .venv/bin/python benchmarks/trend_calibration.py --reps {args.reps} "
        f"--seed {args.seed} --blocks {args.blocks}`; k = 5 doses, one-sided 'greater', "
        "within-block test with 999 permutations, sign-flip with 999 sign vectors.",
        "",
        "| design | n blocks | within_block_trend_test (exchangeability) | mean_trend_test "
        "sign-flip | mean_trend_test t |",
        "|---|---|---|---|---|",
    ]
    for name, draw in DESIGNS.items():
        for n in [int(b) for b in args.blocks.split(",")]:
            rng = np.random.default_rng([args.seed, n, len(name)])
            hits = np.zeros(3, dtype=int)
            for _ in range(args.reps):
                x = draw(rng, n)
                ps = (
                    within_block_trend_test(x, n_resamples=999, rng=rng).pvalue,
                    mean_trend_test(x, n_resamples=999, rng=rng).pvalue,
                    mean_trend_test(x, method="t").pvalue,
                )
                hits += np.array(ps) <= 0.05
            lines.append(
                f"| {name} | {n} | " + " | ".join(band(int(h), args.reps) for h in hits) + " |"
            )
            print(lines[-1], flush=True)
    lines += ["", f"Total {time.perf_counter() - t0:.0f}s."]
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
