"""Reported power/MDE against the simulated power of the test osustat actually runs.

Table 1: on a grid of n and P(d != 0) for 0/1 differences, and of n for normal differences,
the MDE (alpha = .05 two-sided, power .8) of the old noncentral-t formula and of the new
``minimum_detectable_effect`` (method named), and the rejection rate of
``signflip_tests`` on data simulated at each MDE. For 0/1 data the old MDE is fed the sd of
data generated at that MDE (sd^2 = q - mde^2), as a caller computing sd from its data does.
Figure: power curves (reported vs simulated) -> docs/figures/power_curves.png. Run:

    nice .venv/bin/python benchmarks/power_check.py [--reps 4000] [--seed 0]
        [--out benchmarks/results-power_check.md]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results-power_check.md")
    ap.add_argument("--figure", default="docs/figures/power_curves.png")
    args = ap.parse_args()
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
    for n in (6, 10, 20, 40, 96, 200, 500):
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
    for n in (6, 7, 8, 10, 12, 16, 40):
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
    lines += ["", f"Figure: `{args.figure}`. Total {time.perf_counter() - t0:.0f}s."]
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
