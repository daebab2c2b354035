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
