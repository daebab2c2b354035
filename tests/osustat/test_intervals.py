"""One interval type across the core; results are keyword-only and safe to compare."""

import dataclasses

import numpy as np
import pytest

from osustat import (
    BootstrapCI,
    ConfidenceInterval,
    adjust_pvalues,
    bootstrap_ci,
    paired_signflip_test,
    ratio_of_means,
    seed_dependence,
)


def test_every_interval_is_a_confidence_interval():
    d = np.random.default_rng(0).normal(0.3, 1.0, size=60)
    boot = bootstrap_ci(d, n_resamples=500, rng=1)
    inverted = paired_signflip_test(d, np.zeros(60), rng=1).confidence_interval()
    ratio = ratio_of_means(d + 2.0, np.full(60, 2.0))
    for ci in (boot, inverted, ratio.interval, ratio.relative_interval):
        assert isinstance(ci, ConfidenceInterval)
        low, high = ci
        assert (low, high) == (ci.low, ci.high) == (ci[0], ci[1])
        assert low < high
    assert isinstance(boot, BootstrapCI) and boot.contains(boot.statistic)
    assert ratio.relative_interval.low == pytest.approx(ratio.low - 1.0)


def test_results_with_arrays_compare_by_identity_without_raising():
    p = [0.01, 0.04, 0.2]
    first, second = adjust_pvalues(p), adjust_pvalues(p)
    assert first == first
    assert (first == second) is False  # no elementwise array truth value error
    dep = seed_dependence(np.random.default_rng(1).normal(size=(20, 3)))
    assert dep == dep


def test_results_are_keyword_only():
    with pytest.raises(TypeError):
        ConfidenceInterval(0.0, 1.0, 0.95, "x")  # type: ignore[misc]
    fields = dataclasses.fields(BootstrapCI)
    assert all(f.kw_only for f in fields)
