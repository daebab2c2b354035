"""atomic_output: a failed run leaves nothing new behind, and errors name the target."""

import sys
import warnings
from pathlib import Path

import pytest

from osustat.provenance import atomic_output


def test_failure_removes_the_parent_folders_it_created(tmp_path):
    target = tmp_path / "a" / "b" / "report"
    with pytest.raises(RuntimeError), atomic_output(target) as tmp:
        (tmp / "report.md").write_text("half")
        raise RuntimeError("figure failed")
    assert list(tmp_path.iterdir()) == []  # not even the empty "a/b" it made


def test_failure_keeps_parent_folders_that_existed(tmp_path):
    (tmp_path / "keep").mkdir()
    with pytest.raises(RuntimeError), atomic_output(tmp_path / "keep" / "new" / "r"):
        raise RuntimeError
    assert [p.name for p in tmp_path.iterdir()] == ["keep"]
    assert list((tmp_path / "keep").iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")
def test_uncreatable_output_folder_names_the_target():
    # used to say "No such file or directory: '/proc/.osustat-x.tmp-yd_a0x5o'"
    with pytest.raises(OSError, match="cannot create the output folder") as info:
        with atomic_output("/proc/osustat-no-such-folder"):
            pass
    assert info.value.filename == "/proc/osustat-no-such-folder"


def test_every_json_file_agrees_on_infinity(tmp_path):
    """The one JSON writer: NaN, inf and -inf (Python or numpy) become null, never the
    invalid tokens NaN / Infinity; numpy scalars become plain numbers."""
    import json

    import numpy as np

    from osustat.provenance import json_text, write_json

    payload = {
        "a": float("inf"), "b": np.float32("-inf"), "c": np.nan, "d": [np.int64(3), 0.5],
        2: {"e": np.float64("inf")},
    }  # fmt: skip
    text = json_text(payload, sort_keys=True)
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == {"a": None, "b": None, "c": None, "d": [3, 0.5], "2": {"e": None}}
    write_json(tmp_path / "x.json", payload, indent=1, sort_keys=True)
    assert (tmp_path / "x.json").read_text() == json_text(payload, indent=1, sort_keys=True) + "\n"


# -- issue 35 item 10: outputs that survive a kill -------------------------------------------


def _report(folder, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(text)


def test_a_signal_between_the_two_renames_leaves_a_complete_report(tmp_path, monkeypatch):
    import pathlib
    import signal

    out = tmp_path / "out"
    _report(out, "old")
    real = pathlib.Path.rename
    sent = []

    def rename(self, target):
        if self.name == "out" and not sent:  # the old report is moved away: a signal now
            sent.append(True)
            signal.raise_signal(signal.SIGTERM)  # to this thread, handled at once
        return real(self, target)

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    monkeypatch.setattr(pathlib.Path, "rename", rename)
    try:
        with pytest.raises(KeyboardInterrupt), atomic_output(out, force=True) as tmp:
            (tmp / "report.md").write_text("new")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert sent and (out / "report.md").read_text() == "new"  # the replacement completed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_leftovers_of_a_killed_run_are_cleaned_and_said(tmp_path):
    from osustat.provenance import clean_leftovers

    out = tmp_path / "out"
    _report(tmp_path / ".out.old-abc", "previous")  # killed between the renames (SIGKILL)
    _report(tmp_path / ".out.tmp-xyz", "half")  # killed while writing
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        clean_leftovers(out)
    assert (out / "report.md").read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert [str(w.message).split()[0] for w in said] == ["restored", "removed"]
    assert "unfinished output folder" in str(said[1].message)
    _report(tmp_path / ".out.old-def", "older")  # beside a complete report: removed
    with pytest.warns(UserWarning, match="removed .out.old-def") as said:
        with atomic_output(out, force=True) as tmp:
            (tmp / "report.md").write_text("new")
    assert said[0].filename == __file__  # the caller's `with` line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_warning_names_the_first_caller_outside_osustat(tmp_path):
    """A reviewer (stop 61): in a source tree osustat's benchmarks live outside its folder
    (``analyses/driver.py``), and a warning named the driver's ``with`` line: a module of
    osustat's is known by its name, not its path."""
    driver = {"__name__": "osustat.analyses.driver", "atomic_output": atomic_output}
    code = "def write(out):\n    with atomic_output(out, force=True) as tmp:\n"
    code += "        (tmp / 'report.md').write_text('new')\n"
    exec(compile(code, str(tmp_path / "analyses" / "driver.py"), "exec"), driver)
    out = tmp_path / "rep"
    with atomic_output(out) as tmp:
        (tmp / "report.md").write_text("old")
    (out / "mine.txt").write_text("notes")
    with pytest.warns(UserWarning, match="deletes 1 file") as said:
        driver["write"](out)
    assert said[0].filename == __file__


def test_a_different_run_is_refused_without_force(tmp_path):
    # issue 35 item 11: same inputs, other options replaced a report without --force
    from osustat.provenance import OutputError, check_target

    out = tmp_path / "out"
    _report(out, "x")
    (out / "provenance.json").write_text(
        '{"inputs_digest": "abc", "command": "osustat analyze r.csv --alpha 0.05 --out x"}'
    )
    same = "osustat analyze r.csv --alpha 0.05 --out x --force"
    assert check_target(out, "abc", command=same) == out  # --force is not an option of the run
    with pytest.raises(OutputError, match="different run"):
        check_target(out, "abc", command="osustat analyze r.csv --alpha 0.1 --out x")
    assert check_target(out, "abc", command="osustat analyze r.csv --alpha 0.1", force=True)
    how = "osustat analyze r.csv --jobs 2 --alpha 0.05 --scheduler=tcp://h:1 --out x"
    assert check_target(out, "abc", command=how) == out  # how it ran, not what it computed


def test_parsed_arguments_decide_where_both_runs_recorded_them(tmp_path):
    import json

    from osustat.provenance import OutputError, check_target

    out = tmp_path / "out"
    _report(out, "x")
    before = {"command": "analyze", "--alpha": 0.05, "--jobs": 1, "records": "r.csv"}
    recorded = {"inputs_digest": "abc", "command": "osustat analyze r.csv", "arguments": before}
    (out / "provenance.json").write_text(json.dumps(recorded))
    typed = "osustat analyze --alpha=.05 r.csv --jobs 2"  # other words, the same run
    same = {**before, "--jobs": 2}
    assert check_target(out, "abc", command=typed, arguments=same) == out
    with pytest.raises(OutputError, match=r"different run \(--alpha: 0.05 there, 0.1 here\)"):
        check_target(out, "abc", command=typed, arguments={**before, "--alpha": 0.1})
    # an argument one run has and the other lacks (added by a later version): no difference
    assert check_target(out, "abc", command=typed, arguments={**same, "--new": 3}) == out
    # where further copies go is not the run (analyze --json FILE, --records-out FILE)
    elsewhere = {**same, "--json": "x.json", "--records-out": "r.csv"}
    assert check_target(out, "abc", command=typed, arguments=elsewhere) == out
    # a report without recorded arguments (written before they were): its words compared
    recorded.pop("arguments")
    (out / "provenance.json").write_text(json.dumps(recorded))
    with pytest.raises(OutputError, match=r"different run \('osustat analyze r\.csv'\)"):
        check_target(out, "abc", command=typed, arguments=same)


def test_an_input_file_named_another_way_is_the_same_argument(tmp_path, monkeypatch):
    # stop 59's open item: records.csv and /home/me/records.csv read as two runs; an argument
    # naming the earlier run's hashed inputs is compared by content, one file at a time
    import json

    from osustat.provenance import OutputError, check_target, file_sha256

    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.csv").write_text("a,b\n1,2\n")
    (tmp_path / "other.csv").write_text("a,b\n1,3\n")
    (tmp_path / "grid.toml").write_text("x = 1\n")
    out = tmp_path / "out"
    _report(out, "x")
    before = {"records": "r.csv", "--reference": ["r.csv"], "--grid": "grid.toml"}
    inputs = [{"role": "records", "path": "./r.csv", "sha256": file_sha256("r.csv")}]
    recorded = {"inputs_digest": "abc", "command": "osustat analyze r.csv"}
    recorded |= {"arguments": before, "inputs": inputs}
    (out / "provenance.json").write_text(json.dumps(recorded))
    typed = "osustat analyze /abs/r.csv"
    absolute = str(tmp_path / "r.csv")
    same = {**before, "records": absolute, "--reference": [absolute]}
    assert check_target(out, "abc", command=typed, arguments=same) == out
    with pytest.raises(OutputError, match=r"different run \(records: 'r.csv' there"):
        check_target(out, "abc", command=typed, arguments={**same, "records": "other.csv"})
    with pytest.raises(OutputError, match=r"--reference: \['r.csv'\] there"):
        check_target(out, "abc", command=typed, arguments={**same, "--reference": [absolute] * 2})
    # a file the run did not hash as an input keeps the comparison of its spelling
    with pytest.raises(OutputError, match=r"--grid: 'grid.toml' there"):
        check_target(out, "abc", command=typed, arguments={**same, "--grid": "./x/../grid.toml"})


def test_a_named_run_file_spelled_another_way_is_the_same_argument(tmp_path, monkeypatch):
    # a reviewer (stop 60): `--run bm25=trec/bm25.run` then its absolute spelling: refused
    from osustat.provenance import _same_files, file_sha256

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.run").write_text("q Q0 d 1 1.0 x\n")
    (tmp_path / "b.run").write_text("q Q0 e 1 1.0 x\n")
    files = {"a.run": file_sha256("a.run")}
    absolute = str(tmp_path / "a.run")
    assert _same_files(["bm25=a.run"], [f"bm25={absolute}"], files)
    assert _same_files(["bm25=./a.run"], [f"bm25={absolute}"], files)  # as normalised
    assert not _same_files(["bm25=a.run"], [f"dense={absolute}"], files)  # another name
    assert not _same_files(["bm25=a.run"], ["bm25=b.run"], files)  # another content


def test_run_options_leave_out_how_a_run_is_carried_out():
    from osustat.provenance import _run_options

    given = "osustat reproduce s --jobs 4 --no-progress --cache /c --scheduler=tcp://h:1 --seed 2"
    assert _run_options(given) == ["osustat", "reproduce", "s", "--seed", "2"]
    assert _run_options("osustat reproduce s --jobs=4 --force --seed 2") == _run_options(given)


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        ([""], "python API"),
        (["-c"], "python API"),  # `python -c ...`, and pytest-xdist's workers
        (["/x/pytest", "-q"], "python API"),
        (["/x/notebook_kernel.py"], "python API"),
        (["/x/bin/osustat", "analyze", "r.csv"], "osustat analyze r.csv"),
    ],
)
def test_python_code_is_told_from_the_command(monkeypatch, argv, command):
    """A save from Python is compared on its options, a command's on its command line too:
    `python -c` read as a command named "-c" and was refused as a different run."""
    from osustat.provenance import command_line

    monkeypatch.setattr(sys, "argv", argv)
    assert command_line() == command


