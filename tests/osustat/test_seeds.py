import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from osustat import fisher_combine, paired, seed_dependence, signflip_tests
from osustat.seeds import per_seed_values, seed_matrix, seed_tests


def long_records(values: dict[str, np.ndarray], budget: int = 256) -> pd.DataFrame:
    """(n, k) per-method values -> long records, queries e{i % 3}/q{i}, seed = column."""
    rows = []
    for method, mat in values.items():
        for i, j in itertools.product(range(mat.shape[0]), range(mat.shape[1])):
            rows.append(
                {
                    "episode_id": f"e{i % 3}",
                    "query_id": f"q{i}",
                    "method": method,
                    "budget": budget,
                    "seed": j,
                    "metric": "recall",
                    "value": float(mat[i, j]),
                }
            )
    return pd.DataFrame(rows)


class TestSeedMatrix:
    # -- Input validation --
    def test_too_few_units(self):
        with pytest.raises(ValueError, match=r"`tested` must have shape \(n_episodes >= 2"):
            seed_matrix([[1.0, 2.0]], "tested", "episode")

    def test_not_numbers(self):
        with pytest.raises(TypeError, match="`differences` must be array-like of real"):
            seed_matrix([["a", "b"], ["c", "d"]])

    def test_infinite_rows_named(self):
        with pytest.raises(ValueError, match=r"unit rows \[2\]"):
            seed_matrix([[0.0], [1.0], [np.inf]])


class TestPerSeedValues:
    # -- Input validation --
    def test_seed_lacking_units_named(self):
        r = np.random.default_rng(0)
        df = long_records({"a": r.random((6, 3)), "b": r.random((6, 3))})
        df = df[~((df.query_id == "q4") & (df.seed == 2))]
        with pytest.raises(ValueError, match=r"seed 2 lacks queries \['e1/q4'\]"):
            per_seed_values(
                df,
                "a",
                "b",
                metric="recall",
                budget=256,
                units=[f"e{i % 3}/q{i}" for i in range(6)],
            )

    def test_unknown_method_in_paired_words(self):
        df = long_records({"a": np.zeros((3, 2)), "b": np.zeros((3, 2))})
        with pytest.raises(ValueError, match=r"known methods: \['a', 'b'\]"):
            per_seed_values(df, "a", "zzz", metric="recall", budget=256)

    # -- Properties --
    def test_columns_are_the_per_seed_pairings_in_the_given_unit_order(self):
        r = np.random.default_rng(1)
        t, b = r.random((8, 3)), r.random((8, 3))
        df = long_records({"a": t, "b": b})
        units = paired(df, "a", "b", metric="recall", budget=256).ids[::-1]
        v = per_seed_values(df, "a", "b", metric="recall", budget=256, units=units)
        assert v.seeds == (0, 1, 2) and v.ids.tolist() == units.tolist()
        for j in range(3):
            one = paired(df, "a", "b", metric="recall", budget=256, seed=j)
            order = {u: i for i, u in enumerate(one.ids)}
            rows = [order[u] for u in units]
            np.testing.assert_array_equal(v.treatment[:, j], one.treatment[rows])
            np.testing.assert_array_equal(v.differences[:, j], one.differences[rows])

    def test_mean_over_seeds_is_the_seed_averaged_pairing(self):
        r = np.random.default_rng(2)
        df = long_records({"a": r.random((9, 4)), "b": r.random((9, 4))})
        avg = paired(df, "a", "b", metric="recall", budget=256)
        v = per_seed_values(df, "a", "b", metric="recall", budget=256, units=avg.ids)
        np.testing.assert_allclose(v.differences.mean(axis=1), avg.differences, atol=1e-15)


