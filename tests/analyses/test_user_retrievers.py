"""A user retriever (examples/my_retriever.py) through all three `reproduce` pipelines.

Tiny sizes and a stand-in text encoder (feature hashing, not a neural model) keep each run to
seconds; the records must carry the user's method name and must not depend on the backend.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from osustat.analyses.protocol import Backend
from osustat.cli.main import main
from osustat.retrieval import HashingBagOfWordsEncoder
from osustat.retrieval.registry import load_retriever

from .test_tau_bench import _tau1_record, _tau2_file, tiny_tau_run
from .test_toolbench import _write_data

QUIET = Backend(progress=False)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPEC = "my_retriever:RecencyCosine"
NAME = "Recency Cosine"


@pytest.fixture
def in_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from examples/ (the module is importable from the current directory, like
    ``python -m``) and embed with the stand-in encoder instead of the real model."""
    import osustat.retrieval as retrieval

    monkeypatch.chdir(EXAMPLES)
    monkeypatch.setattr(retrieval, "SentenceTransformerEncoder", _StandIn)


class _StandIn(HashingBagOfWordsEncoder):
    def __init__(self) -> None:
        super().__init__(64)


def _tau_files(root: Path) -> list[str]:
    root.mkdir(parents=True)
    p1 = root / "agent-airline.json"
    p1.write_text(json.dumps([_tau1_record(t, r) for t in range(6) for r in range(2)]))
    p2 = root / "tau2.json"
    p2.write_text(json.dumps(_tau2_file(range(4))))
    return [str(p1), str(p2)]


def _reproduce(tmp: Path, benchmark: str, out: str, *extra: str) -> Path:
    target = tmp / out
    common = ["--out", str(target), "--resamples", "50", "--no-progress"]
    argv = ["reproduce", benchmark, *common, "--retriever", SPEC, "--cache", str(tmp / "c")]
    assert main([*argv, *extra]) == 0
    assert not (tmp / f".{out}.sweep").exists()  # the resume folder goes once written
    return target


def _methods(out: Path) -> set[str]:
    return set(pd.read_csv(out / "records.csv")["method"])


@pytest.mark.usefixtures("in_examples")
def test_synthetic_cli(tmp_path: Path) -> None:
    out = _reproduce(tmp_path, "synthetic", "one", "--episodes", "2")
    methods = pd.read_csv(out / "records.csv")["method"].drop_duplicates().tolist()
    assert methods[-1] == NAME and "OSU-Mem" in methods  # user methods sort last
    report = (out / "report.md").read_text()
    assert "## Your retrievers" in report and f"**{NAME}**" in report
    assert f"--retriever {SPEC}" in report
    assert [p.name for p in tmp_path.iterdir()] == ["one"]


def test_tau_bench_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    files = _tau_files(tmp_path / "data")
    # no variant sweeps: the weak/natural sweeps get the same arguments; the analysis is slow
    res = tiny_tau_run(
        files,
        tmp_path / "tau",
        n_resamples=50,
        selector=None,
        retrievers=(load_retriever(SPEC),),
    )
    rec = pd.read_csv(res.out / "records.csv")
    mine = rec[rec["method"] == NAME]
    assert set(mine["benchmark"]) == {"tau-bench", "tau-bench-augmented"}
    # the same queries and budgets as OSU-Mem on every benchmark it runs on
    cols = ["benchmark", "query_id", "budget", "metric"]
    osu = rec[(rec["method"] == "OSU-Mem") & rec["benchmark"].isin(set(mine["benchmark"]))]
    assert sorted(mine[cols].values.tolist()) == sorted(osu[cols].values.tolist())
    report = (res.out / "report.md").read_text()
    assert "## Your retrievers" in report and f"--retriever {SPEC}" in report


