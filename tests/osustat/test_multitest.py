import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from osustat import adjust_pvalues, stars
from osustat.multitest import CORRECTIONS
from tests.reference.statsmodels_multitest import multipletests


def holm_by_hand(p):
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    m = p.size
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        adjusted[i] = min(1.0, running)
    return adjusted


class TestAdjustPValues:
    # -- Input validation --
    def test_unknown_method(self):
        with pytest.raises(ValueError, match="`method` must be one of"):
            adjust_pvalues([0.1], method="tukey")

    def test_out_of_range(self):
        with pytest.raises(ValueError, match=r"must lie in \[0, 1\]; bad values at positions 1"):
            adjust_pvalues([0.1, 1.2])

    def test_alpha(self):
        with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\)"):
            adjust_pvalues([0.1], alpha=0)

    # -- Reference values --
    def test_holm_by_hand(self):
        p = [0.01, 0.04, 0.03, 0.005, 0.5]
        assert adjust_pvalues(p).pvalues_adjusted == pytest.approx(holm_by_hand(p), abs=1e-15)

    def test_bonferroni(self):
        adj = adjust_pvalues([0.01, 0.2, 0.6], method="bonferroni")
        assert adj.pvalues_adjusted.tolist() == pytest.approx([0.03, 0.6, 1.0])

    # -- Properties --
    @given(
        st.lists(st.floats(0, 1), min_size=1, max_size=30),
        st.sampled_from(["holm", "bonferroni", "fdr_bh", "hommel"]),
        st.sampled_from([0.01, 0.05, 0.1]),
    )
    def test_reject_iff_adjusted_below_alpha(self, p, method, alpha):
        from tests.reference.statsmodels_multitest import multipletests

        adj = adjust_pvalues(p, method=method, alpha=alpha)
        assert np.array_equal(adj.reject, adj.pvalues_adjusted <= alpha)
        # and it agrees with statsmodels' own decision
        assert np.array_equal(adj.reject, multipletests(p, alpha=alpha, method=method)[0])
        assert np.all(adj.pvalues_adjusted >= np.asarray(p) - 1e-15)
        assert np.all(adj.pvalues_adjusted <= 1)


class TestStars:
    @pytest.mark.parametrize(
        ("p", "mark"),
        [
            (0.5, ""),
            (0.1001, ""),
            (0.10, "."),
            (0.0501, "."),
            (0.05, "*"),  # inclusive, as adjust_pvalues' reject (p_adj <= alpha)
            (0.0101, "*"),
            (0.01, "**"),
            (0.0011, "**"),
            (0.001, "***"),
        ],
    )
    def test_thresholds(self, p, mark):
        assert stars(p) == mark

    def test_bad(self):
        with pytest.raises(ValueError, match="`p` must be a p-value"):
            stars(1.5)


@pytest.mark.parametrize("method", ["sidak", "holm-sidak"])
def test_sidak_with_p_one_does_not_warn(method):
    # issue 23: p = 1 leaked "divide by zero encountered in log1p" from statsmodels
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        adj = adjust_pvalues([1.0, 0.01, 0.5], method=method)
    assert adj.pvalues_adjusted[0] == 1.0
    assert adj.pvalues_adjusted[1] == pytest.approx(1 - 0.99**3)


def test_holm_is_statsmodels_bit_for_bit() -> None:
    """adjust_pvalues computes Holm itself (statsmodels' branch runs gc.collect() per call);
    decisions and adjusted values equal statsmodels' on random families with ties."""
    import numpy as np

    from tests.reference.statsmodels_multitest import multipletests

    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 40):
        for _ in range(8):
            p = np.round(rng.uniform(0, 0.2, size=size), 3)
            ref_reject, ref_adj, _, _ = multipletests(p, alpha=0.05, method="holm")
            ours = adjust_pvalues(p, method="holm", alpha=0.05)
            np.testing.assert_array_equal(ours.reject, ref_reject)
            np.testing.assert_array_equal(ours.pvalues_adjusted, np.minimum(ref_adj, 1.0))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # Sidak's log1p(-1)
@pytest.mark.parametrize("correction", [*CORRECTIONS, "none"])
@pytest.mark.parametrize("m", [1, 2, 4, 14])
def test_the_strictest_level_is_the_largest_p_the_correction_rejects_whatever_the_rest(
    correction, m
):
    # a reviewer: alpha / m was said for every correction, but Benjamini-Yekutieli's first
    # threshold is alpha / (m H_m) and Sidak's 1 - (1 - alpha)^(1/m). The reference: the
    # largest p statsmodels' correction rejects with the other m - 1 tests at p = 1.
    from osustat.multitest import strictest_level

    def rejects(p):
        ps = [p, *[1.0] * (m - 1)]
        if correction == "none":
            return p <= 0.05
        return bool(multipletests(ps, alpha=0.05, method=correction)[0][0])

    lo, hi = 0.0, 0.05  # bisection on the boundary
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rejects(mid) else (lo, mid)
    assert strictest_level(m, 0.05, correction) == pytest.approx(lo, rel=1e-9)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("correction", CORRECTIONS)
def test_the_held_level_is_where_the_corrections_decision_turns(correction):
    # the level a claim was held to, the others' p as observed (a statistician: a claim at
    # Holm's last step was said "underpowered" from the MDE at its first, alpha / m)
    from osustat.multitest import held_level

    rng = np.random.default_rng(7)
    for _ in range(12):
        m = int(rng.integers(2, 9))
        ps = np.where(rng.random(m) < 0.5, rng.random(m) * 0.01, rng.random(m))
        k = int(rng.integers(m))
        level = held_level(ps, k, correction, 0.05)

        def rejects(p, ps=ps, k=k):
            q = ps.copy()
            q[k] = p
            return bool(multipletests(q, alpha=0.05, method=correction)[0][k])

        assert rejects(level * (1 - 1e-9)) and (level == 0.05 or not rejects(level * (1 + 1e-6)))
