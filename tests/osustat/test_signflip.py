import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from osustat import paired_signflip_test, signflip_tests
from tests.reference.exact_signflip import exact_signflip_pvalue

# Rational data on a small grid (recall-like values k/6): exact ties are common.
rational = st.integers(min_value=-6, max_value=6).map(lambda k: Fraction(k, 6))


def scipy_exact_p(d, alternative="two-sided"):
    res = stats.permutation_test(
        (d, np.zeros_like(d)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alternative,
    )
    return res.pvalue


class TestPairedSignflipTest:
    # -- Input validation --
    def test_unequal_lengths(self):
        with pytest.raises(ValueError, match="`a` and `b` must have equal lengths"):
            paired_signflip_test([1, 2, 3], [1, 2])

    def test_nan(self):
        with pytest.raises(
            ValueError,
            match=r"`a` must be finite; NaN or infinite values at "
            r"positions 1",
        ):
            paired_signflip_test([1, np.nan, 3], [1, 2, 3])

    def test_inf(self):
        with pytest.raises(ValueError, match=r"`b` must be finite.*positions 2"):
            paired_signflip_test([1, 2, 3], [1, 2, np.inf])

    def test_too_few(self):
        with pytest.raises(ValueError, match="`a` must have at least 2 observations"):
            paired_signflip_test([1], [0])

    def test_alternative(self):
        with pytest.raises(ValueError, match="`alternative` must be one of"):
            paired_signflip_test([1, 2], [0, 0], alternative="bigger")

    def test_n_resamples(self):
        with pytest.raises(ValueError, match="`n_resamples` must be at least 1"):
            paired_signflip_test([1, 2], [0, 0], n_resamples=0)
        with pytest.raises(TypeError, match="`n_resamples` must be an integer"):
            paired_signflip_test([1, 2], [0, 0], n_resamples=1.5)

    def test_non_numeric(self):
        with pytest.raises(TypeError, match="`a` must be array-like of real numbers"):
            paired_signflip_test(["x", "y"], [0, 0])

    def test_two_dimensional(self):
        with pytest.raises(ValueError, match="`a` must be one-dimensional"):
            paired_signflip_test([[1, 2]], [[0, 0]])

    # -- Reference values --
    @pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
    @given(data=st.lists(rational, min_size=2, max_size=10))
    def test_exact_equals_rational_enumeration(self, data, alternative):
        d = np.array([float(x) for x in data])
        res = paired_signflip_test(d, np.zeros_like(d), alternative=alternative)
        nonzero = [x for x in data if x != 0]
        expected = exact_signflip_pvalue(nonzero, alternative) if nonzero else Fraction(1)
        assert res.exact
        assert abs(res.pvalue - float(expected)) <= 1e-12

    def test_exact_with_ties_against_rationals_of_a_minus_b(self):
        # a - b is computed in floats (0.3 - 0.1 != 0.2 in binary); ties must survive.
        a = np.array([0.3, 0.2, 0.7, 0.1, 0.5, 0.4])
        b = np.array([0.1, 0.0, 0.5, 0.3, 0.2, 0.2])
        exact = [
            Fraction(x).limit_denominator(10) - Fraction(y).limit_denominator(10)
            for x, y in zip(a, b, strict=True)
        ]
        for alternative in ("two-sided", "greater", "less"):
            res = paired_signflip_test(a, b, alternative=alternative)
            assert res.method == "exact-enumeration"
            assert res.pvalue == pytest.approx(
                float(exact_signflip_pvalue(exact, alternative)), abs=1e-12
            )

    @given(
        data=st.lists(
            st.floats(-1, 1, allow_nan=False).filter(lambda x: abs(x) > 1e-3),
            min_size=2,
            max_size=11,
        )
    )
    def test_agrees_with_scipy_exact(self, data):
        d = np.array(data)
        assume(len(set(np.round(np.abs(d), 9))) > 1)  # not the binomial path
        for alternative in ("two-sided", "greater", "less"):
            ours = paired_signflip_test(d, np.zeros_like(d), alternative=alternative)
            assert ours.method == "exact-enumeration"
            assert ours.pvalue == pytest.approx(scipy_exact_p(d, alternative), abs=1e-12)

    @pytest.mark.parametrize(
        ("tenths", "alternative", "scipy_p"),
        [([-2, 5, -3, -5, 6, 7, -8], "two-sided", 0.984375), ([2, 9, -7, -4], "greater", 0.5)],
    )
    def test_scipy_misses_the_observed_tie_near_zero(self, tenths, alternative, scipy_p):
        # The exact sum of these differences is 0 but in floats it is ~1e-17. scipy's tie
        # tolerance is relative to |statistic| (~1e-33 here) and misses the patterns whose
        # sum is also exactly 0 in rationals; ours is relative to sum(|d|).
        data = [Fraction(k, 10) for k in tenths]
        d = np.array([float(x) for x in data])
        assert d.sum() != 0  # the float sum really is off zero
        expected = float(exact_signflip_pvalue(data, alternative))
        ours = paired_signflip_test(d, np.zeros_like(d), alternative=alternative)
        assert ours.pvalue == pytest.approx(expected, abs=1e-12)
        assert scipy_exact_p(d, alternative) == pytest.approx(scipy_p, abs=1e-12)
        assert scipy_p < expected

    def test_binomial_reference(self):
        # 0/1 metric: 9 wins, 2 losses, 5 ties -> two-sided exact binomial test on 11 trials.
        a = np.array([1] * 9 + [0] * 2 + [1] * 3 + [0] * 2)
        b = np.array([0] * 9 + [1] * 2 + [1] * 3 + [0] * 2)
        res = paired_signflip_test(a, b)
        assert res.method == "exact-binomial" and res.exact and res.n_nonzero == 11
        assert res.pvalue == pytest.approx(stats.binomtest(9, 11).pvalue, abs=1e-12)
        greater = paired_signflip_test(a, b, alternative="greater")
        assert greater.pvalue == pytest.approx(
            stats.binomtest(9, 11, alternative="greater").pvalue, abs=1e-12
        )

    def test_binomial_large_n_uses_scipy_tail(self):
        rng = np.random.default_rng(3)
        a = rng.integers(0, 2, 5000)
        b = rng.integers(0, 2, 5000)
        res = paired_signflip_test(a, b)
        wins = int(np.sum(a > b))
        assert res.pvalue == pytest.approx(
            stats.binomtest(wins, int(np.sum(a != b))).pvalue, rel=1e-9
        )

    def test_binomial_tiny_tails_are_not_zero(self):
        # m = 3000 > the integer-sum limit: tails come from scipy's sf/cdf, never 1 - cdf
        m, k = 3000, 1800
        a = np.r_[np.ones(k), np.zeros(m - k)]
        b = np.r_[np.zeros(k), np.ones(m - k)]
        for alternative in ("greater", "two-sided"):
            res = paired_signflip_test(a, b, alternative=alternative)
            ref = stats.binomtest(k, m, alternative=alternative).pvalue
            assert 0 < res.pvalue == pytest.approx(ref, rel=1e-9)

    def test_near_tie_is_not_a_tie(self):
        # 3 - 1 + (1 + 1e-10) is not tied with 3 + 1 - (1 + 1e-10): rationals give 0.5
        data = [Fraction(3), Fraction(-1), Fraction(1) + Fraction(1, 10**10)]
        d = np.array([3.0, -1.0, 1 + 1e-10])
        res = paired_signflip_test(d, np.zeros(3))
        assert res.pvalue == pytest.approx(float(exact_signflip_pvalue(data)), abs=1e-12)
        assert res.pvalue == pytest.approx(scipy_exact_p(d), abs=1e-12)

    def test_monte_carlo_within_three_standard_errors_of_exact(self):
        rng = np.random.default_rng(11)
        d = np.round(rng.normal(0.25, 1.0, 14), 3)
        exact = paired_signflip_test(d, np.zeros(14), n_resamples=2**14)
        assert exact.exact
        for seed in range(5):
            mc = paired_signflip_test(d, np.zeros(14), n_resamples=4000, rng=seed)
            assert not mc.exact and mc.method == "monte-carlo"
            se = np.sqrt(exact.pvalue * (1 - exact.pvalue) / 4000)
            assert abs(mc.pvalue - exact.pvalue) <= 3 * se + 1 / 4001

    def test_ten_nonzero_differences_are_enumerated_whatever_the_resamples(self):
        # Red team (stop 57): --resamples 999 made a 10-conversation test Monte Carlo, p
        # .001-.008 across seeds for an exact 2/1024. Up to 2**10 patterns the null is
        # enumerated (no dearer than 1,000 sign vectors); from 11 on, n_resamples decides.
        d = np.arange(1.0, 11.0) + 0.1 * np.arange(10) ** 2  # ten distinct positive values
        want = float(exact_signflip_pvalue([Fraction(x) for x in d]))
        assert want == pytest.approx(2 / 1024)
        for b in (1, 99, 999):
            for seed in range(3):
                res = paired_signflip_test(d, np.zeros(10), n_resamples=b, rng=seed)
                assert res.exact and res.method == "exact-enumeration"
                assert res.n_resamples == 1024 and res.pvalue == pytest.approx(want, abs=1e-15)
                assert res.pvalue_se == 0.0
        eleven = np.append(d, 20.0)
        res = paired_signflip_test(eleven, np.zeros(11), n_resamples=999, rng=0)
        assert not res.exact and res.method == "monte-carlo" and res.n_resamples == 999
        assert paired_signflip_test(eleven, np.zeros(11), n_resamples=2048).exact
        # the power engines keep their own budget of sign vectors (no floor)
        (mc,) = signflip_tests([d], n_resamples=999, rng=0, _exact_floor=0)
        assert mc.method == "monte-carlo" and mc.n_resamples == 999

    def test_all_zero_differences(self):
        res = paired_signflip_test([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
        assert res.pvalue == 1.0 and res.n_nonzero == 0 and res.statistic == 0.0

    def test_deterministic_for_seed(self):
        d = np.random.default_rng(0).normal(size=40)
        r1 = paired_signflip_test(d, np.zeros(40), rng=7)
        r2 = paired_signflip_test(d, np.zeros(40), rng=7)
        assert r1.pvalue == r2.pvalue
        assert r1.confidence_interval() == r2.confidence_interval()

    # -- Properties --
    @given(
        st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=30),
        st.integers(0, 2**32 - 1),
    )
    def test_pvalue_in_unit_interval(self, data, seed):
        d = np.array(data)
        res = paired_signflip_test(d, np.zeros_like(d), n_resamples=500, rng=seed)
        assert 0 < res.pvalue <= 1
        if not res.exact:
            assert res.pvalue >= 1 / 501
        assert res.pvalue >= res.min_pvalue - 1e-15

    @given(
        st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=20),
        st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=20),
    )
    def test_swapping_negates_statistic(self, a, b):
        n = min(len(a), len(b))
        ab = paired_signflip_test(a[:n], b[:n], n_resamples=200, rng=1)
        ba = paired_signflip_test(b[:n], a[:n], n_resamples=200, rng=1)
        assert ab.statistic == pytest.approx(-ba.statistic, abs=1e-15)
        assert ab.pvalue == pytest.approx(ba.pvalue, abs=1e-12)
        less = paired_signflip_test(b[:n], a[:n], n_resamples=200, rng=1, alternative="less")
        greater = paired_signflip_test(a[:n], b[:n], n_resamples=200, rng=1, alternative="greater")
        assert less.pvalue == pytest.approx(greater.pvalue, abs=1e-12)

    @given(st.lists(rational, min_size=2, max_size=12))
    def test_exact_p_times_two_to_the_n_is_integral(self, data):
        d = np.array([float(x) for x in data])
        res = paired_signflip_test(d, np.zeros_like(d))
        assert res.exact
        scaled = res.pvalue * 2**res.n_nonzero
        assert scaled == pytest.approx(round(scaled), abs=1e-9)

    def test_confidence_interval_covers_and_shrinks(self):
        rng = np.random.default_rng(2)
        d = rng.normal(0.3, 1, 200)
        ci = paired_signflip_test(d, np.zeros(200), rng=1).confidence_interval(0.95)
        half = 1.96 * d.std(ddof=1) / np.sqrt(200)
        # The sign-flip interval and the t interval agree to a few percent at this n.
        assert ci.low == pytest.approx(d.mean() - half, abs=0.1 * half)
        assert ci.high == pytest.approx(d.mean() + half, abs=0.1 * half)
        narrow = paired_signflip_test(d, np.zeros(200), rng=1).confidence_interval(0.5)
        assert ci.low < narrow.low < narrow.high < ci.high

    def test_convolved_null_equals_the_full_grouped_null(self):
        # the largest group summed out by its binomial law (ConvolvedNull) against the full
        # product of the groups' binomials, on data sets small enough for both
        from tests.reference.convolved_null import largest_gap

        worst, shifts = largest_gap(60, 10)
        assert shifts > 1000 and worst <= 1e-12

    def test_an_exact_test_beside_many_zeros_is_inverted_exactly(self):
        # the reviewer of stop 59: ten nonzero differences beside 1,100 zeros at
        # n_resamples=999 made the test exact (the enumeration floor) while its interval
        # (support 2**10 * 1101 > 2**20) stayed Monte Carlo: 7 of 400 disagreed about 0
        rng = np.random.default_rng(1)
        agree = 0
        for s in range(40):
            d = np.concatenate([rng.normal(0.55, 1, size=10), np.zeros(1100)])
            res = signflip_tests([d], n_resamples=999, rng=s)[0]
            ci = res.confidence_interval(0.95)
            assert res.exact and ci.method == "sign-flip inversion (exact)"
            agree += (res.pvalue <= 0.05) == (not ci.low <= 0 <= ci.high)
        assert agree == 40
        mc = signflip_tests([np.append(d, rng.normal(size=12))], n_resamples=999, rng=0)[0]
        assert mc.confidence_interval().method == "sign-flip inversion (monte-carlo)"

    def test_a_p_equal_to_alpha_rejects_in_the_interval_too(self):
        # a reviewer of stop 59: an exact p is dyadic and equals alpha at level .875; the
        # null's weights summed in floats read 0.12500000000000006 > .125 and the interval
        # kept 0 beside a test that rejects
        d = np.concatenate([[0.42, 1.95, 0.95, -0.11, 0.22], np.zeros(2211)])
        res = signflip_tests([d], n_resamples=999, rng=2)[0]
        assert res.pvalue == 0.125 and res.exact
        ci = res.confidence_interval(0.875)
        assert not ci.low <= 0 <= ci.high

    def test_a_binomial_test_with_many_ties_keeps_the_monte_carlo_interval(self):
        # the summed-out null is for a few nonzero differences (enumerated tests): 0/1 data
        # with thousands of wins would make thousands of blocks (a reviewer: 367 s an interval)
        d = np.concatenate([np.ones(3000), -np.ones(50), np.zeros(400)])
        res = signflip_tests([d], n_resamples=999, rng=0)[0]
        assert res.method == "exact-binomial"
        assert res.confidence_interval().method == "sign-flip inversion (monte-carlo)"

    def test_confidence_interval_small_n_is_unbounded(self):
        ci = paired_signflip_test([0.1, 0.4, 0.2], [0, 0, 0]).confidence_interval(0.95)
        assert ci.low == -np.inf and ci.high == np.inf

    @pytest.mark.slow
    def test_confidence_interval_coverage(self):
        rng = np.random.default_rng(5)
        covered = 0
        reps = 300
        for _ in range(reps):
            d = rng.exponential(1.0, 30) - 1.0 + 0.2  # skewed, true mean 0.2
            ci = paired_signflip_test(
                d, np.zeros(30), n_resamples=999, rng=rng
            ).confidence_interval(0.9)
            covered += ci.low <= 0.2 <= ci.high
        # binomial 99% interval around 0.9 for 300 reps: [0.855, 0.945]; skewness costs a bit
        assert 0.82 <= covered / reps <= 0.95

    @pytest.mark.slow
    def test_pvalues_uniform_under_the_null(self):
        rng = np.random.default_rng(99)
        ps = [
            paired_signflip_test(
                rng.normal(size=50), np.zeros(50), n_resamples=1999, rng=rng
            ).pvalue
            for _ in range(500)
        ]
        assert stats.kstest(ps, "uniform").pvalue > 0.01

    @pytest.mark.slow
    @pytest.mark.parametrize("kind", ["continuous", "binary"])
    def test_type_one_error(self, kind):
        rng = np.random.default_rng(2024)
        reps, alpha = 2000, 0.05
        rejections = 0
        for _ in range(reps):
            if kind == "continuous":
                d = rng.standard_t(3, 60)
            else:
                d = rng.integers(0, 2, 60).astype(float) - rng.integers(0, 2, 60)
            rejections += (
                paired_signflip_test(d, np.zeros(60), n_resamples=999, rng=rng).pvalue <= alpha
            )
        rate = rejections / reps
        lo, hi = stats.binom.ppf([0.005, 0.995], reps, alpha) / reps
        # binary data are discrete: the exact test's size is at most alpha
        lo = 0.0 if kind == "binary" else lo
        assert lo <= rate <= hi