@pytest.mark.usefixtures("in_examples")
def test_toolbench_cli(tmp_path: Path) -> None:
    data = _write_data(tmp_path / "tb")
    extra = ["--data", str(data), "--episodes", "2", "--seeds", "1"]
    out = _reproduce(tmp_path, "toolbench", "tb-out", *extra)
    rec = pd.read_csv(out / "records.csv")
    mine = rec[rec["method"] == NAME]
    assert set(mine["benchmark"]) == {"toolbench", "toolbench-nev2", "toolbench-nev4"}
    assert len(mine) == len(rec[rec["method"] == "Flat Vector"])
    assert "## Your retrievers" in (out / "report.md").read_text()


@pytest.mark.usefixtures("in_examples")
@pytest.mark.parametrize("benchmark", ["tau-bench", "toolbench"])
def test_cli_hands_retrievers_and_backend_to_the_pipeline(tmp_path, monkeypatch, benchmark):
    import osustat.analyses.driver as driver

    seen: dict[str, Any] = {}

    def fake(checked: Any) -> Any:
        seen["spec"] = checked.spec
        return driver.ReproduceResult(tmp_path, 0, 0.0)

    monkeypatch.setattr(driver, "_run", fake)
    data = tmp_path / "d"
    data.mkdir()
    if benchmark == "tau-bench":
        data = data / "t.json"
        data.write_text("[]")
    out = tmp_path / "o"
    argv = ["reproduce", benchmark, "--out", str(out), "--data", str(data), "--jobs", "2"]
    assert main([*argv, "--retriever", f"{SPEC},{SPEC.replace(':', ':Recency')}"]) == 2
    assert main([*argv, "--retriever", SPEC, "--no-progress"]) == 0
    spec = seen["spec"]
    assert [r.name for r in spec.retrievers] == [NAME]
    b = spec.backend
    assert b.jobs == 2 and b.scheduler is None and b.progress is False
    assert b.checkpoint == tmp_path / ".o.sweep"


def _tau_sweep(tmp_path: Path) -> dict[str, Any]:
    from osustat.analyses.tau_bench.data import concatenate
    from osustat.analyses.tau_bench.formats import load_files
    from osustat.analyses.tau_bench.workspace import encode_groups, group_queries

    groups, _ = concatenate(load_files(_tau_files(tmp_path / "data")).episodes)
    embs, _ = encode_groups(groups, HashingBagOfWordsEncoder(64), [])
    return {
        "groups": groups,
        "embeddings": embs,
        "queries": group_queries(groups, embs, "noisy-mean", 0, "all"),
        "benchmark": "tau-bench",
        "methods": ("Flat Vector", "OSU-Mem"),
        "budgets": (128, 256),
        "augment": True,
    }


def _three_sweeps(tmp_path: Path, backend: Backend = QUIET) -> list[str]:
    """Records (as CSV text) of a tiny synthetic, tau-bench and ToolBench sweep."""
    from osustat.analyses.synthetic.run import run_synthetic
    from osustat.analyses.tau_bench.run import run_sweep
    from osustat.analyses.toolbench.data import load_toolbench
    from osustat.analyses.toolbench.episodes import build_episodes
    from osustat.analyses.toolbench.run import run_episodes, step_table

    mine = (load_retriever(SPEC),)
    syn = run_synthetic(
        3, 5, budgets=(256,), methods=("OSU-Mem",), retrievers=mine, backend=backend
    ).records
    tau = run_sweep(**_tau_sweep(tmp_path), retrievers=mine, backend=backend)[0]
    loaded = load_toolbench(_write_data(tmp_path / "tb"))
    table = step_table(loaded.trajectories, HashingBagOfWordsEncoder(64))
    eps = build_episodes(loaded.trajectories, table.query_embeddings, n_episodes=3, seed=1)
    tb = run_episodes(table, eps, retrievers=mine, chunk=1, backend=backend).records
    for rec in (syn, tau, tb):
        assert NAME in set(rec["method"])
    return [rec.to_csv(index=False) for rec in (syn, tau, tb)]


