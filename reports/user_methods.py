"""The report section for user retrievers (``--retriever``): their means beside the paper's.

Descriptive only: the mean of each metric per benchmark, method and budget, for the user's
retrievers and a few reference methods of the same run. The cell-conditional paired test of a
user retriever against a paper method is ``osustat analyze`` on the run's ``records.csv``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import pandas as pd

__all__ = ["render_user_methods"]


def render_user_methods(
    records: pd.DataFrame,
    names: Sequence[str],
    *,
    references: Sequence[str],
    metrics: Sequence[str] = ("hit@2", "recall"),
) -> str:
    """Markdown section comparing user retrievers `names` with `references` (means)."""
    if not names:
        return ""
    shown = [*names, *(r for r in references if r not in names)]
    sub = records[records["method"].isin(shown) & records["metric"].isin(metrics)]
    lines = [
        "## Your retrievers",
        "",
        "User retrievers run beside the paper's methods on the same episodes, queries and "
        f"budgets: {', '.join(f'`{n}`' for n in names)}. Means per query (n = queries); the "
        "cell-conditional paired test of each benchmark is the command under its table.",
    ]
    baseline = references[0] if references else names[0]
    rank = {m: k for k, m in enumerate(shown)}
    for bench, frame in sub.groupby("benchmark", sort=True):
        table = frame.groupby(["method", "budget", "metric"])["value"].agg(["mean", "size"])
        present = [m for m in metrics if m in set(frame["metric"])]
        lines += ["", f"**{bench}**", ""]
        lines.append("| method | budget | " + " | ".join(present) + " | n |")
        lines.append("|---|---|" + "---|" * len(present) + "---|")
        keys = sorted({(m, b) for m, b, _ in table.index}, key=lambda k: (rank[k[0]], k[1]))
        for method, budget in keys:
            cells = [
                f"{table.loc[(method, budget, m), 'mean']:.3f}"
                if (method, budget, m) in table.index
                else "-"
                for m in present
            ]
            n = int(table.loc[(method, budget, present[0]), "size"])
            bold = f"**{method}**" if method in names else method
            lines.append(f"| {bold} | {budget} | " + " | ".join(cells) + f" | {n} |")
        args = ["analyze", "records.csv", "--treatment", names[0], "--baseline", baseline]
        command = shlex.join(["osustat", *args, "--benchmark", str(bench)])
        lines += ["", f"Paired test: `{command}`"]
    return "\n".join(lines)
