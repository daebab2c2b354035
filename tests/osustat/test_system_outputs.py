"""Reading systems' output files through mappings and joining them to a question table.

Fixtures are small files written here in the two shipped layouts (mem0's results.json, Zep's
grades) and in layouts invented for the tests; the question table is made here too (two
conversations, an excluded question, a text asked twice).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from osustat.io.join import BenchmarkQuestion, QuestionTable, join_answers
from osustat.io.mapping import load_mapping, shipped_mappings
from osustat.io.outputs import read_answers, read_score

# conversation c0: q0 (cat 1), q1 (cat 5, excluded), q2 (cat 2), q3 = same text as q0 (cat 4)
# conversation c1: q0 (cat 3), q1 (cat 1)
_QS = {
    "c0": [
        ("What did Ann bake?", 1, ("D1:1", "D1:2"), "T+E-"),
        ("Who is the president of Mars?", 5, (), None),
        ("When did Ann move?", 2, ("D2:1",), None),
        ("What did Ann bake?", 4, ("D3:1", "D4:2"), "T-E-"),
    ],
    "c1": [("Where is Bo from?", 3, ("D1:4", "D1:9"), "T+E+"), ("Bo's dog?", 1, ("D2:2",), None)],
}


def _table() -> QuestionTable:
    out = []
    for conv, qs in _QS.items():
        k = 0
        for i, (text, cat, ev, cell) in enumerate(qs):
            ok = cat != 5
            out.append(
                BenchmarkQuestion(
                    conversation=conv,
                    query_id=f"{conv}/qa{i}",
                    position=i,
                    answerable_position=k if ok else None,
                    text=text,
                    strata=(f"cat{cat}", *([cell] if cell else [])),
                    cell=cell,
                    evidence=ev,
                    excluded=None if ok else "category 5",
                    attributes={"category": str(cat)},
                )
            )
            k += ok
    return QuestionTable("bench", tuple(_QS), tuple(out))


# graded answers per answerable question, in order: (conversation, text, judge, f1)
_GRADES = [
    ("c0", "What did Ann bake?", 1, 0.5),
    ("c0", "When did Ann move?", 0, 0.0),
    ("c0", "what did  ann bake?", 1, 1.0),  # case and whitespace differ: still the same text
    ("c1", "Where is Bo from?", 0, 0.25),
    ("c1", "Bo's dog?", 1, 0.75),
]


def _cat(conv: str, k: int) -> int:
    qs = [q for q in _QS[conv] if q[1] != 5]
    return qs[k][1]


def _mem0_layout(path, grades=_GRADES):
    data: dict[str, list] = {}
    for conv, text, judge, f1 in grades:
        items = data.setdefault(str(list(_QS).index(conv)), [])
        cat = _cat(conv, len(items))
        items.append(
            {
                "question": text,
                "answer": "gold",
                "response": "x",
                "category": str(cat),
                "bleu_score": f1 / 2,
                "f1_score": f1,
                "llm_score": judge,
            }
        )
    path.write_text(json.dumps(dict(reversed(list(data.items())))))  # keys out of order
    return path


def _zep_layout(path, grades=_GRADES):
    data: dict[str, list] = {}
    for conv, text, judge, _ in grades:
        items = data.setdefault(f"locomo_experiment_user_{list(_QS).index(conv)}", [])
        cat = _cat(conv, len(items))
        items.append(
            {
                "question": text,
                "answer": "a",
                "golden_answer": "g",
                "grade": bool(judge),
                "category": cat,
            }
        )
    path.write_text(json.dumps(data))
    return path


def _records(path, mapping, system):
    m = load_mapping(mapping)
    return join_answers(read_answers(path, m, system=system), _table(), m, system=system)


def _key(df):
    cols = ["episode_id", "query_id", "method", "budget", "metric", "value", "cell"]
    return df[cols].sort_values(cols[:5]).reset_index(drop=True)


def test_shipped_readers_are_mappings():
    assert {"mem0", "zep"} <= set(shipped_mappings())


def test_named_readers_give_the_records_of_the_general_reader_on_other_layouts(tmp_path):
    mem0 = _records(_mem0_layout(tmp_path / "results.json"), "mem0", "mem0")
    zep = _records(_zep_layout(tmp_path / "grades.json"), "zep", "zep")
    # the same answers as a CSV (mem0) and JSON Lines (zep), described by general mappings
    rows = []
    for conv, text, judge, f1 in _GRADES:
        rows.append(
            {"conv": conv, "q": text, "ok": "True" if judge else "False", "f1": f1, "bleu": f1 / 2}
        )
    pd.DataFrame(rows).to_csv(tmp_path / "flat.csv", index=False)
    (tmp_path / "flat.toml").write_text(
        'conversation = "conv"\nquestion = "text"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "ok", read = "binary" }\n'
        'f1 = { field = "f1", read = "number" }\nbleu = { field = "bleu", read = "number" }\n'
    )
    flat = _records(tmp_path / "flat.csv", str(tmp_path / "flat.toml"), "mem0")
    pd.testing.assert_frame_equal(_key(mem0.records), _key(flat.records))
    with open(tmp_path / "flat.jsonl", "w") as fh:
        for i, (conv, text, judge, _) in enumerate(_GRADES):
            fh.write(json.dumps({"c": conv, "n": i, "q": text, "g": judge}) + "\n")
    (tmp_path / "z.toml").write_text(
        'conversation = "c"\nquestion = "position"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    zflat = _records(tmp_path / "flat.jsonl", str(tmp_path / "z.toml"), "zep")
    pd.testing.assert_frame_equal(_key(zep.records), _key(zflat.records))
    judge = zep.records[zep.records["metric"] == "judge"]
    assert judge["value"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    # strata: categories as written, cells only where the question has one
    got = set(zep.records["metric"])
    assert got == {
        "judge",
        "judge.cat1",
        "judge.cat2",
        "judge.cat3",
        "judge.cat4",
        "judge.t+e-",
        "judge.t-e-",
        "judge.t+e+",
        "judge.cells",
    }
    cells = zep.records[zep.records["metric"] == "judge.cells"]
    assert cells["query_id"].tolist() == ["c0/qa0", "c0/qa3", "c1/qa0"]
    assert zep.records.loc[zep.records["metric"] == "judge", "cell"].isna().all()


def test_the_declared_format_decides_not_the_extension(tmp_path):
    """A CSV named .txt, JSON Lines named .json, Parquet named .dat: the mapping's `format`
    reads them (they were refused: "unknown extension"); without `format`, the extension."""
    rows = [{"c": conv, "q": text, "g": judge} for conv, text, judge, _ in _GRADES]
    want = None
    for fmt, name in (("csv", "a.txt"), ("jsonl", "a.json"), ("parquet", "a.dat")):
        frame = pd.DataFrame(rows)
        if fmt == "csv":
            frame.to_csv(tmp_path / name, index=False)
        elif fmt == "parquet":
            frame.to_parquet(tmp_path / name)
        else:
            frame.to_json(tmp_path / name, orient="records", lines=True)
        (tmp_path / "m.toml").write_text(
            f'format = "{fmt}"\nconversation = "c"\nquestion = "position"\ntext_field = "q"\n'
            '[scores]\njudge = { field = "g", read = "binary" }\n'
        )
        got = _key(_records(tmp_path / name, str(tmp_path / "m.toml"), "s").records)
        if want is not None:
            pd.testing.assert_frame_equal(got, want)
        want = got
    assert len(want) > 0
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "position"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    with pytest.raises(ValueError, match=r"a.txt': unknown format 'txt'; set `format`"):
        _records(tmp_path / "a.txt", str(tmp_path / "m.toml"), "s")


def test_a_flat_json_list_counts_positions_per_conversation_as_json_lines_do(tmp_path):
    """A new user's flat JSON list (c1's answers after c0's) joined by position put c1's
    first answer at c1's place 4 — the list index — and reported c1/qa0 "not answered": a
    silent wrong join. Positions are counted per conversation in every flat layout."""
    rows = [{"c": conv, "g": judge} for conv, _, judge, _ in _GRADES]
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with open(tmp_path / "a.jsonl", "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "position"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    flat = _records(tmp_path / "a.json", str(tmp_path / "m.toml"), "s")
    lines = _records(tmp_path / "a.jsonl", str(tmp_path / "m.toml"), "s")
    pd.testing.assert_frame_equal(_key(flat.records), _key(lines.records))
    judge = flat.records[flat.records["metric"] == "judge"]
    assert judge["query_id"].tolist() == ["c0/qa0", "c0/qa2", "c0/qa3", "c1/qa0", "c1/qa1"]
    assert judge["value"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]


def test_repeated_text_matched_by_position_and_by_occurrence(tmp_path):
    zep = _records(_zep_layout(tmp_path / "g.json"), "zep", "zep").records
    j = zep[zep["metric"] == "judge"].set_index("query_id")["category"]
    assert j["c0/qa0"] == "1" and j["c0/qa3"] == "4"  # the text asked twice, two questions


def test_repeated_text_answered_once_by_text_is_ambiguous(tmp_path):
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"c": "c0", "q": "What did Ann bake?", "g": 1}) + "\n"
    )
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    with pytest.raises(ValueError, match=r"line 1.*asked 2 times.*answered 1 times: ambiguous"):
        _records(tmp_path / "a.jsonl", str(tmp_path / "m.toml"), "s")


def test_a_text_asked_again_in_an_excluded_question_is_matched_among_the_answerable(tmp_path):
    """LoCoMo's conv-30 asks a text in category 4 and again in category 5 (excluded); harnesses
    answer it once. Among the answerable questions the text is unique: that one is matched.
    A text asked twice among the answerable and answered once stays ambiguous."""
    base = _table()
    extra = [
        BenchmarkQuestion(conv, f"{conv}/qa{i}", i, None, text, ("cat5",), excluded="cat 5")
        for conv, i, text in [("c1", 2, "Bo's dog?"), ("c0", 4, "What did Ann bake?")]
    ]
    table = QuestionTable("bench", base.conversations, (*base.questions, *extra))
    rows = [
        {"c": "c1", "q": "bo's dog?", "g": 1},
        {"c": "c1", "q": "Where is Bo from?", "g": 0},
    ]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    m = load_mapping(str(tmp_path / "m.toml"))
    joined = join_answers(read_answers(tmp_path / "a.jsonl", m, system="s"), table, m, system="s")
    judge = joined.records[joined.records["metric"] == "judge"].set_index("query_id")["value"]
    assert judge.to_dict() == {"c1/qa0": 0.0, "c1/qa1": 1.0}
    assert joined.coverage.excluded_answered == () and joined.coverage.excluded_total == 3
    # answered as often as asked (the excluded one too): by occurrence, the excluded counted
    rows.append({"c": "c1", "q": "Bo's dog?", "g": 0})
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    joined = join_answers(read_answers(tmp_path / "a.jsonl", m, system="s"), table, m, system="s")
    assert joined.coverage.excluded_answered == ("c1/qa2",)
    # c0 asks "What did Ann bake?" twice among its answerable questions: still ambiguous
    rows = [{"c": "c0", "q": "What did Ann bake?", "g": 1}]
    (tmp_path / "a.jsonl").write_text(json.dumps(rows[0]) + "\n")
    with pytest.raises(ValueError, match=r"line 1: .* 3 times in conversation c0 \(2 of them ans"):
        join_answers(read_answers(tmp_path / "a.jsonl", m, system="s"), table, m, system="s")


def test_text_mismatch_names_file_position_and_both_texts(tmp_path):
    bad = list(_GRADES)
    bad[1] = ("c0", "When did Ann leave?", 0, 0.0)
    path = _mem0_layout(tmp_path / "r.json", bad)
    with pytest.raises(ValueError) as err:
        _records(path, "mem0", "mem0")
    msg = str(err.value)
    assert "r.json" in msg and "conversation '0', answer 1" in msg
    assert "'When did Ann leave?'" in msg and "'When did Ann move?'" in msg


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"llm_score": "maybe"},
            r"answer 0 \(question 'Where is Bo from\?'\): field `llm_score` is not a binary "
            r"score; got 'maybe' \(binary reads true/false, yes/no, 1/0; a judge's own labels",
        ),
        ({"llm_score": 2}, r"answer 0 \(question .*\): field `llm_score` is not a binary score"),
        ({"f1_score": "n/a"}, r"answer 0 \(question .*\): field `f1_score` is not a number score"),
        ({"llm_score": None}, r"answer 0: field `llm_score` is null\.$"),
        ({"llm_score": " "}, r"answer 0: field `llm_score` is empty\.$"),
        ({"llm_score": float("nan")}, r"answer 0: field `llm_score` is NaN\.$"),
        (
            {"category": "2"},
            r"answer 0: field `category` is '2'; the benchmark's category of c1/qa0 is '3'",
        ),
    ],
)
def test_layout_errors_name_file_position_and_field(tmp_path, change, expected):
    path = _mem0_layout(tmp_path / "r.json")
    data = json.loads(path.read_text())
    data["1"][0].update(change)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=expected):
        _records(path, "mem0", "mem0")


def test_a_missing_field_a_bom_and_another_harness_s_file(tmp_path, capsys):
    """Absent is "missing"; another shipped reader's fields name that reader; a UTF-8 BOM is
    read (JSON, JSON Lines); a path that does not exist says so, a folder is not a file."""
    from osustat.cli.main import main

    path = _mem0_layout(tmp_path / "r.json")
    data = json.loads(path.read_text())
    del data["1"][0]["llm_score"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"answer 0: field `llm_score` is missing\.$"):
        _records(path, "mem0", "mem0")
    zep = _zep_layout(tmp_path / "g.json")
    with pytest.raises(ValueError, match=r"`llm_score` is missing\. .* Try --reader mem0=zep\.$"):
        _records(zep, "mem0", "mem0")
    mem0 = _mem0_layout(tmp_path / "r.json")
    with pytest.raises(ValueError, match=r"conversation_pattern.* Try --reader zep=mem0\.$"):
        _records(mem0, "zep", "zep")
    want = _key(_records(zep, "zep", "zep").records)
    zep.write_bytes(b"\xef\xbb\xbf" + zep.read_bytes())
    pd.testing.assert_frame_equal(_key(_records(zep, "zep", "zep").records), want)
    rows = [{"c": conv, "q": text, "g": judge} for conv, text, judge, _ in _GRADES]
    (tmp_path / "a.jsonl").write_text("\ufeff" + "".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\ntext_field = "q"\n[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    assert _records(tmp_path / "a.jsonl", str(tmp_path / "m.toml"), "s").coverage.answered == 5
    for given, said in ((tmp_path / "none.json", "does not exist"), (tmp_path, "is not a file")):
        assert main(["import", f"zep={given}", "--out", str(tmp_path / "o.csv")]) == 2
        assert f"zep file {str(given)!r} {said}" in capsys.readouterr().err


def test_unknown_conversation_and_position_past_the_end(tmp_path):
    path = _zep_layout(tmp_path / "g.json")
    data = json.loads(path.read_text())
    data["locomo_experiment_user_7"] = data.pop("locomo_experiment_user_1")
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"conversation '7' is not an index 0-1"):
        _records(path, "zep", "zep")
    data = json.loads(_zep_layout(tmp_path / "g.json").read_text())
    data["locomo_experiment_user_1"].append(dict(data["locomo_experiment_user_1"][0]))
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"answer 2: position 2 is past the 2 answerable"):
        _records(path, "zep", "zep")


_NOT_PLAIN = r"is not an index 0-1 .*no sign, space or leading zero"
_NOT_DIGITS = r"does not match `conversation_pattern`"


@pytest.mark.parametrize(
    ("key", "said"),
    [("01", _NOT_PLAIN), ("\u0661", _NOT_PLAIN), ("0_1", _NOT_DIGITS), (" 1", _NOT_DIGITS)],
)
def test_a_conversation_index_is_written_plainly(tmp_path, key, said):
    # a red team (stop 57): int() read "01", "0_1", " 1" and Arabic-Indic digits as
    # conversation 1, so two keys could name one conversation (the zep mapping's pattern
    # refuses what is not digits; Python's \d matches other scripts' digits too)
    path = _zep_layout(tmp_path / "g.json")
    data = json.loads(path.read_text())
    data[f"locomo_experiment_user_{key}"] = data.pop("locomo_experiment_user_1")
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=said):
        _records(path, "zep", "zep")


def test_partial_coverage_is_counted(tmp_path):
    path = _zep_layout(tmp_path / "g.json", _GRADES[:2])  # conversation c0's first two only
    cov = _records(path, "zep", "zep").coverage
    assert (cov.answers, cov.answered, cov.excluded_total) == (2, 2, 1)
    assert cov.not_answered == ("c0/qa3", "c1/qa0", "c1/qa1")
    assert "3 not answered" in cov.lines()[0]


def test_retrieved_ids_become_hit_and_recall_at_each_depth(tmp_path):
    rows = [
        {"c": "c1", "q": "Where is Bo from?", "ids": "D1:9 D9:9 D1:4"},
        {"c": "c1", "q": "Bo's dog?", "ids": "D2:2"},
    ]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\n'
        'retrieved = { field = "ids", depths = [1, 3], hit_k = [1, 2] }\n'
    )
    rec = _records(tmp_path / "r.jsonl", str(tmp_path / "m.toml"), "s").records
    base = rec[~rec["metric"].str.contains(r"\.")]
    got = {(q, b, m): v for q, b, m, v in base[["query_id", "budget", "metric", "value"]].values}
    assert got[("c1/qa0", 1, "recall")] == 0.5 and got[("c1/qa0", 1, "hit@2")] == 0.0
    assert got[("c1/qa0", 3, "recall")] == 1.0 and got[("c1/qa0", 3, "hit@2")] == 1.0
    assert got[("c1/qa1", 1, "hit@1")] == 1.0 and got[("c1/qa1", 1, "hit@2")] == 0.0


def test_read_score_readings():
    assert [read_score(v, "binary") for v in (True, False, "True", "false", 1, 0, "1", "yes")] == [
        1.0,
        0.0,
        1.0,
        0.0,
        1.0,
        0.0,
        1.0,
        1.0,
    ]
    assert read_score(0.3, "binary") is None and read_score("inf", "number") is None
    assert read_score(3, "number") == 3.0


def test_bad_mappings_are_refused(tmp_path):
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "id"\n[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    with pytest.raises(ValueError, match=r'`question = "id"` needs `id_field`'):
        load_mapping(str(tmp_path / "m.toml"))
    (tmp_path / "m.toml").write_text('conversation = "c"\nscore = 1\n')
    with pytest.raises(ValueError, match=r"unknown keys \['score'\]"):
        load_mapping(str(tmp_path / "m.toml"))
    with pytest.raises(ValueError, match="neither a file nor a shipped reader"):
        load_mapping("nonesuch")
    # a review (stop 57): depths = [3, 3] wrote every row twice
    (tmp_path / "m.toml").write_text(
        'format = "trec"\nconversation = "qid"\nconversation_pattern = "^([^/]+)/"\n'
        'retrieved = { field = "ids", depths = [3, 3], hit_k = [2] }\n'
    )
    with pytest.raises(ValueError, match=r"`depths` names 3 twice"):
        load_mapping(str(tmp_path / "m.toml"))


def test_a_trec_run_against_turn_ids_becomes_hit_and_recall(tmp_path):
    # ranks deliberately disagree with scores: trec_eval's order (score descending) decides
    (tmp_path / "run.trec").write_text(
        "c1/qa0 Q0 D1:4 1 0.2 sys\nc1/qa0 Q0 D7:7 2 0.9 sys\nc1/qa0 Q0 D1:9 3 0.5 sys\n"
        "c0/qa3 Q0 D3:1 1 0.9 sys\n"
    )
    (tmp_path / "m.toml").write_text(
        'format = "trec"\nconversation = "qid"\nconversation_pattern = "^([^/]+)/"\n'
        'question = "id"\nid_field = "qid"\n'
        'retrieved = { field = "retrieved", depths = [2, 3], hit_k = [2] }\n'
    )
    joined = _records(tmp_path / "run.trec", str(tmp_path / "m.toml"), "sys")
    rec = joined.records
    base = rec[~rec["metric"].str.contains(r"\.")]
    got = {(q, b, m): v for q, b, m, v in base[["query_id", "budget", "metric", "value"]].values}
    assert got[("c1/qa0", 2, "recall")] == 0.5 and got[("c1/qa0", 3, "hit@2")] == 1.0
    assert got[("c0/qa3", 2, "recall")] == 0.5
    assert joined.coverage.answered == 2 and len(joined.coverage.not_answered) == 3
    (tmp_path / "run.trec").write_text("c1/qa0 Q0 D1:4 1 0.2 a\nc1/qa0 Q0 D1:9 2 0.1 b\n")
    with pytest.raises(ValueError, match=r"run.trec', line 2: a second run tag 'b'"):
        _records(tmp_path / "run.trec", str(tmp_path / "m.toml"), "sys")
    # a red team (stop 60): a 7-field line was told the qrels layout
    (tmp_path / "run.trec").write_text("c1/qa0 Q0 D1:4 1 0.2 a extra\n")
    with pytest.raises(ValueError, match=r"line 1: expected 6 .*\(qid Q0 docid rank score tag\)"):
        _records(tmp_path / "run.trec", str(tmp_path / "m.toml"), "sys")


def test_one_shared_conversation_gives_no_conversation_level_p(tmp_path):
    from osustat import analyze
    from osustat.cli.import_ import summary

    path = _zep_layout(tmp_path / "g.json", _GRADES[:3])  # conversation c0 only
    joined = _records(path, "zep", "zep")
    other = joined.records.assign(method="other", value=1.0 - joined.records["value"])
    both = pd.concat([joined.records, other], ignore_index=True)
    lines = summary(both, [joined.coverage])
    assert any("1 conversation: conversation-level inference is impossible" in x for x in lines)
    with pytest.raises(ValueError, match=r"share 1 episode.*inference is impossible.*no p"):
        analyze(both, treatment="zep", baseline="other", metrics=["judge"], unit="episode")
    res = analyze(both, treatment="zep", baseline="other", metrics=["judge"], unit="query")
    assert res.comparisons[0].rows[-1].effect.n == 3  # the query level still runs


def test_a_nested_list_joined_by_question_id(tmp_path):
    items = [
        {"conv": "c1", "qid": "c1/qa1", "score": "0.75"},
        {"conv": "c0", "qid": "c0/qa2", "score": 0},
    ]
    (tmp_path / "out.json").write_text(json.dumps({"run": {"meta": 1, "items": items}}))
    (tmp_path / "m.toml").write_text(
        'answers = "run.items"\nconversation = "conv"\nquestion = "id"\nid_field = "qid"\n'
        '[scores]\nf1 = { field = "score", read = "number" }\n'
    )
    rec = _records(tmp_path / "out.json", str(tmp_path / "m.toml"), "s").records
    f1 = rec[rec["metric"] == "f1"].set_index("query_id")["value"]
    assert f1.to_dict() == {"c1/qa1": 0.75, "c0/qa2": 0.0}
    items[1]["qid"] = "c1/qa0"  # a question of another conversation
    (tmp_path / "out.json").write_text(json.dumps({"run": {"items": items}}))
    with pytest.raises(ValueError, match=r"answer 1: question id 'c1/qa0' is not a question of c"):
        _records(tmp_path / "out.json", str(tmp_path / "m.toml"), "s")
    (tmp_path / "out.json").write_text(json.dumps({"run": {"rows": items}}))
    with pytest.raises(ValueError, match=r"no `run.items` in the file \(missing `items`\)"):
        _records(tmp_path / "out.json", str(tmp_path / "m.toml"), "s")


class _TinyEntryPoint:
    """A benchmark registered in the entry-point group, as another package would."""

    name, value = "tiny", "tests.osustat.test_system_outputs:TINY"

    def load(self):
        from osustat.analyses.protocol import Benchmark, Choices, DataSpec

        class Tiny(Benchmark):
            name, description, data = "tiny", "one conversation", DataSpec("files", "t.json")
            choices = Choices("tiny", (), "none")

            def questions(self, data, choices):
                return _table()

        return Tiny()


def test_cli_refuses_a_file_that_gives_no_records(tmp_path, capsys, monkeypatch):
    from osustat.analyses import registry
    from osustat.cli.main import main

    monkeypatch.setattr(registry, "entry_points", lambda group: [_TinyEntryPoint()])
    (tmp_path / "t.json").write_text("{}")
    (tmp_path / "a.jsonl").write_text(json.dumps({"c": "c0", "q": "Who is the president of Mars?"}))
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\nposition_counts = "all"\n'
        'retrieved = { field = "q" }\n'
    )
    out = tmp_path / "r.csv"
    argv = ["import", f"s={tmp_path / 'a.jsonl'}", "--reader", f"s={tmp_path / 'm.toml'}"]
    argv += ["--benchmark", "tiny", "--data", str(tmp_path / "t.json"), "--out", str(out)]
    assert main(argv) == 2
    assert "gives no records" in capsys.readouterr().err and not out.exists()


def test_a_position_join_without_text_field_says_it_is_unchecked(tmp_path, capsys, monkeypatch):
    """One answer left out of a file joined by position alone moves every later answer to the
    next question, and nothing can notice: the coverage says so (with text_field, it is
    refused)."""
    from osustat.analyses import registry
    from osustat.cli.main import main

    monkeypatch.setattr(registry, "entry_points", lambda group: [_TinyEntryPoint()])
    (tmp_path / "t.json").write_text("{}")
    kept = [g for i, g in enumerate(_GRADES) if i != 1]  # c0's second answer left out
    rows = [{"c": conv, "q": text, "g": judge} for conv, text, judge, _ in kept]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    mapping = 'conversation = "c"\n[scores]\njudge = { field = "g", read = "binary" }\n'
    (tmp_path / "m.toml").write_text(mapping)
    argv = ["import", f"s={tmp_path / 'a.jsonl'}", "--reader", f"s={tmp_path / 'm.toml'}"]
    argv += ["--benchmark", "tiny", "--data", str(tmp_path / "t.json")]
    assert main([*argv, "--out", str(tmp_path / "r.csv")]) == 0
    printed = capsys.readouterr().out
    # wrong, and exit 0: c0/qa2 was left out, its answer went to c0/qa3
    assert "1 not answered" in printed and "not answered: 'c0/qa3'" in printed
    assert (
        "  warning: positions not checked against the question text: declare text_field" in printed
    )
    (tmp_path / "m.toml").write_text('text_field = "q"\n' + mapping)
    with pytest.raises(ValueError, match=r"line 2: question text 'what did  ann bake\?' differs"):
        _records(tmp_path / "a.jsonl", str(tmp_path / "m.toml"), "s")


def test_the_next_step_names_the_query_unit_for_the_cells(tmp_path, capsys, monkeypatch):
    """Records of a benchmark that declares the conversation unit (LoCoMo) are analysed at it
    by default, where no per-cell test runs: the printed query-level step says --unit query."""
    from osustat.analyses import registry
    from osustat.cli.main import main

    monkeypatch.setattr(registry, "entry_points", lambda group: [_TinyEntryPoint()])
    (tmp_path / "t.json").write_text("{}")
    argv = ["import", f"zep={_zep_layout(tmp_path / 'z.json')}"]
    argv += [f"mem0={_mem0_layout(tmp_path / 'm.json')}", "--benchmark", "tiny"]
    argv += ["--data", str(tmp_path / "t.json"), "--out", str(tmp_path / "r.csv")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "--treatment zep --baseline mem0 --unit episode --metric judge,judge.cat1," in err
    assert "the query level beside it: --unit query --metric judge.cells" in err
    # three systems: every pair, oriented as given (a bare --all-pairs sorted them: "mem0 − mine")
    argv[-1] = str(tmp_path / "r3.csv")
    argv.insert(3, f"mine={_zep_layout(tmp_path / 'mine.json')}")
    assert main([*argv, "--reader", "mine=zep"]) == 0
    err = capsys.readouterr().err
    assert (
        "osustat analyze " + str(tmp_path / "r3.csv") + " --treatment zep,mem0,mine --all-pairs"
        in err
    )
    # an option between the systems (a red team, stop 60: "unrecognized arguments: mem0=..."):
    # the same records
    mixed = ["import", argv[1], "--reader", "mine=zep", *argv[2:]]
    mixed[mixed.index(str(tmp_path / "r3.csv"))] = str(tmp_path / "r4.csv")
    assert mixed.index("--reader") < mixed.index(argv[3])  # mine=... after the option
    assert main(mixed) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "r3.csv"), pd.read_csv(tmp_path / "r4.csv")
    )
    with pytest.raises(SystemExit):  # argparse's exit 2: other commands are as they were
        main(["analyze", str(tmp_path / "r3.csv"), "stray"])
    assert "unrecognized arguments: stray" in capsys.readouterr().err


def test_out_in_a_missing_folder_is_created_and_a_file_in_the_way_named(
    tmp_path, capsys, monkeypatch
):
    # a red team (stop 57): `--out` in a folder that did not exist failed naming the hidden
    # temporary file ("Failed to open local file '.../.records.parquet.tmp-17487'")
    from osustat.analyses import registry
    from osustat.cli.main import main

    monkeypatch.setattr(registry, "entry_points", lambda group: [_TinyEntryPoint()])
    (tmp_path / "t.json").write_text("{}")
    argv = ["import", f"zep={_zep_layout(tmp_path / 'z.json')}", "--benchmark", "tiny"]
    argv += ["--data", str(tmp_path / "t.json"), "--out"]
    for suffix in ("parquet", "csv", "jsonl"):
        out = tmp_path / "new" / suffix / f"records.{suffix}"
        assert main([*argv, str(out)]) == 0
        assert out.is_file() and [p.name for p in out.parent.iterdir()] == [out.name]
    (tmp_path / "afile").write_text("")
    assert main([*argv, str(tmp_path / "afile" / "records.csv")]) == 2
    err = capsys.readouterr().err
    assert f"{str(tmp_path / 'afile')!r} is not a folder" in err and ".tmp-" not in err


def test_intersection_keeps_the_questions_every_system_answered_and_counts_the_rest(
    tmp_path, capsys, monkeypatch
):
    """Systems answering different questions: without --intersection the records keep every
    answer and a note names the option (analyze refuses unpaired questions); with it only the
    shared questions are written, each system's dropped questions counted and named."""
    import pandas as pd

    from osustat.analyses import registry
    from osustat.cli.main import main

    monkeypatch.setattr(registry, "entry_points", lambda group: [_TinyEntryPoint()])
    (tmp_path / "t.json").write_text("{}")
    argv = ["import", f"zep={_zep_layout(tmp_path / 'z.json')}"]
    argv += [f"mem0={_mem0_layout(tmp_path / 'm.json', _GRADES[:3])}", "--benchmark", "tiny"]
    argv += ["--data", str(tmp_path / "t.json")]
    assert main([*argv, "--out", str(tmp_path / "all.csv")]) == 0
    captured = capsys.readouterr()
    assert "re-import with --intersection" in captured.err
    assert "--intersection:" not in captured.out
    # the next command printed would fail on these records: it says to re-import first (a
    # red team, stop 57, ran it as printed)
    assert "next, once this import is run again with --intersection --force" in captured.err
    everything = pd.read_csv(tmp_path / "all.csv")
    assert main([*argv, "--intersection", "--out", str(tmp_path / "shared.csv")]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "next, at the conversation unit" in captured.err
    assert "--intersection: kept the 3 questions every system answered" in out
    assert "  mem0: dropped 0 questions" in out
    assert "  zep: dropped 2 questions not every system answered" in out and "'c1/qa0'" in out
    shared = pd.read_csv(tmp_path / "shared.csv")
    assert set(shared["episode_id"]) == {"c0"}
    assert len(shared) == (everything["episode_id"] == "c0").sum()
    # a CSV keeps no notes (said); a Parquet file keeps them and analyze's report repeats them
    assert "a .csv file keeps no notes" in captured.err
    assert main([*argv, "--intersection", "--out", str(tmp_path / "shared.parquet")]) == 0
    assert "keeps no notes" not in capsys.readouterr().err
    cols = ["episode_id", "query_id", "method", "metric", "value"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "shared.parquet")[cols], shared[cols])
    report = tmp_path / "report"
    argv = ["analyze", str(tmp_path / "shared.parquet"), "--treatment", "zep", "--baseline"]
    assert main([*argv, "mem0", "--unit", "query", "--metric", "judge", "--out", str(report)]) == 0
    head = (report / "report.md").read_text().split("\n## ")[0]
    assert (
        "- As `osustat import` wrote these records (kept in the file):\n  - zep: 5 answers;" in head
    )
    assert "\n    - zep: dropped 2 questions not every system answered" in head
    assert "'c1/qa0'" in head
    # a red team (stop 60): rows filtered with pyarrow (its metadata kept) still showed the
    # import's coverage; notes that describe other rows are not repeated, and that is said
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "shared.parquet")
    kept = table.filter(pc.not_equal(table["method"], "mem0"))
    kept = kept.filter(pc.not_equal(kept["query_id"], kept["query_id"][0]))
    pq.write_table(kept, tmp_path / "f.parquet")  # the schema's metadata kept
    from osustat.io.reading import import_notes

    said = import_notes(tmp_path / "f.parquet", kept.num_rows)
    assert len(said) == 1 and said[0].startswith(
        f"(not repeated: the file held {len(shared):,} rows when `osustat import` wrote it and "
        f"holds {kept.num_rows:,} now"
    )
    assert import_notes(tmp_path / "shared.parquet", len(shared))[0].startswith("zep: 5 answers")
    assert import_notes(tmp_path / "f.parquet")[0].startswith("zep: 5 answers")  # not checked