def test_the_current_folder_is_never_an_output(tmp_path, monkeypatch):
    # a red team's `--out . --force` ended in "Device or resource busy: '.' -> '..old-…'"
    from osustat.provenance import OutputError, check_target

    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    for target in (".", "..", str(tmp_path / "sub")):
        with pytest.raises(OutputError, match=r"is the current folder or holds it"):
            check_target(target, None, force=True)
    assert check_target("report", None) == Path("report")


def test_a_python_callers_refusal_names_its_argument_not_the_cli_flag(tmp_path):
    # a reviewer: `result.save(out)` from Python was told "`--out` ... pass --force"
    from osustat.provenance import API_COMMAND, OutputError, check_target

    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"^`out` '.*file' is an existing file, not a folder"):
        check_target(tmp_path / "file", None, command=API_COMMAND)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("x")
    with pytest.raises(OutputError, match=r"^`out` .* pass force=True to replace it"):
        check_target(tmp_path / "full", None, command=API_COMMAND)
    with pytest.raises(OutputError, match=r"^`--out` .* pass --force to replace it"):
        check_target(tmp_path / "full", None, command="osustat analyze r.csv --out full")


def test_a_folder_holding_an_input_is_never_replaced(tmp_path):
    # a red team (stop 60): `analyze rep/records.csv --out rep` deleted the records it read,
    # without --force where rep held "the same run", and with it otherwise
    from osustat.provenance import OutputError, Provenance, check_target

    out = tmp_path / "rep"
    _report(out, "old")
    (out / "provenance.json").write_text('{"inputs_digest": "abc"}')
    (out / "data").mkdir()
    (out / "data" / "records.csv").write_text("a,b\n")
    inside = str(out / "data" / "records.csv")
    for force in (False, True):
        with pytest.raises(OutputError, match=r"holds the records '.*records\.csv'.* delete"):
            check_target(out, "abc", force=force, keep=[("records", inside)])
    with pytest.raises(OutputError, match=r"holds the --records-out '.*new\.csv'"):
        check_target(out, "abc", keep=[("--records-out", str(out / "new.csv"))])
    assert check_target(out, "abc", force=True, keep=[("records", str(tmp_path / "x"))]) == out
    # a Provenance passes its input files and folders (not the settings text some runs hash
    # beside them; a reviewer: a reproduce data folder inside --out was deleted with --force)
    prov = Provenance.for_files([("records", inside)], command="osustat analyze")
    folder = ("data", str(out / "data"), "0")
    prov = Provenance(command=prov.command, inputs=(*prov.inputs, folder, ("settings", "{}", "0")))
    assert prov.input_files() == [("records", inside), ("data", str(out / "data"))]
    with pytest.raises(OutputError, match="holds the records"):
        with prov.atomic_output(out, force=True):
            pass
    assert (out / "data" / "records.csv").exists()


