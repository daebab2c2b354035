import math

import numpy as np
import pytest
from scipy import stats

from osustat.ratio import ratio_of_means


def _grid_inversion(t, b, level, grid):
    """Ratios R that scipy's one-sample t-test of t - R b does not reject (independent)."""
    keep = [r for r in grid if stats.ttest_1samp(t - r * b, 0.0).pvalue > 1 - level]
    return min(keep), max(keep)


class TestRatioOfMeans:
    # -- Input validation --
    def test_lengths(self):
        with pytest.raises(
            ValueError, match="`treatment` and `baseline` must have equal lengths; got 3 and 4"
        ):
            ratio_of_means([1, 2, 3], [1, 2, 3, 4])

    def test_too_few(self):
        with pytest.raises(ValueError, match="`treatment` must have at least 3"):
            ratio_of_means([1, 2], [1, 2])

    def test_level(self):
        with pytest.raises(ValueError, match="`level` must be in"):
            ratio_of_means([1, 2, 3], [1, 2, 3], level=1.5)

    # -- Reference values --
    def test_fieller_equals_t_test_inversion(self):
        rng = np.random.default_rng(2)
        b = rng.uniform(0.1, 0.4, 60)
        t = 1.3 * b + rng.normal(0, 0.05, 60)
        res = ratio_of_means(t, b, level=0.95)
        step = 1e-4
        lo, hi = _grid_inversion(t, b, 0.95, np.arange(0.8, 2.0, step))
        assert res.bounded
        assert res.low == pytest.approx(lo, abs=2 * step)
        assert res.high == pytest.approx(hi, abs=2 * step)
        assert res.statistic == pytest.approx(t.mean() / b.mean())
        assert res.relative == pytest.approx(res.statistic - 1)

    def test_unbounded_when_baseline_mean_is_not_away_from_zero(self):
        rng = np.random.default_rng(0)
        b = rng.normal(0.0, 1.0, 20)
        res = ratio_of_means(rng.normal(1.0, 1.0, 20), b)
        assert not res.bounded and (res.low, res.high) == (-math.inf, math.inf)

    # -- Properties --
    def test_coverage(self):
        rng = np.random.default_rng(7)
        hits = 0
        reps = 2000
        for _ in range(reps):
            b = rng.normal(0.3, 0.1, 30)
            t = 1.5 * b + rng.normal(0.0, 0.08, 30)
            res = ratio_of_means(t, b, level=0.9)
            hits += res.low <= 1.5 <= res.high
        assert abs(hits / reps - 0.9) < 3 * math.sqrt(0.9 * 0.1 / reps)

    def test_swap_inverts(self):
        rng = np.random.default_rng(4)
        b = rng.uniform(0.2, 0.5, 80)
        t = b * 1.2 + rng.normal(0, 0.03, 80)
        fwd, back = ratio_of_means(t, b), ratio_of_means(b, t)
        assert back.statistic == pytest.approx(1 / fwd.statistic)
        assert back.low == pytest.approx(1 / fwd.high, rel=1e-9)
        assert back.high == pytest.approx(1 / fwd.low, rel=1e-9)
