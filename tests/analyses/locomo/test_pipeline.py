"""The pipeline end to end on the made-up file; byte-identical reruns; nothing written on bad
input; the conversation-level test against an independent enumeration."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from osustat import reproduce
from osustat.analyses.locomo.analysis import conversation_level
from osustat.analyses.locomo.data import LocomoDataError
from osustat.audit.result import VERDICTS
from osustat.retrieval import HashingBagOfWordsEncoder

from .conftest import small_data

KW: dict[str, Any] = {
    "encoder": HashingBagOfWordsEncoder(64),
    "methods": ("Flat Vector", "OSU-Mem", "OSU-Mem (disjoint)"),
    "budgets": (256, 512),
    "n_resamples": 1024,
    "progress": False,
    "claims": None,
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("locomo")
    data = base / "locomo.json"
    data.write_text(json.dumps(small_data()), encoding="utf-8")
    reproduce("locomo", data=data, out=base / "a", **KW)
    reproduce("locomo", data=data, out=base / "b", **KW)
    return base / "a", base / "b"


def test_outputs_and_report_sections(run: tuple[Path, Path]) -> None:
    a, _ = run
    assert {p.name for p in a.iterdir()} >= {
        "records.csv",
        "structure.json",
        "report.md",
        "provenance.json",
        "forest.png",
        "budget_curves.png",
        "budget_effects_hit.png",
    }
    rec = pd.read_csv(a / "records.csv")
    assert set(rec["benchmark"]) == {"locomo"}
    assert rec["query_id"].nunique() == 15  # 5 queries in each of 3 conversations
    assert set(rec["episode_id"]) == {"conv-1", "conv-2", "conv-3"}
    report = (a / "report.md").read_text(encoding="utf-8")
    for heading in (
        "## Data and queries",
        "## Cells and view marginals",
        "## Does the paper's claim transfer?",
        "## Cross-tab at B = 512",
        "## Effect by budget",
        "## Break-even and oracle ceiling",
        "## By question category",
    ):
        assert heading in report
    st = json.loads((a / "structure.json").read_text(encoding="utf-8"))
    assert st["queries"] == 15
    assert st["sessions_max"] == 3
    assert st["excluded_by_reason"]["category 5 (adversarial, no answer)"] == 3
    assert len(st["unresolved_evidence"]) == 6


def test_transfer_section_reads_the_drivers_claims_audit(run: tuple[Path, Path]) -> None:
    """The driver audits analyses/locomo/claims.toml (the benchmark's declared claims file)
    and the transfer section shows each claim's audit verdict beside the conversation unit."""
    report = (run[0] / "report.md").read_text(encoding="utf-8")
    assert "## Audit of the transfer claims (analyses/locomo/claims.toml)" in report
    section = report.split("## Does the paper's claim transfer?")[1].split("\n## ")[0]
    rows = [
        line
        for line in section.splitlines()
        if line.startswith("| OSU-Mem") or line.startswith("| overlap")
    ]
    assert len(rows) == 6  # 2 comparisons x (T+E+, T-E-, interaction)
    # the made-up data have no T+E+ question: the audit says so for that claim
    assert "| helps in T+E+ | — | — | — | not checkable (`L-osuflat-TpEp-hit2`) |" in section
    for cell in ("L-overlap-TmEm-hit2", "L-osuflat-TmEm-hit2", "L-interaction-osuflat-hit2"):
        row = next(r for r in rows if f"(`{cell}`)" in r)
        verdict = row.split(" | ")[5].split(" (`")[0]
        assert verdict in VERDICTS and verdict != "not checkable"
        assert f"| {cell} |" in report  # the same claim in the audit's own table


def test_reruns_are_byte_identical(run: tuple[Path, Path]) -> None:
    a, b = run
    for p in sorted(a.iterdir()):
        assert p.read_bytes() == (b / p.name).read_bytes(), p.name


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    data = small_data()
    del data[0]["conversation"]["session_1"][0]["dia_id"]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LocomoDataError, match=r"conv-1.*'dia_id'"):
        reproduce("locomo", data=p, out=tmp_path / "out", **KW)
    assert not (tmp_path / "out").exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.json"]


def test_conversation_level_is_an_exact_signflip_over_conversation_means() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for c in range(7):
        for q in range(5):
            cell = "T-E-" if q % 2 else "T+E-"
            for m in ("A", "B"):
                rows.append(
                    {
                        "benchmark": "x",
                        "episode_id": f"c{c}",
                        "query_id": f"c{c}/q{q}",
                        "method": m,
                        "budget": 8,
                        "seed": 0,
                        "cell": cell,
                        "metric": "recall",
                        "value": float(rng.uniform()),
                    }
                )
    df = pd.DataFrame(rows)
    out = conversation_level(df, "A", "B", "recall", 8, 1024, 0)
    w = df.pivot_table(index=["episode_id", "query_id"], columns="method", values="value")
    d = (w["A"] - w["B"]).groupby(level=0).mean().to_numpy()
    null = [abs(np.dot(s, d)) for s in itertools.product((-1, 1), repeat=d.size)]
    p = np.mean(np.array(null) >= abs(d.sum()) - 1e-12)
    assert out["all"]["n_conversations"] == 7 and out["all"]["exact"]
    assert out["all"]["p"] == pytest.approx(p)
    assert out["all"]["effect"] == pytest.approx(d.mean())
    assert out["all"]["p_floor"] == pytest.approx(2 / 2**7)


