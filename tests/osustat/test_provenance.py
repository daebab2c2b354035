"""atomic_output: a failed run leaves nothing new behind, and errors name the target."""

import sys

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
