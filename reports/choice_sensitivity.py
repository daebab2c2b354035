"""The ``--sensitivity`` report of a benchmark's declared choices (analyses.sensitivity)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from osustat.formatting import fmt_signed

from ._style import md_table

__all__ = ["render_choice_sensitivity"]


def _num(x: Any) -> str:
    return fmt_signed(x, missing="-")


def _points_list(points: list[int]) -> str:
    """0, 1, 2, 5 -> '0-2, 5'."""
    runs: list[list[int]] = []
    for k in sorted(points):
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs) or "none"


def render_choice_sensitivity(result: Any) -> str:
    """Markdown: the grid's points and, per claim, its verdict, the points where it is
    reproduced (at every seed) and the range of its effect over points and seeds (strict
    standard). Per claim × point × seed (effect, CI, p, verdict) in ``effects.csv``."""
    grid, summary, effects = result.grid, result.summary, result.effects
    lines = [
        "## Sensitivity to the open choices",
        "",
        f"Grid: {grid.source}; {len(grid.points)} point(s), seeds "
        f"{', '.join(map(str, grid.seeds)) if grid.seeds else 'the run seed'}. Per point and "
        "seed the benchmark runs in full and its claims of "
        f"{', '.join(f'`{c}`' for c in result.claims) or 'its claims files'} are "
        "audited on the records (strict standard). A claim is **robust** when reproduced at "
        "every point, **choice-dependent** when at some, **not reproduced** when at none (a "
        "point counts when the claim is reproduced at every seed). A claim the paper printed as "
        "non-significant can never be reproduced by these rules and is counted apart: **null: "
        "consistent** (n.s. here too at every point) or **null: significant here at some "
        "point** (`reproduced at` then counts those points). Per claim × point × seed "
        "(effect, CI, p, verdict): `sensitivity/effects.csv`; per claim: "
        "`sensitivity/summary.csv`.",
        "",
    ]
    lines += md_table(
        ["point", "choices"], [[str(k), name] for k, (name, _) in enumerate(grid.points)]
    )
    lines.append("")
    if summary.empty:
        lines.append("No claim of this benchmark was checkable on the records.")
        return "\n".join(lines)
    counts = summary["verdict"].value_counts()
    lines.append("Summary: " + ", ".join(f"{v} {int(n)}" for v, n in counts.items()) + ".")
    lines.append("")
    rows = []
    for r in summary.itertuples(index=False):
        frame = effects[effects["claim"] == r.claim]
        held = frame.groupby("point")["verdict"].agg(lambda v: bool((v == "reproduced").all()))
        eff = pd.to_numeric(frame["effect"], errors="coerce").dropna()
        rows.append(
            [
                f"`{r.claim}`",
                f"**{r.verdict}**",
                f"{int(r.reproduced_at)} of {int(r.points)}",
                _points_list([int(k) for k, ok in held.items() if ok]),
                "-" if eff.empty else f"{_num(eff.min())} … {_num(eff.max())}",
            ]
        )
    lines += md_table(
        ["claim", "verdict", "reproduced at", "points", "effect, min … max (points × seeds)"],
        rows,
    )
    return "\n".join(lines)
