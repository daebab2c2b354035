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

    # one entry set to a bad value (its column cast first where the value needs it) -> the
    # error names the check and the row
    @pytest.mark.parametrize(
        ("row", "column", "cast", "value", "error", "match"),
        [
            (3, "value", None, np.nan, ValueError,
             r"`value` has NaN or infinite entries in rows 3"),
            (5, "value", object, "high", TypeError,
             r"`value` must be numeric; non-numeric values in rows 5"),
            (0, "value", None, 0.5, ValueError, r"hit@k values must be 0 or 1.*rows 0"),
            (1, "value", None, 1.5, ValueError, r"recall values must lie in \[0, 1\].*rows 1"),
            (2, "cell", None, "T+", ValueError, r"`cell` has unknown labels in rows 2"),
            (0, "cell", None, "T-E+", ValueError, r"conflicting cells for queries 'e0/q0'"),
            (0, "budget", float, 256.5, ValueError,
             r"`budget` must hold integers; bad values in rows 0"),
        ],
        ids=["nan", "non-numeric", "non-binary-hit", "recall-range", "unknown-cell",
             "conflicting-cells", "non-integer-budget"],
    )  # fmt: skip
    def test_bad_entry_names_row(self, row, column, cast, value, error, match):
        df = make_records()
        if cast is not None:
            df[column] = df[column].astype(cast)
        df.loc[row, column] = value
        with pytest.raises(error, match=match):
            validate_records(df)

    def test_duplicate_keys(self):
        df = make_records()
        df = pd.concat([df, df.iloc[[4]]], ignore_index=True)
        with pytest.raises(ValueError, match=rf"duplicate record keys .* in rows 4, {len(df) - 1}"):
            validate_records(df)

    def test_duplicate_keys_after_a_concat_name_positions(self):
        # user2's review: "in rows 0, 0" (index labels) after pd.concat without ignore_index
        df = make_records()
        df = pd.concat([df, df.iloc[[4]]])
        n = len(df) - 1
        with pytest.raises(
            ValueError, match=rf"in rows 4, {n} \(0-based positions; index labels 4, 4\)"
        ):
            validate_records(df)

    def test_defaults_and_normalization(self):
        df = make_records().drop(columns=["benchmark", "seed", "cell"])
        df["metric"] = df["metric"].str.upper()
        out = validate_records(df)
        assert set(out["benchmark"]) == {"default"} and set(out["seed"]) == {0}
        assert set(out["metric"]) == {"hit@2", "recall"}
        assert out["cell"].isna().all()
        assert len(out) == len(df)  # nothing dropped