def test_sweeps_do_not_depend_on_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    assert _three_sweeps(tmp_path / "a") == _three_sweeps(tmp_path / "b", replace(QUIET, jobs=2))


@pytest.mark.slow
def test_sweeps_on_a_local_dask_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")
    monkeypatch.chdir(EXAMPLES)
    serial = _three_sweeps(tmp_path / "a")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert _three_sweeps(tmp_path / "b", replace(QUIET, scheduler=client)) == serial


_NAMED = "from osustat.retrieval import FlatVector\nclass Mine(FlatVector):\n    name = {name}\n"


class TestBadRetriever:
    @pytest.mark.parametrize(
        ("spec", "needle"),
        [
            ("no_such_module_xyz:Thing", "cannot import module 'no_such_module_xyz'"),
            ("my_retriever:Nope", "has no attribute 'Nope'"),
            ("collections:OrderedDict", "does not follow the retriever protocol"),
            ("my_retriever:pack", "constructing it with no arguments failed"),
            ("not_an_entry_point", "no entry point named 'not_an_entry_point'"),
            (",", "`--retriever` is empty"),
        ],
    )
    def test_bad_spec_exits_2_naming_the_option(self, tmp_path, capsys, monkeypatch, spec, needle):
        monkeypatch.chdir(EXAMPLES)
        out = tmp_path / "o"
        argv = ["reproduce", "synthetic", "--out", str(out), "--retriever", spec]
        assert main([*argv, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "`--retriever`" in err and needle in err, err
        assert list(tmp_path.iterdir()) == []

    @pytest.mark.parametrize(
        ("body", "needle"),
        [
            ("raise RuntimeError('at import')\n", "raised RuntimeError: at import"),
            ("def f(:\n", "raised SyntaxError: "),
            ("import no_such_dep61\n", "imports 'no_such_dep61', which is not installed"),
            (_NAMED.format(name="''"), "its `name` '' is empty"),
            (_NAMED.format(name="'Mine '"), "its `name` 'Mine ' has spaces around it"),
            (_NAMED.format(name="'a,b'"), "its `name` 'a,b' holds a comma"),
            (_NAMED.format(name="42"), "its `name` must be text"),
            (_NAMED.format(name="'osu-mem'"), "is already a method of this run as 'OSU-Mem'"),
        ],
    )
    def test_a_module_or_name_the_run_cannot_use_is_refused(
        self, tmp_path, capsys, monkeypatch, body, needle
    ):
        # a red team (stop 61): a module failing at import printed a traceback (exit 1); an
        # empty name wrote records analyze refused, 'OSU-Mem ' and 'a,b' printed commands
        # that fail, 42 was written as '42'
        (tmp_path / "mod61.py").write_text(body)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, "mod61", raising=False)  # each case's own module
        out = tmp_path / "o"
        argv = ["reproduce", "synthetic", "--out", str(out), "--no-progress"]
        assert main([*argv, "--retriever", "mod61:Mine"]) == 2
        err = capsys.readouterr().err
        assert "`--retriever`" in err and needle in err and "Traceback" not in err, err
        assert not out.exists()

    def test_a_paper_method_name_is_refused(self, tmp_path, capsys, monkeypatch):
        (tmp_path / "clash.py").write_text(
            "from osustat.retrieval import FlatVector\n"
            "class Mine(FlatVector):\n    name = 'OSU-Mem'\n"
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        argv = ["reproduce", "synthetic", "--out", str(tmp_path / "o"), "--retriever"]
        assert main([*argv, "clash:Mine"]) == 2
        err = capsys.readouterr().err
        assert "`--retriever`" in err and "'OSU-Mem' is already a method" in err, err
        argv[1] = "toolbench"  # not a ToolBench method, but twice is one too many
        argv += ["clash:Mine", "--data", str(tmp_path), "--retriever"]
        assert main([*argv, "clash:Mine"]) == 2
        assert "'OSU-Mem' is already a method" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_scheduler_gives_the_jobs_records(tmp_path: Path, monkeypatch) -> None:
    """`reproduce synthetic --scheduler ADDRESS` (a user retriever included) writes the records
    of `--jobs 1`, and leaves no resume folder."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.chdir(EXAMPLES)
    local = _reproduce(tmp_path, "synthetic", "local", "--episodes", "2")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        extra = ["--episodes", "2", "--scheduler", cluster.scheduler_address]
        dask = _reproduce(tmp_path, "synthetic", "dask", *extra)
    assert (dask / "records.csv").read_bytes() == (local / "records.csv").read_bytes()


#: Retrievers that break the contract in a run (after a new user's review, whose
#: ``badret.py`` they follow): each is caught on its first bad answer.
BROKEN = """
import numpy as np
from osustat.retrieval.base import BaseRetriever, RetrievalResult, pack


class _Cos(BaseRetriever):
    oracle = False

    def order(self, q, end):
        return np.argsort(-(self.trajectory_.embeddings[:end] @ q), kind="stable")


class TooMany(_Cos):
    name = "toomany"

    def _retrieve(self, q, budget, end, ev):
        steps = list(self.order(q, end))
        return self._result(steps, float(self.trajectory_.costs[steps].sum()))


class Dup(_Cos):
    name = "dup"

    def _retrieve(self, q, budget, end, ev):
        steps, used = pack(self.order(q, end), self.trajectory_.costs, budget / 2)
        if steps:  # the first step twice, within the budget
            steps, used = [*steps, steps[0]], used + self.trajectory_.costs[steps[0]]
        return self._result(steps, used)


class FloatSteps(_Cos):
    name = "floatsteps"

    def _retrieve(self, q, budget, end, ev):
        steps, used = pack(self.order(q, end), self.trajectory_.costs, budget)
        return RetrievalResult(np.array(steps, dtype=float), used)


class Raises(_Cos):
    name = "raises"

    def _retrieve(self, q, budget, end, ev):
        raise KeyError("boom")
"""


class TestBrokenRetrieverInARun:
    """`reproduce --retriever` checks every answer of a user retriever with the contract's
    per-answer rules and stops at the first breach: exit 2, one line naming the retriever,
    episode, budget and the rule (or the exception), and no report."""

    @pytest.mark.parametrize(
        ("cls", "rule"),
        [
            ("TooMany", "tokens of a budget"),
            ("Dup", "duplicate steps ["),
            ("FloatSteps", "steps must be integers; got float64"),
            ("Raises", "raised KeyError: 'boom'"),
        ],
    )
    def test_exit_2_naming_retriever_episode_budget_rule(
        self, tmp_path, capsys, monkeypatch, cls, rule
    ):
        (tmp_path / "badret_t.py").write_text(BROKEN)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delenv("OSUSTAT_DEBUG", raising=False)
        out = tmp_path / "o"
        argv = ["reproduce", "synthetic", "--out", str(out), "--episodes", "2", "--no-progress"]
        assert main([*argv, "--retriever", f"badret_t:{cls}"]) == 2
        err = capsys.readouterr().err
        first, *rest = err.strip().splitlines()
        assert rule in first and f"`--retriever badret_t:{cls}`" in first, err
        assert "episode ep000" in first and "budget " in first, err
        assert f"osustat check-retriever badret_t:{cls}" in first, err
        assert rest == ["(set OSUSTAT_DEBUG=1 for a traceback)"], err
        assert not out.exists()

    def test_caught_in_worker_processes(self, tmp_path, capsys, monkeypatch):
        (tmp_path / "badret_w.py").write_text(BROKEN)  # a module no other test imported
        monkeypatch.chdir(tmp_path)  # found through the current directory: sent by value
        argv = ["reproduce", "synthetic", "--out", "o", "--episodes", "2", "--jobs", "2"]
        assert main([*argv, "--no-progress", "--retriever", "badret_w:TooMany"]) == 2
        err = capsys.readouterr().err
        assert "tokens of a budget" in err and "episode ep00" in err, err
