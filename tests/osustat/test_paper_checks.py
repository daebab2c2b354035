"""`osustat audit --check-paper`: consistency checks on the paper's own printed numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from osustat.analyses.claims_audit import claims_file
from osustat.audit.paper_checks import check_paper, load_paper_checks

ROOT = Path(__file__).resolve().parents[2]
CHECKS = claims_file("paper_checks")


def test_recall_hit2_bound_by_hand():
    # n = 3, k = 2: a query retrieving c evidence steps; Recall <= (1 + 2 H) / 3.
    # Four queries with counts 3, 2, 1, 0: H = .5, Recall = 6 / 12 = .5 <= .667; the extreme
    # allowed, counts 3, 3, 1, 1: Recall = 8 / 12 = .667 (the bound, attained).
    spec = {"id": "b", "kind": "recall-hit-bound", "source": "s", "statement": "t",
            "n_evidence": 3, "k": 2,
            "cells": [["a", 0.5, 0.5], ["edge", 0.5, 8 / 12], ["over", 0.5, 0.70]]}  # fmt: skip
    (res,) = check_paper((spec,))
    assert [r.holds for r in res.rows] == [True, True, False]
    assert res.rows[0].bound == pytest.approx(2 / 3)


def test_the_paper_findings():
    res = {c.id: c for c in check_paper(load_paper_checks(CHECKS), n_resamples=2000, rng=0)}
    assert len(res["T3-recall-hit2-bound"].violations) == 18  # of 20 Table 3 cells
    ok = {r.label for r in res["T3-recall-hit2-bound"].rows if r.holds}
    assert ok == {"Disjoint Hierarchy B=200", "Disjoint Hierarchy B=400"}
    bad = {r.label for r in res["T3-caption-within-1pp"].violations}
    assert bad == {f"Cov (disjoint) B={b}" for b in (200, 400, 800, 1600)}
    assert not res["T3-disjoint-recall-vs-eviction"].holds
    assert not res["S63-interaction-B512-p"].holds
    assert res["S63-interaction-B512-p"].rows[0].bound < 0.01
    for b in (64, 128, 256):
        assert res[f"S63-interaction-B{b}-p"].holds, b


def test_bad_file_names_the_check(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[[check]]\nid = "x"\nkind = "nope"\nsource = "s"\nstatement = "t"\n')
    with pytest.raises(ValueError, match="check #1 \\('x'\\): `kind` must be one of"):
        load_paper_checks(f)
    f.write_text('[[check]]\nid = "x"\nkind = "at-most"\nsource = "s"\nstatement = "t"\n')
    with pytest.raises(ValueError, match="missing keys \\['bound', 'bound_from', 'value'\\]"):
        load_paper_checks(f)


def test_cli_check_paper_without_records():
    out = subprocess.run(
        [sys.executable, "-m", "osustat", "audit", str(claims_file("paper")),
         "--check-paper", str(CHECKS)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Findings about the paper" in out.stdout and "18 of 20" in out.stdout
    none = subprocess.run(
        [sys.executable, "-m", "osustat", "audit", str(claims_file("paper"))],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert none.returncode == 2 and "--records" in none.stderr


def test_the_checks_file_is_read_as_the_claims_file_is(tmp_path):
    # red team (claims files, the same shared TOML reader): a BOM is read, gzip is named
    text = CHECKS.read_bytes()
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + text)
    assert load_paper_checks(bom) == load_paper_checks(CHECKS)
    import gzip

    gz = tmp_path / "gz.toml"
    gz.write_bytes(gzip.compress(text))
    with pytest.raises(ValueError, match=r"^paper checks file '.*gz\.toml' is gzip-compressed"):
        load_paper_checks(gz)
