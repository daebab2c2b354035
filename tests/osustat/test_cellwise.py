import pandas as pd
import pytest

from osustat import Cell, paired
from osustat.cellwise import cell_conditional, verdict


def records(cells):
    rows = []
    for i, c in enumerate(cells):
        for m, v in (("a", i % 2), ("b", 0)):
            rows.append(
                {
                    "episode_id": f"e{i % 5}",
                    "query_id": f"q{i}",
                    "method": m,
                    "budget": 1,
                    "metric": "hit@2",
                    "value": v,
                    "cell": c,
                }
            )
    return paired(pd.DataFrame(rows), "a", "b", metric="hit@2", budget=1)


class TestCellConditional:
    def test_single_query_cell_is_listed_not_tested(self):
        data = records(["T+E+"] * 8 + ["T-E-"] * 11 + ["T+E-"])
        res = cell_conditional(data, n_resamples=99, bootstrap_resamples=50, rng=0)
        assert res.excluded_cells == {Cell.T_ONLY: 1}
        assert [r.cell for r in res.cells] == [Cell.TE, Cell.NEITHER]
        assert res.interaction is not None and sum(res.interaction.cell_n.values()) == 19
        assert res.aggregate.n == 20  # still in the aggregate
        # the oracle routes every cell, the one-query cell too: its aggregate is the table's
        # (a statistician read "aggregate Δ -0.214" under a table whose aggregate was -0.133)
        assert res.oracle.aggregate == pytest.approx(res.aggregate.effect)
        assert Cell.T_ONLY in res.oracle.routed_cells  # its one query gains 1 (i = 19 is odd)

    def test_a_one_query_t_plus_e_plus_gets_no_break_even(self, tmp_path):
        # a red team (stop 61): analyze ended with "`effects` has no value for cells
        # ['T+E+'], which have a fraction" when T+E+ held one query
        data = records(["T+E+"] + ["T-E+"] * 2 + ["T+E-"] * 5 + ["T-E-"] * 6)
        res = cell_conditional(data, n_resamples=99, bootstrap_resamples=50, rng=0)
        assert res.excluded_cells == {Cell.TE: 1} and res.break_even is None
        assert [r.cell for r in res.cells] == [Cell.T_ONLY, Cell.E_ONLY, Cell.NEITHER]
        assert res.interaction is not None and res.oracle is not None
        from osustat.cli.main import main

        rows = pd.DataFrame(
            [
                {"episode_id": f"e{i % 5}", "query_id": f"q{i}", "method": m, "budget": 1,
                 "metric": "hit@2", "value": v, "cell": c}
                for i, c in enumerate(["T+E+"] + ["T-E+"] * 2 + ["T+E-"] * 5 + ["T-E-"] * 6)
                for m, v in (("a", i % 2), ("b", 0))
            ]
        )  # fmt: skip
        rows.to_csv(tmp_path / "r.csv", index=False)
        argv = ["analyze", str(tmp_path / "r.csv"), "--treatment", "a", "--baseline", "b"]
        assert main([*argv, "--resamples", "99", "--out", str(tmp_path / "rep")]) == 0
        assert "T+E+" in (tmp_path / "rep" / "report.md").read_text()

    def test_contributions_sum_to_aggregate(self):
        data = records(["T+E+"] * 8 + ["T-E-"] * 12)
        res = cell_conditional(data, n_resamples=99, bootstrap_resamples=50, rng=0)
        assert sum(r.contribution for r in res.cells) == pytest.approx(res.aggregate.effect)

    def test_verdicts(self):
        assert verdict(0.01, -0.2, 0.1) == "hurts"
        assert verdict(0.2, 0.3, 0.1) == "no evidence either way at this n"

    def test_rows_print_the_interval_expanded_for_their_clusters(self):
        # each row's interval is bootstrap_ci's expanded BCa over the row's episodes (k = the
        # episodes the row spans, not its queries): wider than the textbook interval
        import numpy as np

        from osustat import bootstrap_ci

        hits = np.random.default_rng(1).random(20) < 0.6  # episodes of unequal means
        frame = pd.DataFrame(
            {
                "episode_id": [f"e{i % 5}" for i in range(20)] * 2,
                "query_id": [f"q{i}" for i in range(20)] * 2,
                "method": ["a"] * 20 + ["b"] * 20,
                "budget": 1,
                "metric": "hit@2",
                "value": np.r_[hits, np.zeros(20)],
                "cell": (["T+E+"] * 10 + ["T-E-"] * 10) * 2,
            }
        )
        data = paired(frame, "a", "b", metric="hit@2", budget=1)
        res = cell_conditional(data, n_resamples=99, bootstrap_resamples=400, rng=0)
        row = res.aggregate
        assert row.ci.method == "expanded-bca" and row.ci.n_clusters == 5
        plain = bootstrap_ci(
            data.differences, clusters=data.episode_ids, n_resamples=400, rng=0, expand=False
        )
        assert row.ci.high - row.ci.low > plain.high - plain.low > 0
        # expanded for k = 5 clusters, not for the 20 queries
        from osustat.bootstrap import expanded_alpha

        at_k = bootstrap_ci(
            data.differences, clusters=data.episode_ids, n_resamples=400, rng=0, expand=False,
            level=1 - expanded_alpha(0.05, 5),
        )  # fmt: skip
        assert (row.ci.low, row.ci.high) == pytest.approx((at_k.low, at_k.high), rel=1e-12)
