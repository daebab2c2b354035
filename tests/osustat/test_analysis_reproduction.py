"""ER and ΔRI in `osustat.analyze` (issue 24): reference records and printed means."""

import json

import numpy as np
import pandas as pd
import pytest

import osustat
from osustat.reproduction import reproduction_measures


def frame(t, b, *, cells=None, qids=None, metric="recall"):
    n = len(t)
    qids = qids or [f"q{i}" for i in range(n)]
    df = pd.DataFrame(
        {
            "episode_id": [f"e{i % 4}" for i in range(n)] * 2,
            "query_id": qids * 2,
            "method": ["new"] * n + ["old"] * n,
            "budget": 256,
            "metric": metric,
            "value": list(t) + list(b),
        }
    )
    if cells is not None:
        df["cell"] = list(cells) * 2
    return df


RNG = np.random.default_rng(0)
T = np.round(RNG.random(24), 3)
B = np.round(np.clip(T - RNG.normal(0.08, 0.1, 24), 0, 1), 3)
CELLS = ["T+E+", "T-E-"] * 12
OPTS = {"treatment": "new", "baseline": "old", "n_resamples": 999, "bootstrap_resamples": 300}


def test_paper_means_on_the_aggregate_row():
    res = osustat.analyze(frame(T, B, cells=CELLS), paper_means=(0.6, 0.5), **OPTS)
    rows = res.comparisons[0].rows
    assert [r.reproduction is None for r in rows] == [True, True, False]
    agg = rows[-1].reproduction
    imp = T.mean() - B.mean()
    assert agg.effect_ratio == pytest.approx(imp / 0.1)  # hand computation
    assert agg.delta_ri == pytest.approx(0.1 / 0.5 - imp / B.mean())
    assert agg.origin == "paper values"
    payload = json.loads(res.to_json())["comparisons"][0]["rows"]
    assert "effect_ratio" not in payload[0]
    assert payload[-1]["effect_ratio"] == pytest.approx(agg.effect_ratio)
    assert payload[-1]["delta_ri_ci"] == [agg.delta_ri_ci.low, agg.delta_ri_ci.high]


def test_reference_records_every_row_same_units():
    # the original run: the same queries, a larger improvement
    orig = frame(np.clip(T + 0.05, 0, 1), B, cells=CELLS)
    res = osustat.analyze(frame(T, B, cells=CELLS), reference=orig, **OPTS)
    for row in res.comparisons[0].rows:
        m = row.reproduction
        assert m is not None and m.origin == "reference run, same units"
        mask = np.ones(24, bool) if row.label == "Aggregate" else np.array(CELLS) == row.label
        ot = np.clip(T + 0.05, 0, 1)[mask]
        hand = (T[mask] - B[mask]).mean() / (ot - B[mask]).mean()
        assert m.effect_ratio == pytest.approx(hand)


def test_reference_with_other_queries_is_resampled_independently():
    orig = frame(T[:20], B[:20], qids=[f"x{i}" for i in range(20)])
    res = osustat.analyze(frame(T, B), reference=orig, **OPTS)
    m = res.comparisons[0].rows[-1].reproduction
    assert m.origin == "reference run, other units" and m.n_original == 20
    direct = reproduction_measures(T, B, original_treatment=T[:20], original_baseline=B[:20])
    assert m.effect_ratio == pytest.approx(direct.effect_ratio)


def test_results_unchanged_without_an_original():
    plain = osustat.analyze(frame(T, B, cells=CELLS), **OPTS)
    with_ref = osustat.analyze(frame(T, B, cells=CELLS), paper_means=(0.6, 0.5), **OPTS)
    for a, b in zip(plain.comparisons[0].rows, with_ref.comparisons[0].rows, strict=True):
        assert a.pvalue == b.pvalue and a.effect.ci == b.effect.ci and a.verdict == b.verdict


def test_bad_originals_are_refused():
    df = pd.concat([frame(T, B), frame(T, B, metric="hit@2").assign(value=lambda d: d.value > 0.5)])
    with pytest.raises(ValueError, match="needs one comparison"):
        osustat.analyze(df, paper_means=(0.6, 0.5), **OPTS)
    with pytest.raises(ValueError, match="not among the analysed"):
        osustat.analyze(df, paper_means={("ndcg", 256): (0.6, 0.5)}, **OPTS)
    with pytest.raises(TypeError, match="two numbers"):
        osustat.analyze(frame(T, B), paper_means=(0.6,), **OPTS)
    with pytest.raises(ValueError, match="not both"):
        osustat.analyze(frame(T, B), paper_means=(0.6, 0.5), reference=frame(T, B), **OPTS)


def test_cli_reference_and_paper_means(tmp_path, capsys):
    from osustat.cli.main import main

    rep, orig = tmp_path / "rep.csv", tmp_path / "orig.csv"
    frame(T, B, cells=CELLS).to_csv(rep, index=False)
    frame(np.clip(T + 0.05, 0, 1), B, cells=CELLS).to_csv(orig, index=False)
    base = ["analyze", str(rep), "--treatment", "new", "--baseline", "old", "--resamples", "999"]
    assert main([*base, "--bootstrap-resamples", "200", "--reference", str(orig), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    rows = payload["comparisons"][0]["rows"]
    assert all(r["original"] == "reference run, same units" for r in rows)
    assert all(len(r["effect_ratio_ci"]) == 2 for r in rows)
    assert any(i["role"] == "reference" for i in payload["provenance"]["inputs"])
    assert main([*base, "--bootstrap-resamples", "200", "--paper-means", "0.6,0.5"]) == 0
    text = capsys.readouterr().out
    assert "Reproduction against the original (paper values;" in text
    assert main([*base, "--paper-means", "0.6"]) == 2
    assert "`--paper-means` must be two numbers" in capsys.readouterr().err
    assert main([*base, "--reference", str(tmp_path / "nope.csv")]) == 2


def test_reference_lacking_a_metric_says_reference():
    # issue 35 item 9: "not in the records" named the analysed records, not the reference
    orig = frame(T, B, cells=CELLS, metric="ndcg")
    with pytest.raises(ValueError, match=r"`reference`: .*not in the reference records"):
        osustat.analyze(frame(T, B, cells=CELLS), reference=orig, **OPTS)