def test_cli_refuses_a_benchmark_without_a_question_table(tmp_path, capsys):
    from osustat.cli.main import main

    (tmp_path / "a.jsonl").write_text("{}")
    argv = ["import", f"zep={tmp_path / 'a.jsonl'}", "--benchmark", "synthetic"]
    argv += ["--out", str(tmp_path / "r.csv")]
    assert main(argv) == 2
    assert "has no question table" in capsys.readouterr().err


@pytest.mark.parametrize(("benchmark", "given", "unit"), [
    ("locomo", None, "episode"), ("locomo", "query", "query"), ("default", None, "query"),
])  # fmt: skip
def test_analyze_takes_the_unit_the_records_benchmark_declares(
    tmp_path, capsys, benchmark, given, unit
):
    """LoCoMo declares the conversation as its unit (its questions share one memory), so
    analyze on LoCoMo-derived records (osustat import's) uses it unless --unit says otherwise;
    records of no registered benchmark keep the query unit, with no note."""
    from osustat.cli.main import main

    rows = [
        (benchmark, f"c{e}", f"c{e}/qa{q}", m, 1, "judge", float(v))
        for e in range(4)
        for q in range(3)
        for m, v in (("zep", (e + q) % 3 != 0), ("mem0", q == 0))
    ]
    cols = ["benchmark", "episode_id", "query_id", "method", "budget", "metric", "value"]
    pd.DataFrame(rows, columns=cols).to_csv(tmp_path / "r.csv", index=False)
    argv = ["analyze", str(tmp_path / "r.csv"), "--treatment", "zep", "--baseline", "mem0"]
    argv += ["--json", "-"] + (["--unit", given] if given else [])
    assert main(argv) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    assert result["unit"] == unit
    declared = unit == "episode"
    assert ("declared unit of locomo records" in out.err) is declared
    assert any(n.startswith("Unit: episode") for n in result["input_notes"]) is declared
    # the query level on such records says what its tests assume (a reviewer read a
    # query-level "significant" against the conversation level's p = .062)
    asked = given == "query" and benchmark == "locomo"
    assert ("treat the queries of one episode as independent" in out.err) is asked
    assert any(n.startswith("Unit: query, asked for") for n in result["input_notes"]) is asked


