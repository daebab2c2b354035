"""Paired sign-flip (randomization) tests for the mean of per-query differences.

The paper's significance claims (Section 5.3, Tables 4, 5, 10, 12) are paired sign-flip
permutation tests on per-query (or per-episode) differences ``d_i = a_i - b_i``. Under the null
hypothesis that each ``d_i`` is symmetric about zero, every sign pattern ``s in {-1, +1}^n`` is
equally likely, and the p-value is the fraction of patterns whose statistic is at least as
extreme as the observed one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._resampling import enumerated_sums, null_sums
from ._signflip_null import (
    EXACT_ENUMERATION_FLOOR,
    MAX_CONVOLVED_GROUP,
    ConvolvedNull,
    binomial_pvalue,
    choose_null,
    column_facts,
    count_extreme,
    gib,
    grouped_null,
    monte_carlo_counts,
    tie_tolerance,
)
from ._validation import (
    MAX_RESAMPLES,
    align_paired,
    as_float_vector,
    check_alternative,
    check_level,
    check_resamples,
    check_rng,
    check_same_length,
    differences_columns,
    list_some,
)
from .intervals import ConfidenceInterval

__all__ = [
    "SignFlipResult",
    "paired_signflip_test",
    "signflip_tests",
]

#: Largest Monte Carlo null (resamples times comparisons, one float each: 2 GiB).
_MAX_NULL_ELEMENTS = 2**28

#: Largest support of the exact null the confidence interval inverts (product over groups of
#: equal differences of ``count + 1``); beyond it the interval inverts the Monte Carlo null.
_MAX_CI_SUPPORT = 2**20


@dataclass(frozen=True, kw_only=True)
class SignFlipResult:
    """Result of a paired sign-flip test.

    Attributes
    ----------
    statistic : float
        Mean paired difference ``mean(a - b)``.
    pvalue : float
        The p-value in ``(0, 1]``.
    n : int
        Number of pairs.
    n_nonzero : int
        Number of nonzero differences; zeros do not change the null distribution.
    exact : bool
        Whether the p-value is exact (full enumeration or exact binomial) rather than
        Monte Carlo.
    n_resamples : int
        Size of the null distribution used: ``2**n_nonzero`` when exact, otherwise the number
        of random sign vectors ``B`` (then ``pvalue = (b + 1) / (B + 1)``).
    alternative : str
        ``'two-sided'``, ``'greater'`` (mean of ``a - b`` above 0) or ``'less'``.
    method : str
        ``'exact-binomial'`` (all nonzero differences have the same magnitude, as for 0/1
        metrics), ``'exact-enumeration'`` or ``'monte-carlo'``.
    min_pvalue : float
        Smallest p-value this test could have returned for this `n` and resampling setting.
    """

    statistic: float
    pvalue: float
    n: int
    n_nonzero: int
    exact: bool
    n_resamples: int
    alternative: str
    method: str
    min_pvalue: float
    _differences: NDArray[np.float64] = field(repr=False, compare=False)
    _sign_seed: int = field(repr=False, compare=False)
    _sign_width: int = field(repr=False, compare=False)
    _ci_resamples: int = field(repr=False, compare=False)
    _scale_exp: int = field(default=0, repr=False, compare=False)

    @property
    def pvalue_se(self) -> float:
        """Monte Carlo standard error of the p-value (0 when exact): sqrt(p(1-p)/B)."""
        if self.exact:
            return 0.0
        return float(np.sqrt(self.pvalue * (1 - self.pvalue) / self.n_resamples))

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Confidence interval for the mean difference by inverting the sign-flip test.

        The interval holds every shift ``mu0`` that the two-sided test of
        ``d - mu0`` does not reject at ``1 - level`` (Hodges & Lehmann's inversion, under the
        model that ``d - mu`` is symmetric about 0). The null is exact whenever its support
        is small enough (``prod(n_g + 1) <= 2**20`` over groups of ``n_g`` equal
        differences: always for 0/1 metrics up to about 300 pairs, and for up to 20
        distinct values), so an exact test and its interval agree: ``p <= 1 - level`` exactly
        when the interval excludes 0. An enumerated test whose support is large only through one
        big group (a few nonzero differences beside many zeros) is inverted exactly as well,
        that group summed out by its binomial law (``ConvolvedNull``). Otherwise the test's
        own Monte Carlo sign vectors serve every ``mu0``. Either way the interval is
        deterministic; ``method`` says which null was inverted. When even the most extreme
        shift cannot be rejected (tiny `n`), that side is infinite.

        Examples
        --------
        >>> import numpy as np
        >>> from osustat import paired_signflip_test
        >>> rng = np.random.default_rng(0)
        >>> a = rng.normal(0.3, 1, size=40); b = np.zeros(40)
        >>> res = paired_signflip_test(a, b, rng=1)
        >>> ci = res.confidence_interval(0.95)
        >>> bool(ci.low < res.statistic < ci.high)
        True
        """
        level = check_level(level)
        d = self._differences  # rescaled by 2**-_scale_exp (exact); bounds are scaled back
        n = d.size
        total = float(d.sum())
        alpha = 1.0 - level
        # A shift is kept when its p exceeds alpha by more than rounding: an exact p is a
        # dyadic k / 2**m and can equal alpha at levels such as .875, where the null's
        # weights summed in floats read 0.12500000000000006 and kept 0 beside a test that
        # rejects (a reviewer, 6 of 480 intervals at .75 and .875)
        keep = alpha * (1.0 + 2.0**-40)
        values, counts_g = np.unique(d, return_counts=True)
        support = math.prod(int(c) + 1 for c in counts_g)
        largest = int(counts_g.max())
        if support <= _MAX_CI_SUPPORT:
            # Exact: sum_i s_i (d_i - mu0) over sign vectors, grouped by equal d_i, is
            # sum_g (v_g - mu0) J_g with J_g = 2 K_g - n_g, K_g ~ Binomial(n_g, 1/2)
            # independent. At mu0 = 0 this is the test's own exact null (binomial for 0/1
            # data, full enumeration otherwise), so the interval and the p-value agree.
            sums, counts, weights = grouped_null(values, counts_g)
            method = "sign-flip inversion (exact)"

            def pvalue(mu0: float) -> float:
                tol = tie_tolerance(d - mu0)
                obs = abs(total - n * mu0)
                hit = np.abs(sums - mu0 * counts) >= obs - tol
                return float(weights @ hit)

        elif (
            self.method == "exact-enumeration"  # few nonzero differences: few blocks
            and support // (largest + 1) <= _MAX_CI_SUPPORT
            and largest < MAX_CONVOLVED_GROUP
        ):
            # An exact test (a few nonzero differences beside many zeros) inverted exactly
            # too, the largest group summed out by its binomial law: its Monte Carlo
            # inversion could disagree with the test near the level (a Monte Carlo test
            # keeps the inversion of its own sign vectors below, which agrees with it)
            null = ConvolvedNull(values, counts_g)
            method = "sign-flip inversion (exact)"

            def pvalue(mu0: float) -> float:
                return null.pvalue(mu0, abs(total - n * mu0), tie_tolerance(d - mu0))

        else:
            out = null_sums(
                self._sign_seed,
                self._ci_resamples,
                self._sign_width,
                np.column_stack([d, np.ones(n)]),
            )
            sums, counts = out[:, 0], out[:, 1]
            method = "sign-flip inversion (monte-carlo)"

            def pvalue(mu0: float) -> float:
                tol = tie_tolerance(d - mu0)
                obs = abs(total - n * mu0)
                hits = int(np.count_nonzero(np.abs(sums - mu0 * counts) >= obs - tol))
                return (hits + 1) / (sums.size + 1)

        centre = float(d.mean())
        spread = float(d.max() - d.min()) or 1.0

        def bound(far: float) -> float:
            if pvalue(far) > keep:
                return math.copysign(math.inf, far - centre)
            inside, outside = centre, far  # pvalue(inside) == 1 > keep >= pvalue(outside)
            for _ in range(44):  # to ~1e-13 of the data's range
                mid = 0.5 * (inside + outside)
                if mid in (inside, outside):
                    break
                if pvalue(mid) > keep:
                    inside = mid
                else:
                    outside = mid
            return inside

        low = bound(float(d.min()) - spread)
        high = bound(float(d.max()) + spread)
        # The acceptance set of a discrete null is bounded by jump points, and 0 is one (the
        # shift breaks the ties of zero differences), where bisection can only get within
        # its precision. Take the hull with 0 when the test at 0 does not reject, so the
        # interval holds 0 exactly when the test's own p-value exceeds 1 - level.
        if pvalue(0.0) > keep:
            low, high = min(low, 0.0), max(high, 0.0)
        e = self._scale_exp
        return ConfidenceInterval(
            low=float(np.ldexp(low, e)), high=float(np.ldexp(high, e)), level=level, method=method
        )


