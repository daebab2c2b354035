"""Westfall–Young step-down corrections over one shared sign-flip matrix (maxT and minP).

Holm and Benjamini–Hochberg see only the p-values of a family. When the family's tests are
run on the *same* units -- several methods against one baseline on the same queries, several
budgets or metrics of one method -- their statistics are correlated, and a correction that
uses that dependence rejects more while keeping the family-wise error rate (FWER). Westfall
and Young's step-down procedure does so by resampling the whole family at once: every
resample flips the sign of each *unit* once, and that flip applies to every test the unit
takes part in (a query's differences under all methods, metrics and budgets change sign
together). The maximum of the family's statistics over that joint null is the reference
distribution of the largest observed statistic; the step-down removes each rejected test
and repeats on the rest.

Two statistics are offered:

- ``'maxt'``: the standardized sum ``|sum_i s_i d_i| / sqrt(sum_i d_i^2)`` of each test. Its
  denominator does not change under sign flips, so each test's marginal null is exactly its
  own sign-flip test (same ordering as the mean), with variance 1: tests on different
  scales and sizes are comparable.
- ``'minp'``: each resample's statistics are first turned into that test's own sign-flip
  p-value, and the step-down runs on the smallest p. It balances discrete tests of very
  different sizes (a 0/1 cell of 6 queries beside one of 600) better than maxT.

Validity: under the complete null the procedure is exact when each unit's vector of
differences (one entry per test it takes part in) is symmetric about zero jointly,
``d_u ~ -d_u``. For *one* method pair across metrics, budgets and cells this follows from
the two methods being exchangeable on each unit: swapping their labels negates every one of
the unit's differences at once. When several methods share a baseline (or all pairs are
compared) exchangeable methods do not make the vector jointly symmetric unless the noise is
(e.g. 0/1 metrics far from 1/2, skewed scores); the sign-flip null still has the right
covariance (``sum_u d_u d_u'``, the observed cross products), so the procedure is valid
asymptotically. ``benchmarks/stepdown_fwer.py`` measures the FWER on such designs
(docs/statistics.md). Strong control (Westfall & Young 1993, §2.8) rests on subset
pivotality, which the joint sign-flip null has under that symmetry.

References
----------
Westfall, P. H. and Young, S. S. (1993). *Resampling-Based Multiple Testing*. Wiley,
Algorithms 2.8 (maxT) and 2.9 (minP). Ge, Y., Dudoit, S. and Speed, T. P. (2003).
Resampling-based multiple testing for microarray data analysis. *Test* 12(1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._resampling import null_sum_blocks
from ._validation import MAX_RESAMPLES, check_level, check_resamples, check_rng, unit_labels

__all__ = ["STEPDOWN_METHODS", "StepDownResult", "westfall_young"]

#: The step-down statistics (module docstring).
STEPDOWN_METHODS = ("maxt", "minp")

#: Largest exact enumeration: ``2**20`` sign patterns of the units with a nonzero difference.
_MAX_EXACT_UNITS = 20

#: Largest null held in memory (resamples times tests, one float each: 512 MiB).
_MAX_NULL_ELEMENTS = 2**26

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, kw_only=True, eq=False)
class StepDownResult:
    """Result of :func:`westfall_young`.

    Attributes
    ----------
    pvalues_adjusted : numpy.ndarray
        Family-wise adjusted p-values, in input order (monotone in the step-down order).
    pvalues : numpy.ndarray
        Each test's own (unadjusted) sign-flip p-value from the same resamples.
    reject : numpy.ndarray of bool
        ``pvalues_adjusted <= alpha``.
    statistics : numpy.ndarray
        Observed standardized statistics ``|sum d| / sqrt(sum d^2)`` (0 when every
        difference is 0).
    method : str
        ``'maxt'`` or ``'minp'``.
    exact : bool
        True when every sign pattern of the units was enumerated (then every p-value times
        ``n_resamples`` is an integer); False for Monte Carlo (``(b + 1) / (B + 1)``).
    n_resamples : int
        Sign patterns used: ``2**n_units_nonzero`` when exact, else ``B``.
    n_units : int
        Distinct units over the family; ``n_units_nonzero`` of them have a nonzero
        difference in some test (the others cannot move any statistic).
    alpha : float
    """

    pvalues_adjusted: NDArray[np.float64]
    pvalues: NDArray[np.float64]
    reject: NDArray[np.bool_]
    statistics: NDArray[np.float64]
    method: str
    exact: bool
    n_resamples: int
    n_units: int
    n_units_nonzero: int
    alpha: float


def _dense(differences: Any, units: Sequence[Any] | None) -> NDArray[np.float64]:
    """The ``(n_units, k)`` matrix of differences, zero where a unit is not in a test."""
    if units is None:
        d = np.asarray(differences, dtype=np.float64)
        if d.ndim != 2 or d.shape[0] == 0 or d.shape[1] == 0:
            raise ValueError(
                "`differences` must be an (n_units, k) array when `units` is not given; got "
                f"shape {d.shape}."
            )
        if not np.all(np.isfinite(d)):
            raise ValueError("`differences` holds NaN or inf; drop or impute pairs first.")
        return d
    cols = [np.asarray(c, dtype=np.float64) for c in differences]
    if len(cols) != len(units):
        raise ValueError(
            f"`differences` has {len(cols)} tests but `units` has {len(units)} label arrays."
        )
    if not cols:
        raise ValueError("`differences` holds no test.")
    shapes = [np.shape(u) for u in units]
    labels = unit_labels(units, "units")  # numbers as numbers, text as text, never mixed
    index: dict[Any, int] = {}
    for j, (c, lab) in enumerate(zip(cols, labels, strict=True)):
        if c.ndim != 1 or c.size == 0 or shapes[j] != c.shape:
            raise ValueError(
                f"test {j}: `differences[{j}]` and `units[{j}]` must be non-empty 1-D arrays of "
                f"one length; got shapes {c.shape} and {shapes[j]}."
            )
        if not np.all(np.isfinite(c)):
            raise ValueError(f"test {j}: `differences[{j}]` holds NaN or inf.")
        if len(set(lab)) != len(lab):
            raise ValueError(f"test {j}: a unit appears twice in `units[{j}]`.")
        for name in lab:
            index.setdefault(name, len(index))
    out = np.zeros((len(index), len(cols)))
    for j, (c, lab) in enumerate(zip(cols, labels, strict=True)):
        out[[index[x] for x in lab], j] = c
    return out


def _null(z: NDArray[np.float64], n_resamples: int, rng: Any) -> tuple[NDArray[np.float64], bool]:
    """|sums| of the standardized columns over the pool of sign patterns, identity first.

    Exact (all ``2**n`` patterns, the identity being pattern 0) when ``2**n <= n_resamples``
    and n is small enough; otherwise the identity and `n_resamples` random patterns of the
    shared sign stream (:mod:`osustat._resampling`).
    """
    n, k = z.shape
    if n <= _MAX_EXACT_UNITS and 2**n <= n_resamples:
        if 2**n * k > _MAX_NULL_ELEMENTS:
            raise ValueError(_memory_message(2**n, k))
        bits = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
        return np.abs((1.0 - 2.0 * bits) @ z), True
    if (n_resamples + 1) * k > _MAX_NULL_ELEMENTS:
        raise ValueError(_memory_message(n_resamples + 1, k))
    seed = int(check_rng(rng).integers(2**63 - 1))
    pool = np.empty((n_resamples + 1, k))
    pool[0] = z.sum(axis=0)
    for start, stop, sums in null_sum_blocks(seed, n_resamples, n, z):
        pool[1 + start : 1 + stop] = sums
    return np.abs(pool, out=pool), False


def _memory_message(rows: int, k: int) -> str:
    return (
        f"the step-down null would hold {rows:,} sign patterns × {k} tests "
        f"({rows * k * 8 / 2**30:.1f} GiB); use `n_resamples` at most "
        f"{min(_MAX_NULL_ELEMENTS // k - 1, MAX_RESAMPLES):,} or split the family "
        f"(at most {_MAX_NULL_ELEMENTS:,} values)."
    )


def westfall_young(
    differences: Any,
    units: Sequence[Any] | None = None,
    *,
    method: str = "maxt",
    n_resamples: int = 10_000,
    alpha: float = 0.05,
    rng: Any = None,
) -> StepDownResult:
    """Westfall–Young step-down adjusted p-values of a family of paired sign-flip tests.

    Parameters
    ----------
    differences : (n_units, k) array_like, or a sequence of k 1-D array_like
        The paired differences of each test. A 2-D array has every test on the same units
        (row i is unit i); with a sequence, `units` says which unit each difference belongs
        to.
    units : sequence of k 1-D array_like, optional
        Unit labels of each test: numbers compare as numbers (0 and 0.0 are one unit), text
        as text; labels mixing the two kinds are refused (the id rule of
        :func:`osustat.validate_records`: 1 and "1" never silently one unit). A unit that
        appears in several tests gets one sign per resample in all of them; a unit may appear
        once per test.
    method : {'maxt', 'minp'}
        The step-down statistic (module docstring).
    n_resamples : int
        Random sign patterns (Monte Carlo). When ``2**n <= n_resamples`` for the ``n`` units
        with a nonzero difference (and n <= 20), all ``2**n`` patterns are enumerated and
        the p-values are exact.
    alpha : float
        Family-wise level for `reject`.
    rng : {None, int, numpy.random.Generator}
        Seed of the sign patterns.

    Returns
    -------
    StepDownResult

    Notes
    -----
    Tests are ordered by their observed statistic (maxT: largest standardized sum first;
    minP: smallest p first, ties by statistic). With ``q_b^(j)`` the largest statistic (the
    smallest p) of resample ``b`` among the tests ranked ``j`` and after, the adjusted p of
    the test ranked ``j`` is the share of the pool -- the observed signs plus the resamples,
    so a Monte Carlo p is ``(count + 1) / (B + 1)`` and never 0 -- where ``q_b^(j)`` is at
    least as extreme as the test's observed value, made monotone along the order. Ties are
    counted as extreme within ``8 n eps sum|z|`` as in :func:`osustat.signflip_tests`.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.stepdown import westfall_young
    >>> rng = np.random.default_rng(0)
    >>> shared = rng.normal(0, 1, size=(40, 1))
    >>> d = shared + 0.3 * rng.normal(0, 1, size=(40, 3)) + [0.0, 0.45, 0.6]
    >>> res = westfall_young(d, n_resamples=2_000, rng=1)
    >>> res.reject.tolist(), bool(np.all(res.pvalues_adjusted >= res.pvalues))
    ([False, True, True], True)
    """
    if method not in STEPDOWN_METHODS:
        raise ValueError(f"`method` must be one of {list(STEPDOWN_METHODS)}; got {method!r}.")
    n_resamples = check_resamples(n_resamples)
    alpha = check_level(alpha, "alpha")
    dense = _dense(differences, units)
    n_units, k = dense.shape
    keep = np.any(dense != 0, axis=1)
    used = dense[keep]
    norms = np.sqrt(np.einsum("ij,ij->j", used, used))
    z = np.divide(used, norms, out=np.zeros_like(used), where=norms > 0)
    null, exact = _null(z, n_resamples, rng)
    pool = null.shape[0]
    tol = 8.0 * max(z.shape[0], 1) * _EPS * np.abs(z).sum(axis=0)
    observed = null[0].copy()
    # Each test's own p-value from the pool: how many patterns are at least as extreme.
    ordered = np.sort(null, axis=0)
    raw_counts = np.array(
        [pool - np.searchsorted(ordered[:, j], observed[j] - tol[j]) for j in range(k)]
    )
    if method == "maxt":
        order = np.lexsort((np.arange(k), -observed))
        worst = np.maximum.accumulate(null[:, order[::-1]], axis=1)[:, ::-1]
        counts = np.count_nonzero(worst >= (observed - tol)[order], axis=0)
    else:
        # p* of every pattern for every test (counts out of the pool; fewer = more extreme).
        pstar = np.empty(null.shape, dtype=np.int64)
        for j in range(k):
            pstar[:, j] = pool - np.searchsorted(ordered[:, j], null[:, j] - tol[j])
        order = np.lexsort((np.arange(k), -observed, raw_counts))
        best = np.minimum.accumulate(pstar[:, order[::-1]], axis=1)[:, ::-1]
        counts = np.count_nonzero(best <= raw_counts[order], axis=0)
    adjusted_sorted = np.maximum.accumulate(counts / pool)
    adjusted = np.empty(k)
    adjusted[order] = np.minimum(adjusted_sorted, 1.0)
    pvalues = raw_counts / pool
    return StepDownResult(
        pvalues_adjusted=adjusted,
        pvalues=pvalues,
        reject=adjusted <= alpha,
        statistics=observed,
        method=method,
        exact=exact,
        n_resamples=pool if exact else pool - 1,
        n_units=n_units,
        n_units_nonzero=int(keep.sum()),
        alpha=alpha,
    )
