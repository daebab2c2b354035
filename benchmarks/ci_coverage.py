"""The interval a report prints beside each row, judged as a procedure: its true coverage.

Every row of an `analyze` report prints a 95% bootstrap interval of the mean difference
(`osustat.cellwise.cell_conditional` calls `bootstrap_ci(d, level=.95, clusters=...,
n_resamples=2000)`: BCa, whole episodes resampled at the query unit). A user reads it as
"the true mean lies here 95% of the time". This benchmark measures how often it does, on
rows drawn from designs the project did not pick for it:

- the seven designs of `benchmarks/mde_procedure.py` (normal, t3, lognormal, zero-inflated,
  0/1, recall-like, clustered episode means), n = 6, 10, 20, 50, each at effect 0 and at a
  medium effect (half the design's null sd, inside its range);
- clustered **queries** (the query unit of LoCoMo-like data: n queries spread over c = 5 or 10
  conversations of equal or unequal sizes, 0/1 hits with a per-conversation rate U(.2, .6)
  and a per-conversation effect, the effect + U(-.15, .15)), where the interval resamples whole
  conversations, n = 20, 50, 200;
- `--held-out K` designs drawn at random by `mde_procedure.held_out_designs(K, --held-out-seed)`
  (a family wider than the seven; the seed is fixed before the run and never re-drawn).

For each cell: `--rows` rows, each given to `bootstrap_ci` exactly as the report calls it;
the share whose interval holds the design's true mean (the effect: every design's mean
difference equals it), the shares missing low and high, the median width; beside it, on the
same rows and the same resamples, Hesterberg's expanded BCa (`bootstrap_ci(...,
expand=True)`, fixed from the literature before this was run) and Student's t interval
(cluster-robust, k - 1 df, with clusters); and for each the share of rows where the interval
and the sign-flip test's p disagree about 0 (one excludes 0, the other does not).

    nice -n 10 .venv/bin/python benchmarks/ci_coverage.py [--rows 400] [--held-out 8]

Writes benchmarks/results-ci_coverage.md.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from mde_procedure import DESIGNS, differences, held_out_designs
from scipy import stats

from osustat import bootstrap_ci, signflip_tests

ROOT = Path(__file__).resolve().parents[1]
NS = (6, 10, 20, 50)
LEVEL = 0.95
BOOT = 2_000  # the report's bootstrap resamples (osustat.analyze's default)
TEST_RESAMPLES = 2_000
Clustered = Callable[[float, int, int, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def clustered_queries(c: int, unequal: bool) -> Clustered:
    """n queries over c conversations, 0/1 hits: a conversation's baseline rate U(.2, .6) and
    its own effect, the design's effect + U(-.15, .15) (so the differences of one
    conversation are correlated: its gain is shared); sizes equal, or -- `unequal` -- in
    proportion to 1, 2, ..., c (at least one query each). The truth is the effect (the
    conversation effects have mean 0 whatever the sizes). Returns (differences, conversation
    of each query)."""

    def draw(e: float, n: int, r: int, g: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if unequal:
            sizes = np.maximum(1, np.floor(n * np.arange(1, c + 1) / (c * (c + 1) / 2)))
            sizes[-1] += n - sizes.sum()
            conv = np.repeat(np.arange(c), sizes.astype(int))
        else:
            conv = np.arange(n) % c
        base = g.uniform(0.2, 0.6, (c, r))
        gain = e + g.uniform(-0.15, 0.15, (c, r))
        t = g.random((n, r)) < (base + gain)[conv]
        b = g.random((n, r)) < base[conv]
        return t.astype(float) - b, conv

    return draw


def null_sd(draw: Callable, g: np.random.Generator) -> float:
    return float(differences(draw(0.0, 4000, 1, g)).std())


def t_interval(d: np.ndarray, clusters: np.ndarray | None) -> tuple[float, float]:
    """Student's t interval of the mean; with clusters, of the ratio estimator with the
    cluster-robust (CR1) variance and k - 1 degrees of freedom."""
    if clusters is None:
        k, m, se = d.size, d.mean(), d.std(ddof=1) / math.sqrt(d.size)
    else:
        sums = np.bincount(clusters, weights=d)
        sizes = np.bincount(clusters).astype(float)
        k, m = sums.size, sums.sum() / sizes.sum()
        r = sums - m * sizes
        se = math.sqrt(k / (k - 1) * float(r @ r)) / sizes.sum()
    h = float(stats.t.ppf(0.5 + LEVEL / 2, k - 1)) * se
    return m - h, m + h


def judge(d: np.ndarray, clusters: np.ndarray | None, truth: float, seed: int) -> dict:
    """Coverage of the printed interval, its expanded form and Student's t, over the columns
    of d (n, rows); each row's two bootstrap intervals use the same resamples."""
    tests = signflip_tests(d, n_resamples=TEST_RESAMPLES, rng=seed)
    p = np.array([t.pvalue for t in tests])
    ends: dict[str, list[tuple[float, float]]] = {"bca": [], "expanded": [], "t": []}
    for j in range(d.shape[1]):
        for key, expand in (("bca", False), ("expanded", True)):
            ci = bootstrap_ci(d[:, j], level=LEVEL, clusters=clusters, n_resamples=BOOT,
                              rng=seed + 1 + j, expand=expand)  # fmt: skip
            ends[key].append((ci.low, ci.high))
        ends["t"].append(t_interval(d[:, j], clusters))
    out: dict[str, float] = {}
    for key, pairs in ends.items():
        low, high = np.array(pairs).T
        out[f"{key}_cover"] = float(np.mean((low <= truth) & (truth <= high)))
        out[f"{key}_width"] = float(np.median(high - low))
        out[f"{key}_disagree"] = float(np.mean(((low > 0) | (high < 0)) != (p <= 1 - LEVEL)))
        if key == "bca":
            out["miss_low"] = float(np.mean(high < truth))
            out["miss_high"] = float(np.mean(low > truth))
    return out