def test_user_retriever_joins_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from osustat.retrieval.registry import load_retriever

    examples = Path(__file__).resolve().parents[3] / "examples"
    monkeypatch.chdir(examples)
    spec = load_retriever("my_retriever:RecencyCosine")
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(small_data()), encoding="utf-8")
    kw = {**KW, "budgets": (64,), "methods": ("Flat Vector", "OSU-Mem")}
    reproduce("locomo", data=data, out=tmp_path / "o", retrievers=(spec,), **kw)
    rec = pd.read_csv(tmp_path / "o" / "records.csv")
    assert set(rec["method"]) == {"Flat Vector", "OSU-Mem", spec.name}
    assert spec.name in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("p_conv", "e_conv", "p_query", "e_query", "expected"),
    [
        (0.01, -0.1, 0.001, -0.1, "transfers"),
        (0.01, 0.1, 0.001, 0.1, "reversed (significant, opposite sign)"),
        (0.2, -0.1, 0.01, -0.1, "query level only"),
        (0.2, 0.1, 0.01, 0.1, "reversed at the query level only"),
        (0.2, -0.1, 0.3, -0.1, "does not transfer at this n"),
        (float("nan"), -0.1, 0.3, -0.1, "does not transfer at this n"),
    ],
)
def test_transfer_verdict_decides_at_the_conversation_unit(
    p_conv: float, e_conv: float, p_query: float, e_query: float, expected: str
) -> None:
    from osustat.analyses.locomo.analysis import _verdict

    assert _verdict(p_conv, e_conv, p_query, e_query, -1) == expected


def test_out_folder_of_something_else_is_refused_before_any_work(
    run: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = run
    prov = json.loads((a / "provenance.json").read_text(encoding="utf-8"))
    assert prov["inputs"][0]["role"] == "data file" and prov["seeds"] == {"master": 0}
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me", encoding="utf-8")
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(small_data()), encoding="utf-8")
    with pytest.raises(ValueError, match="without an osustat"):
        # the real encoder: it would load the model if it ran
        reproduce("locomo", other, data=data, **{**KW, "encoder": None})
    assert (other / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_cli_bad_file_exits_2_naming_conversation_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from osustat.cli.main import main

    data = small_data()
    del data[1]["qa"]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    code = main(["reproduce", "locomo", "--data", str(p), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "conv-2" in err and "'qa'" in err
    assert not (tmp_path / "out").exists()


def test_sensitivity_through_the_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import osustat.analyses.runner as runner

    bars: list[Any] = []

    class Recording:
        """Stands in for the progress bar: its total, description and the steps it was given."""

        def __init__(self, total: int, desc: str, *, progress: bool, **_: Any) -> None:
            self.total, self.desc, self.progress, self.n = total, desc, progress, 0
            bars.append(self)

        def update(self, k: int = 1) -> None:
            self.n += k

        def close(self) -> None:
            pass

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: Any) -> None:
            pass

    monkeypatch.setattr(runner, "progress_bar", Recording)
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(small_data()), encoding="utf-8")
    kw = {**KW, "budgets": (64,), "n_resamples": 1024, "progress": True}
    reproduce("locomo", tmp_path / "o", data=data, sensitivity=True, **kw)
    # the analysis phase's bar (issue 38 item 5) ends exactly at its total: every comparison
    # of the main run and both Hit@2 comparisons of each of the 6 sensitivity reruns
    (analysis,) = [b for b in bars if b.desc == "locomo analysis"]
    assert analysis.progress and analysis.n == analysis.total >= 6 * 2
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "## Sensitivity to the open choices" in report
    # no overlay beside the made-up file: that point is listed as not run, never dropped
    assert "Not run: labels=audit" in report
    files = sorted(p.name for p in (tmp_path / "o" / "sensitivity").iterdir())
    assert files == [
        "records-captions=out.csv",
        "records-encoder-backend=onnx.csv",  # a declared choice too (issue 38 item 4)
        "records-encoder-backend=openvino.csv",
        "records-entity-extractor=proper-nouns+speakers.csv",
        "records-query-time=after-evidence-session.csv",
        "records-speaker-view=tool-slot.csv",
    ]
    assert "| query-time=after-evidence-session |" in report


def test_choice_changes_the_run(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(small_data()), encoding="utf-8")
    kw = {**KW, "budgets": (64,)}
    reproduce("locomo", data=data, out=tmp_path / "o", choices={"captions": "out"}, **kw)
    st = json.loads((tmp_path / "o" / "structure.json").read_text(encoding="utf-8"))
    assert st["choices"]["captions"] == "out"
    prov = json.loads((tmp_path / "o" / "provenance.json").read_text(encoding="utf-8"))
    assert prov["choices"]["captions"] == "out"
