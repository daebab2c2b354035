import numpy as np
import pytest
from scipy import stats

from osustat import INTERACTION_METHODS, Cell, interaction_test

LABELS = ("T+E+", "T+E-", "T-E+", "T-E-")


def draw_continuous(rng, sizes, sds, means=(0, 0, 0, 0)):
    d = np.concatenate([rng.normal(m, s, n) for n, s, m in zip(sizes, sds, means, strict=True)])
    return d, np.repeat(LABELS, sizes)


def draw_binary(rng, sizes, p_nonzero):
    parts = []
    for n, p in zip(sizes, p_nonzero, strict=True):
        parts.append(np.where(rng.random(n) < p, rng.choice([-1.0, 1.0], n), 0.0))
    return np.concatenate(parts), np.repeat(LABELS, sizes)


def rejection_rate(method, draw, reps, rng, resamples=199):
    hits = 0
    for _ in range(reps):
        d, cells = draw(rng)
        hits += (
            interaction_test(d, cells, method=method, n_resamples=resamples, rng=rng).pvalue <= 0.05
        )
    return hits / reps


def binomial_99(reps, alpha=0.05):
    return stats.binom.ppf([0.005, 0.995], reps, alpha) / reps


class TestInteractionTest:
    # -- Input validation --
    def test_unknown_method(self):
        with pytest.raises(ValueError, match="`method` must be one of"):
            interaction_test([1, 2, 3, 4], LABELS, method="anova")

    def test_unknown_cell_label(self):
        with pytest.raises(
            ValueError,
            match=r"`cells` has unknown cell labels at positions "
            r"2 \('TE\?'\)",
        ):
            interaction_test([1, 2, 3], ["T+E+", "T-E-", "TE?"])

    def test_length_mismatch(self):
        with pytest.raises(ValueError, match="equal lengths; got 3 and 2"):
            interaction_test([1, 2, 3], ["T+E+", "T-E-"])

    def test_single_cell_label(self):
        with pytest.raises(ValueError, match="at least two distinct cells"):
            interaction_test([1, 2, 3], ["T+E+"] * 3)

    def test_nan(self):
        with pytest.raises(ValueError, match="`differences` must be finite"):
            interaction_test([1, np.nan, 3, 4], LABELS)

    # -- Reference values --
    def test_ols_equals_one_way_anova(self):
        rng = np.random.default_rng(0)
        d, cells = draw_continuous(rng, (10, 20, 30, 40), (1, 1, 1, 1), (0.5, 0, 0, -0.2))
        res = interaction_test(d, cells, method="ols")
        ref = stats.f_oneway(*(d[cells == c] for c in LABELS))
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-8)

    def test_cell_means_and_counts(self):
        res = interaction_test(
            [1, 0, 1, -1, 0.5, 0.5],
            ["T+E+", "T+E+", "T-E-", "T-E-", "T-E+", "T-E+"],
            rng=0,
            n_resamples=99,
        )
        assert res.cell_n == {Cell.TE: 2, Cell.E_ONLY: 2, Cell.NEITHER: 2}
        assert res.cell_means == {Cell.TE: 0.5, Cell.E_ONLY: 0.5, Cell.NEITHER: 0.0}

    def test_paper_statistic_is_between_cell_sum_of_squares(self):
        rng = np.random.default_rng(1)
        d, cells = draw_continuous(rng, (5, 8, 13, 21), (1, 2, 1, 1))
        res = interaction_test(d, cells, method="centered-signflip", rng=2, n_resamples=99)
        grand = d.mean()
        expected = sum((cells == c).sum() * (d[cells == c].mean() - grand) ** 2 for c in LABELS)
        assert res.statistic == pytest.approx(expected, rel=1e-12)
        perm = interaction_test(d, cells, method="label-permutation", rng=2, n_resamples=99)
        assert perm.statistic == pytest.approx(expected, rel=1e-12)

    def test_degenerate_constant_within_cells_falls_back_to_label_permutation(self):
        cells = np.repeat(["T+E+", "T-E-"], 3)
        d = np.repeat([1.0, 0.0], 3)
        for method in ("studentized-signflip", "centered-signflip"):
            res = interaction_test(d, cells, method=method, rng=0, n_resamples=4999)
            assert res.method == "label-permutation"
            # exact label-permutation p: 2 of the C(6, 3) = 20 splits are as extreme
            assert res.pvalue == pytest.approx(0.1, abs=0.015)
        same = interaction_test(np.zeros(6), cells, rng=0, n_resamples=99)
        assert same.pvalue == 1.0

    def test_cells_need_two_units(self):
        with pytest.raises(ValueError, match=r"too small: \['T-E- \(n=1\)'\]"):
            interaction_test([0.1, 0.2, 0.3], ["T+E+", "T+E+", "T-E-"])

    # -- Properties --
    @pytest.mark.parametrize("method", INTERACTION_METHODS)
    def test_detects_strong_interaction(self, method):
        rng = np.random.default_rng(3)
        d, cells = draw_continuous(rng, (60, 60, 60, 60), (1, 1, 1, 1), (0.8, 0, 0, -0.6))
        assert interaction_test(d, cells, method=method, rng=4, n_resamples=999).pvalue <= 0.002

    @pytest.mark.parametrize("method", INTERACTION_METHODS)
    def test_shift_invariant(self, method):
        # Adding the same constant to every difference cannot create an interaction.
        rng = np.random.default_rng(5)
        d, cells = draw_continuous(rng, (10, 20, 30, 40), (1, 2, 1, 0.5))
        a = interaction_test(d, cells, method=method, rng=6, n_resamples=499)
        b = interaction_test(d + 0.75, cells, method=method, rng=6, n_resamples=499)
        assert a.statistic == pytest.approx(b.statistic, rel=1e-8)
        assert a.pvalue == pytest.approx(b.pvalue, abs=3 / 500)

    def test_deterministic(self):
        rng = np.random.default_rng(5)
        d, cells = draw_binary(rng, (56, 96, 44, 132), (0.6, 0.3, 0.5, 0.15))
        for method in INTERACTION_METHODS:
            assert interaction_test(d, cells, method=method, rng=8) == interaction_test(
                d, cells, method=method, rng=8
            )

    # -- Type-I error under the null (slow) --
    @pytest.mark.slow
    @pytest.mark.parametrize("method", INTERACTION_METHODS)
    def test_type_one_error_equal_cells(self, method):
        rng = np.random.default_rng(10)
        lo, hi = binomial_99(600)
        rate = rejection_rate(method, lambda r: draw_continuous(r, (100,) * 4, (1,) * 4), 600, rng)
        assert lo <= rate <= hi

    @pytest.mark.slow
    @pytest.mark.parametrize(
        "draw",
        [
            lambda r: draw_continuous(r, (5, 40, 150, 500), (2.0, 1.0, 0.7, 0.3)),
            lambda r: draw_continuous(r, (5, 40, 150, 500), (0.3, 0.7, 1.0, 2.0)),
            lambda r: draw_binary(r, (56, 96, 44, 132), (0.6, 0.3, 0.5, 0.15)),
        ],
        ids=["small-cell-noisy", "small-cell-quiet", "binary-tau-bench-sizes"],
    )
    def test_type_one_error_default_unequal_cells(self, draw):
        rng = np.random.default_rng(11)
        lo, hi = binomial_99(600)
        assert lo <= rejection_rate("studentized-signflip", draw, 600, rng) <= hi

    @pytest.mark.slow
    @pytest.mark.parametrize("method", ["centered-signflip", "label-permutation", "ols"])
    def test_unstudentized_methods_are_anti_conservative_when_small_cell_is_noisy(self, method):
        # The documented reason the default is studentized (docs/statistics.md).
        rng = np.random.default_rng(12)
        _, hi = binomial_99(600)
        rate = rejection_rate(
            method, lambda r: draw_continuous(r, (5, 40, 150, 500), (2.0, 1.0, 0.7, 0.3)), 600, rng
        )
        assert rate > hi


