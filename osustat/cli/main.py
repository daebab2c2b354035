"""The ``osustat`` command: the composition root (imports reports lazily).

Every command validates all its options before any work, writes its outputs into a
temporary folder that is renamed into place only on success (:mod:`osustat.provenance`),
and turns bad input and OS errors into one clear message with exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from osustat._validation import UsageError, check_means_pair, check_option_count
from osustat.cli.audit import audit_command
from osustat.cli.common import DeferredParser, _check_out, _family, _ints, _prob, _split
from osustat.cli.inputs import (
    add_input_options,
    check_records_out,
    default_unit,
    input_notes,
    query_unit_note,
    read_input,
    write_json_file,
    write_records_file,
)
from osustat.cli.interrupts import from_interrupt
from osustat.dask_cluster import check_address, cluster_map, connected

__all__ = ["build_parser", "main"]

# -- analyze ------------------------------------------------------------------------------


def _analyze(args: argparse.Namespace) -> int:
    from osustat._analysis_options import self_pairs
    from osustat.analysis import analyze

    # Every option is checked before any input is read or anything is computed.
    options, jobs = _analyze_options(args)
    records_out = check_records_out(args.records_out, args.force)
    records, prov, notes, unit = _analyze_input(args)
    with _workers(jobs, args.scheduler) as workers:
        try:
            result = analyze(
                records,
                **options,
                all_pairs=args.all_pairs,
                unit=unit,
                benchmark=args.benchmark,
                # TREC cut-offs are depths; else analyze reads the records' budgets
                budget_kind="depth" if args.qrels else None,
                provenance=prov,
                input_notes=notes,
                reference=args.reference,
                workers=workers,
            )
        except ValueError as exc:
            raise ValueError(_with_qrels_hint(str(exc), args)) from None
    _register_renderers()
    itself = self_pairs(options["treatment"], options["baseline"], args.all_pairs)
    _say_what_was_left_out(result, len(notes), itself)
    _write_analysis(result, args)
    if records_out is not None:  # only for an analysis that succeeded and was saved
        write_records_file(records_out, records, args.force)
        print(f"wrote {records_out} ({len(records):,} record rows)", file=sys.stderr)
    return 0


def _analyze_options(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """Check every option of ``analyze`` before any input is read: the keyword arguments of
    :func:`osustat.analyze` they give, and the number of jobs."""
    from osustat._analysis_options import metric_key

    correction = args.correction
    alpha = _prob(args.alpha, "--alpha")
    level = _prob(args.level, "--level")
    resamples = check_option_count(args.resamples, "--resamples")
    boot = check_option_count(args.bootstrap_resamples, "--bootstrap-resamples", 2)
    seed = check_option_count(args.seed, "--seed", 0, 2**63 - 1)
    jobs = check_option_count(args.jobs, "--jobs", 1, 256)
    check_address(args.scheduler, jobs)
    budgets = _ints(args.budget, "--budget") if args.budget else None
    metrics = _split(args.metric, "--metric", metric_key) if args.metric else None
    if args.metric is not None and not metrics:
        raise UsageError("`--metric` is empty; give comma-separated metric names.")
    family = _family(args.family)
    treatment, baseline = _methods(args)
    paper_means = _paper_means(args.paper_means)
    if args.reference is not None and not Path(args.reference).is_file():
        raise UsageError(f"`--reference` {args.reference!r} is not a file of records.")
    if args.json and args.json != "-" and Path(args.json).is_dir():
        raise UsageError(f"`--json` {args.json!r} is a folder; give a file name.")
    _check_out(args)
    options = {
        "treatment": treatment,
        "baseline": baseline,
        "metrics": metrics,
        "budgets": budgets,
        "family": family,
        "correction": correction,
        "alpha": alpha,
        "level": level,
        "n_resamples": resamples,
        "bootstrap_resamples": boot,
        "rng": seed,
        "paper_means": paper_means,
    }
    return options, jobs


def _analyze_input(args: argparse.Namespace) -> tuple[Any, Any, list[str], str]:
    """Read the records, hash the inputs, and say the input's notes and warnings:
    (records, provenance, notes, unit)."""
    from osustat.provenance import Provenance

    records, files, loaded = read_input(args)
    reference = [("reference", args.reference)] if args.reference else []
    digest_prov = Provenance.for_files(
        [*((r, p) for r, p in files), *reference], command=args.command_line
    )
    _check_out(args, digest_prov.inputs_digest)
    notes, exclusions = input_notes(loaded, f"`{files[0][1]}`", len(records), files[0][1])
    if args.unit:
        unit, why = args.unit, query_unit_note(records) if args.unit == "query" else None
    else:
        unit, why = default_unit(records)
    if why:
        notes.append(f"Unit: {why}.")
        print(f"osustat analyze: unit: {why}", file=sys.stderr)
    for w in loaded.warnings if loaded is not None else ():
        print(f"osustat analyze: warning: {w}", file=sys.stderr)
    prov = Provenance(
        command=digest_prov.command,
        arguments=args.arguments,
        inputs=digest_prov.inputs,
        exclusions=tuple(exclusions),
        versions=digest_prov.versions,
    )
    return records, prov, notes, unit


def _with_qrels_hint(msg: str, args: argparse.Namespace) -> str:
    """An analysis error's message, with what to do when the records came from a TREC run."""
    if "unpaired queries" in msg and args.qrels and not args.zero_fill:
        msg += (
            " A run does not rank every judged query: pass --zero-fill (trec_eval -c) to "
            "score missing queries as 0."
        )
    elif "not in the records" in msg and "`metrics`" in msg and args.qrels:
        msg += " Measures such as nDCG@10 or AP come from --measure (needs ir_measures)."
    return msg


