"""`osustat analyze` with several methods: every loaded method is compared or named as left
out, lists and --all-pairs give one report whose families span the pairs."""

import json
from pathlib import Path

import pytest

from osustat.cli.main import main

TREC = Path(__file__).resolve().parents[1] / "examples" / "trec"
QRELS = TREC / "qrels.txt"
FAST = ["--resamples", "499", "--bootstrap-resamples", "99", "--zero-fill", "--depth", "10"]


@pytest.fixture
def runs(tmp_path):
    """Three named runs: bm25, rm3 and a third one (bm25's scores with its top two
    documents swapped per topic)."""
    lines = (TREC / "bm25.run").read_text().splitlines()
    out = []
    for line in lines:
        q, z, doc, rank, score, _ = line.split()
        s = float(score) + (0.75 if rank == "2" else 0.0)
        out.append(f"{q} {z} {doc} {rank} {s} third")
    third = tmp_path / "third.run"
    third.write_text("\n".join(out) + "\n")
    return [
        *("--run", f"bm25={TREC / 'bm25.run'}"),
        *("--run", f"rm3={TREC / 'rm3.run'}"),
        *("--run", f"third={third}"),
    ]


def _analyze(runs, *extra):
    return main(["analyze", *runs, "--qrels", str(QRELS), *FAST, "--metric", "recall", *extra])


def test_a_loaded_method_left_out_is_named(runs, capsys):
    assert _analyze(runs, "--treatment", "rm3", "--baseline", "bm25", "--json") == 0
    cap = capsys.readouterr()
    assert "methods loaded but in no pair (not compared): 'third'" in cap.err
    payload = json.loads(cap.out)
    assert payload["schema"] == "osustat.analysis/1"
    assert payload["methods_not_compared"] == ["third"]


def test_lists_and_all_pairs(runs, capsys, tmp_path):
    assert _analyze(runs, "--treatment", "rm3,third", "--baseline", "bm25", "--json") == 0
    cap = capsys.readouterr()
    payload = json.loads(cap.out)
    assert payload["schema"] == "osustat.analysis-multi/1"
    assert [p["treatment"] for p in payload["method_pairs"]] == ["rm3", "third"]
    assert payload["methods_not_compared"] == [] and "no pair" not in cap.err
    fam = next(iter(payload["families"].values()))
    assert fam["m"] == 2  # the aggregate test of each pair (TREC runs have no cells)
    out = tmp_path / "report"
    assert _analyze(runs, "--all-pairs", "--correction", "maxt", "--out", str(out)) == 0
    report = (out / "report.md").read_text()
    assert "of 3 method pairs" in report and "## rm3 vs third" in report
    assert "Westfall–Young step-down maxT" in report
    saved = json.loads((out / "results.json").read_text())
    assert len(saved["results_by_pair"]) == 3 and saved["families"]["recall @ 10"]["m"] == 3
    capsys.readouterr()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--treatment", "rm3"], "or --all-pairs"),
        (["--treatment", ",", "--baseline", "bm25"], "`--treatment` is empty"),
        (["--treatment", "rm3,nope", "--baseline", "bm25"], "'nope' is not in the records"),
    ],
)
def test_bad_method_options(runs, capsys, extra, message):
    assert _analyze(runs, *extra) == 2
    assert message in capsys.readouterr().err