def test_a_judges_labels_in_a_nested_field_are_declared_and_nothing_else_passes(tmp_path):
    """A new user's harness writes {"judge": {"label": "CORRECT" | "WRONG"}}: the score field
    was top-level only and "CORRECT" not a binary score, so users flattened the file and wrote
    label == "CORRECT", silently reading PARTIALLY_CORRECT as 0. Now a dotted field reaches
    into the object and the judge's labels are declared (both lists: an undeclared label is
    an error naming the answer, its conversation and question, and the labels); a category
    written 2.0 checks against the benchmark's 2."""
    words = {1: "CORRECT", 0: "wrong"}  # case ignored
    rows = [
        {"c": conv, "q": text, "judge": {"label": words[g]}, "cat": float(_cat(conv, k))}
        for conv, k, text, g in (
            (c, sum(1 for x in _GRADES[:i] if x[0] == c), t, g)
            for i, (c, t, g, _) in enumerate(_GRADES)
        )
    ]
    (tmp_path / "a.json").write_text(json.dumps(rows))
    (tmp_path / "m.toml").write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\n[check]\ncategory = "cat"\n'
        '[scores]\njudge = { field = "judge.label", read = "binary", true = ["CORRECT"], '
        'false = ["WRONG"] }\n'
    )
    got = _records(tmp_path / "a.json", str(tmp_path / "m.toml"), "s").records
    judge = got[got["metric"] == "judge"].sort_values("query_id")
    assert judge["value"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    rows[3]["judge"]["label"] = "PARTIALLY_CORRECT"
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError) as err:
        _records(tmp_path / "a.json", str(tmp_path / "m.toml"), "s")
    assert str(err.value).endswith(
        "answer 3 (conversation 'c1', question 'Where is Bo from?'): field `judge.label` is not "
        "a binary score; got 'PARTIALLY_CORRECT'; the mapping's labels: true ['CORRECT'], false "
        "['WRONG'] (case ignored)."
    )
    del rows[3]["judge"]
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError, match=r"answer 3: field `judge.label` is missing \(no such key"):
        _records(tmp_path / "a.json", str(tmp_path / "m.toml"), "s")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ('{ field = "g", read = "binary", true = ["OK"] }', r"`false` must be a non-empty list"),
        ('{ field = "g", read = "number", true = ["a"], false = ["b"] }', r'need read = "binary"'),
        (
            '{ field = "g", read = "binary", true = ["A"], false = ["a"] }',
            r"\['a'\] are in both `true` and `false` \(case ignored\)",
        ),
        ('{ field = "g", read = "binary", true = [], false = ["b"] }', r"`true` must be a non-emp"),
        ('{ field = "g", labels = ["b"] }', r'true = \["CORRECT"\], false = \["WRONG"\]'),
    ],
)
def test_bad_label_declarations_are_refused(tmp_path, spec, expected):
    (tmp_path / "m.toml").write_text(
        f'conversation = "c"\nquestion = "position"\n[scores]\njudge = {spec}\n'
    )
    with pytest.raises(ValueError, match=expected):
        load_mapping(str(tmp_path / "m.toml"))


