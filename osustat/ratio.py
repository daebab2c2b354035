"""Relative effects: the ratio of two paired means with Fieller's confidence interval.

The paper's headline numbers are relative ("+39.9% Recall, +61.5% Hit@2": OSU-Mem's mean over
the baseline's, minus 1). A relative effect needs its own interval: the ratio of two noisy
means is not the mean of anything, and its uncertainty depends on how well the baseline mean
is pinned away from zero. Fieller's interval inverts the t-test of ``mean(t - R b) = 0`` over
the ratio ``R``, using the pairing (the covariance of the two means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._validation import align_paired, as_float_vector, check_level, check_same_length
from .intervals import ConfidenceInterval

__all__ = ["RatioResult", "ratio_of_means"]


@dataclass(frozen=True, kw_only=True)
class RatioResult:
    """Ratio of two paired means with its Fieller confidence interval.

    Attributes
    ----------
    statistic : float
        ``mean(treatment) / mean(baseline)`` (``inf``/``nan`` when the baseline mean is 0).
    low, high : float
        Interval for the ratio; ``-inf``/``inf`` when the set is unbounded (see `bounded`).
    level : float
    n : int
        Number of pairs.
    bounded : bool
        False when the baseline mean is not significantly different from 0 at `level`: the
        Fieller set is then unbounded and reported as ``(-inf, inf)`` (conservative: the
        exact set may exclude an inner interval).
    """

    statistic: float
    low: float
    high: float
    level: float
    n: int
    bounded: bool

    @property
    def relative(self) -> float:
        """The relative effect ``statistic - 1`` (+0.399 for "+39.9%")."""
        return self.statistic - 1.0

    @property
    def interval(self) -> ConfidenceInterval:
        """The Fieller interval for the ratio."""
        return ConfidenceInterval(low=self.low, high=self.high, level=self.level, method="fieller")

    @property
    def relative_interval(self) -> ConfidenceInterval:
        """The interval for ``ratio - 1`` (unpacks as ``(low, high)``)."""
        return ConfidenceInterval(
            low=self.low - 1.0, high=self.high - 1.0, level=self.level, method="fieller"
        )


def ratio_of_means(treatment: Any, baseline: Any, *, level: float = 0.95) -> RatioResult:
    r"""Ratio of paired means ``mean(t) / mean(b)`` and Fieller's confidence interval.

    Parameters
    ----------
    treatment, baseline : array_like
        Paired per-unit values (same length, at least 3), finite. Two pandas Series are
        paired by index label (labels that differ are an error), anything else by position.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    RatioResult

    Notes
    -----
    With unit means ``t_bar``, ``b_bar``, sample variances ``s_t^2``, ``s_b^2``, covariance
    ``s_tb`` and ``q = t_{n-1, (1 + level)/2}``, the interval is the set of ``R`` with

    .. math::  (\bar t - R \bar b)^2 \le \frac{q^2}{n} (s_t^2 - 2 R s_{tb} + R^2 s_b^2),

    i.e. the ratios that the one-sample t-test of ``t_i - R b_i`` does not reject. When
    ``A = \bar b^2 - q^2 s_b^2 / n > 0`` the set is the interval between the two roots;
    otherwise it is unbounded. Exact for normal pairs; for bounded metrics it relies on the
    central limit theorem over units (use episodes as units when queries are clustered).

    References
    ----------
    Fieller, E. C. (1954). Some problems in interval estimation. *J. R. Stat. Soc. B* 16,
    175-185.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.ratio import ratio_of_means
    >>> rng = np.random.default_rng(0)
    >>> b = rng.uniform(0.1, 0.3, 200)
    >>> t = 1.4 * b + rng.normal(0, 0.02, 200)
    >>> res = ratio_of_means(t, b)
    >>> round(res.relative, 1), res.low < 1.4 < res.high, res.bounded
    (0.4, True, True)
    """
    treatment, baseline = align_paired(treatment, baseline, ("treatment", "baseline"))
    t = as_float_vector(treatment, "treatment", min_size=3)
    b = as_float_vector(baseline, "baseline", min_size=3)
    check_same_length([("treatment", t), ("baseline", b)])
    level = check_level(level)
    n = t.size
    tm, bm = float(t.mean()), float(b.mean())
    cov = np.cov(t, b, ddof=1)
    vt, vb, ctb = float(cov[0, 0]) / n, float(cov[1, 1]) / n, float(cov[0, 1]) / n
    q2 = float(stats.t.ppf(0.5 + level / 2, n - 1)) ** 2
    ratio = tm / bm if bm != 0 else (math.copysign(math.inf, tm) if tm != 0 else math.nan)
    a = bm * bm - q2 * vb
    if a <= 0:
        return RatioResult(
            statistic=ratio, low=-math.inf, high=math.inf, level=level, n=n, bounded=False
        )
    half_b = tm * bm - q2 * ctb
    c = tm * tm - q2 * vt
    disc = max(half_b * half_b - a * c, 0.0)
    root = math.sqrt(disc)
    return RatioResult(
        statistic=ratio,
        low=(half_b - root) / a,
        high=(half_b + root) / a,
        level=level,
        n=n,
        bounded=True,
    )