def paired_signflip_test(
    a: Any,
    b: Any,
    *,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    rng: Any = None,
) -> SignFlipResult:
    r"""Paired sign-flip randomization test of ``mean(a - b) = 0``.

    Parameters
    ----------
    a, b : array_like
        Paired per-unit scores of the two methods (e.g. Hit@2 of treatment and baseline per
        query). Equal length, finite, at least 2 pairs. Two pandas Series are paired by
        index label (labels that differ are an error), anything else by position.
    alternative : {'two-sided', 'greater', 'less'}
        Two-sided compares ``|T|`` with ``|T_obs|``; ``'greater'`` tests ``mean(a - b) > 0``.
    n_resamples : int
        Number of random sign vectors when the null distribution is not enumerated. Exact
        enumeration is used whenever ``2**n_nonzero <= max(n_resamples, 1024)``: up to ten
        nonzero differences always.
    rng : {None, int, numpy.random.Generator}
        Seed or generator (SPEC 7) for the Monte Carlo sign vectors and the confidence
        interval's sign vectors.

    Returns
    -------
    SignFlipResult
        ``statistic``, ``pvalue``, ``n``, ``n_nonzero``, ``exact``, ``n_resamples``,
        ``alternative``, ``method``, ``min_pvalue`` and ``confidence_interval(level)``.

    Notes
    -----
    Null hypothesis: the differences ``d_i = a_i - b_i`` are independent and each symmetric
    about zero, so flipping any subset of signs leaves their joint law unchanged. Statistic
    ``T = mean(d)``; two-sided p is ``P(|T*| >= |T_obs|)`` over sign vectors ``s`` with
    ``T* = mean(s * d)``. The p-value is computed, in order of preference:

    1. exact binomial, when all nonzero ``|d_i|`` are equal (0/1 metrics such as Hit@2):
       ``sum(s * d) = c (2K - m)`` with ``K ~ Binomial(m, 1/2)``;
    2. exact enumeration of all ``2**m`` sign patterns of the ``m`` nonzero differences,
       when ``2**m <= max(n_resamples, 1024)``; ``p * 2**m`` is then an integer;
    3. Monte Carlo with ``p = (b + 1) / (B + 1)`` (Phipson & Smyth, 2010), which is never 0.

    Ties are counted as "at least as extreme" with a tolerance ``8 n eps sum(|d|)``
    (``eps`` = 2.2e-16), which absorbs the rounding of sums taken in different orders. Two
    null sums closer than that are merged, so when the magnitudes span more than about
    ``1 / (8 n eps)`` (5.6e14 / n) the small differences cannot move the p-value: for
    ``d = (1e15, 1, 1, 1)`` the p-value is 1 where exact rational enumeration gives 1/8. The
    merging only adds patterns to the count, so p is then conservative, never smaller than
    exact; rescale or drop such outliers if the small differences matter.

    References
    ----------
    .. [1] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       Statistical Applications in Genetics and Molecular Biology 9(1).

    Examples
    --------
    >>> from osustat import paired_signflip_test
    >>> res = paired_signflip_test([1, 1, 1, 0, 1, 0], [0, 0, 1, 0, 0, 1])
    >>> res.method, res.n_nonzero, round(res.pvalue, 4)
    ('exact-binomial', 4, 0.625)
    >>> res = paired_signflip_test([0.5, 0.9, 0.7, 0.8], [0.1, 0.2, 0.6, 0.4])
    >>> res.exact, res.pvalue * 2**res.n_nonzero
    (True, 2.0)
    """
    a, b = align_paired(a, b, ("a", "b"))
    a_arr = as_float_vector(a, "a", min_size=2)
    b_arr = as_float_vector(b, "b", min_size=2)
    check_same_length([("a", a_arr), ("b", b_arr)], note=" (paired data)")
    with np.errstate(over="ignore"):
        d = a_arr - b_arr
    bad = np.flatnonzero(~np.isfinite(d))
    if bad.size:
        raise ValueError(
            f"`a - b` overflows float64 at positions {list_some(bad)}; rescale `a` and `b`."
        )
    return signflip_tests([d], alternative=alternative, n_resamples=n_resamples, rng=rng)[0]