def _write_analysis(result: Any, args: argparse.Namespace) -> None:
    """Write the report and results (--out, --json) and print the report or the JSON."""
    if args.out:
        out = result.save(args.out, force=args.force)
        print(f"wrote {out / 'report.md'} and {out / 'results.json'}", file=sys.stderr)
    if args.json == "-":
        print(result.to_json())
        return
    if args.json:
        write_json_file(Path(args.json), result.to_dict(), args.force)
        print(f"wrote {args.json}", file=sys.stderr)
    if args.out:
        print((Path(args.out) / "report.md").read_text(encoding="utf-8"), end="")
    else:
        print(result.to_markdown())


def _say_what_was_left_out(result: Any, n_notes: int, itself: Sequence[str]) -> None:
    """On stderr: the methods in no pair, the methods named on both sides (`itself`: no pair
    with themselves), and the notes the analysis added to the CLI's first
    `n_notes` (cells the unit does not test), so that nothing is left out silently."""
    unused = result.methods_not_compared
    if unused:
        spaced = [m for m in unused if m != m.strip()]
        print(
            "osustat analyze: warning: methods loaded but in no pair (not compared): "
            f"{', '.join(map(repr, unused))}; list them in --treatment/--baseline or pass "
            "--all-pairs"
            + (
                f" ({', '.join(map(repr, spaced))}: spaces around a name, which "
                "--treatment/--baseline strip; fix the records' method column)"
                if spaced
                else ""
            )
            + ".",
            file=sys.stderr,
        )
    for m in itself:
        print(
            f"osustat analyze: warning: {m!r} is named in --treatment and in --baseline; "
            f"{m!r} vs {m!r} is not compared (every other pair is).",
            file=sys.stderr,
        )
    first = getattr(result, "first", result)  # a MultiAnalysisResult's pairs share the notes
    for note in first.input_notes[n_notes:]:
        print(f"osustat analyze: warning: {note}", file=sys.stderr)


@contextlib.contextmanager
def _workers(jobs: int, scheduler: str | None) -> Iterator[Any]:
    """What runs the comparisons and MDE searches (``analyze``'s `workers`): a Dask
    cluster's map for ``--scheduler``, a process pool's for ``--jobs`` above 1, else None
    (this process). The same report every way."""
    if scheduler is not None:
        with connected(scheduler) as client:
            yield cluster_map(client)
    elif jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            yield pool.map
    else:
        yield None


def _methods(args: argparse.Namespace) -> tuple[str | list[str] | None, str | list[str] | None]:
    """--treatment/--baseline: one name each (one comparison, today's report) or
    comma-separated lists (every treatment against every baseline); --all-pairs alone takes
    every method of the records."""
    named: list[str | list[str] | None] = []
    for option, text in (("--treatment", args.treatment), ("--baseline", args.baseline)):
        if text is None:
            named.append(None)
            continue
        names = _split(text, option)
        if not names:
            raise UsageError(f"`{option}` is empty; give a method name or a comma-separated list.")
        named.append(names[0] if len(names) == 1 and "," not in text else names)
    if not args.all_pairs and (named[0] is None or named[1] is None):
        raise UsageError(
            "give --treatment and --baseline (names or comma-separated lists), or --all-pairs."
        )
    return named[0], named[1]


