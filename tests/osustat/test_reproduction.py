"""Effect ratio and ΔRI (issue 24): hand computations and the bootstrap's behaviour."""

import numpy as np
import pytest

from osustat.bootstrap import cluster_bootstrap_ci
from osustat.reproduction import reproduction_measures

# A reproduction and an original run by hand (five topics each):
REP_A = [0.50, 0.40, 0.90, 0.30, 0.60]  # mean .54
REP_B = [0.40, 0.40, 0.70, 0.20, 0.50]  # mean .44 -> improvement .10, RI .10/.44
ORIG_A = [0.60, 0.50, 0.80, 0.40, 0.70]  # mean .60
ORIG_B = [0.40, 0.30, 0.70, 0.30, 0.50]  # mean .44 -> improvement .16, RI .16/.44


def test_hand_computation_reference_run():
    r = reproduction_measures(
        REP_A, REP_B, original_treatment=ORIG_A, original_baseline=ORIG_B, n_resamples=200, rng=0
    )
    # repro_eval 0.5.0: ER = mean improvement (rep) / mean improvement (orig);
    # ΔRI = RI (orig) - RI (rep), RI = (mean a - mean b) / mean b
    assert r.effect_ratio == pytest.approx(0.10 / 0.16)
    assert r.delta_ri == pytest.approx(0.16 / 0.44 - 0.10 / 0.44)
    assert r.improvement == pytest.approx(0.10) and r.improvement_original == pytest.approx(0.16)
    assert r.relative == pytest.approx(0.10 / 0.44)
    assert r.origin == "reference run, other units" and r.n == r.n_original == 5
    d = r.to_dict()
    assert set(d) >= {"effect_ratio", "effect_ratio_ci", "delta_ri", "delta_ri_ci"}
    assert d["effect_ratio_ci"] == [r.effect_ratio_ci.low, r.effect_ratio_ci.high]


def test_hand_computation_paper_values():
    r = reproduction_measures(REP_A, REP_B, original_means=(0.60, 0.44), n_resamples=200, rng=0)
    assert r.effect_ratio == pytest.approx(0.10 / 0.16)
    assert r.delta_ri == pytest.approx(0.16 / 0.44 - 0.10 / 0.44)
    assert r.origin == "paper values" and r.n_original is None
    # only an improvement printed: ER, no ΔRI; only a relative improvement: ΔRI, no ER
    only_effect = reproduction_measures(REP_A, REP_B, original_effect=0.2, rng=0)
    assert only_effect.effect_ratio == pytest.approx(0.5) and only_effect.delta_ri is None
    assert only_effect.delta_ri_ci is None
    only_rel = reproduction_measures(REP_A, REP_B, original_relative=0.5, rng=0)
    assert only_rel.effect_ratio is None and only_rel.delta_ri == pytest.approx(0.5 - 0.10 / 0.44)


def test_paper_value_interval_is_the_reproduction_interval_scaled():
    """With printed values the original is fixed: the ER interval is the percentile interval
    of the reproduced mean improvement divided by the printed one (same resamples)."""
    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = a - rng.normal(0.05, 0.1, 40)
    r = reproduction_measures(a, b, original_effect=0.1, n_resamples=999, rng=7)
    seed = int(np.random.default_rng(7).integers(2**63 - 1))
    table = np.column_stack([a, b, np.ones(40)])
    imp = cluster_bootstrap_ci(
        table, lambda t: (t[:, 0] - t[:, 1]) / t[:, 2], n_resamples=999, rng=seed
    )
    assert r.effect_ratio_ci.low == pytest.approx(imp.low / 0.1)
    assert r.effect_ratio_ci.high == pytest.approx(imp.high / 0.1)


