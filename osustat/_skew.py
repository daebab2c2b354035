"""Skewness and the first-order size error it causes in a test of a mean (private).

The sign-flip test and the t-test of a mean assume the values symmetric about the null mean.
When they are skewed, the studentized mean ``T`` is skewed the other way, and its one-sided
tail probabilities move by a term of order ``1/sqrt(n)`` (the one-term Edgeworth expansion of
the studentized mean; Hall 1992, section 2.6):

    P(T <= x) = Phi(x) + gamma (2 x^2 + 1) phi(x) / (6 sqrt(n)) + O(1/n),

``gamma`` the skewness of the values. A lower-tail ('less') test at level ``a`` thus rejects
``a + gamma (2 z^2 + 1) phi(z) / (6 sqrt(n))`` of the time, ``z = Phi^-1(1 - a)``; an
upper-tail ('greater') test the same with ``-gamma``. :func:`skew_excess` is that term at the
sample skewness: the test's predicted excess over its level. It is a rule from theory, used by
the flags of :class:`osustat.equivalence.EquivalenceResult` and
:class:`osustat.trend.TrendResult`; its catch rate is measured in
``benchmarks/results-skew_flag.md`` and, on fresh designs, ``results-skew_flag-fresh.md``
(docs/validation.md section 4.7c).

Reference: Hall, P. (1992). *The Bootstrap and Edgeworth Expansion*, Springer, section 2.6.
"""

from __future__ import annotations

import math

import numpy as np

#: Predicted excess over alpha, as a share of alpha, above which a p-value that assumes
#: symmetry is flagged (issue 35 item 6: a size of at most 1.2 alpha, .06 at .05).
SKEW_TOLERANCE = 0.2


def sample_skewness(values: np.ndarray) -> float:
    """Adjusted Fisher-Pearson skewness G1 (``scipy.stats.skew(bias=False)``), 0 if constant."""
    if values.size < 3 or np.ptp(values) == 0:
        return 0.0
    from scipy import stats

    return float(stats.skew(values, bias=False))


def skew_excess(skewness: float, n: int, alpha: float, tail: str) -> float:
    """Predicted excess rejection rate of a level-`alpha` test of a mean from skewness.

    `tail`: ``'less'`` or ``'greater'`` (one-sided at `alpha`; the sign of the skewness
    decides whether that tail is liberal), ``'either'`` (the larger of the two one-sided
    excesses, for a procedure that needs both one-sided tests to reject, e.g. TOST, whose
    false verdict comes through whichever is liberal) or ``'two-sided'`` (the liberal tail at
    ``alpha / 2``; the other tail's deficit is not credited). Never negative.
    """
    from scipy import stats

    one_tail = alpha / 2 if tail == "two-sided" else alpha
    z = float(stats.norm.isf(one_tail))
    signed = {"less": skewness, "greater": -skewness}.get(tail, abs(skewness))
    coef = (2 * z * z + 1) * float(stats.norm.pdf(z)) / (6 * math.sqrt(n))
    return max(0.0, signed * coef)


def skew_corrected_pvalue(pvalue: float, skewness: float, n: int, tail: str) -> float:
    """``pvalue`` plus the first-order skewness error of a test run at that level.

    The Edgeworth term of :func:`skew_excess` evaluated at ``alpha = pvalue``: the true tail
    probability of the observed statistic when the values are skewed (to first order). A
    small p-value keeps most of its evidence (the term shrinks with the tail), a p-value near
    alpha does not. 1 at most; `pvalue` itself when it is 1.
    """
    if not 0.0 < pvalue < 1.0:
        return pvalue
    return min(1.0, pvalue + skew_excess(skewness, n, pvalue, tail))
