"""Resuming an interrupted sweep: finished tasks are kept beside --out and not run again."""

from __future__ import annotations

import numpy as np
import pytest

from osustat.analyses.protocol import Backend
from osustat.analyses.runner import child_seeds, run_tasks, stable_digest
from osustat.analyses.synthetic import run as synthetic_run
from osustat.cli.main import main

GENERATE = synthetic_run.generate_episode
ARGS = ["--episodes", "3", "--resamples", "50", "--seed", "3"]


def _draw(i, seed_seq):
    return i, float(np.random.default_rng(seed_seq).random())


class _Boom(Exception):
    pass


def _failing_after(k: int, fn):
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) > k:
            raise _Boom(f"interrupted after {k} tasks")
        return fn(*args, **kwargs)

    return wrapped, calls


def test_runner_resumes_and_the_bar_counts_resumed_tasks(tmp_path, capsys):
    tasks = [(i, s) for i, s in enumerate(child_seeds(5, 5))]
    bomb, _ = _failing_after(2, _draw)
    bomb.__module__, bomb.__qualname__ = _draw.__module__, _draw.__qualname__
    with pytest.raises(_Boom):
        run_tasks(bomb, tasks, backend=Backend(checkpoint=tmp_path, progress=False))
    assert len(list(tmp_path.glob("*.pkl"))) == 2
    again = run_tasks(_draw, tasks, backend=Backend(checkpoint=tmp_path), desc="resumed")
    assert again == run_tasks(_draw, tasks, backend=Backend(progress=False))
    err = capsys.readouterr().err
    first_frame = err.split("\r")[1]
    assert "resumed" in first_frame and "2/5" in first_frame, first_frame
    assert "resuming 2 of 5 tasks" in err.split("\r")[0]
    run_tasks(_draw, tasks, backend=Backend(checkpoint=tmp_path, progress=False))
    assert capsys.readouterr().err == (  # said without a bar too
        f"osustat reproduce: resuming 5 of 5 tasks from {tmp_path} (made by the same code, "
        "settings and data)\n"
    )


def test_keys_do_not_depend_on_insertion_or_hash_order():
    """Sets and dicts are hashed in a canonical order, so a key is the same in every process
    (whatever PYTHONHASHSEED, which reorders sets of strings)."""
    import pickle

    a, b = {1, 9}, set()
    b.update([9, 1])  # 1 and 9 share a hash slot: iteration order follows insertion
    assert list(a) != list(b) and pickle.dumps(a) != pickle.dumps(b)
    assert stable_digest(a) == stable_digest(b)
    assert stable_digest({"j": 1, "k": 2}) == stable_digest({"k": 2, "j": 1})
    seq = np.random.SeedSequence(4).spawn(2)
    assert stable_digest(seq[1]) == stable_digest(np.random.SeedSequence(4).spawn(2)[1])
    assert stable_digest(seq[0]) != stable_digest(seq[1])
    assert stable_digest(np.arange(3)) != stable_digest(np.arange(3.0))
    assert stable_digest((1, 2)) != stable_digest([1, 2]) != stable_digest((2, 1))


def test_interrupted_reproduce_resumes_byte_identical(tmp_path, monkeypatch, capsys):
    fresh = tmp_path / "fresh"
    assert main(["reproduce", "synthetic", "--out", str(fresh), *ARGS, "--no-progress"]) == 0

    out = tmp_path / "s"
    ckpt = tmp_path / ".s.sweep"
    argv = ["reproduce", "synthetic", "--out", str(out), *ARGS]
    bomb, _ = _failing_after(1, synthetic_run.generate_episode)
    monkeypatch.setattr(synthetic_run, "generate_episode", bomb)
    with pytest.raises(_Boom):
        main([*argv, "--no-progress"])
    assert not out.exists() and len(list(ckpt.glob("*.pkl"))) == 1
    assert "1 finished task(s) kept in" in capsys.readouterr().err

    counted, calls = _failing_after(10**9, GENERATE)
    monkeypatch.setattr(synthetic_run, "generate_episode", counted)
    assert main(argv) == 0
    assert len(calls) == 2  # only the unfinished episodes ran
    err = capsys.readouterr().err
    assert " 1/3 " in err.split("\r")[1]  # the bar starts at the resumed
    said = f"resuming 1 of 3 tasks from {ckpt} (made by the same code, settings and data)\n"
    assert said in err.split("\r")[0]  # one line, before the bar
    for name in ("records.csv", "membership.csv", "structure.json"):
        assert (out / name).read_bytes() == (fresh / name).read_bytes(), name
    assert not ckpt.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh", "s"]


def test_a_failure_before_any_task_leaves_nothing(tmp_path, monkeypatch):
    bomb, _ = _failing_after(0, synthetic_run.generate_episode)
    monkeypatch.setattr(synthetic_run, "generate_episode", bomb)
    with pytest.raises(_Boom):
        main(["reproduce", "synthetic", "--out", str(tmp_path / "s"), *ARGS, "--no-progress"])
    assert list(tmp_path.iterdir()) == []


