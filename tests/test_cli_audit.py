import json
from pathlib import Path

import pandas as pd
import pytest

from osustat.analyses.claims_audit import claims_file as shipped
from osustat.audit.claims import load_claims
from osustat.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "records.csv"
PAPER = shipped("paper")

CLAIMS = """title = "Two claims"
[defaults]
family = "t4"
treatment = "osu-mem"
baseline = "flat-vector"
benchmark = "example"
budget = 256

[[claim]]
id = "te-hit"
metric = "hit@2"
cell = "T+E+"
direction = "greater"
reported_effect = 0.179
reported_p = 0.022

[[claim]]
id = "nn-recall"
metric = "recall"
cell = "T-E-"
direction = "less"
"""


@pytest.fixture
def claims_file(tmp_path):
    path = tmp_path / "claims.toml"
    path.write_text(CLAIMS)
    return path


def audit_args(claims, records=EXAMPLE, *extra, resamples="999"):
    return ["audit", str(claims), "--records", str(records), "--resamples", resamples, *extra]


class TestAuditCommand:
    def test_report_and_json_files(self, tmp_path, claims_file, capsys):
        out = tmp_path / "out"
        assert main(audit_args(claims_file, EXAMPLE, "--out", str(out), "--json")) == 0
        text = (out / "report.md").read_text()
        assert text == capsys.readouterr().out
        assert text.startswith("# Two claims\n")
        assert f"- Records: `{EXAMPLE}` (2,624 rows; none dropped on reading)." in text
        assert "- Excluded claims: 0 not checkable" in text
        payload = json.loads((out / "audit.json").read_text())
        assert [c["id"] for c in payload["claims"]] == ["te-hit", "nn-recall"]
        for item in payload["claims"]:
            row = next(line for line in text.splitlines() if line.startswith(f"| {item['id']} |"))
            assert f"**{item['verdict']}**" in row
            assert f"| {item['recomputed']['n']} queries |" in row

    def test_claims_not_checkable_are_warned_on_stderr(self, tmp_path, claims_file, capsys):
        # a new user's review: records whose methods cover only some episodes made every claim
        # not checkable, and the audit exited 0 with "0 of 0 checkable claims reproduced" only
        df = pd.read_csv(EXAMPLE)
        path = tmp_path / "partial.csv"
        df[~((df["method"] == "flat-vector") & (df["episode_id"] == "ep001"))].to_csv(path)
        assert main(audit_args(claims_file, path)) == 0
        err = capsys.readouterr().err
        assert "warning: 2 of 2 claims not checkable against these records (none is" in err
        assert "the first, 'te-hit': unpaired queries" in err and "'ep001/q000'" in err
        assert main(audit_args(claims_file, EXAMPLE)) == 0
        assert "not checkable" not in capsys.readouterr().err

    def test_same_seed_same_report(self, tmp_path, claims_file):
        for name in ("a", "b"):
            assert main(audit_args(claims_file, EXAMPLE, "--out", str(tmp_path / name))) == 0
        a = (tmp_path / "a" / "report.md").read_text()
        assert a == (tmp_path / "b" / "report.md").read_text()

    def test_another_audit_into_the_same_folder_needs_force(self, tmp_path, claims_file, capsys):
        # issue 35 item 11: one rule for every command -- a folder holding a different run
        # (other options) is refused without --force; the same run replaces it
        out = str(tmp_path / "out")
        quick = ("--bootstrap-resamples", "199", "--out", out)
        assert main(audit_args(claims_file, EXAMPLE, *quick)) == 0
        assert main(audit_args(claims_file, EXAMPLE, *quick)) == 0
        before = (tmp_path / "out" / "report.md").read_text()
        capsys.readouterr()
        assert main(audit_args(claims_file, EXAMPLE, "--seed", "7", *quick)) == 2
        assert "different run" in capsys.readouterr().err
        assert (tmp_path / "out" / "report.md").read_text() == before  # left as it was
        assert main(audit_args(claims_file, EXAMPLE, "--seed", "7", *quick, "--force")) == 0
        assert (tmp_path / "out" / "report.md").read_text() != before
        # the same run with its defaults written out: replaced (parsed arguments compared)
        written_out = ("--seed", "7", "--level", "0.95")  # --level at its default
        assert main(audit_args(claims_file, EXAMPLE, *written_out, *quick)) == 0
        assert "different run" not in capsys.readouterr().err

    def test_an_edited_paper_checks_file_is_another_run(self, tmp_path, claims_file, capsys):
        # the reviewer of stop 59: --check-paper FILE was in no digest, so editing it and
        # rerunning replaced the report without --force
        checks = tmp_path / "checks.toml"
        checks.write_text((ROOT / "analyses" / "claims" / "paper_checks.toml").read_text())
        out = str(tmp_path / "out")
        argv = audit_args(claims_file, EXAMPLE, "--check-paper", str(checks), "--out", out)
        argv += ["--bootstrap-resamples", "50"]
        assert main(argv) == 0
        assert main(argv) == 0
        checks.write_text(checks.read_text() + "\n# edited\n")
        capsys.readouterr()
        assert main(argv) == 2
        assert "different inputs" in capsys.readouterr().err

    def test_json_to_stdout(self, claims_file, capsys):
        assert main(audit_args(claims_file, EXAMPLE, "--json")) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["settings"]["n_resamples"] == 999

    def test_alias(self, tmp_path, claims_file, capsys):
        df = pd.read_csv(EXAMPLE)
        df["method"] = df["method"].replace({"osu-mem": "mine"})
        path = tmp_path / "r.csv"
        df.to_csv(path, index=False)
        assert main(audit_args(claims_file, path)) == 0
        assert "known methods: ['flat-vector', 'mine']" in capsys.readouterr().out
        assert main(audit_args(claims_file, path, "--alias", "mine=osu-mem")) == 0
        text = capsys.readouterr().out
        assert "- Excluded claims: 0 not checkable" in text
        assert "- Aliases applied to the records: `mine` → `osu-mem`." in text

    def test_aliases_in_another_order_are_the_same_run(self, tmp_path, claims_file, capsys):
        out = str(tmp_path / "out")
        pairs = [("--alias", "osu-mem=mine"), ("--alias", "flat-vector=theirs")]
        fast = ("--out", out, "--bootstrap-resamples", "50")
        assert main(audit_args(claims_file, EXAMPLE, *fast, *pairs[0], *pairs[1])) == 0
        assert main(audit_args(claims_file, EXAMPLE, *fast, *pairs[1], *pairs[0])) == 0
        assert main(audit_args(claims_file, EXAMPLE, *fast, *pairs[0])) == 2
        assert "different run (--alias: ['flat-vector=theirs', 'osu-mem=mine'] there" in (
            capsys.readouterr().err
        )

    def test_paper_claims_against_the_example_records(self, tmp_path):
        out = tmp_path / "paper"
        aliases = {"example": "tau-bench", "osu-mem": "OSU-Mem", "flat-vector": "Flat Vector"}
        args = audit_args(PAPER, EXAMPLE, "--out", str(out), resamples="199")
        args += [x for k, v in aliases.items() for x in ("--alias", f"{k}={v}")]
        fast = ["--bootstrap-resamples", "100"]
        assert main([*args, "--json", *fast]) == 0
        payload = json.loads((out / "audit.json").read_text())
        claims = load_claims(PAPER).claims
        records = pd.read_csv(EXAMPLE).replace({"method": aliases, "benchmark": aliases})
        # Checkable: exactly the claims whose benchmark, methods, metric and budget the
        # example records hold (tau-bench with the alias, OSU-Mem vs Flat Vector, B 128/256).
        expected = {
            c.id
            for c in claims
            if c.benchmark == "tau-bench"
            and {c.treatment, c.baseline} <= set(records["method"])
            and c.metric in set(records["metric"])
            and c.budget in set(records["budget"])
        }
        checked = {c["id"] for c in payload["claims"] if c["verdict"] != "not checkable"}
        assert checked == expected and len(expected) > 10
        assert len(payload["claims"]) == len(claims)
        text = (out / "report.md").read_text()
        assert all(f"| {c.id} |" in text for c in claims)
        assert f"- Excluded claims: {len(claims) - len(expected)} not checkable" in text

    def test_a_shipped_claims_file_by_name(self, tmp_path, monkeypatch, capsys):
        # from any folder (an installed wheel has no analyses/claims/ beside the user)
        monkeypatch.chdir(tmp_path)
        assert main(["audit", "paper", "--check-paper", "paper_checks"]) == 0
        assert "T3-disjoint-recall-vs-eviction" in capsys.readouterr().out
        fast = ["--bootstrap-resamples", "50"]
        assert main([*audit_args("locomo", EXAMPLE, resamples="99"), *fast]) == 0
        assert "- Claims file: `locomo`." in capsys.readouterr().out
        # a file of that name here wins over the shipped one
        (tmp_path / "paper").write_text(CLAIMS)
        assert main([*audit_args("paper", EXAMPLE, resamples="99"), *fast]) == 0
        assert capsys.readouterr().out.startswith("# Two claims\n")

    # -- Bad input: a clear message and exit status 2 --
    def test_unknown_claim_key(self, tmp_path, capsys):
        path = tmp_path / "bad.toml"
        path.write_text(CLAIMS.replace('direction = "less"', 'direction = "less"\npvalue = 0.1'))
        assert main(audit_args(path)) == 2
        err = capsys.readouterr().err
        assert f"claims file '{path}', claim 2 (line 17): unknown keys ['pvalue']" in err

    def test_impossible_threshold(self, tmp_path, capsys):
        path = tmp_path / "bad.toml"
        path.write_text(CLAIMS.replace("reported_p = 0.022", "threshold = 17.9"))
        assert main(audit_args(path)) == 2
        assert "`threshold` = 17.9 is impossible for metric 'hit@2'" in capsys.readouterr().err

    def test_unknown_cell(self, tmp_path, capsys):
        path = tmp_path / "bad.toml"
        path.write_text(CLAIMS.replace('"T-E-"', '"TE"'))
        assert main(audit_args(path)) == 2
        assert "(id 'nn-recall'): unknown cell 'TE'" in capsys.readouterr().err

    def test_missing_claims_file(self, tmp_path, capsys):
        assert main(audit_args(tmp_path / "none.toml")) == 2
        assert "claims file" in capsys.readouterr().err

    def test_missing_records(self, tmp_path, claims_file, capsys):
        assert main(audit_args(claims_file, tmp_path / "none.csv")) == 2
        assert "records file" in capsys.readouterr().err

    def test_bad_records(self, tmp_path, claims_file, capsys):
        path = tmp_path / "r.csv"
        pd.DataFrame({"query_id": ["q"], "value": [1]}).to_csv(path, index=False)
        assert main(audit_args(claims_file, path)) == 2
        assert "missing required columns" in capsys.readouterr().err

    def test_an_alias_that_matches_nothing_is_warned_and_reported(self, claims_file, capsys):
        # a new user's review: a typo in an alias was reported as "applied"
        args = audit_args(claims_file, EXAMPLE, "--alias", "osu-mm=OSU", "--alias", "x=y")
        args += ["--alias", "osu-mem=osu-mem"]
        assert main(args) == 0
        captured = capsys.readouterr()
        assert (
            "osustat audit: warning: `--alias osu-mm=OSU` matches no method or benchmark of the "
            "records (methods ['flat-vector', 'osu-mem']; benchmarks ['example']); it renames "
            "nothing." in captured.err
        )
        assert "`--alias x=y` matches no method" in captured.err
        assert "- Aliases applied to the records: `osu-mem` → `osu-mem`." in captured.out
        assert (
            "- Aliases that matched no method or benchmark of the records (they renamed "
            "nothing): `osu-mm` → `OSU`, `x` → `y`." in captured.out
        )

    def test_an_alias_onto_a_name_the_records_hold_is_named(self, claims_file, capsys):
        # it gave "duplicate record keys ..." without saying the alias caused it
        assert main(audit_args(claims_file, EXAMPLE, "--alias", "osu-mem=flat-vector")) == 2
        err = capsys.readouterr().err
        assert (
            "`--alias` osu-mem=flat-vector renames to a name the records already hold, so two "
            "methods' (or benchmarks') rows share their keys: duplicate record keys"
        ) in err

    def test_an_alias_given_twice_is_an_error(self, claims_file, capsys):
        # red team: `--alias osu-mem=a --alias osu-mem=b` exited 0, the last one winning
        args = audit_args(claims_file, EXAMPLE, "--alias", "osu-mem=a", "--alias", "osu-mem=b")
        assert main(args) == 2
        assert "`--alias` name 'osu-mem' is given twice." in capsys.readouterr().err

    def test_bad_alias(self, claims_file, capsys):
        assert main(audit_args(claims_file, EXAMPLE, "--alias", "mine")) == 2
        assert "`--alias` must look like RECORDS_NAME=CLAIMS_NAME; got 'mine'" in (
            capsys.readouterr().err
        )