class TestOneSeedSides:
    """With one seed `paired` takes each method's rows as they are (every query once)
    instead of aggregating them per query: the same frame as the groupby's, to the dtype,
    the order, the missing cells and the sign of a zero."""

    @pytest.mark.parametrize("seed", range(6))
    def test_same_frame_as_the_groupby(self, seed):
        from osustat.records import PER_QUERY, _grouped, _one_seed_side

        rng = np.random.default_rng(seed)
        n = 40
        queries = rng.permutation([(f"e{rng.integers(5)}", f"q{k}") for k in range(n)])
        cells = rng.choice(np.array(["T+E+", "T-E-", "T+E-", "T-E+", None], dtype=object), n)
        if seed % 3 == 0:
            cells[:] = None  # no cells at all
        values = rng.choice([-0.0, 0.0, 0.25, 1.0, 2.0 / 3.0], n)
        df = validate_records(
            pd.DataFrame(
                {
                    "episode_id": queries[:, 0],
                    "query_id": queries[:, 1],
                    "method": "m",
                    "budget": 8,
                    "seed": seed,
                    "metric": "recall",
                    "value": values,
                    "cell": cells,
                }
            )
        )
        expected, got = _grouped(df, PER_QUERY), _one_seed_side(df)
        pd.testing.assert_frame_equal(got, expected)
        assert list(got.index) == list(expected.index)
        assert np.array_equal(np.signbit(got["value"]), np.signbit(expected["value"]))
        assert [type(c) for c in got["cell"]] == [type(c) for c in expected["cell"]]


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

    def test_metric_spelling(self):
        df = make_records()
        df["metric"] = df["metric"].replace({"hit@2": "Hit@ 2"})
        assert set(validate_records(df)["metric"]) == {"hit@2", "recall"}
        assert paired(df, "osu", "flat", metric="HIT@2", budget=256).n == 6

    def test_unpaired_queries_listed(self):
        df = make_records()
        df = df[~((df["method"] == "flat") & (df["query_id"] == "q2") & (df["episode_id"] == "e1"))]
        # the pair and the table are named (an --all-pairs run compares many)
        match = (
            r"unpaired queries of 'osu' vs 'flat' \('hit@2' at budget 256; "
            r".*only 'osu' has 1: 'e1/q2'"
        )
        with pytest.raises(ValueError, match=match):
            paired(df, "osu", "flat", metric="hit@2", budget=256)

    def test_csv_ids_are_read_as_written(self, tmp_path):
        # '007' and '7' were both read as the number 7: "duplicate record keys" on the
        # tool's own --records-out file, or '007' renamed '7' in an unpaired-query error
        from osustat import load_records

        df = make_records()
        df["query_id"] = df["query_id"].map({"q0": "007", "q1": "7", "q2": "08"})
        df.to_csv(tmp_path / "r.csv", index=False)
        back = load_records(tmp_path / "r.csv")
        assert set(back["query_id"]) == {"007", "7", "08"}
        assert paired(back, "osu", "flat", metric="hit@2", budget=256).n == 6

    def test_csv_ids_that_read_like_missing_values_are_names(self, tmp_path):
        # a red team (stop 60): a baseline named 'None' (or query ids 'NA', 'null', 'nan')
        # read as missing -- osustat could not read back its own --records-out file
        from osustat import load_records

        df = make_records()
        df["method"] = df["method"].map({"osu": "osu", "flat": "None"})
        df["query_id"] = df["query_id"].map({"q0": "NA", "q1": "null", "q2": "nan"})
        df.to_csv(tmp_path / "r.csv", index=False)
        back = load_records(tmp_path / "r.csv")
        assert set(back["method"]) == {"osu", "None"}
        assert set(back["query_id"]) == {"NA", "null", "nan"}
        assert paired(back, "osu", "None", metric="hit@2", budget=256).n == 6
        # a value written NA (R's missing value) is still missing, and an empty id too
        text = (tmp_path / "r.csv").read_text().splitlines()
        head = text[0].split(",")
        row = text[1].split(",")
        row[head.index("value")] = "NA"
        (tmp_path / "v.csv").write_text("\n".join([text[0], ",".join(row), *text[2:]]))
        with pytest.raises(ValueError, match=r"`value` has NaN or infinite entries on lines 2\."):
            load_records(tmp_path / "v.csv")
        row = text[1].split(",")
        row[head.index("method")] = ""
        (tmp_path / "m.csv").write_text("\n".join([text[0], ",".join(row), *text[2:]]))
        with pytest.raises(ValueError, match=r"`method` has missing values on lines 2\."):
            load_records(tmp_path / "m.csv")

    def test_unpaired_query_ids_that_carry_their_episode_are_printed_as_stored(self):
        # LoCoMo's query ids (conv-30/qa0) already name the conversation: the message printed
        # 'conv-30/conv-30/qa0', a key found nowhere in the records
        df = make_records()
        df["query_id"] = df["episode_id"] + "/" + df["query_id"]
        df = df[~((df["method"] == "flat") & (df["query_id"] == "e1/q2"))]
        with pytest.raises(ValueError, match=r"only 'osu' has 1: 'e1/q2'\.") as err:
            paired(df, "osu", "flat", metric="hit@2", budget=256)
        assert "e1/e1/" not in str(err.value)

    # one argument of paired(records, "osu", "flat", metric="hit@2", budget=256) changed ->
    # the error names it (and lists what the records hold)
    @pytest.mark.parametrize(
        ("change", "match"),
        [
            ({"treatment": "tree"},
             r"`treatment` method 'tree' is not in the records; known methods: \['flat', 'osu'\]"),
            ({"budget": 512}, r"budget 512 is not in the records; known budgets: \[128, 256\]"),
            ({"budget": 256.7}, r"`budget` must be an integer budget"),
            ({"metric": "ndcg"},
             r"metric 'ndcg' is not in the records; known metrics: \['hit@2', 'recall'\]"),
            ({"baseline": "osu"}, "must be different methods"),
            ({"unit": "step"}, "`unit` must be one of"),
        ],
        ids=["method", "budget", "fractional-budget", "metric", "same-method", "unit"],
    )  # fmt: skip
    def test_bad_argument_is_named(self, change, match):
        kw = {"treatment": "osu", "baseline": "flat", "metric": "hit@2", "budget": 256} | change
        with pytest.raises(ValueError, match=match):
            paired(make_records(budgets=(128, 256)), **kw)

    def test_several_benchmarks_need_choice(self):
        df = pd.concat([make_records(), make_records().assign(benchmark="tau")])
        with pytest.raises(ValueError, match=r"several benchmarks \['syn', 'tau'\]"):
            paired(df, "osu", "flat", metric="hit@2", budget=256)
        assert paired(df, "osu", "flat", metric="hit@2", budget=256, benchmark="tau").n == 6


