"""osustat.analyze with several method pairs: the families span the pairs, a pair's raw rows
equal its analysis alone, the step-down corrections equal westfall_young on the same units,
and nothing loaded is ignored silently."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import osustat
from osustat.analysis_multi import MultiAnalysisResult
from osustat.multitest import adjust_pvalues
from osustat.stepdown import westfall_young
from osustat.streams import stream_seed

CELLS = ["T+E+", "T+E-", "T-E+", "T-E-"]
FAST = {"n_resamples": 499, "bootstrap_resamples": 99, "rng": 3}


def records(n_ep: int = 10, per: int = 12, seed: int = 0) -> pd.DataFrame:
    """0/1 values (exact-binomial MDEs keep the test fast) for a baseline and three methods
    that share each query's difficulty: the comparisons are correlated."""
    rng = np.random.default_rng(seed)
    rows = []
    for e in range(n_ep):
        for j in range(per):
            easy = rng.uniform(0.2, 0.8)
            cell = CELLS[(e * per + j) % 4]
            for m, lift in (("base", 0.0), ("a", 0.35), ("b", 0.0), ("c", 0.1)):
                for budget in (128, 256):
                    rows.append(
                        {
                            "episode_id": f"e{e}",
                            "query_id": f"q{j}",
                            "method": m,
                            "budget": budget,
                            "metric": "hit@2",
                            "value": float(rng.uniform() < min(easy + lift, 1.0)),
                            "cell": cell,
                        }
                    )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return records()


@pytest.fixture(scope="module")
def multi(df: pd.DataFrame) -> MultiAnalysisResult:
    res = osustat.analyze(df, treatment=["a", "b", "c"], baseline="base", **FAST)
    assert isinstance(res, MultiAnalysisResult)
    return res


def _rows(res):
    return [r for c in res.comparisons for r in c.rows]


def test_each_pair_equals_its_analysis_alone(df, multi):
    for (t, b), pair in zip(multi.pairs, multi.results, strict=True):
        alone = osustat.analyze(df, treatment=t, baseline=b, **FAST)
        assert [(r.label, r.pvalue, r.effect.effect) for r in _rows(alone)] == [
            (r.label, r.pvalue, r.effect.effect) for r in _rows(pair)
        ]
    assert multi.pairs == (("a", "base"), ("b", "base"), ("c", "base"))


def test_holm_family_spans_the_pairs(multi):
    """per-metric-budget: one family per budget holding every pair's four cells (m = 12),
    corrected p = Holm over the pooled raw p (recomputed here)."""
    for budget in (128, 256):
        rows = [
            r
            for pair in multi.results
            for c in pair.comparisons
            if c.budget == budget
            for r in c.rows
            if r.label != "Aggregate"
        ]
        assert len(rows) == 12 and {r.family_size for r in rows} == {12}
        ref = adjust_pvalues([r.pvalue for r in rows], method="holm").pvalues_adjusted
        np.testing.assert_allclose([r.pvalue_adjusted for r in rows], ref)
    assert multi.family_size("hit@2 @ 128") == 12
    assert "m = 12" in multi.family_sentence() and "3 method pairs" in multi.family_sentence()


def test_user_groups_per_pair_reproduce_single_analyses(df):
    fam = [[(t, "base", "hit@2", b) for b in (128, 256)] for t in ("a", "b")]
    res = osustat.analyze(df, treatment=["a", "b"], baseline="base", family=fam, **FAST)
    for t, pair in zip(("a", "b"), res.results, strict=True):
        alone = osustat.analyze(df, treatment=t, baseline="base", family="per-metric", **FAST)
        assert [r.pvalue_adjusted for r in _rows(pair)] == [r.pvalue_adjusted for r in _rows(alone)]
    with pytest.raises(ValueError, match="method pair"):
        osustat.analyze(
            df, treatment=["a"], baseline="base", family=[[("c", "base", "hit@2", 128)]]
        )
    with pytest.raises(ValueError, match="leaves out"):
        osustat.analyze(df, treatment=["a", "b"], baseline="base", family=[fam[0]])


