"""The ``--sensitivity`` report of a benchmark's declared choices (analyses.sensitivity)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from osustat.formatting import fmt_p, fmt_signed

from ._style import md_table

__all__ = ["render_choice_sensitivity"]


def _num(x: Any) -> str:
    return fmt_signed(x, missing="-")


def render_choice_sensitivity(result: Any) -> str:
    """Markdown: the grid, the per-claim summary, and per claim × point the effect, CI, p and
    verdict (strict standard; seeds as rows)."""
    grid, summary, effects = result.grid, result.summary, result.effects
    lines = [
        "## Sensitivity to the open choices",
        "",
        f"Grid: {grid.source}; {len(grid.points)} point(s), seeds "
        f"{', '.join(map(str, grid.seeds)) if grid.seeds else 'the run seed'}. Per point and "
        "seed the benchmark runs in full and its claims of `analyses/claims/paper.toml` are "
        "audited on the records (strict standard). A claim is **robust** when reproduced at "
        "every point, **choice-dependent** when at some, **not reproduced** when at none. Tables: "
        "`sensitivity/effects.csv`, `sensitivity/summary.csv`.",
        "",
        "Points: " + "; ".join(f"{k}: {name}" for k, (name, _) in enumerate(grid.points)),
        "",
    ]
    if summary.empty:
        lines.append("No claim of this benchmark was checkable on the records.")
        return "\n".join(lines)
    counts = summary["verdict"].value_counts()
    lines.append("Summary: " + ", ".join(f"{v} {int(n)}" for v, n in counts.items()) + ".")
    lines.append("")
    rows = []
    for r in effects.itertuples(index=False):
        rows.append(
            [
                r.claim,
                str(r.point),
                str(r.seed),
                "-" if pd.isna(r.n) else str(int(r.n)),
                _num(r.effect),
                f"[{_num(r.ci_low)}, {_num(r.ci_high)}]",
                fmt_p(r.p, missing="-"),
                r.verdict,
            ]
        )
    verdicts = dict(zip(summary["claim"], summary["verdict"], strict=True))
    lines += md_table(["claim", "point", "seed", "n", "effect", "CI", "p", "verdict"], rows)
    lines.append("")
    lines += [f"- `{c}`: **{v}**" for c, v in verdicts.items()]
    return "\n".join(lines)
