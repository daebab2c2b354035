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

    def test_contributions_sum_to_aggregate(self):
        data = records(["T+E+"] * 8 + ["T-E-"] * 12)
        res = cell_conditional(data, n_resamples=99, bootstrap_resamples=50, rng=0)
        assert sum(r.contribution for r in res.cells) == pytest.approx(res.aggregate.effect)

    def test_verdicts(self):
        assert verdict(0.01, -0.2, 0.1) == "hurts"
        assert verdict(0.2, 0.3, 0.1) == "no evidence either way at this n"
