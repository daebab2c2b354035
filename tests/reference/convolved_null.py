"""`ConvolvedNull` (the largest group of equal differences summed out by its binomial law)
against the full product of the groups' binomials (`grouped_null`), on random data sets small
enough for both.

Used by tests/osustat/test_signflip.py and benchmarks/signflip_exactness.py.
"""

from __future__ import annotations

import numpy as np

from osustat._signflip_null import ConvolvedNull, grouped_null, tie_tolerance


def largest_gap(n_sets: int, normal_shifts: int, seed: int = 0) -> tuple[float, int]:
    """(largest |p difference|, shifts compared) over `n_sets` data sets (1-6 distinct
    nonzero values, 1-3 copies each, 0-39 zeros), each at `normal_shifts` shifts drawn around
    its mean, its values, their halves and 0."""
    rng = np.random.default_rng(seed)
    worst, shifts = 0.0, 0
    for _ in range(n_sets):
        k = int(rng.integers(1, 7))
        nz = np.round(rng.normal(0.3, 1, size=k), int(rng.integers(1, 3)))
        d = np.concatenate(
            [np.repeat(nz, rng.integers(1, 4, size=k)), np.zeros(rng.integers(0, 40))]
        )
        values, counts = np.unique(d, return_counts=True)
        sums, ones, weights = grouped_null(values, counts)
        null = ConvolvedNull(values, counts)
        around = rng.normal(d.mean(), 1, normal_shifts)
        for mu0 in np.concatenate([around, values, values / 2, [0.0]]):
            tol, obs = tie_tolerance(d - mu0), abs(d.sum() - d.size * mu0)
            want = float(weights @ (np.abs(sums - mu0 * ones) >= obs - tol))
            worst = max(worst, abs(null.pvalue(mu0, obs, tol) - want))
            shifts += 1
    return worst, shifts
