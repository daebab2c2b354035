"""The two exact power engines behind :mod:`osustat.power` (private).

- :func:`binomial_power`: exact power of the sign-flip test on 0/1-type differences, summed
  over the test's own rejection region (:func:`binomial_regions`);
- :class:`SignFlipSimulation`: the exact enumerated sign-flip test on fixed simulated normal
  data sets (common random numbers), evaluated at any shift.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ._validation import check_rng

_EPS = float(np.finfo(np.float64).eps)


def attainable(n: int, alpha: float, alt: str) -> bool:
    """Whether the sign-flip test's smallest p-value (2^(1-n) two-sided) is <= alpha."""
    smallest = 2.0 ** (1 - n) if alt == "two-sided" else 2.0**-n
    return smallest <= alpha


# -- exact binomial ------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def binomial_regions(n: int, alpha: float, alt: str) -> tuple[NDArray[Any], NDArray[Any]]:
    """For each m = 0..n, reject when K >= upper[m] or K <= lower[m] (K = positive signs).

    ``upper = m + 1`` / ``lower = -1`` mean no rejection on that side. The p-values are the
    ones :func:`osustat.signflip._binomial_pvalue` returns (symmetric two-sided tails:
    ``p = min(1, 2 P(K >= k))`` for ``k > m/2``).
    """
    m = np.arange(n + 1)
    limit = (alpha / 2 if alt == "two-sided" else alpha) * (1 + 1e-9)

    def ok(k: NDArray[Any]) -> NDArray[Any]:
        good = (k <= m) & (stats.binom.sf(k - 1, m, 0.5) <= limit)
        return good & (2 * k > m) if alt == "two-sided" else good

    isf = stats.binom.isf(limit, m, 0.5)
    upper = np.where(np.isfinite(isf), isf, m).astype(np.int64) + 1
    upper = np.clip(upper, 0, m + 1)
    for _ in range(n + 2):  # rounding in isf: step to the exact boundary
        down = (upper - 1 >= 0) & ok(upper - 1)
        up = (upper <= m) & ~ok(upper)
        if not (down.any() or up.any()):
            break
        upper = upper - down + up
    upper = np.where(ok(upper), upper, m + 1)
    lower = m - upper if alt == "two-sided" else np.full(n + 1, -1)
    return upper, lower


def binomial_power(n: int, q: float, pi: float, alpha: float, alt: str) -> float:
    """Exact power of the sign-flip (binomial) test on 0/1-type differences."""
    if alt == "less":  # mirror: positives become negatives
        pi, alt = 1.0 - pi, "greater"
    upper, lower = binomial_regions(n, alpha, alt)
    m = np.arange(n + 1)
    p_m = stats.binom.pmf(m, n, q)
    reject = stats.binom.sf(upper - 1, m, pi) + np.where(
        lower >= 0, stats.binom.cdf(lower, m, pi), 0.0
    )
    return float(np.clip(p_m @ reject, 0.0, 1.0))


# -- simulation (small n) ------------------------------------------------------------------


class SignFlipSimulation:
    """Exact sign-flip test on ``delta + z`` for fixed standard-normal draws ``z``.

    Two-sided, a pattern and its mirror image give the same ``|sum|``, so only the half of
    the ``2**n`` patterns with a plus on the last unit is kept (p = hits / 2**(n-1)).
    """

    def __init__(self, n: int, n_simulations: int, alpha: float, alt: str, rng: Any) -> None:
        z = check_rng(rng).standard_normal((n_simulations, n))
        n_patterns = 2 ** (n - 1) if alt == "two-sided" else 2**n
        bits = (np.arange(n_patterns)[:, None] >> np.arange(n)[None, :]) & 1
        signs = 1.0 - 2.0 * bits  # row 0 is the observed (all-plus) pattern
        self.noise = signs @ z.T  # (patterns, R) null sums of the noise part
        self.count = signs.sum(axis=1)[:, None]  # sum of signs, multiplies delta
        self.alpha, self.alt, self.n = alpha, alt, n

    def power(self, delta: float) -> float:
        sums = self.noise + delta * self.count
        obs = sums[0]
        tol = 8.0 * self.n * _EPS * (np.abs(self.noise[0]) + abs(delta) * self.n + 1.0)
        if self.alt == "two-sided":
            hits = (np.abs(sums) >= np.abs(obs) - tol).sum(axis=0)
        elif self.alt == "greater":
            hits = (sums >= obs - tol).sum(axis=0)
        else:
            hits = (sums <= obs + tol).sum(axis=0)
        p = hits / sums.shape[0]
        return float(np.mean(p <= self.alpha * (1 + 1e-9)))
