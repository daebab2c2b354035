"""Issue 24 (a)+(b): W/T/L, d_z and CLES on every row; to_json text, short repr, notebook
views and to_latex. Effect sizes are checked against definitions computed independently here
(d_z from scipy's paired t: t / sqrt(n); CLES by comparing the two methods' values unit by
unit, pingouin's tie-half convention)."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import osustat
from osustat.cellwise import paired_effect_sizes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "records.csv"


@pytest.fixture(scope="module")
def result():
    df = pd.read_csv(EXAMPLE)
    return osustat.analyze(
        df,
        treatment="osu-mem",
        baseline="flat-vector",
        metrics=["hit@2", "recall"],
        budgets=[256],
        n_resamples=199,
        bootstrap_resamples=50,
        rng=1,
    )


def _independent(t: np.ndarray, b: np.ndarray) -> tuple[int, int, int, float, float]:
    wins = sum(1 for x, y in zip(t, b, strict=True) if x > y)
    ties = sum(1 for x, y in zip(t, b, strict=True) if x == y)
    losses = len(t) - wins - ties
    res = stats.ttest_rel(t, b)
    dz = float(res.statistic) / math.sqrt(len(t))
    cles = float(
        np.mean([1.0 if x > y else 0.5 if x == y else 0.0 for x, y in zip(t, b, strict=True)])
    )
    return wins, ties, losses, dz, cles


def test_every_row_matches_independent_definitions(result):
    for comp in result.comparisons:
        data = comp.result.paired
        labels = None if data.cells is None else np.array([c.value for c in data.cells])
        for row in comp.rows:
            mask = np.ones(data.treatment.size, bool) if labels is None else labels == row.label
            if row.label == "Aggregate":
                mask = np.ones(data.treatment.size, bool)
            w, t, loss, dz, cles = _independent(data.treatment[mask], data.baseline[mask])
            e = row.effect
            assert (e.wins, e.ties, e.losses) == (w, t, loss)
            assert e.wins + e.ties + e.losses == e.n
            assert e.cles == pytest.approx(cles)
            if math.isfinite(dz):
                assert e.effect_size_dz == pytest.approx(dz)


def test_constant_differences_have_no_dz():
    w, t, loss, dz, cles = paired_effect_sizes([0.0, 0.0, 0.0])
    assert (w, t, loss, cles) == (0, 3, 0, 0.5) and math.isnan(dz)
    w, t, loss, dz, cles = paired_effect_sizes([1.0, 1.0])
    assert (w, t, loss, cles) == (2, 0, 0, 1.0) and math.isnan(dz)
    with pytest.raises(ValueError, match="`differences`"):
        paired_effect_sizes([])


def test_json_text_has_the_named_keys(result):
    text = result.to_json()
    assert isinstance(text, str)
    payload = json.loads(text)
    assert payload["comparisons"][0]["rows"][0]["n"] == result.comparisons[0].rows[0].effect.n
    for comp in payload["comparisons"]:
        for row in comp["rows"]:
            for key in ("wins", "ties", "losses", "effect_size_dz", "cles"):
                assert key in row
            assert row["wins"] + row["ties"] + row["losses"] == row["n"]
    frame = result.to_frame()
    assert {"wins", "ties", "losses", "effect_size_dz", "cles"} <= set(frame.columns)


def test_repr_is_short_and_says_what_it_is(result):
    text = repr(result)
    assert len(text) < 300
    assert "'osu-mem' vs 'flat-vector'" in text and "seed 1" in text and "holm" in text
    assert len(repr(result.comparisons[0])) < 100


def test_notebook_views(result):
    md = result._repr_markdown_()
    n_rows = sum(len(c.rows) for c in result.comparisons)
    assert md.count("\n| ") == n_rows + 1  # header + one line per row
    assert "W/T/L" in md and "CLES" in md
    html = result._repr_html_()
    assert html.count("<tr>") == n_rows + 1 and "<script" not in html


def test_latex_bolds_the_better_mean_and_marks_significance(result):
    tex = result.to_latex()
    assert tex.startswith(r"\begin{tabular}") and tex.rstrip().endswith(r"\end{tabular}")
    body = [ln for ln in tex.splitlines() if ln.endswith(r"\\")][1:]
    rows = [r for c in result.comparisons for r in c.rows]
    assert len(body) == len(rows)
    for line, row in zip(body, rows, strict=True):
        cells = [c.strip() for c in line.rstrip("\\").split("&")]
        t, b = cells[3], cells[4]
        e = row.effect
        if round(e.treatment_mean, 3) > round(e.baseline_mean, 3):
            assert t.startswith(r"\textbf") and not b.startswith(r"\textbf")
        elif round(e.baseline_mean, 3) > round(e.treatment_mean, 3):
            assert b.startswith(r"\textbf") and not t.startswith(r"\textbf")
        p = row.pvalue_adjusted if row.pvalue_adjusted is not None else row.pvalue
        mark = osustat.stars(p)
        assert (f"$^{{{mark}}}$" in cells[5]) == bool(mark)
        assert cells[6] == f"{e.wins}/{e.ties}/{e.losses}"
    assert "osu-mem & flat-vector" in tex


def test_report_has_the_columns(result):
    text = result.to_markdown()
    assert "| W/T/L | d_z | CLES |" in text