class TestSignflipTests:
    # -- Input validation --
    def test_bad_container(self):
        with pytest.raises(TypeError, match="`differences` must be a 2-D array"):
            signflip_tests(3.0)

    def test_flat_list_rejected(self):
        with pytest.raises(ValueError, match="for a single comparison use"):
            signflip_tests([0.1, 0.2, 0.3])

    def test_nan_in_column_named(self):
        with pytest.raises(ValueError, match=r"`differences\[1\]` must be finite.*positions 2"):
            signflip_tests([np.array([0.1, 0.2, 0.3]), np.array([0.1, 0.2, np.nan])])

    def test_rectangular_nested_list_is_ambiguous(self):
        # Issue 11: an (n, k) nested list was read as n tests of length k while the same
        # ndarray gives k tests. Now it is refused with both readings spelled out.
        x = np.arange(24, dtype=float).reshape(8, 3) - 10
        with pytest.raises(ValueError, match=r"rectangular nested list of shape \(8, 3\)"):
            signflip_tests(x.tolist())
        assert len(signflip_tests(x, rng=0)) == 3
        assert len(signflip_tests(list(x.T), rng=0)) == 3  # list of 1-D arrays: per element
        ragged = [[0.1, -0.2, 0.3], [0.4, 0.5]]  # cannot be a matrix: one test per element
        assert [r.n for r in signflip_tests(ragged, rng=0)] == [3, 2]

    def test_dataframe_columns_are_comparisons(self):
        import pandas as pd

        x = np.random.default_rng(2).normal(size=(9, 3))
        frame = pd.DataFrame(x, columns=["a", "b", "c"])
        got = [r.pvalue for r in signflip_tests(frame, rng=4)]
        assert got == [r.pvalue for r in signflip_tests(x, rng=4)]
        frame.iloc[4, 1] = np.nan
        with pytest.raises(ValueError, match=r"`differences\['b'\]` must be finite.*positions 4"):
            signflip_tests(frame)

    def test_huge_values_are_scale_invariant(self):
        # Issue 11: huge finite values overflowed the sums (p = 0.0 or 1.0 instead of the
        # rescaled data's p). Power-of-two rescaling is exact, so p is identical.
        d = np.random.default_rng(5).normal(0.4, 1.0, size=(30, 2))
        small = signflip_tests(d, rng=1)
        huge = signflip_tests(d * 2.0**1020, rng=1)
        assert [r.pvalue for r in huge] == [r.pvalue for r in small]
        assert huge[0].statistic == small[0].statistic * 2.0**1020
        tiny = paired_signflip_test(d[:12, 0] * 1e-310, np.zeros(12))
        assert tiny.pvalue == paired_signflip_test(d[:12, 0], np.zeros(12)).pvalue

    def test_overflowing_difference_named(self):
        with pytest.raises(ValueError, match=r"`a - b` overflows float64 at positions 1"):
            paired_signflip_test([1.0, 1e308, 2.0], [0.0, -1e308, 1.0])

    def test_enumeration_too_large_refused(self):
        # Issue 11: n_resamples=2**40 with 34 nonzero differences raised MemoryError (128 GiB)
        d = np.random.default_rng(0).normal(size=34)
        # now the one resample cap answers first (red team item 3): 2**25, where an exact
        # enumeration takes 256 MiB
        with pytest.raises(ValueError, match=r"`n_resamples` must be at most 33,554,432"):
            signflip_tests([d], n_resamples=2**40)
        with pytest.raises(ValueError, match=r"`n_resamples` must be at most 33,554,432"):
            signflip_tests([np.arange(70.0) - 30], n_resamples=2**40)
        with pytest.raises(ValueError, match=r"would need .* GiB of memory; use at most 2"):
            signflip_tests([np.arange(70.0) - 30 + j for j in range(9)], n_resamples=2**25)

    def test_bad_rng_named(self):
        with pytest.raises(TypeError, match="`rng` must be None, a non-negative integer seed"):
            paired_signflip_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], rng=0.5)

    def test_empty(self):
        with pytest.raises(ValueError, match="at least one comparison"):
            signflip_tests([])

    # -- Properties --
    def test_matches_single_tests(self):
        rng = np.random.default_rng(1)
        d = rng.normal(0.1, 1, size=(80, 5))
        many = signflip_tests(d, rng=9)
        for j in range(5):
            one = paired_signflip_test(d[:, j], np.zeros(80), rng=9)
            # the shared sign matrix has the same width (80) as the single test's
            assert many[j].pvalue == one.pvalue
            assert many[j].statistic == pytest.approx(one.statistic)

    @pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
    def test_every_null_in_one_call_matches_the_single_tests(self, alternative):
        # the columns' nulls are chosen array-wise: equal magnitudes (binomial), few nonzero
        # differences (enumeration), the rest Monte Carlo, and all-zero columns, side by side
        rng = np.random.default_rng(4)
        d = rng.normal(0.2, 1, size=(12, 8))
        d[:, 1] = rng.choice([-0.5, 0.5], size=12)
        d[:, 2] = 0.0
        d[2:, 3] = 0.0  # 2 nonzero: 4 sign patterns
        d[:, 4] *= 1e-300
        many = signflip_tests(d, alternative=alternative, n_resamples=999, rng=5)
        methods = [r.method for r in many]
        assert methods[1] == "exact-binomial" and methods[3] == "exact-enumeration"
        assert methods[0] == "monte-carlo" and methods[2] == "exact-binomial"
        for j, r in enumerate(many):
            one = paired_signflip_test(
                d[:, j], np.zeros(12), alternative=alternative, n_resamples=999, rng=5
            )
            assert (r.pvalue, r.min_pvalue, r.n_nonzero, r.n_resamples, r.exact) == (
                one.pvalue,
                one.min_pvalue,
                one.n_nonzero,
                one.n_resamples,
                one.exact,
            )
            assert r.statistic == one.statistic and type(r.pvalue) is float

    def test_ragged_columns(self):
        rng = np.random.default_rng(1)
        cols = [rng.normal(0.5, 1, 30), rng.normal(0, 1, 100), np.array([1.0, 0.0, 1.0])]
        res = signflip_tests(cols, rng=3)
        assert [r.n for r in res] == [30, 100, 3]
        assert res[2].method == "exact-binomial"
        assert res[0].pvalue < 0.05
        # each column's Monte Carlo p is within 3 SE of a fresh independent run
        ref = paired_signflip_test(cols[1], np.zeros(100), n_resamples=10_000, rng=99)
        # two independent estimates: 3 SE of their difference
        se = np.sqrt(2 * ref.pvalue * (1 - ref.pvalue) / 10_000)
        assert abs(res[1].pvalue - ref.pvalue) <= 3 * se


