"""The `--sensitivity` report: per claim its verdict, where it holds, and its effect range."""

from __future__ import annotations

import pandas as pd

from osustat.analyses.sensitivity import ChoiceGrid, ChoiceSensitivity, _summarize
from osustat.reports.choice_sensitivity import render_choice_sensitivity


def test_per_claim_rows_name_the_points_where_it_holds() -> None:
    rows = []
    verdicts = {  # claim -> per point, per seed
        "a": [["reproduced", "reproduced"]] * 4,
        "b": [["reproduced", "reproduced"], ["reproduced", "underpowered"],
              ["reproduced", "reproduced"], ["reproduced", "reproduced"]],
        "c": [["contradicted", "underpowered"]] * 4,
    }  # fmt: skip
    for claim, per_point in verdicts.items():
        for point, seeds in enumerate(per_point):
            for seed, v in enumerate(seeds):
                rows.append({"claim": claim, "point": point, "seed": seed, "verdict": v,
                             "effect": 0.1 * point - 0.05 * seed})  # fmt: skip
    effects = pd.DataFrame(rows)
    grid = ChoiceGrid(tuple((f"p{k}", {}) for k in range(4)), (0, 1), "grid.toml")
    text = render_choice_sensitivity(ChoiceSensitivity(effects, _summarize(effects), grid))
    assert "| `a` | **robust** | 4 of 4 | 0-3 | -0.050 … +0.300 |" in text
    assert "| `b` | **choice-dependent** | 3 of 4 | 0, 2-3 |" in text
    assert "| `c` | **not reproduced** | 0 of 4 | none |" in text
    assert "| 3 | p3 |" in text


def test_claims_the_paper_printed_as_not_significant_are_counted_apart() -> None:
    # issue 35 item 12: 25 of tau-bench's 42 "never reproduced" were null claims, which the
    # audit can never call reproduced; they get their own outcome and their own count
    rows = []
    verdicts = {
        "n1": ("direction only", "contradicted"),  # n.s. here too
        "n2": ("significant (paper: n.s.)", "direction only"),  # significant at point 0
        "c": ("contradicted", "underpowered"),  # an ordinary claim, never reproduced
    }
    for claim, per_point in verdicts.items():
        for point, v in enumerate(per_point):
            rows.append({"claim": claim, "point": point, "seed": 0, "verdict": v,
                         "paper_ns": claim != "c", "effect": 0.1})  # fmt: skip
    s = _summarize(pd.DataFrame(rows)).set_index("claim")
    assert s.loc["n1", "verdict"] == "null: consistent (n.s. here too at every point)"
    assert s.loc["n2", "verdict"] == "null: significant here at some point (paper: n.s.)"
    assert s.loc["n2", "reproduced_at"] == 1
    assert s.loc["c", "verdict"] == "not reproduced"