def test_same_units_resampled_jointly():
    """The reproduction equals the original on the same topics: ER = 1 and ΔRI = 0 in every
    resample (joint draws), so the intervals are the points; resampled independently they
    are not."""
    rng = np.random.default_rng(0)
    a, b = rng.random(30) + 0.2, rng.random(30)
    joint = reproduction_measures(
        a, b, original_treatment=a, original_baseline=b, same_units=True, n_resamples=300, rng=1
    )
    assert joint.origin == "reference run, same units"
    assert joint.effect_ratio == pytest.approx(1.0) and joint.delta_ri == pytest.approx(0.0)
    assert joint.effect_ratio_ci.low == pytest.approx(1.0)
    assert joint.effect_ratio_ci.high == pytest.approx(1.0)
    assert abs(joint.delta_ri_ci.low) < 1e-12 and abs(joint.delta_ri_ci.high) < 1e-12
    apart = reproduction_measures(
        a, b, original_treatment=a, original_baseline=b, n_resamples=300, rng=1
    )
    assert apart.effect_ratio_ci.low < 1.0 < apart.effect_ratio_ci.high


def test_clusters_are_resampled_whole():
    # two clusters' improvements .2 and 0: a unit-level bootstrap would mix them, the
    # cluster bootstrap only draws (.2, .2), (.2, 0) or (0, 0) -> ER in {0, .5, 1}
    a = [0.6, 0.6, 0.4, 0.4]
    b = [0.4, 0.4, 0.4, 0.4]
    r = reproduction_measures(
        a, b, original_effect=0.1, clusters=["e1", "e1", "e2", "e2"], n_resamples=400, rng=0
    )
    assert r.effect_ratio == pytest.approx(1.0)
    assert {round(r.effect_ratio_ci.low, 9), round(r.effect_ratio_ci.high, 9)} <= {0.0, 1.0, 2.0}


def test_stratified_bootstrap_keeps_each_sample_size():
    """Each stratum is resampled within itself: the resampled unit counts stay 3 and 5."""
    table = np.column_stack([np.ones(8), np.repeat([1.0, 0.0], [3, 5])])
    seen = []

    def stat(t):
        seen.append(t.copy())
        return t[:, 0]

    cluster_bootstrap_ci(table, stat, n_resamples=50, rng=0, strata=[0] * 3 + [1] * 5)
    boot = seen[0]
    assert np.all(boot[:, 0] == 8) and np.all(boot[:, 1] == 3)


def test_undefined_ratio_gives_an_unbounded_end():
    # the original improvement is 0: ER undefined, no interval
    r = reproduction_measures(REP_A, REP_B, original_effect=0.0, rng=0)
    assert np.isnan(r.effect_ratio) and r.effect_ratio_ci is None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "neither"),
        ({"original_effect": 0.1, "original_treatment": REP_A, "original_baseline": REP_B}, "both"),
        ({"original_treatment": REP_A}, "needs both"),
        ({"original_means": (0.5, 0.4), "original_effect": 0.1}, "not both"),
        ({"original_means": (0.5,)}, "two numbers"),
        ({"original_effect": float("nan")}, "finite"),
        ({"original_effect": 0.1, "same_units": True}, "reference run"),
        (
            {"original_treatment": [1, 2, 3], "original_baseline": [1, 2, 3], "same_units": True},
            "5 units",
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        reproduction_measures(REP_A, REP_B, **kwargs)


def test_strata_errors_name_the_argument():
    with pytest.raises(ValueError, match="`strata`"):
        cluster_bootstrap_ci(np.ones((4, 1)), lambda t: t[:, 0], strata=[0, 0, 0, 1])
    with pytest.raises(ValueError, match="`strata`"):
        cluster_bootstrap_ci(np.ones((4, 1)), lambda t: t[:, 0], strata=[0, 1])


def test_resampled_zero_baseline_is_an_unbounded_end_without_a_warning():
    # resamples with a baseline mean of 0 make RI undefined: counted as +inf, the interval's
    # upper end is unbounded, and no numpy warning leaks (it did, from interpolating inf)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = reproduction_measures(
            [1, 0, 1, 0, 1], [0, 0, 0, 0, 1], original_means=(0.6, 0.4), n_resamples=500, rng=0
        )
    assert r.delta_ri == pytest.approx(0.5 - 2.0)
    assert np.isfinite(r.delta_ri_ci.low) and r.delta_ri_ci.high == np.inf
