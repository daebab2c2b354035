"""TREC interop checked against trec_eval (through ir_measures / pytrec_eval).

The fixture (examples/trec/, written by examples/make_trec_fixture.py) is simulated but in
the real formats, with score ties, ranks that disagree with scores and a missing topic.
"""

import json
from pathlib import Path

import pytest

from osustat.cli.main import main
from osustat.io.trec import records_from_trec

ir_measures = pytest.importorskip("ir_measures")

TREC = Path(__file__).resolve().parents[1] / "examples" / "trec"
QRELS = TREC / "qrels.txt"
MEASURES = ("nDCG@10", "AP", "P@5", "R@10", "RR", "nDCG")


def reference(run: Path, measures):
    """trec_eval's per-query values on the raw run file (its own ordering by score)."""
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    out = {}
    for m in ir_measures.iter_calc(
        [ir_measures.parse_measure(x) for x in measures],
        qrels,
        list(ir_measures.read_trec_run(str(run))),
    ):
        out[(m.query_id, str(m.measure).lower())] = m.value
    return out


def ours(loaded, method, depth):
    rec = loaded.records
    rec = rec[(rec["method"] == method) & (rec["budget"] == depth)]
    return {(r.query_id, r.metric): r.value for r in rec.itertuples()}


@pytest.mark.parametrize("tag", ["bm25", "rm3"])
def test_measures_equal_trec_eval_at_full_depth(tag):
    loaded = records_from_trec(
        TREC / f"{tag}.run",
        QRELS,
        depths=[30, 1000],
        measures=MEASURES,
        hit_k=[1],
        zero_fill=True,
    )
    ref = reference(TREC / f"{tag}.run", [*MEASURES, "Success@10"])
    got = ours(loaded, tag, 1000)
    compared = 0
    for (qid, name), value in ref.items():
        if name == "success@10":
            # hit@1 (at least one relevant document) at depth 10 is trec_eval's success_10
            continue
        # measures without their own cut-off are named with the depth (AP@k, never "ap")
        key = name if "@" in name else f"{name}@1000"
        assert got[(qid, key)] == pytest.approx(value, abs=1e-12), (qid, name)
        compared += 1
    # ir_measures scores rm3's unranked topic 312 as 0, like trec_eval -c and --zero-fill
    assert compared == len(MEASURES) * 12
    # osustat's own recall at depth 10 is trec_eval's recall_10 (R@10)
    at10 = records_from_trec(TREC / f"{tag}.run", QRELS, depths=10, hit_k=[1], zero_fill=True)
    got10 = ours(at10, tag, 10)
    for (qid, name), value in ref.items():
        if name == "r@10":
            assert got10[(qid, "recall")] == pytest.approx(value, abs=1e-12)
        if name == "success@10":
            assert got10[(qid, "hit@1")] == value


def test_rank_order_warns_and_differs():
    by_score = records_from_trec(TREC / "rm3.run", QRELS, depths=[1], hit_k=[1])
    by_rank = records_from_trec(TREC / "rm3.run", QRELS, depths=[1], hit_k=[1], order="rank")
    assert by_score.warnings and "disagrees with the score order" in by_score.warnings[0]
    assert "--order rank" in by_score.warnings[0]
    a, b = ours(by_score, "rm3", 1), ours(by_rank, "rm3", 1)
    assert a != b  # the swapped top documents of 303/306/309 change recall at depth 1


