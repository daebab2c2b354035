"""The null distributions behind :func:`osustat.signflip_tests` (private).

Per-column facts, the choice of null (exact binomial, exact enumeration, Monte Carlo), the
tie tolerance, the Monte Carlo counts over the shared sign matrix and the exact nulls that
the confidence interval inverts.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ._resampling import null_sum_blocks

#: Ties are detected within ``8 n eps sum(|d|)``: relative to ``sum(|d|)``, the largest
#: magnitude any resampled sum can take, not to the observed statistic (scipy's choice),
#: which collapses to zero when the statistic is near zero and then misses the statistic's
#: own tie. The rounding error of a float sum of ``n`` terms is below ``n eps sum(|d|)``, so
#: rounding never splits a tie, and sums that differ by more than the bound stay distinct.
_EPS = float(np.finfo(np.float64).eps)
#: Nonzero magnitudes within this relative distance of the first are one magnitude: the
#: exact-binomial null (a few ulps: ``2/3 - 1/3`` against ``1/3``). Planning reads the same rule.
MAGNITUDE_TOLERANCE = 64 * _EPS


def one_magnitude(magnitudes: NDArray[np.float64]) -> bool:
    """Whether the test takes these nonzero ``|d|`` (nonnegative) as one magnitude (its
    exact-binomial null); an empty array is one. Scaled by a power of two first, as
    :func:`column_facts` does, so subnormal values compare as the test compares them."""
    if magnitudes.size == 0:
        return True
    top = float(np.max(magnitudes))
    scaled = np.ldexp(magnitudes, -int(np.frexp(top)[1])) if top > 0 else magnitudes
    first = scaled[0]
    with np.errstate(invalid="ignore"):  # inf: not one magnitude (callers refuse it earlier)
        return bool(np.all(np.abs(scaled - first) <= MAGNITUDE_TOLERANCE * first))


#: Up to this many nonzero differences the exact binomial tail is summed in integers.
_INTEGER_BINOMIAL_MAX = 2000

#: Largest exact enumeration (``2**m`` sign patterns, one float each: 256 MiB).
_MAX_ENUMERATION = 2**25

#: Up to this many sign patterns the null is enumerated whatever `n_resamples`: ``2**m`` sums
#: cost no more than a thousand Monte Carlo sign vectors, and a Monte Carlo p of ten nonzero
#: differences (``--resamples 999``) would stand where the exact one is at hand.
EXACT_ENUMERATION_FLOOR = 2**10


def gib(floats: int) -> str:
    return f"{floats * 8 / 2**30:,.0f} GiB"


def grouped_null(
    values: NDArray[np.float64], counts: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Exact null of ``sum_g v_g J_g`` and ``sum_g J_g`` with ``J_g = 2 Bin(n_g, 1/2) - n_g``.

    Returns the support's two sums and its probabilities (summing to 1).
    """
    sums = np.zeros(1)
    ones = np.zeros(1)
    weights = np.ones(1)
    for v, c in zip(values, counts, strict=True):
        c = int(c)
        k = np.arange(c + 1)
        j = 2.0 * k - c
        pmf = stats.binom.pmf(k, c, 0.5)
        sums = (sums[:, None] + v * j[None, :]).ravel()
        ones = (ones[:, None] + j[None, :]).ravel()
        weights = (weights[:, None] * pmf[None, :]).ravel()
    return sums, ones, weights


#: Largest group summed out by its binomial law in :class:`ConvolvedNull` (its ``n + 1``
#: outcomes are searched for every shift the interval tries).
MAX_CONVOLVED_GROUP = 2**16


