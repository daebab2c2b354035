"""Equivalence of two paired methods within a stated margin: two one-sided sign-flip tests.

"Statistically indistinguishable" and "within ±1 pp" are claims of no (relevant) difference.
A non-significant difference test cannot support them -- it only says the records were too
few to see a difference. The two one-sided tests (TOST; Schuirmann 1987) can: equivalence
within ``[low, high]`` is shown when the mean paired difference is significantly above
``low`` *and* significantly below ``high``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import as_float_vector, check_resamples, check_rng, power_of_two_scale
from .signflip import signflip_tests

__all__ = ["EquivalenceResult", "tost_signflip"]


@dataclass(frozen=True, kw_only=True)
class EquivalenceResult:
    """Result of a paired two one-sided tests (TOST) procedure.

    Attributes
    ----------
    statistic : float
        Mean paired difference.
    pvalue : float
        ``max(pvalue_low, pvalue_high)``: equivalence is shown at level ``alpha`` when
        ``pvalue <= alpha``.
    pvalue_low : float
        One-sided p of ``H0: mean <= low`` against ``mean > low``.
    pvalue_high : float
        One-sided p of ``H0: mean >= high`` against ``mean < high``.
    low, high : float
        The equivalence margin.
    n : int
        Number of pairs.
    exact : bool
        Whether both one-sided p-values are exact (enumeration or binomial).
    n_resamples : int
        Random sign vectors per one-sided test when not exact.
    """

    statistic: float
    pvalue: float
    pvalue_low: float
    pvalue_high: float
    low: float
    high: float
    n: int
    exact: bool
    n_resamples: int

    @property
    def margin_text(self) -> str:
        """``'±0.01'`` for a symmetric margin, else ``'[-0.01, 0.02]'``."""
        if self.low == -self.high:
            return f"±{self.high:g}"
        return f"[{self.low:g}, {self.high:g}]"


def _tost_iv(differences: Any, margin: Any) -> tuple[np.ndarray, float, float]:
    d = as_float_vector(differences, "differences", min_size=2)
    if isinstance(margin, bool):
        raise TypeError("`margin` must be a positive number or a (low, high) pair.")
    if isinstance(margin, int | float | np.floating | np.integer):
        if not np.isfinite(margin) or margin <= 0:
            raise ValueError(f"`margin` must be a positive finite number; got {margin!r}.")
        low, high = -float(margin), float(margin)
    else:
        try:
            low, high = (float(x) for x in margin)
        except (TypeError, ValueError):
            raise TypeError(
                f"`margin` must be a positive number or a (low, high) pair; got {margin!r}."
            ) from None
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(f"`margin` must satisfy low < high (finite); got {margin!r}.")
    return d, low, high


def tost_signflip(
    differences: Any,
    margin: Any,
    *,
    n_resamples: int = 10_000,
    rng: Any = None,
) -> EquivalenceResult:
    r"""Paired equivalence test: is the mean difference inside ``margin``?

    Parameters
    ----------
    differences : array_like
        Per-unit paired differences (treatment minus baseline), at least 2, finite.
    margin : float or (float, float)
        A positive number ``m`` for the symmetric margin ``[-m, m]``, or ``(low, high)``
        with ``low < high``; in the units of the differences.
    n_resamples : int
        Random sign vectors per one-sided test when exact enumeration is too costly.
    rng : {None, int, numpy.random.Generator}
        Seed or generator (SPEC 7); both one-sided tests share one sign matrix.

    Returns
    -------
    EquivalenceResult

    Notes
    -----
    Null hypothesis: ``mean(d) <= low`` or ``mean(d) >= high`` (not equivalent). The two
    one-sided sign-flip tests (:func:`osustat.signflip_tests`) are run on ``d - low``
    (alternative ``'greater'``) and ``d - high`` (alternative ``'less'``); each is a valid
    level-alpha test of its half of the null when the shifted differences are symmetric
    about zero at the boundary, so rejecting both (``max(p_low, p_high) <= alpha``) is a
    level-alpha test of equivalence (an intersection-union test; Berger & Hsu 1996). It is
    the test whose ``1 - 2 alpha`` interval lies inside the margin.

    References
    ----------
    Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power
    approach for assessing the equivalence of average bioavailability. *J. Pharmacokinet.
    Biopharm.* 15, 657-680. Berger, R. L., & Hsu, J. C. (1996). Bioequivalence trials,
    intersection-union tests and equivalence confidence sets. *Stat. Sci.* 11, 283-319.

    Examples
    --------
    >>> import numpy as np
    >>> from osustat.equivalence import tost_signflip
    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(0.0, 0.05, 200)
    >>> res = tost_signflip(d, 0.02, rng=1)
    >>> res.pvalue < 0.05, res.margin_text
    (True, '±0.02')
    >>> tost_signflip(d + 0.03, 0.02, rng=1).pvalue > 0.05
    True
    """
    d, low, high = _tost_iv(differences, margin)
    n_resamples = check_resamples(n_resamples)
    gen = check_rng(rng)
    # Scale by a power of two (exact; sign-flip p-values are scale-free) so that d - low
    # and d - high cannot overflow near the float64 limit (issue 23: 1e307).
    e = power_of_two_scale(np.concatenate([d, [low, high]])) + 1
    ds, lo_s, hi_s = np.ldexp(d, -e), math.ldexp(low, -e), math.ldexp(high, -e)
    lower = signflip_tests([ds - lo_s], alternative="greater", n_resamples=n_resamples, rng=gen)[0]
    upper = signflip_tests([ds - hi_s], alternative="less", n_resamples=n_resamples, rng=gen)[0]
    return EquivalenceResult(
        statistic=math.ldexp(float(ds.mean()), e),
        pvalue=max(lower.pvalue, upper.pvalue),
        pvalue_low=lower.pvalue,
        pvalue_high=upper.pvalue,
        low=low,
        high=high,
        n=int(d.size),
        exact=lower.exact and upper.exact,
        n_resamples=n_resamples,
    )
