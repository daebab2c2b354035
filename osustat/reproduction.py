"""Reproduction measures: effect ratio (ER) and ΔRI with bootstrap intervals (issue 24).

Breuer et al. (2020), "How to Measure the Reproducibility of System-oriented IR Experiments"
(SIGIR), as the `repro_eval` package (0.5.0, ``measure/overall_effects.py``) computes them,
for an advanced run ``a`` (our treatment) and a baseline run ``b`` scored per unit:

- **effect ratio** ``ER = mean(a' - b') / mean(a - b)``: the reproduced mean improvement over
  the original one (1: the same improvement; 0: none; negative: the other way);
- **ΔRI** ``= RI - RI'`` with ``RI = (mean(a) - mean(b)) / mean(b)`` the relative improvement
  over the baseline, unprimed the original, primed the reproduction (repro_eval's sign: the
  original's RI minus the reproduction's; 0 is ideal, positive means the reproduction gains
  less).

The original is either a reference run (per-unit values: the original records) or the
paper's printed values (its two means, or its improvement and/or relative improvement).
The intervals are percentile bootstraps from the core's one resampling engine
(:func:`osustat.bootstrap.cluster_bootstrap_ci`): the reproduction's units (whole episodes
when `clusters` are given) are resampled; a reference run on the same units is resampled
jointly with them (the same draw for both), a reference run on other units independently
(its own stratum). Printed values carry no sampling error we could resample: their
intervals cover the reproduction's sampling error only (the result says so).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import (
    as_float_vector,
    check_finite,
    check_level,
    check_means_pair,
    check_resamples,
    check_rng,
)
from .bootstrap import cluster_bootstrap_ci
from .intervals import ConfidenceInterval

__all__ = ["ORIGIN_KINDS", "ReproductionMeasures", "reproduction_measures"]

#: What the original side was (``ReproductionMeasures.origin``).
ORIGIN_KINDS = ("paper values", "reference run, same units", "reference run, other units")


@dataclass(frozen=True, kw_only=True)
class ReproductionMeasures:
    """ER and ΔRI of a reproduction against an original (:func:`reproduction_measures`).

    Attributes
    ----------
    effect_ratio : float or None
        ``mean(a' - b') / mean(a - b)``; None when the original improvement is unknown (NaN
        when it is 0: the ratio is undefined).
    effect_ratio_ci : ConfidenceInterval or None
    delta_ri : float or None
        ``RI_original - RI_reproduced``; None when the original relative improvement is
        unknown (NaN when a baseline mean is 0).
    delta_ri_ci : ConfidenceInterval or None
    improvement, improvement_original : float or None
        Mean improvements ``mean(a - b)`` of the reproduction and the original.
    relative, relative_original : float or None
        Relative improvements ``RI``.
    origin : str
        One of :data:`ORIGIN_KINDS`.
    n, n_original : int or None
        Units of the reproduction and of the reference run (None for paper values).
    n_resamples : int
    """

    effect_ratio: float | None
    effect_ratio_ci: ConfidenceInterval | None
    delta_ri: float | None
    delta_ri_ci: ConfidenceInterval | None
    improvement: float
    improvement_original: float | None
    relative: float
    relative_original: float | None
    origin: str
    n: int
    n_original: int | None
    n_resamples: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys: ``effect_ratio``, ``effect_ratio_ci``, ``delta_ri``,
        ``delta_ri_ci`` (``[low, high]`` or None) and what they were computed from."""

        def ci(c: ConfidenceInterval | None) -> list[float] | None:
            return None if c is None else [c.low, c.high]

        return {
            "effect_ratio": self.effect_ratio,
            "effect_ratio_ci": ci(self.effect_ratio_ci),
            "delta_ri": self.delta_ri,
            "delta_ri_ci": ci(self.delta_ri_ci),
            "improvement": self.improvement,
            "improvement_original": self.improvement_original,
            "relative_improvement": self.relative,
            "relative_improvement_original": self.relative_original,
            "original": self.origin,
            "n_original": self.n_original,
        }


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """num / den with a zero denominator giving NaN (never a warning)."""
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _paper_values(means: Any, effect: Any, relative: Any) -> tuple[float | None, float | None]:
    """The original's (improvement, relative improvement) from printed values."""
    if means is not None:
        if effect is not None or relative is not None:
            raise ValueError(
                "give the original's printed `original_means` or its `original_effect` / "
                "`original_relative`, not both (the means determine them)."
            )
        t, b = check_means_pair(means, "original_means")
        return t - b, (t - b) / b if b != 0 else math.nan
    return (
        None if effect is None else check_finite(effect, "original_effect"),
        None if relative is None else check_finite(relative, "original_relative"),
    )


