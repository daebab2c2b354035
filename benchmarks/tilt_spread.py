"""Does tilting a null pilot of a count-ratio design reach the spread the design has at the
effect? (issue 35, the held-out procedure table's count-ratio misses).

The ``'empirical-tilt'`` engine models the differences at effect δ as the pilot tilted
exponentially to mean δ. For each count-ratio design of the procedure tables (the fixed
recall-like and clustered ones, and the held-out items and episodes designs), this draws
200,000 units at effect 0 and at δ = the design's true MDE at n = 20 (read from
``results-mde_procedure.md`` / ``results-mde_procedure-heldout.md``), tilts the null sample
to mean δ, and prints the sd of the tilted null beside the sd at the effect -- two ways: the
differences tilted (``exp(θd)``, the model given differences only) and the treatment's values
tilted beside the baseline's (``exp(θt)``, the model given the units' values, ``pairs``; the
null sample's pairs are made symmetric by swapping first, as the engine does). No row noise:
it measures the model's error, not a pilot's::

    .venv/bin/python benchmarks/tilt_spread.py
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from mde_procedure import DESIGNS, differences, held_out_designs
from scipy.optimize import brentq

HERE = Path(__file__).resolve().parent
UNITS = 200_000


def true_mdes(path: Path, n: int = 20) -> dict[str, float]:
    """Design name -> its true MDE at `n` (the table's 'true MDE' column)."""
    out: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = [c.strip() for c in line.strip("|").split("|")]
        if len(cols) > 3 and cols[1] == str(n) and cols[2] == "null":
            out[cols[0]] = float(cols[3])
    return out


def tilted_sd(x: np.ndarray, mean: float, s: np.ndarray | None = None) -> float:
    """The sd of `x` tilted exponentially (weights exp(θs), `s` = `x` by default) to `mean`."""
    s = x if s is None else s

    def weights(theta: float) -> np.ndarray:
        w = np.exp(theta * (s - s.max()))
        return w / w.sum()

    theta = brentq(lambda t: float(weights(t) @ x) - mean, 0.0, 200.0)
    w = weights(theta)
    return math.sqrt(float(w @ (x - w @ x) ** 2))


def main() -> None:
    designs = {**DESIGNS, **held_out_designs(30, 35)}
    mdes = {
        **true_mdes(HERE / "results-mde_procedure.md"),
        **true_mdes(HERE / "results-mde_procedure-heldout.md"),
    }
    print(
        "| design | δ (true MDE, n = 20) | sd at 0 | differences tilted to δ | treatment "
        "tilted to δ | at δ | differences tilted / at δ | treatment tilted / at δ |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, (draw, _) in designs.items():
        count_ratio = any(k in name for k in ("items", "episodes", "recall", "clustered"))
        delta = mdes.get(name, math.inf)
        if not count_ratio or not math.isfinite(delta):
            continue
        pairs = draw(0.0, UNITS, 1, np.random.default_rng(1))[:, :, 0]
        null = pairs[0] - pairs[1]
        at = differences(draw(delta, UNITS, 1, np.random.default_rng(2))).ravel()
        sd_d = tilted_sd(null, delta)
        # the swap-symmetric null of the pairs: each pair and its swap
        t, b = np.concatenate([pairs[0], pairs[1]]), np.concatenate([pairs[1], pairs[0]])
        sd_t = tilted_sd(t - b, delta, s=t)
        print(
            f"| {name} | {delta:.3f} | {null.std():.3f} | {sd_d:.3f} | {sd_t:.3f} | "
            f"{at.std():.3f} | {sd_d / at.std():.3f} | {sd_t / at.std():.3f} |"
        )


if __name__ == "__main__":
    main()
