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

    .venv/bin/python benchmarks/signflip_exactness.py > benchmarks/results-signflip_exactness.md
"""

from __future__ import annotations

import time

import numpy as np

import osustat.signflip as signflip
from osustat import signflip_tests
from osustat._signflip_null import ConvolvedNull, grouped_null, tie_tolerance


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
    rng = np.random.default_rng(0)
    worst, shifts = 0.0, 0
    for _ in range(200):
        k = int(rng.integers(1, 7))
        nz = np.round(rng.normal(0.3, 1, size=k), int(rng.integers(1, 3)))
        d = np.concatenate(
            [np.repeat(nz, rng.integers(1, 4, size=k)), np.zeros(rng.integers(0, 40))]
        )
        values, counts = np.unique(d, return_counts=True)
        sums, ones, weights = grouped_null(values, counts)
        null = ConvolvedNull(values, counts)
        for mu0 in np.concatenate([rng.normal(d.mean(), 1, 20), values, values / 2, [0.0]]):
            tol, obs = tie_tolerance(d - mu0), abs(d.sum() - d.size * mu0)
            want = float(weights @ (np.abs(sums - mu0 * ones) >= obs - tol))
            worst = max(worst, abs(null.pvalue(mu0, obs, tol) - want))
            shifts += 1
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


def main() -> None:
    print("# Where the sign-flip test and its interval are exact\n")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"`benchmarks/signflip_exactness.py`, {when}\n")
    floor()
    convolved()
    agreement()
    interval_cpu()


if __name__ == "__main__":
    main()
