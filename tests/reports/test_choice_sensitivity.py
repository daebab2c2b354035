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


def test_null_claims_carry_the_power_to_see_the_papers_effect() -> None:
    # issue 35 item 12: beside "null: consistent", whether the test could see the paper's
    # effect at all (MDE at power .8 against the paper's |effect|)
    rows = []
    spec = {  # claim -> (per point MDE, paper's |effect|, verdict)
        "weak": ((0.12, 0.14), 0.05, "direction only"),
        "strong": ((0.03, 0.04), 0.05, "contradicted"),
        "mixed": ((0.04, 0.09), 0.05, "direction only"),
        "inter": ((None, None), None, "not significant"),
    }
    for claim, (mdes, magnitude, verdict) in spec.items():
        for point, mde in enumerate(mdes):
            rows.append({"claim": claim, "point": point, "seed": 0, "verdict": verdict,
                         "paper_ns": True, "effect": 0.01, "mde": mde,
                         "paper_magnitude": magnitude})  # fmt: skip
    effects = pd.DataFrame(rows)
    s = _summarize(effects).set_index("claim")
    assert s.loc["weak", "mde"] == 0.13 and s.loc["weak", "powered_at"] == 0
    assert s.loc["strong", "powered_at"] == 2 and s.loc["mixed", "powered_at"] == 1
    assert pd.isna(s.loc["inter", "mde"])
    grid = ChoiceGrid(tuple((f"p{k}", {}) for k in range(2)), None, "grid.toml")
    text = render_choice_sensitivity(ChoiceSensitivity(effects, _summarize(effects), grid))
    assert "MDE 0.130 vs the paper's |effect| 0.050: could not see it (0 of 2 points)" in text
    assert "MDE 0.035 vs the paper's |effect| 0.050: could see it (2 of 2 points)" in text
    assert "could see at some points it (1 of 2 points)" not in text
    assert "could see it at some points (1 of 2 points)" in text
    assert "no MDE (not a difference, or not estimable as one number)" in text
    assert (
        "Power of the 4 consistent null claims: 1 could see the paper's effect at every point "
        "(MDE ≤ |paper's effect|), 2 could not at some or every point, 1 without an MDE"
    ) in text


def test_mde_values_for_the_effects_table() -> None:
    from osustat.analyses.sensitivity import _mde_value
    from osustat.power import PowerValue

    assert _mde_value(None) is None
    assert _mde_value(
        PowerValue(float("inf"), method="simulation", n=6, alpha=0.05, alternative="two-sided")
    ) == float("inf")
    assert (
        _mde_value(PowerValue(0.2, method="normal", n=60, alpha=0.05, alternative="two-sided"))
        == 0.2
    )
    # a range: None (not one number), but infinite at both ends (rule Z) it is underpowered
    ranged = PowerValue(float("inf"), method="sd-range", n=6, alpha=0.05, alternative="two-sided")
    ranged.mde_range = (0.3, float("inf"))
    assert _mde_value(ranged) is None
    ranged.mde_range = (float("inf"), float("inf"))
    assert _mde_value(ranged) == float("inf")
