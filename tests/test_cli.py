import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from osustat.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "records.csv"


def small_records(tmp_path, fmt="csv"):
    df = pd.read_csv(EXAMPLE)
    df = df[df["budget"] == 256]
    path = tmp_path / f"records.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path)
    return path


def osu_vs_flat(path, *extra: str) -> list[str]:
    """``osustat analyze PATH --treatment osu-mem --baseline flat-vector`` (999 resamples)."""
    args = ["analyze", str(path), "--treatment", "osu-mem", "--baseline", "flat-vector"]
    return [*args, "--resamples", "999", *extra]


class TestAnalyze:
    @pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
    def test_formats(self, tmp_path, fmt, capsys):
        path = small_records(tmp_path, fmt)
        assert main(osu_vs_flat(path, "--metric", "hit@2")) == 0
        out = capsys.readouterr().out
        assert "## hit@2 at B = 256" in out and "| T+E+ | 56 |" in out
        assert "n (queries)" in out and "in-sample upper bound" in out

    def test_report_files_and_determinism(self, tmp_path):
        path = small_records(tmp_path)
        args = osu_vs_flat(path, "--json")
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        first = (tmp_path / "a" / "report.md").read_bytes()
        # same inputs: the folder is replaced, and the report is byte-identical
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        assert (tmp_path / "a" / "report.md").read_bytes() == first
        a = first.decode()
        payload = json.loads((tmp_path / "a" / "results.json").read_text())
        assert [p["metric"] for p in payload["comparisons"]] == ["hit@2", "recall"]
        assert payload["treatment"] == "osu-mem" and payload["baseline"] == "flat-vector"
        assert payload["seed"] == 0 and payload["alpha"] == 0.05
        assert payload["family"] == "per-metric-budget" and payload["correction"] == "holm"
        prov = payload["provenance"]
        assert prov["inputs"][0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert set(prov["versions"]) >= {"osustat", "numpy", "scipy", "statsmodels", "pandas"}
        assert "sentence-transformers" in prov["versions"]
        assert prov["command"].startswith("osustat analyze ")
        rows = payload["comparisons"][0]["rows"]
        # contributions f·Δ add up to the aggregate effect
        assert sum(r["contribution"] for r in rows[:-1]) == pytest.approx(rows[-1]["effect"])
        png = (tmp_path / "a" / "forest-hit2-B256.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / "a" / "forest-hit2-B256.svg").exists()
        assert "forest-hit2-B256.png" in a and "## Provenance" in a
        assert "SHA-256 `" + prov["inputs"][0]["sha256"] in a

    def test_episode_unit(self, tmp_path, capsys):
        path = small_records(tmp_path)
        assert main(osu_vs_flat(path, "--metric", "recall", "--unit", "episode")) == 0
        assert "n (episodes)" in capsys.readouterr().out

    def test_cells_the_episode_unit_does_not_test_are_said(self, tmp_path, capsys):
        # a new user's review: LoCoMo records default to the episode unit, and judge.cells'
        # cells went untested without a word (no per-cell rows, interaction or forest figure)
        path = small_records(tmp_path)
        assert main(osu_vs_flat(path, "--metric", "recall", "--unit", "episode", "--json")) == 0
        out, err = capsys.readouterr()
        assert "warning: Cells not tested" in err and "--unit query" in err
        note = next(n for n in json.loads(out)["input_notes"] if n.startswith("Cells not"))
        assert "'recall'" in note and "no per-cell tests" in note and "--unit query" in note
        assert main(osu_vs_flat(path, "--metric", "recall", "--unit", "episode")) == 0
        assert f"- {note}" in capsys.readouterr().out  # the report's header
        assert main(osu_vs_flat(path, "--metric", "recall")) == 0  # the query unit tests them
        assert "Cells not tested" not in "".join(capsys.readouterr())
        # a metric holding one cell's queries alone is that cell's test at the episode unit
        # (a reviewer read "Cells not tested" above the judge.t+e+ table that is one)
        assert "is that cell's test" not in note and "means of episode means" in note
        one = tmp_path / "one.csv"
        frame = pd.read_csv(path)
        frame = frame[frame["cell"].eq("T+E+") & frame["metric"].eq("recall")]
        frame.assign(metric="recall.t+e+").to_csv(one, index=False)
        args = osu_vs_flat(one, "--metric", "recall.t+e+", "--unit", "episode", "--json")
        assert main(args) == 0
        note = next(
            n for n in json.loads(capsys.readouterr().out)["input_notes"]
            if n.startswith("Cells not")
        )  # fmt: skip
        assert "all of one cell — 'recall.t+e+' — is that cell's test at the episode unit" in note

    def test_the_benchmark_analysed_is_stated_without_benchmark_option(self, tmp_path, capsys):
        # a new user's review: `--json` gave "benchmark": null for records of one benchmark
        path = small_records(tmp_path)
        assert main(osu_vs_flat(path, "--metric", "recall", "--json")) == 0
        assert json.loads(capsys.readouterr().out)["benchmark"] == "example"
        assert main(osu_vs_flat(path, "--metric", "recall")) == 0
        assert "seeds averaged per unit: 1; benchmark `example`." in capsys.readouterr().out
        bare = tmp_path / "bare.csv"  # no benchmark column: the schema's 'default', not shown
        pd.read_csv(path).drop(columns="benchmark").to_csv(bare, index=False)
        assert main(osu_vs_flat(bare, "--metric", "recall", "--json")) == 0
        assert json.loads(capsys.readouterr().out)["benchmark"] == "default"
        assert main(osu_vs_flat(bare, "--metric", "recall")) == 0
        assert "; benchmark `" not in capsys.readouterr().out

    def test_unknown_method_is_an_error(self, tmp_path, capsys):
        path = small_records(tmp_path)
        code = main(["analyze", str(path), "--treatment", "tree", "--baseline", "flat-vector"])
        assert code == 2
        err = capsys.readouterr().err
        assert "known methods: ['flat-vector', 'osu-mem']" in err

    def test_missing_file(self, tmp_path, capsys):
        assert (
            main(["analyze", str(tmp_path / "nope.csv"), "--treatment", "a", "--baseline", "b"])
            == 2
        )
        assert "does not exist" in capsys.readouterr().err

    def test_bad_extension(self, tmp_path, capsys):
        path = tmp_path / "records.xlsx"
        path.write_text("x")
        assert main(["analyze", str(path), "--treatment", "a", "--baseline", "b"]) == 2
        assert "unknown extension '.xlsx'" in capsys.readouterr().err

    def test_a_harness_output_file_is_pointed_to_import(self, tmp_path, capsys):
        # a new user's review: `osustat analyze zep_locomo_grades.json` said only "unknown
        # extension '.json'"; a system's own output goes through `osustat import` first
        grades = tmp_path / "grades.json"
        grades.write_text('{"locomo_experiment_user_0": [{"question": "q", "grade": true}]}')
        csv = tmp_path / "answers.csv"
        pd.DataFrame({"question": ["q"], "llm_score": [1]}).to_csv(csv, index=False)
        for path, said in ((grades, "unknown extension '.json'"), (csv, "missing required")):
            for cmd in (["analyze", str(path), "--treatment", "a", "--baseline", "b"],
                        ["audit", "locomo-systems", "--records", str(path)]):  # fmt: skip
                assert main(cmd) == 2
                err = capsys.readouterr().err
                assert said in err and "`osustat import NAME=FILE --out records.parquet`" in err
        run = tmp_path / "bm25.txt"
        run.write_text("301 Q0 d1 1 2.0 bm25\n")
        assert main(["analyze", str(run), "--treatment", "a", "--baseline", "b"]) == 2
        err = capsys.readouterr().err
        assert "TREC run" in err and "osustat import" not in err

    def test_missing_columns(self, tmp_path, capsys):
        path = tmp_path / "r.csv"
        pd.DataFrame({"query_id": ["q"], "value": [1]}).to_csv(path, index=False)
        assert main(["analyze", str(path), "--treatment", "a", "--baseline", "b"]) == 2
        assert "missing required columns" in capsys.readouterr().err


class TestCommandLine:
    def test_version_and_python_m(self, capsys):
        import subprocess
        import sys

        import osustat

        with pytest.raises(SystemExit) as exc:
            main(["--version"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.strip() == f"osustat {osustat.__version__}"
        done = subprocess.run(
            [sys.executable, "-m", "osustat", "--version"], capture_output=True, text=True
        )
        assert done.returncode == 0 and done.stdout.strip() == f"osustat {osustat.__version__}"

    def test_every_option_has_help(self):
        from osustat.cli.main import build_parser

        parser = build_parser()
        sub = next(a for a in parser._actions if a.dest == "command")
        for name, p in sub.choices.items():
            for action in p._actions:
                if action.dest in ("help",):
                    continue
                assert action.help, f"{name} {action.option_strings or action.dest} lacks help"

    @pytest.mark.parametrize(
        ("argv", "usage", "error"),
        [
            # a new user's review: a sub-command's unknown option printed the top-level usage
            (["analyze", "r.csv", "--metrc", "judge"], "usage: osustat analyze ",
             "osustat analyze: error: unrecognized arguments: --metrc judge"),
            # ... and an abbreviation was silently taken for the option it starts
            (["analyze", "r.csv", "--treat", "a", "--baseline", "b"], "usage: osustat analyze ",
             "osustat analyze: error: unrecognized arguments: --treat a"),
            (["data", "list", "--bogus"], "usage: osustat data list ",
             "osustat data list: error: unrecognized arguments: --bogus"),
        ],
    )  # fmt: skip
    def test_an_unknown_option_gets_its_sub_command_usage(self, argv, usage, error, capsys):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith(usage) and error in err and "{analyze,audit" not in err

    def test_json_file_beside_markdown(self, tmp_path, capsys):
        path = small_records(tmp_path)
        args = ["analyze", str(path), "--treatment", "osu-mem", "--baseline", "flat-vector"]
        args += ["--metric", "recall", "--resamples", "999", "--json", str(tmp_path / "r.json")]
        assert main(args) == 0
        out = capsys.readouterr().out
        assert out.startswith("# Cell-conditional analysis")  # the markdown, not replaced
        payload = json.loads((tmp_path / "r.json").read_text())
        assert payload["metrics"] == ["recall"]
        # a missing folder is created; a file in the way is named, not the hidden temp file
        assert main([*args[:-1], str(tmp_path / "new" / "r.json")]) == 0
        assert json.loads((tmp_path / "new" / "r.json").read_text())["metrics"] == ["recall"]
        (tmp_path / "afile").write_text("")
        assert main([*args[:-1], str(tmp_path / "afile" / "r.json")]) == 2
        err = capsys.readouterr().err
        assert f"{str(tmp_path / 'afile')!r} is not a folder" in err and ".tmp-" not in err

    def test_default_metrics_are_those_present(self, tmp_path, capsys):
        df = pd.read_csv(EXAMPLE)
        df = df[(df["metric"] == "recall") & (df["budget"] == 256)]
        path = tmp_path / "recall_only.csv"
        df.to_csv(path, index=False)
        args = ["analyze", str(path), "--treatment", "osu-mem", "--baseline", "flat-vector"]
        assert main([*args, "--resamples", "999", "--bootstrap-resamples", "100"]) == 0
        assert "## recall at B = 256" in capsys.readouterr().out

    def test_record_errors_name_file_lines(self, tmp_path, capsys):
        df = pd.read_csv(EXAMPLE)
        df.loc[4, "value"] = float("nan")
        path = tmp_path / "r.csv"
        df.to_csv(path, index=False)
        assert main(["analyze", str(path), "--treatment", "a", "--baseline", "b"]) == 2
        err = capsys.readouterr().err
        assert f"records file '{path}'" in err and "on lines 6" in err  # header is line 1


def test_reproduce_synthetic_is_atomic_with_provenance(tmp_path, capsys):
    out = tmp_path / "s"
    args = ["reproduce", "synthetic", "--out", str(out), "--episodes", "2"]
    assert main([*args, "--resamples", "50", "--no-progress"]) == 0
    text = (out / "report.md").read_text()
    assert "## Provenance" in text and '"episodes": 2' in text and '"seed": 0' in text
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["seeds"] == {"master": 0} and prov["resamples"] == {"sign-flip": 50}
    assert [p.name for p in tmp_path.iterdir()] == ["s"]
    # one command line per run: the report's header names the command its provenance records
    header = next(line for line in text.splitlines() if line.startswith("Command: `"))
    assert header.startswith(f"Command: `{prov['command']}` (master seed 0")
    assert f"- Command: `{prov['command']}`." in text
    # a choice written out at its default (or by its shortcut) is the same run; one set away
    # from it is not: reproduce compares the resolved settings, not the words
    assert main([*args, "--resamples", "50", "--no-progress", "--choice", "layout=spread"]) == 0
    assert main([*args, "--resamples", "50", "--no-progress", "--layout", "spread"]) == 0
    assert main([*args, "--resamples", "50", "--choice", "layout=segment"]) == 2
    assert (  # what differs is named (a reviewer: only "made from different inputs")
        "different inputs; differing settings: choices: {'layout': 'spread'} there, "
        "{'layout': 'segment'} here" in capsys.readouterr().err
    )
    # the embedding cache inside --out (a reviewer: deleted by every replacement, or refused
    # after the whole run): refused before any work
    cache = ["--cache", str(out / "cache"), "--resamples", "50"]
    assert main([*args, *cache]) == 2 and not (out / "cache").exists()


# -- issue 35 items 9-11: interruptions, other options, gzipped qrels ---------------------

_AB = ["--treatment", "osu-mem", "--baseline", "flat-vector", "--metric", "recall"]
_AB += ["--budget", "256", "--resamples", "99", "--bootstrap-resamples", "50"]


_SIGNAL_RUN = """
import signal, sys
import osustat.analysis
from osustat.cli.main import main

def killed(*args, **kwargs):
    # raise_signal: the signal goes to this (main) thread, handled before it returns
    signal.raise_signal(getattr(signal, sys.argv[1]))
    raise AssertionError("the signal should have ended the command")

osustat.analysis.analyze = killed
before = signal.getsignal(signal.SIGTERM)
# as at a terminal: a shell that starts a job in the background leaves SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
code = main(["analyze", sys.argv[2], *sys.argv[4:], "--out", sys.argv[3]])
assert signal.getsignal(signal.SIGTERM) == before, "the handler is the command's only"
sys.exit(code)
"""


@pytest.mark.parametrize(("signame", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_ends_with_a_message_not_a_traceback(tmp_path, signame, code):
    # In a process of its own: a signal is process-wide state, and a test worker that a
    # stray KeyboardInterrupt reaches stops (seen once in CI under pytest-xdist).
    import subprocess
    import sys

    out = tmp_path / "out"
    argv = [sys.executable, "-c", _SIGNAL_RUN, signame, str(EXAMPLE), str(out), *_AB]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert "interrupted" in done.stderr or "terminated (SIGTERM)" in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_an_interrupt_while_the_command_loads_is_one_line(monkeypatch, capsys):
    # a reviewer (stop 57): Ctrl-C in the first quarter second (the imports, the parser:
    # before main's handler) printed a KeyboardInterrupt traceback; the console script is
    # osustat.cli:run, which says it in one line
    import osustat.cli
    import osustat.cli.main

    def loading(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(osustat.cli.main, "main", loading)
    monkeypatch.delenv("OSUSTAT_DEBUG", raising=False)
    with pytest.raises(SystemExit) as stop:
        osustat.cli.run()
    assert stop.value.code == 130
    assert capsys.readouterr().err == (
        "osustat: interrupted; no unfinished report was left in place.\n"
    )

    def broken_import(*args):  # a signal inside an extension's init, as the command loads
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("initialization failed") from None

    monkeypatch.setattr(osustat.cli.main, "main", broken_import)
    with pytest.raises(SystemExit) as stop:
        osustat.cli.run()
    assert stop.value.code == 130

    def missing(*args):
        raise ImportError("No module named 'nonesuch'")

    monkeypatch.setattr(osustat.cli.main, "main", missing)
    with pytest.raises(ImportError, match="nonesuch"):
        osustat.cli.run()


def test_an_import_broken_by_a_signal_is_the_interrupt(monkeypatch, capsys):
    # SIGTERM inside scipy's extension init surfaced as "ImportError: initialization failed"
    # with a traceback (the reviewer, once in 19 tries); SIGINT there chains a
    # KeyboardInterrupt to it
    import osustat.analysis
    from osustat.cli.interrupts import from_interrupt

    def broken(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("initialization failed") from None

    monkeypatch.setattr(osustat.analysis, "analyze", broken)
    assert main(["analyze", str(EXAMPLE), *_AB]) == 130
    assert "interrupted; no unfinished report" in capsys.readouterr().err
    assert not from_interrupt(ImportError("no module named x"))


def test_other_options_into_the_same_folder_need_force(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", out]) == 0
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", out]) == 0  # the same run: replaced
    assert main(["analyze", str(EXAMPLE), *_AB, "--alpha", "0.1", "--out", out]) == 2
    assert "different run" in capsys.readouterr().err
    assert main(["analyze", str(EXAMPLE), *_AB, "--alpha", "0.1", "--out", out, "--force"]) == 0


def test_a_rerun_is_compared_by_its_parsed_arguments(tmp_path, capsys):
    # stop 57's red team: `--alpha 0.05` (the default, written out) was refused as a
    # different run without --force, as were the same options in another order
    import json

    out = str(tmp_path / "out")
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", out]) == 0
    swapped = [*_AB[2:4], *_AB[:2], *_AB[4:]]  # --baseline before --treatment
    assert main(["analyze", str(EXAMPLE), *swapped, "--alpha=.05", "--out", out]) == 0
    with pytest.MonkeyPatch.context() as mp:  # relative where it was absolute: its content
        mp.chdir(EXAMPLE.parent)
        assert main(["analyze", EXAMPLE.name, *_AB, "--out", out]) == 0
    spelled = f"{EXAMPLE.parent}/./{EXAMPLE.name}"  # the same file spelled another way
    assert main(["analyze", spelled, *_AB, "--out", out]) == 0
    # link/../records.csv where link is a symlink to real/sub names real/records.csv, not
    # the records.csv beside link that its lexical normal form names: kept as written
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "records.csv").write_text("a")
    (tmp_path / "records.csv").write_text("b")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "real" / "sub", target_is_directory=True)
    from osustat.cli.main import _plain

    assert _plain(f"{link}/../records.csv") == f"{link}/../records.csv"
    assert _plain(f"{tmp_path}/./records.csv") == str(tmp_path / "records.csv")
    assert _plain("hit@2") == "hit@2" and _plain(0.05) == 0.05
    assert main(["analyze", str(EXAMPLE), *_AB, "--unit", "query", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "different run (--unit: not given there, 'query' here)" in err
    recorded = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert recorded["arguments"]["--alpha"] == 0.05 and "--out" not in recorded["arguments"]
    assert "--jobs" not in recorded["arguments"]  # how it ran: the same run with --jobs 2
    assert spelled in recorded["command"]  # the command as typed, its arguments normalised
    assert recorded["arguments"]["records"] == str(EXAMPLE)
    # list options as the command reads them (issue 35): metric case, spaces, integers
    respelled = [*_AB[:5], " RECALL", "--budget", "0256 ", *_AB[8:]]
    assert main(["analyze", str(EXAMPLE), *respelled, "--out", out]) == 0
    assert main(["analyze", str(EXAMPLE), *_AB[:5], "recall,hit@2", *_AB[6:], "--out", out]) == 2
    assert "different run (--metric: 'recall' there, 'recall,hit@2' here)" in (
        capsys.readouterr().err
    )
    saved = tmp_path / "out" / "provenance.json"
    recorded = json.loads(saved.read_text())
    assert recorded["arguments"]["--metric"] == "recall"
    assert recorded["arguments"]["--budget"] == "256"
    # a report of an earlier version recorded the list as typed: read the same way (a reviewer)
    recorded["arguments"]["--metric"] = "Recall "
    saved.write_text(json.dumps(recorded))
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", out]) == 0
    from osustat.provenance import _listed

    assert _listed("--treatment", " 007, b") == "007,b"  # names stay names
    assert _listed("--hit-k", "2, 03") == "2,3" and _listed("--budget", "x") == "x"


def test_an_out_folder_holding_what_the_run_reads_or_writes_is_refused(tmp_path, capsys):
    # a red team (stop 60): `analyze rep/records.csv --out rep` deleted its own input, and a
    # --records-out inside --out was lost on the next run; import --force overwrote its input
    import shutil

    rep = tmp_path / "rep"
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", str(rep)]) == 0
    shutil.copy(EXAMPLE, rep / "records.csv")
    for force in ([], ["--force"]):
        assert main(["analyze", str(rep / "records.csv"), *_AB, "--out", str(rep), *force]) == 2
        assert "holds the records " in capsys.readouterr().err
    assert (rep / "records.csv").exists()
    inside = ["--records-out", str(rep / "x.csv")]
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", str(rep), *inside]) == 2
    err = capsys.readouterr().err  # refused before it is written: the message says why
    assert "holds the --records-out " in err and "the next report written there would" in err
    assert not (rep / "x.csv").exists()
    # a file of the user's there: refused without --force, said with it
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", str(rep)]) == 2
    assert "holds 1 file(s) its report did not write ('records.csv')" in capsys.readouterr().err
    assert main(["analyze", str(EXAMPLE), *_AB, "--out", str(rep), "--force"]) == 0
    assert "deletes 1 file(s) its report did not write" in capsys.readouterr().err
    # a named run file inside --out is found before any work (a reviewer: only at the save)
    run = rep / "a.run"
    run.write_text("q1 Q0 d1 1 1.0 x\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    trec = ["analyze", "--run", f"a={run}", "--run", f"b={run}", "--qrels", str(qrels)]
    assert main([*trec, "--treatment", "a", "--baseline", "b", "--out", str(rep)]) == 2
    assert "holds the --run " in capsys.readouterr().err
    # a method named like the output folder is no input (a reviewer: `--treatment osu-mem
    # --out osu-mem` refused its own rerun, even with --force)
    named = tmp_path / "osu-mem"
    for _ in range(2):
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(tmp_path)
            assert main(["analyze", str(EXAMPLE), *_AB, "--out", "osu-mem"]) == 0
    assert (named / "report.md").exists()
    mine = tmp_path / "mine.csv"
    mine.write_text("x")
    assert main(["import", f"zep={mine}", "--out", str(mine), "--force"]) == 2
    assert "is the zep file this import reads" in capsys.readouterr().err
    assert mine.read_text() == "x"


def test_cli_and_api_saves_into_one_folder_follow_one_rule(tmp_path, capsys):
    # user2's review: the README's Python example replaced its CLI report without a word
    import osustat

    out = tmp_path / "out"
    fast = {"metrics": ["hit@2"], "budgets": [256], "n_resamples": 99}
    fast |= {"bootstrap_resamples": 50}
    cli = ["analyze", str(EXAMPLE), *_AB[:4], "--metric", "hit@2", *_AB[6:]]
    assert main([*cli, "--out", str(out)]) == 0
    capsys.readouterr()
    same = osustat.analyze(EXAMPLE, treatment="osu-mem", baseline="flat-vector", **fast)
    same.save(out)  # the CLI's run from Python: replaced
    other = osustat.analyze(
        EXAMPLE, treatment="osu-mem", baseline="flat-vector", family="per-metric", **fast
    )
    with pytest.raises(ValueError, match=r"different run \(family: 'per-metric-budget' there"):
        other.save(out)
    # and the CLI into a folder the API wrote: its options compared too
    api = tmp_path / "api"
    other.save(api)
    assert main([*cli, "--out", str(api)]) == 2
    assert "different run (family: 'per-metric' there, 'per-metric-budget' here)" in (
        capsys.readouterr().err
    )


def test_gzipped_qrels_and_runs_are_read(tmp_path, capsys):
    import gzip

    trec = EXAMPLE.parent / "trec"
    for name in ("qrels.txt", "bm25.run"):
        (tmp_path / (name + ".gz")).write_bytes(gzip.compress((trec / name).read_bytes()))
    opts = ["--treatment", "rm3", "--baseline", "bm25", "--depth", "10", "--resamples", "99"]
    opts += ["--bootstrap-resamples", "50", "--zero-fill", "--json", "-"]
    plain = ["--run", f"bm25={trec / 'bm25.run'}", "--run", f"rm3={trec / 'rm3.run'}"]
    zipped = ["--run", f"bm25={tmp_path / 'bm25.run.gz'}", "--run", f"rm3={trec / 'rm3.run'}"]
    assert main(["analyze", *plain, "--qrels", str(trec / "qrels.txt"), *opts]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(["analyze", *zipped, "--qrels", str(tmp_path / "qrels.txt.gz"), *opts]) == 0
    b = json.loads(capsys.readouterr().out)
    assert a["comparisons"] == b["comparisons"]


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["analyze", "R", "--treatment", "a", "--baseline", "b", "--metric", "hit@2",
          "--metric", "recall"], "--metric"),
        (["analyze", "R", "--treatment", "a", "--baseline", "b", "--budget", "128",
          "--budget=256"], "--budget"),
        (["plan", "--effect", "0.1", "--sd", "1", "--sd", "2"], "--sd"),
        (["reproduce", "synthetic", "--out", "o", "--seeds", "1", "--seeds", "2"], "--seeds"),
        (["audit", "C", "--records", "R", "--seed", "1", "--seed", "2"], "--seed"),
    ],
)  # fmt: skip
def test_an_option_given_twice_is_refused_not_replaced(argv, option, capsys):
    """A red team's `--metric hit@2 --metric recall` analysed recall alone (argparse keeps the
    last value): every option that takes one value is refused when repeated, before any
    work; options that collect (--choice, --run) and flags are not."""
    from osustat.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f"error: {option} is given twice (the second would replace the first)" in (
        capsys.readouterr().err
    )


def test_osustats_own_warnings_read_as_the_clis_lines(tmp_path, capsys):
    # a red team read "…/osustat/cli/common.py:159: UserWarning: removed 1 unfinished output
    # folder(s) …" and the source line below it: the CLI's warnings read "osustat CMD: warning:"
    from osustat.cli.main import main

    (tmp_path / ".out.tmp-123").mkdir()
    argv = ["analyze", str(EXAMPLE), "--treatment", "osu-mem", "--baseline", "flat-vector"]
    argv += ["--metric", "hit@2", "--budget", "128", "--resamples", "99"]
    argv += ["--bootstrap-resamples", "50", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "osustat analyze: warning: removed 1 unfinished output folder(s) of interrupted" in err
    assert "UserWarning" not in err and "common.py" not in err
    # the driver lives in osustat.analyses (linked into the package by an editable install)
    (tmp_path / ".r.tmp-1").mkdir()
    assert main(["reproduce", "synthetic", "--out", str(tmp_path / "r"), "--choice", "x=1"]) == 2
    err = capsys.readouterr().err
    assert "osustat reproduce: warning: removed 1 unfinished output folder(s)" in err
    assert "UserWarning" not in err


@pytest.mark.parametrize(
    ("argv", "ending"),
    [
        (["analyze", "R", "--alpha", "0.05", "--alpha", "0.01"], "--alpha is given twice (the "
         "second would replace the first); give it once.\n"),
        (["analyze", "R", "--metric", "a", "--metric", "b"], "give it once, with a "
         "comma-separated list.\n"),
        (["reproduce", "synthetic", "--out", "o", "--data", "a", "b", "--data", "c"],
         "give it once, with its values separated by spaces.\n"),
    ],
)  # fmt: skip
def test_the_given_twice_message_says_how_the_option_takes_several_values(argv, ending, capsys):
    # a reviewer: "--alpha is given twice …; give it once, with a comma-separated list" (the
    # hint came from a comma anywhere in the help text)
    from osustat.cli.main import main

    with pytest.raises(SystemExit):
        main(argv)
    assert capsys.readouterr().err.endswith(ending)
