"""§6.6 with a real model: the failure-mode table and the position-bias figure of a run.

Takes the frames of ``analyses.evidence_selection.failures`` (``failure_modes``,
``position_counts``) per selector variant; imports nothing from ``analyses``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["POSITION_FIGURE", "failure_table", "local_section", "position_figure"]

POSITION_FIGURE = "llm_positions.png"


def _num(x: float, digits: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def failure_table(w: Callable[[str], None], variants: Sequence[dict[str, Any]]) -> None:
    """One row per (selector variant, retrieval method): every call counted once."""
    w(
        "| selector | method | calls | parse failures | listed | invented (share) | "
        "mean listed position (uniform) | at position 1 (uniform) |"
    )
    w("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for v in variants:
        frame: pd.DataFrame = v["failures"]
        for _, r in frame.iterrows():
            listed = "— (empty context)" if r["listed"] == 0 else f"{r['listed']}"
            w(
                f"| {v['label']} | {r['method']} | {r['calls']} | {r['parse_failures']} | "
                f"{listed} | {r['invented']} ({_num(r['invented_share'])}) | "
                f"{_num(r['mean_position'])} ({_num(r['uniform_mean_position'])}) | "
                f"{_num(r['first_share'])} ({_num(r['uniform_first_share'])}) |"
            )


def local_section(w: Callable[[str], None], llm: dict[str, Any]) -> None:
    """The words and the failure-mode table of a ``--selector local`` run."""
    sub = llm["subset"]
    w(
        f"Selector: **{llm['name']}**, served by llama.cpp on 127.0.0.1 for this run. A 135M "
        "model is **not the paper's GPT-4o-mini**: this section shows the check's mechanics and "
        "failure modes on real model output, not a reproduction of Table 7."
    )
    w("")
    w(
        f"Declared subset: {sub['queries']} of {sub['of']} queries (round-robin over the cells, "
        "each cell's queries in data order). Two selectors read the same retrieved contexts: "
        "the paper's free-text prompt (events scored as written) and a constrained id list "
        "(a JSON-schema `response_format` whose items are an enum of the context's step ids; "
        "the listed steps are scored verbatim; with no context nothing is listed and no "
        f"request is made). Seeds {tuple(llm['seeds'])}: at temperature 0 with prompt caching "
        "off the greedy decoder repeats itself exactly (`osustat llm check`), so further seeds "
        "would be duplicates."
    )
    w("")
    w(
        "Failure modes, every call counted once (a parse failure is scored as nothing listed). "
        "Invented: for free text, an event whose largest cosine to any retrieved step is at or "
        "below .5; for ids, an id that is not a position of the context. Listed position: the "
        "id, or for free text the best-matching step; in brackets what a uniform pick from "
        f"each context would give. Figure: `{POSITION_FIGURE}`."
    )
    w("")
    failure_table(w, llm["variants"])


def position_figure(variants: Sequence[dict[str, Any]], path: Path) -> None:
    """Bars of the share of listed items at each context position, one panel per variant,
    one bar group per retrieval method (position bias: a uniform pick would be flat)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(variants), figsize=(5.5 * len(variants), 3.6), squeeze=False)
    for ax, v in zip(axes[0], variants, strict=True):
        counts: pd.DataFrame = v["positions"]
        methods = list(dict.fromkeys(counts["method"]))
        width = 0.8 / max(len(methods), 1)
        for j, m in enumerate(methods):
            sub = counts[counts["method"] == m]
            ax.bar(sub["position"] + (j - (len(methods) - 1) / 2) * width, sub["share"],
                   width=width, label=f"{m} (n={int(sub['count'].sum())})")  # fmt: skip
        ax.set_title(v["label"], fontsize=9)
        ax.set_xlabel("position of the listed step in the retrieved context")
        ax.set_ylabel("share of listed items")
        if methods:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
