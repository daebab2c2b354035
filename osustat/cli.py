"""The ``osustat`` command: the composition root (imports reports lazily)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

__all__ = ["main", "read_records"]


def read_records(path: Path) -> pd.DataFrame:
    """Read records from CSV, JSON Lines (.jsonl/.ndjson) or Parquet, chosen by extension."""
    if not path.exists():
        raise FileNotFoundError(f"records file {str(path)!r} does not exist.")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return pd.read_csv(path)
    if suffix in (".jsonl", ".ndjson"):
        return pd.read_json(path, lines=True)
    if suffix in (".parquet", ".pq"):
        return pd.read_parquet(path)
    raise ValueError(
        f"cannot read records file {str(path)!r}: unknown extension {suffix!r}; use .csv, "
        ".jsonl/.ndjson or .parquet."
    )


def _split(values: str) -> list[str]:
    return [v.strip() for v in values.split(",") if v.strip()]


def _analyze(args: argparse.Namespace) -> int:
    import numpy as np

    from osustat import adjust_pvalues, paired, validate_records
    from osustat.cellwise import cell_conditional
    from reports.cellwise import forest_plot, render_markdown, to_json

    path = Path(args.records)
    records = validate_records(read_records(path))
    metrics = _split(args.metric)
    budgets = (
        [int(b) for b in _split(args.budget)]
        if args.budget
        else sorted(records["budget"].unique().tolist())
    )
    seeds = np.random.SeedSequence(args.seed).spawn(len(metrics) * len(budgets))
    results = []
    for k, (metric, budget) in enumerate((m, b) for m in metrics for b in budgets):
        data = paired(
            records,
            args.treatment,
            args.baseline,
            metric=metric,
            budget=budget,
            unit=args.unit,
            benchmark=args.benchmark,
        )
        res = cell_conditional(
            data, n_resamples=args.resamples, rng=np.random.default_rng(seeds[k])
        )
        results.append((f"{metric} at B = {budget}", res))

    # One family: every per-cell test of this run (the aggregates are reported raw).
    family = [row for _, res in results for row in res.cells]
    adjusted: dict[int, float] = {}
    if family:
        adj = adjust_pvalues(
            [r.test.pvalue for r in family], method=args.correction, alpha=args.alpha
        )
        adjusted = {id(r): float(p) for r, p in zip(family, adj.pvalues_adjusted, strict=True)}
    for _, res in results:
        adjusted.setdefault(id(res.aggregate), res.aggregate.test.pvalue)

    n_seeds = results[0][1].paired.n_seeds
    preamble = [
        f"- Records: `{path}` ({len(records):,} rows; nothing excluded).",
        f"- Treatment `{args.treatment}` vs baseline `{args.baseline}`; unit of analysis: "
        f"{args.unit}; seeds averaged per unit: {n_seeds}.",
        f"- Correction family: the {len(family)} per-cell tests of this report "
        f"({args.correction}); aggregate rows show the raw p in both columns.",
        f"- Master seed {args.seed}: the same seed gives the same report.",
    ]
    out = Path(args.out) if args.out else None
    figures: dict[str, str] = {}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for heading, res in results:
            if res.cells:
                name = f"forest-{res.paired.metric.replace('@', '')}-B{res.paired.budget}.png"
                forest_plot(res, out / name, title=f"{args.treatment} − {args.baseline}, {heading}")
                figures[heading] = name
    text = render_markdown(
        results,
        adjusted,
        title=f"Cell-conditional analysis: {args.treatment} vs {args.baseline}",
        preamble=preamble,
        correction=args.correction,
        alpha=args.alpha,
        figures=figures,
    )
    if out is not None:
        (out / "report.md").write_text(text + "\n", encoding="utf-8")
        if args.json:
            (out / "results.json").write_text(
                json.dumps(to_json(results, adjusted), indent=2, default=float) + "\n",
                encoding="utf-8",
            )
        print(f"wrote {out / 'report.md'}", file=sys.stderr)
    if args.json and out is None:
        print(json.dumps(to_json(results, adjusted), indent=2, default=float))
    else:
        print(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="osustat",
        description="Cell-conditional, statistics-first evaluation of agent-memory retrieval.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    an = sub.add_parser("analyze", help="cell-conditional report of treatment vs baseline")
    an.add_argument("records", help="records file (.csv, .jsonl or .parquet; long schema)")
    an.add_argument("--treatment", required=True)
    an.add_argument("--baseline", required=True)
    an.add_argument(
        "--metric", default="hit@2,recall", help="comma-separated (default hit@2,recall)"
    )
    an.add_argument("--budget", default=None, help="comma-separated budgets (default: all)")
    an.add_argument("--benchmark", default=None, help="needed when records hold several")
    an.add_argument("--unit", choices=("query", "episode"), default="query")
    an.add_argument("--correction", default="holm")
    an.add_argument("--alpha", type=float, default=0.05)
    an.add_argument("--resamples", type=int, default=10_000)
    an.add_argument("--seed", type=int, default=0)
    an.add_argument("--out", default=None, help="directory for report.md and figures")
    an.add_argument("--json", action="store_true", help="also emit results as JSON")
    an.set_defaults(func=_analyze)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, TypeError, FileNotFoundError) as exc:
        if os.environ.get("OSUSTAT_DEBUG"):
            raise
        print(
            f"osustat {args.command}: error: {exc}\n(set OSUSTAT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
