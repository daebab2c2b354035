import numpy as np
import pytest
from scipy import stats

from osustat import bootstrap_ci


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
    def test_agrees_with_scipy(self, method):
        d = np.random.default_rng(0).exponential(1.0, 80)
        ours = bootstrap_ci(d, method=method, n_resamples=20_000, rng=1)
        ref = stats.bootstrap(
            (d,),
            np.mean,
            method="BCa" if method == "bca" else "percentile",
            n_resamples=20_000,
            rng=np.random.default_rng(2),
        ).confidence_interval
        # Two independent Monte Carlo runs: agree to within resampling noise.
        assert ours.low == pytest.approx(ref.low, abs=0.02)
        assert ours.high == pytest.approx(ref.high, abs=0.02)
        assert ours.statistic == pytest.approx(d.mean())

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