class ConvolvedNull:
    """Exact null of ``sum_g (v_g - mu0) J_g`` (:func:`grouped_null`) for any shift ``mu0``,
    with the largest group (typically the zero differences) summed out by its binomial law
    instead of being multiplied into the support.

    Where ten distinct nonzero differences sit beside 1,100 zeros the full support is
    ``2**10 * 1101``; here it is ``2**10`` sums and the 1,101 outcomes of the zeros' ``J``.
    The other groups' sums are kept sorted per value of ``sum_g J_g`` (a shift moves each such
    block as a whole), so one shift costs a few binary searches per block.
    """

    def __init__(self, values: NDArray[np.float64], counts: NDArray[np.int64]) -> None:
        star = int(np.argmax(counts))
        sums, ones, weights = grouped_null(np.delete(values, star), np.delete(counts, star))
        #: (sum_g J_g, the sums of that value sorted, their cumulative weights from 0)
        self.blocks: list[tuple[float, NDArray[np.float64], NDArray[np.float64]]] = []
        for c in np.unique(ones):
            sel = ones == c
            order = np.argsort(sums[sel], kind="stable")
            cumulative = np.concatenate([[0.0], np.cumsum(weights[sel][order])])
            self.blocks.append((float(c), sums[sel][order], cumulative))
        n = int(counts[star])
        k = np.arange(n + 1)
        pmf = stats.binom.pmf(k, n, 0.5)
        kept = pmf > 0  # far tails underflow to 0 (|k - n/2| beyond ~sqrt(372 n)): no weight
        self.value = float(values[star])
        self.j = 2.0 * k[kept] - n
        self.pmf = pmf[kept]

    def pvalue(self, mu0: float, observed: float, tolerance: float) -> float:
        """``P(|T(mu0)| >= observed - tolerance)`` under the null (1 when that is <= 0)."""
        t = observed - tolerance
        if t <= 0:
            return 1.0
        star = (self.value - mu0) * self.j  # the summed-out group's part, per outcome
        total = 0.0
        for c, s, cumulative in self.blocks:
            # the block's statistic is s - mu0 c + star: at most -t, or at least t
            edge = mu0 * c - star
            low = cumulative[np.searchsorted(s, edge - t, side="right")]
            high = cumulative[-1] - cumulative[np.searchsorted(s, edge + t, side="left")]
            total += float(self.pmf @ (low + high))
        return min(total, 1.0)


def tie_tolerance(d: NDArray[np.float64]) -> float:
    return 8.0 * max(d.size, 1) * _EPS * float(np.abs(d).sum())


def choose_null(
    equal_magnitude: bool, m: int, n_resamples: int, j: int, floor: int = EXACT_ENUMERATION_FLOOR
) -> str:
    """Which null a column gets: from its facts (:func:`column_facts`), `n_resamples` and the
    number of patterns enumerated whatever `n_resamples` (`floor`)."""
    if equal_magnitude:
        return "exact-binomial"
    if m < 63 and 2**m <= max(n_resamples, floor):
        if 2**m > _MAX_ENUMERATION:
            raise ValueError(
                f"`n_resamples` = {n_resamples} asks for exact enumeration of "
                f"`differences[{j}]`'s 2**{m} sign patterns ({m} nonzero differences), which "
                f"needs {gib(2**m)} of memory. Use n_resamples < 2**{m} for a Monte Carlo "
                f"p-value (e.g. 100_000); exact enumeration is done up to "
                f"2**{_MAX_ENUMERATION.bit_length() - 1} patterns."
            )
        return "exact-enumeration"
    return "monte-carlo"


class ColumnFacts(NamedTuple):
    """Per-column facts of :func:`signflip_tests`, computed once (vectorized when possible)."""

    columns: list[NDArray[np.float64]]  # rescaled by 2**-exps (exact)
    exps: NDArray[np.int64]
    totals: NDArray[np.float64]  # float(col.sum()) of each rescaled column
    means: NDArray[np.float64]
    tolerances: NDArray[np.float64]  # tie_tolerance(col)
    n_nonzero: NDArray[np.int64]
    n_positive: NDArray[np.int64]
    equal_magnitude: NDArray[np.bool_]  # all nonzero |d| equal: the exact-binomial null


