"""Calibration of the statistics core: type-I error of every test under its null.

Part A, paired sign-flip test (``signflip_tests``): n from 5 to 500; normal, 0/1 (P(d != 0) =
.3) and heavy-tailed (t with 2 df; Cauchy) differences symmetric about 0.
Part B, every interaction method: balanced (5 or 50 per cell) and very unbalanced cells
(5/15/80/400), with normal, 0/1 and t(2) differences, the same law in every cell.

For each, the rejection rate at alpha = .01 and .05 with its binomial 99% interval; a rate
above the interval is flagged anti-conservative. Run (about 10 min on 2 busy cores):

    nice .venv/bin/python benchmarks/calibration.py [--reps 2000] [--interaction-reps 500]
        [--resamples 999] [--seed 0] [--out benchmarks/results-calibration.md]

``docs/validation.md`` quotes the output; tests/osustat/test_calibration_small.py runs a
small version.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from osustat import INTERACTION_METHODS, interaction_test, signflip_tests

CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")
ALPHAS = (0.01, 0.05)


def draw_signflip(kind: str, rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    if kind == "normal":
        return rng.normal(0, 1, (n, reps))
    if kind == "0/1 (P(d!=0)=.3)":
        nz = rng.random((n, reps)) < 0.3
        return np.where(nz, np.where(rng.random((n, reps)) < 0.5, 1.0, -1.0), 0.0)
    if kind == "t(2)":
        return rng.standard_t(2, (n, reps))
    if kind == "cauchy":
        return rng.standard_cauchy((n, reps))
    raise ValueError(kind)


def draw_cells(kind: str, rng: np.random.Generator, sizes: tuple[int, ...]) -> np.ndarray:
    n = sum(sizes)
    if kind == "normal":
        return rng.normal(0, 1, n)
    if kind == "0/1 (P(d!=0)=.4)":
        return np.where(rng.random(n) < 0.4, np.where(rng.random(n) < 0.5, 1.0, -1.0), 0.0)
    if kind == "t(2)":
        return rng.standard_t(2, n)
    raise ValueError(kind)


def band(reps: int, alpha: float) -> tuple[float, float]:
    lo, hi = stats.binom.ppf([0.005, 0.995], reps, alpha) / reps
    return float(lo), float(hi)


def cell(rate: float, reps: int, alpha: float) -> str:
    lo, hi = band(reps, alpha)
    flag = " (anti-conservative)" if rate > hi else (" (conservative)" if rate < lo else "")
    return f"{rate:.4f}{flag}"


def part_a(reps: int, resamples: int, seed: int) -> list[str]:
    lines = [
        f"### A. Paired sign-flip test, reps={reps}, resamples={resamples}",
        "",
        "99% bands: "
        + ", ".join(f"alpha={a}: [{band(reps, a)[0]:.4f}, {band(reps, a)[1]:.4f}]" for a in ALPHAS),
        "",
        "| data | n | method | type-I at .01 | type-I at .05 |",
        "|---|---|---|---|---|",
    ]
    kinds = ("normal", "0/1 (P(d!=0)=.3)", "t(2)", "cauchy")
    for k, kind in enumerate(kinds):
        for n in (5, 10, 20, 50, 100, 500):
            rng = np.random.default_rng([seed, k, n])
            d = draw_signflip(kind, rng, n, reps)
            res = signflip_tests(d, n_resamples=resamples, rng=rng)
            p = np.array([r.pvalue for r in res])
            methods = sorted({r.method for r in res})
            rates = [cell(float(np.mean(p <= a)), reps, a) for a in ALPHAS]
            lines.append(f"| {kind} | {n} | {'/'.join(methods)} | {rates[0]} | {rates[1]} |")
            print(lines[-1], flush=True)
    return lines


def part_b(reps: int, resamples: int, seed: int) -> list[str]:
    lines = [
        "",
        f"### B. Interaction methods, reps={reps}, resamples={resamples}",
        "",
        "99% bands: "
        + ", ".join(f"alpha={a}: [{band(reps, a)[0]:.4f}, {band(reps, a)[1]:.4f}]" for a in ALPHAS),
        "",
        "| design | data | " + " | ".join(f"{m} .01 / .05" for m in INTERACTION_METHODS) + " |",
        "|---|---|" + "---|" * len(INTERACTION_METHODS),
    ]
    designs = {
        "balanced 5/5/5/5": (5, 5, 5, 5),
        "balanced 50x4": (50, 50, 50, 50),
        "very unbalanced 5/15/80/400": (5, 15, 80, 400),
    }
    for i, (name, sizes) in enumerate(designs.items()):
        labels = np.repeat(CELLS, sizes)
        for j, kind in enumerate(("normal", "0/1 (P(d!=0)=.4)", "t(2)")):
            rng = np.random.default_rng([seed, 100 + i, j])
            p = {m: [] for m in INTERACTION_METHODS}
            t0 = time.perf_counter()
            for _ in range(reps):
                d = draw_cells(kind, rng, sizes)
                child = int(rng.integers(2**63 - 1))
                for m in INTERACTION_METHODS:
                    p[m].append(
                        interaction_test(
                            d, labels, method=m, n_resamples=resamples, rng=child
                        ).pvalue
                    )
            row = []
            for m in INTERACTION_METHODS:
                arr = np.asarray(p[m])
                row.append(" / ".join(cell(float(np.mean(arr <= a)), reps, a) for a in ALPHAS))
            lines.append(
                f"| {name} | {kind} | "
                + " | ".join(row)
                + f" |  <!-- {time.perf_counter() - t0:.0f}s -->"
            )
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--interaction-reps", type=int, default=500)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results-calibration.md")
    ap.add_argument("--skip-interaction", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    lines = ["# Calibration (type-I error) of the statistics core", ""]
    lines += part_a(args.reps, args.resamples, args.seed)
    if not args.skip_interaction:
        lines += part_b(args.interaction_reps, args.resamples, args.seed)
    lines += ["", f"Total {time.perf_counter() - t0:.0f}s. Command: see module docstring."]
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
