"""``osustat.paired`` takes what ``osustat.analyze`` takes: a frame or a records file path."""

from pathlib import Path

import pytest

import osustat

RECORDS = Path(__file__).resolve().parents[2] / "examples" / "records.csv"


@pytest.mark.parametrize("given", [str(RECORDS), RECORDS])
def test_paired_reads_a_path_like_analyze(given):
    frame = osustat.load_records(RECORDS)
    want = osustat.paired(frame, "osu-mem", "flat-vector", metric="hit@2", budget=256)
    got = osustat.paired(given, "osu-mem", "flat-vector", metric="hit@2", budget=256)
    assert got.differences.tolist() == want.differences.tolist()
    assert [str(c) for c in got.cells] == [str(c) for c in want.cells]


def test_paired_names_a_missing_file(tmp_path):
    with pytest.raises(OSError, match=r"nope\.csv"):
        osustat.paired(str(tmp_path / "nope.csv"), "a", "b", metric="hit@2", budget=1)