def test_family_groups_naming_one_pair(runs, capsys):
    """A group item TREATMENT:BASELINE:METRIC:BUDGET puts one pair's table in that group."""
    fam = "rm3:bm25:recall:10;third:bm25:recall:10"
    args = ["--treatment", "rm3,third", "--baseline", "bm25", "--family", fam, "--json"]
    assert _analyze(runs, *args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {g: f["m"] for g, f in payload["families"].items()} == {"group 1": 1, "group 2": 1}
    assert payload["families"]["group 2"]["members"] == [
        {"treatment": "third", "baseline": "bm25", "metric": "recall", "budget": 10}
    ]
    assert _analyze(runs, "--treatment", "rm3", "--baseline", "bm25", "--family", "a:b:10") == 2
    assert "TREATMENT:BASELINE:METRIC:BUDGET" in capsys.readouterr().err


def test_jobs_give_the_same_report(runs, capsys):
    # --jobs 2: the comparisons run in two worker processes; only the command line differs
    payloads = []
    for jobs in ("1", "2"):
        assert _analyze(runs, "--all-pairs", "--json", "-", "--jobs", jobs) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["provenance"]["command"].endswith(f"--jobs {jobs}")
        payload["provenance"]["command"] = None
        payloads.append(payload)
    assert payloads[0] == payloads[1]


@pytest.mark.slow
def test_a_dask_cluster_gives_the_same_report(runs, capsys):
    """--scheduler: the comparisons and MDE searches on a 2-worker Dask cluster (their rows
    scattered to the workers, osustat.dask_cluster.cluster_map) give this process's report."""
    distributed = pytest.importorskip("distributed")
    payloads = []
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        for extra in ([], ["--scheduler", cluster.scheduler_address]):
            assert _analyze(runs, "--all-pairs", "--json", "-", *extra) == 0
            payload = json.loads(capsys.readouterr().out)
            payload["provenance"]["command"] = None
            payloads.append(payload)
    assert len(payloads[1]["results_by_pair"]) == 3
    assert payloads[0] == payloads[1]


def test_a_name_with_spaces_is_shown_and_the_header_agrees_with_the_exclusions(tmp_path, capsys):
    # a new user's review: a method "zep " printed as `not compared: zep ;` and the header said
    # "nothing excluded" above the provenance's "Excluded: 1 methods ... not compared"
    import pandas as pd

    df = pd.read_csv(Path(__file__).resolve().parents[1] / "examples" / "records.csv")
    df = df[(df["budget"] == 256) & (df["metric"] == "recall")]
    spaced = df[df["method"] == "osu-mem"].assign(method="osu-mem ")
    path = tmp_path / "r.csv"
    pd.concat([df, spaced]).to_csv(path, index=False)
    args = ["analyze", str(path), "--treatment", "osu-mem", "--baseline", "flat-vector"]
    assert main([*args, "--resamples", "499", "--bootstrap-resamples", "99"]) == 0
    cap = capsys.readouterr()
    assert "(not compared): 'osu-mem '; " in cap.err and "spaces around a name" in cap.err
    head = cap.out.split("## ")[0]
    assert "nothing excluded" not in head and "none dropped on reading" in head
    assert (
        "- Excluded, by reason (each listed under Provenance, “Excluded”): 1 method(s) in " in head
    )
    assert "('osu-mem ') are in no pair" in head
    assert "- Excluded: 1 method(s) in the records not compared ('osu-mem ')" in cap.out


def test_a_method_named_on_both_sides_is_not_paired_with_itself_and_it_is_said(runs, capsys):
    # a new user's review: --treatment zep --baseline mem0,zep ran zep vs mem0 and dropped
    # zep vs zep without a word
    assert _analyze(runs, "--treatment", "rm3", "--baseline", "bm25,rm3,third", "--json") == 0
    cap = capsys.readouterr()
    assert "'rm3' vs 'rm3' is not compared" in cap.err
    payload = json.loads(cap.out)
    assert [(p["treatment"], p["baseline"]) for p in payload["method_pairs"]] == [
        ("rm3", "bm25"),
        ("rm3", "third"),
    ]
    reasons = [e["reason"] for e in payload["provenance"]["exclusions"]]
    assert any("itself not compared ('rm3' vs 'rm3')" in r for r in reasons)
    assert _analyze(runs, "--all-pairs", "--json") == 0  # distinct methods by definition
    assert "with itself" not in "".join(capsys.readouterr())
