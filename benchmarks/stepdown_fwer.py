"""Family-wise error and power of the Westfall–Young step-down (maxT, minP) against Holm and
Benjamini–Hochberg, on correlated method comparisons, by simulation.

Every design draws per-unit values for several methods on the *same* units (queries), so the
comparisons of a family are correlated, and tests them as ``osustat.analyze`` does with
``correction='maxt'`` / ``'minp'``: :func:`osustat.stepdown.westfall_young` with one sign per
unit shared by the family; Holm and BH take the same resamples' marginal p-values.

Complete null (every method equal in law on each unit): the rate of data sets with any
rejection (FWER; for BH also its FDR) at alpha = .05, with the binomial 99% band of .05.
Partial null (two of four variants better, by a shift chosen so that Holm's power is
middling at n = 30, the same shift for every procedure): the FWER among the true nulls
(strong control) and the power -- mean share of the false nulls rejected. Run:

    nice -n 10 .venv/bin/python benchmarks/stepdown_fwer.py [--reps 2000] [--resamples 999] \
        [--seed 0] [--out benchmarks/results-stepdown_fwer.md]

Results are recorded in docs/statistics.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

from osustat.multitest import adjust_pvalues
from osustat.stepdown import westfall_young

Draw = Callable[[np.random.Generator, int], np.ndarray]
PROCEDURES = ("maxt", "minp", "holm", "fdr_bh")


def variants_vs_baseline(r: float, k: int = 4, shift: tuple[float, ...] = ()) -> Draw:
    """k variants of one method (noise correlation r between variants) against a baseline,
    normal noise; d_j = variant_j - baseline, corr(d_j, d_l) = (1 + r) / 2. `shift` adds
    a mean to the first variants (partial null)."""
    lift = np.zeros(k)
    lift[: len(shift)] = shift

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        common = rng.normal(size=(n, 1))
        own = rng.normal(size=(n, k))
        variants = np.sqrt(r) * common + np.sqrt(1 - r) * own + lift
        return variants - rng.normal(size=(n, 1))

    return draw


def binary_variants(r: float, hit: float, k: int = 4, shift: tuple[float, ...] = ()) -> Draw:
    """0/1 outcomes (P(hit) = `hit` per method) from a latent normal per query (query
    difficulty, correlation .5 with every method) plus correlation r among the variants;
    the baseline is exchangeable with each variant but the differences are *not* jointly
    symmetric when `hit` is far from .5 (stepdown module docstring)."""
    cut = stats.norm.ppf(1 - hit)
    lift = np.zeros(k)
    lift[: len(shift)] = shift

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        query = rng.normal(size=(n, 1))
        family = rng.normal(size=(n, 1))
        own = rng.normal(size=(n, k))
        noise = np.sqrt(r) * family + np.sqrt(1 - r) * own
        variants = np.sqrt(0.5) * query + np.sqrt(0.5) * noise + lift
        base = np.sqrt(0.5) * query + np.sqrt(0.5) * rng.normal(size=(n, 1))
        return (variants > cut).astype(float) - (base > cut).astype(float)

    return draw


def all_pairs_exchangeable(k: int = 4) -> Draw:
    """Every pair of k exchangeable methods with skewed (centred exponential) noise around a
    per-query level: 6 comparisons for k = 4, correlations +-.5."""

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        y = rng.normal(size=(n, 1)) + rng.exponential(1.0, size=(n, k))
        return np.column_stack([y[:, a] - y[:, b] for a in range(k) for b in range(a + 1, k)])

    return draw


def budgets_of_one_pair(rho: float, budgets: int = 4) -> Draw:
    """One method pair at several budgets: each method's value at a budget is the query's
    level plus skewed (exponential) noise, AR(1) correlated `rho` across budgets. The two
    methods are exchangeable, so swapping them negates every budget's difference at once:
    the joint sign-flip null holds exactly."""

    def noise(rng: np.random.Generator, n: int) -> np.ndarray:
        cols = [rng.exponential(1.0, n)]
        for _ in range(budgets - 1):
            cols.append(rho * cols[-1] + np.sqrt(1 - rho**2) * rng.exponential(1.0, n))
        return np.column_stack(cols)

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return noise(rng, n) - noise(rng, n)

    return draw


def asymmetric_differences(rho: float, budgets: int = 4) -> Draw:
    """Differences that are centred exponentials (mean 0, skewed), AR(1) across budgets: not
    a difference of exchangeable methods, so each sign-flip test's own null is violated;
    every procedure inherits that (a check of the marginal test, not of the correction)."""

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        cols = [rng.exponential(1.0, n) - 1.0]
        for _ in range(budgets - 1):
            fresh = rng.exponential(1.0, n) - 1.0
            cols.append(rho * cols[-1] + np.sqrt(1 - rho**2) * fresh)
        return np.column_stack(cols)

    return draw


NULL_DESIGNS: list[tuple[str, Draw]] = [
    ("4 variants vs baseline, normal, variant corr .9 (corr of d .95)", variants_vs_baseline(0.9)),
    ("4 variants vs baseline, normal, variant corr 0 (corr of d .5)", variants_vs_baseline(0.0)),
    ("4 variants vs baseline, 0/1 metric, P(hit) .8, corr .9", binary_variants(0.9, 0.8)),
    ("4 variants vs baseline, 0/1 metric, P(hit) .5, corr .9", binary_variants(0.9, 0.5)),
    ("all 6 pairs of 4 methods, skewed noise", all_pairs_exchangeable()),
    ("1 pair at 4 budgets, exchangeable skewed methods, AR corr .8", budgets_of_one_pair(0.8)),
    (
        "asymmetric differences (centred exponential) at 4 budgets, AR corr .8",
        asymmetric_differences(0.8),
    ),
]

POWER_DESIGNS: list[tuple[str, Draw, int]] = [
    (
        "normal, variant corr .9, 2 of 4 shifted by .7 sd",
        variants_vs_baseline(0.9, shift=(0.7, 0.7)),
        2,
    ),
    (
        "normal, variant corr .5, 2 of 4 shifted by .7 sd",
        variants_vs_baseline(0.5, shift=(0.7, 0.7)),
        2,
    ),
    (
        "0/1 metric P(hit) .8, corr .9, 2 of 4 lifted by .9 latent sd",
        binary_variants(0.9, 0.8, shift=(0.9, 0.9)),
        2,
    ),
]


def decisions(d: np.ndarray, resamples: int, seed: int) -> dict[str, np.ndarray]:
    out = {}
    for method in ("maxt", "minp"):
        res = westfall_young(d, method=method, n_resamples=resamples, rng=seed)
        out[method] = res.reject
    marginal = res.pvalues  # same pool of sign vectors for both step-downs (same seed)
    for method in ("holm", "fdr_bh"):
        out[method] = adjust_pvalues(marginal, method=method).reject
    return out


def band(reps: int, alpha: float = 0.05) -> tuple[float, float]:
    lo, hi = stats.binom.ppf([0.005, 0.995], reps, alpha) / reps
    return float(lo), float(hi)


def run_null(reps: int, resamples: int, seed: int, sizes: tuple[int, ...]) -> list[str]:
    lo, hi = band(reps)
    lines = [
        "### Complete null: FWER (any rejection) at α = .05; binomial 99% band "
        f"[{lo:.4f}, {hi:.4f}]",
        "",
        "| design | n | " + " | ".join(PROCEDURES) + " | CPU s |",
        "|---|---|" + "---|" * (len(PROCEDURES) + 1),
    ]
    for name, draw in NULL_DESIGNS:
        for n in sizes:
            rng = np.random.default_rng([seed, n, len(lines)])
            hits = dict.fromkeys(PROCEDURES, 0)
            t0 = time.process_time()
            for r in range(reps):
                got = decisions(draw(rng, n), resamples, seed * 1_000_003 + r)
                for m in PROCEDURES:
                    hits[m] += bool(got[m].any())
            cells = []
            for m in PROCEDURES:
                rate = hits[m] / reps
                mark = " (above band)" if rate > hi else (" (below band)" if rate < lo else "")
                cells.append(f"{rate:.4f}{mark}")
            cpu = time.process_time() - t0
            lines.append(f"| {name} | {n} | " + " | ".join(cells) + f" | {cpu:.0f} |")
            print(lines[-1], flush=True)
    return lines


def run_power(reps: int, resamples: int, seed: int, n: int) -> list[str]:
    lines = [
        f"### Partial null, n = {n}: power (mean share of the false nulls rejected) / FWER "
        "among the true nulls",
        "",
        "| design | " + " | ".join(PROCEDURES) + " |",
        "|---|" + "---|" * len(PROCEDURES),
    ]
    for name, draw, n_false in POWER_DESIGNS:
        rng = np.random.default_rng([seed, n, 7, len(lines)])
        power = dict.fromkeys(PROCEDURES, 0.0)
        errors = dict.fromkeys(PROCEDURES, 0)
        for r in range(reps):
            got = decisions(draw(rng, n), resamples, seed * 1_000_003 + r)
            for m in PROCEDURES:
                power[m] += got[m][:n_false].mean()
                errors[m] += bool(got[m][n_false:].any())
        cells = [f"{power[m] / reps:.3f} / {errors[m] / reps:.4f}" for m in PROCEDURES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sizes", default="10,30,100")
    ap.add_argument("--power-n", type=int, default=30)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sizes = tuple(int(x) for x in args.sizes.split(","))
    t0 = time.process_time()
    lines = [
        "# Westfall–Young step-down vs Holm and BH on correlated comparisons",
        "",
        f"Command: `nice -n 10 .venv/bin/python benchmarks/stepdown_fwer.py --reps {args.reps} "
        f"--resamples {args.resamples} --seed {args.seed} --sizes {args.sizes} "
        f"--power-n {args.power_n}`",
        "",
        f"reps = {args.reps} data sets per row, {args.resamples} random sign vectors per "
        "family (osustat.stepdown.westfall_young; Holm and BH on the same resamples' "
        "marginal p). CPU seconds per row (time.process_time).",
        "",
    ]
    lines += run_null(args.reps, args.resamples, args.seed, sizes)
    lines.append("")
    lines += run_power(args.reps, args.resamples, args.seed, args.power_n)
    lines += ["", f"Total CPU {time.process_time() - t0:.0f} s."]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
