"""How many queries do I need? Sample size of the paired sign-flip test osustat runs.

:func:`plan` answers with the smallest number of units (queries, or episodes) per cell at
which :func:`osustat.power` -- the power of the test osustat actually runs, ties kept --
reaches the target power for a stated effect. It follows Sakai's topic-set-size design
(Sakai 2016, *Topic Set Size Design*, Information Retrieval Journal 19): start from the
normal approximation ``n0 = ((z_{a/2} + z_b) / (effect / sd))**2 + z_{a/2}**2 / 2`` and
move ``n`` until the power of the real test crosses the target. Sakai's power is the
noncentral t's; here it is the sign-flip test's own, computed by whichever engine of
:mod:`osustat.power` fits the differences (``'normal'``, ``'simulation'``,
``'exact-binomial'``, ``'empirical'``).

Where the user plans a family of ``m`` tests (four cells, several budgets), each test is
planned at ``alpha / m``: the level the first (smallest-p) step of Holm's procedure tests at,
and Bonferroni's for every test; a conservative plan for Holm and for BH.

:func:`plan_cells` plans every cell of a pilot's records (a records file, a treatment and a
baseline), each from its own differences.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ._power_engines import fewest_signs
from ._power_plan import check_pairs, is_discrete, treatment_tilt_short, two_valued
from ._signflip_null import one_magnitude
from ._validation import (
    as_float_vector,
    check_alternative,
    check_level,
    check_positive_int,
    unique_items,
)
from .cells import CELLS
from .power import (
    PowerValue,
    few_nonzero,
    not_normal_shape,
    power_ceiling,
    sd_interval_ends,
    share_interval,
    spread_df,
    too_few_differences,
)
from .power import power as test_power

__all__ = ["CellPlans", "SampleSizePlan", "plan", "plan_cells"]

#: Default simulated data sets per power value of the empirical engine. Near power .8 the
#: power grows by about .39 per unit of log n (normal approximation: phi(z_b) (z_a + z_b) / 2),
#: so a Monte Carlo SE of .0057 (5,000 data sets) puts the crossing within about 1.5% of n
#: (2,000 data sets, :func:`osustat.power`'s default: 2.3%).
PLAN_SIMULATIONS = 5_000

#: Default largest n searched (per cell).
N_MAX = 10_000

#: Largest ``n * n_simulations`` the empirical engine is asked for (its draws take about
#: 17 bytes per cell: 4e7 is about 700 MB at the peak).
_EMPIRICAL_MAX_CELLS = 40_000_000

#: Points of the stand-in pilot built from a stated zero share and sd (normal quantiles
#: for the nonzero part): enough that its own discreteness is far below Monte Carlo error.
_STATED_POINTS = 2_000


def _below(power: float, target: float) -> str:
    """The power at n - 1, below `target`: 4 digits where 3 would round it up to the target
    (.7997 read ".800", as if n - 1 reached it)."""
    return f"{power:.4f}" if power < target <= round(power, 3) else f"{power:.3f}"


@dataclass(frozen=True, kw_only=True)
class SampleSizePlan:
    """The queries per cell the paired sign-flip test needs to detect `effect`.

    Attributes
    ----------
    n : int
        Units (queries, or episodes) needed per cell: the smallest n found at which the
        test's power reaches `target_power` (see :func:`plan`).
    achieved_power : float
        The power at ``n`` (``power_below`` is the power at ``n - 1``, below the target).
    effect : float
        The true mean difference planned for (units of the metric).
    target_power, alpha : float
        ``alpha`` is the family level; ``test_alpha = alpha / family_size`` the level each
        test is planned at.
    method : str
        The power engine of :func:`osustat.power` that gave the power: ``'normal'``
        (noncentral t), ``'simulation'`` (exact sign-flip test on simulated normal data),
        ``'exact-binomial'`` (0/1 differences) or ``'empirical'`` (data sets resampled from
        the pilot's differences, or from the stand-in built from a stated zero share and sd).
    source : str
        ``'pilot'`` (differences given) or ``'stated'`` (sd / zero share / 0/1 stated).
    sd, zero_share : float
        What the plan assumed: the sd of the differences as a study with mean `effect`
        shows them (zeros included), and the share of exact zeros (ties). From a pilot of
        differences of several sizes, the sd with the unbiased variance (``k - 1`` in the
        denominator, k the pilot's units); for 0/1-type differences the sd their share of
        ties gives at the effect, ``sqrt((1 - zero_share) magnitude**2 - effect**2)``.
    sd_planned : float or None
        The sd of the differences in the law `achieved_power` was computed under: the
        stated sd; for a pilot planned over a range (rule P), the sd at the range's
        conservative end (``plan(effect, sd=sd_planned)`` gives `n` unless the pilot's ties
        raised it, as `range_basis` then says); for the empirical engine the sd of the
        pilot's differences it resamples (the plug-in sd, divided by k); None for the
        tilted model (count ratios), whose sd at the effect is not one of the pilot's.
    binary : bool
        Whether the differences were modelled as 0/1-type (``{-c, 0, c}``).
    pilot_n : int or None
        Size of the pilot the differences came from.
    n_simulations : int
        Simulated data sets behind each power value (0 for the exact methods);
        ``monte_carlo_se`` is the standard error of ``achieved_power``.
    start_n : int
        The normal-approximation start of the search (Sakai's ``n0``).
    assumptions : tuple of str
        Each modelling assumption, in words.
    tilted : str or None
        For count-ratio pilots (the tilted model): what the effect tilts, ``'treatment'``
        (the treatment's values, given ``pairs``) or ``'differences'``.
    tilt_fallback : str or None
        Why the differences were tilted although ``pairs`` were given (the treatment's tilt
        does not reach the pilot's own mean difference, or the effect planned for).
    n_range : (int, int) or None
        Where the pilot cannot pin n down (fewer than 12 differences, fewer than 12 nonzero
        ones of several magnitudes -- rule N --, or differences that are not normal-shaped):
        the n at the optimistic and the conservative end of the 80%
        interval of what the pilot estimates; ``n`` is the conservative end (rules P and P2,
        docs/statistics.md). None where one n is printed.
    range_basis : str or None
        What `n_range` is taken over, in words.
    """

    n: int
    achieved_power: float
    power_below: float
    effect: float
    target_power: float
    alpha: float
    family_size: int
    test_alpha: float
    alternative: str
    method: str
    source: str
    sd: float
    zero_share: float
    binary: bool
    pilot_n: int | None
    n_simulations: int
    monte_carlo_se: float
    start_n: int
    assumptions: tuple[str, ...] = field(default=())
    tilted: str | None = None
    tilt_fallback: str | None = None
    n_range: tuple[int, int] | None = None
    range_basis: str | None = None
    sd_planned: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["assumptions"] = list(self.assumptions)
        out["n_range"] = None if self.n_range is None else list(self.n_range)
        return out

    def n_text(self) -> str:
        """``'83'``, or ``'14–83'`` where the pilot gives a range (one n where both of its
        ends give the same)."""
        if self.n_range is None or self.n_range[0] == self.n_range[1]:
            return str(self.n)
        return f"{self.n_range[0]}–{self.n_range[1]}"

    def summary(self) -> str:
        """One sentence: n, the power reached and the test it was planned for."""
        level = f"alpha = {self.alpha:g}"
        if self.family_size > 1:
            level += f" / {self.family_size} tests = {self.test_alpha:.4g}"
        se = f" (Monte Carlo SE {self.monte_carlo_se:.3f})" if self.n_simulations else ""
        head = f"n = {self.n} per cell"
        if self.n_range is not None and self.n_range[0] == self.n_range[1]:
            head = (
                f"{head} at both ends of the range a pilot of {self.pilot_n} differences gives "
                f"({self.range_basis})"
            )
        elif self.n_range is not None:
            head = (
                f"n not pinned down by a pilot of {self.pilot_n} differences: {self.n_text()} "
                f"per cell ({self.range_basis}); planned at the conservative end, {head}"
            )
        return (
            f"{head}: power {self.achieved_power:.3f}{se} to detect a mean "
            f"difference of {self.effect:g} ({self.alternative}, {level}; {self.method} "
            f"power of the paired sign-flip test; power at n - 1: "
            f"{_below(self.power_below, self.target_power)})"
        )

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True, kw_only=True)
class CellPlans:
    """Per-cell plans from a pilot's records (:func:`plan_cells`).

    Attributes
    ----------
    plans : dict of str to SampleSizePlan
        One plan per cell planned (``'all'`` for the aggregate).
    refused : dict of str to str
        Cells that could not be planned, with the reason (an effect beyond what the cell's
        differences allow, a cell with fewer than 2 units, more than `n_max` needed).
    pilot_sizes : dict of str to int
        The pilot's units per cell (planned or refused).
    treatment, baseline, metric : str
    budget : int
    unit : str
    levels : dict of str to str
        Each cell's (planned or refused) level and why, in words: ``'α/4 = 0.0125: Holm
        over the 4 cells, ...'`` (:func:`plan_cells`, "Levels").
    notes : tuple of str
        What the unit leaves out (cells the episode unit cannot test), in words.
    """

    plans: dict[str, SampleSizePlan]
    refused: dict[str, str]
    pilot_sizes: dict[str, int]
    treatment: str
    baseline: str
    metric: str
    budget: int
    unit: str
    levels: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for cell, size in self.pilot_sizes.items():
            p = self.plans.get(cell)
            rows.append(
                {
                    "cell": cell,
                    "pilot_n": size,
                    "n": p.n if p else None,
                    "n_range": p.n_text() if p and p.n_range else None,
                    "achieved_power": p.achieved_power if p else None,
                    "test_alpha": p.test_alpha if p else None,
                    "method": p.method if p else None,
                    "sd": p.sd if p else None,
                    "sd_planned": p.sd_planned if p else None,
                    "zero_share": p.zero_share if p else None,
                    "note": self.refused.get(cell, ""),
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "treatment": self.treatment,
            "baseline": self.baseline,
            "metric": self.metric,
            "budget": self.budget,
            "unit": self.unit,
            "pilot_sizes": dict(self.pilot_sizes),
            "plans": {c: p.to_dict() for c, p in self.plans.items()},
            "refused": dict(self.refused),
            "levels": dict(self.levels),
            "notes": list(self.notes),
        }


# -- the model the plan assumes ---------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    """Keyword arguments for :func:`osustat.power` (besides effect, n, alpha) and what
    they assume."""

    kwargs: dict[str, Any]
    sd: float  # sd of the differences at the planned effect (zeros included)
    zero_share: float
    binary: bool
    source: str
    pilot_n: int | None
    assumptions: tuple[str, ...]
    #: why the differences are tilted although the units' values were given
    tilt_fallback: str | None = None


def _number(value: Any, name: str, *, low: float, high: float = math.inf) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number; got {value!r}.") from None
    if not (math.isfinite(x) and low <= x <= high):
        raise ValueError(f"`{name}` must be a finite number in [{low:g}, {high:g}]; got {value!r}.")
    return x


def _pilot_model(
    d: np.ndarray, effect: float, binary: bool | None, pairs: tuple[np.ndarray, np.ndarray] | None
) -> _Model:
    nz = d[d != 0]
    zero_share = 1.0 - nz.size / d.size
    if nz.size == 0:
        raise ValueError(
            f"the pilot has no nonzero differences (the two methods tied on all {d.size} "
            "units), so it says nothing about how the differences spread; plan from a stated "
            "`sd` and `zero_share` instead of the pilot, or from a pilot where the methods "
            "differ."
        )
    mags = np.abs(nz)
    is_binary = one_magnitude(mags)  # the test's own rule
    if binary and not is_binary:
        raise ValueError(
            "`binary=True` but the pilot `differences` take several magnitudes "
            f"({mags.min():.4g} to {mags.max():.4g}); leave `binary` unset."
        )
    # rule K: given the units' values, 0/1-type only where they take two values
    zero_one = is_binary and (pairs is None or two_valued(pairs))
    used_binary = zero_one if binary is None else bool(binary)
    kind = "0/1-type ({-c, 0, c})" if used_binary else "their observed magnitudes"
    short = None  # why the differences are tilted although `pairs` were given
    assumptions: tuple[str, ...] = (
        f"the planned study's differences look like the pilot's {d.size} (share of exact "
        f"zeros {zero_share:.3f}, {kind}), shifted to mean {effect:g}",
        "exact zeros stay ties under the effect (the nonzero differences carry it)",
    )
    if not used_binary and is_discrete(d):  # the tilted model (osustat.power)
        moved = (
            "the differences tilted to it (both methods' rates move apart; give the "
            "units' values, `pairs`, to move the treatment's)"
        )
        short = None if pairs is None else treatment_tilt_short(d, pairs, effect)
        if pairs is not None and short is None:
            moved = (
                "the treatment's values tilted to it, each unit's baseline kept beside its "
                "treatment value (the treatment's rate moves)"
            )
        elif pairs is not None:
            moved = f"the differences tilted to it: {short}"
            pairs = None  # as osustat.power does, without its warning at every n
        assumptions = (
            f"the planned study's differences look like the pilot's {d.size} count ratios, "
            f"tilted to mean {effect:g}: {moved}",
            "ties are one value among the others: the effect makes them rarer",
        )
    spread = float(np.var(nz - nz.mean())) if nz.size > 1 else 0.0
    sd = math.sqrt((1 - zero_share) * spread + zero_share * effect**2 / (1 - zero_share))
    kwargs: dict[str, Any] = {"differences_sd": None, "differences": d}
    if pairs is not None:
        kwargs["pairs"] = pairs
    if binary is not None:  # as given (rule K applies only where it is not)
        kwargs["binary"] = bool(binary)
    if used_binary:
        sd = math.sqrt(max(0.0, (1 - zero_share) * float(mags[0]) ** 2 - effect**2))
    return _Model(kwargs, sd, zero_share, used_binary, "pilot", int(d.size), assumptions, short)


def _stated_model(
    effect: float, sd: Any, zero_share: Any, binary: bool | None, magnitude: Any
) -> _Model:
    z0 = None if zero_share is None else _number(zero_share, "zero_share", low=0.0, high=1.0)
    if z0 == 1.0:
        raise ValueError("`zero_share` = 1 means every difference is a tie: nothing to detect.")
    s = None if sd is None else _number(sd, "sd", low=0.0)
    if binary or magnitude is not None:
        c = 1.0 if magnitude is None else _number(magnitude, "magnitude", low=0.0)
        if c <= 0:
            raise ValueError(f"`magnitude` must be > 0; got {magnitude!r}.")
        if (s is None) == (z0 is None):
            raise ValueError(
                "0/1 differences: give `zero_share` or `sd`, exactly one (they determine "
                "each other: sd**2 = (1 - zero_share) * magnitude**2 - effect**2)."
            )
        q = (1.0 - z0) if z0 is not None else ((s or 0.0) ** 2 + effect**2) / c**2
        if q > 1.0 + 1e-12:
            raise ValueError(
                f"`sd` {s:g} is too large for 0/1 differences of magnitude {c:g} with mean "
                f"{effect:g}: sd**2 + effect**2 <= magnitude**2."
            )
        q = min(q, 1.0)
        if abs(effect) > q * c * (1 + 1e-12):
            raise ValueError(
                f"`effect` {effect:g} is impossible for 0/1 differences with "
                f"{1 - q:.3f} ties: abs(effect) <= (1 - zero_share) * magnitude = {q * c:.4g}."
            )
        sd_at = math.sqrt(max(0.0, q * c**2 - effect**2))
        kwargs: dict[str, Any] = {
            "differences_sd": sd_at,
            "binary": True,
            "p_nonzero": q,
            "magnitude": c,
        }
        assumptions = (
            f"0/1-type differences: {1 - q:.3f} of units tie, each other unit differs by "
            f"+-{c:g}; the effect tilts the signs of the differing units",
        )
        return _Model(kwargs, sd_at, 1.0 - q, True, "stated", None, assumptions)
    if s is None:
        raise ValueError("`sd` is required without pilot `differences` (or pass `binary=True`).")
    if s == 0:
        raise ValueError("`sd` = 0: every difference equals the effect; any n >= 6 detects it.")
    if not z0:
        kwargs = {"differences_sd": s}
        assumptions = (
            f"normal differences with sd {s:g}, shifted to mean {effect:g} (the test's "
            "power depends on the differences' shape, not on their sd alone: for skewed or "
            "heavy-tailed differences give a pilot's differences to plan for their shape)",
        )
        return _Model(kwargs, s, 0.0, False, "stated", None, assumptions)
    # zero-inflated: a stand-in pilot of exact zeros and normal quantiles whose sd at the
    # planned effect is `sd`: sd**2 = (1 - z0) s_nz**2 + z0 effect**2 / (1 - z0)
    inner = (s**2 - z0 * effect**2 / (1 - z0)) / (1 - z0)
    if inner <= 0:
        raise ValueError(
            f"`sd` {s:g} is too small for mean {effect:g} with zero share {z0:g}: the zeros "
            f"alone give sd {math.sqrt(z0 * effect**2 / (1 - z0)):.4g} when the nonzero "
            "differences carry the effect."
        )
    k_zero = round(z0 * _STATED_POINTS)
    k_nz = _STATED_POINTS - k_zero
    quantiles = stats.norm.ppf((np.arange(k_nz) + 0.5) / k_nz)
    stand_in = np.concatenate([np.zeros(k_zero), math.sqrt(inner) * quantiles / quantiles.std()])
    assumptions = (
        f"{k_zero / _STATED_POINTS:.3f} of units tie exactly (stay 0 under the effect); the "
        f"others are normal with sd {math.sqrt(inner):.4g}, shifted to mean "
        f"{effect / (1 - z0):.4g}, so the mean is {effect:g} and the sd {s:g}",
    )
    kwargs = {"differences_sd": None, "differences": stand_in}
    return _Model(kwargs, s, k_zero / _STATED_POINTS, False, "stated", None, assumptions)


# -- a pilot too small to pin n down (rule P) --------------------------------------------


def _small_pilot_plan(
    d: np.ndarray, model: _Model, effect: float, common: dict[str, Any]
) -> SampleSizePlan:
    """Rule P: from too few differences (:func:`osustat.power.too_few_differences`: fewer
    than 12, or -- rule N -- fewer than 12 nonzero ones of more than one magnitude), the n
    at the ends of the 80% interval of what the pilot estimates -- P(d != 0) for 0/1-type
    differences (the exact binomial), else the sd (the normal model, chi-square with
    :func:`osustat.power.spread_df` df: k - 1, or m - 1 nonzero for rule N), each end
    raised, where the pilot has ties, to the n at which they can let the test reach the
    power (:func:`osustat.power.power_ceiling`: the conservative end holds the ties at the
    share's lower end; the optimistic end at its upper end where the model holds ties, not
    for count ratios, whose ties the tilted model moves) -- and the conservative end
    returned. Why: the MDE prints a range below that size (a pilot of 6 normal differences
    planned an n that achieved power below .6 in 37% of pilots; docs/validation.md, "Rule P")."""
    k, m = d.size, int(np.count_nonzero(d))
    q_lo, q_hi = share_interval(d)
    alt, level = common["alternative"], common["alpha"] / common["family_size"]
    shown = f"P(d ≠ 0) = {m}/{k}"

    def end_plan(which: str, what: str, **inputs: Any) -> SampleSizePlan:
        try:
            return plan(effect, **inputs, **common)
        except ValueError as exc:  # say which end of the pilot's range could not be planned
            raise ValueError(
                f"a pilot of {k} differences gives a range of n; at its {which} end ({what}): {exc}"
            ) from None

    if model.binary or model.sd == 0:  # one magnitude (sd 0: every difference the same)
        # n grows with P(d != 0) at a fixed mean (more discordant pairs, each less one-sided),
        # and below |effect| / c the effect cannot occur: n at the interval's ends and at the
        # pilot's own share, the lower end raised to where the effect is possible
        c = float(np.abs(d[d != 0])[0])
        if q_hi * c < abs(effect):
            raise ValueError(
                f"`effect` {effect:g} is impossible for a pilot of {k} 0/1-type differences "
                f"({shown}) even at the upper end of P(d ≠ 0)'s 80% interval ({q_hi:.2f}): "
                f"abs(effect) <= {q_hi * c:.4g}."
            )
        qs = sorted({max(q, abs(effect) / c) for q in (q_lo, m / k, q_hi)})
        plans = [
            end_plan("an", f"P(d ≠ 0) = {q:.2f}", binary=True, zero_share=1.0 - q, magnitude=c)
            for q in qs
        ]
        optimistic, conservative = min(plans, key=lambda p: p.n), max(plans, key=lambda p: p.n)
        basis = f"exact binomial over the 80% interval of P(d ≠ 0), {shown}"
        if qs[0] > q_lo:
            basis += f", cut at abs(effect) / {c:.4g} = {qs[0]:.2f} below which it cannot occur"
        return _pilot_range(conservative, (optimistic.n, conservative.n), basis, model, k, common)
    # the pilot's sd at the effect with the unbiased variance (k - 1 in the denominator, as the
    # chi-square interval assumes; the model's own sd divides by k)
    s_lo, s_hi = sd_interval_ends(_reported_sd(model), spread_df(d))
    optimistic = end_plan("optimistic", f"sd {s_lo:.4g}", sd=s_lo)
    conservative = end_plan("conservative", f"sd {s_hi:.4g}", sd=s_hi)
    ends = (optimistic.n, conservative.n)
    basis = "normal model over the 80% interval of the sd" + few_nonzero(d)
    assumed = _sd_range_assumptions(d, effect, (s_lo, s_hi), (q_lo, q_hi))
    if m == k:  # no ties: nothing in the pilot says a tie occurs (as rule Z)
        return _pilot_range(conservative, ends, basis, model, k, common, assumed)
    floor = _tie_floor(q_lo, "lower", level, alt, common)
    # the optimistic end too where the model holds ties ('empirical'; the tilted model of
    # count ratios moves them)
    low = _tie_floor(q_hi, "upper", level, alt, common) if not is_discrete(d) else 0
    ends = (max(ends[0], low), max(ends[1], floor))
    if floor <= conservative.n:
        return _pilot_range(conservative, ends, basis, model, k, common, assumed)
    basis += (
        f"; {shown}: ties held at the lower end of its 80% interval ({q_lo:.2f}) need n = "
        f"{floor} to reach the power"
    )
    # the power there: the normal model's, capped by what the ties allow
    at, before = (
        test_power(effect, s_hi, n, alpha=level, alternative=alt) for n in (floor, floor - 1)
    )
    capped = replace(
        conservative,
        achieved_power=min(float(at), power_ceiling(floor, q_lo, level, alt)),
        power_below=min(float(before), power_ceiling(floor - 1, q_lo, level, alt)),
        method=at.method,
    )
    return _pilot_range(capped, ends, basis, model, k, common, assumed)


def _pilot_range(
    conservative: SampleSizePlan,
    ends: tuple[int, int],
    basis: str,
    model: _Model,
    k: int,
    common: dict[str, Any],
    assumed: tuple[str, ...] | None = None,
) -> SampleSizePlan:
    """The plan at a range's conservative end, as the pilot's plan (rule P); `assumed` in
    place of the pilot model's assumptions where the range was planned by another model."""
    return replace(
        conservative,
        n=ends[1],
        source="pilot",
        sd=_reported_sd(model),
        zero_share=model.zero_share,
        binary=model.binary,
        pilot_n=k,
        assumptions=(
            *(model.assumptions if assumed is None else assumed),
            _level_assumption(common["alpha"], common["family_size"]),
        ),
        n_range=ends,
        range_basis=basis,
    )


def _sd_range_assumptions(
    d: np.ndarray, effect: float, sd_ends: tuple[float, float], shares: tuple[float, float]
) -> tuple[str, ...]:
    """What a range planned by the normal model over the sd's interval assumes (rules P, N):
    not the pilot model's shape (its magnitudes kept, or its count ratios tilted) -- the
    normal model's, at each end of the interval."""
    k, m = d.size, int(np.count_nonzero(d))
    said = (
        f"the planned study's differences are normal with an sd anywhere in the 80% interval "
        f"of what the pilot's {k} estimate ({sd_ends[0]:.4g}–{sd_ends[1]:.4g}), shifted to "
        f"mean {effect:g}",
    )
    if m == k:
        return said
    return (
        *said,
        f"the normal model reads exact zeros as values; the n is raised where ties, which "
        f"cannot vote, need more units to let the test reach the power, their share held "
        f"within the 80% interval of the pilot's {k - m} of {k} (P(d ≠ 0) "
        f"{shares[0]:.2f}–{shares[1]:.2f})",
    )


def _tie_floor(q: float, end: str, level: float, alt: str, common: dict[str, Any]) -> int:
    """The smallest n at which the tie ceiling (:func:`osustat.power.power_ceiling`) at share
    `q` -- the `end` end of P(d != 0)'s 80% interval -- reaches the target; a ValueError
    naming the share where no n up to `n_max` does."""
    target, n_max = common["power"], common["n_max"]
    fewest = fewest_signs(level, alt)
    ns = np.arange(fewest, n_max + 1)
    reach = power_ceiling(ns, q, level, alt) >= target
    if not reach.any():
        raise ValueError(
            f"with P(d ≠ 0) = {q:.2f} (the {end} end of its 80% interval from the pilot) no n "
            f"up to `n_max` = {n_max:,} gives {fewest} agreeing signs with probability "
            f"{target:g}: ties cap the power."
        )
    return int(ns[np.argmax(reach)])


# -- the search -------------------------------------------------------------------------


#: log10 of the start n0 beyond which no n is searched (2**53 ~ 9e15: where float64 stops
#: counting units one by one; a ratio that small overflowed ``math.ceil`` -- red team item 2).
_LOG10_N_BEYOND = 53 * math.log10(2)


def _start(effect: float, sd: float, alpha: float, target: float, alt: str) -> int:
    """Sakai's normal-approximation start ``n0``."""
    za = stats.norm.isf(alpha / 2 if alt == "two-sided" else alpha)
    zb = stats.norm.ppf(target)
    if sd == 0:
        return 6
    if za + zb > 0:  # in logs: the square overflows float64 from effect / sd ~ 1e-154 on
        log_n0 = 2.0 * (math.log10(za + zb) + math.log10(sd) - math.log10(abs(effect)))
        if log_n0 > _LOG10_N_BEYOND:
            raise ValueError(
                f"`effect` / `sd` = {abs(effect):.3g} / {sd:.3g} needs about 10^{log_n0:.0f} "
                f"units per cell (the normal approximation at alpha = {alpha:g}), beyond any "
                "n: plan for a larger `effect`."
            )
    n0 = ((za + zb) * sd / abs(effect)) ** 2 + za**2 / 2
    return max(2, math.ceil(n0))


def _search(
    power_at: Callable[[int], PowerValue], target: float, n0: int, n_max: int, *, noisy: bool
) -> tuple[int, PowerValue, float]:
    """The n where the power crosses `target`: bracket around `n0`, bisect; for exact
    (noise-free) engines then step down while ``n - 1`` still reaches it (the sawtooth of a
    discrete test can put the first crossing below the bisection's)."""
    cache: dict[int, PowerValue] = {}

    def f(n: int) -> PowerValue:
        if n not in cache:
            cache[n] = power_at(n)
            if math.isnan(cache[n]):  # compares False with any target: never "reached"
                raise ValueError(
                    f"the power is NaN at n = {n:,}: the search cannot compare it with the "
                    f"target power {target:g}."
                )
        return cache[n]

    hi = min(max(n0, 2), n_max)
    while f(hi) < target:
        if hi >= n_max:
            raise ValueError(
                f"no n up to `n_max` = {n_max:,} reaches power {target:g} (power "
                f"{f(hi):.3f} at n = {n_max:,}; the normal approximation says about "
                f"{n0:,}). Raise `n_max`, or plan for a larger `effect`."
            )
        hi = min(2 * hi, n_max)
    lo = max(2, hi // 2)
    while lo > 2 and f(lo) >= target:
        hi, lo = lo, max(2, lo // 2)
    if f(lo) >= target:
        hi = lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(mid) >= target:
            hi = mid
        else:
            lo = mid
    if not noisy:
        while hi > 2 and f(hi - 1) >= target:
            hi -= 1
    below = float(f(hi - 1)) if hi > 2 else 0.0
    return hi, f(hi), below


# -- public API -------------------------------------------------------------------------


def plan(
    effect: float,
    *,
    differences: Any = None,
    pairs: Any = None,
    sd: float | None = None,
    zero_share: float | None = None,
    binary: bool | None = None,
    magnitude: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    family_size: int = 1,
    alternative: str = "two-sided",
    n_max: int = N_MAX,
    n_simulations: int = PLAN_SIMULATIONS,
    rng: Any = 0,
) -> SampleSizePlan:
    """Units per cell the paired sign-flip test needs to detect a mean difference `effect`.

    Parameters
    ----------
    effect : float
        The true mean difference (treatment - baseline, units of the metric) the study
        should detect: the smallest one worth finding, or a pilot's or a paper's estimate.
    differences : array_like, optional
        A pilot's paired differences (e.g. ``paired(...).differences`` of one cell). Their
        share of exact zeros and their magnitudes are kept; their own mean is replaced by
        `effect`. 0/1-type differences (one magnitude; given `pairs`, only where the
        units' values take two values) use the exact binomial power.
    pairs : (array_like, array_like), optional
        The pilot's treatment and baseline values per unit, whose differences are
        `differences` (which may then be omitted): for count ratios the treatment's values
        are tilted to the effect, the baseline's kept (:func:`osustat.power`).
    sd : float, optional
        Without a pilot: the sd of the differences as a study with mean `effect` would show
        them (zeros included).
    zero_share : float, optional
        Without a pilot: the share of units whose difference is exactly 0 (ties, e.g. both
        methods score 0 or 1). Ties stay ties under the effect.
    binary : bool, optional
        Without a pilot: True for 0/1 metrics (Hit@k): differences in ``{-c, 0, c}``; give
        `zero_share` or `sd` (one determines the other). With a pilot: inferred.
    magnitude : float, optional
        ``c`` for 0/1-type differences (default 1).
    power : float
        Target power (default .8).
    alpha : float
        Level of the family (default .05).
    family_size : int
        Number of tests in the corrected family the study will run (e.g. 4 cells x 2 metrics
        = 8); each test is planned at ``alpha / family_size``.
    alternative : {'two-sided', 'greater', 'less'}
    n_max : int
        Largest n searched (default 10,000).
    n_simulations : int
        Simulated data sets per power value for the empirical engine (default 5,000:
        Monte Carlo SE about .0057 at power .8, which moves the crossing by about 1.5% of n;
        at most 100,000).
    rng : int, optional
        Seed of every simulated power value (the same seed at every n: the plan is a
        deterministic function of its inputs).

    Returns
    -------
    SampleSizePlan

    Notes
    -----
    The search starts at Sakai's normal-approximation ``n0`` with the sd the plan assumes,
    doubles or halves n to bracket the crossing of the target and bisects. The power at each
    n is :func:`osustat.power` -- the test osustat runs -- so discreteness (a two-sided
    test needs n >= 6 at .05), ties and 0/1 data are accounted for. Exact engines then step
    down while ``n - 1`` still reaches the target (the power of a discrete test is not
    monotone in n); simulated ones stop at the bisection's crossing (their power is known to
    about +-.009).

    Examples
    --------
    >>> from osustat import plan
    >>> p = plan(0.5, sd=1.0)
    >>> p.n, p.method, round(p.achieved_power, 3)
    (34, 'normal', 0.808)
    """
    effect, target, alpha, family_size, alternative, n_max = _plan_iv(
        effect, power, alpha, family_size, alternative, n_max
    )
    test_alpha = alpha / family_size
    model, d = _plan_model(effect, differences, pairs, sd, zero_share, binary, magnitude)
    if d is not None and too_few_differences(d):
        common = {
            "power": target,
            "alpha": alpha,
            "family_size": family_size,
            "alternative": alternative,
            "n_max": n_max,
        }
        return _small_pilot_plan(d, model, effect, common)
    noisy = "differences" in model.kwargs and not model.binary  # the empirical engine
    n0 = _start(effect, model.sd, test_alpha, target, alternative)
    power_at = _power_at(effect, model, test_alpha, alternative, n_simulations, rng, n0, noisy)
    n, achieved, below = _search(power_at, target, n0, n_max, noisy=noisy)
    n_range = basis = None
    if model.source == "pilot" and achieved.method == "empirical":
        assert d is not None
        shaped = _shape_range(d, n, test_alpha, alternative)
        if shaped is not None:  # rule P2: rule D's range for a plan
            n_range, basis = shaped
            _check_shape_end(n_range, basis, n_max, n_simulations if noisy else 0)
            if n_range[1] > n:
                n = n_range[1]
                achieved, below = power_at(n), float(power_at(n - 1))
    sims = achieved.n_simulations
    return SampleSizePlan(
        n=n,
        achieved_power=float(achieved),
        power_below=below,
        effect=effect,
        target_power=target,
        alpha=alpha,
        family_size=family_size,
        test_alpha=test_alpha,
        alternative=alternative,
        method=achieved.method,
        source=model.source,
        sd=_reported_sd(model),
        zero_share=model.zero_share,
        binary=model.binary,
        pilot_n=model.pilot_n,
        n_simulations=sims,
        monte_carlo_se=math.sqrt(achieved * (1 - achieved) / sims) if sims else 0.0,
        start_n=n0,
        assumptions=(*model.assumptions, _level_assumption(alpha, family_size)),
        tilted=achieved.tilted,
        tilt_fallback=model.tilt_fallback,
        n_range=n_range,
        range_basis=basis,
        sd_planned=None if achieved.tilted is not None else model.sd,
    )


def _reported_sd(model: _Model) -> float:
    """The sd a plan reports: a pilot's of several magnitudes with the unbiased variance
    (``k - 1`` in the denominator, as the chi-square interval of rule P assumes; the model's
    own sd, that of the law the empirical engine resamples, divides by k); a stated sd and
    the sd 0/1-type differences' share of ties gives at the effect as they are."""
    k = model.pilot_n
    if model.source != "pilot" or model.binary or k is None or k < 2:
        return model.sd
    return model.sd * math.sqrt(k / (k - 1))


def _plan_iv(
    effect: Any, power: float, alpha: float, family_size: int, alternative: str, n_max: int
) -> tuple[float, float, float, int, str, int]:
    """Validate :func:`plan`'s scalar arguments: (effect, target power, alpha, family size,
    alternative, n_max)."""
    try:
        effect = float(effect)
    except (TypeError, ValueError):
        raise TypeError(f"`effect` must be a number; got {effect!r}.") from None
    if not math.isfinite(effect) or effect == 0:
        raise ValueError(f"`effect` must be a finite nonzero mean difference; got {effect!r}.")
    target = check_level(power, "power")
    alpha = check_level(alpha, "alpha")
    family_size = check_positive_int(family_size, "family_size")
    alternative = check_alternative(alternative)
    if (alternative == "greater" and effect < 0) or (alternative == "less" and effect > 0):
        raise ValueError(
            f"`effect` {effect:g} points away from `alternative` = {alternative!r}: a "
            "one-sided test cannot detect it."
        )
    n_max = check_positive_int(n_max, "n_max", minimum=6)
    test_alpha = alpha / family_size
    if target <= test_alpha:
        raise ValueError(f"`power` must exceed the test's level {test_alpha:g}; got {target:g}.")
    return effect, target, alpha, family_size, alternative, n_max


def _plan_model(
    effect: float,
    differences: Any,
    pairs: Any,
    sd: float | None,
    zero_share: float | None,
    binary: bool | None,
    magnitude: float | None,
) -> tuple[_Model, np.ndarray | None]:
    """Choose the model :func:`plan` assumes: the pilot's (and its differences) or the stated
    one (differences None)."""
    if differences is None and pairs is None:
        return _stated_model(effect, sd, zero_share, binary, magnitude), None
    if sd is not None or zero_share is not None or magnitude is not None:
        raise ValueError(
            "pass pilot `differences` or stated `sd` / `zero_share` / `magnitude`, not "
            "both: the pilot's sd and share of zeros are read from it."
        )
    given = None
    if differences is not None:
        given = as_float_vector(differences, "differences", min_size=2)
    checked = None if pairs is None else check_pairs(pairs, given)
    d = checked[0] - checked[1] if checked is not None else given
    assert d is not None
    return _pilot_model(d, effect, binary, checked), d


def _power_at(
    effect: float,
    model: _Model,
    test_alpha: float,
    alternative: str,
    n_simulations: int,
    rng: Any,
    n0: int,
    noisy: bool,
) -> Callable[[int], PowerValue]:
    """The power function :func:`plan` searches: :func:`osustat.power` of the model at n,
    refusing an empirical simulation too large for memory."""

    def power_at(n: int) -> PowerValue:
        if noisy and n * n_simulations > _EMPIRICAL_MAX_CELLS:
            raise ValueError(
                f"the search reached n = {n:,}: simulating {n_simulations:,} data sets of that "
                f"size needs too much memory (n * n_simulations <= {_EMPIRICAL_MAX_CELLS:,}); "
                f"the normal approximation says about {n0:,}. Lower `n_simulations`, or plan "
                "for a larger `effect`."
            )
        return test_power(
            effect,
            n=n,
            alpha=test_alpha,
            alternative=alternative,
            n_simulations=n_simulations,
            rng=rng,
            **model.kwargs,
        )

    return power_at


def _check_shape_end(ends: tuple[int, int], basis: str, n_max: int, simulations: int) -> None:
    """Refuse a rule P2 range whose conservative end is beyond `n_max` or too large to
    simulate, saying so (not as the search's own limit)."""
    if ends[1] <= n_max and ends[1] * simulations <= _EMPIRICAL_MAX_CELLS:
        return
    why = (
        f"beyond `n_max` = {n_max:,}: raise `n_max`"
        if ends[1] > n_max
        else f"too large to simulate {simulations:,} data sets of: lower `n_simulations`"
    )
    raise ValueError(
        f"from a pilot whose differences are not normal-shaped n is {ends[0]:,}–{ends[1]:,} "
        f"({basis}); its conservative end is {why}, or plan for a larger `effect`."
    )


def _shape_range(
    d: np.ndarray, n: int, level: float, alternative: str
) -> tuple[tuple[int, int], str] | None:
    """Rule P2 (rule D for a plan): where the pilot's nonzero differences are not
    normal-shaped, its n scaled by (sd end / sd)**2 over the sd's 80% interval with the delta
    method's degrees of freedom, and the basis in words; None for a normal shape."""
    shape = not_normal_shape(d)
    if shape is None:
        return None
    p_shape, nu, k = shape
    lo, hi = sd_interval_ends(1.0, nu)
    basis = (
        f"the pilot's n over the 80% interval of the sd; its {k} nonzero differences are not "
        f"normal-shaped, Shapiro-Wilk p = {p_shape:.2g}"
    )
    low = max(fewest_signs(level, alternative), math.ceil(n * lo**2))
    return (low, max(n, math.ceil(n * hi**2))), basis


def _level_assumption(alpha: float, m: int) -> str:
    if m == 1:
        return f"one test at alpha = {alpha:g}"
    return (
        f"a family of {m} tests: each planned at alpha / {m} = {alpha / m:.4g} (Bonferroni; "
        "Holm's first step, conservative for Holm's later steps and for BH)"
    )


def plan_cells(
    records: pd.DataFrame | str | Path,
    treatment: str,
    baseline: str,
    *,
    metric: str,
    budget: int,
    effect: float,
    cells: list[str] | None = None,
    unit: str = "query",
    benchmark: str | None = None,
    family_size: int | None = None,
    **options: Any,
) -> CellPlans:
    """Per-cell plans from a pilot's records: each cell's differences, one :func:`plan`.

    Parameters
    ----------
    records : pandas.DataFrame or path
        Pilot records (long schema; read as :func:`osustat.paired` reads them).
    treatment, baseline, metric, budget, unit, benchmark
        As for :func:`osustat.paired`.
    effect : float
        The mean difference to detect in every cell.
    cells : list of str, optional
        Cells to plan (default: every cell in the records, then ``'all'``, the aggregate).
        ``unit='episode'`` (episodes mix cells) plans ``'all'`` only; a cell asked for
        there is refused (ValueError) for that reason.
    family_size : int, optional
        The family each cell's test is corrected in. Default: the one :func:`osustat.analyze`
        forms by default for one (treatment, baseline) pair (``'per-metric-budget'``,
        Holm): the 4 cells of a T±E± table -- also where a small pilot labels fewer --,
        each planned at alpha / 4 (:func:`osustat.multitest.strictest_level`: Holm rejects
        a test whose p is at most alpha / m whatever the others' p), the aggregate at alpha
        (analyze tests it outside every family). Given: the cells at alpha / `family_size`
        (e.g. 4 cells x 2 treatments = 8), the aggregate still at alpha -- except where no
        cell is tested (``unit='episode'``, records without cells), where the aggregate
        tests are the family's members, as in analyze, and the aggregate is planned at
        alpha / `family_size`. ``levels`` says each row's level and why.
    **options
        Passed to :func:`plan` (`power`, `alpha`, `alternative`, `n_max`,
        `n_simulations`, `rng`).

    Returns
    -------
    CellPlans
        A cell that cannot be planned (fewer than 2 units, all ties, an effect beyond what
        its differences allow, more than `n_max` needed) is listed in ``refused`` with the
        reason, never dropped.
    """
    from .records import paired

    for bad in ("differences", "sd", "zero_share", "magnitude"):
        if bad in options:
            raise TypeError(f"`{bad}` is read from the records; it is not an option here.")
    if isinstance(records, str | Path):
        from .io.reading import load_records  # once: the query level's cells are read too

        records = load_records(records)
    p = paired(
        records, treatment, baseline, metric=metric, budget=budget, unit=unit, benchmark=benchmark
    )
    groups = _cell_groups(p.cells, p.differences.size)
    labelled = _query_cells(records, treatment, baseline, metric, budget, benchmark, p.cells)
    wanted = list(groups) if cells is None else unique_items(cells, "cells")
    unknown = [c for c in wanted if c not in groups]
    if unknown and set(unknown) <= set(labelled):  # the episode unit: cells label queries
        raise ValueError(
            f"`cells` {unknown} cannot be planned at the episode unit: a cell labels a query, "
            "and an episode holds queries of several cells (`osustat analyze` tests no cells "
            "there); plan 'all', or plan the cells at the query unit (`unit='query'`)."
        )
    if unknown:
        raise ValueError(f"`cells` {unknown} not in the records; known cells: {list(groups)}.")
    alpha = options.get("alpha", 0.05)
    levels = _levels(len(groups) - 1, family_size, alpha, unit)
    plans: dict[str, SampleSizePlan] = {}
    refused: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for cell in wanted:
        m, why = levels["all" if cell == "all" else "cell"]
        d = p.differences[groups[cell]]
        sizes[cell] = int(d.size)
        if d.size < 2:
            refused[cell] = f"{d.size} unit(s) in the pilot: at least 2 are needed"
            continue
        try:
            pairs = (p.treatment[groups[cell]], p.baseline[groups[cell]])
            one = plan(effect, differences=d, pairs=pairs, family_size=m, **options)
        except ValueError as exc:
            refused[cell] = str(exc)
            continue
        plans[cell] = replace(one, assumptions=(*one.assumptions[:-1], f"planned at {why}"))
    return CellPlans(
        plans=plans,
        refused=refused,
        pilot_sizes=sizes,
        treatment=treatment,
        baseline=baseline,
        metric=p.metric,
        budget=int(budget),
        unit=unit,
        levels={c: levels["all" if c == "all" else "cell"][1] for c in wanted},
        notes=_cells_not_tested(labelled, p.metric) if unit == "episode" else (),
    )


def _cell_groups(labels: Any, size: int) -> dict[str, np.ndarray]:
    """Each cell's units (a mask), sorted by label, then ``'all'``."""
    groups: dict[str, np.ndarray] = {}
    if labels is not None:
        names = np.array([str(c) for c in labels])
        for label in sorted(set(names.tolist())):
            groups[label] = names == label
    groups["all"] = np.ones(size, dtype=bool)
    return groups


def _query_cells(
    records: pd.DataFrame,
    treatment: str,
    baseline: str,
    metric: str,
    budget: int,
    benchmark: str | None,
    cells: Any,
) -> list[str]:
    """The cells the records label on the compared rows (at the query unit: `cells`, the
    paired units' own; at the episode unit read at the query level, none where it cannot be
    read so)."""
    from .records import paired

    if cells is None:
        try:
            cells = paired(
                records, treatment, baseline, metric=metric, budget=budget, benchmark=benchmark
            ).cells
        except ValueError:
            return []
    return [] if cells is None else sorted({str(c) for c in cells})


def _levels(m_cells: int, given: int | None, alpha: float, unit: str) -> dict[str, tuple[int, str]]:
    """The family size each row is planned in and its level with why, in words: for the
    cells (``'cell'``) and the aggregate (``'all'``), as :func:`plan_cells` documents."""
    from .multitest import strictest_level

    def at(m: int, why: str) -> tuple[int, str]:
        level = strictest_level(m, alpha, "holm")
        return m, (f"α/{m} = {level:.4g}" if m > 1 else f"α = {alpha:g}") + f": {why}"

    if given is not None:
        check_positive_int(given, "family_size")
    stated = (
        f"a family of {given} tests (`family_size` = {given}; Bonferroni's level, Holm's "
        "first step)"
        if given != 1
        else "one test (`family_size` = 1)"
    )
    if m_cells:
        m = len(CELLS)  # a study's table holds every cell a small pilot may have missed
        fewer = (
            f" (the pilot labels {m_cells}; if the study's records will hold only those, "
            f"give `family_size` = {m_cells})"
            if m_cells < m
            else ""
        )
        if given is not None:
            cell = at(given, stated)
        else:
            cell = at(
                m,
                f"Holm over the {m} cells of a T±E± table{fewer}, as `osustat analyze` "
                f"corrects one pair's cells by default (its first step: Holm rejects a cell "
                f"whose p is at most α/{m}, whatever the other cells' p; with k treatments "
                f"analysed together its family is {m}k: give `family_size`); the power "
                f"printed is at α/{m}, a floor under Holm's later steps",
            )
        aggregate = at(1, "`osustat analyze` tests the aggregate outside every family")
        return {"cell": cell, "all": aggregate}
    no_cells = f"the {unit} unit" if unit == "episode" else "records without cells"
    if given is not None and given > 1:
        aggregate = at(
            given,
            f"{stated}; with no cells tested ({no_cells}) the aggregate tests are the "
            "family's members, as in `osustat analyze`",
        )
    else:
        aggregate = at(
            1,
            f"with no cells tested ({no_cells}) `osustat analyze`'s default family is one "
            "table's aggregate test",
        )
    return {"cell": aggregate, "all": aggregate}


def _cells_not_tested(labelled: list[str], metric: str) -> tuple[str, ...]:
    """At the episode unit, where the records label queries with cells: that no cell is
    planned, and why (as :func:`osustat.analyze`'s note). A metric whose labelled queries
    are all of one cell (an import's ``judge.t+e+``) is that cell's test at the episode
    unit: nothing to say."""
    if len(labelled) < 2:
        return ()
    return (
        f"Cells not tested: the records label queries with cells on {metric} "
        f"({', '.join(labelled)}), but the unit of analysis is the episode: a cell labels a "
        "query, and an episode (e.g. a conversation) holds queries of several cells, so "
        "`osustat analyze` runs no per-cell tests at this unit and only the aggregate ('all') "
        "is planned; `unit='query'` plans the cells at the query level.",
    )
