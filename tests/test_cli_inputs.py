import json
import math
from pathlib import Path

from osustat.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RETRIEVALS = EXAMPLES / "retrievals.csv"
EVIDENCE = EXAMPLES / "evidence.jsonl"
RUN = EXAMPLES / "run.trec"
QRELS = EXAMPLES / "qrels.txt"
COMMON = ["--treatment", "osu-mem", "--baseline", "flat-vector", "--resamples", "999"]


class TestAnalyzeInputs:
    def test_retrievals(self, capsys):
        args = ["analyze", str(RETRIEVALS), "--evidence", str(EVIDENCE), *COMMON]
        assert main([*args, "--metric", "hit@2"]) == 0
        text = capsys.readouterr().out
        assert f"- Input: raw retrievals `{RETRIEVALS}` (80 retrievals) with evidence" in text
        assert "at least k of the query's evidence steps retrieved (k = 2)" in text
        assert "- Nothing excluded." in text
        assert main([*args, "--metric", "hit@2", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)["comparisons"][0]["rows"]
        assert [r["cell"] for r in rows] == ["T+E+", "T+E-", "T-E+", "T-E-", "Aggregate"]
        assert rows[-1]["n"] == 40

    def test_trec_matches_retrievals_at_full_depth(self, capsys):
        base = [*COMMON, "--metric", "hit@2,recall", "--json"]
        assert main(["analyze", str(RETRIEVALS), "--evidence", str(EVIDENCE), *base]) == 0
        ra = json.loads(capsys.readouterr().out)["comparisons"]
        trec = ["analyze", str(RUN), "--qrels", str(QRELS), "--evidence", str(EVIDENCE)]
        assert main([*trec, "--depth", "8", *base]) == 0
        rb = json.loads(capsys.readouterr().out)["comparisons"]
        # The same differences; a Monte Carlo p draws from the stream its (metric, budget)
        # names, and the budgets differ (tokens there, depth 8 here): exact p's are equal,
        # Monte Carlo ones agree within their errors.
        for x, y in zip(ra, rb, strict=True):
            assert [r["effect"] for r in x["rows"]] == [r["effect"] for r in y["rows"]]
            for r, q in zip(x["rows"], y["rows"], strict=True):
                assert r["pvalue_exact"] == q["pvalue_exact"]
                if r["pvalue_exact"]:
                    assert r["pvalue"] == q["pvalue"]
                else:
                    se = math.hypot(r["pvalue_mc_se"], q["pvalue_mc_se"])
                    assert abs(r["pvalue"] - q["pvalue"]) <= 4 * se

    def test_trec_exclusions_in_preamble(self, tmp_path, capsys):
        qrels = tmp_path / "qrels.txt"
        qrels.write_text(QRELS.read_text() + "ep99/q99 0 s1 0\n")
        args = ["analyze", str(RUN), "--qrels", str(qrels), "--depth", "4", *COMMON]
        assert main([*args, "--metric", "recall"]) == 0
        out = capsys.readouterr().out
        assert "- Excluded (not silently): 1 judged queries without relevant documents: " in out
        assert "'ep99/q99'" in out and "no cells (no evidence file)" in out

    def test_trec_depth_defaults_to_the_whole_ranking(self, capsys):
        assert main(["analyze", str(RUN), "--qrels", str(QRELS), *COMMON]) == 0
        assert "the whole ranking (trec_eval's default" in capsys.readouterr().out

    def test_depth_must_be_integers(self, capsys):
        args = ["analyze", str(RUN), "--qrels", str(QRELS), "--depth", "5,ten", *COMMON]
        assert main(args) == 2
        assert "`--depth` must be comma-separated integers; got '5,ten'" in capsys.readouterr().err

    def test_bad_retrievals_exit_2_with_location(self, tmp_path, capsys):
        bad = tmp_path / "ret.csv"
        lines = RETRIEVALS.read_text().splitlines()
        lines[3] = lines[3].rsplit(",", 1)[0] + ",999"
        bad.write_text("\n".join(lines) + "\n")
        assert main(["analyze", str(bad), "--evidence", str(EVIDENCE), *COMMON]) == 2
        err = capsys.readouterr().err
        assert f"retrievals file '{bad}', line 4:" in err and "over its budget 256" in err

    def test_audit_reads_retrievals(self, tmp_path, capsys):
        claims = tmp_path / "c.toml"
        claims.write_text(
            '[[claim]]\nid = "a"\nfamily = "f"\ntreatment = "osu-mem"\n'
            'baseline = "flat-vector"\nmetric = "recall"\nbudget = 256\ncell = "T+E+"\n'
            'direction = "greater"\n'
        )
        args = ["audit", str(claims), "--records", str(RETRIEVALS), "--evidence", str(EVIDENCE)]
        assert main([*args, "--resamples", "999"]) == 0
        out = capsys.readouterr().out
        assert "- Input: raw retrievals" in out and "| a | " in out
        row = next(line for line in out.splitlines() if line.startswith("| a |"))
        assert "| 11 queries |" in row and "not checkable" not in row  # 11 T+E+ queries


def test_trec_options_without_qrels_say_so(capsys):
    # "--depth apply to TREC runs and need `--qrels`"
    args = ["analyze", str(EXAMPLES / "records.csv"), *COMMON]
    assert main([*args, "--depth", "5"]) == 2
    assert "--depth applies only to TREC runs and needs `--qrels`." in capsys.readouterr().err
    assert main([*args, "--depth", "5", "--zero-fill"]) == 2
    assert "--depth, --zero-fill apply only to TREC runs and need" in capsys.readouterr().err
