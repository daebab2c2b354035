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


def _read_input(path: Path, args: argparse.Namespace) -> tuple[pd.DataFrame, list[str]]:
    """Records from a records file, raw retrievals + evidence, or a TREC run + qrels."""
    from osustat.inputs import records_from_retrievals, records_from_trec

    hit_k = _ints(args.hit_k, "--hit-k")
    if args.qrels:
        if not args.depth:
            raise ValueError("a TREC run needs `--depth` (comma-separated cut-offs, e.g. 5,10).")
        loaded = records_from_trec(
            path,
            args.qrels,
            depths=_ints(args.depth, "--depth"),
            evidence=args.evidence,
            qid_separator=args.qid_sep,
            hit_k=hit_k,
        )
    elif args.evidence:
        loaded = records_from_retrievals(path, args.evidence, hit_k=hit_k)
    else:
        df = read_records(path)
        return df, [f"- Records: `{path}` ({len(df):,} rows; nothing excluded)."]
    lines = [f"- Input: {loaded.description} → {len(loaded.records):,} record rows."]
    if loaded.exclusions:
        lines += [f"- Excluded (not silently): {e}." for e in loaded.exclusions]
    else:
        lines.append("- Nothing excluded.")
    return loaded.records, lines


def _ints(values: str, option: str) -> list[int]:
    try:
        return [int(v) for v in _split(values)]
    except ValueError:
        raise ValueError(f"`{option}` must be comma-separated integers; got {values!r}.") from None


def _input_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("other inputs (docs/inputs.md)")
    group.add_argument(
        "--evidence",
        default=None,
        help="evidence file: the input is raw retrievals (or, with --qrels, the cells' "
        "annotations)",
    )
    group.add_argument("--qrels", default=None, help="qrels file: the input is a TREC run")
    group.add_argument("--depth", default=None, help="TREC cut-offs, comma-separated")
    group.add_argument("--qid-sep", default="/", help="TREC qid = EPISODE<sep>QUERY")
    group.add_argument(
        "--hit-k", default="2", help="k of the computed hit@k metrics (default 2: Hit@2)"
    )


def _split(values: str) -> list[str]:
    return [v.strip() for v in values.split(",") if v.strip()]