def _paper_means(text: str | None) -> tuple[float, float] | None:
    """``--paper-means T,B``: the paper's treatment and baseline means."""
    if text is None:
        return None
    try:
        return check_means_pair(text.split(","), "--paper-means")
    except (TypeError, ValueError) as exc:  # the same rule as the API's `paper_means`
        raise UsageError(f"{exc} (e.g. 0.61,0.55)") from None


def _register_renderers() -> None:
    """Wire the shipped renderers of core results (the composition root's job)."""
    from osustat.renderers import register_renderer
    from osustat.reports.cellwise import (
        render_analysis,
        render_multi_analysis,
        write_figures,
        write_multi_figures,
    )

    register_renderer("analysis-markdown", render_analysis)
    register_renderer("analysis-figures", write_figures)
    register_renderer("analysis-multi-markdown", render_multi_analysis)
    register_renderer("analysis-multi-figures", write_multi_figures)


# -- check-retriever ----------------------------------------------------------------------


def _check_retriever(args: argparse.Namespace) -> int:
    from osustat.retrieval.contract import check_retriever
    from osustat.retrieval.registry import load_retriever

    spec = load_retriever(args.retriever)
    report = check_retriever(spec.factory)
    print(report.to_text())
    return 0 if report.passed else 1


# -- parser -------------------------------------------------------------------------------


def _version() -> str:
    from osustat._version import __version__

    return f"osustat {__version__}"


def build_parser() -> argparse.ArgumentParser:
    """The ``osustat`` parser: one sub-command per step, each added by its own function."""
    from osustat.cli.data import add_data_parser
    from osustat.cli.import_ import add_import_parser
    from osustat.cli.llm import add_llm_parser
    from osustat.cli.plan import add_plan_parser
    from osustat.cli.reproduce import add_reproduce_parser

    parser = argparse.ArgumentParser(
        prog="osustat",
        description="Cell-conditional, statistics-first evaluation of agent-memory retrieval.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=DeferredParser)
    _add_analyze_parser(sub)
    _add_audit_parser(sub)
    add_reproduce_parser(sub)
    add_data_parser(sub)
    add_import_parser(sub)
    add_plan_parser(sub)
    add_llm_parser(sub)
    _add_check_retriever_parser(sub)
    return parser


def _add_analyze_parser(sub: Any) -> None:
    """``osustat analyze``: what to compare, how to test it, what to write."""
    an = sub.add_parser(
        "analyze",
        help="cell-conditional report of treatment(s) vs baseline(s)",
        description="Cell-conditional report of treatment vs baseline, or of several method "
        "pairs corrected together (osustat.analyze).",
    )
    an.add_argument(
        "records",
        nargs="?",
        default=None,
        help="records file (.csv, .jsonl or .parquet; long schema), or raw retrievals "
        "(with --evidence), or a TREC run (with --qrels)",
    )
    an.add_argument(
        "--treatment",
        default=None,
        metavar="A[,B...]",
        help="method name of the treatment, or comma-separated names: every treatment is "
        "compared with every baseline and the correction families span the pairs",
    )
    an.add_argument(
        "--baseline", default=None, metavar="X[,Y...]", help="method name(s) of the baseline"
    )
    an.add_argument(
        "--all-pairs",
        action="store_true",
        help="compare every pair of the methods named in --treatment/--baseline, or of every "
        "method loaded when none is named",
    )
    an.add_argument(
        "--metric",
        default=None,
        metavar="M[,M...]",
        help="comma-separated metrics (default: every metric of the records that every compared "
        "method has, except tokens; the others are named in the report)",
    )
    an.add_argument(
        "--budget",
        default=None,
        metavar="B[,B...]",
        help="comma-separated budgets or depths (default: all in the records)",
    )
    an.add_argument("--benchmark", default=None, help="needed when records hold several")
    an.add_argument(
        "--unit",
        choices=("query", "episode"),
        default=None,
        help="unit of the paired test: query, or episode (averages an episode's queries "
        "first); default: the records' benchmark's declared unit (LoCoMo: episode, its "
        "conversation), else query",
    )
    # the corrections' names import the statistics (numpy): only when analyze is asked for
    an.deferred.append(_add_analyze_test_options)
    an.deferred.append(_add_analyze_output_options)
    an.deferred.append(add_input_options)
    an.set_defaults(func=_analyze)


def _add_analyze_test_options(an: argparse.ArgumentParser) -> None:
    """``analyze``'s correction family and correction, levels, resamples and seed."""
    from osustat._analysis_options import FAMILIES
    from osustat.multitest import CORRECTIONS
    from osustat.stepdown import STEPDOWN_METHODS

    an.add_argument(
        "--family",
        default="per-metric-budget",
        metavar="FAMILY",
        help=f"correction family: one of {', '.join(FAMILIES)} (default per-metric-budget; "
        "named families span every method pair), or groups 'METRIC:BUDGET,...;...' (an item "
        "TREATMENT:BASELINE:METRIC:BUDGET names one method pair's table)",
    )
    an.add_argument(
        "--correction",
        choices=(*CORRECTIONS, *STEPDOWN_METHODS, "none"),
        default="holm",
        help="multiple-testing correction within each family (default holm); maxt/minp: "
        "Westfall-Young step-down over one sign-flip matrix shared by the family's tests "
        "(uses their dependence; docs/statistics.md)",
    )
    an.add_argument(
        "--alpha", type=float, default=0.05, help="family-wise level (FDR for fdr_*), in (0, 1)"
    )
    an.add_argument(
        "--level", type=float, default=0.95, help="confidence level of the intervals, in (0, 1)"
    )
    an.add_argument(
        "--resamples",
        type=int,
        default=10_000,
        help="Monte Carlo sign vectors per test when it is not exact (default 10000)",
    )
    an.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=2_000,
        help="bootstrap resamples per interval (default 2000)",
    )
    an.add_argument("--seed", type=int, default=0, help="master seed (default 0)")