class TestSeedTests:
    # -- Input validation --
    def test_tested_shape_must_match(self):
        with pytest.raises(ValueError, match=r"`tested` must have the shape of `differences`"):
            seed_tests(np.zeros((4, 2)), tested=np.zeros((4, 3)))

    # -- Reference values --
    def test_exact_tests_match_brute_force_enumeration(self):
        # 5 units x 2 seeds: every test is exact (2**10 sign vectors <= n_resamples).
        d = np.array([[0.3, 0.25], [0.1, -0.05], [0.4, 0.5], [-0.2, -0.1], [0.6, 0.45]])

        def brute(x: np.ndarray) -> float:
            signs = np.array(list(itertools.product([-1.0, 1.0], repeat=x.size)))
            sums = signs @ x
            return float(np.mean(np.abs(sums) >= abs(x.sum()) - 1e-12))

        res = seed_tests(d, n_resamples=10_000, rng=0)
        assert res.averaged.exact and res.pooled.exact
        assert res.averaged.pvalue == pytest.approx(brute(d.mean(axis=1)), rel=1e-12)
        assert res.pooled.pvalue == pytest.approx(brute(d.ravel()), rel=1e-12)
        for j, t in enumerate(res.per_seed):
            assert t.pvalue == pytest.approx(brute(d[:, j]), rel=1e-12)
        scipy_fisher = stats.combine_pvalues([t.pvalue for t in res.per_seed]).pvalue
        assert res.fisher_pvalue == pytest.approx(scipy_fisher, rel=1e-12)

    def test_monte_carlo_equals_the_two_call_shapes_it_replaced(self):
        # The audit tested [seed columns..., pooled] and the evidence-selection analysis
        # [seed average, pooled]; one call over all of them gives the same p bit for bit.
        for trial in range(20):
            r = np.random.default_rng(trial)
            n, k = int(r.integers(12, 40)), int(r.integers(2, 5))
            d = np.round(r.normal(0.05, 0.3, size=(n, k)), 2)
            res = seed_tests(d, n_resamples=999, rng=trial)
            avg, pooled = signflip_tests([d.mean(axis=1), d.ravel()], n_resamples=999, rng=trial)
            cols = signflip_tests([*d.T, d.ravel()], n_resamples=999, rng=trial)
            assert (res.averaged.pvalue, res.pooled.pvalue) == (avg.pvalue, pooled.pvalue)
            assert [t.pvalue for t in res.per_seed] == [t.pvalue for t in cols[:-1]]

    # -- Properties --
    def test_dependence_measured_on_differences_not_tested_values(self):
        r = np.random.default_rng(3)
        base = r.normal(0, 1, size=(20, 1))
        d = base + r.normal(0, 0.1, size=(20, 3))
        tested = d * np.array([1.0, -1.0, 2.0])  # flips the correlation of column 1
        res = seed_tests(d, tested=tested, rng=0)
        ref = seed_dependence(d)
        assert res.dependence is not None and res.dependence.too_dependent
        assert res.dependence.mean_correlation == ref.mean_correlation
        assert res.pooled.statistic == pytest.approx(tested.mean())

    def test_one_seed_or_two_units_has_no_dependence(self):
        assert seed_tests(np.arange(6.0), rng=0).dependence is None
        assert seed_tests(np.ones((2, 3)), rng=0).dependence is None

    def test_pooling_duplicated_seeds_is_anticonservative(self):
        d = np.repeat(np.random.default_rng(4).normal(0.15, 0.5, size=(25, 1)), 4, axis=1)
        res = seed_tests(d, n_resamples=4999, rng=0)
        assert res.pooled.n == 100 and res.averaged.n == 25
        assert res.pooled.pvalue < res.averaged.pvalue
        # four identical seeds: Fisher over them is far smaller than any one of them
        assert res.fisher_pvalue < res.per_seed[0].pvalue
        assert fisher_combine([t.pvalue for t in res.per_seed]).pvalue == res.fisher_pvalue


