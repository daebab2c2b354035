"""The paired-test command the "Your retrievers" section prints runs as printed (issue 21)."""

import re
import shlex
import shutil
from pathlib import Path

import pandas as pd

from osustat.cli.main import main
from osustat.reports.user_methods import render_user_methods

RECORDS = Path(__file__).resolve().parents[2] / "examples" / "records.csv"


def test_printed_command_runs(tmp_path, monkeypatch):
    records = pd.read_csv(RECORDS)
    text = render_user_methods(records, ["osu-mem"], references=["flat-vector"])
    commands = re.findall(r"Paired test: `([^`]+)`", text)
    assert len(commands) == records["benchmark"].nunique()
    assert "BENCHMARK" not in text
    shutil.copy(RECORDS, tmp_path / "records.csv")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(commands[0])
    assert args[:2] == ["osustat", "analyze"]
    fast = ["--metric", "hit@2", "--resamples", "200", "--bootstrap-resamples", "100"]
    assert main([*args[1:], *fast, "--out", "r"]) == 0
    assert (tmp_path / "r" / "report.md").exists()
