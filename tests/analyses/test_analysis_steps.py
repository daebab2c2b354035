"""Each benchmark's analysis step (protocol ``analyze``) on small records, checked against the
numbers recomputed directly from those records."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from osustat.analyses.protocol import Backend, RunSpec
from osustat.retrieval.encoder import HashingBagOfWordsEncoder
from tests.analyses.test_toolbench import _write_data
from tests.analyses.test_user_retrievers import _tau_files


def _diff(records: pd.DataFrame, a: str, b: str, **where: object) -> pd.Series:
    sub = records
    for k, v in where.items():
        sub = sub[sub[k] == v]
    wide = sub.pivot_table(index="query_id", columns="method", values="value")
    return wide[a] - wide[b]


def test_synthetic_analysis_step():
    from osustat.analyses.synthetic.benchmark import BENCHMARK

    spec = RunSpec(
        episodes=3, n_resamples=99, choices=BENCHMARK.choices.defaults(),
        backend=Backend(progress=False),
    )  # fmt: skip
    run = BENCHMARK.run(spec)
    analysis = BENCHMARK.analyze(run, spec)
    rec = run.records
    row = analysis.table9[
        (analysis.table9["method"] == "OSU-Mem") & (analysis.table9["budget"] == 256)
    ]
    mine = rec[(rec["method"] == "OSU-Mem") & (rec["budget"] == 256) & (rec["metric"] == "recall")]
    assert float(row["recall"].iloc[0]) == pytest.approx(mine["value"].mean())
    assert analysis.n_resamples == 99


def test_tau_bench_analysis_step(tmp_path: Path):
    from osustat.analyses.tau_bench.benchmark import BENCHMARK

    spec = RunSpec(
        data=tuple(Path(f) for f in _tau_files(tmp_path / "d")), n_resamples=99,
        choices=BENCHMARK.choices.defaults(), backend=Backend(progress=False),
        options={"selector": None, "no_variants": True, "budgets": (256,)},
        encoder=HashingBagOfWordsEncoder(64),
    )  # fmt: skip
    run = BENCHMARK.run(spec)
    analysis = BENCHMARK.analyze(run, spec)["analysis"]
    rec = run.records[
        (run.records["benchmark"] == "tau-bench") & (run.records["metric"] == "hit@2")
    ]
    cells = rec.drop_duplicates("query_id").set_index("query_id")["cell"]
    d = _diff(rec, "OSU-Mem", "Flat Vector", budget=256)
    for row in analysis.table5.itertuples(index=False):
        part = d if row.cell == "Aggregate" else d[cells.reindex(d.index) == row.cell]
        assert row.n == len(part)
        assert row.effect == pytest.approx(part.mean())


def test_toolbench_analysis_step(tmp_path: Path):
    from osustat.analyses.toolbench.benchmark import BENCHMARK
    from osustat.analyses.toolbench.run import coverage_name

    spec = RunSpec(
        data=(_write_data(tmp_path / "tb"),), seeds=(1,), episodes=3, n_resamples=99,
        choices=BENCHMARK.choices.defaults(), backend=Backend(progress=False),
        encoder=HashingBagOfWordsEncoder(64),
    )  # fmt: skip
    run = BENCHMARK.run(spec)
    analysis = BENCHMARK.analyze(run, spec)
    rec = run.records[run.records["benchmark"] == "toolbench"]
    for row in analysis.combined[analysis.combined["benchmark"] == "toolbench"].itertuples():
        over = rec[
            (rec["method"] == coverage_name("overlap", row.beta)) & (rec["metric"] == row.metric)
        ]
        dis = rec[
            (rec["method"] == coverage_name("disjoint", row.beta)) & (rec["metric"] == row.metric)
        ]
        o = over[over["budget"] == row.budget].set_index("query_id")["value"]
        s = dis[dis["budget"] == row.budget].set_index("query_id")["value"]
        assert row.gap == pytest.approx((o - s).mean())
        assert row.n_episodes == len(o) == 3