def test_an_unmatched_text_names_the_closest_question_and_excluded_answers_are_named(tmp_path):
    """A new user's curly apostrophe got "no question of conversation c1 has the text …" with
    nothing to compare it to; an answered excluded question was counted, never named."""
    m = tmp_path / "m.toml"
    m.write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    rows = [{"c": c, "q": t, "g": g} for c, t, g, _ in _GRADES]
    rows.append({"c": "c0", "q": "Who is the president of Mars?", "g": 1})  # category 5
    (tmp_path / "a.json").write_text(json.dumps(rows))
    joined = _records(tmp_path / "a.json", str(m), "s")
    assert joined.coverage.excluded_answered == ("c0/qa1",)
    assert "  answered but excluded, not used: 'c0/qa1'" in joined.coverage.lines()
    rows[4]["q"] = "Bo’s dog?"  # a curly apostrophe
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError) as err:
        _records(tmp_path / "a.json", str(m), "s")
    assert str(err.value).endswith(
        "answer 4: no question of conversation c1 has the text 'Bo’s dog?'; the closest is "
        'c1/qa1 "Bo\'s dog?" (texts are matched exactly, up to whitespace and case).'
    )
    rows[4]["q"] = "Something else entirely?"
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError, match=r"has the text 'Something else entirely\?'\.$"):
        _records(tmp_path / "a.json", str(m), "s")


