"""Power and minimum detectable effect of the paired test osustat actually runs.

The significance test on paired differences is :func:`osustat.paired_signflip_test`; its power
depends on the data's type and on ``n``, so one formula does not fit all:

- **0/1 metrics** (Hit@2, hard recall; every nonzero difference has the same magnitude ``c``):
  the test is the exact binomial test on the ``m`` nonzero differences. With
  ``q = P(d != 0)`` and ``pi = P(d > 0 | d != 0)``, ``m ~ Binomial(n, q)`` and the number of
  positive differences given ``m`` is ``Binomial(m, pi)``; the power is an exact finite sum
  (``method='exact-binomial'``). The mean difference is ``c q (2 pi - 1)``.
- **small n, continuous differences** (``n <= 12``): the test enumerates all ``2**n`` sign
  patterns and its p-value is discrete (at ``n = 6`` it rejects at .05 only when all six signs
  agree). Power is simulated for normal differences, computing the exact test on each draw
  (``method='simulation'``; common random numbers make the MDE deterministic given `rng`,
  and an integer `rng` caches it per design, so repeated calls cost nothing).
- **otherwise**: noncentral-t power (statsmodels ``TTestPower``), which the sign-flip test
  matches within Monte Carlo error for normal differences from ``n`` ≈ 10 on
  (``method='normal'``; ``docs/validation.md``).

The returned numbers are :class:`PowerValue` floats that carry the method and its inputs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._power_engines import SignFlipSimulation, attainable, binomial_power
from ._power_plan import POWER_TESTS, Plan, PowerValue
from ._validation import check_level, check_rng

__all__ = ["POWER_TESTS", "PowerValue", "minimum_detectable_effect", "power"]

_SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}

# -- one power curve and one search for every method ---------------------------------------


def _power_curve(plan: Plan, rng: Any) -> Callable[[float], float]:
    """The test's power as a function of the true mean difference (units of the data)."""
    n, alpha, alt = plan.n, plan.alpha, plan.alternative
    if not attainable(n, alpha, alt):
        return lambda effect: 0.0  # the sign-flip test cannot reject at all
    if plan.test == "exact-binomial":
        assert plan.q is not None
        q, c = plan.q, plan.magnitude

        def binomial(effect: float) -> float:
            if abs(effect) > c * q * (1 + 1e-12):
                raise ValueError(
                    f"`effect` {effect} is impossible in the binary model: |effect| <= "
                    f"magnitude * p_nonzero = {c * q}."
                )
            pi = 0.5 if q == 0 else min(1.0, max(0.0, 0.5 * (1.0 + effect / (c * q))))
            return binomial_power(n, q, pi, alpha, alt)

        return binomial
    sd = plan.sd
    if sd == 0:  # every difference equals `effect`
        if alt == "greater":
            return lambda effect: 1.0 if effect > 0 else 0.0
        if alt == "less":
            return lambda effect: 1.0 if effect < 0 else 0.0
        return lambda effect: 1.0 if effect != 0 else 0.0
    if plan.test == "simulation":
        sim = SignFlipSimulation(n, plan.n_simulations, alpha, alt, rng)
        return lambda effect: sim.power(effect / sd)
    from statsmodels.stats.power import TTestPower

    def normal(effect: float) -> float:
        value = TTestPower().power(
            effect_size=effect / sd, nobs=n, alpha=alpha, alternative=_SM_ALTERNATIVE[alt]
        )
        return float(np.squeeze(value))

    return normal


def _smallest_effect(
    power_at: Callable[[float], float], target: float, hi: float, *, grow: bool
) -> float:
    """Smallest effect size ``e >= 0`` with ``power_at(e) >= target``, by bisection on
    ``[0, hi]`` (50 halvings). With `grow`, `hi` doubles until it is reached (up to 1e6);
    infinite when it is not."""
    while power_at(hi) < target:
        if not grow or hi > 1e6:
            return math.inf
        hi *= 2.0
    lo = 0.0
    if power_at(lo) >= target:  # cannot happen for a valid test; never return garbage
        return 0.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


@functools.lru_cache(maxsize=256)
def _standardized_simulation_mde(
    n: int, alpha: float, alt: str, target: float, n_simulations: int, seed: int | None
) -> float:
    """Simulated MDE in units of the sd (cached per design when the seed is an integer)."""
    sim = SignFlipSimulation(n, n_simulations, alpha, alt, seed)
    sign = -1.0 if alt == "less" else 1.0
    return _smallest_effect(lambda x: sim.power(sign * x), target, 1.0, grow=True)


# -- public API ----------------------------------------------------------------------------