def test_records_are_validated_once(monkeypatch):
    """per_seed_values checks the whole table once; the per-seed pairings reuse it."""
    from osustat import records as records_module
    from osustat import schema, seeds

    checked = []
    real = schema.validate_records

    def spy(df):
        if not isinstance(df, schema.ValidatedRecords):
            checked.append(len(df))
        return real(df)

    monkeypatch.setattr(records_module, "validate_records", spy)
    monkeypatch.setattr(seeds, "validate_records", spy)
    df = pd.DataFrame(
        {
            "episode_id": "e",
            "query_id": ["q1", "q2", "q3"] * 6,
            "method": ["new"] * 9 + ["old"] * 9,
            "seed": [0, 0, 0, 1, 1, 1, 2, 2, 2] * 2,
            "budget": 256,
            "metric": "hit@2",
            "value": [1, 0, 1] * 3 + [0, 0, 1] * 3,
        }
    )
    plain = per_seed_values(df, "new", "old", metric="hit@2", budget=256)
    assert checked == [len(df)]  # once, whole table; the three seeds' pairings check nothing
    checked.clear()
    again = per_seed_values(real(df), "new", "old", metric="hit@2", budget=256)
    assert checked == []
    np.testing.assert_array_equal(plain.differences, again.differences)
    assert plain.seeds == (0, 1, 2)


def test_seed_api_is_exported():
    import osustat
    from osustat import seeds
    from osustat.io import evidence

    assert osustat.per_seed_values is seeds.per_seed_values
    assert osustat.seed_tests is seeds.seed_tests
    assert osustat.evidence_metrics is evidence.evidence_metrics
    assert {"PerSeedValues", "SeedTests", "evidence_metrics"} <= set(osustat.__all__)


class TestBetweenSeedDependence:
    def test_balanced_is_pearson_and_disjoint_is_zero(self):
        from osustat import seed_dependence
        from osustat.seeds import between_seed_dependence

        x = np.random.default_rng(0).normal(size=(40, 3))
        assert between_seed_dependence(x).mean_correlation == pytest.approx(
            seed_dependence(x).mean_correlation
        )
        d = np.full((6, 2), np.nan)
        d[:3, 0], d[3:, 1] = [1.0, 2.0, 0.5], [0.0, 1.0, 3.0]
        dep = between_seed_dependence(d)
        assert dep.mean_correlation == 0.0 and dep.effective_seeds == 2.0

    def test_matches_the_correlation_of_seed_means_by_simulation(self):
        # two seeds of 50 units each, 20 shared; a unit's differences correlate at .8 across
        # seeds; the correlation of the two seed means is about .8 * 20 / 50 = .32
        from osustat.seeds import between_seed_dependence

        rng = np.random.default_rng(1)
        means, est = [], []
        for _ in range(400):
            shared = rng.normal(size=20)
            a = np.r_[shared + 0.5 * rng.normal(size=20), rng.normal(size=30) * 1.118]
            b = np.r_[shared + 0.5 * rng.normal(size=20), rng.normal(size=30) * 1.118]
            means.append((a.mean(), b.mean()))
            d = np.full((80, 2), np.nan)
            d[:50, 0] = a
            d[:20, 1], d[50:, 1] = b[:20], b[20:]
            est.append(between_seed_dependence(d).mean_correlation)
        m = np.asarray(means)
        true = np.corrcoef(m[:, 0], m[:, 1])[0, 1]
        assert true == pytest.approx(0.32, abs=0.1)
        assert np.mean(est) == pytest.approx(true, abs=0.08)

    def test_bad_input_names_the_argument(self):
        from osustat.seeds import between_seed_dependence

        with pytest.raises(ValueError, match="`differences` must have shape"):
            between_seed_dependence(np.zeros(5))
        with pytest.raises(ValueError, match="seed columns \\[1\\] have fewer than 2 units"):
            between_seed_dependence(np.array([[1.0, np.nan], [2.0, np.nan], [0.0, 1.0]]))
