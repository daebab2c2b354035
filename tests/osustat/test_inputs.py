import json
from pathlib import Path

import pandas as pd
import pytest

from osustat import label_cell, validate_records
from osustat.io.evidence import read_evidence
from osustat.io.inputs import records_from_retrievals
from osustat.io.trec import records_from_trec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

EVIDENCE = [
    {
        "episode_id": "e1",
        "query_id": "q1",
        "evidence": [
            {"step": "s1", "tool": "search", "entities": ["NYC"]},
            {"step": "s2", "tool": "search", "entities": ["NYC", "LAX"]},
            {"step": "s3", "tool": "book", "entities": []},
        ],
    },
    {
        "episode_id": "e1",
        "query_id": "q2",
        "evidence": [
            {"step": "s4", "tool": "a", "entities": []},
            {"step": "s5", "tool": None, "entities": []},
        ],
    },
]
HEADER = "episode_id,query_id,method,budget,seed,retrieved,tokens\n"
RETRIEVALS = (
    HEADER + "e1,q1,new,256,0,s1;s2;s9,200\ne1,q1,old,256,0,s1 s7,100\ne1,q2,new,256,0,,0\n"
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def evidence_file(tmp_path, items=EVIDENCE, name="ev.jsonl"):
    return write(tmp_path / name, "".join(json.dumps(e) + "\n" for e in items))


class TestReadEvidence:
    # -- Input validation --
    def test_missing_file(self, tmp_path):
        with pytest.raises(FileNotFoundError, match=r"evidence file '.*nope.jsonl' does not exist"):
            read_evidence(tmp_path / "nope.jsonl")

    def test_extension(self, tmp_path):
        with pytest.raises(ValueError, match=r"unknown extension '.txt'"):
            read_evidence(write(tmp_path / "ev.txt", "x"))

    def test_invalid_json_names_line(self, tmp_path):
        path = write(tmp_path / "ev.jsonl", json.dumps(EVIDENCE[0]) + "\n\n{oops\n")
        with pytest.raises(ValueError, match=r"ev.jsonl', line 3: invalid JSON"):
            read_evidence(path)

    def test_not_an_object(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 1: expected a JSON object"):
            read_evidence(write(tmp_path / "ev.jsonl", "[1, 2]\n"))

    def test_missing_columns(self, tmp_path):
        with pytest.raises(
            ValueError,
            match=r"missing required columns \['evidence'\]; found columns \['episode_id', "
            r"'query_id', 'steps'\]",
        ):
            read_evidence(
                evidence_file(tmp_path, [{"episode_id": "e", "query_id": "q", "steps": []}])
            )

    def test_missing_id(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 1: `query_id` is missing"):
            read_evidence(evidence_file(tmp_path, [{**EVIDENCE[0], "query_id": ""}]))

    def test_query_listed_twice(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 2: query e1/q1 already listed at .*line 1"):
            read_evidence(evidence_file(tmp_path, [EVIDENCE[0], EVIDENCE[0]]))

    def test_evidence_not_a_list(self, tmp_path):
        with pytest.raises(ValueError, match=r"`evidence` must be a list of steps; got 's1'"):
            read_evidence(evidence_file(tmp_path, [{**EVIDENCE[0], "evidence": "s1"}]))

    def test_step_without_id(self, tmp_path):
        bad = {**EVIDENCE[0], "evidence": [{"tool": "a"}]}
        with pytest.raises(ValueError, match=r"evidence\[0\] must be an object with a `step`"):
            read_evidence(evidence_file(tmp_path, [bad]))

    def test_entities_string(self, tmp_path):
        bad = {**EVIDENCE[0], "evidence": [{"step": "s1", "entities": "NYC"}]}
        with pytest.raises(ValueError, match=r"evidence\[0\].entities must be a list of strings"):
            read_evidence(evidence_file(tmp_path, [bad]))

    def test_duplicate_steps(self, tmp_path):
        bad = {**EVIDENCE[0], "evidence": [{"step": "s1"}, {"step": "s1"}]}
        with pytest.raises(ValueError, match=r"query e1/q1 \(.*line 1\) lists evidence steps 's1'"):
            read_evidence(evidence_file(tmp_path, [bad]))

    def test_no_steps(self, tmp_path):
        with pytest.raises(ValueError, match=r"query e1/q1 has no evidence steps"):
            read_evidence(evidence_file(tmp_path, [{**EVIDENCE[0], "evidence": []}]))

    # -- Parsing --
    def test_cells_follow_label_cell(self, tmp_path):
        ev = read_evidence(evidence_file(tmp_path))
        for item in EVIDENCE:
            steps = item["evidence"]
            expected = label_cell([s["tool"] for s in steps], [set(s["entities"]) for s in steps])
            assert ev[("default", item["episode_id"], item["query_id"])].cell == expected.value

    def test_csv_long_form_equals_jsonl(self, tmp_path):
        lines = ["episode_id,query_id,step,tool,entities"]
        for item in EVIDENCE:
            for s in item["evidence"]:
                lines.append(
                    f"{item['episode_id']},{item['query_id']},{s['step']},{s['tool'] or ''},"
                    + ";".join(s["entities"])
                )
        csv = read_evidence(write(tmp_path / "ev.csv", "\n".join(lines) + "\n"))
        assert csv.keys() == read_evidence(evidence_file(tmp_path)).keys()
        for key, ev in read_evidence(evidence_file(tmp_path)).items():
            assert (csv[key].steps, csv[key].tools, csv[key].entities) == (
                ev.steps,
                ev.tools,
                ev.entities,
            )


class TestRecordsFromRetrievals:
    def load(self, tmp_path, text=RETRIEVALS, **kw):
        return records_from_retrievals(
            write(tmp_path / "ret.csv", text), evidence_file(tmp_path), **kw
        )

    # -- Input validation --
    def test_missing_columns(self, tmp_path):
        with pytest.raises(
            ValueError, match=r"missing required columns \['retrieved'\]; found columns"
        ):
            self.load(tmp_path, "episode_id,query_id,method,budget\ne1,q1,a,1\n")

    def test_missing_method(self, tmp_path):
        with pytest.raises(ValueError, match=r"ret.csv', line 2: `method` is missing"):
            self.load(tmp_path, HEADER + "e1,q1,,256,0,s1,1\n")

    def test_budget_not_integer(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 2: `budget` must be an integer; got '2.5'"):
            self.load(tmp_path, HEADER + "e1,q1,new,2.5,0,s1,1\n")

    def test_duplicate_retrieval(self, tmp_path):
        with pytest.raises(
            ValueError, match=r"line 3: duplicate retrieval of e1/q1 by 'new' .*also at .*line 2"
        ):
            self.load(tmp_path, HEADER + "e1,q1,new,256,0,s1,1\ne1,q1,new,256,0,s2,1\n")

    def test_unknown_queries_listed(self, tmp_path):
        with pytest.raises(
            ValueError,
            match=r"2 retrievals are of queries absent from the evidence file .*: e1/q9 "
            r"\(line 2\), e2/q1 \(line 3\)",
        ):
            self.load(tmp_path, HEADER + "e1,q9,new,256,0,s1,1\ne2,q1,new,256,0,s1,1\n")

    def test_step_retrieved_twice(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 2: step ids 's1' are retrieved more than"):
            self.load(tmp_path, HEADER + "e1,q1,new,256,0,s1;s2;s1,1\n")

    def test_tokens_not_a_number(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 2: `tokens` must be a number; got 'many'"):
            self.load(tmp_path, HEADER + "e1,q1,new,256,0,s1,many\n")

    def test_negative_tokens(self, tmp_path):
        with pytest.raises(ValueError, match=r"`tokens` must be finite and >= 0; got -3.0"):
            self.load(tmp_path, HEADER + "e1,q1,new,256,0,s1,-3\n")

    def test_over_budget(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 2: e1/q1 by 'new' costs 300 tokens, over its"):
            self.load(tmp_path, HEADER + "e1,q1,new,256,0,s1,300\n")

    def test_hit_k(self, tmp_path):
        with pytest.raises(ValueError, match=r"`hit_k` must be positive integers; got \[0\]"):
            self.load(tmp_path, hit_k=[0])

    # -- Values --
    def test_metrics(self, tmp_path):
        loaded = self.load(tmp_path, hit_k=(1, 2))
        rec = validate_records(loaded.records).set_index(["query_id", "method", "metric"])
        v = rec["value"]
        # q1 evidence s1, s2, s3: 'new' retrieved s1, s2 (2 of 3), 'old' s1 (1 of 3)
        assert v[("q1", "new", "hit@2")] == 1 and v[("q1", "new", "recall")] == 2 / 3
        assert v[("q1", "old", "hit@2")] == 0 and v[("q1", "old", "hit@1")] == 1
        assert v[("q1", "old", "recall")] == 1 / 3 and v[("q1", "new", "tokens")] == 200
        assert v[("q2", "new", "recall")] == 0  # an empty retrieval is valid: nothing found
        assert set(rec.loc["q1", "cell"]) == {"T+E+"} and set(rec.loc["q2", "cell"]) == {"T-E-"}
        assert loaded.exclusions == ()

    def test_separators(self, tmp_path):
        text = (
            HEADER
            + 'e1,q1,new,256,0,"s1, s2",1\ne1,q1,old,256,0,s1;s2,1\ne1,q2,new,256,0,s4 s5,1\n'
        )
        rec = self.load(tmp_path, text).records
        assert rec[rec["metric"] == "recall"]["value"].tolist() == [2 / 3, 2 / 3, 1.0]

    def test_unretrieved_evidence_is_counted(self, tmp_path):
        loaded = self.load(tmp_path, HEADER + "e1,q1,new,256,0,s1,1\n")
        (exc,) = loaded.exclusions
        assert exc.ids == ("e1/q2",) and "1 evidence queries that no retrieval covers" in str(exc)

    def test_jsonl_lists_and_parquet(self, tmp_path):
        rows = [
            {"episode_id": "e1", "query_id": "q1", "method": "new", "budget": 256,
             "retrieved": ["s1", "s2", "s9"]},
            {"episode_id": "e1", "query_id": "q2", "method": "new", "budget": 256,
             "retrieved": []},
        ]  # fmt: skip
        jl = write(tmp_path / "r.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
        pd.DataFrame(rows).to_parquet(tmp_path / "r.parquet")
        ev = evidence_file(tmp_path)
        a = records_from_retrievals(jl, ev).records
        b = records_from_retrievals(tmp_path / "r.parquet", ev).records
        pd.testing.assert_frame_equal(a, b)
        assert a["value"].tolist() == [1.0, 2 / 3, 0.0, 0.0]


def trec(tmp_path, run, qrels):
    return write(tmp_path / "run.txt", run), write(tmp_path / "qrels.txt", qrels)


RUN = "e1/q1 Q0 s1 1 3.0 new\ne1/q1 Q0 s9 2 2.0 new\ne1/q1 Q0 s2 3 1.0 new\n"
QRELS = "e1/q1 0 s1 1\ne1/q1 0 s2 2\ne1/q1 0 s3 1\ne1/q1 0 s8 0\n"


class TestRecordsFromTrec:
    # -- Input validation --
    def test_wrong_field_count(self, tmp_path):
        run, qrels = trec(tmp_path, "e1/q1 Q0 s1 1 new\n", QRELS)
        with pytest.raises(
            ValueError,
            match=r"run file '.*run.txt', line 1: expected 6 whitespace-separated fields "
            r"\(qid Q0 docid rank score tag\); got 5",
        ):
            records_from_trec(run, qrels, depths=[2])

    def test_qrels_relevance(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, "e1/q1 0 s1 yes\n")
        with pytest.raises(ValueError, match=r"qrels.txt', line 1: relevance must be an integer"):
            records_from_trec(run, qrels, depths=[2])

    def test_qrels_judged_twice(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, "e1/q1 0 s1 1\ne1/q1 0 s1 1\n")
        with pytest.raises(ValueError, match=r"line 2: document 's1' is judged twice"):
            records_from_trec(run, qrels, depths=[2])

    def test_rank_not_integer(self, tmp_path):
        run, qrels = trec(tmp_path, "e1/q1 Q0 s1 first 3.0 new\n", QRELS)
        with pytest.raises(ValueError, match=r"line 1: rank must be an integer and score a number"):
            records_from_trec(run, qrels, depths=[2])

    def test_ranked_twice(self, tmp_path):
        run, qrels = trec(tmp_path, RUN + "e1/q1 Q0 s1 4 0.5 new\n", QRELS)
        with pytest.raises(ValueError, match=r"line 4: document 's1' is ranked twice .* by 'new'"):
            records_from_trec(run, qrels, depths=[2])

    def test_empty_file(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, "\n")
        with pytest.raises(ValueError, match=r"qrels file '.*' is empty"):
            records_from_trec(run, qrels, depths=[2])

    def test_depths(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, QRELS)
        with pytest.raises(ValueError, match=r"`depths` must be positive integers; got \[\]"):
            records_from_trec(run, qrels, depths=[])

    def test_separator(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, QRELS)
        with pytest.raises(ValueError, match="`qid_separator` must be a non-empty string"):
            records_from_trec(run, qrels, depths=[2], qid_separator="")

    def test_no_matching_qids(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, "other 0 s1 1\n")
        with pytest.raises(ValueError, match=r"no run query of .* has relevant documents"):
            records_from_trec(run, qrels, depths=[2])

    def test_evidence_missing_query(self, tmp_path):
        run, qrels = trec(tmp_path, RUN.replace("e1/q1", "e1/q7"), QRELS.replace("q1", "q7"))
        with pytest.raises(ValueError, match=r"has no entry for query e1/q7 \(qid 'e1/q7'\)"):
            records_from_trec(run, qrels, depths=[2], evidence=evidence_file(tmp_path))

    def test_evidence_disagrees_with_qrels(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, "e1/q1 0 s1 1\ne1/q1 0 s2 1\n")
        with pytest.raises(
            ValueError,
            match=r"evidence steps \['s1', 's2', 's3'\] of e1/q1 differ from the relevant "
            r"documents in qrels .*: \['s1', 's2'\]",
        ):
            records_from_trec(run, qrels, depths=[2], evidence=evidence_file(tmp_path))

    # -- Values --
    def test_depth_cutoffs_and_mapping(self, tmp_path):
        run, qrels = trec(tmp_path, RUN, QRELS)
        rec = records_from_trec(run, qrels, depths=[1, 2, 3]).records
        got = rec.set_index(["budget", "metric"])["value"]
        assert got[(1, "recall")] == 1 / 3 and got[(2, "recall")] == 1 / 3
        assert got[(3, "recall")] == 2 / 3 and got[(3, "hit@2")] == 1 and got[(2, "hit@2")] == 0
        assert set(rec["episode_id"]) == {"e1"} and set(rec["query_id"]) == {"q1"}
        assert set(rec["method"]) == {"new"} and rec["cell"].isna().all()

    def test_rank_ties_broken_by_score(self, tmp_path):
        run, qrels = trec(tmp_path, "e1/q1 Q0 s9 1 1.0 new\ne1/q1 Q0 s1 1 2.0 new\n", QRELS)
        rec = records_from_trec(run, qrels, depths=[1]).records
        assert rec.set_index("metric")["value"]["recall"] == 1 / 3  # s1 (higher score) first

    def test_qid_without_separator_is_its_own_episode(self, tmp_path):
        run, qrels = trec(tmp_path, RUN.replace("e1/q1", "Q1"), QRELS.replace("e1/q1", "Q1"))
        rec = records_from_trec(run, qrels, depths=[2]).records
        assert set(rec["episode_id"]) == {"Q1"} and set(rec["query_id"]) == {"Q1"}

    def test_exclusions_are_counted(self, tmp_path):
        run, qrels = trec(
            tmp_path,
            RUN + "e2/q1 Q0 s1 1 1.0 new\n",
            QRELS + "e3/q1 0 s1 0\ne4/q1 0 s1 1\n",
        )
        loaded = records_from_trec(run, qrels, depths=[2])
        reasons = {e.reason: e.ids for e in loaded.exclusions}
        assert reasons == {
            "judged queries without relevant documents": ("e3/q1",),
            "run queries absent from the qrels": ("e2/q1",),
            "judged queries that no run ranks": ("e4/q1",),
        }

    def test_same_records_as_the_retrievals(self):
        """The example run ranks exactly the example retrievals: depth 8 = all 8 steps."""
        a = records_from_retrievals(EXAMPLES / "retrievals.csv", EXAMPLES / "evidence.jsonl")
        b = records_from_trec(
            EXAMPLES / "run.trec",
            EXAMPLES / "qrels.txt",
            depths=[8],
            evidence=EXAMPLES / "evidence.jsonl",
        )
        keys = ["episode_id", "query_id", "method", "metric"]
        left = a.records[a.records["metric"] != "tokens"].sort_values(keys).reset_index(drop=True)
        right = b.records.sort_values(keys).reset_index(drop=True)
        assert left[[*keys, "cell", "value"]].equals(right[[*keys, "cell", "value"]])


def test_trec_depths_accepts_one_int(tmp_path):
    from osustat.io.trec import records_from_trec

    (tmp_path / "run.txt").write_text("e1/q1 Q0 s3 1 9.1 osu\ne1/q1 Q0 s5 2 8.0 osu\n")
    (tmp_path / "qrels.txt").write_text("e1/q1 0 s3 1\ne1/q1 0 s8 1\n")
    rec = records_from_trec(tmp_path / "run.txt", tmp_path / "qrels.txt", depths=10).records
    assert set(rec["budget"]) == {10}
    assert rec.loc[rec["metric"] == "recall", "value"].tolist() == [0.5]


def test_trec_ties_follow_trec_eval(tmp_path):
    """Equal scores: docid descending first (trec_eval), whatever the rank column says."""
    from osustat.io.trec import records_from_trec

    (tmp_path / "run.txt").write_text("q Q0 a 1 5.0 m\nq Q0 b 2 5.0 m\nq Q0 c 3 1.0 m\n")
    (tmp_path / "qrels.txt").write_text("q 0 b 1\n")
    loaded = records_from_trec(tmp_path / "run.txt", tmp_path / "qrels.txt", depths=1)
    rec = loaded.records
    assert rec.loc[rec["metric"] == "recall", "value"].tolist() == [1.0]  # b before a
    assert "1 of 1 rankings" in loaded.warnings[0]
    by_rank = records_from_trec(
        tmp_path / "run.txt", tmp_path / "qrels.txt", depths=1, order="rank"
    ).records
    assert by_rank.loc[by_rank["metric"] == "recall", "value"].tolist() == [0.0]
