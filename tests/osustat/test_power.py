import numpy as np
import pytest
from scipy import stats

from osustat import minimum_detectable_effect, paired_signflip_test, power


class TestPower:
    # -- Input validation --
    def test_bad_n(self):
        with pytest.raises(ValueError, match="`n` must be an integer >= 2"):
            minimum_detectable_effect(1.0, 1)

    def test_bad_sd(self):
        with pytest.raises(ValueError, match="`differences_sd` must be finite and >= 0"):
            power(0.1, -1.0, 10)

    def test_bad_power(self):
        with pytest.raises(ValueError, match=r"`power` must be in \(0, 1\)"):
            minimum_detectable_effect(1.0, 10, power=1.0)

    # -- Reference values --
    def test_large_n_matches_normal_approximation(self):
        # z-test MDE: (z_{1-alpha/2} + z_{power}) * sd / sqrt(n)
        sd, n = 0.6, 2000
        z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
        assert minimum_detectable_effect(sd, n) == pytest.approx(z * sd / np.sqrt(n), rel=2e-3)

    def test_inverse(self):
        mde = minimum_detectable_effect(0.5, 56, alpha=0.05, power=0.8)
        assert power(mde, 0.5, 56) == pytest.approx(0.8, abs=1e-6)

    def test_zero_sd(self):
        assert minimum_detectable_effect(0.0, 10) == 0.0
        assert power(0.2, 0.0, 10, alternative="less") == 0.0
        assert power(-0.2, 0.0, 10, alternative="less") == 1.0

    def test_unattainable_significance(self):
        # n = 5 two-sided: the smallest sign-flip p is 2/32 > .05, so nothing is detectable
        assert power(3.0, 1.0, 5) == 0.0
        assert minimum_detectable_effect(1.0, 5) == np.inf
        assert power(3.0, 1.0, 5, alternative="greater") > 0.9  # one-sided: 1/32 <= .05

    # -- Properties --
    def test_monotone_in_n_and_effect(self):
        assert minimum_detectable_effect(1, 50) > minimum_detectable_effect(1, 100)
        assert power(0.2, 1, 100) < power(0.3, 1, 100)

    @pytest.mark.slow
    def test_signflip_power_at_mde_is_about_target(self):
        rng = np.random.default_rng(0)
        n, sd = 40, 1.0
        mde = minimum_detectable_effect(sd, n)
        reps = 500
        hits = sum(
            paired_signflip_test(
                rng.normal(mde, sd, n), np.zeros(n), n_resamples=499, rng=rng
            ).pvalue
            <= 0.05
            for _ in range(reps)
        )
        lo, hi = stats.binom.ppf([0.005, 0.995], reps, 0.8) / reps
        assert lo - 0.03 <= hits / reps <= hi
