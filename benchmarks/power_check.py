"""Reported power/MDE against the simulated power of the test osustat actually runs.

Table 1: on a grid of n and P(d != 0) for 0/1 differences, and of n for normal differences,
the MDE (alpha = .05 two-sided, power .8) of the old noncentral-t formula and of the new
``minimum_detectable_effect`` (method named), and the rejection rate of
``signflip_tests`` on data simulated at each MDE. For 0/1 data the old MDE is fed the sd of
data generated at that MDE (sd^2 = q - mde^2), as a caller computing sd from its data does.
Figure: power curves (reported vs simulated) -> docs/figures/power_curves.png.

Table 2 (issue 23): designs whose differences are not 0/1 -- normal, 0/1, zero-inflated
continuous (40% exact zeros), recall-like (recall of 1-4 relevant items, about 40% ties),
heavy-tailed (t, 3 df) -- at n = 6, 10, 20, 50, 100. The MDE is computed the way ``analyze``
computes it, from differences (``differences=``), here a 20,000-draw sample of the design
under the null so the MDE is the design's, not one sample's; "today" is the method the
previous release chose for the same call (simulated normal draws for n <= 12, noncentral t
above). The achieved power is the rejection rate of ``signflip_tests`` (its defaults) on
data simulated from the design at the printed MDE. Where the MDE is infinite, the last
column gives the simulated power at the largest effect of that kind instead. Run:

    nice .venv/bin/python benchmarks/power_check.py [--reps 4000] [--seed 0]
        [--sections binary,normal,designs,figure] [--out benchmarks/results-power_check.md]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from osustat import minimum_detectable_effect, power, signflip_tests


def binary(rng, n, q, pi, reps):
    nz = rng.random((n, reps)) < q
    return np.where(nz, np.where(rng.random((n, reps)) < pi, 1.0, -1.0), 0.0)


def fmt(v):
    return "—" if v is None else f"{v:.3f}"


def rate(d, seed):
    return float(np.mean([r.pvalue <= 0.05 for r in signflip_tests(d, rng=seed)]))


def old_binary_mde(n, q):
    """Fixed point mde = MDE_normal(sd(mde)); None when it does not exist (mde >= q)."""
    mde = 0.0
    for _ in range(60):
        if mde >= q:
            return None
        sd = float(np.sqrt(q - mde**2))
        mde = float(minimum_detectable_effect(sd, n, test="normal"))
    return mde if mde < q else None


# -- issue 23 designs: each draws (n, reps) differences with true mean `delta` --------------


def normal_design(rng, n, reps, delta):
    return rng.normal(delta, 1.0, (n, reps))


def binary_design(rng, n, reps, delta, q=0.6):
    return binary(rng, n, q, 0.5 * (1 + delta / q), reps)


def zero_inflated(rng, n, reps, delta, zeros=0.4):
    """40% exact zeros; the nonzero part normal (sd 1), shifted so the mean is `delta`."""
    nz = rng.random((n, reps)) >= zeros
    return np.where(nz, rng.normal(delta / (1 - zeros), 1.0, (n, reps)), 0.0)


def recall_like(rng, n, reps, delta, rho=0.2):
    """Recall over k ~ U{1..4} relevant items: baseline finds each with p .5 - delta/2,
    treatment with .5 + delta/2, sharing the item's draw with probability `rho` (ties);
    the mean difference is `delta`, at most 1."""
    k = rng.integers(1, 5, size=(n, reps))
    u = rng.random((4, n, reps))
    v = np.where(rng.random((4, n, reps)) < rho, u, rng.random((4, n, reps)))
    live = np.arange(4)[:, None, None] < k[None]
    xb = ((u < 0.5 - delta / 2) & live).sum(0)
    xt = ((v < 0.5 + delta / 2) & live).sum(0)
    return (xt - xb) / k


def heavy_tails(rng, n, reps, delta):
    return delta + rng.standard_t(3, (n, reps))


DESIGNS = {
    "normal": normal_design,
    "0/1 (P(d!=0) .6)": binary_design,
    "zero-inflated (40% zeros)": zero_inflated,
    "recall-like": recall_like,
    "heavy tails (t3)": heavy_tails,
}


def designs_table(args) -> list[str]:
    lines = [
        "",
        "## Issue 23: MDE from the differences vs the power of the test actually run",
        "",
        f"reps={args.reps} per cell; MDE from a 20,000-draw null sample of the design "
        "(`differences=`); power .80 targeted, alpha .05 two-sided. Last column: power at the "
        "new MDE, or (`inf`) the design's power at a mean difference equal to the largest "
        "effect of the modelled kind ((1 - share of zeros) * max|d| with ties kept at their "
        "observed share; max|d| in the tilted model, where ties move too).",
        "",
        "| design | n | zeros | today: MDE (method) | power at it | new MDE (method) | max "
        "effect of this kind | power at new MDE |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, draw in DESIGNS.items():
        if args.designs and not any(k in name for k in args.designs.split(",")):
            continue
        for n in (6, 10, 20, 50, 100):
            rng = np.random.default_rng([args.seed, n, len(name)])
            pilot = draw(rng, 20_000, 1, 0.0)[:, 0]
            sd = float(pilot.std(ddof=1))
            binary_data = name.startswith("0/1")
            if binary_data:  # today's 0/1 path was already exact: same call
                old = minimum_detectable_effect(None, n, differences=pilot)
            else:
                old = minimum_detectable_effect(sd, n, test="simulation" if n <= 12 else "normal")
            old_rate = rate(draw(rng, n, args.reps, float(old)), 1) if np.isfinite(old) else None
            new = minimum_detectable_effect(None, n, differences=pilot)
            at = float(new) if np.isfinite(new) else new.max_effect
            if name == "recall-like":
                at = min(at, 1.0)
            new_rate = rate(draw(rng, n, args.reps, at), 2)
            shown = f"{new:.3f}" if np.isfinite(new) else "inf"
            lines.append(
                f"| {name} | {n} | {np.mean(pilot == 0):.2f} | {old:.3f} ({old.method}) "
                f"| {fmt(old_rate)} | {shown} ({new.method}) | {new.max_effect:.3f} "
                f"| {new_rate:.3f}{'' if np.isfinite(new) else ' (at max)'} |"
            )
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results-power_check.md")
    ap.add_argument("--figure", default="docs/figures/power_curves.png")
    ap.add_argument("--sections", default="binary,normal,designs,figure")
    ap.add_argument("--designs", default="", help="comma-separated name parts (default all)")
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    t0 = time.perf_counter()
    se = np.sqrt(0.16 / args.reps)
    lines = [
        "# Reported MDE vs simulated power of the test actually run",
        "",
        f"reps={args.reps} per cell (MC standard error of a rate near .8: {se:.4f}); "
        "target power .80, alpha .05 two-sided.",
        "",
        "| data | n | P(d!=0) | old MDE (normal) | true power at old MDE | new MDE | method "
        "| simulated power at new MDE |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in (6, 10, 20, 40, 96, 200, 500) if "binary" in sections else ():
        for q in (0.15, 0.3, 0.6, 0.9):
            rng = np.random.default_rng([args.seed, n, int(q * 100)])
            old = old_binary_mde(n, q)
            old_true = None
            if old is not None and np.isfinite(old):
                old_true = rate(binary(rng, n, q, 0.5 * (1 + old / q), args.reps), 1)
            new = minimum_detectable_effect(np.sqrt(q), n, p_nonzero=q)
            sim = (
                rate(binary(rng, n, q, 0.5 * (1 + new / q), args.reps), 2)
                if np.isfinite(new)
                else None
            )
            lines.append(
                f"| 0/1 | {n} | {q} | {fmt(old)} | {fmt(old_true)} | {new:.3f} | {new.method} "
                f"| {fmt(sim)} |"
            )
            print(lines[-1], flush=True)
    for n in (6, 7, 8, 10, 12, 16, 40) if "normal" in sections else ():
        rng = np.random.default_rng([args.seed, n, 999])
        old = minimum_detectable_effect(1.0, n, test="normal")
        old_true = rate(rng.normal(old, 1.0, (n, args.reps)), 1)
        new = minimum_detectable_effect(1.0, n)
        sim = rate(rng.normal(new, 1.0, (n, args.reps)), 2)
        lines.append(
            f"| normal, sd 1 | {n} | 1 | {old:.3f} | {old_true:.3f} | {new:.3f} | {new.method} "
            f"| {sim:.3f} |"
        )
        print(lines[-1], flush=True)

    if "designs" in sections:
        lines += designs_table(args)
    if "figure" in sections:
        power_figure(args)
        lines += ["", f"Figure: `{args.figure}`."]
    lines += ["", f"Total {time.perf_counter() - t0:.0f}s."]
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def power_figure(args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ax = axes[0]
    for n, color in ((20, "C0"), (56, "C1"), (96, "C2"), (200, "C3")):
        q = 0.4
        effects = np.linspace(0, 0.35, 36)
        ax.plot(
            effects, [power(e, 1, n, p_nonzero=q) for e in effects], color=color, label=f"n={n}"
        )
        pts = effects[::5]
        rng = np.random.default_rng([args.seed, n, 7])
        sims = [rate(binary(rng, n, q, 0.5 * (1 + e / q), 1000), 3) for e in pts]
        ax.plot(pts, sims, "o", color=color, ms=4)
    ax.axhline(0.8, color="grey", lw=0.5)
    ax.set(
        title="0/1 metric, P(d≠0)=.4: exact-binomial power (lines)\n"
        "vs simulated sign-flip test (dots)",
        xlabel="true mean difference",
        ylabel="power",
    )
    ax.legend()
    ax = axes[1]
    for n, color in ((6, "C0"), (8, "C1"), (12, "C2")):
        effects = np.linspace(0, 2.5, 26)
        ax.plot(effects, [power(e, 1, n) for e in effects], color=color, label=f"n={n} simulation")
        ax.plot(
            effects,
            [power(e, 1, n, test="normal") for e in effects],
            "--",
            color=color,
            label=f"n={n} normal (old)",
        )
        pts = effects[::4]
        rng = np.random.default_rng([args.seed, n, 8])
        ax.plot(pts, [rate(rng.normal(e, 1, (n, 1000)), 4) for e in pts], "o", color=color, ms=4)
    ax.axhline(0.8, color="grey", lw=0.5)
    ax.set(
        title="normal differences, sd 1, small n:\nreported power vs simulated test (dots)",
        xlabel="true mean difference (sd units)",
        ylabel="power",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.figure, dpi=110)


if __name__ == "__main__":
    main()