def _cluster_table(
    t: NDArray[np.float64], b: NDArray[np.float64], clusters: Any
) -> NDArray[np.float64]:
    """Per-cluster totals ``[sum a, sum b, units]`` (one row per unit without clusters)."""
    if clusters is None:
        return np.column_stack([t, b, np.ones_like(t)])
    from .bootstrap import _cluster_codes

    codes = _cluster_codes(clusters, t.size)
    return np.column_stack(
        [np.bincount(codes, t), np.bincount(codes, b), np.bincount(codes).astype(np.float64)]
    )


def reproduction_measures(
    treatment: Any,
    baseline: Any,
    *,
    original_treatment: Any = None,
    original_baseline: Any = None,
    same_units: bool = False,
    original_means: Any = None,
    original_effect: Any = None,
    original_relative: Any = None,
    clusters: Any = None,
    original_clusters: Any = None,
    level: float = 0.95,
    n_resamples: int = 2_000,
    rng: Any = None,
) -> ReproductionMeasures:
    """Effect ratio and ΔRI of a reproduction, with percentile bootstrap intervals.

    Parameters
    ----------
    treatment, baseline : array_like
        The reproduction's per-unit values of the advanced and the baseline method (paired:
        one value each per unit, at least 2 units).
    original_treatment, original_baseline : array_like, optional
        A reference run: the original's per-unit values (paired with each other).
    same_units : bool
        The reference run scores the same units in the same order as the reproduction (one
        collection, two runs): resampled jointly. Otherwise independently.
    original_means : (float, float), optional
        The paper's printed (treatment, baseline) means.
    original_effect, original_relative : float, optional
        The paper's printed mean improvement and/or relative improvement, when its means are
        not printed (ER needs the first, ΔRI the second).
    clusters, original_clusters : array_like, optional
        Cluster ids per unit (e.g. episodes of queries): whole clusters are resampled.
    level : float
    n_resamples : int
    rng : {None, int, numpy.random.Generator}

    Returns
    -------
    ReproductionMeasures

    Notes
    -----
    Both intervals come from the same resamples. A ratio's percentile interval is wide, and
    unbounded in practice, when the original improvement's resamples come near 0: an ER is
    only informative when the original effect is clearly nonzero.

    Examples
    --------
    The paper printed .60 vs .50 (improvement .10, RI 20%); the reproduction finds
    .58 vs .50 on four queries:

    >>> from osustat.reproduction import reproduction_measures
    >>> r = reproduction_measures([0.6, 0.5, 0.7, 0.52], [0.5, 0.45, 0.6, 0.45],
    ...                           original_means=(0.60, 0.50), n_resamples=500, rng=0)
    >>> round(r.effect_ratio, 3), round(r.delta_ri, 3), r.origin
    (0.8, 0.04, 'paper values')
    """
    a = as_float_vector(treatment, "treatment", min_size=2)
    b = as_float_vector(baseline, "baseline", min_size=2)
    if a.size != b.size:
        raise ValueError(
            f"`treatment` and `baseline` must be paired (one value each per unit); got "
            f"{a.size} and {b.size} values."
        )
    level = check_level(level)
    n_resamples = check_resamples(n_resamples, minimum=2)
    gen = check_rng(rng)
    reference = original_treatment is not None or original_baseline is not None
    printed = any(x is not None for x in (original_means, original_effect, original_relative))
    if reference == printed:
        raise ValueError(
            "give the original either as a reference run (`original_treatment` and "
            "`original_baseline`) or as printed values (`original_means`, or "
            "`original_effect` / `original_relative`); got "
            + ("both." if reference else "neither.")
        )
    table = _cluster_table(a, b, clusters)
    strata = n_original = None
    if reference:
        table, strata, n_original, origin, effect_o, rel_o = _with_reference(
            table, a.size, clusters, original_treatment, original_baseline, same_units,
            original_clusters,
        )  # fmt: skip
    else:
        if same_units or original_clusters is not None:
            raise ValueError("`same_units` and `original_clusters` describe a reference run.")
        effect_o, rel_o = _paper_values(original_means, original_effect, original_relative)
        origin = ORIGIN_KINDS[0]
    return _measures(
        table, strata, effect_o, rel_o, origin, n=int(a.size), n_original=n_original,
        level=level, n_resamples=n_resamples, gen=gen,
    )  # fmt: skip


