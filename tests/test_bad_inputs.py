"""The bad-input matrix (issue 11): every malformed input or option, across `analyze`,
`audit`, `reproduce synthetic` and the loaders, exits with code 2, names the file, line,
field or argument, and leaves nothing half-written (the folder holds exactly what it held
before the command ran)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from osustat.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
TREC = EX / "trec"
AB = ["--treatment", "osu-mem", "--baseline", "flat-vector", "--resamples", "99"]
AB += ["--bootstrap-resamples", "50"]
TR = ["--treatment", "rm3", "--baseline", "bm25", "--resamples", "99"]


def base_records() -> pd.DataFrame:
    df = pd.read_csv(EX / "records.csv")
    return df[(df["budget"] == 256) & (df["metric"] == "recall")].reset_index(drop=True)


def csv(tmp: Path, df: pd.DataFrame, name: str = "r.csv") -> Path:
    p = tmp / name
    df.to_csv(p, index=False)
    return p


def edit(col: str, value, row: int = 1):
    def make(tmp: Path) -> list[str]:
        df = base_records()
        df[col] = df[col].astype(object)
        df.loc[row, col] = value
        return ["analyze", str(csv(tmp, df)), *AB, "--out", str(tmp / "out")]

    return make


def text_file(name: str, content: str | bytes, *rest: str, cmd: str = "analyze"):
    def make(tmp: Path) -> list[str]:
        p = tmp / name
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
        return [cmd, str(p), *rest, "--out", str(tmp / "out")]

    return make


def overridden(base: list[str], opts: tuple[str, ...]) -> list[str]:
    """`base` (option, value pairs) without the options `opts` gives again: the CLI refuses an
    option given twice, so a case sets its own value instead of repeating the option."""
    given = {o for o in opts if o.startswith("--")}
    out: list[str] = []
    pairs = iter(base)
    for option in pairs:
        value = next(pairs)
        if option not in given:
            out += [option, value]
    return [*out, *opts]


def records_opts(*opts: str):
    def make(tmp: Path) -> list[str]:
        return ["analyze", str(csv(tmp, base_records())), *overridden(AB, opts)]

    return make


def trec(run: str | None, qrels: str | None, *opts: str):
    def make(tmp: Path) -> list[str]:
        r = tmp / "x.run"
        q = tmp / "q.txt"
        r.write_text(run if run is not None else (TREC / "bm25.run").read_text())
        q.write_text(qrels if qrels is not None else (TREC / "qrels.txt").read_text())
        out = ["analyze", str(r), "--qrels", str(q), *TR, "--out", str(tmp / "out")]
        return [*out, *(opts or ("--depth", "10"))]

    return make


def retrievals(edit_line, evidence: str | None = None):
    def make(tmp: Path) -> list[str]:
        lines = (EX / "retrievals.csv").read_text().splitlines()
        lines = edit_line(lines)
        r = tmp / "ret.csv"
        r.write_text("\n".join(lines) + "\n")
        ev = tmp / "ev.jsonl"
        ev.write_text(evidence if evidence is not None else (EX / "evidence.jsonl").read_text())
        return ["analyze", str(r), "--evidence", str(ev), *AB, "--out", str(tmp / "out")]

    return make


def claims(content: str | None, *opts: str):
    def make(tmp: Path) -> list[str]:
        c = tmp / "claims.toml"
        if content is not None:
            c.write_text(content)
        args = ["audit", str(c), "--records", str(EX / "records.csv"), "--resamples", "99"]
        return [*args, *opts]

    return make


def synth(*opts: str):
    def make(tmp: Path) -> list[str]:
        return [
            "reproduce",
            "synthetic",
            *overridden(["--episodes", "2", "--resamples", "50"], opts),
        ]

    return make


def existing_file_out(cmd_maker):
    def make(tmp: Path) -> list[str]:
        (tmp / "taken").write_text("not a folder")
        return [*cmd_maker(tmp), "--out", str(tmp / "taken")]

    return make


def foreign_out(cmd_maker):
    def make(tmp: Path) -> list[str]:
        (tmp / "mine").mkdir()
        (tmp / "mine" / "notes.txt").write_text("my notes")
        return [*cmd_maker(tmp), "--out", str(tmp / "mine")]

    return make


def under_file_out(cmd_maker):
    def make(tmp: Path) -> list[str]:
        (tmp / "afile").write_text("x")
        return [*cmd_maker(tmp), "--out", str(tmp / "afile" / "out")]

    return make


def two_lines(lines):
    return [*lines[:3], lines[3].rsplit(",", 1)[0] + ",-5", *lines[4:]]


PARQUET_BYTES = b"PAR1\x15\x04\x15\x10\x15\x14L\x15\x02\x15\x00\x12\x00\x00"
CLAIM = (EX / "claims.toml").read_text()

CASES = [
    # -- records files (analyze) -----------------------------------------------------------
    (
        "missing-records",
        lambda t: ["analyze", str(t / "nope.csv"), *AB],
        ["nope.csv", "does not exist"],
    ),
    ("empty-csv", text_file("r.csv", "", *AB), ["r.csv", "is empty"]),
    (
        "header-only-csv",
        text_file("r.csv", "episode_id,query_id,method,budget,metric,value\n", *AB),
        ["r.csv", "has no records"],
    ),
    (
        "latin1-csv",
        text_file("r.csv", "episode_id,query_id\ncaf\xe9,q\n".encode("latin-1"), *AB),
        ["r.csv", "not UTF-8"],
    ),
    (
        "gzip-named-csv",  # a red team's gzipped records named .csv: "not UTF-8 text" alone
        text_file("r.csv", gzip.compress((EX / "records.csv").read_bytes()), *AB),
        ["r.csv", "is gzip-compressed, not text: decompress it (gunzip) first"],
    ),
    (
        "truncated-jsonl",
        text_file("r.jsonl", '{"episode_id": "e1", "query_id": "q1"}\n{"episode_id": "e', *AB),
        ["r.jsonl", "line 2", "invalid JSON"],
    ),
    (
        "jsonl-not-object",
        text_file("r.jsonl", "[1, 2]\n", *AB),
        ["r.jsonl", "line 1", "JSON object"],
    ),
    (
        "jsonl-key-twice",  # a red team's line with "value" twice kept the last one
        text_file(
            "r.jsonl",
            '{"episode_id": "e1", "query_id": "q1", "method": "osu-mem", "budget": 128, '
            '"metric": "hit@2", "value": 1, "value": 0}\n',
            *AB,
        ),
        ["r.jsonl", "line 1", "key 'value' is given twice in one JSON object"],
    ),
    ("truncated-parquet", text_file("r.parquet", PARQUET_BYTES, *AB), ["r.parquet", "cannot read"]),
    ("unknown-extension", text_file("r.xlsx", "x", *AB), ["r.xlsx", "unknown extension"]),
    ("run-without-qrels", text_file("x.run", "301 Q0 D1 1 2.0 bm25\n", *AB), ["x.run", "--qrels"]),
    (
        "missing-column",
        text_file("r.csv", "query_id,value\nq,1\n", *AB),
        ["r.csv", "missing required columns"],
    ),
    ("non-numeric-value", edit("value", "high"), ["r.csv", "`value`", "lines 3"]),
    ("nan-value", edit("value", float("nan")), ["r.csv", "`value`", "lines 3"]),
    ("budget-zero", edit("budget", 0), ["r.csv", "`budget` must be positive", "lines 3"]),
    ("budget-negative", edit("budget", -256), ["r.csv", "`budget` must be positive", "lines 3"]),
    ("budget-fraction", edit("budget", 12.5), ["r.csv", "`budget`", "lines 3"]),
    ("recall-above-1", edit("value", 1.5), ["r.csv", "recall", "lines 3"]),
    ("unknown-cell", edit("cell", "T?E+"), ["r.csv", "`cell`", "lines 3"]),
    (
        "duplicate-keys",
        lambda t: [
            "analyze",
            str(csv(t, pd.concat([base_records(), base_records().iloc[[1]]]))),
            *AB,
        ],
        ["r.csv", "duplicate record keys", "lines 3, "],
    ),
    (
        "unpaired-query",
        lambda t: ["analyze", str(csv(t, base_records().iloc[1:])), *AB],
        ["unpaired queries", "ep001/q000"],
    ),
    (
        "unknown-method",
        records_opts("--treatment", "tree"),
        ["`treatment`", "'tree'", "known methods"],
    ),
    ("unknown-metric-hint", records_opts("--metric", "hit@1"), ["hit@1", "--hit-k"]),
    # -- options (analyze) -----------------------------------------------------------------
    (
        "analyze-jobs-and-scheduler",
        records_opts("--jobs", "2", "--scheduler", "tcp://h:1"),
        ["`--jobs`", "`--scheduler`", "not both"],
    ),
    ("analyze-scheduler-empty", records_opts("--scheduler", " "), ["`--scheduler` is empty"]),
    ("budget-option-zero", records_opts("--budget", "0"), ["`--budget`", ">= 1"]),
    ("budget-option-text", records_opts("--budget", "big"), ["`--budget`", "'big'"]),
    ("budget-not-present", records_opts("--budget", "999"), ["`budgets` [999]", "budgets present"]),
    ("alpha-7", records_opts("--alpha", "7"), ["`--alpha`", "7"]),
    ("alpha-nan", records_opts("--alpha", "nan"), ["`--alpha`"]),
    ("alpha-7-no-family", records_opts("--alpha", "7", "--unit", "episode"), ["`--alpha`"]),
    ("level-1.5", records_opts("--level", "1.5"), ["`--level`"]),
    ("resamples-0", records_opts("--resamples", "0"), ["`--resamples`"]),
    ("resamples-2e40", records_opts("--resamples", str(2**40)), ["`--resamples`", "33,554,432"]),
    (
        "bootstrap-negative",
        records_opts("--bootstrap-resamples", "-1"),
        ["`--bootstrap-resamples`"],
    ),
    (
        "bootstrap-one",  # a red team read the internal "`n_resamples` must be at least 2"
        records_opts("--bootstrap-resamples", "1"),
        ["`--bootstrap-resamples` must be at least 2; got 1"],
    ),
    ("seed-negative", records_opts("--seed", "-1"), ["`--seed`"]),
    ("family-typo", records_opts("--family", "per-metrics"), ["`--family`", "per-metric-budget"]),
    ("family-leaves-out", records_opts("--family", "recall:999"), ["`family`", "not analysed"]),
    (
        "family-item-twice",  # a red team read "('hit@2', 128) is in groups 0 and 0"
        records_opts("--family", "recall:256,RECALL:0256"),
        ["`family` names ('recall', 256) twice in group 1"],
    ),
    (
        "family-item-in-two-groups",
        records_opts("--family", "recall:256;recall:256"),
        ["`family` puts ('recall', 256) in groups 1 and 2"],
    ),
    ("metric-empty", records_opts("--metric", ","), ["`--metric` is empty"]),
    ("out-is-file", existing_file_out(records_opts()), ["`--out`", "taken", "existing file"]),
    ("out-foreign-folder", foreign_out(records_opts()), ["`--out`", "mine", "--force"]),
    ("out-under-a-file", under_file_out(records_opts()), ["`--out`", "afile", "not a folder"]),
    ("json-is-folder", lambda t: [*records_opts("--json", str(t))(t)], ["`--json`", "folder"]),
    ("depth-without-qrels", records_opts("--depth", "10"), ["--depth", "needs `--qrels`"]),
    # -- TREC ------------------------------------------------------------------------------
    (
        "qrels-missing",
        lambda t: [
            "analyze",
            str(TREC / "bm25.run"),
            "--qrels",
            str(t / "nq.txt"),
            "--depth",
            "5",
            *TR,
        ],
        ["--qrels", "nq.txt", "does not exist"],
    ),
    ("run-five-fields", trec("301 Q0 D1 1 2.0\n", None), ["x.run", "line 1", "expected 6"]),
    ("run-bad-score", trec("301 Q0 D1 1 high bm25\n", None), ["x.run", "line 1", "score"]),
    ("run-inf-score", trec("301 Q0 D1 1 inf bm25\n", None), ["x.run", "line 1", "finite"]),
    ("qrels-bad-grade", trec(None, "301 0 D1 yes\n"), ["q.txt", "line 1", "relevance"]),
    ("qrels-empty", trec(None, ""), ["q.txt", "is empty"]),
    (
        "qrels-judged-twice",
        trec(None, "301 0 D1 1\n301 0 D1 0\n"),
        ["q.txt", "line 2", "judged twice"],
    ),
    ("depth-zero", trec(None, None, "--depth", "0"), ["`--depth`", ">= 1"]),
    (
        "run-option-malformed",
        lambda t: [
            "analyze",
            "--run",
            "bm25",
            "--qrels",
            str(TREC / "qrels.txt"),
            "--depth",
            "5",
            *TR,
        ],
        ["`--run`", "NAME=FILE", "'bm25'"],
    ),
    (
        "concatenated-runs",
        lambda t: [
            "analyze",
            str(TREC / "concat.run"),
            "--qrels",
            str(TREC / "qrels.txt"),
            "--depth",
            "5",
            *TR,
        ],
        ["concat.run", "line", "--run NAME=FILE"],
    ),
    (
        "no-matching-qids",
        trec("999 Q0 D1 1 2.0 bm25\n", "301 0 D1 1\n"),
        ["check that the qids match"],
    ),
    # -- raw retrievals + evidence -----------------------------------------------------------
    (
        "tokens-over-budget",
        retrievals(lambda ls: [*ls[:3], ls[3].rsplit(",", 1)[0] + ",999", *ls[4:]]),
        ["ret.csv", "line 4", "over its budget"],
    ),
    ("tokens-negative", retrievals(two_lines), ["ret.csv", "line 4", "`tokens`"]),
    (
        "duplicate-retrieval",
        retrievals(lambda ls: [*ls, ls[1]]),
        ["ret.csv", "duplicate retrieval"],
    ),
    (
        "evidence-truncated",
        retrievals(lambda ls: ls, evidence='{"episode_id": "ep00"'),
        ["ev.jsonl", "line 1", "invalid JSON"],
    ),
    (
        "evidence-missing-query",
        retrievals(lambda ls: ls, evidence=(EX / "evidence.jsonl").read_text().split("\n", 1)[1]),
        ["ret.csv", "absent from the evidence file"],
    ),
    # -- audit -----------------------------------------------------------------------------
    (
        "claims-missing",
        lambda t: ["audit", str(t / "none.toml"), "--records", str(EX / "records.csv")],
        ["claims", "none.toml", "no such file", "shipped by name: paper"],
    ),
    ("claims-bad-toml", claims("[[claim]]\nid = \n"), ["claims.toml", "not valid TOML"]),
    (
        "claims-contradict",
        claims(CLAIM + "\n" + CLAIM.split("[[claim]]", 1)[1].join(["[[claim]]", ""])),
        ["claims.toml"],
    ),
    ("audit-level-2", claims(CLAIM, "--level", "2"), ["`--level`"]),
    ("audit-resamples-0", claims(CLAIM, "--bootstrap-resamples", "0"), ["`--bootstrap-resamples`"]),
    ("audit-out-is-file", existing_file_out(claims(CLAIM)), ["`--out`", "existing file"]),
    (
        "audit-records-missing",
        lambda t: ["audit", str(EX / "claims.toml"), "--records", str(t / "no.csv")],
        ["no.csv", "does not exist"],
    ),
    # -- reproduce synthetic ---------------------------------------------------------------
    (
        "synthetic-episodes-0",
        lambda t: [*synth("--episodes", "0")(t), "--out", str(t / "s")],
        ["`--episodes`"],
    ),
    ("synthetic-jobs-0", lambda t: [*synth("--jobs", "0")(t), "--out", str(t / "s")], ["`--jobs`"]),
    (
        "synthetic-seed-negative",
        lambda t: [*synth("--seed", "-3")(t), "--out", str(t / "s")],
        ["`--seed`"],
    ),
    (
        "synthetic-jobs-and-scheduler",
        lambda t: [*synth("--jobs", "2", "--scheduler", "tcp://h:1")(t), "--out", str(t / "s")],
        ["`--jobs`", "`--scheduler`", "not both"],
    ),
    (
        "synthetic-retriever-missing",
        lambda t: [*synth("--retriever", "no_such_mod_q:X")(t), "--out", str(t / "s")],
        ["`--retriever`", "no_such_mod_q"],
    ),
    ("synthetic-out-is-file", existing_file_out(synth()), ["`--out`", "existing file"]),
    ("synthetic-out-foreign", foreign_out(synth()), ["`--out`", "--force"]),
    # -- issue 35 item 9: messages that say what is wrong ------------------------------------
    (
        "one-query",
        lambda t: ["analyze", str(csv(t, base_records().query("query_id == 'q000'"))), *AB],
        ["1 paired query", "at least 2 queries"],
    ),
    (
        "values-near-float-max",
        lambda t: [
            "analyze",
            str(
                csv(
                    t,
                    base_records().assign(
                        metric="score",
                        value=lambda d: np.where(d.method == "osu-mem", 1e308, -1e308),
                    ),
                )
            ),
            *AB,
        ],
        ["values too large for float64", "rescale the metric"],
    ),
    # -- a stray comma in a list option (a red team's `--metric hit@2,` passed silently) --
    ("metric-trailing-comma", records_opts("--metric", "hit@2,"), ["`--metric`", "'hit@2,'"]),
    ("budget-double-comma", records_opts("--budget", "128,,256"), ["`--budget`", "empty item"]),
    # -- a repeated item of a list option (issue 35 item 1: never a family counted twice) --
    ("metric-twice", records_opts("--metric", "recall,recall"), ["`--metric`", "'recall' twice"]),
    (
        "metric-twice-other-case",
        records_opts("--metric", "recall, RECALL"),
        ["`--metric`", "'recall' and 'RECALL'"],
    ),
    ("budget-twice", records_opts("--budget", "256,256"), ["`--budget`", "256 twice"]),
    ("budget-twice-spelled", records_opts("--budget", "256,0256"), ["`--budget`", "256 twice"]),
    ("hit-k-twice", records_opts("--hit-k", "2,2"), ["`--hit-k`", "2 twice"]),
    (
        "hit-k-on-records",  # a red team's `--hit-k 1` on records was ignored silently
        records_opts("--hit-k", "1"),
        ["`--hit-k` applies to raw retrievals", "records carry their own hit@k"],
    ),
    ("depth-twice", trec(None, None, "--depth", "10,10"), ["`--depth`", "10 twice"]),
    ("measure-twice", trec(None, None, "--measure", "AP,AP"), ["`--measure`", "'AP' twice"]),
    (
        "treatment-twice",
        lambda t: [
            "analyze",
            str(csv(t, base_records())),
            "--treatment",
            "osu-mem,osu-mem",
            "--baseline",
            "flat-vector",
        ],
        ["`--treatment`", "'osu-mem' twice"],
    ),
    (
        "plan-cell-twice",
        lambda t: [
            "plan",
            str(EX / "records.csv"),
            "--effect",
            "0.1",
            "--treatment",
            "osu-mem",
            "--baseline",
            "flat-vector",
            "--metric",
            "recall",
            "--budget",
            "256",
            "--cell",
            "all,all",
        ],
        ["`--cell`", "'all' twice"],
    ),
    (
        "toolbench-seeds-twice",
        lambda t: ["reproduce", "toolbench", "--seeds", "42,42", "--out", str(t / "s")],
        ["`--seeds`", "42 twice"],
    ),
    (  # a benchmark's own list options follow the same rule (issue 35 item 1)
        "tau-bench-budgets-twice",
        lambda t: ["reproduce", "tau-bench", "--budgets", "64,064", "--out", str(t / "s")],
        ["`--budgets`", "64 twice"],
    ),
    (
        "toolbench-n-evs-twice",
        lambda t: ["reproduce", "toolbench", "--n-evs", "3,3", "--out", str(t / "s")],
        ["`--n-evs`", "3 twice"],
    ),
    (
        "locomo-methods-twice",
        lambda t: ["reproduce", "locomo", "--methods", "OSU-Mem, OSU-Mem", "--out", str(t / "s")],
        ["`--methods`", "'OSU-Mem' twice"],
    ),
    (
        "resamples-above-the-cap",
        records_opts("--resamples", str(2**25 + 1)),
        ["`--resamples`", "33,554,432"],
    ),
]


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in root.rglob("*")
    }


@pytest.mark.parametrize(("argv", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(tmp_path, capsys, argv, expected):
    args = argv(tmp_path)
    before = snapshot(tmp_path)
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "error:" in err and "Traceback" not in err
    for piece in expected:
        assert piece in err, (piece, err)
    assert snapshot(tmp_path) == before  # nothing written, nothing half-written


def test_matrix_size():
    assert len(CASES) >= 40


def test_bad_choice_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(EX / "records.csv"), *AB, "--correction", "holmes"])
    assert exc.value.code == 2
    assert "--correction" in capsys.readouterr().err


def test_failure_after_figures_leaves_no_files(tmp_path, capsys, monkeypatch):
    """A failure late in writing (after figures) leaves no output folder behind."""
    import osustat.reports.cellwise as cw

    def boom(res, figures):
        raise OSError(28, "No space left on device", str(tmp_path / "out" / "report.md"))

    monkeypatch.setattr(cw, "render_analysis", boom)
    path = csv(tmp_path, base_records())
    before = snapshot(tmp_path)
    assert main(["analyze", str(path), *AB, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "report.md" in err
    assert snapshot(tmp_path) == before


def test_force_replaces_a_report_of_other_inputs(tmp_path, capsys):
    a = csv(tmp_path, base_records(), "a.csv")
    b = csv(tmp_path, base_records().iloc[::-1], "b.csv")  # same rows, other bytes
    out = str(tmp_path / "out")
    assert main(["analyze", str(a), *AB, "--out", out]) == 0
    assert main(["analyze", str(b), *AB, "--out", out]) == 2
    assert "different inputs" in capsys.readouterr().err
    assert main(["analyze", str(b), *AB, "--out", out, "--force"]) == 0
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert prov["inputs"][0]["path"].endswith("b.csv")