class TestPandasPairing:
    """Issue 23: Series were paired by position; shuffling b's index moved p .125 -> .219."""

    def test_series_are_paired_by_index(self):
        import pandas as pd

        a = pd.Series([0.9, 0.8, 0.7, 0.6, 0.95], index=list("abcde"))
        b = pd.Series([0.1, 0.2, 0.3, 0.9, 0.5], index=list("abcde"))
        ref = paired_signflip_test(a.to_numpy(), b.to_numpy())
        shuffled = b.iloc[[3, 0, 4, 1, 2]]
        got = paired_signflip_test(a, shuffled)
        assert got.pvalue == ref.pvalue and got.statistic == ref.statistic

    def test_different_labels_are_refused(self):
        import pandas as pd

        a = pd.Series([1.0, 2.0, 3.0], index=["q1", "q2", "q3"])
        b = pd.Series([1.0, 2.0, 3.0], index=["q1", "q2", "q4"])
        with pytest.raises(ValueError, match=r"only in `a`: \['q3'\]; only in `b`: \['q4'\]"):
            paired_signflip_test(a, b)
        with pytest.raises(ValueError, match="`b` has repeated index labels"):
            paired_signflip_test(a, pd.Series([1.0, 2.0, 3.0], index=["q1", "q1", "q3"]))

    def test_ratio_pairs_by_index_too(self):
        import pandas as pd

        from osustat import ratio_of_means

        t = pd.Series([0.50, 0.62, 0.71, 0.44, 0.58, 0.66], index=[1, 2, 3, 4, 5, 6])
        b = pd.Series([0.40, 0.50, 0.61, 0.35, 0.47, 0.52], index=[1, 2, 3, 4, 5, 6])
        ref = ratio_of_means(t, b)
        got = ratio_of_means(t, b.iloc[::-1])  # same labels, other order: the same pairs
        assert (got.low, got.high) == (ref.low, ref.high)
        by_position = ratio_of_means(t.to_numpy(), b.iloc[::-1].to_numpy())
        assert (by_position.low, by_position.high) != (ref.low, ref.high)


def test_tie_tolerance_merges_huge_magnitude_ratios_conservatively():
    # issue 23 item 8, documented: at a magnitude ratio 1e15 the small differences are
    # merged into ties; p is then never below the exact rational p (here 1 vs 1/8)
    d = np.array([1e15, 1.0, 1.0, 1.0])
    got = paired_signflip_test(d, np.zeros(4)).pvalue
    exact = exact_signflip_pvalue([Fraction(x) for x in d])
    assert exact == Fraction(1, 8) and got == 1.0 >= exact


def test_remembered_binomial_tails_take_numpy_and_python_integers_alike():
    # a reviewer (stop 58): a numpy integer hashes as the same cache key as a Python one,
    # but its 2**m overflows in int64: asked first, it poisoned the cached tail
    from osustat._signflip_null import binomial_pvalue

    exact = sum(math.comb(80, i) for i in range(40, 81)) / 2**80
    first = binomial_pvalue(np.int64(40), np.int64(80), "greater")
    assert first == binomial_pvalue(40, 80, "greater") == pytest.approx(exact, rel=1e-12)
