"""cluster_bootstrap_ci: the bootstrap engine for statistics of cluster totals."""

import numpy as np
import pytest

from osustat.bootstrap import bootstrap_ci, cluster_bootstrap_ci


def _ratio(t):
    return t[:, 0] / t[:, 1]


class TestClusterBootstrapCI:
    # -- Input validation --
    @pytest.mark.parametrize(
        ("totals", "match"),
        [
            (np.ones(4), "must be a 2-D array"),
            (np.ones((1, 2)), "at least 2 clusters"),
            (np.array([[1.0, np.nan], [1.0, 1.0]]), "must be finite"),
        ],
    )
    def test_bad_totals(self, totals, match):
        with pytest.raises(ValueError, match=match):
            cluster_bootstrap_ci(totals, _ratio)

    def test_bad_level(self):
        with pytest.raises(ValueError, match="level"):
            cluster_bootstrap_ci(np.ones((3, 2)), _ratio, level=1.5)

    # -- Reference values --
    def test_same_stream_as_bootstrap_ci(self):
        """A mean over clusters gives bootstrap_ci's percentile interval (unexpanded): one
        engine."""
        rng = np.random.default_rng(0)
        d = rng.normal(size=40)
        clusters = np.repeat(np.arange(10), 4)
        totals = np.column_stack([np.bincount(clusters, d), np.bincount(clusters)])
        a = cluster_bootstrap_ci(totals, _ratio, n_resamples=999, rng=3, level=0.9)
        b = bootstrap_ci(
            d,
            clusters=clusters,
            method="percentile",
            n_resamples=999,
            rng=3,
            level=0.9,
            expand=False,
            exact=False,
        )
        assert a.low == pytest.approx(b.low, abs=1e-12)
        assert a.high == pytest.approx(b.high, abs=1e-12)
        assert a.level == 0.9 and a.method == "percentile bootstrap of statistic"

    # -- Properties --
    def test_deterministic_for_a_seed(self):
        totals = np.column_stack([np.arange(6.0), np.ones(6)])
        a = cluster_bootstrap_ci(totals, _ratio, n_resamples=200, rng=1)
        b = cluster_bootstrap_ci(totals, _ratio, n_resamples=200, rng=1)
        assert (a.low, a.high) == (b.low, b.high) and a.low <= 2.5 <= a.high
