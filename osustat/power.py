"""Power and minimum detectable effect of a paired comparison.

The sign-flip test's power has no closed form; for a mean of ``n`` independent paired
differences it is close to that of the one-sample t-test with the same ``n`` and standard
deviation (both are asymptotically the z-test). We use the noncentral-t power of statsmodels'
``TTestPower``; ``tests/osustat/test_power.py`` checks it against simulated power of
:func:`osustat.paired_signflip_test`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import check_alternative, check_level

__all__ = ["minimum_detectable_effect", "power"]

_SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}


def _attainable(n: int, alpha: float, alt: str) -> bool:
    """Whether the sign-flip test's smallest p-value (2^(1-n) two-sided) is <= alpha."""
    smallest = 2.0 ** (1 - n) if alt == "two-sided" else 2.0**-n
    return smallest <= alpha


def _common_iv(
    differences_sd: Any, n: Any, alpha: Any, alternative: str
) -> tuple[float, int, float, str]:
    try:
        sd = float(differences_sd)
    except (TypeError, ValueError):
        raise TypeError(f"`differences_sd` must be a number; got {differences_sd!r}.") from None
    if not math.isfinite(sd) or sd < 0:
        raise ValueError(f"`differences_sd` must be finite and >= 0; got {sd}.")
    if isinstance(n, bool) or not float(n).is_integer() or int(n) < 2:
        raise ValueError(f"`n` must be an integer >= 2; got {n!r}.")
    alpha = check_level(alpha, "alpha")
    return sd, int(n), alpha, _SM_ALTERNATIVE[check_alternative(alternative)]


def minimum_detectable_effect(
    differences_sd: float,
    n: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
) -> float:
    """Smallest true mean difference detected with probability `power` at level `alpha`.

    Parameters
    ----------
    differences_sd : float
        Standard deviation of the per-unit paired differences (e.g. from the data or a pilot).
    n : int
        Number of pairs (queries or episodes: the unit the test runs on).
    alpha : float
    power : float
    alternative : {'two-sided', 'greater', 'less'}

    Returns
    -------
    float
        The MDE in the units of the differences (0 when `differences_sd` is 0; infinite when
        ``n`` is so small that the sign-flip test can never reach `alpha`: two-sided needs
        ``2^(1-n) <= alpha``, i.e. n >= 6 at .05). For 0/1 metrics, pass the number of
        pairs that differ if it is known: ties carry no information for the test.

    Examples
    --------
    >>> from osustat import minimum_detectable_effect
    >>> round(minimum_detectable_effect(0.5, 56), 3)
    0.191
    """
    from statsmodels.stats.power import TTestPower

    sd, n, alpha, alt = _common_iv(differences_sd, n, alpha, alternative)
    target = check_level(power, "power")
    if not _attainable(n, alpha, alt):
        return math.inf  # the sign-flip test cannot reject at all with so few pairs
    if sd == 0:
        return 0.0
    es = TTestPower().solve_power(
        effect_size=None, nobs=n, alpha=alpha, power=target, alternative=alt
    )
    return float(abs(float(np.squeeze(es))) * sd)


def power(
    effect: float,
    differences_sd: float,
    n: int,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> float:
    """Probability of rejecting at level `alpha` when the true mean difference is `effect`.

    Examples
    --------
    >>> from osustat import power
    >>> round(power(0.191, 0.5, 56), 2)
    0.8
    """
    from statsmodels.stats.power import TTestPower

    sd, n, alpha, alt = _common_iv(differences_sd, n, alpha, alternative)
    effect = float(effect)
    if not math.isfinite(effect):
        raise ValueError(f"`effect` must be finite; got {effect}.")
    if not _attainable(n, alpha, alt):
        return 0.0
    if sd == 0:  # every difference equals `effect`
        if alt == "larger":
            return 1.0 if effect > 0 else 0.0
        if alt == "smaller":
            return 1.0 if effect < 0 else 0.0
        return 1.0 if effect != 0 else 0.0
    return float(
        np.squeeze(
            TTestPower().power(effect_size=effect / sd, nobs=n, alpha=alpha, alternative=alt)
        )
    )
