import numpy as np
import pandas as pd
import pytest

from osustat import Cell, paired, validate_records


def make_records(n_queries=6, methods=("osu", "flat"), budgets=(256,), seeds=(0,)):
    rows = []
    for e in range(2):
        for q in range(n_queries // 2):
            for m in methods:
                for b in budgets:
                    for s in seeds:
                        for metric, value in (
                            ("hit@2", float((q + e + (m == "osu")) % 2)),
                            ("recall", 0.5),
                        ):
                            rows.append(
                                {
                                    "benchmark": "syn",
                                    "episode_id": f"e{e}",
                                    "query_id": f"q{q}",
                                    "method": m,
                                    "budget": b,
                                    "seed": s,
                                    "metric": metric,
                                    "value": value,
                                    "cell": ["T+E+", "T-E-", "T+E-"][q % 3],
                                }
                            )
    return pd.DataFrame(rows)


class TestValidateRecords:
    def test_not_dataframe(self):
        with pytest.raises(TypeError, match="`records` must be a pandas DataFrame"):
            validate_records([{"a": 1}])

    def test_missing_columns_lists_missing_and_found(self):
        df = make_records().drop(columns=["value", "method"])
        with pytest.raises(
            ValueError,
            match=r"missing required columns \['method', 'value'\]; "
            r"found columns \['benchmark', 'episode_id'",
        ):
            validate_records(df)

    def test_nan_value_names_row(self):
        df = make_records()
        df.loc[3, "value"] = np.nan
        with pytest.raises(ValueError, match=r"`value` has NaN or infinite entries in rows 3"):
            validate_records(df)

    def test_non_numeric_value(self):
        df = make_records()
        df["value"] = df["value"].astype(object)
        df.loc[5, "value"] = "high"
        with pytest.raises(
            TypeError,
            match=r"`value` must be numeric; non-numeric values in "
            r"rows 5",
        ):
            validate_records(df)

    def test_non_binary_hit(self):
        df = make_records()
        df.loc[0, "value"] = 0.5
        with pytest.raises(ValueError, match=r"hit@k values must be 0 or 1.*rows 0"):
            validate_records(df)

    def test_recall_out_of_range(self):
        df = make_records()
        df.loc[1, "value"] = 1.5
        with pytest.raises(ValueError, match=r"recall values must lie in \[0, 1\].*rows 1"):
            validate_records(df)

    def test_unknown_cell(self):
        df = make_records()
        df.loc[2, "cell"] = "T+"
        with pytest.raises(ValueError, match=r"`cell` has unknown labels in rows 2"):
            validate_records(df)

    def test_conflicting_cells(self):
        df = make_records()
        df.loc[0, "cell"] = "T-E+"
        with pytest.raises(ValueError, match=r"conflicting cells for queries 'e0/q0'"):
            validate_records(df)

    def test_duplicate_keys(self):
        df = make_records()
        df = pd.concat([df, df.iloc[[4]]], ignore_index=True)
        with pytest.raises(ValueError, match=rf"duplicate record keys .* in rows 4, {len(df) - 1}"):
            validate_records(df)

    def test_non_integer_budget(self):
        df = make_records()
        df["budget"] = df["budget"].astype(float)
        df.loc[0, "budget"] = 256.5
        with pytest.raises(ValueError, match=r"`budget` must hold integers; bad values in rows 0"):
            validate_records(df)

    def test_defaults_and_normalization(self):
        df = make_records().drop(columns=["benchmark", "seed", "cell"])
        df["metric"] = df["metric"].str.upper()
        out = validate_records(df)
        assert set(out["benchmark"]) == {"default"} and set(out["seed"]) == {0}
        assert set(out["metric"]) == {"hit@2", "recall"}
        assert out["cell"].isna().all()
        assert len(out) == len(df)  # nothing dropped


class TestPaired:
    def test_alignment_and_cells(self):
        p = paired(make_records(), "osu", "flat", metric="hit@2", budget=256)
        assert p.n == 6 and p.unit == "query"
        assert p.ids.tolist() == ["e0/q0", "e0/q1", "e0/q2", "e1/q0", "e1/q1", "e1/q2"]
        assert np.array_equal(p.differences, p.treatment - p.baseline)
        assert p.cells[0] is Cell.TE and p.cells[1] is Cell.NEITHER

    def test_episode_unit_averages_first(self):
        p = paired(make_records(), "osu", "flat", metric="hit@2", budget=256, unit="episode")
        assert p.ids.tolist() == ["e0", "e1"] and p.cells is None
        q = paired(make_records(), "osu", "flat", metric="hit@2", budget=256)
        assert p.treatment[0] == pytest.approx(q.treatment[:3].mean())

    def test_seeds_averaged_per_query(self):
        df = make_records(seeds=(0, 1))
        df.loc[
            (df["seed"] == 1) & (df["metric"] == "recall") & (df["method"] == "osu"), "value"
        ] = 1.0
        p = paired(df, "osu", "flat", metric="recall", budget=256)
        assert p.n == 6 and p.n_seeds == 2
        assert p.treatment.tolist() == [0.75] * 6
        one = paired(df, "osu", "flat", metric="recall", budget=256, seed=1)
        assert one.treatment.tolist() == [1.0] * 6 and one.n_seeds == 1

    def test_different_seed_sets_are_an_error(self):
        df = make_records(seeds=(0, 1))
        df = df[~((df["method"] == "flat") & (df["seed"] == 1) & (df["query_id"] == "q0"))]
        with pytest.raises(
            ValueError,
            match=r"different seeds for some queries.*2 queries: "
            r"e0/q0 \(\[0, 1\] vs \[0\]\)",
        ):
            paired(df, "osu", "flat", metric="hit@2", budget=256)

    def test_fractional_budget(self):
        with pytest.raises(ValueError, match=r"`budget` must be an integer budget"):
            paired(make_records(), "osu", "flat", metric="hit@2", budget=256.7)

    def test_metric_spelling(self):
        df = make_records()
        df["metric"] = df["metric"].replace({"hit@2": "Hit@ 2"})
        assert set(validate_records(df)["metric"]) == {"hit@2", "recall"}
        assert paired(df, "osu", "flat", metric="HIT@2", budget=256).n == 6

    def test_unpaired_queries_listed(self):
        df = make_records()
        df = df[~((df["method"] == "flat") & (df["query_id"] == "q2") & (df["episode_id"] == "e1"))]
        with pytest.raises(ValueError, match=r"unpaired queries.*only 'osu' has 1: 'e1/q2'"):
            paired(df, "osu", "flat", metric="hit@2", budget=256)

    def test_unknown_method_lists_known(self):
        with pytest.raises(
            ValueError,
            match=r"`treatment` method 'tree' is not in the records; "
            r"known methods: \['flat', 'osu'\]",
        ):
            paired(make_records(), "tree", "flat", metric="hit@2", budget=256)

    def test_unknown_budget_lists_known(self):
        with pytest.raises(
            ValueError,
            match=r"budget 512 is not in the records; known budgets: "
            r"\[128, 256\]",
        ):
            paired(make_records(budgets=(128, 256)), "osu", "flat", metric="hit@2", budget=512)

    def test_unknown_metric_lists_known(self):
        with pytest.raises(
            ValueError,
            match=r"metric 'ndcg' is not in the records; known "
            r"metrics: \['hit@2', 'recall'\]",
        ):
            paired(make_records(), "osu", "flat", metric="ndcg", budget=256)

    def test_same_method(self):
        with pytest.raises(ValueError, match="must be different methods"):
            paired(make_records(), "osu", "osu", metric="hit@2", budget=256)

    def test_bad_unit(self):
        with pytest.raises(ValueError, match="`unit` must be one of"):
            paired(make_records(), "osu", "flat", metric="hit@2", budget=256, unit="step")

    def test_several_benchmarks_need_choice(self):
        df = pd.concat([make_records(), make_records().assign(benchmark="tau")])
        with pytest.raises(ValueError, match=r"several benchmarks \['syn', 'tau'\]"):
            paired(df, "osu", "flat", metric="hit@2", budget=256)
        assert paired(df, "osu", "flat", metric="hit@2", budget=256, benchmark="tau").n == 6