@pytest.mark.parametrize("method", ["maxt", "minp"])
def test_stepdown_equals_westfall_young_on_the_units(df, method):
    res = osustat.analyze(df, treatment=["a", "b", "c"], baseline="base", correction=method, **FAST)
    diffs, units, rows = [], [], []
    for t in ("a", "b", "c"):
        p = osustat.paired(df, t, "base", metric="hit@2", budget=256)
        labels = np.array([str(c) for c in p.cells])
        for cell in CELLS:
            mask = labels == cell
            diffs.append(p.differences[mask])
            units.append(p.ids[mask])
    for pair in res.results:
        rows += [r for r in pair.comparisons[1].rows if r.label != "Aggregate"]
    ref = westfall_young(
        diffs,
        units,
        method=method,
        n_resamples=FAST["n_resamples"],
        rng=np.random.default_rng(stream_seed(FAST["rng"], "westfall-young", "hit@2 @ 256")),
    )
    expected = np.maximum(ref.pvalues_adjusted, [r.pvalue for r in rows])
    np.testing.assert_allclose([r.pvalue_adjusted for r in rows], expected)
    assert all(r.family_size == 12 for r in rows)
    significant = [r for r in rows if r.pvalue_adjusted <= 0.05]
    # a p_adj within 2.576 of its own Monte Carlo errors of .05 is undecided, the rest say so
    se = [
        np.sqrt(r.pvalue_adjusted * (1 - r.pvalue_adjusted) / FAST["n_resamples"])
        for r in significant
    ]
    decided = [
        r for r, s in zip(significant, se, strict=True) if 0.05 - r.pvalue_adjusted > 2.576 * s
    ]
    assert decided and all("Westfall–Young step-down" in r.verdict for r in decided)
    assert all(r.verdict.startswith("undecided") for r in significant if r not in decided)


def test_all_pairs_and_named_order(df):
    res = osustat.analyze(df, all_pairs=True, metrics="hit@2", budgets=256, **FAST)
    assert res.pairs == tuple(combinations(["a", "b", "base", "c"], 2))
    assert res.methods_not_compared == ()
    named = osustat.analyze(df, treatment=["c", "a"], baseline="b", all_pairs=True, budgets=256)
    assert named.pairs == (("c", "a"), ("c", "b"), ("a", "b"))
    assert named.methods_not_compared == ("base",)


def test_methods_left_out_are_reported(df):
    single = osustat.analyze(df, treatment="a", baseline="base", budgets=256, **FAST)
    assert single.methods_not_compared == ("b", "c")
    reasons = [r for r, _ in single.provenance.exclusions]
    assert any("not compared ('b', 'c')" in r for r in reasons)
    assert json.loads(single.to_json())["methods_not_compared"] == ["b", "c"]


def test_json_frame_latex_and_repr(multi):
    payload = json.loads(multi.to_json())
    assert payload["schema"] == "osustat.analysis-multi/1"
    assert payload["method_pairs"][2] == {"treatment": "c", "baseline": "base"}
    fam = payload["families"]["hit@2 @ 256"]
    assert fam["m"] == 12 and fam["members"][0] == {
        "treatment": "a",
        "baseline": "base",
        "metric": "hit@2",
        "budget": 256,
    }
    first = payload["results_by_pair"][0]
    assert first["treatment"] == "a" and {
        "wins",
        "ties",
        "losses",
        "effect_size_dz",
        "cles",
    } <= set(first["comparisons"][0]["rows"][0])
    frame = multi.to_frame()
    assert list(frame.columns[:2]) == ["treatment", "baseline"] and len(frame) == 3 * 2 * 5
    tex = multi.to_latex()
    assert tex.count(r"\\") == 1 + 30 and "Treatment & Baseline" in tex
    assert repr(multi).startswith("<MultiAnalysisResult 3 pairs (a vs base, b vs base, c vs base)")
    assert multi.result("b", "base") is multi.results[1]
    with pytest.raises(KeyError):
        multi.result("base", "a")


def test_bad_method_arguments(df):
    with pytest.raises(ValueError, match=r"`treatment` method 'z' is not in the records"):
        osustat.analyze(df, treatment=["a", "z"], baseline="base")
    with pytest.raises(ValueError, match="different methods"):
        osustat.analyze(df, treatment=["base"], baseline="base")
    with pytest.raises(TypeError, match="all_pairs"):
        osustat.analyze(df, treatment=["a"])
    with pytest.raises(ValueError, match="at least two methods"):
        osustat.analyze(df, treatment="a", all_pairs=True)
    with pytest.raises(ValueError, match="correction"):
        osustat.analyze(df, treatment="a", baseline="base", correction="tukey")


