import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from osustat import fisher_combine, paired_signflip_test, seed_dependence, stouffer_combine

pvalue = st.floats(min_value=1e-12, max_value=1.0)


class TestFisherCombine:
    # -- Input validation --
    def test_zero_pvalue(self):
        with pytest.raises(
            ValueError,
            match=r"`pvalues` must lie in \(0, 1\]; bad values at "
            r"positions 1",
        ):
            fisher_combine([0.5, 0.0])

    def test_empty(self):
        with pytest.raises(ValueError, match="non-empty 1-D"):
            fisher_combine([])

    # -- Reference values --
    def test_r_metap_sumlog(self):
        # R: metap::sumlog(c(0.01, 0.2, 0.3)) -> chisq = 14.83716180549625, p = 0.02156175132483465
        res = fisher_combine([0.01, 0.2, 0.3])
        assert res.statistic == pytest.approx(14.83716180549625, rel=1e-14)
        assert res.pvalue == pytest.approx(0.02156175132483465, rel=1e-12)
        assert res.method == "fisher" and res.n_pvalues == 3

    @given(st.lists(pvalue, min_size=1, max_size=20))
    def test_matches_scipy(self, ps):
        ours = fisher_combine(ps)
        ref = stats.combine_pvalues(ps, method="fisher")
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)

    # -- Properties --
    @given(st.lists(pvalue, min_size=2, max_size=10), st.integers(0, 9), st.floats(0.0, 1.0))
    def test_monotone(self, ps, i, shrink):
        i = i % len(ps)
        smaller = list(ps)
        smaller[i] = ps[i] * shrink if ps[i] * shrink > 0 else ps[i]
        assert fisher_combine(smaller).pvalue <= fisher_combine(ps).pvalue + 1e-15


class TestStoufferCombine:
    def test_reference(self):
        # scipy.stats.combine_pvalues([0.01, 0.2, 0.3], method="stouffer")
        ref = stats.combine_pvalues([0.01, 0.2, 0.3], method="stouffer")
        res = stouffer_combine([0.01, 0.2, 0.3])
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12)

    def test_bad(self):
        with pytest.raises(ValueError, match="`pvalues` must lie in"):
            stouffer_combine([1.5])


def simulate_fisher(rho, reps, rng, n=40, k=5):
    """Fisher's rejection rate under the null when seeds correlate at `rho`."""
    rejections = 0
    flagged = 0
    for _ in range(reps):
        common = rng.standard_normal((n, 1))
        x = np.sqrt(rho) * common + np.sqrt(1 - rho) * rng.standard_normal((n, k))
        ps = [
            paired_signflip_test(x[:, j], np.zeros(n), n_resamples=99, rng=rng).pvalue
            for j in range(k)
        ]
        rejections += fisher_combine(ps).pvalue <= 0.05
        flagged += seed_dependence(x).too_dependent
    return rejections / reps, flagged / reps


class TestSeedDependence:
    def test_validation(self):
        with pytest.raises(ValueError, match="must be 2-D with shape"):
            seed_dependence(np.zeros((10, 1)))
        with pytest.raises(ValueError, match="NaN or infinite values in rows 2"):
            seed_dependence(np.array([[0, 1], [1, 0], [np.nan, 1], [1, 1.0]]))

    def test_identical_seeds(self):
        x = np.tile(np.arange(10.0)[:, None], (1, 3))
        dep = seed_dependence(x)
        assert dep.mean_correlation == pytest.approx(1.0)
        assert dep.duplicate_fraction == 1.0 and dep.too_dependent
        assert dep.effective_seeds == pytest.approx(1.0)

    def test_independent_seeds(self):
        x = np.random.default_rng(0).standard_normal((500, 4))
        dep = seed_dependence(x)
        assert abs(dep.mean_correlation) < 0.1 and not dep.too_dependent
        assert dep.effective_seeds == pytest.approx(4.0, rel=0.3)

    @pytest.mark.slow
    def test_near_duplicate_seeds_inflate_fisher_type_one_error(self):
        rng = np.random.default_rng(7)
        reps = 600
        lo, hi = stats.binom.ppf([0.005, 0.995], reps, 0.05) / reps
        independent, flagged_indep = simulate_fisher(0.0, reps, rng)
        duplicates, flagged_dup = simulate_fisher(0.95, reps, rng)
        assert lo <= independent <= hi
        assert duplicates > hi  # anti-conservative: the flag exists for this
        assert flagged_indep < 0.01 and flagged_dup > 0.99


def test_stouffer_one_p_of_one_vetoes_like_scipy():
    # issue 23 item 8: documented behaviour, the same as scipy's
    from scipy.stats import combine_pvalues

    from osustat import fisher_combine, stouffer_combine

    p = [1.0, 1e-6, 1e-6]
    assert stouffer_combine(p).pvalue == 1.0 == combine_pvalues(p, method="stouffer").pvalue
    assert fisher_combine(p).pvalue < 1e-8
