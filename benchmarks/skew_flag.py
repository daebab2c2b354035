"""TOST and the mean trend test under ties and skew, and the skew flags (issue 35 item 6).

Sections:

- ``reproduce``: the outside check's designs. TOST: 60% exact zero differences, the others
  exponential gains, the mean exactly on the upper margin (+.05 of ±.05), n = 10/30/100.
  Trend: 8 blocks x 5 doses, each block's slope centred-exponential (or lognormal, sigma 1)
  with sd 1, block effect and noise N(0, 1). Rejection rates at alpha = .05, with the share of
  false verdicts that each flag catches and the rate of false verdicts left unflagged.
- ``sweep``: randomly drawn TOST designs (held out: the flag rule was fixed from theory and
  committed before this sweep was first run). Per design: tie share U[0, .8]; the untied
  differences from a random family (normal; exponential; lognormal, sigma U[.25, 1.25]; gamma,
  shape log-U[.25, 4]), skew pointing up or down, sd log-U[.03, .3]; the mean on the upper or
  the lower margin (size) or at 0 (power); n in {10, 30, 100}.
- ``trend``: randomly drawn trend designs: blocks in {4, 8, 16}, doses k in {3..6}; per-block
  slopes mean 0 (size) or 3 standard errors (power) from a random family as above with sd
  log-U[.1, 2]; block effects and noise N(0, 1); one-sided (both sides) and two-sided.

The flags: ``'skewed-equivalence'`` (``EquivalenceResult.skew_excess(.05) > .01``) and
``TrendResult.skew_excess(.05) > .01``; the old TOST rule ``|G1| >= 1`` beside them. Run:

    nice .venv/bin/python benchmarks/skew_flag.py [--sections reproduce,sweep,trend]
        [--reps 1000] [--power-reps 300] [--designs 60] [--seed 2026]
        [--out benchmarks/results-skew_flag.md]

A design "does not hold" when its measured size exceeds .06; it is "caught" when the rate of
false verdicts the flag leaves unflagged is at most .06.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from osustat._skew import skew_excess
from osustat.equivalence import tost_bootstrap_t, tost_signflip
from osustat.trend import mean_trend_test

MARGIN = 0.05
ALPHA = 0.05
TOLERANCE = 0.06
FAMILIES = ("normal", "exponential", "lognormal", "gamma")
ALTERNATIVES = ("greater", "less", "two-sided")


def standard_noise(rng, family: str, strength: float, size) -> np.ndarray:
    """Mean-0, sd-1 draws; right-skewed for every family but the normal."""
    if family == "normal":
        return rng.normal(size=size)
    if family == "exponential":
        return rng.exponential(1.0, size) - 1.0
    if family == "lognormal":
        s2 = strength**2
        return (rng.lognormal(0.0, strength, size) - math.exp(s2 / 2)) / math.sqrt(
            (math.exp(s2) - 1) * math.exp(s2)
        )
    return (rng.gamma(strength, 1.0, size) - strength) / math.sqrt(strength)


def skew_label(family: str, strength: float, direction: int) -> str:
    skew = "" if family in ("normal", "exponential") else f" {strength:.2f}"
    arrow = "" if family == "normal" else (" up" if direction > 0 else " down")
    return f"{family}{skew}{arrow}"


def draw_family(rng) -> tuple[str, float]:
    """A random noise family and its strength (lognormal sigma, gamma shape)."""
    family = FAMILIES[rng.integers(len(FAMILIES))]
    strength = (
        rng.uniform(0.25, 1.25) if family == "lognormal" else math.exp(rng.uniform(-1.386, 1.386))
    )
    return family, float(strength)


@dataclass(frozen=True)
class TostDesign:
    n: int
    ties: float
    family: str
    strength: float
    direction: int  # +1: the untied differences skewed up; -1: down
    sd: float  # sd of the untied differences

    def label(self) -> str:
        shape = skew_label(self.family, self.strength, self.direction)
        return f"{shape}, sd {self.sd:.3f}, ties {self.ties:.2f}"

    def draw(self, rng, mean: float) -> np.ndarray:
        """n differences: a share `ties` exactly 0, the others skewed, overall mean `mean`."""
        untied = rng.random(self.n) >= self.ties
        noise = standard_noise(rng, self.family, self.strength, self.n)
        values = mean / (1 - self.ties) + self.sd * self.direction * noise
        return np.where(untied, values, 0.0)


def tost_outcomes(d: np.ndarray, rng) -> tuple[bool, bool, bool, bool, bool]:
    """(sign-flip rejects, bootstrap-t rejects, new flag, old |G1| >= 1 flag, the
    skew-corrected p rejects)."""
    res = tost_signflip(d, MARGIN, n_resamples=999, rng=rng)
    boot = tost_bootstrap_t(d, MARGIN, n_resamples=999, rng=rng)
    new = res.skew_excess(ALPHA) > (TOLERANCE - ALPHA)
    corrected = res.skew_corrected_pvalue <= ALPHA
    return res.pvalue <= ALPHA, boot.pvalue <= ALPHA, new, abs(res.skewness) >= 1.0, corrected


def tost_rates(design: TostDesign, mean: float, reps: int, rng) -> dict[str, float]:
    """Rejection rates and flag shares of `design` at `mean` over `reps` data sets."""
    out = np.array([tost_outcomes(design.draw(rng, mean), rng) for _ in range(reps)])
    rej, boot, new, old, corrected = out.T
    return {
        "corrected": corrected.mean(),
        "signflip": rej.mean(),
        "bootstrap": boot.mean(),
        "unflagged_new": (rej & ~new).mean(),
        "unflagged_old": (rej & ~old).mean(),
        "false": int(rej.sum()),
        "caught_new": int((rej & new).sum()),
        "caught_old": int((rej & old).sum()),
        "flag_rate": new.mean(),
    }


def band(k: float, reps: int) -> str:
    lo, hi = stats.binomtest(round(k * reps), reps).proportion_ci(0.99)
    return f"{k:.3f} [{lo:.3f}, {hi:.3f}]"


def share(k: int, of: int) -> str:
    return f"{k}/{of} ({k / of:.0%})" if of else "—"


def reproduce_tost(reps: int, seed: int) -> list[str]:
    lines = [
        "### TOST: 60% exact ties, exponential gains, mean on the upper margin (+.05 of ±.05)",
        "",
        "| n | sign-flip TOST | bootstrap-t TOST | false verdicts flagged: new rule | "
        "old rule (abs G1 >= 1) | unflagged false verdicts: new | old |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in (10, 30, 100):
        design = TostDesign(n, 0.6, "exponential", 1.0, 1, MARGIN / 0.4)
        r = tost_rates(design, MARGIN, reps, np.random.default_rng([seed, n]))
        lines.append(
            f"| {n} | {band(r['signflip'], reps)} | {band(r['bootstrap'], reps)} | "
            f"{share(r['caught_new'], r['false'])} | {share(r['caught_old'], r['false'])} | "
            f"{band(r['unflagged_new'], reps)} | {band(r['unflagged_old'], reps)} |"
        )
        print(lines[-1], flush=True)
    return lines


@dataclass(frozen=True)
class TrendDesign:
    blocks: int
    doses: int
    family: str
    strength: float
    direction: int
    sd: float  # sd of the per-block slopes

    def label(self) -> str:
        shape = skew_label(self.family, self.strength, self.direction)
        return f"{shape}, slope sd {self.sd:.2f}, k {self.doses}"

    def draw(self, rng, mean_slope: float) -> np.ndarray:
        s = np.arange(self.doses, dtype=float)
        slopes = mean_slope + self.sd * self.direction * standard_noise(
            rng, self.family, self.strength, (self.blocks, 1)
        )
        return (
            rng.normal(size=(self.blocks, 1))
            + slopes * s
            + rng.normal(size=(self.blocks, self.doses))
        )

    def slope_se(self) -> float:
        """Standard error of the mean slope (noise sd 1 on each dose)."""
        s = np.arange(self.doses, dtype=float)
        within = 1.0 / float(((s - s.mean()) ** 2).sum())
        return math.sqrt((self.sd**2 + within) / self.blocks)


def trend_outcomes(x: np.ndarray, rng) -> np.ndarray:
    """Per alternative: (sign-flip rejects, t rejects, flag, direction-free flag): (3, 4).

    The flag reads a one-sided test's excess on its own side only (the first rule, measured
    on seed 2026); the direction-free flag (``TrendResult.skew_excess``, chosen after that
    run) from |G1| whatever its sign, as the TOST flag does; two-sided tests alike in both.
    """
    rows = []
    for alt in ALTERNATIVES:
        sf = mean_trend_test(x, alternative=alt, n_resamples=999, rng=rng)
        t = mean_trend_test(x, alternative=alt, method="t")
        aware = skew_excess(sf.skewness, sf.n_blocks, ALPHA, alt) > TOLERANCE - ALPHA
        free = sf.skew_excess(ALPHA) > TOLERANCE - ALPHA  # TrendResult's rule
        rows.append((sf.pvalue <= ALPHA, t.pvalue <= ALPHA, aware, free))
    return np.array(rows, dtype=bool)


def trend_rates(design: TrendDesign, mean_slope: float, reps: int, rng) -> np.ndarray:
    """Counts per alternative: (sign-flip, t, sign-flip & flag, t & flag, flag, sign-flip &
    direction-free flag, t & direction-free flag, direction-free flag)."""
    out = np.zeros((3, 8), dtype=int)
    for _ in range(reps):
        o = trend_outcomes(design.draw(rng, mean_slope), rng)
        sf, t, flag, free = o[:, 0], o[:, 1], o[:, 2], o[:, 3]
        out += np.stack([sf, t, sf & flag, t & flag, flag, sf & free, t & free, free], axis=1)
    return out


def reproduce_trend(reps: int, seed: int) -> list[str]:
    lines = [
        "### Mean trend test: 8 blocks x 5 doses, skewed per-block slopes (sd 1, mean 0)",
        "",
        "| slopes | alternative | sign-flip | t | sign-flip false verdicts flagged | "
        "unflagged false verdicts (sign-flip) |",
        "|---|---|---|---|---|---|",
    ]
    for family, strength in (("exponential", 1.0), ("lognormal", 1.0)):
        design = TrendDesign(8, 5, family, strength, 1, 1.0)
        c = trend_rates(design, 0.0, reps, np.random.default_rng([seed, len(family)]))
        for a, alt in enumerate(ALTERNATIVES):
            sf, t, sf_flag = c[a, 0], c[a, 1], c[a, 2]
            lines.append(
                f"| {family} | {alt} | {band(sf / reps, reps)} | {band(t / reps, reps)} | "
                f"{share(int(sf_flag), int(sf))} | {band((sf - sf_flag) / reps, reps)} |"
            )
            print(lines[-1], flush=True)
    return lines


def draw_tost_design(rng) -> TostDesign:
    family, strength = draw_family(rng)
    return TostDesign(
        n=int(rng.choice([10, 30, 100])),
        ties=float(rng.uniform(0.0, 0.8)),
        family=family,
        strength=strength,
        direction=int(rng.choice([-1, 1])),
        sd=float(math.exp(rng.uniform(math.log(0.03), math.log(0.3)))),
    )


def draw_trend_design(rng) -> TrendDesign:
    family, strength = draw_family(rng)
    return TrendDesign(
        blocks=int(rng.choice([4, 8, 16])),
        doses=int(rng.integers(3, 7)),
        family=family,
        strength=strength,
        direction=int(rng.choice([-1, 1])),
        sd=float(math.exp(rng.uniform(math.log(0.1), math.log(2.0)))),
    )


def sweep_tost(args) -> list[str]:
    """Per-design rows and the summary of the random TOST designs."""
    draw_rng = np.random.default_rng([args.seed, 1])
    rows, nulls, powers = [], [], []
    for i in range(args.designs):
        design = draw_tost_design(draw_rng)
        rng = np.random.default_rng([args.seed, 1, i])
        for side, name in ((1, "upper"), (-1, "lower")):
            r = tost_rates(design, side * MARGIN, args.reps, rng)
            nulls.append((design, r))
            rows.append(
                f"| {i} | {design.n} | {design.label()} | {name} | {r['signflip']:.3f} | "
                f"{r['bootstrap']:.3f} | {share(r['caught_new'], r['false'])} | "
                f"{r['unflagged_new']:.3f} | {r['unflagged_old']:.3f} |"
            )
            print(rows[-1], flush=True)
        powers.append((design, tost_rates(design, 0.0, args.power_reps, rng)))
    head = [
        "| design | n | untied differences | mean on | sign-flip size | bootstrap-t size | "
        "false verdicts flagged | unflagged: new rule | unflagged: old rule |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    return [*tost_summary(nulls, powers), "", "Per design (size at each margin):", "", *head, *rows]


def tost_summary(nulls, powers) -> list[str]:
    lines = [
        "| n | null designs | sign-flip size > .06 | caught: new rule | caught: old rule | "
        "false verdicts flagged (new / old) | bootstrap-t size > .06 | flag rate where "
        "size <= .06 | power at mean 0: sign-flip / unflagged (median) | skew-corrected p: "
        "size > .06 | its power (median) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in (10, 30, 100):
        at = [r for d, r in nulls if d.n == n]
        bad = [r for r in at if r["signflip"] > TOLERANCE]
        ok = [r for r in at if r["signflip"] <= TOLERANCE]
        false = sum(r["false"] for r in bad)
        pw = [r for d, r in powers if d.n == n]
        lines.append(
            f"| {n} | {len(at)} | {len(bad)} | "
            f"{share(sum(r['unflagged_new'] <= TOLERANCE for r in bad), len(bad))} | "
            f"{share(sum(r['unflagged_old'] <= TOLERANCE for r in bad), len(bad))} | "
            f"{share(sum(r['caught_new'] for r in bad), false)} / "
            f"{share(sum(r['caught_old'] for r in bad), false)} | "
            f"{sum(r['bootstrap'] > TOLERANCE for r in at)} | "
            f"{np.mean([r['flag_rate'] for r in ok]) if ok else float('nan'):.2f} | "
            f"{np.median([r['signflip'] for r in pw]):.3f} / "
            f"{np.median([r['unflagged_new'] for r in pw]):.3f} | "
            f"{sum(r['corrected'] > TOLERANCE for r in at)} | "
            f"{np.median([r['corrected'] for r in pw]):.3f} |"
        )
    return lines


def sweep_trend(args) -> list[str]:
    draw_rng = np.random.default_rng([args.seed, 2])
    rows, nulls, powers = [], [], []
    for i in range(args.designs):
        design = draw_trend_design(draw_rng)
        rng = np.random.default_rng([args.seed, 2, i])
        c = trend_rates(design, 0.0, args.reps, rng) / args.reps
        p = trend_rates(design, 3 * design.slope_se(), args.power_reps, rng) / args.power_reps
        nulls.append((design, c))
        powers.append((design, p))
        cells = " | ".join(
            f"{c[a, 0]:.3f} / {c[a, 1]:.3f} / {c[a, 0] - c[a, 2]:.3f}" for a in range(3)
        )
        rows.append(f"| {i} | {design.blocks} | {design.label()} | {cells} |")
        print(rows[-1], flush=True)
    head = [
        "| design | blocks | slopes | greater: sign-flip / t / unflagged sign-flip | less | "
        "two-sided |",
        "|---|---|---|---|---|---|",
    ]
    return [*trend_summary(nulls, powers), "", "Per design (size):", "", *head, *rows]


def trend_summary(nulls, powers) -> list[str]:
    lines = [
        "| blocks | method | null cases (design x alternative) | size > .06 | caught by the "
        "flag | flag rate where size <= .06 | power at 3 se ('greater'): all / unflagged "
        "(median) | direction-free flag: caught | its flag rate where size <= .06 | "
        "power unflagged by it (median) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for blocks in (4, 8, 16):
        at = [c for d, c in nulls if d.blocks == blocks]
        pw = [p for d, p in powers if d.blocks == blocks]
        for m, method in ((0, "sign-flip"), (1, "t")):
            cases = [
                (c[a, m], c[a, m] - c[a, m + 2], c[a, 4], c[a, m] - c[a, m + 5], c[a, 7])
                for c in at
                for a in range(3)
            ]
            bad = [u for size, u, *_ in cases if size > TOLERANCE]
            ok = [f for size, _, f, *_ in cases if size <= TOLERANCE]
            bad_free = [u for size, _, _, u, _ in cases if size > TOLERANCE]
            ok_free = [f for size, *_, f in cases if size <= TOLERANCE]
            lines.append(
                f"| {blocks} | {method} | {len(cases)} | {len(bad)} | "
                f"{share(sum(u <= TOLERANCE for u in bad), len(bad))} | "
                f"{np.mean(ok) if ok else float('nan'):.2f} | "
                f"{np.median([p[0, m] for p in pw]):.3f} / "
                f"{np.median([p[0, m] - p[0, m + 2] for p in pw]):.3f} | "
                f"{share(sum(u <= TOLERANCE for u in bad_free), len(bad_free))} | "
                f"{np.mean(ok_free) if ok_free else float('nan'):.2f} | "
                f"{np.median([p[0, m] - p[0, m + 5] for p in pw]):.3f} |"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sections", default="reproduce,sweep,trend")
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--power-reps", type=int, default=300)
    ap.add_argument("--designs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default="benchmarks/results-skew_flag.md")
    args = ap.parse_args()
    sections = args.sections.split(",")
    t0 = time.perf_counter()
    lines = [
        "# TOST and the mean trend test under ties and skew; the skew flags (issue 35 item 6)",
        "",
        f"Command: `nice .venv/bin/python benchmarks/skew_flag.py --sections {args.sections} "
        f"--reps {args.reps} --power-reps {args.power_reps} --designs {args.designs} "
        f"--seed {args.seed} --out {args.out}`; alpha = .05, 999 sign vectors / bootstrap "
        "resamples, 99% Clopper-Pearson intervals. Designs: the module docstring.",
    ]
    if "reproduce" in sections:
        lines += ["", "## The outside check's designs", ""]
        lines += [*reproduce_tost(args.reps, args.seed), "", *reproduce_trend(args.reps, args.seed)]
    if "sweep" in sections:
        lines += ["", "## Random TOST designs (held out)", "", *sweep_tost(args)]
    if "trend" in sections:
        lines += ["", "## Random trend designs (held out)", "", *sweep_trend(args)]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines += ["", f"Total {time.perf_counter() - t0:.0f} s; load average at the end {load}."]
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
