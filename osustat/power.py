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
from numpy.typing import NDArray
from scipy import stats

from ._validation import check_alternative, check_level, check_positive_int, check_rng

__all__ = ["POWER_TESTS", "PowerValue", "minimum_detectable_effect", "power"]

#: Values of the `test` argument.
POWER_TESTS = ("auto", "normal", "exact-binomial", "simulation")

#: Largest n for which power is simulated by full sign-flip enumeration.
_SIMULATION_MAX_N = 12

_SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}
_EPS = float(np.finfo(np.float64).eps)


class PowerValue(float):
    """A power or MDE value (a plain ``float``) that names how it was computed.

    Attributes
    ----------
    method : str
        ``'normal'`` (noncentral t), ``'exact-binomial'`` (0/1 differences) or
        ``'simulation'`` (exact sign-flip test on simulated normal differences). An infinite
        MDE (power 0) under any method means no effect reaches the target power: ``n`` is too
        small for the test to ever reach `alpha`, or too few pairs differ.
    n : int
    alpha : float
    alternative : str
    p_nonzero : float or None
        ``P(d != 0)`` used by the exact-binomial model.
    n_simulations : int
        Simulated data sets behind a ``'simulation'`` value (0 otherwise).
    """

    method: str
    n: int
    alpha: float
    alternative: str
    p_nonzero: float | None
    n_simulations: int

    def __new__(
        cls,
        value: float,
        *,
        method: str,
        n: int,
        alpha: float,
        alternative: str,
        p_nonzero: float | None = None,
        n_simulations: int = 0,
    ) -> PowerValue:
        obj = super().__new__(cls, value)
        obj.method = method
        obj.n = n
        obj.alpha = alpha
        obj.alternative = alternative
        obj.p_nonzero = p_nonzero
        obj.n_simulations = n_simulations
        return obj

    def __reduce__(self) -> Any:
        return (_rebuild, (float(self), dict(self.__dict__)))


def _rebuild(value: float, attrs: dict[str, Any]) -> PowerValue:
    return PowerValue(value, **attrs)


def _attainable(n: int, alpha: float, alt: str) -> bool:
    """Whether the sign-flip test's smallest p-value (2^(1-n) two-sided) is <= alpha."""
    smallest = 2.0 ** (1 - n) if alt == "two-sided" else 2.0**-n
    return smallest <= alpha


#: The parameters :func:`power` and :func:`minimum_detectable_effect` share.
_PLAN_ARGUMENTS = (
    "differences_sd", "n", "alpha", "alternative", "binary", "p_nonzero", "magnitude",
    "differences", "test", "n_simulations",
)  # fmt: skip


class _Plan:
    """Validated inputs and the chosen method."""

    def __init__(
        self,
        *,
        differences_sd: Any,
        n: Any,
        alpha: Any,
        alternative: str,
        binary: Any,
        p_nonzero: Any,
        magnitude: Any,
        differences: Any,
        test: str,
        n_simulations: Any,
    ) -> None:
        try:
            sd = float(differences_sd)
        except (TypeError, ValueError):
            raise TypeError(f"`differences_sd` must be a number; got {differences_sd!r}.") from None
        if not math.isfinite(sd) or sd < 0:
            raise ValueError(f"`differences_sd` must be finite and >= 0; got {sd}.")
        try:
            n_ok = not isinstance(n, bool) and float(n).is_integer() and int(n) >= 2
        except (TypeError, ValueError, OverflowError):
            n_ok = False
        if not n_ok:
            raise ValueError(f"`n` must be an integer >= 2; got {n!r}.")
        self.n = int(n)
        self.alpha = check_level(alpha, "alpha")
        self.alternative = check_alternative(alternative)
        if test not in POWER_TESTS:
            raise ValueError(f"`test` must be one of {set(POWER_TESTS)}; got {test!r}.")
        self.n_simulations = check_positive_int(n_simulations, "n_simulations", minimum=100)
        self.magnitude = 1.0
        if magnitude is not None:
            self.magnitude = float(magnitude)
            if not math.isfinite(self.magnitude) or self.magnitude <= 0:
                raise ValueError(f"`magnitude` must be finite and > 0; got {magnitude!r}.")
        q = None
        if p_nonzero is not None:
            q = float(p_nonzero)
            if not (math.isfinite(q) and 0.0 <= q <= 1.0):
                raise ValueError(f"`p_nonzero` must be in [0, 1]; got {p_nonzero!r}.")
        if binary is not None and not isinstance(binary, bool | np.bool_):
            raise TypeError(f"`binary` must be True, False or None; got {binary!r}.")
        if differences is not None:
            from ._validation import as_float_vector

            d = as_float_vector(differences, "differences", min_size=2)
            if d.size != self.n:
                raise ValueError(
                    f"`differences` has {d.size} values but `n` is {self.n}; they must agree."
                )
            nz = np.abs(d[d != 0])
            equal = nz.size == 0 or bool(np.all(np.abs(nz - nz[0]) <= 64 * _EPS * nz[0]))
            if binary is None:
                binary = equal
            if binary and equal and nz.size and magnitude is None:
                self.magnitude = float(nz[0])
            if q is None and binary:
                q = nz.size / d.size
        if binary is None:
            binary = p_nonzero is not None
        if test == "auto":
            if binary:
                test = "exact-binomial"
            elif self.n <= _SIMULATION_MAX_N:
                test = "simulation"
            else:
                test = "normal"
        if test == "exact-binomial" and q is None:
            # Under the null a difference in {-c, 0, c} has variance q c^2.
            q = min(1.0, (sd / self.magnitude) ** 2)
        if test == "simulation" and self.n > _SIMULATION_MAX_N:
            raise ValueError(
                f"`test='simulation'` enumerates all 2**n sign patterns and is limited to "
                f"n <= {_SIMULATION_MAX_N}; got n = {self.n}. Use test='normal' (accurate "
                "for normal differences from n of about 10 on)."
            )
        self.sd = sd
        self.q = q
        self.test = test

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> _Plan:
        """From the ``locals()`` of :func:`power` / :func:`minimum_detectable_effect`, which
        share these parameters (one list, so the two cannot drift apart)."""
        return cls(**{k: arguments[k] for k in _PLAN_ARGUMENTS})

    def result(self, value: float) -> PowerValue:
        return PowerValue(
            value,
            method=self.test,
            n=self.n,
            alpha=self.alpha,
            alternative=self.alternative,
            p_nonzero=self.q if self.test == "exact-binomial" else None,
            n_simulations=self.n_simulations if self.test == "simulation" else 0,
        )