def test_an_overflowing_spread_names_the_offending_query_as_the_records_do():
    """A red team's f1 of 1e308 in one LoCoMo question: the message listed every query, each
    as 'conv-26/conv-26/qa0' (episode prefixed twice); it names the one whose square
    overflows, as the records spell it."""
    from osustat.records import paired

    rows = [
        {"episode_id": "conv-26", "query_id": f"conv-26/qa{i}", "method": m, "budget": 1,
         "metric": "f1", "value": (1e308 if (m == "a" and i == 1) else 0.5)}
        for i in range(5) for m in ("a", "b")
    ]  # fmt: skip
    with pytest.raises(ValueError) as err:
        paired(pd.DataFrame(rows), "a", "b", metric="f1", budget=1)
    msg = str(err.value)
    assert "at 1 of the 5 queries: 'conv-26/qa1'; rescale the metric." in msg
    assert "conv-26/conv-26" not in msg


def test_a_parquet_records_error_names_its_rows_once(tmp_path):
    # a red team read "on rows (0-based) (0-based) 7": the second rename renamed the first's
    from pathlib import Path

    from osustat.io.reading import load_records

    df = pd.read_csv(Path(__file__).resolve().parents[2] / "examples" / "records.csv")
    df.loc[7, "value"] = float("nan")
    df.to_parquet(tmp_path / "r.parquet", index=False)
    df.to_csv(tmp_path / "r.csv", index=False)
    with pytest.raises(ValueError, match=r"NaN or infinite entries on rows \(0-based\) 7\.$"):
        load_records(tmp_path / "r.parquet")
    with pytest.raises(ValueError, match=r"NaN or infinite entries on lines 9\.$"):
        load_records(tmp_path / "r.csv")


def test_a_gzipped_records_file_is_said_to_be_one(tmp_path):
    # a reviewer (stop 57): rec.csv.gz got "unknown extension '.gz'" where claims files and
    # qrels say they are gzip-compressed
    import gzip

    from osustat.io.reading import read_records

    path = tmp_path / "rec.csv.gz"
    path.write_bytes(gzip.compress(b"benchmark,episode_id\n"))
    with pytest.raises(ValueError, match=r"It is gzip-compressed: decompress it \(gunzip\)"):
        read_records(path)
