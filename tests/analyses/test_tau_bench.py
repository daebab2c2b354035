"""τ-bench pipeline: loading both formats, Stage B/C/D, bad input, a tiny end-to-end run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from osustat.analyses.tau_bench.data import augment_group, concatenate
from osustat.analyses.tau_bench.formats import TauDataError, load_files
from osustat.cli.main import main
from osustat.retrieval import HashingBagOfWordsEncoder


def _tau1_record(task: int, trial: int, n_turns: int = 6) -> dict[str, Any]:
    traj: list[dict[str, Any]] = [{"role": "system", "content": "policy"}]
    actions = []
    for k in range(n_turns):
        traj.append({"role": "user", "content": f"task {task} turn {k} please help"})
        args = {"user_id": f"user_{task}", "flight": f"HAT{k:03d}", "count": k + 1}
        traj.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{k}",
                        "type": "function",
                        "function": {"name": f"tool_{k % 3}", "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        traj.append(
            {
                "role": "tool",
                "tool_call_id": f"c{k}",
                "name": f"tool_{k % 3}",
                "content": f"result {k}",
            }
        )
        traj.append({"role": "assistant", "content": f"done step {k} for task {task}"})
        if k % 2 == 0:
            actions.append({"name": f"tool_{k % 3}", "kwargs": args})
    return {
        "task_id": task,
        "trial": trial,
        "reward": 1.0,
        "info": {
            "task": {"user_id": "u", "instruction": f"You are user {task}.", "actions": actions}
        },
        "traj": traj,
    }


def _tau2_file(tasks: range) -> dict[str, Any]:
    out_tasks, sims = [], []
    for t in tasks:
        msgs: list[dict[str, Any]] = [{"role": "assistant", "content": "Hi!", "tool_calls": None}]
        acts = []
        for k in range(5):
            msgs.append({"role": "user", "content": f"t{t} request {k}", "tool_calls": None})
            a1 = {"reservation_id": f"R{t}{k}", "nested": {"city": "NYC", "n": 3}}
            a2 = {"user_id": f"u{t}"}
            msgs.append(
                {
                    "role": "assistant",
                    "content": "checking",
                    "tool_calls": [
                        {
                            "id": "a",
                            "name": "get_reservation",
                            "arguments": a1,
                            "requestor": "assistant",
                        },
                        {"id": "b", "name": "get_user", "arguments": a2, "requestor": "assistant"},
                    ],
                }
            )
            msgs.append({"role": "tool", "id": "a", "content": "{}"})
            msgs.append({"role": "tool", "id": "b", "content": "{}"})
            if k < 3:
                acts.append(
                    {
                        "action_id": str(k),
                        "requestor": "assistant",
                        "name": "get_reservation",
                        "arguments": a1,
                    }
                )
        out_tasks.append(
            {
                "id": str(t),
                "user_scenario": {
                    "instructions": {
                        "reason_for_call": f"call {t}",
                        "known_info": "x",
                        "task_instructions": "y",
                    }
                },
                "evaluation_criteria": {"actions": acts},
            }
        )
        sims.append({"task_id": str(t), "trial": 0, "messages": msgs})
    return {
        "info": {"environment_info": {"domain_name": "airline"}},
        "tasks": out_tasks,
        "simulations": sims,
    }


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    p1 = tmp_path / "agent-airline.json"
    p1.write_text(json.dumps([_tau1_record(t, r) for t in range(10) for r in range(2)]))
    p2 = tmp_path / "tau2.json"
    p2.write_text(json.dumps(_tau2_file(range(6))))
    return [str(p1), str(p2)]


def test_load_both_formats_stage_b(files: list[str]) -> None:
    loaded = load_files(files)
    assert loaded.formats == {files[0]: "tau-bench", files[1]: "tau2-bench"}
    ep1 = loaded.episodes[0]
    # 6 turns x (user, call, tool, assistant) non-system messages; system skipped
    assert len(ep1.steps) == 24
    assert ep1.matched == (1, 9, 17)  # actions at turns 0, 2, 4 -> the call steps
    call = ep1.steps[1]
    assert call.tool == "tool_0" and call.subgoal == 1
    assert call.entities == frozenset({"user_0", "HAT000", "1"})
    assert call.cost == max(5, min(40, len(call.text) // 4))
    ep2 = next(e for e in loaded.episodes if e.source_file == files[1])
    # one step per tool call: greeting + 5 x (user, 2 calls, 2 tool results)
    assert len(ep2.steps) == 1 + 5 * 5
    assert ep2.steps[2].tool == "get_reservation" and ep2.steps[3].tool == "get_user"
    # one level of nesting: the city and the number inside `nested` are entities
    assert {"R00", "NYC", "3"} == set(ep2.steps[2].entities)
    assert ep2.matched == (2, 7, 12)
    assert ep2.task == "airline/0" and ep1.task == "airline/0"  # same task clusters together


def test_concatenate_prefix_and_drops(files: list[str]) -> None:
    loaded = load_files(files)
    groups, drops = concatenate(loaded.episodes)
    assert groups and all(150 <= g.n_steps <= 300 for g in groups)
    n_grouped = sum(len(g.sources) for g in groups)
    assert n_grouped + len([d for d in drops if "trailing" in d["reason"]]) == 26
    g = groups[0]
    tools = {t for t in g.tools if t is not None}
    assert all(t.startswith("src") and ":" in t for t in tools)
    plain, _ = concatenate(loaded.episodes, prefix=False)
    assert {t for t in plain[0].tools if t} == {t.split(":", 1)[1] for t in tools}
    # subgoal ids re-offset: sources never share a subgoal id
    sg = {}
    for i, s in enumerate(g.source_of):
        sg.setdefault(g.subgoals[i], set()).add(s)
    assert all(len(v) == 1 for v in sg.values())


def test_stage_d_lifts_every_query_to_tpep(files: list[str]) -> None:
    from osustat.analyses.tau_bench.run import cell_of

    groups, _ = concatenate(load_files(files).episodes)
    g = groups[0]
    emb = np.random.default_rng(0).normal(size=(g.n_steps, 8))
    aug = augment_group(g, emb, np.random.default_rng(1))
    n_ev = sum(len(s.episode.matched) for s in g.sources if s.focal)
    assert sum(aug.is_copy) == 3 * n_ev
    for ev in aug.evidence.values():
        assert cell_of(g, ev, aug.order) == "T+E+"
        assert np.all(np.asarray(aug.order)[ev] < g.n_steps)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ({"foo": 1}, "unknown format"),
        ([{"traj": [], "info": {}}], "record 0"),
        ("not json", "not valid JSON"),
    ],
)
def test_bad_input_names_file_and_record(tmp_path: Path, content: Any, needle: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(TauDataError, match=needle) as exc:
        load_files([p])
    assert "bad.json" in str(exc.value)


def test_unknown_tool_call_shape(tmp_path: Path) -> None:
    rec = _tau1_record(0, 0)
    rec["traj"][2]["tool_calls"][0] = {"weird": True}
    p = tmp_path / "t.json"
    p.write_text(json.dumps([_tau1_record(1, 0), rec]))
    with pytest.raises(TauDataError, match=r"record 1, message 2, tool call 0"):
        load_files([p])


def test_cli_bad_file_exit_2_nothing_written(tmp_path: Path, capsys: Any) -> None:
    p = tmp_path / "bad.json"
    p.write_text("[]")
    out = tmp_path / "out"
    rc = main(["reproduce", "tau-bench", "--data", str(p), "--out", str(out), "--no-progress"])
    assert rc == 2 and not out.exists()
    assert "bad.json" in capsys.readouterr().err


def test_no_usable_episode_names_rules(tmp_path: Path) -> None:
    from osustat import reproduce

    p = tmp_path / "short.json"
    p.write_text(json.dumps([_tau1_record(t, 0, n_turns=1) for t in range(3)]))
    with pytest.raises(TauDataError, match="fewer than 8 steps"):
        reproduce("tau-bench", tmp_path / "o", data=[p], encoder=HashingBagOfWordsEncoder(32))
    assert not (tmp_path / "o").exists()


def tiny_tau_run(files: list[str], out: Path, **kw: Any) -> Any:
    """``osustat.reproduce("tau-bench")`` at test size: a hashing encoder, 100 resamples, no
    progress bar, B = 256 only and no variant sweeps; `kw` overrides or adds options."""
    from osustat import reproduce

    small = {
        "encoder": HashingBagOfWordsEncoder(64),
        "n_resamples": 100,
        "progress": False,
        "budgets": (256,),
        "no_variants": True,
    }
    return reproduce("tau-bench", out, data=files, **(small | kw))


def test_end_to_end_tiny(files: list[str], tmp_path: Path) -> None:
    from osustat import validate_records

    kw: dict[str, Any] = {"budgets": (64, 256), "no_variants": False}
    a = tiny_tau_run(files, tmp_path / "a", **kw)
    b = tiny_tau_run(files, tmp_path / "b", **kw)
    for name in ("records.csv", "report.md", "structure.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    rec = validate_records(pd.read_parquet(tmp_path / "a" / "records.parquet"))
    assert set(rec["benchmark"]) == {
        "tau-bench",
        "tau-bench-augmented",
        "tau-bench-weak-query",
        "tau-bench-natural-query",
        "tau-bench-query-per-norm",
        "tau-bench-llm",
    }
    llm = rec[rec["benchmark"] == "tau-bench-llm"]
    assert set(llm["method"]) == {"OSU-Mem", "Flat Vector", "No LT Memory"}
    assert set(llm["seed"]) == {0, 1, 2}
    assert set(llm["metric"]) == {"soft_recall", "hard_recall@0.5"}
    assert rec["task"].str.startswith("airline/").all()
    aug = rec[rec["benchmark"] == "tau-bench-augmented"]
    assert set(aug["cell"]) == {"T+E+"}
    s = json.loads((tmp_path / "a" / "structure.json").read_text())
    assert s["queries"] == s["queries_all_focal"] >= s["queries_one_focal"] >= 1
    assert a.n_records == b.n_records
    report = (tmp_path / "a" / "report.md").read_text()
    assert "Table 4" in report and "T+E+" in report and "contamination" in report.lower()
    assert "`per-coordinate` vs `per-norm`" in report  # both query readings side by side
    assert "Gap ≥ 18 between its copies" in report and "Same-task twins" in report
    assert (
        s["stage_d"]["gap_met"] + s["stage_d"]["gap_infeasible"] == s["stage_d"]["evidence_steps"]
    )
    # Table 7's printed values stand beside ours in the §6.6 tables
    assert "paper n, OSU / Flat / none, Δ [95% CI]" in report
    assert "107, 0.230 / 0.166 / 0.008, Δ +0.064 [+0.008, +0.121]" in report
    assert not re.search(r"\b(True|False|None)\b", report)
    # It opens like LoCoMo's: what was run, the headline with unit and n, the choices, then
    # the tables.
    head = report.index("## Summary")
    assert head < report.index("## Data, Stage B/C") < report.index("## Table 4")
    summary = report[head : report.index("## Data, Stage B/C")]
    assert f"{s['queries']} queries over {s['tasks']} tasks" in summary
    assert f"unit = query (n = {s['queries']})" in summary and "unit = task (n = " in summary
    assert "Open choices these depend on" in summary and "`--sensitivity`" in summary
    assert "extractive stand-in, not an LLM" in summary
    # Table 7's claims are about GPT-4o-mini: with the stand-in they are not checkable
    assert "no LLM run: the §6.6 evidence was selected by the extractive stand-in" in report


def test_chat_selector_against_loopback_server(files: list[str], tmp_path: Path) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, **body})
            prompt = body["messages"][-1]["content"]
            lines = [ln.split("] ", 1)[1] for ln in prompt.splitlines() if ln.startswith("[")]
            content = "\n".join(f"- {t}" for t in lines[:3]) or "- nothing relevant"
            reply = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    # audit off (not the point here): a claims file none of whose claims is τ-bench's
    no_tau = tmp_path / "no-tau-claims.toml"
    no_tau.write_text(
        '[family.f]\ncorrection = "none"\n[[claim]]\nid = "other"\nfamily = "f"\n'
        'benchmark = "synthetic"\ntreatment = "A"\nbaseline = "B"\nmetric = "hit@2"\n'
        'budget = 256\ncell = "aggregate"\ndirection = "greater"\n'
    )
    try:
        port = server.server_address[1]
        tiny_tau_run(
            files,
            tmp_path / "o",
            selector="chat",
            endpoint=f"http://127.0.0.1:{port}/v1",
            model="stub-model",
            claims=no_tau,
        )
    finally:
        server.shutdown()
        server.server_close()
    rec = pd.read_csv(tmp_path / "o" / "records.csv")
    llm = rec[rec["benchmark"] == "tau-bench-llm"]
    n_q = llm["query_id"].nunique()
    assert n_q >= 1
    # one request per (seed, method, query); OSU-Mem, Flat Vector and no memory
    assert len(seen) == 3 * 3 * n_q
    assert {s["model"] for s in seen} == {"stub-model"}
    assert {s["seed"] for s in seen} == {0, 1, 2}
    assert all(s["path"] == "/v1/chat/completions" for s in seen)
    # the stub lists retrieved steps verbatim: OSU-Mem's soft recall is positive somewhere
    osu = llm[(llm["method"] == "OSU-Mem") & (llm["metric"] == "soft_recall")]
    assert osu["value"].max() > 0
    assert "chat completions endpoint" in (tmp_path / "o" / "report.md").read_text()


def test_cli_chat_needs_endpoint(files: list[str], tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "o"
    argv = ["reproduce", "tau-bench", "--data", *files, "--out", str(out), "--selector", "chat"]
    assert main(argv) == 2 and not out.exists()
    assert "--endpoint" in capsys.readouterr().err


def test_prefixing_removes_cross_source_sharing(files: list[str]) -> None:
    from osustat.analyses.tau_bench.structure import cross_source_sharing

    eps = load_files(files).episodes
    on = cross_source_sharing(concatenate(eps, prefix=True)[0])
    off = cross_source_sharing(concatenate(eps, prefix=False)[0])
    assert on["cross_source"] == 0.0 < off["cross_source"]
    assert on["same_source"] == off["same_source"] > 0
    assert on["cross_pairs"] == off["cross_pairs"]


def test_focal_one_keeps_one_query_per_group(files: list[str], tmp_path: Path) -> None:
    from osustat.analyses.tau_bench.workspace import group_queries

    groups, _ = concatenate(load_files(files).episodes)
    embs = [np.random.default_rng(0).normal(size=(g.n_steps, 8)) for g in groups]
    every = group_queries(groups, embs, "noisy-mean", 0, "all")
    one = group_queries(groups, embs, "noisy-mean", 0, "one")
    assert [len(q.positions) for q in one] == [min(1, len(q.positions)) for q in every]
    assert sum(len(q.positions) for q in every) > sum(len(q.positions) for q in one)
    for q in every:  # noisy-mean queries are unit vectors near their evidence mean
        assert np.allclose(np.linalg.norm(q.embeddings, axis=1), 1.0)


def test_table7_claims_are_unavailable_to_the_audit_only_without_a_language_model() -> None:
    from osustat.analyses.tau_bench.workspace import audit_unavailable

    assert audit_unavailable(None) == {}
    for model in ("chat", "local"):  # a language model ran: its selections are graded
        assert audit_unavailable({"selector": model, "name": "m"}) == {}
    why = audit_unavailable({"selector": "extractive", "name": "extractive"})
    assert list(why) == ["tau-bench-llm"] and why["tau-bench-llm"].startswith("no LLM run")


def test_the_audit_section_names_the_claims_file_used(files: list[str], tmp_path: Path) -> None:
    """Issue 34 item 4: a claims file with no τ-bench claim is named in the "not run" line,
    never the shipped ``analyses/claims/paper.toml``."""
    mine = tmp_path / "mine.toml"
    mine.write_text(
        '[family.f]\ncorrection = "none"\n\n[[claim]]\nid = "MINE-1"\nfamily = "f"\n'
        'benchmark = "synthetic"\ntreatment = "OSU-Mem"\nbaseline = "Flat Vector"\n'
        'metric = "recall"\nbudget = 256\ncell = "aggregate"\ndirection = "greater"\n'
    )
    res = tiny_tau_run(files, tmp_path / "o", claims=mine)
    report = (res.out / "report.md").read_text()
    assert f"Not run: no claim of `{mine}` applies to these records." in report
    assert "paper.toml" not in report
