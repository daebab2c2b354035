"""The by-budget tables the real-data reports share: layout, missing cells, p* in words."""

import math

import pandas as pd
import pytest

from osustat.reports.budget_tables import breakeven_by_budget, effect_by_budget, means_by_budget


def _effects() -> pd.DataFrame:
    rows = []
    for b, shift in ((64, 0.0), (128, 0.1)):
        for cell, n in (("T+E+", 4), ("T-E-", 6), ("Aggregate", 10)):
            rows.append(
                {"budget": b, "cell": cell, "n": n, "effect": shift - 0.05, "p": 0.2, "cp": 0.5}
            )
    rows.append({"budget": 128, "cell": "T+E-", "n": 3, "effect": 0.4, "p": 0.0004, "cp": 0.03})
    return pd.DataFrame(rows)


def test_effect_by_budget_rows_columns_and_paper() -> None:
    lines = effect_by_budget(
        _effects(), cluster="conversation", cluster_p="cp", paper={"T+E+": (0.1, -0.2)}
    )
    assert lines[0] == (
        "| cell | B=64: Δ (p) [conversation-level p] | B=128: Δ (p) [conversation-level p] "
        "| paper |"
    )
    body = {line.split(" | ")[0][2:]: line for line in lines[2:]}
    assert list(body) == [
        "T+E+ (n=4)",
        "T+E- (n=3)",
        "T-E+ (n=0)",
        "T-E- (n=6)",
        "Aggregate (n=10)",
    ]
    # a cell present at one budget only: a dash at the other; its p below .001 in words
    assert body["T+E- (n=3)"] == "| T+E- (n=3) | — | +0.400 (< .001) [.030] | — |"
    assert body["T+E+ (n=4)"].endswith(
        "| -0.050 (.200) [.500] | +0.050 (.200) [.500] | +0.100, -0.200 |"
    )


def test_means_by_budget_missing_metric_prints_a_dash() -> None:
    m = pd.DataFrame(
        {
            "method": ["B", "B", "A"],
            "budget": [64, 64, 64],
            "metric": ["hit@2", "recall", "hit@2"],
            "query": [0.5, 0.25, 0.125],
            "conversation": [0.4, 0.2, 0.1],
        }
    )
    lines = means_by_budget(m, "conversation", paper={"B": ".300"}, paper_header="paper B=64")
    assert lines[0] == "| method | B=64 Hit@2 | B=64 Recall | paper B=64 |"
    assert lines[2:] == [
        "| B | 0.500 (0.400) | 0.250 (0.200) | .300 |",
        "| A | 0.125 (0.100) | — | — |",
    ]


def _be(**kw: object) -> dict[str, object]:
    row: dict[str, object] = {
        "budget": 256,
        "d_tpep": 0.2,
        "d_tmem": -0.1,
        "p_star": 1 / 3,
        "p_star_ci": (0.1, 0.6),
        "band_level": 0.9,
        "pi_tool": 0.4,
        "pi_tool_ci": (0.2, 0.7),
        "pi_any": 0.5,
        "never_negative": False,
        "oracle_gain": 0.05,
        "aggregate": 0.01,
    }
    return {**row, **kw}


@pytest.mark.parametrize(
    ("changes", "p_star"),
    [
        ({}, "0.333 [0.100, 0.600]"),
        (
            {"never_negative": True, "p_star": 0.0, "p_star_ci": None, "d_nf": 0.1},
            "0 (T+E+ Δ ≥ 0 and pooled non-T+E+ Δ +0.100 ≥ 0)",
        ),
        (
            {"never_negative": True, "p_star": 0.0, "p_star_ci": None},
            "0 (T+E+ Δ ≥ 0 and pooled non-T+E+ Δ ≥ 0)",
        ),
        ({"p_star": math.nan, "p_star_ci": None}, "none (OSU-Mem never ahead)"),
        ({"never_negative": None, "p_star": None, "p_star_ci": None}, "—"),
    ],
)
def test_breakeven_p_star_in_words(changes: dict[str, object], p_star: str) -> None:
    lines = breakeven_by_budget(pd.DataFrame([_be(**changes)]), level=0.95, cluster="task")
    assert lines[0].startswith("| budget | Δ T+E+ | Δ T−E− | p* [90% band] | π_T+* [90% band] |")
    assert lines[2].split(" | ")[3] == p_star


def test_breakeven_labels_and_oracle_interval() -> None:
    f = pd.DataFrame([_be(comparison="hit", oracle_ci=(0.01, 0.09))])
    lines = breakeven_by_budget(
        f, level=0.95, cluster="task", label=lambda r: r["comparison"].upper(), paper={256: "x"}
    )
    assert "| oracle gain over Flat [95% task-bootstrap CI] |" in lines[0]
    assert lines[0].endswith("| paper p*, π_T+* |")
    assert lines[2] == (
        "| HIT | 256 | +0.200 | -0.100 | 0.333 [0.100, 0.600] | 0.400 [0.200, 0.700] | 0.500 "
        "| +0.050 [+0.010, +0.090] | +0.010 | x |"
    )