def test_tau_and_toolbench_sweeps_resume_from_their_checkpoints(tmp_path, monkeypatch):
    """Finished tasks of the real-data sweeps are loaded, not run again (shared step table
    included in the key)."""
    from osustat.analyses.tau_bench import run as tau_bench_run
    from osustat.analyses.toolbench import run as toolbench_run
    from osustat.analyses.toolbench.data import load_toolbench
    from osustat.analyses.toolbench.episodes import build_episodes
    from osustat.retrieval import HashingBagOfWordsEncoder

    from .test_toolbench import _write_data
    from .test_user_retrievers import _tau_sweep

    ckpt = tmp_path / "ckpt"
    backend = Backend(checkpoint=ckpt, progress=False)
    kw = _tau_sweep(tmp_path)
    tau_first = tau_bench_run.run_sweep(**kw, backend=backend)[0]
    loaded = load_toolbench(_write_data(tmp_path / "tb"))
    table = toolbench_run.step_table(loaded.trajectories, HashingBagOfWordsEncoder(64))
    eps = build_episodes(loaded.trajectories, table.query_embeddings, n_episodes=3, seed=1)
    tb_first = toolbench_run.run_episodes(table, eps, chunk=1, backend=backend)
    n_tasks = len(list(ckpt.glob("*.pkl")))
    assert n_tasks == sum(1 for q in kw["queries"] if q.positions) + 3

    def never(*args, **kwargs):
        raise AssertionError("a finished task ran again")

    monkeypatch.setattr(tau_bench_run, "_trajectory", never)
    monkeypatch.setattr(toolbench_run, "episode_trajectory", never)
    assert tau_bench_run.run_sweep(**kw, backend=backend)[0].equals(tau_first)
    again = toolbench_run.run_episodes(table, eps, chunk=1, backend=backend)
    assert again.records.equals(tb_first.records) and again.episodes.equals(tb_first.episodes)
    # another step table (other embeddings) is another sweep: its tasks run
    other = toolbench_run.step_table(loaded.trajectories, HashingBagOfWordsEncoder(32))
    with pytest.raises(AssertionError, match="ran again"):
        toolbench_run.run_episodes(other, eps, chunk=1, backend=backend)


def _interrupt_after_two(argv, tmp_path, monkeypatch, capsys):
    """Run `argv` (into ``tmp_path / "s"``) until two episodes finished, then interrupt it."""
    bomb, _ = _failing_after(2, synthetic_run.generate_episode)
    monkeypatch.setattr(synthetic_run, "generate_episode", bomb)
    with pytest.raises(_Boom):
        main(argv)
    assert len(list((tmp_path / ".s.sweep").glob("*.pkl"))) == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    ("change", "what"),
    [("code", "benchmark code"), ("settings", "settings and data")],
)
def test_a_resume_after_a_code_or_settings_change_recomputes(
    change, what, tmp_path, monkeypatch, capsys
):
    """Finished tasks made by other code (e.g. before a bug fix) or with other settings are
    never reloaded: they are removed, recomputed, and the run says so."""
    import osustat.analyses.driver as driver

    out = tmp_path / "s"
    argv = ["reproduce", "synthetic", "--out", str(out), *ARGS, "--no-progress"]
    _interrupt_after_two(argv, tmp_path, monkeypatch, capsys)
    if change == "code":
        real = driver._source_digest
        monkeypatch.setattr(
            driver, "_source_digest", lambda m: "fixed" if "synthetic" in m else real(m)
        )
    else:
        argv[argv.index("--resamples") + 1] = "60"
    counted, calls = _failing_after(10**9, GENERATE)
    monkeypatch.setattr(synthetic_run, "generate_episode", counted)
    assert main(argv) == 0
    assert len(calls) == 3  # every episode again: nothing stale reloaded
    err = capsys.readouterr().err
    assert f"2 finished task(s) in {tmp_path / '.s.sweep'} were made with other {what}" in err


def test_a_resume_after_the_user_retriever_was_edited_recomputes(tmp_path, monkeypatch, capsys):
    """Finished tasks made by an earlier version of a `--retriever` module are not reloaded
    (the review's run mixed 240 old-code rows into the new records): the module's file is
    part of what made them."""
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "my_retriever.py"
    mods = tmp_path / "mods"
    mods.mkdir()
    module = mods / "edited_retriever.py"
    module.write_text(example.read_text())
    monkeypatch.syspath_prepend(str(mods))
    monkeypatch.delitem(sys.modules, "edited_retriever", raising=False)
    out = tmp_path / "s"
    argv = ["reproduce", "synthetic", "--out", str(out), *ARGS, "--no-progress"]
    argv += ["--retriever", "edited_retriever:RecencyCosine"]
    _interrupt_after_two(argv, tmp_path, monkeypatch, capsys)
    text = module.read_text()
    assert "weight: float = 0.2" in text
    module.write_text(text.replace("weight: float = 0.2", "weight: float = 5.0"))
    # the CLI's second run is a new process: it imports the edited module, not the cached one
    monkeypatch.delitem(sys.modules, "edited_retriever", raising=False)
    counted, calls = _failing_after(10**9, GENERATE)
    monkeypatch.setattr(synthetic_run, "generate_episode", counted)
    assert main(argv) == 0
    assert len(calls) == 3  # every episode again: no task of the old code reloaded
    err = capsys.readouterr().err
    ckpt = tmp_path / ".s.sweep"
    assert f"2 finished task(s) in {ckpt} were made with other user retriever code" in err
    assert sys.modules["edited_retriever"].RecencyCosine().weight == 5.0  # the edited code ran
    monkeypatch.delitem(sys.modules, "edited_retriever", raising=False)
