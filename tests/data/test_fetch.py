"""``osustat data fetch|verify`` against a real HTTP server on 127.0.0.1 (OSUSTAT_DATA_MIRROR).

The server is started and stopped by the test and serves a temporary copy of the tau-bench folder
of the shared data, laid out as the mirror convention says (``URL/<dataset folder>/<file>``).
"""

import functools
import hashlib
import http.server
import os
import shutil
import socket
import stat
import threading

import pytest

from osustat.cli.main import main
from osustat.data.registry import get_dataset

NAME = "tau-bench"


@pytest.fixture
def mirror(tmp_path, tau_bench_data):
    served = tmp_path / "served"
    shutil.copytree(tau_bench_data, served / NAME)
    for other in ("locomo", "locomo-systems"):
        if (tau_bench_data.parent / other).is_dir():
            shutil.copytree(tau_bench_data.parent / other, served / other)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def fresh(tmp_path, monkeypatch, mirror):
    served, url = mirror
    local = tmp_path / "data"
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(local))
    monkeypatch.setenv("OSUSTAT_DATA_MIRROR", url)
    return served, local


def test_fetch_verify_and_path(fresh, capsys):
    _, local = fresh
    assert main(["data", "fetch", NAME, "--no-progress"]) == 0
    for f in get_dataset(NAME).files:
        data = (local / NAME / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f.sha256
    assert sorted(p.name for p in local.iterdir()) == [NAME]  # no staging folder left
    mask = os.umask(0)
    os.umask(mask)
    for f in get_dataset(NAME).files:  # ordinary permissions, not a download temp's 0600
        assert stat.S_IMODE((local / NAME / f.path).stat().st_mode) == 0o666 & ~mask
    assert main(["data", "verify", NAME]) == 0
    assert "4 of 4 files verified" in capsys.readouterr().out
    assert main(["data", "path", NAME]) == 0
    assert capsys.readouterr().out.strip() == str(local / NAME)
    # A second fetch finds everything present and downloads nothing.
    assert main(["data", "fetch", NAME, "--no-progress"]) == 0
    assert "present and verified" in capsys.readouterr().err


def test_corrupted_download_is_refused(fresh, capsys):
    served, local = fresh
    bad = served / NAME / "gpt-4o-airline.json"
    bad.write_bytes(bad.read_bytes()[:-1] + b" ")
    found = hashlib.sha256(bad.read_bytes()).hexdigest()
    assert main(["data", "fetch", NAME, "--no-progress"]) == 2
    err = capsys.readouterr().err
    expected = next(f.sha256 for f in get_dataset(NAME).files if f.path == bad.name)
    assert expected in err and found in err and "removed" in err
    # Nothing half-written: no dataset folder (all files are staged first), no staging left.
    assert not (local / NAME).exists()
    assert [p.name for p in local.iterdir()] == []


def test_a_wrong_local_file_is_reported_then_replaced(fresh, capsys):
    _, local = fresh
    assert main(["data", "fetch", NAME, "--no-progress"]) == 0
    lic = local / NAME / "LICENSE"
    lic.write_bytes(b"x" * lic.stat().st_size)
    capsys.readouterr()
    assert main(["data", "verify", NAME]) == 2
    out = capsys.readouterr().out
    assert "LICENSE: WRONG" in out and hashlib.sha256(b"x" * 1063).hexdigest() in out
    assert main(["data", "fetch", NAME, "--no-progress"]) == 0
    assert "fetching it again" in capsys.readouterr().err
    assert main(["data", "verify", NAME]) == 0


def test_missing_files_make_verify_exit_1(fresh, capsys):
    assert main(["data", "verify", NAME]) == 1
    assert "gpt-4o-airline.json: missing" in capsys.readouterr().out
    assert main(["data", "path", NAME]) == 1


def test_restricted_license_is_shown_before_download(fresh, capsys):
    served, _ = fresh
    if not (served / "locomo").is_dir():
        pytest.skip("needs dataset 'locomo' beside tau-bench in OSUSTAT_DATA_DIR")
    assert main(["data", "fetch", "locomo", "--no-progress"]) == 0
    err = capsys.readouterr().err
    notice = err.index("CC-BY-NC-4.0, not for every use")
    assert "non-commercial" in err and notice < err.index("fetched from mirror")
    assert main(["data", "verify", "locomo"]) == 0


def test_fetch_without_network_names_the_mirror_and_the_folder(tmp_path, monkeypatch, capsys):
    with socket.socket() as sock:  # a port nothing listens on: the connection is refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OSUSTAT_DATA_MIRROR", f"http://127.0.0.1:{port}")
    assert main(["data", "fetch", NAME, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "could not download" in err and "OSUSTAT_DATA_MIRROR" in err
    assert str(tmp_path / "data" / NAME) in err and "Traceback" not in err
    assert not (tmp_path / "data" / NAME).exists()


def test_locomo_systems_licenses_are_shown_before_download(fresh, capsys):
    served, local = fresh
    if not (served / "locomo-systems").is_dir():
        pytest.skip("needs dataset 'locomo-systems' beside tau-bench in OSUSTAT_DATA_DIR")
    assert main(["data", "fetch", "locomo-systems", "--no-progress"]) == 0
    err = capsys.readouterr().err
    notice = err.index("CC-BY-NC-SA-4.0 (zep), not for every use")
    assert "Apache-2.0" in err[notice - 40 : notice] and notice < err.index("fetched from mirror")
    for f in get_dataset("locomo-systems").files:
        data = (local / "locomo-systems" / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f.sha256
    assert main(["data", "verify", "locomo-systems"]) == 0
    assert "5 of 5 files verified" in capsys.readouterr().out


@pytest.mark.parametrize("form", ["path", "file-url"])
def test_a_local_folder_is_a_mirror_too(tmp_path, monkeypatch, mirror, capsys, form):
    """Without network the obvious mirror is a copy of the data folder on this machine: a path
    or a file:// URL is copied from and checked like a download (a new user's review: it said
    "Unrecognized URL protocol 'file'")."""
    served, _ = mirror
    local = tmp_path / "data"
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(local))
    monkeypatch.setenv("OSUSTAT_DATA_MIRROR", str(served) if form == "path" else served.as_uri())
    assert main(["data", "fetch", NAME, "--no-progress"]) == 0
    for f in get_dataset(NAME).files:
        data = (local / NAME / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f.sha256
    assert "fetched from mirror" in capsys.readouterr().err
    # a wrong copy is refused as a wrong download is, and the folder is left as it was
    shutil.rmtree(local)
    first = get_dataset(NAME).files[0].path
    (served / NAME / first).write_bytes(b"not the file")
    assert main(["data", "fetch", NAME, "--no-progress"]) == 2
    assert not (local / NAME / first).exists()


def test_a_local_mirror_lacking_a_file_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OSUSTAT_DATA_MIRROR", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    assert main(["data", "fetch", NAME, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "is a local folder, but it holds no" in err and str(tmp_path / "empty" / NAME) in err
