import itertools
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from osustat import reproduce, validate_records
from osustat.analyses.protocol import Backend
from osustat.analyses.synthetic.generator import (
    SEGMENT_CONFIG,
    generate_episode,
    generate_episodes,
    structural_statistics,
)
from osustat.analyses.synthetic.run import BUDGETS, MAIN_METHODS, MMAX_SWEEP, run_synthetic

QUIET = Backend(progress=False)


class TestGenerator:
    def test_deterministic(self):
        a = generate_episode("ep", np.random.default_rng(5))
        b = generate_episode("ep", np.random.default_rng(5))
        assert np.array_equal(a.trajectory.embeddings, b.trajectory.embeddings)
        assert [q.evidence.tolist() for q in a.queries] == [q.evidence.tolist() for q in b.queries]

    @pytest.mark.parametrize("config", [None, SEGMENT_CONFIG], ids=["spread", "segment"])
    def test_paper_fixed_properties(self, config):
        for ep in generate_episodes(8, seed=1, config=config):
            tr = ep.trajectory
            assert 150 <= tr.n_steps <= 296 and tr.dim == 64
            assert tr.costs.min() >= 5.0
            assert np.allclose(np.linalg.norm(tr.embeddings, axis=1), 1.0)
            for q, cell in zip(ep.queries, ep.cells, strict=True):
                ev = q.evidence.tolist()
                assert 2 <= len(ev) <= 3
                # one event: a shared entity and the same subgoal for every evidence step
                assert set.intersection(*(set(tr.entity_names(i)) for i in ev))
                assert len({int(tr.subgoal_ids[i]) for i in ev}) == 1
                assert cell in ("T+E+", "T-E+")  # E+ by construction
                assert all("(" in tr.tool_of(i) for i in ev)  # action(template)
                if config is SEGMENT_CONFIG:
                    assert q.time == tr.n_steps
                    assert all(len(tr.entity_names(i)) == 1 for i in ev)
                else:  # spread: spacing 30-90 between evidence, query 8-40 after the last
                    assert all(30 <= b - a <= 90 for a, b in itertools.pairwise(ev))
                    assert 8 <= q.time - ev[-1] <= 40 and q.time <= tr.n_steps

    def test_structural_statistics(self):
        stats = structural_statistics(generate_episodes(40, seed=2))
        assert stats["episodes"] == 40 and stats["e_plus_fraction"] == 1.0
        assert stats["subgoal_shared_fraction"] == 1.0
        assert stats["identical_signature_fraction"] <= stats["same_action_fraction"]
        assert stats["t_plus_e_plus_fraction"] == stats["identical_signature_fraction"]
        assert 2.0 <= stats["mean_evidence_per_query"] <= 3.0


class TestRun:
    def test_records_cover_every_method_and_budget(self):
        run = run_synthetic(3, seed=4, backend=QUIET)
        df = validate_records(run.records)
        assert set(df["method"]) == set(MAIN_METHODS) | set(MMAX_SWEEP.values())
        assert set(df["budget"]) == set(BUDGETS)
        n_q = run.structure["queries"]
        per = df[df["metric"] == "recall"].groupby(["method", "budget"]).size()
        assert (per == n_q).all()  # every query, every method, every budget: nothing dropped

    @pytest.mark.slow
    def test_jobs_do_not_change_records(self):
        one = run_synthetic(4, seed=6, backend=QUIET).records
        two = run_synthetic(4, seed=6, backend=Backend(jobs=2, progress=False)).records
        assert one.equals(two)

    def test_bad_arguments(self):
        with pytest.raises(ValueError, match="`n_episodes` must be >= 1"):
            run_synthetic(0, backend=QUIET)
        with pytest.raises(ValueError, match="`jobs` must be an integer >= 1"):
            run_synthetic(2, backend=Backend(jobs=0, progress=False))
        with pytest.raises(ValueError, match=r"unknown `methods` \['Nope'\]"):
            run_synthetic(2, methods=("OSU-Mem", "Nope"), backend=QUIET)

    def test_methods_subset_and_hash_seed_independence(self, tmp_path):
        # a step's entity set must not be numbered in a per-process hash order
        import subprocess
        import sys

        code = (
            "from osustat.analyses.synthetic.run import run_synthetic;"
            "from osustat.analyses.protocol import Backend;"
            "r = run_synthetic(2, seed=6, backend=Backend(progress=False), budgets=(256,),"
            " methods=('OSU-Mem', 'OSU-Mem (disjoint)')).records;"
            "import sys; sys.stdout.write(r.to_csv())"
        )
        outs = [
            subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                check=True,
                env={**__import__("os").environ, "PYTHONHASHSEED": str(h)},
            ).stdout
            for h in (1, 2)
        ]
        assert outs[0] == outs[1]
        assert "OSU-Mem (disjoint)" in outs[0] and "Flat Vector" not in outs[0]


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