def test_files_a_report_did_not_write_are_refused_before_any_work(tmp_path):
    # a red team (stop 60): a user's file in a report folder was deleted by the next run; a
    # reviewer: the first check ran after the work (a reproduce's whole run lost) and took
    # the report's own figures, absent from a save without them, for a user's files
    import json

    from osustat.provenance import API_COMMAND, OutputError, check_target

    def save(tmp, *figures):
        (tmp / "report.md").write_text("report")
        for name in figures:
            (tmp / "figs").mkdir(exist_ok=True)
            (tmp / "figs" / name).write_text("png")
        (tmp / "provenance.json").write_text('{"inputs_digest": "abc"}')

    out = tmp_path / "rep"
    with atomic_output(out) as tmp:
        save(tmp, "a.png", "b.png")
    listed = json.loads((out / "provenance.json").read_text())
    assert listed == {"inputs_digest": "abc", "outputs": ["figs/a.png", "figs/b.png", "report.md"]}
    with atomic_output(out, inputs_digest="abc") as tmp:  # the same run without its figures
        save(tmp)
    assert sorted(p.name for p in out.iterdir()) == ["provenance.json", "report.md"]
    (out / "mine.txt").write_text("notes")
    (out / ".DS_Store").write_text("a file browser's")  # not counted: no one's work
    (out / "sub").mkdir()
    (out / "sub" / "fig.png").write_text("x")
    (tmp_path / "data").mkdir()  # a link to a user's data folder, counted as one file
    (out / "sub" / "data").symlink_to(tmp_path / "data", target_is_directory=True)
    message = r"^`--out` '.*rep' holds 3 file\(s\) its report did not write \('mine.txt', 'sub/"
    with pytest.raises(OutputError, match=message):
        check_target(out, "abc")  # before any work
    with pytest.raises(OutputError, match=message):
        with atomic_output(out, inputs_digest="abc"):
            raise AssertionError("never reached: refused before the work")
    assert (out / "report.md").read_text() == "report" and (out / "mine.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "rep"]  # no temporary folder
    with pytest.raises(OutputError, match=r"^`out` .* pass force=True to delete them"):
        check_target(out, "abc", command=API_COMMAND)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # check_target's own check with force says nothing
        assert check_target(out, "abc", force=True) == out
    with pytest.warns(UserWarning, match=r"deletes 3 file\(s\) its report did not write") as said:
        with atomic_output(out, force=True) as tmp:
            save(tmp)
    assert len(said) == 1  # once, where they are deleted
    assert said[0].filename == __file__  # the caller's line, not osustat's (issue 35)
    assert (tmp_path / "data").is_dir()  # the link went, not what it points to
    assert sorted(p.name for p in out.iterdir()) == ["provenance.json", "report.md"]
    # a report that did not list its files (written before they were listed) or a folder that
    # is no report (a reviewer: emptied without a word with --force): compared with the new
    # report once it is written -- refused then without force, said with it
    (out / "provenance.json").write_text('{"inputs_digest": "abc"}')
    (out / "mine.txt").write_text("notes")
    assert check_target(out, "abc") == out
    with pytest.raises(OutputError, match=r"holds 1 file\(s\) its report did not write \('mine"):
        with atomic_output(out, inputs_digest="abc") as tmp:
            save(tmp)
    assert (out / "mine.txt").exists()
    with atomic_output(out, inputs_digest="abc") as tmp:  # its own files: replaced, no word
        save(tmp)
        (tmp / "mine.txt").write_text("the new report writes it")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "thesis.tex").write_text("x")
    with pytest.warns(UserWarning, match=r"deletes 1 file\(s\) .* \('thesis.tex'\)"):
        with atomic_output(plain, force=True) as tmp:
            save(tmp)


def test_a_symlinked_output_folder_is_refused(tmp_path):
    # a reviewer (stop 60): the rename replaced the link by a folder, left the old report
    # where the link pointed, and warned of a leftover on every later run
    from osustat.provenance import OutputError, check_target

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    for target in (tmp_path / "link", f"{tmp_path / 'link'}/"):
        with pytest.raises(OutputError, match=r"is a symbolic link \(to .*real'\).*folder itself"):
            check_target(target, None, force=True)
