"""Is the count-ratio MDE from pilots at the effect right before the range rules pick the rows
that print a number? (issue 35, the treatment's tilt)

One held-out design (h17 of design seed 36: recall over 7 items, baseline rate .41; true MDE
at n = 20 .183, from `results-mde_procedure-heldout-seed36.md`), 30 pilots of 20, 50 and 400
units drawn at effect 0 and at .183; each pilot's MDE for a study of n = 20 with the tilted
model forced (`test='empirical-tilt'`: no range rule), given the units' values (the
treatment's tilt) or the differences only (the differences' tilt). Prints the medians and the
median effective sample size of the treatment's tilt back (what rule F ranges below 12)::

    .venv/bin/python benchmarks/tilt_at_effect.py
"""

from __future__ import annotations

import numpy as np
from mde_procedure import _items_draw

import osustat
from osustat._power_engines import tilt_back_ess

TRUE_MDE = 0.183


def main() -> None:
    draw = _items_draw(7, 0.41)
    print("| pilot units | pilot | treatment's tilt | differences' tilt | ESS of the tilt back |")
    print("|---|---|---|---|---|")
    for size in (20, 50, 400):
        for name, at in (("null", 0.0), ("at the effect", TRUE_MDE)):
            x = draw(at, size, 30, np.random.default_rng(5))
            pairs, diffs, ess = [], [], []
            for j in range(30):
                t, b = x[0, :, j], x[1, :, j]
                for out, given in ((pairs, (t, b)), (diffs, None)):
                    mde = osustat.minimum_detectable_effect(
                        None, 20, differences=t - b, pairs=given, test="empirical-tilt",
                        n_simulations=500,
                    )  # fmt: skip
                    out.append(float(mde))
                ess.append(tilt_back_ess(t - b, (t, b)))
            print(
                f"| {size} | {name} | {np.median(pairs):.3f} | {np.median(diffs):.3f} | "
                f"{np.median(ess):.1f} |",
                flush=True,
            )
    print(f"\nTrue MDE at n = 20: {TRUE_MDE}.")


if __name__ == "__main__":
    main()