class TestReproduce:
    def test_outputs_byte_identical_and_complete(self, tmp_path):
        kw = {"episodes": 3, "seed": 9, "n_resamples": 999, "progress": False}
        a = reproduce("synthetic", tmp_path / "a", **kw)
        reproduce("synthetic", tmp_path / "b", **kw)
        names = [
            "records.csv",
            "records.parquet",
            "report.md",
            "structure.json",
            "membership.csv",
            "budget_curves.png",
            "near_far.png",
            "mmax_sweep.png",
            "mmax_sweep.svg",
        ]
        for name in names:
            assert (a.out / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
        doc = (Path(__file__).resolve().parents[2] / "docs" / "synthetic.md").read_text()
        listed = doc[doc.index("Writes `records.parquet`") : doc.index("With `--sensitivity`")]
        for written in a.out.iterdir():  # the doc lists every output (it left out the SVG)
            assert f"`{written.name}`" in listed, written.name
        report = (a.out / "report.md").read_text()
        # It opens like LoCoMo's: what was run, headline with unit and n, choices; then tables.
        assert report.index("## Summary") < report.index("## Layout check")
        summary = report[report.index("## Summary") : report.index("## Layout check")]
        assert "3 generated episodes" in summary
        assert re.search(r"unit = episode, n = \d+ episodes, Holm over \d+ tests", summary)
        assert "hit@2, OSU-Mem vs Flat Vector: Δ = " in summary and "Holm p " in summary
        assert "Open choices these depend on" in summary and "`layout=spread` here" in summary
        # Table 10 says why the audit's p of the same comparison differs
        assert "the same comparison shows two raw p's and two corrected ones" in report
        for heading in (
            "## Structural statistics",
            "## Table 9",
            "## Table 10",
            "## Near vs far evidence",
            "## Ablations",
            "## Claims of Sections",
        ):
            assert heading in report
        assert "| OSU-Mem vs Flat Vector" in report.replace("| recall | ", "| ")
        assert json.loads((a.out / "structure.json").read_text())["episodes"] == 3
        assert png_size(a.out / "budget_curves.png") == (1000, 400)
        assert png_size(a.out / "near_far.png") == (800, 400)
        assert png_size(a.out / "mmax_sweep.png") == (960, 540)  # 150 dpi, SVG beside it
        assert "![M_max sweep](mmax_sweep.png)" in report
        # issue 23 item 7: no Python booleans in the prose; the figures name what they leave out
        assert not re.search(r"\b(True|False)\b", report)
        assert (
            "*The figure draws 8 of 14 methods; left out (their numbers are in Table 9): " in report
        )


def test_reproduce_takes_n_resamples_and_its_old_name(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="n_resamples"):
        reproduce("synthetic", tmp_path / "x", episodes=1, n_resamples=99, resamples=99)
    assert not (tmp_path / "x").exists()  # refused before anything was written