class TestTwoStandards:
    def test_paper_claims_on_the_example_records(self, tmp_path, capsys):
        out = tmp_path / "out"
        args = audit_args(
            PAPER, EXAMPLE, "--alias", "example=tau-bench", "--alias", "osu-mem=OSU-Mem",
            "--alias", "flat-vector=Flat Vector", "--bootstrap-resamples", "200",
            "--out", str(out), "--json",
        )  # fmt: skip
        assert main(args) == 0
        lines = (out / "report.md").read_text().splitlines()
        assert lines[2].startswith("- **As tested** column:")
        assert lines[3].startswith("- **Strict** column:")
        payload = json.loads((out / "audit.json").read_text())
        assert set(payload["summary"]) == {"as tested", "strict"}
        n = len(load_claims(PAPER).claims)
        for counts in payload["summary"].values():
            assert sum(counts.values()) == n
        checked = [c for c in payload["claims"] if c["verdict"] != "not checkable"]
        assert checked and all(c["as_tested"]["correction"] == "none" for c in checked)
        assert all(c["strict"]["correction"] == "holm" for c in checked)
        assert any(c["kind"] == "interaction" for c in checked)
        summary = [x for x in lines if x.startswith("- **As tested**:")]
        assert summary and f"of {len(checked)} checkable claims reproduced" in summary[0]


def test_an_unknown_claims_name_lists_the_shipped_ones(capsys):
    assert main(["audit", "papr", "--records", str(EXAMPLE)]) == 2
    err = capsys.readouterr().err
    assert "'papr': no such file" in err
    for name, path in (
        ("paper", "analyses/claims/paper.toml"),
        ("locomo", "analyses/locomo/claims.toml"),
        ("paper_checks", "analyses/claims/paper_checks.toml"),
    ):
        assert f"{name} ({path})" in err
        assert (ROOT / path).is_file()
