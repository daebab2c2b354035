"""How often an upper bound for the sd read off a small, not-normal-shaped sample reaches the
law's sd (issue 35: `plan`'s ranges from heavy-tailed pilots, the premise of a wider interval).

For each law and sample size k, samples are drawn until `--samples` of them; those of 12 or
more values that pass Shapiro-Wilk at .05 are skipped (they print a number, not a range: rule
D / P2), the rest get four one-sided 90% upper bounds for sigma (the upper end of an 80%
two-sided interval, as the ranges use):

- ``delta``: s * sqrt(nu / chi2_{.10, nu}), nu = min(k - 1, 2k / (g2 + 2)) -- the rule in
  `osustat.power.not_normal_shape` / `sd_interval_ends`;
- ``chi2``: the same with nu = k - 1 (normal theory; rules Z and P below 12 values);
- ``bonett``: Bonett (2006, CSDA 50: 775-782), the kurtosis-adjusted interval (trimmed-mean
  kurtosis, c = k / (k - z));
- ``bootstrap``: the 90th percentile of 400 bootstrap sds.

Prints the share of samples whose bound is at or above the law's sd (nominal .90).

    .venv/bin/python benchmarks/sd_upper_cover.py [--samples 1500] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from osustat.power import sd_interval_ends

Law = tuple[str, Callable[[np.random.Generator, int], np.ndarray], float]


def laws() -> list[Law]:
    e = math.e
    return [
        ("lognormal sigma 1", lambda g, k: np.exp(g.standard_normal(k)), math.sqrt((e - 1) * e)),
        (
            "lognormal sigma .5",
            lambda g, k: np.exp(0.5 * g.standard_normal(k)),
            math.sqrt((math.exp(0.25) - 1) * math.exp(0.25)),
        ),
        ("t3", lambda g, k: g.standard_t(3, k), math.sqrt(3)),
        ("t6", lambda g, k: g.standard_t(6, k), math.sqrt(1.5)),
        ("laplace", lambda g, k: g.laplace(0, 1, k), math.sqrt(2)),
        ("normal", lambda g, k: g.standard_normal(k), 1.0),
    ]


def upper_bounds(x: np.ndarray, g: np.random.Generator) -> dict[str, float]:
    k, s = x.size, float(x.std(ddof=1))
    g2 = float(stats.kurtosis(x))
    out = {}
    for name, nu in (("delta", min(k - 1.0, 2 * k / max(g2 + 2, 1e-9))), ("chi2", k - 1.0)):
        out[name] = sd_interval_ends(s, nu)[1]  # the ranges' own interval
    z = stats.norm.ppf(0.90)
    m = stats.trim_mean(x, 1 / (2 * math.sqrt(k - 4)))
    g4 = k * np.sum((x - m) ** 4) / np.sum((x - x.mean()) ** 2) ** 2
    c = k / (k - z)
    se = c * math.sqrt(max(g4 - (k - 3) / k, 0.0) / (k - 1))
    out["bonett"] = math.sqrt(math.exp(math.log(c * s * s) + z * se))
    boot = x[g.integers(0, k, (400, k))].std(axis=1, ddof=1)
    out["bootstrap"] = float(np.quantile(boot, 0.90))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1500)
    ap.add_argument("--sizes", default="10,20")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    start = time.perf_counter()
    print("# Coverage of a 90% upper bound for the sd from samples not normal-shaped\n")
    print(
        f"`.venv/bin/python benchmarks/sd_upper_cover.py --samples {args.samples} --sizes "
        f"{args.sizes} --seed {args.seed}`; samples of 12 or more that pass Shapiro-Wilk (.05) "
        "skipped.\n"
    )
    print(
        "| law | k | share kept (failing Shapiro-Wilk; all below 12) | delta (the rule) | "
        "chi2, k - 1 | Bonett | bootstrap |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, draw, sigma in laws():
        for k in map(int, args.sizes.split(",")):
            g = np.random.default_rng([args.seed, k, len(name)])
            hits: dict[str, list[bool]] = {}
            kept = 0
            for _ in range(args.samples):
                x = draw(g, k)
                if k >= 12 and stats.shapiro(x).pvalue >= 0.05:
                    continue
                kept += 1
                for method, bound in upper_bounds(x, g).items():
                    hits.setdefault(method, []).append(bound >= sigma)
            cover = " | ".join(f"{np.mean(hits[m]):.3f}" for m in ("delta", "chi2", "bonett",
                                                                   "bootstrap"))  # fmt: skip
            print(f"| {name} | {k} | {kept / args.samples:.2f} | {cover} |")
    print(f"\nTotal {time.perf_counter() - start:.0f} s.")


if __name__ == "__main__":
    main()
