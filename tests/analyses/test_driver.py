"""The one reproduce driver (analyses.driver), on a tiny fake benchmark of the protocol.

Checks before any work (``--out``, ``--force``, ``--choice``), atomic output with provenance,
a one-query cell that leaves the claims audit "not testable" but the report written, and the
paired tests of a user retriever against the reference methods.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import osustat.analyses.claims_audit as claims_audit
import osustat.analyses.driver as driver
from osustat import paired, paired_signflip_test
from osustat.analyses.protocol import (
    Benchmark,
    BenchmarkRun,
    Choice,
    Choices,
    ClaimSelection,
    DataSpec,
    RunSpec,
)
from osustat.cli.main import main
from osustat.retrieval.encoder import HashingBagOfWordsEncoder
from osustat.streams import stream_seed

CLAIMS = """
[family.f]
correction = "none"
[[claim]]
id = "F-interaction"
family = "f"
kind = "interaction"
benchmark = "fake"
treatment = "A"
baseline = "B"
metric = "hit@2"
budget = 256
reported_p = 0.01
[[claim]]
id = "F-diff"
family = "f"
benchmark = "fake"
treatment = "A"
baseline = "B"
metric = "hit@2"
budget = 256
cell = "T+E+"
direction = "greater"
reported_effect = 0.5
reported_p = 0.01
"""


def _records(seed: int, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """A: hit in every other query; B: never; cells T+E+ (6), T-E- (6) and T+E- (1 query)."""
    cells = ["T+E+"] * 6 + ["T-E-"] * 6 + ["T+E-"]
    rows = []
    for i, cell in enumerate(cells):
        for method, value in (("A", float(i % 2 == 0)), ("B", 0.0), *((m, 1.0) for m in extra)):
            rows.append(
                {
                    "benchmark": "fake",
                    "episode_id": f"e{i // 2}",
                    "query_id": f"q{i}",
                    "method": method,
                    "budget": 256,
                    "seed": seed,
                    "metric": "hit@2",
                    "value": value,
                    "cell": cell,
                }
            )
    return pd.DataFrame(rows)


class Fake(Benchmark):
    """A benchmark of the protocol whose run is a fixed table (calls are counted)."""

    name = "fake"
    description = "a fixed records table"
    data = DataSpec("none")
    choices = Choices(
        "fake", (Choice("reading", ("one", "two"), "one", "why", "words"),), "fake/choices.toml"
    )
    claims = ClaimSelection("Audit of fake", benchmark_prefixes=("fake",))
    references = ("B",)
    multi_seed = False
    counts_episodes = True

    def __init__(self) -> None:
        self.runs = 0
        self.fail_in_write = False

    def methods(self) -> tuple[str, ...]:
        return ("A", "B")

    def check(self, spec: RunSpec) -> None:
        pass

    def run(self, spec: RunSpec) -> BenchmarkRun:
        self.runs += 1
        return BenchmarkRun(_records(spec.seed, tuple(r.name for r in spec.retrievers)))

    def analyze(self, run: BenchmarkRun, spec: RunSpec) -> Any:
        return run.records.groupby("method")["value"].mean()

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        if self.fail_in_write:
            raise RuntimeError("late failure")
        run.records.to_csv(folder / "records.csv", index=False)
        return "# Fake\n\n" + (audit or "no audit")


@pytest.fixture
def fake(monkeypatch, tmp_path) -> Fake:
    bench = Fake()
    monkeypatch.setattr(driver, "get_benchmark", lambda name: bench)
    (tmp_path / "paper.toml").write_text(CLAIMS)
    monkeypatch.setattr(claims_audit, "CLAIMS_DIR", tmp_path)
    return bench


def test_the_fake_follows_the_protocol(fake):
    assert isinstance(fake, Benchmark)


def _argv(out: Path, *extra: str) -> list[str]:
    return ["reproduce", "synthetic", "--out", str(out), "--resamples", "99", *extra]


def test_an_out_that_is_a_file_is_refused_before_any_work(fake, tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("x")
    assert main(_argv(out)) == 2
    assert "is an existing file" in capsys.readouterr().err
    assert fake.runs == 0


def test_seeds_are_refused_where_the_benchmark_runs_one_seed(fake, tmp_path, capsys):
    assert main(_argv(tmp_path / "o", "--seeds", "1,2")) == 2
    assert "`--seeds` does not apply to fake" in capsys.readouterr().err
    assert fake.runs == 0 and not (tmp_path / "o").exists()


def test_episodes_are_refused_where_the_data_holds_them(fake, tmp_path, capsys):
    # a red team (stop 61): `reproduce tau-bench --episodes 2` ran all 485 episodes for
    # 235 s, its report's command line saying --episodes 2
    fake.counts_episodes = False
    assert main(_argv(tmp_path / "o", "--episodes", "2")) == 2
    assert "`--episodes` does not apply to fake, whose episodes" in capsys.readouterr().err
    assert fake.runs == 0 and not (tmp_path / "o").exists()
    fake.counts_episodes = None  # not declared (a benchmark written before it): passed on
    assert main(_argv(tmp_path / "o", "--episodes", "2")) == 0 and fake.runs == 1
    from osustat.analyses.registry import get_benchmark as get

    declared = {name: get(name).counts_episodes for name in ("synthetic", "toolbench")}
    declared |= {name: get(name).counts_episodes for name in ("tau-bench", "locomo")}
    assert declared == {"synthetic": True, "toolbench": True, "tau-bench": False, "locomo": False}


def test_a_foreign_folder_needs_force(fake, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    assert main(_argv(out)) == 2
    assert "without an osustat provenance.json" in capsys.readouterr().err
    assert fake.runs == 0 and (out / "notes.txt").exists()
    assert main(_argv(out, "--force")) == 0
    assert fake.runs == 1 and not (out / "notes.txt").exists()
    assert (out / "report.md").exists() and (out / "provenance.json").exists()


def test_the_same_request_may_rewrite_its_own_folder_but_not_another(fake, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(_argv(out)) == 0
    assert main(_argv(out)) == 0  # same inputs: replaced
    assert main(_argv(out, "--seed", "7")) == 2  # other settings: refused before work
    assert "different inputs" in capsys.readouterr().err
    assert fake.runs == 2


def test_jobs_and_progress_do_not_make_another_run(fake, tmp_path, capsys):
    """`--jobs`, `--no-progress` (and `--force`, `--scheduler`, `--cache`) do not change the
    records: a rerun that differs only in them replaces the folder (it was refused as "a
    different run", the whole command line being compared)."""
    out = tmp_path / "o"
    assert main(_argv(out, "--jobs", "1")) == 0
    assert main(_argv(out, "--jobs", "2", "--no-progress")) == 0
    assert main(_argv(out, "--jobs=2", "--cache", str(tmp_path / "c"))) == 0
    assert "different run" not in capsys.readouterr().err
    assert fake.runs == 3
    command = json.loads((out / "provenance.json").read_text())["command"]
    assert "--jobs=2 --cache" in command  # recorded as given, not compared
    assert main(_argv(out, "--seed", "0")) == 0  # the default seed written out: the same run
    assert fake.runs == 4


def test_output_is_atomic(fake, tmp_path):
    fake.fail_in_write = True
    out = tmp_path / "o"
    with pytest.raises(RuntimeError, match="late failure"):
        driver.reproduce(driver.Request("fake", out, n_resamples=99))
    assert list(tmp_path.iterdir()) == [tmp_path / "paper.toml"]  # nothing half-written


def test_a_missing_claims_file_is_an_error_naming_it_before_any_work(fake, tmp_path, capsys):
    (tmp_path / "paper.toml").unlink()
    assert main(_argv(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert "claims file not found" in err and str(tmp_path / "paper.toml") in err
    assert fake.runs == 0 and not (tmp_path / "o").exists()
    given = tmp_path / "mine.toml"  # a claims file given from Python: the same
    with pytest.raises(FileNotFoundError, match=r"mine\.toml"):
        driver.reproduce(driver.Request("fake", tmp_path / "o", n_resamples=99, claims=given))
    assert fake.runs == 0


def test_an_edited_claims_file_is_another_run(fake, tmp_path):
    # the reviewer of stop 59: a user's claims file (and --grid file) was hashed nowhere, so
    # a rerun after editing it replaced the report without force=True
    given = tmp_path / "mine.toml"
    given.write_text(CLAIMS)
    request = driver.Request("fake", tmp_path / "o", n_resamples=99, claims=given)
    driver.reproduce(request)
    driver.reproduce(request)  # the same file: the same run, replaced
    given.write_text(CLAIMS + "\n# edited\n")
    with pytest.raises(driver.UsageError, match="different inputs"):
        driver.reproduce(request)
    assert fake.runs == 2
    roles = [
        i["role"] for i in json.loads((tmp_path / "o" / "provenance.json").read_text())["inputs"]
    ]
    assert "claims file" in roles


def test_a_bad_claims_file_is_an_error_before_any_work(fake, tmp_path, capsys):
    """A claims file is parsed and validated before the sweep, not after it."""
    (tmp_path / "paper.toml").write_text(CLAIMS.replace("budget = 256", 'budget = "all"', 1))
    assert main(_argv(tmp_path / "o")) == 2
    assert "paper.toml" in capsys.readouterr().err
    assert fake.runs == 0 and not (tmp_path / "o").exists()


def test_a_user_retriever_without_records_is_an_error(fake, tmp_path, monkeypatch):
    """A user retriever the benchmark did not run is an error naming it, and nothing is
    written (never "not in the records" in a report)."""
    from osustat.retrieval.registry import MethodSpec

    spec = MethodSpec("Mine", lambda: None, False, source="mine:Mine")
    monkeypatch.setattr(driver, "_load_retrievers", lambda values, taken: (spec,))
    monkeypatch.setattr(fake, "run", lambda spec: BenchmarkRun(_records(spec.seed)))
    out = tmp_path / "o"
    with pytest.raises(ValueError, match=r"`--retriever` mine:Mine: `reproduce fake` wrote no"):
        driver.reproduce(driver.Request("fake", out, n_resamples=99, retrievers=("mine:Mine",)))
    assert not out.exists()


def test_a_one_query_cell_is_not_testable_and_the_report_is_written(fake, tmp_path):
    out = tmp_path / "o"
    driver.reproduce(driver.Request("fake", out, n_resamples=99))
    report = (out / "report.md").read_text()
    assert "Audit of fake" in report
    assert "not testable: too few units in T+E- (n = 1)" in report


def test_provenance_has_the_run_and_the_machine(fake, tmp_path):
    out = tmp_path / "o"
    assert main(_argv(out, "--choice", "reading=two")) == 0
    prov = json.loads((out / "provenance.json").read_text())
    assert {"python", "platform", "numpy"} <= set(prov["versions"])
    assert prov["choices"] == {"reading": "two"}
    assert prov["command"].startswith("osustat reproduce")
    report = (out / "report.md").read_text()
    assert "## Provenance" in report and "`reading` | `two` (changed)" in report


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("reading=three", "`--choice reading=three`: 'three' is not allowed; allowed: one, two"),
        ("nope=one", "has no choice 'nope'; its choices: reading"),
        ("reading", "`--choice` must look like NAME=VALUE; got 'reading'"),
    ],
)
def test_choice_errors_name_the_choice_and_its_values(fake, tmp_path, capsys, value, message):
    assert main(_argv(tmp_path / "o", "--choice", value)) == 2
    assert message in capsys.readouterr().err
    assert fake.runs == 0


def test_user_retriever_tests_are_the_cores_paired_tests():
    records = _records(0)
    tests = driver.user_retriever_tests(records, ["A"], ["B"], n_resamples=999, seed=3)
    assert tests.skipped.empty
    (row,) = tests.table.itertuples(index=False)
    p = paired(records, "A", "B", metric="hit@2", budget=256, benchmark="fake")
    assert row.n == p.n == 13
    assert row.effect == pytest.approx(np.mean(p.differences))
    rng = stream_seed(3, "A|B|fake|256|hit@2")
    ref = paired_signflip_test(p.treatment, p.baseline, n_resamples=999, rng=rng)
    assert row.p == pytest.approx(ref.pvalue)
    assert row.ci_low <= row.effect <= row.ci_high
    assert row.p_holm == pytest.approx(row.p)  # one test: Holm leaves it


def test_an_interval_from_two_episodes_that_excludes_0_beside_a_large_p_is_explained():
    # a red team (stop 61): [-0.167, -0.143] beside p = .625 (2 episodes), without a word,
    # where `analyze` on the same records explains it
    records = _records(0)
    records["episode_id"] = ["e0"] * 14 + ["e1"] * 12  # 7 and 6 queries, two rows each
    records["value"] = 0.0
    records.loc[(records["method"] == "B") & records["query_id"].isin(["q0", "q7"]), "value"] = 1
    tests = driver.user_retriever_tests(records, ["A"], ["B"], n_resamples=999, seed=3)
    (row,) = tests.table.itertuples(index=False)
    assert row.episodes == 2 and row.p == pytest.approx(0.5)  # exact: 2 nonzero differences
    assert row.ci_high < 0 and row.test_ci_low <= 0 <= row.test_ci_high
    assert row.min_p == pytest.approx(0.5)
    from osustat.reports.user_methods import render_user_tests

    text = render_user_tests(tests.table, tests.skipped, n_resamples=999)
    assert "Interval and test disagree about 0 in 1 row" in text
    assert "- A − B, fake, budget 256, hit@2 (2 episodes): the 95% bootstrap interval" in text
    assert "(the test cannot go below p = .500 with these differences)" in text
    agreeing = driver.user_retriever_tests(_records(0), ["A"], ["B"], n_resamples=999, seed=3)
    assert agreeing.table["test_ci_low"].isna().all()
    assert "disagree" not in render_user_tests(agreeing.table, agreeing.skipped, n_resamples=9)


def test_groups_the_two_methods_do_not_share_are_counted_with_the_reason():
    records = _records(0)
    # B alone at budget 512; A misses one query at 256 (recall); a reference never run (C)
    at512 = records[records["method"] == "B"].assign(budget=512)
    recall = records.assign(metric="recall")
    recall = recall[~((recall["method"] == "A") & (recall["query_id"] == "q3"))]
    both = pd.concat([records, at512, recall], ignore_index=True)
    tests = driver.user_retriever_tests(both, ["A"], ["B", "C"], n_resamples=99, seed=0)
    assert [(r.reference, r.budget, r.metric) for r in tests.table.itertuples()] == [
        ("B", 256, "hit@2")
    ]
    skipped = tests.skipped
    assert list(skipped.columns) == list(driver.SKIPPED_COLUMNS)
    got = {(r.reference, r.budget, r.metric): r.reason for r in skipped.itertuples()}
    assert set(got) == {
        ("B", 256, "recall"),  # the queries differ
        ("B", 512, "hit@2"),  # A has no records at 512
        ("C", 256, "hit@2"),  # C is not in the records at all
        ("C", 256, "recall"),
    }
    assert "unpaired queries" in got[("B", 256, "recall")] and "e1/q3" in got[("B", 256, "recall")]
    assert "'A' has no records" in got[("B", 512, "hit@2")]
    assert "'C' is not in the records" in got[("C", 256, "hit@2")]
    from osustat.reports.user_methods import render_user_tests

    text = render_user_tests(tests.table, skipped, n_resamples=99)
    assert "Skipped groups: 4 (retriever, reference, benchmark, budget, metric) groups" in text
    assert text.count("| A | C | fake | 256 |") == 2


def test_a_user_retriever_gets_paired_tests_in_the_report(fake, tmp_path, monkeypatch):
    from osustat.retrieval.registry import MethodSpec

    spec = MethodSpec("Mine", lambda: None, False, source="mine:Mine")
    monkeypatch.setattr(driver, "_load_retrievers", lambda values, taken: (spec,))
    out = tmp_path / "o"
    driver.reproduce(driver.Request("fake", out, n_resamples=99, retrievers=("mine:Mine",)))
    report = (out / "report.md").read_text()
    assert "### Paired tests against the paper's methods" in report
    table = pd.read_csv(out / "user_retriever_tests.csv")
    assert set(table["reference"]) == {"B"} and (table["effect"] == 1.0).all()
    assert pd.read_csv(out / "user_retriever_skipped.csv").empty
    assert "Skipped groups: 0" in report


def test_sensitivity_and_choice_on_toolbench(tmp_path):
    """`--choice` and `--sensitivity` through the protocol on a real benchmark (tiny data)."""
    from tests.analyses.test_toolbench import _write_data

    data = _write_data(tmp_path / "tb")
    common = {
        "data": (str(data),), "seeds": (1,), "episodes": 3, "n_resamples": 99,
        "progress": False, "encoder": HashingBagOfWordsEncoder(64),
    }  # fmt: skip
    one = driver.reproduce(
        driver.Request(
            "toolbench", tmp_path / "a", choices=("trajectory-groups=g1-g2-g3",), **common
        )
    )
    assert "`trajectory-groups` | `g1-g2-g3` (changed)" in (one.out / "report.md").read_text()
    res = driver.reproduce(driver.Request("toolbench", tmp_path / "s", sensitivity=True, **common))
    effects = pd.read_csv(res.out / "sensitivity" / "effects.csv")
    # the encoder backend is a declared choice: the grid varies it too (issue 38 item 4)
    assert set(effects["point_name"]) == {
        "default", "trajectory-groups=g1-g2-g3", "reachability=members-only",
        "encoder-backend=onnx", "encoder-backend=openvino",
    }  # fmt: skip
    summary = pd.read_csv(res.out / "sensitivity" / "summary.csv")
    assert set(summary["claim"]) == set(effects["claim"])
    assert set(summary["verdict"]) <= {
        "robust", "choice-dependent", "not reproduced", "not checkable",
        "null: consistent (n.s. here too at every point)",
        "null: significant here at some point (paper: n.s.)",
    }  # fmt: skip
    assert "## Sensitivity to the open choices" in (res.out / "report.md").read_text()


def test_the_choices_table_lists_the_encoder_backend_of_encoding_benchmarks() -> None:
    from osustat.analyses.driver import _choices_section
    from osustat.analyses.protocol import RunSpec
    from osustat.analyses.registry import get_benchmark

    for name in ("toolbench", "tau-bench", "locomo"):  # every benchmark that encodes declares it
        bench = get_benchmark(name)
        assert bench.choices.get("encoder-backend").values == ("torch", "onnx", "openvino")
        spec = RunSpec(choices={**bench.choices.defaults(), "encoder-backend": "openvino"})
        text = _choices_section(bench, spec)
        assert "| `encoder-backend` | `openvino` (changed) | `torch` |" in text
        assert "`--sensitivity` varies it" in text and "(`--encoder-backend`)" not in text
        assert spec.text_backend == "openvino"
    syn = get_benchmark("synthetic")
    assert "encoder" not in _choices_section(syn, RunSpec(choices=syn.choices.defaults()))


def test_encoder_backend_option_is_the_declared_choice(tmp_path) -> None:
    """``--encoder-backend NAME`` sets the choice ``encoder-backend`` (one source: the grid,
    the report and the provenance read the choice); disagreeing with ``--choice`` is an error."""
    from tests.analyses.test_toolbench import _write_data

    data = (str(_write_data(tmp_path / "tb")),)
    enc = HashingBagOfWordsEncoder(16)
    checked = driver.plan(
        driver.Request("toolbench", tmp_path / "o", data=data, encoder_backend="onnx", encoder=enc)
    )
    assert checked.spec.choices["encoder-backend"] == "onnx" == checked.spec.text_backend
    assert "--choice encoder-backend=onnx" in checked.spec.command
    with pytest.raises(driver.UsageError, match="`--encoder-backend onnx` and `--choice"):
        driver.plan(
            driver.Request(
                "toolbench", tmp_path / "o", data=data, encoder_backend="onnx", encoder=enc,
                choices=("encoder-backend=openvino",),
            )
        )  # fmt: skip


def test_provenance_names_the_encoder_runtimes_installed() -> None:
    from importlib import metadata

    from osustat.provenance import package_versions

    versions = package_versions()
    for name in ("onnxruntime", "openvino", "sentence-transformers"):
        try:
            assert versions[name] == metadata.version(name)
        except metadata.PackageNotFoundError:
            assert name not in versions


def test_phases_after_the_sweeps_are_announced_with_their_time(capsys: Any) -> None:
    say = driver._phases(True)
    say("analysis: tests and bootstrap intervals")
    say("claims audit")
    say(None)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "osustat: analysis: tests and bootstrap intervals …"
    assert err[1].startswith("osustat: analysis: tests and bootstrap intervals: ")
    assert err[1].endswith(" s") and err[2] == "osustat: claims audit …"
    assert err[3].startswith("osustat: claims audit: ") and len(err) == 4
    quiet = driver._phases(False)
    quiet("x")
    quiet(None)
    assert capsys.readouterr().err == ""


def test_the_equivalent_command_is_built_once_by_the_driver(fake, tmp_path):
    """From Python, every benchmark's report names the same equivalent CLI call, built by
    the driver from the request (no benchmark rebuilds it); from the CLI, the call given."""
    request = driver.Request(
        "fake", tmp_path / "o", n_resamples=99, seed=4, choices=("reading=two",), episodes=3
    )
    assert driver.plan(request).spec.command == (
        "osustat reproduce fake --out DIR --episodes 3 --seed 4 --resamples 99 --choice reading=two"
    )
    plain = driver.plan(driver.Request("fake", tmp_path / "o", n_resamples=99)).spec.command
    assert plain == "osustat reproduce fake --out DIR --seed 0 --resamples 99"
    given = driver.Request("fake", tmp_path / "o", command="osustat reproduce fake --out X")
    assert driver.plan(given).spec.command == "osustat reproduce fake --out X"
