import numpy as np
import pytest
from scipy import stats

from osustat import bootstrap_ci
from osustat.bootstrap import expanded_alpha


class TestBootstrapCI:
    # -- Input validation --
    def test_method(self):
        with pytest.raises(ValueError, match="`method` must be one of"):
            bootstrap_ci([1.0, 2.0], method="basic")

    def test_cluster_length(self):
        with pytest.raises(
            ValueError, match="`clusters` must give one id per unit; got 2 ids for 3 units"
        ):
            bootstrap_ci([1.0, 2.0, 3.0], clusters=["a", "b"])

    def test_single_cluster(self):
        with pytest.raises(ValueError, match="at least 2 distinct clusters"):
            bootstrap_ci([1.0, 2.0, 3.0], clusters=["a", "a", "a"])

    def test_missing_cluster(self):
        with pytest.raises(ValueError, match="missing ids at positions 1"):
            bootstrap_ci([1.0, 2.0, 3.0], clusters=["a", None, "b"])

    def test_level(self):
        with pytest.raises(ValueError, match=r"`level` must be in \(0, 1\)"):
            bootstrap_ci([1.0, 2.0], level=95)

    # -- Reference values --
    @pytest.mark.parametrize("method", ["percentile", "bca"])
    @pytest.mark.parametrize("expand", [False, True])
    def test_agrees_with_scipy(self, method, expand):
        # the textbook interval is scipy's; the expanded one is scipy's at the level whose
        # normal quantile is sqrt(n / (n - 1)) t_{n-1} (Hesterberg 2015)
        d = np.random.default_rng(0).exponential(1.0, 20)
        ours = bootstrap_ci(d, method=method, n_resamples=20_000, rng=1, expand=expand)
        level = 1 - expanded_alpha(0.05, 20) if expand else 0.95
        assert ours.method == ("expanded-" if expand else "") + method
        ref = stats.bootstrap(
            (d,),
            np.mean,
            method="BCa" if method == "bca" else "percentile",
            n_resamples=20_000,
            confidence_level=level,
            rng=np.random.default_rng(2),
        ).confidence_interval
        # Two independent Monte Carlo runs: agree to within resampling noise.
        assert ours.low == pytest.approx(ref.low, abs=0.04)
        assert ours.high == pytest.approx(ref.high, abs=0.04)
        assert ours.statistic == pytest.approx(d.mean())

    def test_expanded_level_solves_its_definition(self):
        # z at the expanded level equals sqrt(k / (k - 1)) t_{k-1} at the nominal one
        for k in (3, 6, 20, 100):
            a = expanded_alpha(0.05, k)
            z = stats.norm.isf(a / 2)
            assert z == pytest.approx(np.sqrt(k / (k - 1)) * stats.t.isf(0.025, k - 1))
        assert expanded_alpha(0.05, 6) < expanded_alpha(0.05, 20) < 0.05
        assert expanded_alpha(0.05, 10**6) == pytest.approx(0.05, abs=1e-5)

    def test_expansion_uses_the_same_resamples(self):
        # one bootstrap stream; only the quantiles' level differs (equal up to the rounding
        # of 1 - (1 - alpha))
        d = np.random.default_rng(4).normal(size=12)
        wide = bootstrap_ci(d, rng=7, n_resamples=2_000)
        same = bootstrap_ci(d, rng=7, n_resamples=2_000, expand=False,
                            level=1 - expanded_alpha(0.05, 12))  # fmt: skip
        assert (wide.low, wide.high) == pytest.approx((same.low, same.high), rel=1e-12)
        # clusters: k is the number of clusters, not of units
        clusters = np.repeat(np.arange(4), 3)
        wide = bootstrap_ci(d, clusters=clusters, rng=7, n_resamples=2_000)
        same = bootstrap_ci(d, clusters=clusters, rng=7, n_resamples=2_000, expand=False,
                            level=1 - expanded_alpha(0.05, 4))  # fmt: skip
        assert (wide.low, wide.high) == pytest.approx((same.low, same.high), rel=1e-12)

    @pytest.mark.parametrize("k", [2, 3, 4])
    @pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
    def test_few_units_give_the_resamples_range_without_warnings(self, k, level):
        # at k = 2 the expanded tail is ~1e-72 (0 at 99%): 1 - alpha/2 rounds to 1, where
        # ppf gave inf and BCa's map NaN (a RuntimeWarning and a silent fall back to the
        # percentile on both ends); now each end reads its own level, finite, nested
        import warnings

        d = np.random.default_rng(k).lognormal(size=k)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ci = bootstrap_ci(d, level=level, rng=1, n_resamples=2_000)
            narrow = bootstrap_ci(d, level=level, rng=1, n_resamples=2_000, expand=False)
        assert d.min() <= ci.low <= narrow.low <= narrow.high <= ci.high <= d.max()
        if k == 2:  # two units: every resample mean is one of three values
            assert (ci.low, ci.high) == (d.min(), d.max())

    def test_exact_distribution_is_the_ideal_bootstrap(self):
        # k = 5: every one of the 5^5 ordered resamples, equally likely, against the 126
        # multisets weighted by their multinomial probability (an independent enumeration)
        import itertools

        d = np.random.default_rng(3).lognormal(size=5)
        full = np.array([d[list(ix)].mean() for ix in itertools.product(range(5), repeat=5)])
        ci = bootstrap_ci(d, method="percentile", expand=False, rng=0)
        assert ci.exact and ci.n_resamples == 126  # C(9, 5)
        ref = np.quantile(full, [0.025, 0.975], method="inverted_cdf")
        assert (ci.low, ci.high) == pytest.approx(tuple(ref), rel=1e-12)
        # BCa: its bias correction from the same distribution (the share below the mean)
        from osustat.bootstrap import _all_resamples

        counts, weights = _all_resamples(5)
        below = weights[(counts @ d) / 5 < d.mean() - 1e-12].sum()
        assert below == pytest.approx(np.mean(full < d.mean() - 1e-12), abs=1e-12)

    def test_exact_quantile_reads_only_the_tail_it_needs_with_the_full_sorts_answer(self):
        # the partial sort (the m smallest or largest resamples, m grown until the crossing
        # lies inside them) against a full sort's inverted CDF, with ties (0/1, thirds)
        from osustat.bootstrap import _all_resamples, _quantile

        g = np.random.default_rng(1)
        for trial in range(60):
            k = int(g.integers(8, 11))  # 6,435-92,378 resamples: the partial path
            counts, w = _all_resamples(k)
            d = [g.integers(-1, 2, k).astype(float), g.standard_normal(k),
                 np.round(g.random(k) * 3) / 3][trial % 3]  # fmt: skip
            boot = (counts @ d) / k
            order = np.argsort(boot)
            cum = np.cumsum(w[order])
            for q in (1e-9, 0.0024, 0.025, 0.3, 0.5, 0.7, 0.975, 0.9976, 1 - 1e-9):
                i = min(int(np.searchsorted(cum, q * cum[-1] * (1 - 1e-12))), boot.size - 1)
                assert _quantile(boot, q, w) == boot[order[i]], (trial, q)

    @pytest.mark.parametrize("expand", [False, True])
    def test_exact_bca_is_bca_over_every_ordered_resample(self, expand):
        # an independent reference: all 6^6 ordered resamples, equally likely; BCa's z0 from
        # the share below the mean (ties half), its acceleration from the jackknife, the
        # quantiles by the inverted CDF — against the weighted multisets (a reviewer's
        # mutant that dropped the weights from z0 passed every other test)
        import itertools

        from scipy import stats as st

        for d in (np.array([0.3, 0.5, 0.6, 0.9, 1.4, 4.0]), np.array([0, 1, 1, 0, 1, 1.0]),
                  np.array([-1, 0, 1, 1, 0, 1.0])):  # fmt: skip
            k = d.size
            full = np.array([d[list(ix)].mean() for ix in itertools.product(range(k), repeat=k)])
            theta = d.mean()
            tie = np.isclose(full, theta, rtol=0, atol=1e-12)
            z0 = st.norm.ppf((np.sum((full < theta) & ~tie) + 0.5 * np.sum(tie)) / full.size)
            jack = (d.sum() - d) / (k - 1)
            u = jack.mean() - jack
            a = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
            alpha = expanded_alpha(0.05, k) if expand else 0.05
            ends = []
            for z in (st.norm.ppf(alpha / 2), st.norm.isf(alpha / 2)):
                level = st.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
                ends.append(np.quantile(full, level, method="inverted_cdf"))
            ci = bootstrap_ci(d, rng=0, expand=expand)
            assert ci.exact and (ci.low, ci.high) == pytest.approx(tuple(ends), abs=1e-12), d

    def test_exact_refuses_what_it_cannot_enumerate(self):
        d = np.random.default_rng(0).normal(size=13)
        with pytest.raises(ValueError, match=r"out of reach for k = 13 .* exact=False"):
            bootstrap_ci(d, exact=True)
        assert not bootstrap_ci(d, rng=0).exact  # the default draws beyond 10

    def test_exact_interval_does_not_move_with_the_seed(self):
        # where 2,000 draws resolve an expanded tail of .24% to about 5 resamples (k = 6)
        d = np.random.default_rng(5).normal(size=6)
        exact = {bootstrap_ci(d, rng=s) for s in range(4)}
        drawn = {(c.low, c.high) for c in (bootstrap_ci(d, rng=s, exact=False) for s in range(4))}
        assert len(exact) == 1 and len(drawn) > 1
        (ci,) = exact
        assert ci.exact and ci.n_resamples == 462
        assert not bootstrap_ci(np.r_[d, d], rng=0).exact  # 12 units: drawn

    def test_expansion_restores_coverage_at_small_n(self):
        # 400 normal samples of 8 (true mean 0): the textbook BCa covers about 88%
        # (benchmarks/results-ci_coverage.md: .86-.92 at n = 6-10), the expanded one
        # about 95% (the binomial SE of either share here is about .012)
        rows = np.random.default_rng(8).standard_normal((400, 8))
        covered = {
            e: np.mean([
                (ci := bootstrap_ci(r, n_resamples=1_000, rng=1, expand=e)).low <= 0 <= ci.high
                for r in rows
            ])
            for e in (False, True)
        }  # fmt: skip
        assert covered[False] < 0.91
        assert 0.925 <= covered[True] <= 0.975

    def test_constant_data(self):
        ci = bootstrap_ci([0.5, 0.5, 0.5], rng=0)
        assert ci.low == ci.high == 0.5

    # -- Properties --
    def test_cluster_bootstrap_is_wider_with_correlated_clusters(self):
        rng = np.random.default_rng(3)
        episodes = np.repeat(np.arange(30), 10)
        d = rng.normal(0, 1, 30)[episodes] + 0.3 * rng.normal(size=300)
        naive = bootstrap_ci(d, rng=4)
        clustered = bootstrap_ci(d, clusters=episodes, rng=4)
        assert clustered.n_clusters == 30 and naive.n_clusters == 300
        assert (clustered.high - clustered.low) > 2 * (naive.high - naive.low)

    def test_deterministic(self):
        d = np.random.default_rng(0).normal(size=50)
        assert bootstrap_ci(d, rng=5) == bootstrap_ci(d, rng=5)


def test_resample_count_is_capped():
    with pytest.raises(ValueError, match="`n_resamples` must be at most 33,554,432"):
        bootstrap_ci([0.1, 0.2, 0.3], n_resamples=10**9)
