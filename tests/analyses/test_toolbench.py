"""ToolBench pipeline: G.1 loading, planted episodes, the sweep and the report (tiny inputs)."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from osustat.analyses.toolbench.data import (
    COT_DIR,
    entities_of,
    load_toolbench,
    parse_cut_message,
    step_cost,
    tool_signature,
)
from osustat.analyses.toolbench.episodes import build_episodes, evenly_spaced
from osustat.retrieval import HashingBagOfWordsEncoder

TOPICS = ["weather", "movies", "football", "recipes", "stocks", "flights", "music", "books"]


def _cot_message(name, args, response="ok"):
    msg = repr({"name": name, "arguments": json.dumps(args, indent=2), "response": response})
    return msg[:100]


def _write_data(root, n=48, steps=4):
    """A CoT evalset file of `n` runs (messages cut at 100 chars) and one DFS answer file."""
    runs = {}
    for k in range(n):
        topic = TOPICS[k % len(TOPICS)]
        node = {
            "role": "tool",
            "message": _cot_message("Finish", {"return_type": "give_answer"}),
            "next": [],
        }
        for j in reversed(range(steps)):
            args = {"city": f"{topic.title()}ville{k}", "n": j + 1}
            if j == steps - 1:
                args["note"] = "x" * 120  # cut: only the pairs before the cut survive
            node = {
                "role": "tool",
                "message": _cot_message(f"get_{topic}_{j}_for_{topic}_api", args),
                "next": [node],
            }
        details = [
            {
                "role": "system",
                "message": "",
                "next": [{"role": "user", "message": f"Tell me about {topic}", "next": [node]}],
            }
        ]
        runs[str(k)] = {
            "query": f"Please find {topic} information for city {k}",
            "available_tools": [],
            "answer": {
                "method": "CoT",
                "total_steps": steps,
                "final_answer": "",
                "answer_details": details,
            },
        }
    (root / COT_DIR).mkdir(parents=True)
    (root / COT_DIR / "G1_category.json").write_text(json.dumps(runs))
    dfs = root / "data_example" / "answer" / "G1_answer"
    dfs.mkdir(parents=True)
    chain = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}]
    for j in range(3):
        chain.append(
            {
                "role": "assistant",
                "content": f"thought {j}",
                "function_call": {
                    "name": f"f{j}_for_dfs_api",
                    "arguments": json.dumps({"id": "ABC", "k": j}),
                },
            }
        )
        chain.append({"role": "function", "name": f"f{j}_for_dfs_api", "content": "r" * 200})
    body = {"answer_generation": {"query": "A DFS query about ABC", "train_messages": [chain]}}
    (dfs / "1_ChatGPT_DFS_woFilter_w2.json").write_text(json.dumps(body))
    (dfs / "2_ChatGPT_DFS_woFilter_w2.json").write_text(
        json.dumps({"answer_generation": {"valid_data": False, "query": "x"}})
    )
    return root


class TestParsing:
    # -- Reference values (G.1 rules) --
    def test_tool_signature(self):
        assert tool_signature("genre_list_for_advanced_movie_search") == "advanced_movie_search"
        assert tool_signature("a_for_b_for_c") == "c"
        assert tool_signature("get_user_details") == "get"
        assert tool_signature("Finish") == "Finish"

    def test_entities_one_level_deep(self):
        args = {
            "s": "ok",
            "short": "a",
            "long": "y" * 81,
            "n": 7,
            "f": 1.5,
            "b": True,
            "d": {"inner": "Lyon", "deep": {"x": "no"}},
            "l": ["Paris", 3],
        }
        assert entities_of(args) == ("1.5", "3", "7", "Lyon", "Paris", "ok")

    def test_cost(self):
        assert [step_cost("x" * n) for n in (0, 20, 23, 100, 500)] == [5, 5, 5, 25, 40]

    def test_cut_message(self):
        full = _cot_message("g_for_api", {"q": "Paris"}, "resp")
        assert parse_cut_message(full) == ("g_for_api", {"q": "Paris"}, "resp", False)
        cut = _cot_message("g_for_api", {"q": "Paris", "note": "z" * 200})
        name, args, _, truncated = parse_cut_message(cut)
        assert (name, args, truncated) == ("g_for_api", {"q": "Paris"}, True)
        assert parse_cut_message("{'na") is None


class TestLoad:
    def test_counts_and_marks(self, tmp_path):
        data = load_toolbench(_write_data(tmp_path))
        s = data.summary()
        assert s["trajectories"] == 49  # 48 CoT + 1 DFS; the invalid DFS file is counted
        assert s["exclusions"] == {"answer file without train_messages (valid_data=false)": 1}
        cot = [t for t in data.trajectories if t.source == "tooleval-cot"]
        last = cot[0].steps[3]
        assert last.truncated and "note" not in last.arguments
        assert cot[0].steps[0].truncated is False
        assert cot[0].steps[0].tool == "weather_api" and cot[0].steps[0].subgoal == 0
        dfs = next(t for t in data.trajectories if t.source == "data_example")
        assert [s.entities for s in dfs.steps] == [("0", "ABC"), ("1", "ABC"), ("2", "ABC")]
        assert dfs.steps[0].cost == 40  # "thought 0 " + 200 chars of response

    # -- Input validation --
    def test_missing_dir(self, tmp_path):
        with pytest.raises(FileNotFoundError, match="does not exist"):
            load_toolbench(tmp_path / "nope")

    def test_empty_dir(self, tmp_path):
        with pytest.raises(FileNotFoundError, match="holds no ToolBench answer files"):
            load_toolbench(tmp_path)

    def test_malformed_json_names_file(self, tmp_path):
        _write_data(tmp_path)
        (tmp_path / COT_DIR / "G2_category.json").write_text("{not json")
        with pytest.raises(ValueError, match=r"G2_category\.json: not valid JSON"):
            load_toolbench(tmp_path)

    def test_missing_query_names_entry(self, tmp_path):
        _write_data(tmp_path)
        (tmp_path / COT_DIR / "G2_category.json").write_text(json.dumps({"77": {"answer": {}}}))
        with pytest.raises(ValueError, match="entry '77': `query` is missing"):
            load_toolbench(tmp_path)


class TestEpisodes:
    def _data(self, tmp_path):
        data = load_toolbench(_write_data(tmp_path))
        q = HashingBagOfWordsEncoder(64).encode([t.query for t in data.trajectories])
        return data, q

    def test_design(self, tmp_path):
        data, q = self._data(tmp_path)
        eps = build_episodes(
            data.trajectories, q, n_episodes=5, seed=1, n_ev=3, background=60, n_neighbours=10
        )
        assert len({e.target for e in eps}) == 5  # without replacement while possible
        for e in eps:
            assert len(e.steps) == 63 and e.evidence.tolist() == evenly_spaced(3, 63).tolist()
            assert (e.steps[e.evidence, 0] == e.target).all()
            assert len(set(e.steps[e.evidence, 1].tolist())) == 3
            assert (e.n_confounder, e.n_unrelated) == (45, 15)
        again = build_episodes(
            data.trajectories, q, n_episodes=5, seed=1, n_ev=3, background=60, n_neighbours=10
        )
        assert all((a.steps == b.steps).all() for a, b in zip(eps, again, strict=True))

    def test_confounders_come_from_neighbours(self, tmp_path):
        data, q = self._data(tmp_path)
        (e,) = build_episodes(
            data.trajectories,
            q,
            n_episodes=1,
            seed=3,
            n_ev=2,
            background=40,
            confounder_fraction=1.0,
            n_neighbours=5,
        )
        q64 = np.asarray(q, dtype=np.float64)
        qn = q64 / np.linalg.norm(q64, axis=1, keepdims=True)
        sims = qn @ qn[e.target]
        sims[e.target] = -np.inf
        nbrs = set(np.argsort(-sims, kind="stable")[:5].tolist())
        bg = np.delete(e.steps, e.evidence, axis=0)
        assert set(bg[:, 0].tolist()) <= nbrs

    def test_too_small_says_what_could_be_built(self, tmp_path):
        data, q = self._data(tmp_path)
        with pytest.raises(ValueError, match="n_ev <= 4 could be built"):
            build_episodes(data.trajectories, q, n_ev=9)
        with pytest.raises(ValueError, match="at most n_neighbours = 47 could be built"):
            build_episodes(data.trajectories, q, n_neighbours=60)


def test_reproduce_end_to_end(tmp_path):
    from osustat import reproduce, validate_records

    data = _write_data(tmp_path / "data")
    kw = {
        "encoder": HashingBagOfWordsEncoder(64),
        "seeds": (1, 2),
        "episodes": 3,
        "background": 60,
        "n_resamples": 99,
        "progress": False,
    }
    res = reproduce("toolbench", tmp_path / "out", data=data, **kw)
    rec = validate_records(pd.read_parquet(res.out / "records.parquet"))
    assert set(rec["benchmark"]) == {"toolbench", "toolbench-nev2", "toolbench-nev4"}
    assert {
        "coverage-overlap-beta0.12",
        "coverage-disjoint-beta0.20",
        "Flat Vector",
        "cohesion-overlap-alpha0.010",
    } <= set(rec["method"])
    assert "cohesion-overlap-alpha0.010" not in set(rec[rec.benchmark == "toolbench-nev2"].method)
    assert set(rec["seed"]) == {1, 2} and set(rec["budget"]) == {200, 400, 800, 1600}
    # one query per episode and method/budget/metric
    n = rec.groupby(["benchmark", "method", "budget", "metric", "seed"]).size()
    assert (n == 3).all()
    report = (res.out / "report.md").read_text()
    for heading in (
        "Table 3",
        "Table 6",
        "Table 15",
        "Table 16",
        "Table 14",
        "Trend test",
        "membership",
        "Cohesion",
        "Structural check",
        "Audit",
    ):
        assert heading in report
    assert not re.search(r"\b(True|False|None)\b", report)
    _summary_equals_tables(report)
    # the tables say the seeds and episodes of this run (issue 35 item 14), not the paper's
    assert "Table 3 (beta = .12, n_ev = 3): mean over 2 seeds x 3 episodes" in report
    assert "3 seeds" not in report and "3 x 200" not in report
    structure = json.loads((res.out / "structure.json").read_text())
    assert structure["design"]["toolbench"]["episodes"] == 6
    again = reproduce("toolbench", tmp_path / "out2", data=data, **kw)
    assert (again.out / "report.md").read_bytes() == (res.out / "report.md").read_bytes()
    assert (again.out / "records.csv").read_bytes() == (res.out / "records.csv").read_bytes()


def _table_row(report: str, heading: str, first: str) -> list[str]:
    """The cells of the row starting with `first` in the table under `heading`."""
    section = report.split(heading, 1)[1]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} under {heading!r}")


def _summary_equals_tables(report: str) -> None:
    """The summary opens the report and its numbers are the tables' (issue 38 item 6): per
    budget, Δ is Table 6's / Table 15's gap at beta = .12 and p its target-level p; the CI
    holds the target-level mean."""
    assert report.index("## Summary") < report.index("## Data and design")
    assert report.index("## Summary") < report.index("## Table 3")
    head = report.split("## Summary", 1)[1].split("\n## ", 1)[0]
    for label, heading in (("Recall (Table 6)", "## Table 6"), ("Hit@2 (Table 15)", "## Table 15")):
        line = next(x for x in head.splitlines() if x.startswith(f"- {label}: "))
        found = re.findall(
            r"B = (\d+): Δ = (\S+) \(n = (\d+) episodes\); per target (\S+), 95% CI "
            r"\[(\S+), (\S+)\], p ([=<]) (\S+) \(n = (\d+) targets\)",
            line,
        )
        row = _table_row(report, heading, "0.12")
        assert [int(f[0]) for f in found] == [200, 400, 800, 1600]
        for k, (_, gap, n_ep, tgap, lo, hi, rel, p, n_t) in enumerate(found):
            cell = row[1 + 2 * k]  # beta, then (ours, paper) per budget
            assert cell.startswith(gap), (cell, gap)
            table_p = re.search(r"target p (\S+);", cell).group(1)
            assert (f"< {p}" if rel == "<" else p) == table_p
            assert float(lo) <= float(tgap) <= float(hi)
            assert int(n_ep) == 6 and int(n_t) >= 1  # 2 seeds x 3 episodes
    assert "**Open choices these depend on.** This run: trajectory-groups = `g1-g2`" in head


def test_cli_missing_data_exits_2(tmp_path, capsys):
    from osustat.cli.main import main

    code = main(
        [
            "reproduce",
            "toolbench",
            "--data",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path / "o"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


class TestDeclaredChoices:
    def test_splits_g1_g2_by_default_g3_counted(self, tmp_path):
        root = _write_data(tmp_path)
        cot = root / COT_DIR / "G1_category.json"
        runs = json.loads(cot.read_text())
        g3 = {k: v for k, v in list(runs.items())[:5]}
        (root / COT_DIR / "G3_instruction.json").write_text(json.dumps(g3))
        default = load_toolbench(root)
        every = load_toolbench(root, splits="G1-G2-G3")
        assert {t.group for t in default.trajectories} == {"G1"}
        assert len(every.trajectories) == len(default.trajectories) + 5
        key = "trajectory of split G3 (not loaded: splits = G1-G2)"
        assert default.exclusions[key] == 5 and key not in every.exclusions
        with pytest.raises(ValueError, match="`splits` must be one of"):
            load_toolbench(root, splits="G2")


def test_reachability_all_steps_selects_steps_in_no_osu():
    """A step in no OSU (evicted) is never selected under members-only and is selectable
    (on its cosine alone) under all-steps; an unknown reading is refused."""
    from osustat.retrieval import CohesionOSU, CoverageGuidedOSU, OSUConfig, Trajectory

    rng = np.random.default_rng(0)
    emb = rng.normal(size=(30, 8))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    tools = [f"t{i % 3}" for i in range(30)]
    tools[7] = "lonely"  # no other step shares its tool, entity or subgoal: evicted
    traj = Trajectory.from_steps(
        emb, np.full(30, 10.0), tools=tools,
        entities=[{f"e{i % 4}"} if i != 7 else set() for i in range(30)],
        subgoals=[i % 5 if i != 7 else 99 for i in range(30)],
    )  # fmt: skip
    for cls in (CoverageGuidedOSU, CohesionOSU):
        members = cls(osu_config=OSUConfig(m_max=1), reachability="members-only").build(traj)
        if members.pool_.step_osus[7].size:
            pytest.skip("step 7 is not evicted in this construction")
        every = cls(osu_config=OSUConfig(m_max=1), reachability="all-steps").build(traj)
        q = emb[7]
        assert 7 not in members.retrieve(q, 300).steps.tolist()
        assert 7 in every.retrieve(q, 300).steps.tolist()
        with pytest.raises(ValueError, match="`reachability` must be one of"):
            cls(reachability="members")


def test_the_audit_heading_names_the_claims_file_used(tmp_path):
    """Issue 34 item 4: with another claims file the audit's heading names it, never the
    shipped ``analyses/claims/paper.toml``."""
    from osustat import reproduce

    mine = tmp_path / "mine.toml"
    mine.write_text(
        '[family.f]\ncorrection = "none"\n\n[[claim]]\nid = "MINE-1"\nfamily = "f"\n'
        'benchmark = "toolbench"\ntreatment = "Flat Vector"\nbaseline = "Disjoint Hierarchy"\n'
        'metric = "recall"\nbudget = 200\ncell = "aggregate"\ndirection = "greater"\n'
    )
    res = reproduce(
        "toolbench", tmp_path / "out", data=_write_data(tmp_path / "data"),
        encoder=HashingBagOfWordsEncoder(64), seeds=(1,), episodes=2, background=60,
        n_evs=(3,), n_resamples=99, progress=False, claims=mine,
    )  # fmt: skip
    report = (res.out / "report.md").read_text()
    assert f"## Audit of the paper's ToolBench claims ({mine})" in report
    assert "MINE-1" in report and "paper.toml" not in report


def test_summary_numbers_are_the_tables_numbers():
    """On an analysis whose every number differs (gap vs per-target gap, target vs Fisher p),
    the summary's Δ, p, CI and n per budget are Table 6's / Table 15's row at beta = .12 and
    the same row of ``combined`` (issue 38 item 6) -- read back, not typed."""
    from types import SimpleNamespace

    from osustat.analyses.toolbench.paper_values import PAPER
    from osustat.analyses.toolbench.report_render import _sweep_table, summary
    from osustat.formatting import fmt_p

    rng = np.random.default_rng(5)
    rows = [
        {"benchmark": "toolbench", "metric": m, "beta": beta, "budget": b,
         "gap": rng.uniform(-0.05, 0.1), "target_gap": rng.uniform(-0.05, 0.1),
         "target_ci_low": -0.2 + rng.uniform(0, 0.01), "target_ci_high": 0.2 + rng.uniform(0, .01),
         "target_p": rng.uniform(0.001, 0.9), "fisher_p": rng.uniform(0.001, 0.9),
         "n_targets": int(rng.integers(100, 200)), "n_episodes": 600, "seed_min": 0.0,
         "seed_max": 0.1}
        for m in ("recall", "hit@2") for beta in (0.04, 0.08, 0.12, 0.16, 0.20)
        for b in (200, 400, 800, 1600)
    ]  # fmt: skip
    combined = pd.DataFrame(rows)
    trend = pd.DataFrame(
        [{"benchmark": "toolbench", "metric": "recall", "budget": b, "p": 0.01 * k,
          "n_targets": 150} for k, b in enumerate((200, 400, 800, 1600), 1)]
    )  # fmt: skip
    a = SimpleNamespace(combined=combined, trend=trend, seeds=(42, 123, 456))
    per_seed = {s: {"episodes": 200} for s in ("42", "123", "456")}
    design = {
        "toolbench": {
            "n_ev": 3, "episodes": 600, "distinct_targets_all_seeds": 150, "per_seed": per_seed
        }
    }  # fmt: skip
    text = "\n".join(summary(a, {"trajectories": 900, "steps": 9_000}, design, {}))
    for metric, label, table in (("recall", "Recall (Table 6)", "table6"),
                                 ("hit@2", "Hit@2 (Table 15)", "table15")):  # fmt: skip
        line = next(x for x in text.splitlines() if x.startswith(f"- {label}: "))
        found = re.findall(
            r"B = (\d+): Δ = (\S+) \(n = (\d+) episodes\); per target (\S+), 95% CI "
            r"\[(\S+), (\S+)\], p = (\S+) \(n = (\d+) targets\)",
            line,
        )
        cells = (
            next(
                r for r in _sweep_table(combined, metric, PAPER[table]) if r.startswith("| 0.12 |")
            )
            .strip("|")
            .split("|")
        )
        assert [int(f[0]) for f in found] == [200, 400, 800, 1600]
        for k, (b, gap, n_ep, tgap, lo, hi, p, n_t) in enumerate(found):
            cell = cells[1 + 2 * k].strip()
            assert cell.startswith(gap) and f"(target p {p};" in cell
            row = combined[(combined["metric"] == metric) & (combined["budget"] == int(b))
                           & np.isclose(combined["beta"], 0.12)].iloc[0]  # fmt: skip
            assert p == fmt_p(row["target_p"]) != fmt_p(row["fisher_p"])
            assert float(tgap) == pytest.approx(100 * row["target_gap"], abs=0.051)
            assert float(lo) == pytest.approx(100 * row["target_ci_low"], abs=0.051)
            assert float(hi) == pytest.approx(100 * row["target_ci_high"], abs=0.051)
            assert (int(n_ep), int(n_t)) == (row["n_episodes"], row["n_targets"])
    assert "B = 1600: p = .040 (n = 150 targets)" in text  # the dose-response trend row


def test_trend_rows_mark_skewed_slopes():
    # issue 35 item 6: the mean-trend p leans on symmetric per-target slopes; a row whose
    # slopes' skewness makes it liberal says so in the summary and the trend table
    from analyses.toolbench.report_render import _skew_words

    flagged = pd.Series({"slope_skewness": 2.3, "skew_flagged": True})
    fine = pd.Series({"slope_skewness": -0.1, "skew_flagged": False})
    assert _skew_words(flagged) == "+2.30 (p liberal)"
    assert _skew_words(fine) == "-0.10"
    assert _skew_words(pd.Series({"p": 0.1})) == "-"


def test_analysis_progress_bar_ends_at_its_total(tmp_path, monkeypatch):
    """The analysis phase's bar (issue 38 item 5): 2 metrics x (5 betas + the trend test) per
    evidence size, and the cohesion tests; it ends exactly at that total."""
    import osustat.analyses.runner as runner
    from osustat import reproduce

    bars = []

    class Recording:
        def __init__(self, total, desc, *, progress, **_):
            self.total, self.desc, self.progress, self.n = total, desc, progress, 0
            bars.append(self)

        def update(self, k=1):
            self.n += k

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(runner, "progress_bar", Recording)
    data = _write_data(tmp_path / "data")
    reproduce(
        "toolbench", tmp_path / "out", data=data, encoder=HashingBagOfWordsEncoder(64),
        seeds=(1,), episodes=3, background=60, n_resamples=99, progress=True,
    )  # fmt: skip
    (bar,) = [b for b in bars if b.desc == "toolbench analysis"]
    assert bar.progress and bar.total == 3 * 2 * (5 + 1) + 1 == bar.n