def _add_analyze_output_options(an: argparse.ArgumentParser) -> None:
    """``analyze``'s outputs (folder, JSON, records read) and the original to compare with."""
    an.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes for the comparisons (default 1: this process); the same report",
    )
    an.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the comparisons and MDE searches on an existing Dask cluster "
        "(tcp://HOST:8786; needs the 'distributed' extra) instead of --jobs; the same report "
        "(for --all-pairs on many methods: docs/performance.md)",
    )
    an.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for report.md, results.json, provenance.json and figures (SVG + PNG); "
        "written atomically",
    )
    an.add_argument(
        "--force",
        action="store_true",
        help="replace an --out folder made from different inputs",
    )
    an.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        metavar="FILE",
        help="also write the results as JSON to FILE (with --out, results.json is always "
        "written beside report.md); '--json' alone prints JSON on stdout instead of the "
        "markdown, for piping",
    )
    an.add_argument(
        "--records-out",
        default=None,
        metavar="FILE",
        help="also write the records the analysis read (CSV: one value per query, method, "
        "metric and depth/budget), e.g. to check them against trec_eval -q",
    )
    an.add_argument(
        "--reference",
        default=None,
        metavar="RECORDS",
        help="records of the original experiment (same methods, metrics, budgets): every row "
        "gains the effect ratio ER and ΔRI of this run against it, with bootstrap CIs",
    )
    an.add_argument(
        "--paper-means",
        default=None,
        metavar="T,B",
        help="the paper's printed treatment and baseline means of the one analysed comparison "
        "(select it with --metric and --budget): the aggregate row gains ER and ΔRI",
    )


def _add_audit_parser(sub: Any) -> None:
    """``osustat audit``: a claims file against records (and the paper's own numbers)."""
    au = sub.add_parser("audit", help="check significance claims (TOML) against records")
    au.add_argument(
        "claims",
        help="claims file (TOML; see docs/audit.md), or the name of one shipped with osustat: "
        "paper (the paper's claims: analyses/claims/paper.toml), locomo (LoCoMo's transfer "
        "claims: analyses/locomo/claims.toml), locomo-systems (Zep vs mem0 on `osustat import` "
        "records, docs/systems.md), paper_checks (the paper's own numbers, with "
        "--check-paper); an unknown name lists them with their files",
    )
    au.add_argument(
        "--records",
        default=None,
        help="records file (.csv, .jsonl or .parquet), or a TREC run with --qrels (several: "
        "--run NAME=FILE); required unless --check-paper is given",
    )
    au.add_argument(
        "--check-paper",
        default=None,
        metavar="CHECKS_TOML",
        help="also check the paper's own printed numbers for consistency (a file, or "
        "paper_checks: the shipped analyses/claims/paper_checks.toml); findings about the "
        "paper, listed apart; without --records only these checks run",
    )
    au.add_argument("--resamples", type=int, default=10_000, help="sign flips per test")
    au.add_argument(
        "--bootstrap-resamples", type=int, default=2_000, help="bootstrap resamples per CI"
    )
    au.add_argument("--level", type=float, default=0.95, help="confidence level of the CIs")
    au.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    au.add_argument(
        "--alias",
        action="append",
        default=[],
        metavar="RECORDS_NAME=CLAIMS_NAME",
        help="rename a method or benchmark of the records to the claims' name (repeatable)",
    )
    au.add_argument("--out", default=None, help="directory for report.md (and audit.json)")
    au.add_argument(
        "--force", action="store_true", help="replace an --out folder made from other inputs"
    )
    au.add_argument(
        "--json",
        action="store_true",
        help="without --out, print the audit as JSON on stdout instead of the report "
        "(--out always writes DIR/audit.json beside DIR/report.md)",
    )
    add_input_options(au)
    au.set_defaults(func=audit_command)


