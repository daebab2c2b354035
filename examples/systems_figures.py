"""The figures of docs/systems.md: Zep - mem0 by stratum at the conversation unit.

    python examples/systems_figures.py RECORDS ANALYSIS_DIR OUT_DIR [--treatment T --baseline B]

The pair is the analysis's own (``results.json`` names it); ``--treatment/--baseline`` pick one
pair of a several-pair analysis (``--all-pairs``).

RECORDS is the file ``osustat import`` wrote; ANALYSIS_DIR the ``--out`` folder of ``osustat
analyze RECORDS --unit episode --metric judge,judge.cat1,...`` (its ``results.json`` gives every
Δ, CI, p and n: nothing is recomputed here). Writes ``systems_forest.png`` (Δ with its CI per
stratum, n conversations and p beside) and ``systems_conversations.png`` (each conversation's
mean difference per stratum, from the records: the units the test flips).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd


def _rows(results: Path, treatment: str | None, baseline: str | None) -> tuple[str, str, list]:
    """(treatment, baseline, aggregate rows per metric) of the analysis in `results`: its own
    pair, or of a several-pair analysis the pair named (a pair given that the analysis does
    not hold is refused: its numbers would be drawn under the wrong title)."""
    data = json.loads(results.read_text(encoding="utf-8"))
    if data["unit"] != "episode":
        raise SystemExit(f"{results}: an analysis at --unit episode is needed; got {data['unit']}.")
    pairs = data.get("results_by_pair", [data])
    held = [(r["treatment"], r["baseline"]) for r in pairs]
    if treatment is None and baseline is None and len(held) == 1:
        chosen = pairs[0]
    else:
        match = [r for r in pairs if (r["treatment"], r["baseline"]) == (treatment, baseline)]
        if not match:
            flipped = (baseline, treatment) in held
            raise SystemExit(
                f"{results}: no analysis of {treatment} vs {baseline}; it holds "
                + ", ".join(f"{t} vs {b}" for t, b in held)
                + (
                    " (the pair is there the other way round: swap --treatment and --baseline"
                    ", or re-run analyze in this orientation)"
                    if flipped
                    else ""
                )
                + "; name one with --treatment and --baseline."
            )
        chosen = match[0]
    out = []
    for comp in chosen["comparisons"]:
        row = next(r for r in comp["rows"] if r["cell"] == "Aggregate")
        out.append({"metric": comp["metric"], **row})
    return chosen["treatment"], chosen["baseline"], out


def forest(rows: list[dict], path: Path, title: str) -> None:
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.2))
    for y, r in enumerate(reversed(rows)):
        lo, hi = r["ci"]
        ax.plot([lo, hi], [y, y], color="black", lw=1.5)
        ax.plot(r["effect"], y, "o", color="black")
        ax.text(
            1.02,
            y,
            f"n {r['n']}, raw p {r['pvalue']:.3f}",
            transform=ax.get_yaxis_transform(),
            va="center",
            fontsize=8,
        )
    ax.set_yticks(range(len(rows)), [r["metric"] for r in reversed(rows)])
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("Δ judge accuracy (conversation means), 95% bootstrap CI")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def conversations(records: pd.DataFrame, metrics: list[str], t: str, b: str, path: Path) -> None:
    sub = records[records["metric"].isin(metrics) & records["method"].isin([t, b])]
    means = sub.groupby(["metric", "episode_id", "method"])["value"].mean().unstack("method")
    diff = (means[t] - means[b]).dropna().reset_index(name="d")
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(metrics) + 1.2))
    for y, m in enumerate(reversed(metrics)):
        d = diff[diff["metric"] == m]["d"].round(12)
        # conversations with the same difference (ties at 0) stacked apart, not drawn as one
        rank = d.groupby(d).cumcount().to_numpy()
        count = d.map(d.value_counts()).to_numpy()
        ax.scatter(d, y + 0.12 * (rank - (count - 1) / 2), s=14, alpha=0.7, color="black")
    ax.set_yticks(range(len(metrics)), list(reversed(metrics)))
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"{t} − {b} per conversation (mean over its questions of the stratum)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records")
    p.add_argument("analysis")
    p.add_argument("out")
    p.add_argument("--treatment", help="of a several-pair analysis: the pair's treatment")
    p.add_argument("--baseline", help="of a several-pair analysis: the pair's baseline")
    a = p.parse_args()
    out = Path(a.out)
    t, b, rows = _rows(Path(a.analysis) / "results.json", a.treatment, a.baseline)
    out.mkdir(parents=True, exist_ok=True)
    title = f"{t} − {b}, conversation unit"
    forest(rows, out / "systems_forest.png", title)
    records = (
        pd.read_parquet(a.records) if a.records.endswith(".parquet") else pd.read_csv(a.records)
    )
    conversations(
        records,
        [r["metric"] for r in rows],
        t,
        b,
        out / "systems_conversations.png",
    )
    print(f"wrote {out / 'systems_forest.png'} and {out / 'systems_conversations.png'}")


if __name__ == "__main__":
    main()