class TestCenteredSizeAtEqualVariances:
    """Issue 35 item 5: the centred statistic's size at the cells at hand, equal variances."""

    def test_matches_running_the_test_on_normal_nulls(self):
        # the independent reference: interaction_test itself on 400 normal nulls with one
        # common variance; the computed size within 4 standard errors of both estimates
        from osustat.interaction import centered_size_at_equal_variances

        sizes = (4, 6, 30, 60)
        rng = np.random.default_rng(5)
        rate = rejection_rate(
            "centered-signflip", lambda r: draw_continuous(r, sizes, (1,) * 4), 400, rng
        )
        size = centered_size_at_equal_variances(sizes, n_datasets=1000)
        se = np.sqrt(size * (1 - size) * (1 / 400 + 1 / 1000))
        assert abs(size - rate) <= 4 * se
        assert size > 0.075  # liberal at equal variances: the finding

    def test_large_cells_are_near_the_level_and_same_cells_same_answer(self):
        from osustat.interaction import centered_size_at_equal_variances

        assert centered_size_at_equal_variances((200, 200, 200)) <= 0.06
        assert centered_size_at_equal_variances([5, 300]) == centered_size_at_equal_variances(
            np.array([5, 300])
        )

    @pytest.mark.parametrize(
        ("kw", "match"),
        [
            ({"cell_n": [5]}, "at least two cells"),
            ({"cell_n": [1, 20]}, "at least two cells of at least 2"),
            ({"cell_n": [5, 5], "alpha": 1.5}, "`alpha` must be in"),
        ],
    )
    def test_bad_arguments(self, kw, match):
        from osustat.interaction import centered_size_at_equal_variances

        with pytest.raises(ValueError, match=match):
            centered_size_at_equal_variances(**kw)


def test_the_null_is_computed_block_by_block_as_one_matrix_would_give_it():
    # an outside re-check (stop 57): the interaction test held 2^25 x 4 cell sums and their
    # temporaries at the cap (7.2 GB); block by block of the sign stream, the statistics are
    # those of the whole matrix, bit for bit, over more than one block
    from osustat._resampling import chunk_rows, null_sums
    from osustat.interaction import _null_statistics, _spread

    g = np.random.default_rng(3)
    d = g.normal(size=300)
    codes = g.integers(0, 4, 300)
    onehot = np.eye(4)[codes]
    n_c = onehot.sum(axis=0)
    n = 2 * chunk_rows(300) + 17  # three blocks, the last one short

    def spread(sums):
        return _spread(sums / n_c, n_c)

    columns = onehot * d[:, None]
    whole = spread(null_sums(11, n, 300, columns))
    assert np.array_equal(_null_statistics(11, n, columns, spread), whole)