# -- exact binomial ------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _binomial_regions(n: int, alpha: float, alt: str) -> tuple[NDArray[Any], NDArray[Any]]:
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


def _binomial_power(n: int, q: float, pi: float, alpha: float, alt: str) -> float:
    """Exact power of the sign-flip (binomial) test on 0/1-type differences."""
    if alt == "less":  # mirror: positives become negatives
        pi, alt = 1.0 - pi, "greater"
    upper, lower = _binomial_regions(n, alpha, alt)
    m = np.arange(n + 1)
    p_m = stats.binom.pmf(m, n, q)
    reject = stats.binom.sf(upper - 1, m, pi) + np.where(
        lower >= 0, stats.binom.cdf(lower, m, pi), 0.0
    )
    return float(np.clip(p_m @ reject, 0.0, 1.0))


# -- simulation (small n) ------------------------------------------------------------------


class _SignFlipSimulation:
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


# -- one power curve and one search for every method ---------------------------------------


def _power_curve(plan: _Plan, rng: Any) -> Callable[[float], float]:
    """The test's power as a function of the true mean difference (units of the data)."""
    n, alpha, alt = plan.n, plan.alpha, plan.alternative
    if not _attainable(n, alpha, alt):
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
            return _binomial_power(n, q, pi, alpha, alt)

        return binomial
    sd = plan.sd
    if sd == 0:  # every difference equals `effect`
        if alt == "greater":
            return lambda effect: 1.0 if effect > 0 else 0.0
        if alt == "less":
            return lambda effect: 1.0 if effect < 0 else 0.0
        return lambda effect: 1.0 if effect != 0 else 0.0
    if plan.test == "simulation":
        sim = _SignFlipSimulation(n, plan.n_simulations, alpha, alt, rng)
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
    sim = _SignFlipSimulation(n, n_simulations, alpha, alt, seed)
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
    plan = _Plan.from_arguments(locals())
    target = check_level(power, "power")
    n, alpha, alt = plan.n, plan.alpha, plan.alternative
    if target <= alpha:
        raise ValueError(
            f"`power` must exceed `alpha` ({alpha}): a level-{alpha} test rejects with "
            f"probability about {alpha} even when there is no effect; got power = {target}."
        )
    if not _attainable(n, alpha, alt):
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
    plan = _Plan.from_arguments(locals())
    try:
        effect = float(effect)
    except (TypeError, ValueError):
        raise TypeError(f"`effect` must be a number; got {effect!r}.") from None
    if not math.isfinite(effect):
        raise ValueError(f"`effect` must be finite; got {effect}.")
    return plan.result(_power_curve(plan, rng)(effect))