def test_saved_report_and_figures(multi, tmp_path):
    from osustat.cli.main import _register_renderers

    _register_renderers()
    out = multi.save(tmp_path / "out")
    report = (out / "report.md").read_text()
    assert report.startswith("# Cell-conditional analysis of 3 method pairs")
    assert "## Summary" in report and "| a − base | b − base | c − base |" in report
    for t in ("a", "b", "c"):
        assert f"## {t} vs base" in report
        assert (out / f"{t}-vs-base-forest-hit2-B256.png").exists()
        assert f"({t}-vs-base-budgets-hit2.png)" in report
    assert json.loads((out / "results.json").read_text())["schema"] == "osustat.analysis-multi/1"


def test_workers_map_gives_the_same_result(df: pd.DataFrame, multi: MultiAnalysisResult) -> None:
    # a map-like `workers` (a process pool's map, a Dask client's) runs the comparisons and
    # the MDE searches; the result is the one the built-in map gives
    res, calls = _through_remote(df, treatment=["a", "b", "c"], baseline="base", **FAST)
    # 3 pairs x 2 budgets, one batch; then the rows' MDE searches at their families' levels
    # (3 x 2 x (4 cells + aggregate)), which the calling process ran one by one before
    assert calls == [("_comparison", 6), ("search_mde", 30)]
    assert res.to_json() == multi.to_json()


def _through_remote(df: pd.DataFrame, **kwargs):
    """analyze with a map-like `workers` whose every task and result crosses a pickle round
    trip, as it would to another process, the tasks run in reverse order; returns the result
    and (function name, tasks) per call."""
    import pickle

    calls = []

    def remote(f, tasks):
        tasks = [pickle.loads(pickle.dumps(t)) for t in tasks]
        calls.append((f.__name__, len(tasks)))
        done = [pickle.loads(pickle.dumps(f(t))) for t in reversed(tasks)]
        return done[::-1]

    return osustat.analyze(df, workers=remote, **kwargs), calls


def test_simulated_mdes_through_workers_are_the_same() -> None:
    # recall-like values: the MDEs are simulated (their seed and data sets in the provenance)
    rng = np.random.default_rng(2)
    rows = [
        {
            "episode_id": f"e{q // 6}",
            "query_id": f"q{q % 6}",
            "method": m,
            "budget": 256,
            "metric": "recall",
            "value": rng.integers(0, 5) / 4,
            "cell": CELLS[q % 4],
        }
        for q in range(48)
        for m in ("t", "b")
    ]
    df = pd.DataFrame(rows)
    alone = osustat.analyze(df, treatment="t", baseline="b", **FAST)
    res, calls = _through_remote(df, treatment="t", baseline="b", **FAST)
    assert calls == [("_comparison", 1), ("search_mde", 5)]
    assert {r.mde_method for r in res.comparisons[0].rows} & {"empirical", "empirical-tilt"}
    assert res.to_json() == alone.to_json()


def test_a_multi_pair_result_saves_from_python_alone(tmp_path):
    """From Python, without the CLI's registration, a several-pair result finds its renderers
    through the installed entry points (it failed: "no renderer 'analysis-multi-figures'")."""
    import subprocess
    import sys

    code = (
        "import sys, pandas as pd, osustat\n"
        "df = pd.read_csv(sys.argv[1])\n"
        "df = pd.concat([df, df[df.method == 'osu-mem'].assign(method='copy')])\n"
        "res = osustat.analyze(df, treatment=['osu-mem', 'copy'], baseline='flat-vector',\n"
        "    metrics=['hit@2'], budgets=[256], n_resamples=99, bootstrap_resamples=50)\n"
        "print(res.save(sys.argv[2]))\n"
    )
    example = Path(__file__).resolve().parents[2] / "examples" / "records.csv"
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-c", code, str(example), str(out)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert (out / "report.md").read_text().startswith("# Cell-conditional analysis of 2 method")
    assert (out / "osu-mem-vs-flat-vector-forest-hit2-B256.png").exists()
