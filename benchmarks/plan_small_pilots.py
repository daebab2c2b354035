"""`plan` from pilots of fewer than 12 differences, judged as a procedure (issue 35, rule P).

The designs of `benchmarks/mde_procedure.py`, each at one effect fixed before the first run:
the design's true MDE at n = 50 in `benchmarks/results-mde_procedure.md` (so the n a study
needs is about 50). For each pilot size (6, 10, and 20, where a pilot prints one n) and pilot
(drawn at effect 0, an A/A run, or at the effect), `--pilots` pilots each plan n as `plan_cells`
calls `plan` (with the units' values where the design has them); the power that n achieves is
the rejection rate of `signflip_tests` (alpha .05) on `--reps` fresh data sets of that size.
Reported per cell: the share of pilots printing a range, and of those the share whose range
holds n = 50; over all pilots, the median planned n (the value `plan` returns: a range's
conservative end), the median achieved power there and the share below .6 (the issue's
bound: at most 20%)::

    nice -n 10 .venv/bin/python benchmarks/plan_small_pilots.py [--pilots 40] [--reps 400]
        [--out benchmarks/results-plan_small_pilots.md]

``--held-out K --design-seed S`` plans on the K designs `mde_procedure.held_out_designs` draws
instead (designs nobody picked: an unselected estimate of the rules chosen on the seven), each
at its own true MDE at n = 50, read off its true power curve (`mde_procedure.power_curve`:
`--curve-reps` data sets per grid point, 500 sign vectors); a design whose test cannot reach .80
at n = 50 is listed as skipped.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from functools import cache

import numpy as np

from osustat import plan, signflip_tests

sys.path.insert(0, os.path.dirname(__file__))
from mde_procedure import DESIGNS, differences, held_out_designs, power_curve, true_mde

#: Each design's true MDE at n = 50 (results-mde_procedure.md, fixed before the first run).
EFFECTS = {
    "normal": 0.418,
    "t3": 0.652,
    "lognormal": 0.673,
    "zero-inflated": 0.293,
    "0/1": 0.287,
    "recall-like": 0.170,
    "clustered": 0.147,
}
TRUE_N = 50

#: A second statistician's designs (stop 56; the effect carried by a random 25% / 50% of the
#: units), planned only when `--designs` names them: their true MDE at n = 50 from
#: results-mde_procedure-subset.md.
SUBSET_EFFECTS = {"subset-25": 0.551, "subset-50": 0.458}

#: The designs planned for: name -> (draw, effect planned for); the seven above by default.
PLANNED = {name: (DESIGNS[name][0], effect) for name, effect in (EFFECTS | SUBSET_EFFECTS).items()}


@cache
def achieved(name: str, n: int, reps: int, seed: int) -> float:
    """Rejection rate (alpha .05) on `reps` data sets of size n from design `name`."""
    draw, effect = PLANNED[name]
    x = differences(draw(effect, n, reps, np.random.default_rng([seed, n, 13])))
    return float(np.mean([t.pvalue <= 0.05 for t in signflip_tests(x, rng=seed)]))


def held_out(args: argparse.Namespace) -> list[str]:
    """Fill :data:`PLANNED` with the held-out designs, each at its true MDE at n = 50; the
    names of those skipped (their test cannot reach .80 at n = 50)."""
    PLANNED.clear()
    skipped = []
    for i, (name, (draw, top)) in enumerate(
        held_out_designs(args.held_out, args.design_seed).items()
    ):
        grid, rates = power_curve(draw, TRUE_N, top, args.curve_reps, 500, 100_000 + i)
        effect = true_mde(grid, rates)
        if math.isfinite(effect) and effect > 0:
            PLANNED[name] = (draw, effect)
        else:
            skipped.append(name)
    return skipped


def cell(name: str, k: int, at: float, args: argparse.Namespace) -> str:
    draw, effect = PLANNED[name]
    drawn = draw(at, k, args.pilots, np.random.default_rng([args.seed, k, int(at > 0)]))
    pilots = differences(drawn)
    ns, rates, ranges, holds, refused = [], [], 0, 0, 0
    for j in range(args.pilots):
        given = {"pairs": (drawn[0, :, j], drawn[1, :, j])} if drawn.ndim == 3 else {}
        try:
            p = plan(effect, differences=pilots[:, j], n_simulations=1000, **given)
        except ValueError:
            refused += 1
            continue
        span = getattr(p, "n_range", None)
        if span is not None:
            ranges += 1
            holds += span[0] <= TRUE_N <= span[1]
        ns.append(p.n)
        rates.append(achieved(name, p.n, args.reps, args.seed))
    pilot = "null" if at == 0 else "at effect"
    if not ns:
        return f"| {name} | {k} | {pilot} | - | - | - | - | - | - | {refused} |"
    r = np.array(rates)
    return (
        f"| {name} | {k} | {pilot} | {ranges / args.pilots:.2f} | "
        f"{holds / ranges if ranges else float('nan'):.2f} | {np.median(ns):.0f} "
        f"[{min(ns)}, {max(ns)}] | {np.median(r):.3f} | {np.mean(r < 0.6):.2f} | "
        f"{np.mean((r >= 0.75) & (r <= 0.85)):.2f} | {refused} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pilots", type=int, default=40)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sizes", default="6,10,20")
    ap.add_argument("--designs", default=",".join(EFFECTS))
    ap.add_argument("--out", default=None)
    ap.add_argument("--held-out", type=int, default=0, metavar="K")
    ap.add_argument("--design-seed", type=int, default=0)
    ap.add_argument("--curve-reps", type=int, default=1000)
    args = ap.parse_args()
    start, load = time.perf_counter(), os.getloadavg()[0]
    skipped = held_out(args) if args.held_out else []
    names = list(PLANNED) if args.held_out else args.designs.split(",")
    lines = [
        "# `plan` from small pilots as a procedure (`benchmarks/plan_small_pilots.py`)",
        "",
        f"{args.pilots} pilots per cell; achieved power from {args.reps} fresh data sets "
        f"(Monte Carlo SE about {(0.16 / args.reps) ** 0.5:.3f}); effect = the design's true "
        f"MDE at n = {TRUE_N}; one test, alpha .05, target .80; seed {args.seed}; load average "
        f"at the start {load:.1f}.",
        *(
            [
                "",
                f"Held-out designs: {args.held_out} drawn with design seed {args.design_seed}; "
                f"effects (true MDE at n = {TRUE_N}, {args.curve_reps} data sets per grid "
                "point): "
                + ", ".join(f"{n} {e:.3f}" for n, (_, e) in PLANNED.items())
                + f". Skipped (no MDE at n = {TRUE_N}): {', '.join(skipped) or 'none'}.",
            ]
            if args.held_out
            else []
        ),
        "",
        f"| design | pilot n | pilot | range | range holds n = {TRUE_N} | planned n (returned): "
        "median [min, max] | achieved power: median | < .6 | in [.75, .85] | refused |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        for k in map(int, args.sizes.split(",")):
            for at in (0.0, PLANNED[name][1]):
                lines.append(cell(name, k, at, args))
                print(lines[-1], flush=True)
    lines += ["", f"Total {time.perf_counter() - start:.0f} s; load average at the end "
              f"{os.getloadavg()[0]:.1f}."]  # fmt: skip
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
