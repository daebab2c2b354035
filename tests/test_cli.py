import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from osustat.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "records.csv"


def small_records(tmp_path, fmt="csv"):
    df = pd.read_csv(EXAMPLE)
    df = df[df["budget"] == 256]
    path = tmp_path / f"records.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    else:
        df.to_parquet(path)
    return path


class TestAnalyze:
    @pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
    def test_formats(self, tmp_path, fmt, capsys):
        path = small_records(tmp_path, fmt)
        assert (
            main(
                [
                    "analyze",
                    str(path),
                    "--treatment",
                    "osu-mem",
                    "--baseline",
                    "flat-vector",
                    "--metric",
                    "hit@2",
                    "--resamples",
                    "999",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "## hit@2 at B = 256" in out and "| T+E+ | 56 |" in out
        assert "n (queries)" in out and "in-sample upper bound" in out

    def test_report_files_and_determinism(self, tmp_path):
        path = small_records(tmp_path)
        args = [
            "analyze",
            str(path),
            "--treatment",
            "osu-mem",
            "--baseline",
            "flat-vector",
            "--resamples",
            "999",
            "--json",
        ]
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        first = (tmp_path / "a" / "report.md").read_bytes()
        # same inputs: the folder is replaced, and the report is byte-identical
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        assert (tmp_path / "a" / "report.md").read_bytes() == first
        a = first.decode()
        payload = json.loads((tmp_path / "a" / "results.json").read_text())
        assert [p["metric"] for p in payload["comparisons"]] == ["hit@2", "recall"]
        assert payload["treatment"] == "osu-mem" and payload["baseline"] == "flat-vector"
        assert payload["seed"] == 0 and payload["alpha"] == 0.05
        assert payload["family"] == "per-metric-budget" and payload["correction"] == "holm"
        prov = payload["provenance"]
        assert prov["inputs"][0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert set(prov["versions"]) >= {"osustat", "numpy", "scipy", "statsmodels", "pandas"}
        assert "sentence-transformers" in prov["versions"]
        assert prov["command"].startswith("osustat analyze ")
        rows = payload["comparisons"][0]["rows"]
        # contributions f·Δ add up to the aggregate effect
        assert sum(r["contribution"] for r in rows[:-1]) == pytest.approx(rows[-1]["effect"])
        png = (tmp_path / "a" / "forest-hit2-B256.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / "a" / "forest-hit2-B256.svg").exists()
        assert "forest-hit2-B256.png" in a and "## Provenance" in a
        assert "SHA-256 `" + prov["inputs"][0]["sha256"] in a

    def test_episode_unit(self, tmp_path, capsys):
        path = small_records(tmp_path)
        assert (
            main(
                [
                    "analyze",
                    str(path),
                    "--treatment",
                    "osu-mem",
                    "--baseline",
                    "flat-vector",
                    "--metric",
                    "recall",
                    "--unit",
                    "episode",
                    "--resamples",
                    "999",
                ]
            )
            == 0
        )
        assert "n (episodes)" in capsys.readouterr().out

    def test_unknown_method_is_an_error(self, tmp_path, capsys):
        path = small_records(tmp_path)
        code = main(["analyze", str(path), "--treatment", "tree", "--baseline", "flat-vector"])
        assert code == 2
        err = capsys.readouterr().err
        assert "known methods: ['flat-vector', 'osu-mem']" in err

    def test_missing_file(self, tmp_path, capsys):
        assert (
            main(["analyze", str(tmp_path / "nope.csv"), "--treatment", "a", "--baseline", "b"])
            == 2
        )
        assert "does not exist" in capsys.readouterr().err

    def test_bad_extension(self, tmp_path, capsys):
        path = tmp_path / "records.xlsx"
        path.write_text("x")
        assert main(["analyze", str(path), "--treatment", "a", "--baseline", "b"]) == 2
        assert "unknown extension '.xlsx'" in capsys.readouterr().err

    def test_missing_columns(self, tmp_path, capsys):
        path = tmp_path / "r.csv"
        pd.DataFrame({"query_id": ["q"], "value": [1]}).to_csv(path, index=False)
        assert main(["analyze", str(path), "--treatment", "a", "--baseline", "b"]) == 2
        assert "missing required columns" in capsys.readouterr().err
