"""The τ-bench analysis step on small records: every test through the core, each with its own
stream, the records validated once."""

import numpy as np
import pandas as pd
import pytest

import osustat.records
from osustat import validate_records
from osustat.analyses.tau_bench.analysis import DISJ, FLAT, OSU, analyze
from osustat.schema import ValidatedRecords
from tests.fakes import RecordingBar

CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")


def _records(benchmarks=("tau-bench",)) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for bench in benchmarks:
        for g in range(2):
            for i in range(32):
                q = f"g{g}-q{i}-src{i % 3}"
                cell, task = CELLS[i % 4], f"airline/{(i + g) % 10}"
                for method, lift in ((OSU, 0.15), (FLAT, 0.0), (DISJ, 0.05)):
                    for budget in (64, 256):
                        hit = float(rng.random() < 0.4 + (lift if cell == "T+E+" else 0))
                        rows += [
                            (bench, f"g{g}", q, method, budget, "hit@2", hit, cell, task),
                            (bench, f"g{g}", q, method, budget, "recall", rng.random(), cell, task),
                        ]
    cols = ["benchmark", "episode_id", "query_id", "method", "budget", "metric", "value"]
    return pd.DataFrame(rows, columns=[*cols, "cell", "task"])


KW = {"n_resamples": 199, "bootstrap_resamples": 199, "seed": 3}


@pytest.fixture(scope="module")
def run():
    """One analysis, counting the validations of plain (not yet validated) tables on the way."""
    calls = []
    real = osustat.records.validate_records

    def counting(df):
        if not isinstance(df, ValidatedRecords):  # a validated table passes through for free
            calls.append(len(df))
        return real(df)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(osustat.records, "validate_records", counting)
        result = analyze(validate_records(_records()), {}, None, **KW)
    return result, calls


@pytest.fixture(scope="module")
def result(run):
    return run[0]


def test_tables_and_levels(result):
    rows = result.crosstab["tau-bench"]["osu_flat_hit"]["rows"]
    assert [r["cell"] for r in rows] == [*CELLS, "Aggregate"]
    agg = rows[-1]
    assert agg["n"] == 64 and agg["clusters"] == 10  # clusters are tasks, not groups
    lo, hi = agg["test_ci"]
    assert (lo <= 0 <= hi) == (agg["p"] > 0.05)  # the inverted interval agrees with its p
    assert set(result.breakeven["band_level"].dropna()) <= {0.9}
    assert result.level == 0.95 and len(result.table5) == 2 * 5


def test_records_validated_once(run):
    assert run[1] == []  # paired() reuses the validated table: no per-test re-validation


def test_level_sets_every_interval(result):
    rec = validate_records(_records())
    wide, narrow = result, analyze(rec, {}, None, level=0.5, **KW)
    w = wide.crosstab["tau-bench"]["osu_flat_recall"]["rows"][-1]["ci"]
    n = narrow.crosstab["tau-bench"]["osu_flat_recall"]["rows"][-1]["ci"]
    assert w[0] < n[0] < n[1] < w[1]
    ow, on = wide.breakeven["oracle_ci"].iloc[-1], narrow.breakeven["oracle_ci"].iloc[-1]
    assert ow[0] <= on[0] <= on[1] <= ow[1] and narrow.level == 0.5


def test_adding_tests_leaves_the_others(result):
    """More benchmarks mean more tests; Table 4's p-values and intervals do not move."""
    more = analyze(
        validate_records(_records(("tau-bench", "tau-bench-weak-query"))), {}, None, **KW
    )
    for key in ("osu_flat_hit", "osu_flat_recall", "overlap_disjoint_hit"):
        a, b = result.crosstab["tau-bench"][key], more.crosstab["tau-bench"][key]
        assert [(r["p"], r["ci"]) for r in a["rows"]] == [(r["p"], r["ci"]) for r in b["rows"]]
        assert a["task"] == b["task"]
    assert set(more.variants["benchmark"]) == {"tau-bench", "tau-bench-weak-query"}


@pytest.mark.parametrize(
    ("benchmarks", "expected"),
    [
        # 3 cross-tab comparisons, 2 budgets x (Table 5 hit + recall), the variants' test, the
        # strict reading
        (("tau-bench",), 3 + 2 * 2 + 1 + 1),
        # + the other reading: 3 more cross-tab comparisons, 1 more per budget, 1 more variant
        (("tau-bench", "tau-bench-query-per-norm"), 3 * 2 + 2 * 3 + 2 + 1),
    ],
)
def test_progress_bar_counts_every_test(monkeypatch, benchmarks, expected):
    """The analysis' bar (issue 38 item 5) is announced with the number of comparisons and
    tests it runs and ends exactly there; it is off without `progress`."""
    import osustat.analyses.runner as runner

    RecordingBar.made = []
    monkeypatch.setattr(runner, "progress_bar", RecordingBar)
    rec = validate_records(_records(benchmarks))
    analyze(rec, {}, None, progress=True, **KW)
    analyze(rec, {}, None, **KW)
    on, off = RecordingBar.made
    assert (on.desc, on.progress, off.progress) == ("tau-bench analysis", True, False)
    assert on.total == expected and on.n == on.total