def test_zero_fill_and_missing_topic_hint(tmp_path, capsys):
    common = ["--treatment", "rm3", "--baseline", "bm25", "--resamples", "999"]
    runs = ["--run", f"bm25={TREC / 'bm25.run'}", "--run", f"rm3={TREC / 'rm3.run'}"]
    base = ["analyze", *runs, "--qrels", str(QRELS), "--depth", "10", *common]
    assert main([*base, "--metric", "recall"]) == 2
    err = capsys.readouterr().err
    assert "unpaired queries" in err and "--zero-fill" in err and "'312'" in err
    assert main([*base, "--metric", "recall", "--zero-fill", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["comparisons"][0]["rows"][-1]["n"] == 12
    assert payload["budget_kind"] == "depth"
    assert any("zero-filled" in n and "'312'" in n for n in payload["input_notes"])


def test_concatenated_runs_hint_and_named_runs(capsys):
    args = ["analyze", str(TREC / "concat.run"), "--qrels", str(QRELS), "--depth", "10"]
    assert main([*args, "--treatment", "a", "--baseline", "b"]) == 2
    err = capsys.readouterr().err
    assert "ranked twice" in err and "--run NAME=FILE" in err and "concat.run', line" in err


def test_measures_through_cli_with_depth_axis(tmp_path, capsys):
    runs = ["--run", f"bm25={TREC / 'bm25.run'}", "--run", f"rm3={TREC / 'rm3.run'}"]
    args = ["analyze", *runs, "--qrels", str(QRELS), "--depth", "10,30", "--zero-fill"]
    args += ["--measure", "nDCG@10,AP", "--treatment", "rm3", "--baseline", "bm25"]
    args += ["--resamples", "999", "--bootstrap-resamples", "200", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    text = (tmp_path / "o" / "report.md").read_text()
    # nDCG@10 has its own cut-off: one comparison (at the largest depth), not one per depth
    assert "## ndcg@10 at depth 30" in text and "## ndcg@10 at depth 10" not in text
    assert "## ap@30 at depth 30" in text and "## ap@10 at depth 10" in text
    assert "## ap at" not in text
    assert "## Effects across depths" in text and "against the depth k" in text
    svg = (tmp_path / "o" / "depths-recall.svg").read_text()
    assert "depth k (documents retrieved)" in svg and "token budget" not in svg
    assert (tmp_path / "o" / "depths-recall.png").read_bytes()[:4] == b"\x89PNG"
    assert "aggregate tests form the families" in text


def test_unknown_measure_names_it(capsys):
    args = ["analyze", str(TREC / "bm25.run"), "--qrels", str(QRELS), "--depth", "10"]
    assert main([*args, "--measure", "nDCG@x", "--treatment", "a", "--baseline", "b"]) == 2
    err = capsys.readouterr().err
    assert "ir_measures does not know 'nDCG@x'" in err
    assert "`--measure` (Python: measures=)" in err  # the option, not only the parameter


# -- TREC habits (issue 24) ---------------------------------------------------------------


def test_default_depth_is_trec_evals_whole_ranking():
    loaded = records_from_trec(
        TREC / "bm25.run", QRELS, measures=("AP", "nDCG@10"), hit_k=[1], zero_fill=True
    )
    longest = max(
        sum(1 for ln in (TREC / "bm25.run").read_text().splitlines() if ln.split()[0] == q)
        for q in {ln.split()[0] for ln in (TREC / "bm25.run").read_text().splitlines() if ln}
    )
    assert sorted(loaded.records["budget"].unique()) == [longest]
    assert any("trec_eval's default" in n for n in loaded.notes)
    ref = reference(TREC / "bm25.run", ["AP", "nDCG@10"])
    got = ours(loaded, "bm25", longest)
    for (qid, name), value in ref.items():
        key = name if "@" in name else f"{name}@{longest}"
        assert got[(qid, key)] == pytest.approx(value, abs=1e-12)


def test_own_cutoff_measures_are_computed_once():
    loaded = records_from_trec(
        TREC / "bm25.run", QRELS, depths=[5, 10, 30], measures=("nDCG@10", "P@5", "AP")
    )
    rec = loaded.records
    by_metric = rec.groupby("metric")["budget"].apply(lambda b: sorted(set(b))).to_dict()
    assert by_metric["ndcg@10"] == [30] and by_metric["p@5"] == [30]
    assert by_metric["ap@5"] == [5] and by_metric["ap@10"] == [10] and by_metric["ap@30"] == [30]
    assert "ap" not in by_metric


def _write_run(path, lines):
    path.write_text("".join(f"{q} Q0 {d} {r} {s} t\n" for q, d, r, s in lines))
    return path


def test_rank_disagreement_warning_says_when_it_is_ties(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("a 0 d1 1\nb 0 d2 1\n")
    # query a: d1 and d2 have equal scores, the rank column puts d1 first (trec_eval: d2)
    ties = [("a", "d1", 1, 5.0), ("a", "d2", 2, 5.0), ("b", "d2", 1, 3.0), ("b", "d1", 2, 1.0)]
    w = records_from_trec(_write_run(tmp_path / "r1", ties), qrels, depths=1).warnings
    assert len(w) == 1 and "in 1 of 2 rankings" in w[0]
    assert "all 1 only in how documents with equal scores are ordered (ties)" in w[0]
    # query b now ranks the lower score first: not a tie
    real = [*ties[:2], ("b", "d2", 2, 3.0), ("b", "d1", 1, 1.0)]
    w = records_from_trec(_write_run(tmp_path / "r2", real), qrels, depths=1).warnings
    assert "in 2 of 2 rankings" in w[0]
    assert "1 of them only in how documents with equal scores" in w[0]
    assert "1 in the scores' order itself" in w[0]


def test_records_out_writes_the_values_used(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "rec.csv"
    runs = ["--run", f"bm25={TREC / 'bm25.run'}", "--run", f"rm3={TREC / 'rm3.run'}"]
    args = ["analyze", *runs, "--qrels", str(QRELS), "--depth", "10", "--zero-fill"]
    args += ["--measure", "AP", "--treatment", "rm3", "--baseline", "bm25", "--metric", "ap@10"]
    args += ["--resamples", "99", "--bootstrap-resamples", "50", "--json"]
    assert main([*args, "--records-out", str(out)]) == 0
    payload = json.loads(capsys.readouterr().out)
    rec = pd.read_csv(out)
    ap = rec[rec["metric"] == "ap@10"]
    t = ap[ap["method"] == "rm3"]["value"].to_numpy()
    b = ap[ap["method"] == "bm25"]["value"].to_numpy()
    assert payload["comparisons"][0]["rows"][-1]["effect"] == pytest.approx((t - b).mean())
    assert main([*args, "--records-out", str(out)]) == 2  # exists: needs --force
    assert "--force" in capsys.readouterr().err


# -- a new user's review (user2) ----------------------------------------------------------


def test_cutoff_above_the_largest_depth_is_refused(capsys):
    # nDCG@10 on the ranking cut at depth 5 was reported as "ndcg@10" (.644 for a true .715)
    with pytest.raises(ValueError, match=r"nDCG@10.*cut-off 10 exceeds the largest --depth 5"):
        records_from_trec(TREC / "bm25.run", QRELS, depths=5, measures=("AP", "nDCG@10"))
    args = ["analyze", str(TREC / "bm25.run"), "--qrels", str(QRELS), "--depth", "5"]
    assert main([*args, "--measure", "nDCG@10", "--treatment", "a", "--baseline", "b"]) == 2
    err = capsys.readouterr().err
    assert "raise --depth to at least 10 (e.g. --depth 5,10) or drop nDCG@10" in err
    # a depth as deep as the cut-off, or none (the whole ranking), is the measure itself
    rec = records_from_trec(TREC / "bm25.run", QRELS, depths=[5, 10], measures=("nDCG@10",))
    assert set(rec.records.loc[rec.records["metric"] == "ndcg@10", "budget"]) == {10}
    assert "ndcg@10" in set(
        records_from_trec(TREC / "bm25.run", QRELS, measures=("nDCG@10",)).records["metric"]
    )


def test_a_run_sharing_no_judged_query_is_an_error(tmp_path, capsys):
    # 'T00' vs 't00': zero-filled entirely it "hurt, p < .001"; without --zero-fill the error
    # said "`treatment` method 'rm3' is not in the records"
    upper = tmp_path / "upper.run"
    lines = (TREC / "rm3.run").read_text().splitlines()
    upper.write_text("".join(f"Q{ln}\n" for ln in lines if ln.strip()))
    runs = ["--run", f"bm25={TREC / 'bm25.run'}", "--run", f"rm3={upper}"]
    args = ["analyze", *runs, "--qrels", str(QRELS), "--depth", "10", "--metric", "recall"]
    args += ["--treatment", "rm3", "--baseline", "bm25", "--resamples", "99"]
    for extra in (["--zero-fill"], []):
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert f"run 'rm3' (file {str(upper)!r}) shares no judged query with qrels" in err
        assert "Run qids: 'Q301', 'Q302', 'Q303', ... and 8 more" in err
        assert "qrels qids with relevant documents: '301'" in err
        assert "case" not in err and "not in the records" not in err
    lower, qrels = tmp_path / "lower.run", tmp_path / "qrels.txt"
    lower.write_text("".join(f"q{ln}\n" for ln in lines if ln.strip()))
    qrels.write_text("".join(f"Q{ln}\n" for ln in QRELS.read_text().splitlines() if ln))
    with pytest.raises(ValueError, match="the qids differ in case"):
        records_from_trec({"rm3": lower}, qrels, depths=10)


def test_records_out_only_after_the_analysis_succeeded(tmp_path, capsys):
    # it was written before the analysis failed (46 of 48 rows), then blocked the rerun
    out = tmp_path / "new" / "t1.csv"  # a missing folder is created, as for --out
    runs = ["--run", f"bm25={TREC / 'bm25.run'}", "--run", f"rm3={TREC / 'rm3.run'}"]
    args = ["analyze", *runs, "--qrels", str(QRELS), "--depth", "10", "--metric", "recall"]
    args += ["--treatment", "rm3", "--baseline", "bm25", "--resamples", "99"]
    args += ["--bootstrap-resamples", "50", "--records-out", str(out)]
    assert main(args) == 2  # unpaired '312'
    assert "--zero-fill" in capsys.readouterr().err
    assert not out.exists() and not out.parent.exists()
    assert main([*args, "--zero-fill"]) == 0  # the rerun the hint suggests
    assert f"wrote {out} (48 record rows)" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    bad = [*args[:-1], str(tmp_path / "file" / "t1.csv"), "--zero-fill"]
    assert main(bad) == 2
    assert "`--records-out`" in capsys.readouterr().err


def test_measure_names_regardless_of_case(capsys):
    # "--measure AP,ap" said "ir_measures does not know 'ap'"
    loaded = records_from_trec(TREC / "bm25.run", QRELS, depths=10, measures=("ap", "ndcg@10"))
    ref = records_from_trec(TREC / "bm25.run", QRELS, depths=10, measures=("AP", "nDCG@10"))
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(loaded.records, ref.records)
    with pytest.raises(ValueError, match=r"'AP' and 'ap' are the same measure \(AP\)"):
        records_from_trec(TREC / "bm25.run", QRELS, depths=10, measures=("AP", "ap"))


def test_excluded_line_counts_what_it_names(tmp_path, capsys):
    # "Excluded: 1 item(s)" when 2 queries were excluded (it counted the reasons)
    run = tmp_path / "extra.run"
    extra = "".join(f"{q} Q0 d{i} {i} {9 - i} bm25\n" for q in ("901", "902") for i in (1, 2))
    run.write_text((TREC / "bm25.run").read_text() + extra)
    runs = ["--run", f"bm25={run}", "--run", f"rm3={TREC / 'rm3.run'}"]
    args = ["analyze", *runs, "--qrels", str(QRELS), "--depth", "10", "--zero-fill"]
    args += ["--metric", "recall", "--treatment", "rm3", "--baseline", "bm25"]
    assert main([*args, "--resamples", "99", "--bootstrap-resamples", "50"]) == 0
    text = capsys.readouterr().out
    assert (
        "- Excluded, by reason (each listed under Provenance, “Excluded”): 2 run queries " in text
    )
    assert "item(s)" not in text


# -- an IR researcher's review (stop 56) ---------------------------------------------------


def test_a_measure_at_a_depth_is_its_cutoff_measure():
    # bare nDCG at depth 5 was the top 5's DCG over the ideal of *all* relevant documents,
    # named ndcg@5 (.17 where nDCG@5 is .57 in the review's data); now ir_measures' nDCG@5
    loaded = records_from_trec(
        TREC / "bm25.run", QRELS, depths=[5, 10], measures=("nDCG", "P", "RR"), zero_fill=True
    )
    ref = reference(TREC / "bm25.run", ["nDCG@5", "nDCG@10", "P@5", "P@10", "RR@5", "RR@10"])
    compared = 0
    for depth in (5, 10):
        got = ours(loaded, "bm25", depth)
        for (qid, name), value in ref.items():
            if name.endswith(f"@{depth}"):
                assert got[(qid, name)] == pytest.approx(value, abs=1e-12), (qid, name)
                compared += 1
    assert compared == 6 * 12
    # the fixture has queries with 6 relevant documents: the two readings differ there
    top5 = records_from_trec(TREC / "bm25.run", QRELS, depths=[5], measures=("nDCG",))
    assert any("ndcg@5" in n for n in top5.notes)  # the metrics the records hold, listed


def test_a_measure_without_a_cutoff_parameter_is_computed_on_the_top_k():
    loaded = records_from_trec(TREC / "bm25.run", QRELS, depths=[5, 10], measures=("Bpref",))
    assert {"bpref@5", "bpref@10"} <= set(loaded.records["metric"])


@pytest.mark.parametrize(
    ("measures", "depths", "hit_k", "match"),
    [
        (("nDCG@10", "nDCG"), [10, 30], (2,), r"'nDCG@10' and 'nDCG' at depth 10 are both ndcg@10"),
        (("AP@10", "AP"), [10], (2,), r"'AP@10' and 'AP' at depth 10 are both ap@10"),
        (("R@10",), [10, 30], (2,), r"'R@10' is r@10, osustat's own `recall` at depth 10"),
        (("R",), [10], (2,), r"'R' at depth 10 is r@10, osustat's own `recall` at depth 10"),
        (("Success@10",), [10], (1, 2), r"osustat's own `hit@1` at depth 10"),
    ],
)
def test_the_same_values_asked_for_twice_are_refused(measures, depths, hit_k, match):
    # `--measure nDCG@10,nDCG --depth 10` failed with "duplicate record keys in rows 2, 3,
    # ..." (internal rows); R@k beside osustat's own recall entered a family twice
    with pytest.raises(ValueError, match=match):
        records_from_trec(TREC / "bm25.run", QRELS, depths=depths, measures=measures, hit_k=hit_k)


def test_measures_that_differ_from_osustats_own_are_kept():
    # Success@10 is hit@1 only where hit@1 is computed; R(rel=2)@10 is not recall
    rec = records_from_trec(
        TREC / "bm25.run", QRELS, depths=[10], measures=("Success@10", "R(rel=2)@10")
    ).records
    assert {"success@10", "r(rel=2)@10", "recall"} <= set(rec["metric"])


def test_a_collision_is_refused_on_the_command_line(capsys):
    args = ["analyze", str(TREC / "bm25.run"), "--qrels", str(QRELS), "--depth", "10"]
    args += ["--measure", "nDCG@10,nDCG", "--treatment", "a", "--baseline", "b"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "are both ndcg@10" in err and "duplicate record keys" not in err


def test_a_qrels_judgement_given_twice_names_both_lines(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n")
    run = _write_run(tmp_path / "run", [("q1", "d1", 1, 2.0)])
    with pytest.raises(
        ValueError,
        match=r"line 3: document 'd1' is judged twice for 'q1' "
        r"\(first on line 1\)",
    ):
        records_from_trec(run, qrels)


def test_analyze_takes_the_loaders_result_with_its_exclusions(tmp_path):
    import osustat

    # records_from_trec -> analyze(loaded.records) said "Excluded: nothing." and "B = 10"
    # although the loader left queries out; the Loaded itself carries them to the report
    qrels = tmp_path / "qrels"
    qrels.write_text(QRELS.read_text() + "399 0 zz 0\n")  # judged, nothing relevant
    loaded = records_from_trec(
        {"bm25": TREC / "bm25.run", "rm3": TREC / "rm3.run"}, qrels, depths=10, zero_fill=True
    )
    assert loaded.exclusions and loaded.budget_kind == "depth"
    res = osustat.analyze(
        loaded,
        treatment="rm3",
        baseline="bm25",
        metrics="recall",
        n_resamples=99,
        bootstrap_resamples=50,
    )
    md = res.to_markdown()
    assert res.budget_kind == "depth" and "## recall at depth 10" in md
    assert "- Excluded: 1 judged queries without relevant documents." in md
    assert "Excluded (not silently): 1 judged queries without relevant documents: '399'" in md
    assert "Excluded: nothing" not in md
    assert res.provenance.exclusions[0] == ("judged queries without relevant documents", 1)


def test_audit_reads_runs_given_by_name(tmp_path, capsys):
    claims = tmp_path / "claims.toml"
    claims.write_text(
        'title = "t"\n[defaults]\ntreatment = "rm3"\nbaseline = "bm25"\nbudget = 10\n'
        'family = "f"\n[[claim]]\nid = "ap"\nmetric = "ap@10"\ncell = "aggregate"\n'
        'direction = "greater"\nreported_effect = 0.05\nreported_p = 0.03\n'
    )
    runs = ["--run", f"bm25={TREC / 'bm25.run'}", "--run", f"rm3={TREC / 'rm3.run'}"]
    args = ["audit", str(claims), *runs, "--qrels", str(QRELS), "--depth", "10"]
    args += ["--zero-fill", "--measure", "AP", "--resamples", "99", "--json"]
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["claims"][0]["recomputed"]["n"] == 12


def test_the_python_loader_refuses_a_depth_or_k_asked_twice(tmp_path):
    # a reviewer (stop 57): records_from_trec(depths=[10, 10]) returned every row twice and
    # analyze blamed "duplicate record keys"; hit_k=[2, 2] was one k without a word
    from osustat.io.trec import records_from_trec

    run, qrels = tmp_path / "r.run", tmp_path / "q.txt"
    run.write_text("q1 Q0 d1 1 9 a\nq1 Q0 d2 2 8 a\n", encoding="utf-8")
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"`depths` names 10 twice"):
        records_from_trec(run, qrels, depths=[10, 10])
    with pytest.raises(ValueError, match=r"`depths` names 10 twice"):
        records_from_trec(run, qrels, depths=(10, 10), measures=["AP"])
    with pytest.raises(ValueError, match=r"`hit_k` names 2 twice"):
        records_from_trec(run, qrels, depths=[10], hit_k=[2, 2])


def test_one_run_file_under_two_names_is_said(tmp_path):
    from osustat.io.trec import records_from_trec

    run, qrels = tmp_path / "r.run", tmp_path / "q.txt"
    run.write_text("q1 Q0 d1 1 9 a\nq1 Q0 d2 2 8 a\n", encoding="utf-8")
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    loaded = records_from_trec({"rm3": run, "rm3b": tmp_path / "." / "r.run"}, qrels, depths=[2])
    assert any("runs 'rm3', 'rm3b' are one file" in n for n in loaded.report_notes())
