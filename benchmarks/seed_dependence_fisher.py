"""Fisher's combination over dependent seeds: type-I error by between-seed correlation.

Under the null (no paired effect), per-query differences of k seeds share a common part:
``d_qs = sqrt(rho) c_q + sqrt(1 - rho) e_qs``. Each seed gets its own sign-flip p-value and
Fisher combines them as if independent. Prints the rejection rate at alpha = .05, the source of
`osustat.seed_dependence`'s default threshold (rho > .3). Run:

    .venv/bin/python benchmarks/seed_dependence_fisher.py [--reps 1000] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from osustat import fisher_combine, paired_signflip_test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rhos = (0.0, 0.1, 0.2, 0.3, 0.5, 0.9)
    print(f"reps={args.reps}, queries={args.queries}, 199 resamples per seed, alpha=.05")
    print("| seeds | " + " | ".join(f"rho={r}" for r in rhos) + " |")
    print("|---|" + "---|" * len(rhos))
    for k in (3, 5):
        rates = []
        for rho in rhos:
            rejections = 0
            for _ in range(args.reps):
                common = rng.standard_normal((args.queries, 1))
                x = np.sqrt(rho) * common + np.sqrt(1 - rho) * rng.standard_normal(
                    (args.queries, k)
                )
                ps = [
                    paired_signflip_test(
                        x[:, j], np.zeros(args.queries), n_resamples=199, rng=rng
                    ).pvalue
                    for j in range(k)
                ]
                rejections += fisher_combine(ps).pvalue <= 0.05
            rates.append(rejections / args.reps)
        print(f"| {k} | " + " | ".join(f"{r:.3f}" for r in rates) + " |", flush=True)


if __name__ == "__main__":
    main()