def signflip_tests(
    differences: Any,
    *,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    rng: Any = None,
    _exact_floor: int = EXACT_ENUMERATION_FLOOR,
) -> list[SignFlipResult]:
    """Many paired sign-flip tests at once, sharing one set of random sign vectors.

    Parameters
    ----------
    differences : 2-D array_like or sequence of 1-D array_like
        Either an ``(n, k)`` array, one column of paired differences per comparison (all over
        the same ``n`` units), or a sequence of ``k`` 1-D arrays of any lengths (e.g. one per
        cell). No NaN: drop or impute missing pairs before calling, and report how many.
    alternative, n_resamples, rng
        As in :func:`paired_signflip_test`.

    Returns
    -------
    list of SignFlipResult
        One result per comparison, in input order. When all columns have the same length,
        each equals what :func:`paired_signflip_test` returns for that column alone with the
        same `rng`; with ragged columns the sign matrix is as wide as the longest column, so a
        shorter column's Monte Carlo draws differ from its solo run (same distribution).

    Notes
    -----
    One ``B x max(n_j)`` matrix of random signs is drawn and applied to every column (column
    ``j`` uses its first ``n_j`` sign columns), so the null sums of all Monte Carlo tests come
    from a single matrix product. Each test remains valid on its own, but the p-values are
    dependent across comparisons (they share the resampling noise). Corrections that hold
    under arbitrary dependence (Holm, Bonferroni) remain valid; procedures that assume
    independence or positive dependence (Benjamini-Hochberg) are then approximate.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat import signflip_tests
    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(0, 1, size=(50, 3)) + [0.0, 0.5, 1.0]
    >>> [r.pvalue < 0.01 for r in signflip_tests(d, rng=1)]
    [False, True, True]
    """
    raw = differences_columns(differences)
    alternative = check_alternative(alternative)
    n_resamples = check_resamples(n_resamples)
    generator = check_rng(rng)
    seed = int(generator.integers(2**63 - 1))
    facts = column_facts(raw)
    columns = facts.columns
    sizes = [col.size for col in columns]
    width = max(sizes)
    # `_exact_floor`: the power engines simulate thousands of small tests with their own
    # budget of sign vectors (their tables are reproduced with it); reports use the floor
    plans = _plans(facts, n_resamples, _exact_floor)
    mc = [j for j, plan in enumerate(plans) if plan == "monte-carlo"]
    if n_resamples * len(mc) > _MAX_NULL_ELEMENTS:
        raise ValueError(
            f"`n_resamples` = {n_resamples:,} Monte Carlo sign vectors for {len(mc)} "
            f"comparison(s) would need {gib(n_resamples * len(mc))} of memory; use at most "
            f"{min(_MAX_NULL_ELEMENTS // len(mc), MAX_RESAMPLES):,} (100,000 gives p-values "
            "to about +-0.0014)."
        )
    mc_counts = monte_carlo_counts(
        [columns[j] for j in mc],
        facts.totals[mc],
        facts.tolerances[mc],
        seed,
        n_resamples,
        width,
        alternative,
    )
    # (count + 1) / (n_resamples + 1) lies in (0, 1]: no clipping needed, as 1 / (B + 1)
    mc_p = {j: (c + 1) / (n_resamples + 1) for j, c in zip(mc, mc_counts.tolist(), strict=True)}
    mc_min = 1.0 / (n_resamples + 1)
    statistics = np.ldexp(facts.means, facts.exps).tolist()
    n_nonzero, exps = facts.n_nonzero.tolist(), facts.exps.tolist()
    results = []
    for j, (col, plan) in enumerate(zip(columns, plans, strict=True)):
        m = n_nonzero[j]
        if plan == "monte-carlo":
            pvalue, size, min_p = mc_p[j], n_resamples, mc_min
        else:
            pvalue, size = _exact_pvalue(plan, col, m, int(facts.n_positive[j]), alternative)
            pvalue = float(min(max(pvalue, 0.0), 1.0))
            min_p = math.ldexp(2.0 if alternative == "two-sided" else 1.0, -m) if m else 1.0
            min_p = float(min(min_p, 1.0))
        results.append(
            SignFlipResult(
                statistic=statistics[j],
                pvalue=pvalue,
                n=sizes[j],
                n_nonzero=m,
                exact=plan != "monte-carlo",
                n_resamples=size,
                alternative=alternative,
                method=plan,
                min_pvalue=min_p,
                _differences=col,
                _sign_seed=seed,
                _sign_width=width,
                _ci_resamples=n_resamples,
                _scale_exp=exps[j],
            )
        )
    return results


