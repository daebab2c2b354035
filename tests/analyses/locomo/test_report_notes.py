"""The LoCoMo report explains, where it prints them, numbers a reader would question (issue 38)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from osustat.analyses.locomo.report import _means_section


def _means(methods: tuple[str, ...], budgets: tuple[int, ...]) -> pd.DataFrame:
    rows = [
        {"method": m, "budget": b, "metric": k, "query": 0.5, "conversation": 0.5}
        for m in methods
        for b in budgets
        for k in ("hit@2", "recall")
    ]
    return pd.DataFrame(rows)


def test_disjoint_hierarchy_equal_to_flat_vector_is_explained_where_it_holds() -> None:
    a = SimpleNamespace(means=_means(("Flat Vector", "Disjoint Hierarchy"), (256, 512, 1024)))
    text = "\n".join(_means_section(a, {"sessions_max": 32}))  # type: ignore[arg-type]
    assert "Disjoint Hierarchy equals Flat Vector at B = 1024, by construction" in text
    assert "at most 32 per conversation" in text  # 1024 // 30 = 34 >= 32; 512 // 30 = 17 < 32
    few = "\n".join(_means_section(a, {"sessions_max": 8}))  # type: ignore[arg-type]
    assert "at B = 256, 512, 1024" in few  # the floor K >= 8 keeps 8 sessions at any budget
    none = SimpleNamespace(means=_means(("Flat Vector", "OSU-Mem"), (1024,)))
    assert "Disjoint Hierarchy" not in "\n".join(_means_section(none, {"sessions_max": 32}))  # type: ignore[arg-type]


def test_a_sign_flip_between_units_is_explained_with_the_weights() -> None:
    from osustat.analyses.locomo.report import _unit_flips

    row = {
        "cell": "T-E+",
        "effect": -0.004,
        "conv_effect": 0.218,
        "conv_n": 9,
        "conv_weights": {
            "q_min": 1,
            "q_max": 40,
            "top_conversation": "conv-30",
            "top_share": 0.42,
            "top_effect": -0.2,
        },
    }
    text = "\n".join(_unit_flips([row]))
    assert "T-E+: Δ -0.004 per query but +0.218 per conversation" in text
    assert "(1–40 per conversation)" in text and "all 9 equally" in text
    assert "`conv-30` alone holds 42% of the queries, with Δ -0.200" in text
    same_sign = {**row, "effect": 0.1}
    assert _unit_flips([same_sign]) == []
    rounding = {**row, "effect": 0.015, "conv_effect": -1e-17}  # 0.000 per conversation
    assert _unit_flips([rounding]) == []
