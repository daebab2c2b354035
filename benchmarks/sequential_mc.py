"""The sequential Monte Carlo rule of the audit (issue 35 item 13): type-I error and decision
error against a fixed resample count.

The rule (:mod:`osustat.audit.precision`): a Monte Carlo p within 2.576 standard errors of
alpha is recomputed with 4x the resamples on fresh draws until settled or the cap; unsettled
at the cap is "undecided". Two measurements on the two-sided paired sign-flip test
(n = 30 normal differences, Monte Carlo at every count):

1. type-I error: null data sets (mean 0); rejection rate at alpha = .05 of the fixed rule
   (B = 999 and 10,000: reject when p <= .05) and of the sequential rule (start 999, cap 2^16;
   undecided counted apart);
2. decision error: data sets whose reference p (2^22 resamples, SE <= .00011) lies within
   [.03, .07], i.e. near alpha; the share whose side of .05 differs from the reference's, for
   the fixed rules and the sequential one (undecided apart). Reference p's within 2.576 of
   their own SE of .05 are left out (their side is unknown) and counted.

    nice -n 10 .venv/bin/python benchmarks/sequential_mc.py [--reps 2000 --near 300]

Writes benchmarks/results-sequential_mc.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from osustat.audit.precision import sequential_pvalue
from osustat.signflip import signflip_tests

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 0.05
N = 30
START, CAP = 999, 2**16


def pvalue(d: np.ndarray, b: int, gen: object) -> tuple[float, float]:
    r = signflip_tests([d], n_resamples=b, rng=gen)[0]
    return r.pvalue, r.pvalue_se


def decide(d: np.ndarray, seed: int) -> dict[str, str]:
    """Each rule's decision for `d`: 'reject', 'keep' or 'undecided'."""
    out = {}
    for b in (START, 10_000):
        p, _ = pvalue(d, b, seed)
        out[f"fixed B = {b:,}"] = "reject" if p <= ALPHA else "keep"
    seq = sequential_pvalue(
        lambda b, g: pvalue(d, b, g),
        alpha=ALPHA,
        n_resamples=START,
        max_resamples=CAP,
        rng=seed,
    )
    if not seq.settled:
        out["sequential"] = "undecided"
    else:
        out["sequential"] = "reject" if seq.pvalue <= ALPHA else "keep"
    return out


def rate(k: int, n: int) -> str:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson") if n else (0.0, 0.0)
    return f"{k / n if n else 0:.4f} [{lo:.4f}, {hi:.4f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="null data sets")
    parser.add_argument("--near", type=int, default=300, help="data sets near alpha")
    args = parser.parse_args()
    start, load = time.time(), os.getloadavg()[0]
    rules = [f"fixed B = {START:,}", "fixed B = 10,000", "sequential"]
    gen = np.random.default_rng(13)
    rejects = dict.fromkeys(rules, 0)
    undecided_null = 0
    for r in range(args.reps):
        dec = decide(gen.standard_normal(N), seed=r)
        for k in rules:
            rejects[k] += dec[k] == "reject"
        undecided_null += dec["sequential"] == "undecided"
    lines = [
        "# Sequential Monte Carlo rule (issue 35 item 13)",
        "",
        f"`nice -n 10 .venv/bin/python benchmarks/sequential_mc.py --reps {args.reps} --near "
        f"{args.near}`; two-sided sign-flip test, n = {N} normal differences, alpha = .05; "
        f"sequential: start {START:,}, x4 per look, cap {CAP:,}; load average at the start "
        f"{load:.1f}.",
        "",
        f"## Type-I error ({args.reps} null data sets; rejection rate, Wilson 95%)",
        "",
        "| rule | rejection rate |",
        "|---|---|",
        *(f"| {k} | {rate(rejects[k], args.reps)} |" for k in rules),
        "",
        f"Sequential undecided at the cap: {undecided_null} of {args.reps}.",
        "",
    ]
    print("\n".join(lines), flush=True)
    wrong = dict.fromkeys(rules, 0)
    undecided = kept = unknown = tried = 0
    gen = np.random.default_rng(14)
    while kept < args.near:
        tried += 1
        d = gen.standard_normal(N) + gen.uniform(0.3, 0.45)  # p's around .05 at n = 30
        if not 0.025 <= pvalue(d, 10_000, tried)[0] <= 0.075:  # cheap screen first
            continue
        ref = signflip_tests([d], n_resamples=2**22, rng=10_000 + tried)[0]
        if not 0.03 <= ref.pvalue <= 0.07:
            continue
        if abs(ref.pvalue - ALPHA) <= 2.576 * ref.pvalue_se:
            unknown += 1
            continue
        kept += 1
        truth = "reject" if ref.pvalue <= ALPHA else "keep"
        dec = decide(d, seed=20_000 + kept)
        for k in rules:
            wrong[k] += dec[k] not in (truth, "undecided")
        undecided += dec["sequential"] == "undecided"
    lines += [
        f"## Decision error ({args.near} data sets with reference p in [.03, .07]; reference "
        "2^22 resamples)",
        "",
        "| rule | side of .05 differs from the reference (Wilson 95%) |",
        "|---|---|",
        *(f"| {k} | {rate(wrong[k], args.near)} |" for k in rules),
        "",
        f"Sequential undecided at the cap: {undecided} of {args.near}. Left out: {unknown} "
        f"data sets whose reference p was itself within 2.576 SE of .05 ({tried} drawn).",
        "",
        f"Total {time.time() - start:.0f} s.",
    ]
    out = ROOT / "benchmarks" / "results-sequential_mc.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[-8:]))


if __name__ == "__main__":
    main()