def _analyze(args: argparse.Namespace) -> int:
    import numpy as np

    from osustat import adjust_pvalues, paired, validate_records
    from osustat.cellwise import cell_conditional
    from osustat.reports.cellwise import budget_effects_plot, forest_plot, render_markdown, to_json

    path = Path(args.records)
    raw, input_lines = _read_input(path, args)
    records = validate_records(raw)
    metrics = _split(args.metric)
    budgets = _budgets(args.budget) if args.budget else sorted(records["budget"].unique().tolist())
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
        *input_lines,
        f"- Treatment `{args.treatment}` vs baseline `{args.baseline}`; unit of analysis: "
        f"{args.unit}; seeds averaged per unit: {n_seeds}.",
        f"- Correction family: the {len(family)} per-cell tests of this report "
        f"({args.correction}); aggregate rows show the raw p in both columns.",
        f"- Master seed {args.seed}: the same seed gives the same report.",
    ]
    out = Path(args.out) if args.out else None
    figures: dict[str, str] = {}
    closing: list[tuple[str, str]] = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for heading, res in results:
            if res.cells:
                name = f"forest-{res.paired.metric.replace('@', '')}-B{res.paired.budget}.png"
                forest_plot(res, out / name, title=f"{args.treatment} − {args.baseline}, {heading}")
                figures[heading] = name
        if len(budgets) >= 2:
            for metric in metrics:
                name = f"budgets-{metric.replace('@', '')}.png"
                budget_effects_plot(
                    results,
                    metric,
                    out / name,
                    title=f"{args.treatment} − {args.baseline}, {metric}",
                )
                closing.append((f"Per-cell effect on {metric} by budget", name))
    text = render_markdown(
        results,
        adjusted,
        title=f"Cell-conditional analysis: {args.treatment} vs {args.baseline}",
        preamble=preamble,
        correction=args.correction,
        alpha=args.alpha,
        figures=figures,
        closing_figures=closing,
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


def _aliases(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise ValueError(f"`--alias` must look like RECORDS_NAME=CLAIMS_NAME; got {pair!r}.")
        out[old.strip()] = new.strip()
    return out


def _audit(args: argparse.Namespace) -> int:
    from osustat import validate_records
    from osustat.audit import audit
    from osustat.claims import load_claims
    from osustat.reports.audit import render_markdown, to_json

    claims = load_claims(args.claims)
    path = Path(args.records)
    raw, input_lines = _read_input(path, args)
    aliases = _aliases(args.alias)
    if aliases:
        raw = raw.copy()
        for col in ("method", "benchmark"):
            if col in raw.columns:
                raw[col] = raw[col].replace(aliases)
    records = validate_records(raw)
    result = audit(
        claims,
        records,
        n_resamples=args.resamples,
        bootstrap_resamples=args.bootstrap_resamples,
        level=args.level,
        rng=args.seed,
    )
    unchecked = result.counts()["not checkable"]
    preamble = [
        f"- Claims file: `{args.claims}`.",
        *input_lines,
        f"- Records hold methods {sorted(records['method'].unique().tolist())}, benchmarks "
        f"{sorted(records['benchmark'].unique().tolist())}.",
        f"- Excluded claims: {unchecked} not checkable against these records (listed below "
        "with the reason); they are left out of their family's correction.",
        f"- Master seed {args.seed}: the same seed, claims and records give the same report.",
    ]
    if aliases:
        preamble.append(
            "- Aliases applied to the records: "
            + ", ".join(f"`{a}` → `{b}`" for a, b in aliases.items())
            + "."
        )
    text = render_markdown(result, preamble=preamble)
    payload = to_json(result)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(text + "\n", encoding="utf-8")
        if args.json:
            (out / "audit.json").write_text(
                json.dumps(payload, indent=2, default=float) + "\n", encoding="utf-8"
            )
        print(f"wrote {out / 'report.md'}", file=sys.stderr)
        print(text)
    elif args.json:
        print(json.dumps(payload, indent=2, default=float))
    else:
        print(text)
    return 0


def _budgets(text: str) -> list[int]:
    out = []
    for item in _split(text):
        try:
            out.append(int(item))
        except ValueError:
            raise ValueError(
                f"`--budget` takes comma-separated integers; {item!r} is not one."
            ) from None
    return out


def _reproduce(args: argparse.Namespace) -> int:
    from osustat.analyses.reproduce import reproduce_synthetic

    if args.benchmark == "toolbench":
        return _reproduce_toolbench(args)
    if args.benchmark == "tau-bench":
        return _reproduce_tau(args)

    if args.episodes < 1 or args.jobs < 1 or args.resamples < 1:
        raise ValueError("`--episodes`, `--jobs` and `--resamples` must be positive integers.")
    if args.grid and not args.sensitivity:
        raise ValueError("`--grid` needs `--sensitivity`.")
    result = reproduce_synthetic(
        Path(args.out),
        episodes=args.episodes,
        seed=args.seed,
        jobs=args.jobs,
        resamples=args.resamples,
        progress=not args.no_progress,
        layout=args.layout,
        sensitivity=args.sensitivity,
        grid=Path(args.grid) if args.grid else None,
    )
    print(
        f"wrote {result.out / 'report.md'} ({result.n_records:,} records, {result.seconds:.1f} s)",
        file=sys.stderr,
    )
    return 0


def _check_retriever(args: argparse.Namespace) -> int:
    from osustat.retrieval.contract import check_retriever
    from osustat.retrieval.registry import load_retriever

    spec = load_retriever(args.retriever)
    report = check_retriever(spec.factory)
    print(report.to_text())
    return 0 if report.passed else 1


def _reproduce_toolbench(args: argparse.Namespace) -> int:
    from osustat.analyses.toolbench import TOOLBENCH_SEEDS, reproduce_toolbench

    if not args.data or len(args.data) != 1:
        raise ValueError("`--data` (one ToolBench data directory) is required for toolbench.")
    seeds = tuple(int(x) for x in _split(args.seeds)) if args.seeds else TOOLBENCH_SEEDS
    result = reproduce_toolbench(
        Path(args.data[0]),
        Path(args.out),
        cache=None if args.cache is None else Path(args.cache),
        seeds=seeds,
        episodes=args.episodes,
        jobs=args.jobs,
        resamples=args.resamples,
        progress=not args.no_progress,
    )
    print(
        f"wrote {result.out / 'report.md'} ({result.n_records:,} records, {result.seconds:.1f} s)",
        file=sys.stderr,
    )
    return 0


def _reproduce_tau(args: argparse.Namespace) -> int:
    from osustat.analyses.tau_bench import reproduce_tau_bench

    if not args.data:
        raise ValueError("`reproduce tau-bench` needs `--data FILE [FILE ...]`.")
    result = reproduce_tau_bench(
        args.data,
        Path(args.out),
        cache=args.cache,
        jobs=args.jobs,
        seed=args.seed,
        resamples=args.resamples,
        prefix=not args.no_prefix,
        focal=args.focal,
        progress=not args.no_progress,
        selector=args.selector,
        endpoint=args.endpoint,
        model=args.model,
    )
    print(
        f"wrote {result.out / 'report.md'} ({result.n_records:,} records, {result.seconds:.1f} s)",
        file=sys.stderr,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="osustat",
        description="Cell-conditional, statistics-first evaluation of agent-memory retrieval.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    an = sub.add_parser("analyze", help="cell-conditional report of treatment vs baseline")
    an.add_argument(
        "records",
        help="records file (.csv, .jsonl or .parquet; long schema), or raw retrievals "
        "(with --evidence), or a TREC run (with --qrels)",
    )
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
    _input_options(an)
    an.set_defaults(func=_analyze)

    au = sub.add_parser("audit", help="check significance claims (TOML) against records")
    au.add_argument("claims", help="claims file (TOML; see docs/audit.md)")
    au.add_argument("--records", required=True, help="records file (.csv, .jsonl or .parquet)")
    au.add_argument("--resamples", type=int, default=10_000, help="sign flips per test")
    au.add_argument("--bootstrap-resamples", type=int, default=2_000)
    au.add_argument("--level", type=float, default=0.95, help="confidence level of the CIs")
    au.add_argument("--seed", type=int, default=0)
    au.add_argument(
        "--alias",
        action="append",
        default=[],
        metavar="RECORDS_NAME=CLAIMS_NAME",
        help="rename a method or benchmark of the records to the claims' name (repeatable)",
    )
    au.add_argument("--out", default=None, help="directory for report.md (and audit.json)")
    au.add_argument("--json", action="store_true", help="also emit the audit as JSON")
    _input_options(au)
    au.set_defaults(func=_audit)

    rp = sub.add_parser("reproduce", help="run a benchmark pipeline of the paper end to end")
    rp.add_argument(
        "benchmark", choices=("synthetic", "tau-bench", "toolbench"), help="which pipeline"
    )
    rp.add_argument("--seeds", default=None, help="comma-separated seeds (toolbench: 42,123,456)")
    rp.add_argument("--out", required=True, help="directory for records, report and figures")
    rp.add_argument("--episodes", type=int, default=200)
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    rp.add_argument("--resamples", type=int, default=10_000, help="sign-flip resamples")
    rp.add_argument("--no-progress", action="store_true", help="no progress bar")
    rp.add_argument(
        "--data",
        nargs="+",
        default=None,
        help="τ-/τ²-bench trajectory files (tau-bench) or the data directory (toolbench)",
    )
    rp.add_argument("--cache", default=None, help="embedding cache directory")
    rp.add_argument(
        "--layout",
        choices=("spread", "segment"),
        default="spread",
        help="synthetic generator layout (default spread; segment = the first version's)",
    )
    rp.add_argument(
        "--sensitivity",
        action="store_true",
        help="also run the synthetic generator sensitivity grid (into OUT/sensitivity)",
    )
    rp.add_argument(
        "--grid", default=None, help="grid file for --sensitivity (default: the shipped one)"
    )
    tau = rp.add_argument_group("tau-bench")
    tau.add_argument("--no-prefix", action="store_true", help="no per-source namespace prefix")
    tau.add_argument("--focal", choices=("all", "one"), default="all")
    tau.add_argument(
        "--selector",
        choices=("extractive", "chat"),
        default="extractive",
        help="§6.6 selector: extractive (offline stand-in, not an LLM) or chat (an endpoint)",
    )
    tau.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL (chat)")
    tau.add_argument("--model", default=None, help="model name sent to the endpoint (chat)")
    rp.set_defaults(func=_reproduce)

    cr = sub.add_parser(
        "check-retriever",
        help="run the retriever contract on your own class (exit 0 pass, 1 fail, 2 bad input)",
    )
    cr.add_argument(
        "retriever",
        help="module:Class (importable; a zero-argument class or factory) or the name of an "
        "entry point in the group osustat.retrievers",
    )
    cr.set_defaults(func=_check_retriever)
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
