import itertools

import numpy as np
import pytest
from scipy import stats

from osustat.equivalence import tost_signflip


def _enumerated_one_sided(d, alternative):
    """Brute-force sign-flip p over all 2^n sign vectors (independent of osustat)."""
    d = np.asarray(d, float)
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    null = signs @ d
    obs = d.sum()
    tol = 1e-9 * max(1.0, abs(obs))
    if alternative == "greater":
        return float(np.mean(null >= obs - tol))
    return float(np.mean(null <= obs + tol))


class TestTostSignflip:
    # -- Input validation --
    def test_margin_positive(self):
        with pytest.raises(ValueError, match="`margin` must be a positive finite number"):
            tost_signflip([0.1, 0.2], 0.0)

    def test_margin_pair_order(self):
        with pytest.raises(ValueError, match="`margin` must satisfy low < high"):
            tost_signflip([0.1, 0.2], (0.1, -0.1))

    def test_margin_type(self):
        with pytest.raises(TypeError, match="`margin` must be a positive number or a"):
            tost_signflip([0.1, 0.2], "wide")
        with pytest.raises(TypeError, match="`margin` must be a positive number or a"):
            tost_signflip([0.1, 0.2], True)

    def test_too_few(self):
        with pytest.raises(ValueError, match="`differences` must have at least 2"):
            tost_signflip([0.1], 0.1)

    # -- Reference values --
    def test_exact_enumeration(self):
        rng = np.random.default_rng(3)
        d = rng.normal(0.01, 0.03, 11)
        res = tost_signflip(d, 0.04, rng=0)
        assert res.exact
        assert res.pvalue_low == pytest.approx(_enumerated_one_sided(d + 0.04, "greater"))
        assert res.pvalue_high == pytest.approx(_enumerated_one_sided(d - 0.04, "less"))
        assert res.pvalue == max(res.pvalue_low, res.pvalue_high)
        assert res.statistic == pytest.approx(d.mean())

    def test_asymmetric_margin(self):
        d = np.array([0.02, 0.05, -0.01, 0.03, 0.04, 0.0, 0.01, 0.02])
        res = tost_signflip(d, (-0.01, 0.06), rng=0)
        assert (res.low, res.high) == (-0.01, 0.06) and res.margin_text == "[-0.01, 0.06]"
        assert res.pvalue_low == pytest.approx(_enumerated_one_sided(d + 0.01, "greater"))
        assert res.pvalue_high == pytest.approx(_enumerated_one_sided(d - 0.06, "less"))

    def test_close_to_the_t_based_tost_for_large_n(self):
        # statsmodels' ttost_paired is the t-test version of the same procedure.
        from statsmodels.stats.weightstats import ttost_paired

        rng = np.random.default_rng(5)
        b = rng.uniform(0.2, 0.8, 400)
        t = b + rng.normal(0.004, 0.08, 400)
        ours = tost_signflip(t - b, 0.01, n_resamples=20_000, rng=1)
        ref = ttost_paired(t, b, -0.01, 0.01)[0]
        assert ours.pvalue == pytest.approx(ref, abs=0.01)

    # -- Properties --
    def test_equivalent_and_not(self):
        rng = np.random.default_rng(0)
        d = rng.normal(0.0, 0.05, 300)
        assert tost_signflip(d, 0.02, rng=1).pvalue < 0.001
        assert tost_signflip(d + 0.05, 0.02, rng=1).pvalue > 0.5

    def test_same_seed_same_result(self):
        d = np.random.default_rng(1).normal(0, 0.1, 60)
        assert tost_signflip(d, 0.03, rng=4) == tost_signflip(d, 0.03, rng=4)

    def test_type_one_error_at_the_margin(self):
        # True mean exactly on the margin (symmetric errors): rejection rate <= alpha.
        rng = np.random.default_rng(11)
        rejections = sum(
            tost_signflip(rng.normal(0.05, 0.1, 12), 0.05, rng=rng).pvalue <= 0.05
            for _ in range(400)
        )
        assert rejections / 400 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)
        assert stats.binomtest(rejections, 400, 0.05, alternative="greater").pvalue > 0.01


