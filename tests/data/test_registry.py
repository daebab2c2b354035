"""The registry against the shared data, the recipes, and ``resolve_data``."""

import json

import pytest

from osustat.cli.main import main
from osustat.data.recipes import build
from osustat.data.registry import datasets, get_dataset
from osustat.data.store import DataCorruptError, DataMissingError, data_dir, resolve_data
from tests.data.conftest import data_folder

#: τ-bench's declared default datasets (analyses/tau_bench/benchmark.py).
TAU_DATA = ("tau-bench", "tau2-bench")


def _sources(name, path):
    return next(f for f in get_dataset(name).files if f.path == path).sources


@pytest.mark.parametrize("name", [d.name for d in datasets()])
def test_every_registered_file_matches_the_shared_copy(name, capsys):
    data_folder(name)
    assert main(["data", "verify", name]) == 0
    out = capsys.readouterr().out
    n = len(get_dataset(name).files)
    assert f"{n} of {n} files verified" in out


def test_list_shows_license_source_and_status(capsys):
    data_folder("locomo")
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert f"data folder: {data_dir()}" in out
    assert out.count("present, verified") == len(datasets())
    assert "CC-BY-NC-4.0 (restricted" in out and "non-commercial" in out
    assert "59a200c6d575d595120f1cb70fea53cef0632f6b" in out


def test_registry_is_consistent():
    for ds in datasets():
        assert len({f.path for f in ds.files}) == len(ds.files)
        for f in ds.files:
            assert len(f.sha256) == 64 and f.size > 0
            assert (f.url is None) != (f.recipe is None)
            assert f.recipe is None or f.sources
        inputs = {f.path for f in ds.files} | {"."}
        assert set(ds.inputs) <= inputs


def test_tau2_recipes_rebuild_the_shared_files(tau2_bench_data):
    """Split each prepared file back into the sources its README describes; rebuild it."""
    name = "airline-adaptive-claude-opus-4-6.json"
    raw = (tau2_bench_data / name).read_bytes()
    doc = json.loads(raw)
    blobs = [json.dumps(doc["simulations"]).encode(), json.dumps(doc["tasks"]).encode()]
    assert build("tau2-adaptive", blobs, _sources("tau2-bench", name)) == raw

    name = "airline-ironshell-mixed.json"
    raw = (tau2_bench_data / name).read_bytes()
    doc = json.loads(raw)
    runs = []
    for src in doc["sources"]:
        sims = [
            {k: v for k, v in s.items() if k not in ("source_file", "source_agent_info")}
            for s in doc["simulations"]
            if s["source_file"] == src["file"]
        ]
        info = {**doc["info"], "agent_info": src["agent_info"]}
        run = {"timestamp": src["timestamp"], "info": info, "tasks": [], "simulations": sims}
        runs.append(json.dumps(run).encode())
    blobs = [*runs, json.dumps(doc["tasks"]).encode()]
    assert build("tau2-ironshell-mixed", blobs, _sources("tau2-bench", name)) == raw


def test_tau_bench_task_export_from_python_source(tau_bench_data):
    """The tasks as Python source (never executed, read with ast) -> the shared JSON, byte-equal."""
    raw = (tau_bench_data / "airline_tasks_test.json").read_bytes()
    lines = ["from tau_bench.types import Action, Task", "", "TASKS = ["]
    for t in json.loads(raw):
        acts = ", ".join(
            f"Action(name={a['name']!r}, kwargs={a['kwargs']!r})" for a in t["actions"]
        )
        lines.append(
            f"    Task(annotator={t['annotator']!r}, user_id={t['user_id']!r}, "
            f"instruction={t['instruction']!r}, actions=[{acts}], outputs={t['outputs']!r}),"
        )
    lines.append("]")
    src = "\n".join(lines).encode()
    assert build("tau-bench-tasks", [src], _sources("tau-bench", "airline_tasks_test.json")) == raw
    with pytest.raises(ValueError, match="one TASKS"):
        build("tau-bench-tasks", [b"x = 1"], _sources("tau-bench", "airline_tasks_test.json"))


def test_resolve_data_names_paths_and_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(DataMissingError) as err:
        resolve_data(["tau-bench"])
    msg = str(err.value)
    assert "'tau-bench'" in msg and "`osustat data fetch tau-bench`" in msg
    assert str(tmp_path / "nowhere" / "tau-bench") in msg and "gpt-4o-airline.json" in msg
    with pytest.raises(DataMissingError, match="osustat data fetch tau-bench tau2-bench"):
        resolve_data(None, TAU_DATA)  # default: tau-bench and tau2-bench
    given = tmp_path / "mine.json"
    given.write_text("[]")
    assert resolve_data([str(given)], TAU_DATA) == [given]
    typo = tmp_path / "typo.json"  # neither a path nor a name: left to the pipeline to report
    assert resolve_data([str(typo)], TAU_DATA) == [typo]
    # A hand-made copy of the input file of the right size but other bytes is refused.
    (tmp_path / "nowhere" / "tau-bench").mkdir(parents=True)
    (tmp_path / "nowhere" / "tau-bench" / "gpt-4o-airline.json").write_bytes(b"x" * 4114038)
    with pytest.raises(DataCorruptError, match="expected SHA-256 e9e6c029"):
        resolve_data(["tau-bench"])


def test_a_hand_made_copy_of_the_input_file_alone_is_enough(tmp_path, monkeypatch):
    real = data_folder("tau-bench") / "gpt-4o-airline.json"
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path))
    (tmp_path / "tau-bench").mkdir()
    (tmp_path / "tau-bench" / real.name).symlink_to(real)
    assert resolve_data(["tau-bench"]) == [tmp_path / "tau-bench" / real.name]


def test_resolve_data_on_the_shared_copy():
    root = data_folder("toolbench").parent
    assert resolve_data(None, ("toolbench",)) == [root / "toolbench"]
    data_folder("tau2-bench")
    paths = resolve_data(None, TAU_DATA)
    assert paths[0] == root / "tau-bench" / "gpt-4o-airline.json"
    assert len(paths) == 7 and all(p.is_file() for p in paths)


def test_unknown_dataset_is_exit_2(capsys):
    assert main(["data", "fetch", "tau-bnech"]) == 2
    assert "unknown dataset 'tau-bnech'" in capsys.readouterr().err


def test_reproduce_names_the_missing_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OSUSTAT_DATA_DIR", str(tmp_path / "empty"))
    out = str(tmp_path / "out")
    assert main(["reproduce", "tau-bench", "--data", "tau-bench", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "dataset 'tau-bench' is not in" in err and "`osustat data fetch tau-bench`" in err
    assert main(["reproduce", "toolbench", "--out", out]) == 2
    assert "`osustat data fetch toolbench`" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