def column_facts(raw: list[NDArray[np.float64]]) -> ColumnFacts:
    """Rescale each column by a power of two and take the facts the tests need.

    Columns of one length are handled as one ``(k, n)`` array; each row reduction runs the
    same pairwise summation as on the 1-D column, so every fact equals the per-column value
    bit for bit. Scaling by a power of two is exact: sums of huge values cannot overflow, and
    p-values are those of the unscaled data.
    """
    if len({col.size for col in raw}) == 1:
        blocks = [np.stack(raw)]
    else:
        blocks = [col[None, :] for col in raw]
    parts: list[tuple[NDArray[Any], ...]] = []
    columns: list[NDArray[np.float64]] = []
    for block in blocks:
        top = np.max(np.abs(block), axis=1)
        exps = np.where(top > 0, np.frexp(top)[1], 0).astype(np.int64)
        scaled = np.ldexp(block, -exps[:, None])
        mags = np.abs(scaled)
        nonzero = scaled != 0
        first = mags[np.arange(len(mags)), np.argmax(nonzero, axis=1)]
        close = np.abs(mags - first[:, None]) <= MAGNITUDE_TOLERANCE * first[:, None]
        totals = scaled.sum(axis=1)
        n = scaled.shape[1]
        parts.append(
            (
                exps,
                totals,
                totals / n,
                8.0 * max(n, 1) * _EPS * mags.sum(axis=1),
                np.count_nonzero(nonzero, axis=1),
                np.count_nonzero(scaled > 0, axis=1),
                np.all(close | ~nonzero, axis=1),
            )
        )
        columns.extend(scaled)
    merged = [np.concatenate(field) for field in zip(*parts, strict=True)]
    return ColumnFacts(columns, *merged)


def count_extreme(sums: NDArray[np.float64], observed: float, tol: float, alternative: str) -> int:
    if alternative == "two-sided":
        return int(np.count_nonzero(np.abs(sums) >= abs(observed) - tol))
    if alternative == "greater":
        return int(np.count_nonzero(sums >= observed - tol))
    return int(np.count_nonzero(sums <= observed + tol))


def monte_carlo_counts(
    columns: list[NDArray[np.float64]],
    observed: NDArray[np.float64],
    tol: NDArray[np.float64],
    seed: int,
    n_resamples: int,
    width: int,
    alternative: str,
) -> NDArray[np.int64]:
    """Null sums at least as extreme as the observed one, per column, over one sign matrix.

    The columns (zero-padded to `width`) are multiplied by the sign matrix of `seed` chunk by
    chunk and counted while the chunk is in cache, with the comparison of
    :func:`count_extreme`; the ``n_resamples x k`` null is never held in memory.
    """
    counts = np.zeros(len(columns), dtype=np.int64)
    if not columns:
        return counts
    padded = np.zeros((width, len(columns)))
    for k, col in enumerate(columns):
        padded[: col.size, k] = col
    if alternative == "two-sided":
        cut = np.abs(observed) - tol
    elif alternative == "greater":
        cut = observed - tol
    else:
        cut = observed + tol
    for _, _, sums in null_sum_blocks(seed, n_resamples, width, padded):
        if alternative == "two-sided":
            hits = np.abs(sums, out=sums) >= cut
        elif alternative == "greater":
            hits = sums >= cut
        else:
            hits = sums <= cut
        counts += np.count_nonzero(hits, axis=0)
    return counts


def binomial_pvalue(k: int, m: int, alternative: str) -> float:
    """Exact tail of K ~ Binomial(m, 1/2) for the sum c(2K - m) of equal-magnitude signs.

    Remembered per ``(k, m, alternative)``: a power simulation or an audit asks the same few
    tails hundreds of thousands of times (338,558 calls in one audit of the paper's claims),
    each a sum of up to ``m`` binomial coefficients. As Python integers: a numpy integer hashes
    as the same key, but its ``2**m`` overflows."""
    return _binomial_pvalue(int(k), int(m), str(alternative))


@functools.lru_cache(maxsize=1 << 16)
def _binomial_pvalue(k: int, m: int, alternative: str) -> float:
    if m == 0:
        return 1.0
    if alternative == "greater":
        lo, hi = k, m  # P(K >= k)
        ranges = [(lo, hi)]
    elif alternative == "less":
        ranges = [(0, k)]
    else:
        dev = abs(2 * k - m)
        if dev == 0:
            return 1.0
        ranges = [((m + dev + 1) // 2, m), (0, (m - dev) // 2)]
    if m <= _INTEGER_BINOMIAL_MAX:
        count = sum(math.comb(m, i) for lo, hi in ranges for i in range(lo, hi + 1))
        return min(1.0, count / 2**m)
    # Each range is an upper tail (hi == m) or a lower tail (lo == 0): take it with sf or
    # cdf directly, never as a difference of cdfs, which cancels to 0 for tiny tails.
    total = 0.0
    for lo, hi in ranges:
        if hi == m:
            total += float(stats.binom.sf(lo - 1, m, 0.5))
        else:
            total += float(stats.binom.cdf(hi, m, 0.5))
    return min(1.0, total)