def _add_check_retriever_parser(sub: Any) -> None:
    """``osustat check-retriever``: the retriever contract on a user's class."""
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


def _interrupted(command: str, received: list[int]) -> int:
    """Say a run stopped by SIGINT or SIGTERM; its exit status (128 + the signal)."""
    # a report is written into a hidden folder renamed into place only when complete
    name = "terminated (SIGTERM)" if received else "interrupted"
    print(f"osustat {command}: {name}; no unfinished report was left in place.", file=sys.stderr)
    return 128 + (received[0] if received else 2)


def _cli_warning(command: str, default: Any) -> Any:
    """A `warnings.showwarning` that prints osustat's own warnings as the CLI's other lines
    (``osustat analyze: warning: …``, not a source path and line) and leaves the others to
    `default`."""

    def show(message: Any, category: Any, filename: str, lineno: int, *rest: Any) -> None:
        # the folders of osustat's packages as imported: analyses/, reports/ and retrieval/
        # may live outside osustat/ (an editable install, a source checkout)
        roots = [
            os.path.join(folder, "")
            for name in ("osustat", "osustat.analyses", "osustat.reports", "osustat.retrieval")
            for folder in getattr(sys.modules.get(name), "__path__", [])
        ]
        if str(filename).startswith(tuple(roots)):
            print(f"osustat {command}: warning: {message}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, *rest)

    return show


def _repeated_option(sub: argparse.ArgumentParser, given: Sequence[str]) -> str | None:
    """The first option of `sub` that takes one value and is given more than once (the
    parsers allow no abbreviations, so each token names its option exactly), else None.
    Options that collect (``--choice``, ``--run``) and flags are not counted."""
    seen: set[str] = set()
    for token in given:
        if not token.startswith("-"):
            continue
        action = sub._option_string_actions.get(token.split("=", 1)[0])
        if not isinstance(action, argparse._StoreAction):
            continue
        if action.dest in seen:
            return action.option_strings[-1]
        seen.add(action.dest)
    return None


#: Namespace entries that are not the command's arguments: its handler, its words, the folder
#: it writes to (a report is the same run wherever it is written).
_NOT_ARGUMENTS = frozenset({"func", "command_line", "out"})


def _plain(value: Any) -> Any:
    """`value` as JSON holds it (paths and other objects as their text); a file or folder
    that exists in its normal spelling (``./records.csv`` and ``records.csv`` are one
    argument; no folder is made absolute)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    text = str(value)
    if not text or not os.path.exists(text):
        return text
    plain = os.path.normpath(text)  # lexical: kept only where it names the same file
    return plain if os.path.realpath(plain) == os.path.realpath(text) else text


def _parsed_arguments(sub: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """The command's arguments as parsed, defaults filled in (``Provenance.arguments``): by
    long option string (``'--alpha'``), positionals and sub-commands by name."""
    names = {
        a.dest: max(a.option_strings, key=len) if a.option_strings else a.dest for a in sub._actions
    }
    return {
        names.get(dest, dest): _plain(value)
        for dest, value in sorted(vars(args).items())
        if dest not in _NOT_ARGUMENTS
    }


def _list_hint(action: argparse.Action) -> str:
    """How an option takes several values, for the message refusing it given twice: a
    comma-separated list (its metavar reads ``M[,M...]``), several words (``nargs``), or
    nothing (one value)."""
    if action.nargs in ("+", "*"):
        return ", with its values separated by spaces"
    if "[," in str(action.metavar or ""):
        return ", with a comma-separated list"
    return ""


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The innermost sub-command's parser that `args` came from (``osustat data fetch``'s
    for ``osustat data fetch --bogus``), to print its usage with an error."""
    while True:
        chosen = next(
            (
                a.choices[getattr(args, a.dest)]
                for a in parser._actions
                if isinstance(a, argparse._SubParsersAction) and getattr(args, a.dest, None)
            ),
            None,
        )
        if chosen is None:
            return parser
        parser = chosen


def _os_message(exc: OSError) -> str:
    what = exc.strerror or type(exc).__name__
    where = f" {exc.filename!r}" if exc.filename else ""
    if exc.filename2:
        where += f" -> {exc.filename2!r}"
    return f"{what}:{where}" if where else str(exc)


def _on_sigterm(received: list[int]) -> Any:
    """SIGTERM raises KeyboardInterrupt (as SIGINT does), so every output's clean-up runs
    (:func:`osustat.provenance.atomic_output`); `received` records it. Main thread only.
    Returns the handler it replaced (restored when the command ends)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, handler)


def _intermixed(
    sub: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]
) -> list[str]:
    """Words argparse left over because an option came between them and the command's one
    list positional (``import a=A --reader a=zep b=B``): appended to that positional, as
    ``parse_intermixed_args`` would (which does not support sub-commands). Returns the
    words still unrecognized."""
    lists = [a for a in sub._actions if not a.option_strings and a.nargs in ("+", "*")]
    if len(lists) != 1 or not unknown or any(w.startswith("-") for w in unknown):
        return unknown
    dest = lists[0].dest
    setattr(args, dest, [*(getattr(args, dest) or []), *unknown])
    return []


def main(argv: Sequence[str] | None = None) -> int:
    import shlex

    from osustat.provenance import run_arguments

    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    args, unknown = parser.parse_known_args(given)
    sub = _command_parser(parser, args)
    unknown = _intermixed(sub, args, unknown)
    if unknown:  # the sub-command's usage and error, not the top level's (exit 2)
        sub.error(f"unrecognized arguments: {' '.join(unknown)}")
    repeated = _repeated_option(sub, given)
    if repeated:  # argparse keeps the last silently: --metric hit@2 --metric recall
        sub.error(
            f"{repeated} is given twice (the second would replace the first); give it once"
            + _list_hint(sub._option_string_actions[repeated])
            + "."
        )
    # The output folder is where the report lives, so it is not part of what the report
    # records: reports written to different folders stay byte-identical.
    shown = []
    skip = False
    for item in given:
        if skip:
            shown.append("<this folder>")
            skip = False
        elif item == "--out":
            shown.append(item)
            skip = True
        elif item.startswith("--out="):
            shown.append("--out=<this folder>")
        else:
            shown.append(item)
    args.command_line = "osustat " + shlex.join(shown)
    args.arguments = run_arguments(_parsed_arguments(sub, args))
    received: list[int] = []
    previous = _on_sigterm(received)
    try:
        with warnings.catch_warnings():  # osustat's own warnings read as the CLI's lines
            warnings.showwarning = _cli_warning(args.command, warnings.showwarning)
            return int(args.func(args))
    except ImportError as exc:  # an optional extra not installed: say which and how
        from osustat.retrieval.encoder import MissingExtraError

        if os.environ.get("OSUSTAT_DEBUG"):
            raise
        if received or from_interrupt(exc):  # a signal inside a module's initialisation
            return _interrupted(args.command, received)
        if not isinstance(exc, MissingExtraError):
            raise
        print(f"osustat {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if os.environ.get("OSUSTAT_DEBUG"):
            raise
        return _interrupted(args.command, received)
    except (ValueError, TypeError, OSError, MemoryError) as exc:
        if os.environ.get("OSUSTAT_DEBUG"):
            raise
        if received:  # the signal surfaced inside a library as its own error (matplotlib's)
            return _interrupted(args.command, received)
        if isinstance(exc, FileNotFoundError) and not exc.filename:
            msg = str(exc)
        elif isinstance(exc, OSError):
            msg = _os_message(exc)
        elif isinstance(exc, MemoryError):
            msg = "out of memory; lower --resamples or --bootstrap-resamples"
        else:
            msg = str(exc)
        print(
            f"osustat {args.command}: error: {msg}\n(set OSUSTAT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 2
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