class TestIssue23Limits:
    def test_no_overflow_near_the_float_limit(self):
        # d - low overflowed at 1e307 (a RuntimeWarning, then an error naming an internal
        # `differences[0]`); the test is scale-free, so scaled data give the same p-values
        import warnings

        d = np.array([1.0, -1.0, 1.0, 0.5, 0.25, -0.5])
        ref = tost_signflip(d, 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            big = tost_signflip(d * 1.6e308, 1.6e308)
        assert (big.pvalue_low, big.pvalue_high) == (ref.pvalue_low, ref.pvalue_high)

    def test_bad_rng_and_resamples_are_named(self):
        with pytest.raises(TypeError, match="`rng` must be None"):
            tost_signflip([0.1, 0.2, 0.0], 0.5, rng=0.5)
        with pytest.raises(ValueError, match="`n_resamples` must be at most"):
            tost_signflip([0.1, 0.2, 0.0], 0.5, n_resamples=10**9)


class TestTostBootstrapT:
    # -- Input validation --
    def test_needs_three_differences(self):
        from osustat.equivalence import tost_bootstrap_t

        with pytest.raises(ValueError, match="at least 3 observations"):
            tost_bootstrap_t([0.1, 0.2], 0.5)

    # -- Reference values --
    def test_close_to_the_t_tost_for_normal_data(self):
        # for normal differences the bootstrap-t and the t-based TOST agree (statsmodels)
        from statsmodels.stats.weightstats import ttost_paired

        from osustat.equivalence import tost_bootstrap_t

        d = np.random.default_rng(2).normal(0.01, 0.1, 400)
        ref = ttost_paired(d, np.zeros_like(d), -0.02, 0.02)[0]
        got = tost_bootstrap_t(d, 0.02, n_resamples=19_999, rng=3)
        assert got.method == "bootstrap-t" and not got.exact
        assert got.pvalue == pytest.approx(ref, abs=0.01)

    # -- Properties --
    def test_scale_free_and_bounded_below(self):
        from osustat.equivalence import tost_bootstrap_t

        d = np.random.default_rng(5).exponential(0.1, 40) - 0.1
        a = tost_bootstrap_t(d, 0.05, n_resamples=999, rng=1)
        b = tost_bootstrap_t(d * 2.0**40, 0.05 * 2.0**40, n_resamples=999, rng=1)
        assert (a.pvalue_low, a.pvalue_high) == (b.pvalue_low, b.pvalue_high)
        assert a.pvalue >= 1 / 1000

    def test_skewness_is_reported(self):
        d = np.random.default_rng(6).exponential(1.0, 300) - 1.0
        res = tost_signflip(d, 0.5, rng=0)
        assert res.skewness == pytest.approx(stats.skew(d, bias=False))
        assert res.skewness > 1
        assert tost_signflip(np.zeros(5), 0.5).skewness == 0.0


class TestSkewExcess:
    """Issue 35 item 6: the predicted excess of the level from the sample skewness."""

    def test_zero_for_symmetric_data_and_grows_with_skew(self):
        sym = tost_signflip([-0.1, 0.1, -0.2, 0.2, 0.0], 0.5)
        assert sym.skewness == pytest.approx(0.0, abs=1e-12)
        assert sym.skew_excess(0.05) == pytest.approx(0.0, abs=1e-12)
        d = np.r_[np.zeros(7), 0.1, 0.2, 0.4]
        a = tost_signflip(d, 0.5, rng=0)
        b = tost_signflip(-d, 0.5, rng=0)
        # either sign of skew makes one of the two one-sided tests liberal
        assert a.skew_excess(0.05) == pytest.approx(b.skew_excess(0.05))
        assert a.skew_excess(0.05) > 0.01

    @pytest.mark.parametrize("value", [0.0, 0.01])
    def test_a_sample_without_spread_reads_the_worst_case(self, value):
        # every difference alike (all exact zeros: probability .6^10 = .006 under 60% ties at
        # n = 10) shows "equivalent" with p = 2^-10 and has no skewness to read: it was never
        # flagged. A null with its mean on the margin can make such a sample as likely as it
        # likes ((1 - q)^n for a share q of gains margin / q), so the excess read is 1 - alpha
        from osustat.equivalence import tost_bootstrap_t

        d = np.full(10, value)
        for res in (tost_signflip(d, 0.05), tost_bootstrap_t(d, 0.05, rng=0)):
            assert res.constant and res.skewness == 0.0
            assert res.skew_excess(0.05) == pytest.approx(0.95) and res.skew_flagged(0.05)
        sf = tost_signflip(d, 0.05)
        assert sf.pvalue == pytest.approx(2.0**-10)  # the verdict the flag guards
        assert not tost_signflip(np.r_[d[:-1], value + 0.001], 0.05).constant

    def test_edgeworth_term_predicts_the_t_tests_excess(self):
        # a check of the coefficient against simulation, where the one-term expansion is
        # accurate (large n): exponential values (skewness 2), n = 200, the one-sided t-test
        # on the liberal side (a right skew makes the lower tail of T heavy)
        from osustat._skew import skew_excess

        n, reps = 200, 20_000
        x = np.random.default_rng(11).exponential(1.0, (reps, n)) - 1.0
        t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / np.sqrt(n))
        size = np.mean(stats.t.cdf(t, n - 1) <= 0.05)
        predicted = 0.05 + skew_excess(2.0, n, 0.05, "less")
        assert size == pytest.approx(predicted, abs=0.006)  # MC sd about .0017
        assert size - 0.05 > 0.008  # the excess is real, not noise
        assert skew_excess(2.0, n, 0.05, "greater") == 0.0  # the other tail is conservative

    def test_two_sided_uses_the_liberal_tail_at_half_alpha(self):
        from osustat._skew import skew_excess

        one = skew_excess(1.0, 16, 0.025, "less")
        assert skew_excess(1.0, 16, 0.05, "two-sided") == pytest.approx(one)
        assert skew_excess(-1.0, 16, 0.05, "two-sided") == pytest.approx(one)

    def test_skew_corrected_pvalue(self):
        from osustat._skew import skew_corrected_pvalue, skew_excess

        sym = tost_signflip([-0.1, 0.1, -0.2, 0.2, 0.0, 0.05, -0.05], 0.5, rng=0)
        assert sym.skew_corrected_pvalue == pytest.approx(sym.pvalue)
        d = [0.092, 0.028, 0.0, 0.013, 0.0, 0.0, 0.0, 0.067, 0.019, 0.068]
        res = tost_signflip(d, 0.05, rng=0)
        assert res.pvalue <= 0.05 < res.skew_corrected_pvalue  # the verdict does not survive
        # the term shrinks in the tail: a small p keeps most of its evidence
        assert skew_corrected_pvalue(1e-4, 2.0, 30, "less") - 1e-4 < 0.1 * skew_excess(
            2.0, 30, 0.05, "less"
        )
        assert skew_corrected_pvalue(1.0, 2.0, 30, "less") == 1.0
        assert skew_corrected_pvalue(0.5, 2.0, 30, "greater") == 0.5