def line(name: str, n: int, k: int | None, e: float, f: dict) -> str:
    cells = [name, str(n), str(k) if k is not None else "-", f"{e:.3f}"]
    cells += [f"{f[x]:.3f}" for x in ("bca_cover", "miss_low", "miss_high", "bca_width")]
    cells += [f"{f[x]:.3f}" for x in ("expanded_cover", "expanded_width", "t_cover", "t_width")]
    cells += [f"{f[x]:.3f}" for x in ("bca_disagree", "expanded_disagree", "t_disagree")]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--held-out", type=int, default=8)
    ap.add_argument("--held-out-seed", type=int, default=38)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results-ci_coverage.md")
    args = ap.parse_args()
    t0 = time.time()
    load0 = os.getloadavg()[0]
    g = np.random.default_rng(args.seed)
    head = [
        "| design | n | clusters | true mean | BCa covers | misses low | misses high | BCa width "
        "| expanded BCa covers | expanded width | t covers | t width | BCa disagrees about 0 "
        "| expanded disagrees | t disagrees |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines = []
    designs = dict(DESIGNS)
    held = held_out_designs(args.held_out, args.held_out_seed) if args.held_out else {}
    for name, (draw, top) in {**designs, **held}.items():
        sd = null_sd(draw, g)
        for e in (0.0, min(0.5 * sd, 0.8 * top)):
            for n in NS:
                seed = int(g.integers(2**31))
                d = differences(draw(e, n, args.rows, np.random.default_rng(seed)))
                lines.append(line(name, n, None, e, judge(d, None, e, seed)))
                print(lines[-1], flush=True)
    for unequal in (False, True):
        name = "clustered queries" + (", unequal sizes" if unequal else "")
        for c in (5, 10):
            draw_c = clustered_queries(c, unequal)
            for e in (0.0, 0.15):
                for n in (20, 50, 200):
                    seed = int(g.integers(2**31))
                    d, conv = draw_c(e, n, args.rows, np.random.default_rng(seed))
                    lines.append(line(name, n, c, e, judge(d, conv, e, seed)))
                    print(lines[-1], flush=True)
    cmd = "nice -n 10 .venv/bin/python benchmarks/ci_coverage.py " + " ".join(sys.argv[1:])
    text = [
        "# The printed 95% interval as a procedure: coverage",
        "",
        f"`{cmd.strip()}`; {args.rows} rows per line; the report's call "
        f"(`bootstrap_ci`, BCa, {BOOT} resamples, conversations resampled for clustered "
        f"queries) beside its expanded form (`expand=True`, the same resamples) and Student's "
        f"t (CR1, k - 1 df with clusters); p of the sign-flip test at {TEST_RESAMPLES} "
        f"resamples where the exact null is out of reach; load average at the start "
        f"{load0:.1f}.",
        "",
        "A line's Monte Carlo SE of a coverage near .95 is about "
        f"{math.sqrt(0.95 * 0.05 / args.rows):.3f}. 'disagree about 0': the share of rows "
        "where the interval excludes 0 and the test's p > .05, or the other way round. "
        f"Held-out designs: `held_out_designs({args.held_out}, {args.held_out_seed})`.",
        "",
        *head,
        *lines,
        "",
        f"Total {time.time() - t0:.0f} s; load average at the end {os.getloadavg()[0]:.1f}.",
        "",
    ]
    args.out.write_text("\n".join(text))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