def _plans(facts: Any, n_resamples: int, floor: int) -> list[str]:
    """:func:`choose_null` of every column, array-wise; the columns it may enumerate go
    through :func:`choose_null` itself (which refuses an enumeration too large)."""
    m = facts.n_nonzero
    binomial = facts.equal_magnitude
    # 2**m <= max(n_resamples, the floor) for m < 63 (2**62 and above: every such m)
    enumerate_ = ~binomial & (m < 63)
    top = min(max(n_resamples, floor), 2**62)
    enumerate_ &= np.left_shift(np.int64(1), np.minimum(m, 62)) <= top
    plans = np.where(
        binomial, "exact-binomial", np.where(enumerate_, "exact-enumeration", "monte-carlo")
    ).tolist()
    for j in np.flatnonzero(enumerate_).tolist():
        plans[j] = choose_null(False, int(m[j]), n_resamples, j, floor)
    return plans


def _exact_pvalue(
    plan: str, col: NDArray[np.float64], m: int, n_positive: int, alternative: str
) -> tuple[float, int]:
    """(p, size of the null) of an exact plan: the binomial tail, or the full enumeration."""
    if plan == "exact-binomial":
        return binomial_pvalue(n_positive, m, alternative), 2**m
    nz = col[col != 0]
    sums = enumerated_sums(nz)
    extreme = count_extreme(sums, float(nz.sum()), tie_tolerance(nz), alternative)
    return extreme / sums.size, int(sums.size)