def test_every_problem_of_a_file_is_said_in_one_run(tmp_path):
    """A new user needed five runs to find five problems of their file: the errors of every
    answer are collected and said together (the first 20, and how many more); one problem is
    said as it was."""
    m = tmp_path / "m.toml"
    m.write_text(
        'conversation = "c"\nquestion = "text"\ntext_field = "q"\n'
        '[scores]\njudge = { field = "g", read = "binary" }\n'
    )
    rows = [{"c": c, "q": t, "g": g} for c, t, g, _ in _GRADES]
    rows[0]["g"] = "maybe"  # a score that is not one (read_answers)
    rows[1]["g"] = "perhaps"
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError) as err:
        _records(tmp_path / "a.json", str(m), "s")
    lines = str(err.value).splitlines()
    assert lines[0].startswith("2 problems in s file ") and "every answer read" in lines[0]
    assert "answer 0 (conversation 'c0', question 'What did Ann bake?')" in lines[1]
    assert "got 'maybe'" in lines[1] and "got 'perhaps'" in lines[2]
    rows[0]["g"], rows[1]["g"] = 1, 0
    rows[3]["c"] = "c9"  # an unknown conversation, a text no question has, a second answer
    rows[4]["q"] = "Who?"
    rows.append(dict(rows[2]))
    (tmp_path / "a.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError) as err:
        _records(tmp_path / "a.json", str(m), "s")
    text = str(err.value)
    assert text.startswith("3 problems in s's answers (every answer joined; nothing written):")
    assert "answer 3: unknown conversation 'c9'" in text
    assert "answer 4: no question of conversation c1 has the text 'Who?'" in text
    assert "answer 0: the text 'What did Ann bake?' is asked 2 times in conversation c0 and " \
        "answered 3 times" in text  # fmt: skip
    many = [{"c": "c9", "q": "x", "g": 1}] * 23
    (tmp_path / "a.json").write_text(json.dumps(many))
    with pytest.raises(ValueError, match=r"(?s)^23 problems in .*\n  \.\.\. and 3 more$"):
        _records(tmp_path / "a.json", str(m), "s")


def test_a_conversation_key_given_twice_is_refused(tmp_path):
    """A hand-merged mem0 results.json with a second "0" key read the last one silently
    (a red team's file moved mean judge .4513 → .4519)."""
    path = _mem0_layout(tmp_path / "r.json")
    text = path.read_text()
    assert text.startswith('{"1": ')
    path.write_text('{"1": [], ' + text[1:])
    with pytest.raises(ValueError, match=r"r.json': key '1' is given twice in one JSON object"):
        _records(path, "mem0", "mem0")


def test_a_gzipped_harness_file_says_so(tmp_path):
    # a review: the records and claims readers said "gzip-compressed", import's JSON reader
    # "not UTF-8 text (invalid start byte)" — one message for every text reader
    import gzip

    path = _mem0_layout(tmp_path / "r.json")
    path.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(ValueError, match=r"r.json' is gzip-compressed, not text: decompress it"):
        _records(path, "mem0", "mem0")


def test_import_says_every_problem_of_every_file_in_one_run(tmp_path, capsys, monkeypatch):
    """A review: read problems (a bad label) were raised before the join ran, so a text no
    question has waited for a second run, and a bad first system hid the next one's."""
    from osustat.analyses import registry
    from osustat.cli.main import main

    monkeypatch.setattr(registry, "entry_points", lambda group: [_TinyEntryPoint()])
    (tmp_path / "t.json").write_text("{}")
    grades = list(_GRADES)
    grades[1] = ("c0", "When did Ann leave?", 0, 0.0)  # a text c0 does not ask: the join
    mem0 = _mem0_layout(tmp_path / "m.json", grades)
    data = json.loads(mem0.read_text())
    data["0"][0]["llm_score"] = "maybe"  # not a score: the reading
    mem0.write_text(json.dumps(data))
    zep = _zep_layout(tmp_path / "z.json")
    data = json.loads(zep.read_text())
    data["locomo_experiment_user_1"][0]["grade"] = "perhaps"  # the second file's own problem
    zep.write_text(json.dumps(data))
    argv = ["import", f"mem0={mem0}", f"zep={zep}", "--benchmark", "tiny"]
    argv += ["--data", str(tmp_path / "t.json"), "--out", str(tmp_path / "r.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "3 problems in the systems' files (every answer read and joined; nothing written)" in err
    assert "got 'maybe'" in err and "got 'perhaps'" in err and "'When did Ann leave?'" in err
    assert not (tmp_path / "r.csv").exists()


def test_unreadable_import_notes_are_said_not_a_traceback(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from osustat.io.reading import IMPORT_NOTES_KEY, import_notes

    table = pa.table({"a": [1]})
    for raw in (b"not json", b'{"other": 1}', b'{"lines": 3}'):
        pq.write_table(
            table.replace_schema_metadata({IMPORT_NOTES_KEY: raw}), tmp_path / "r.parquet"
        )
        assert import_notes(tmp_path / "r.parquet") == [
            "(its notes under the metadata key 'osustat.import' cannot be read)"
        ]
    pq.write_table(table, tmp_path / "r.parquet")
    assert import_notes(tmp_path / "r.parquet") == []


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ([0, 1, 2, 4, 5, 6, 7], "one answer seems missing before it (c0/qa3 has no answer)"),
        ([0, 1, 2, 2, 3, 4, 5, 6], "previous question: one answer seems extra at or before it"),
    ],
    ids=["missing", "extra"],
)
def test_one_answer_missing_or_extra_mid_list_is_diagnosed(asked, said):
    # a red team (stop 60): one answer deleted from the middle of a list gave 146 text
    # mismatches, none saying why, and no hint of the mapping that imports such a file
    from osustat.io.outputs import Answer

    texts = [f"Question number {k}?" for k in range(8)]
    table = QuestionTable(
        "bench",
        ("c0",),
        tuple(
            BenchmarkQuestion("c0", f"c0/qa{k}", k, k, t, ("cat1",), None, (), None, {})
            for k, t in enumerate(texts)
        ),
    )
    where = "zep file 'z.json', conversation 'locomo_experiment_user_0', answer {}"
    answers = [
        Answer(where.format(k), "0", k, None, texts[q], {"judge": 1.0}, None, {})
        for k, q in enumerate(asked)
    ]
    with pytest.raises(ValueError) as err:
        join_answers(answers, table, load_mapping("zep"), system="zep")
    message = str(err.value)
    hint = message.splitlines()[1]
    assert hint.startswith("  zep, conversation c0: from zep file 'z.json', conversation ")
    assert "answer 3 on" in hint and said in hint and "--reader zep=FILE" in hint
    assert message.startswith(f"{len(asked) - 3} problems in zep's answers")
    # two stray mismatches are no shift: no diagnosis
    answers = [
        Answer(where.format(k), "0", k, None, texts[q], {"judge": 1.0}, None, {})
        for k, q in enumerate([0, 5, 2, 6, 4])
    ]
    with pytest.raises(ValueError) as err:
        join_answers(answers, table, load_mapping("zep"), system="zep")
    assert "seems" not in str(err.value)
    # every answer shifted from the first: another base, not a missing answer (a reviewer:
    # a 0-based file read as 1-based crashed with KeyError -1)
    for first in (1, -1):
        answers = [
            Answer(where.format(k), "0", k + first, None, texts[k], {"judge": 1.0}, None, {})
            for k in range(7)
        ]
        with pytest.raises(ValueError) as err:
            join_answers(answers, table, load_mapping("zep"), system="zep")
        assert "every answer is shifted" in str(err.value) and "`position_base`" in str(err.value)