def _with_reference(
    table: NDArray[np.float64],
    n: int,
    clusters: Any,
    original_treatment: Any,
    original_baseline: Any,
    same_units: bool,
    original_clusters: Any,
) -> tuple[NDArray[np.float64], Any, int, str, float | None, float | None]:
    """The reproduction's totals `table` joined with a reference run's: (table, strata,
    units of the original, origin, the original's improvement and RI). On the same units the
    two are resampled jointly (columns side by side), otherwise independently (strata)."""
    if original_treatment is None or original_baseline is None:
        raise ValueError("a reference run needs both `original_treatment` and `original_baseline`.")
    oa = as_float_vector(original_treatment, "original_treatment", min_size=2)
    ob = as_float_vector(original_baseline, "original_baseline", min_size=2)
    if oa.size != ob.size:
        raise ValueError(
            "`original_treatment` and `original_baseline` must be paired; got "
            f"{oa.size} and {ob.size} values."
        )
    strata = None
    if same_units:
        if oa.size != n:
            raise ValueError(
                f"`same_units=True` needs the reference run on the reproduction's {n} "
                f"units (in the same order); it has {oa.size}."
            )
        if original_clusters is not None:
            raise ValueError(
                "`same_units=True` resamples the reference with the reproduction's "
                "`clusters`; do not pass `original_clusters`."
            )
        table = np.column_stack([table, _cluster_table(oa, ob, clusters)])
        origin = ORIGIN_KINDS[1]
    else:
        k = table.shape[0]
        other = _cluster_table(oa, ob, original_clusters)
        table = np.block([[table, np.zeros((k, 3))], [np.zeros((other.shape[0], 3)), other]])
        strata = np.repeat([0, 1], [k, other.shape[0]])
        origin = ORIGIN_KINDS[2]
    effect_o = float(oa.mean() - ob.mean())
    rel_o = float(_ratio(np.array(oa.mean() - ob.mean()), np.array(ob.mean())))
    return table, strata, int(oa.size), origin, effect_o, rel_o


def _measures(
    table: NDArray[np.float64],
    strata: Any,
    effect_o: float | None,
    rel_o: float | None,
    origin: str,
    *,
    n: int,
    n_original: int | None,
    level: float,
    n_resamples: int,
    gen: np.random.Generator,
) -> ReproductionMeasures:
    """ER and ΔRI at the observed totals, with intervals from one set of resamples of
    `table` (reproduction columns 0-2, a reference run's 3-5; printed values fixed)."""

    def sides(t: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(improvement, RI) of the reproduction and of the original per row of totals."""
        imp = (t[:, 0] - t[:, 1]) / t[:, 2]
        rel = _ratio(t[:, 0] - t[:, 1], t[:, 1])
        if t.shape[1] == 3:  # printed values: fixed
            fixed_imp = np.nan if effect_o is None else effect_o
            fixed_rel = np.nan if rel_o is None else rel_o
            return imp, rel, np.full(imp.shape, fixed_imp), np.full(imp.shape, fixed_rel)
        oimp = (t[:, 3] - t[:, 4]) / t[:, 5]
        orel = _ratio(t[:, 3] - t[:, 4], t[:, 4])
        return imp, rel, oimp, orel

    def er(t: NDArray[np.float64]) -> NDArray[np.float64]:
        imp, _, oimp, _ = sides(t)
        return _ratio(imp, oimp)

    def dri(t: NDArray[np.float64]) -> NDArray[np.float64]:
        _, rel, _, orel = sides(t)
        return orel - rel

    observed = table.sum(axis=0, keepdims=True)
    seed = int(gen.integers(2**63 - 1))  # one seed: both intervals from the same resamples

    def interval(
        stat: Callable[[NDArray[np.float64]], NDArray[np.float64]], name: str, value: float
    ) -> ConfidenceInterval | None:
        if not math.isfinite(value):
            return None
        return cluster_bootstrap_ci(
            table,
            _undefined_as_unbounded(stat),
            level=level,
            n_resamples=n_resamples,
            rng=seed,
            name=name,
            strata=strata,
        )

    imp, rel, _, _ = (float(x[0]) for x in sides(observed))
    effect_ratio = None if effect_o is None else float(er(observed)[0])
    delta_ri = None if rel_o is None else float(dri(observed)[0])
    return ReproductionMeasures(
        effect_ratio=effect_ratio,
        effect_ratio_ci=None if effect_ratio is None else interval(er, "ER", effect_ratio),
        delta_ri=delta_ri,
        delta_ri_ci=None if delta_ri is None else interval(dri, "ΔRI", delta_ri),
        improvement=imp,
        improvement_original=effect_o,
        relative=rel,
        relative_original=rel_o,
        origin=origin,
        n=n,
        n_original=n_original,
        n_resamples=n_resamples,
    )


def _undefined_as_unbounded(
    stat: Callable[[NDArray[np.float64]], NDArray[np.float64]],
) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """The statistic with its undefined resampled values (a denominator of 0) at +inf: an
    interval reached by them shows an unbounded end instead of silently dropping resamples."""

    def wrapped(t: NDArray[np.float64]) -> NDArray[np.float64]:
        v = stat(t)
        return np.where(np.isnan(v), np.inf, v)

    return wrapped