def minimum_detectable_effect(
    differences_sd: float,
    n: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    binary: bool | None = None,
    p_nonzero: float | None = None,
    magnitude: float | None = None,
    differences: Any = None,
    test: str = "auto",
    n_simulations: int = 2000,
    rng: Any = 0,
) -> PowerValue:
    """Smallest true mean difference the sign-flip test detects with probability `power`.

    Parameters
    ----------
    differences_sd : float
        Standard deviation of the per-unit paired differences (e.g. from the data or a pilot).
    n : int
        Number of pairs (queries or episodes: the unit the test runs on).
    alpha : float
    power : float
        Target power; must exceed the test's size (`alpha`, or the largest attainable
        rejection rate under the null).
    alternative : {'two-sided', 'greater', 'less'}
    binary : bool, optional
        Whether the differences take values in ``{-c, 0, c}`` (0/1 metrics). Default: inferred
        from `differences` when given, else True exactly when `p_nonzero` is given.
    p_nonzero : float, optional
        ``P(d != 0)``, the share of pairs that differ (binary model). Default: the observed
        share in `differences`, else ``(differences_sd / magnitude)**2`` (the null variance
        of a ``{-c, 0, c}`` difference is ``q c**2``).
    magnitude : float, optional
        ``c``, the size of a nonzero difference in the binary model (default 1, or the
        observed one in `differences`).
    differences : array_like, optional
        The observed paired differences (length `n`). The preferred call: the method, the
        magnitude and ``P(d != 0)`` are read from them.
    test : {'auto', 'normal', 'exact-binomial', 'simulation'}
        ``'auto'`` picks ``'exact-binomial'`` for binary differences, ``'simulation'`` for
        ``n <= 12`` and ``'normal'`` otherwise.
    n_simulations : int
        Simulated data sets for ``'simulation'`` (Monte Carlo standard error of the power is
        about ``sqrt(.16 / n_simulations)``, .009 at the default).
    rng : {None, int, numpy.random.Generator}
        Seed for ``'simulation'``; the default 0 makes the value reproducible (and cached per
        ``(n, alpha, alternative, power, n_simulations)``).

    Returns
    -------
    PowerValue
        A float in the units of the differences (always >= 0, for every `alternative`), with
        ``.method`` naming the computation. 0 when `differences_sd` is 0 (continuous model);
        infinite when the test can never reach `power`: two-sided needs
        ``2^(1-n) <= alpha`` (n >= 6 at .05), and in the binary model enough pairs must
        differ.

    Notes
    -----
    Binary model: the mean difference is ``c q (2 pi - 1)`` with ``pi = P(d > 0 | d != 0)``;
    the MDE is the smallest ``|c q (2 pi - 1)|`` with power ``>= target`` for `q` held fixed,
    so ``differences_sd`` then only supplies `q` when nothing better is given. Every method
    but ``'normal'`` (statsmodels' solver) is searched by the same bisection on its power
    curve (:func:`power`).

    Examples
    --------
    >>> from osustat import minimum_detectable_effect
    >>> mde = minimum_detectable_effect(0.5, 56)
    >>> round(mde, 3), mde.method
    (0.191, 'normal')
    >>> mde = minimum_detectable_effect(0.5, 56, p_nonzero=0.25)
    >>> round(mde, 3), mde.method
    (0.189, 'exact-binomial')
    """
    plan = Plan.from_arguments(locals())
    check_rng(rng)  # refused up front even when the method draws nothing
    target = check_level(power, "power")
    n, alpha, alt = plan.n, plan.alpha, plan.alternative
    if target <= alpha:
        raise ValueError(
            f"`power` must exceed `alpha` ({alpha}): a level-{alpha} test rejects with "
            f"probability about {alpha} even when there is no effect; got power = {target}."
        )
    if not attainable(n, alpha, alt):
        return plan.result(math.inf)  # the sign-flip test cannot reject at all
    sign = -1.0 if alt == "less" else 1.0
    if plan.test == "exact-binomial":
        assert plan.q is not None
        curve = _power_curve(plan, rng)
        hi = plan.magnitude * plan.q  # the largest possible mean difference
        return plan.result(_smallest_effect(lambda e: curve(sign * e), target, hi, grow=False))
    if plan.sd == 0:
        return plan.result(0.0)
    if plan.test == "simulation":
        if isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0:
            seed: Any = int(rng)
            standardized = _standardized_simulation_mde(
                n, alpha, alt, target, plan.n_simulations, seed
            )
        else:
            standardized = _standardized_simulation_mde.__wrapped__(
                n, alpha, alt, target, plan.n_simulations, rng
            )
        return plan.result(standardized * plan.sd)
    from statsmodels.stats.power import TTestPower

    es = TTestPower().solve_power(
        effect_size=None, nobs=n, alpha=alpha, power=target, alternative=_SM_ALTERNATIVE[alt]
    )
    return plan.result(float(abs(float(np.squeeze(es))) * plan.sd))


def power(
    effect: float,
    differences_sd: float,
    n: int,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    binary: bool | None = None,
    p_nonzero: float | None = None,
    magnitude: float | None = None,
    differences: Any = None,
    test: str = "auto",
    n_simulations: int = 2000,
    rng: Any = 0,
) -> PowerValue:
    """Probability that the sign-flip test rejects at `alpha` when the true mean is `effect`.

    Parameters are those of :func:`minimum_detectable_effect` (with `effect`, the true mean
    difference, in place of the target power). In the binary model `effect` must satisfy
    ``|effect| <= magnitude * p_nonzero``.

    Returns
    -------
    PowerValue
        The power, with ``.method`` naming the computation.

    Examples
    --------
    >>> from osustat import power
    >>> round(power(0.191, 0.5, 56), 2)
    0.8
    >>> p = power(1.435, 1.0, 6)  # n = 6: only 6 agreeing signs reject at .05
    >>> p.method, round(p, 2)
    ('simulation', 0.64)
    """
    plan = Plan.from_arguments(locals())
    check_rng(rng)  # refused up front even when the method draws nothing
    try:
        effect = float(effect)
    except (TypeError, ValueError):
        raise TypeError(f"`effect` must be a number; got {effect!r}.") from None
    if not math.isfinite(effect):
        raise ValueError(f"`effect` must be finite; got {effect}.")
    return plan.result(_power_curve(plan, rng)(effect))
