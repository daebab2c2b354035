"""The ``--sensitivity`` report of a benchmark's declared choices (analyses.sensitivity)."""

from __future__ import annotations

import math
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


def _power_words(r: Any) -> str:
    """A null claim's power beside its outcome: its MDE against the paper's effect."""
    mde = getattr(r, "mde", None)
    target = getattr(r, "paper_magnitude", None)
    if mde is None or pd.isna(mde):
        return "no MDE (not a difference, or not estimable as one number)"
    if not math.isfinite(mde):
        return "underpowered at any effect"
    said = f"MDE {mde:.3f}"
    if target is None or pd.isna(target):
        return f"{said}; the paper printed no effect"
    k, n = int(r.powered_at), int(r.points)
    can = "could see it" if k == n else "could not see it" if k == 0 else "could see it at some"
    can += " points" if 0 < k < n else ""
    return f"{said} vs the paper's |effect| {target:.3f}: {can} ({k} of {n} points)"


def _null_power_summary(summary: pd.DataFrame) -> str:
    """How many null claims had the power to see the paper's effect at every point."""
    null = summary[summary["verdict"].str.startswith("null:")]
    if null.empty or "powered_at" not in null:
        return ""
    consistent = null[null["verdict"].str.startswith("null: consistent")]
    powered = pd.to_numeric(consistent["powered_at"], errors="coerce")
    every = int((powered == consistent["points"]).sum())
    unknown = int(powered.isna().sum())
    return (
        f" Power of the {len(consistent)} consistent null claims: {every} could see the paper's "
        f"effect at every point (MDE ≤ |paper's effect|), {len(consistent) - every - unknown} "
        f"could not at some or every point, {unknown} without an MDE or a printed effect — a "
        "consistent n.s. from a test that could not see the paper's effect confirms little."
    )


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
        "point** (`reproduced at` then counts those points), with the power its test had: "
        "the strict test's MDE (power .8, median over points and seeds) against the paper's "
        "|effect|. Per claim × point × seed (effect, CI, p, verdict, MDE): "
        "`sensitivity/effects.csv`; per claim: `sensitivity/summary.csv`.",
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
    lines.append(
        "Summary: "
        + ", ".join(f"{v} {int(n)}" for v, n in counts.items())
        + "."
        + _null_power_summary(summary)
    )
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
                _power_words(r) if str(r.verdict).startswith("null:") else "-",
            ]
        )
    lines += md_table(
        [
            "claim",
            "verdict",
            "reproduced at",
            "points",
            "effect, min … max (points × seeds)",
            "power (null claims)",
        ],
        rows,
    )
    return "\n".join(lines)
