"""Reading the inputs of ``osustat analyze`` and ``osustat audit``: options and loaders.

Records, raw retrievals with an evidence file, or TREC runs with qrels all become one records
table plus notes on what was read and what was excluded (never silently).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from osustat._validation import UsageError
from osustat.cli.common import _input_file, _ints, _runs, _split

__all__ = [
    "add_input_options",
    "check_records_out",
    "input_notes",
    "read_input",
    "write_json_file",
    "write_records_file",
]

# -- inputs -------------------------------------------------------------------------------


def read_input(args: argparse.Namespace) -> tuple[Any, list[tuple[str, Path]], Any]:
    """Records (a DataFrame), the input files with their roles, and the Loaded (or None)."""
    from osustat.io.inputs import records_from_retrievals
    from osustat.io.reading import load_records
    from osustat.io.trec import records_from_trec

    path = _input_file(args.records, "records") if args.records else None
    runs = _runs(getattr(args, "run", []) or [])
    qrels = _input_file(args.qrels, "--qrels")
    evidence = _input_file(args.evidence, "--evidence")
    hit_k = _ints(args.hit_k if args.hit_k is not None else "2", "--hit-k")
    if args.hit_k is not None and qrels is None and evidence is None:
        raise UsageError(
            "`--hit-k` applies to raw retrievals (with --evidence) and TREC runs (with "
            "--qrels), whose hit@k osustat computes; records carry their own hit@k metrics "
            "(choose one with --metric)."
        )
    trec_only = [
        o
        for o, v in (
            ("--run", runs),
            ("--depth", args.depth),
            ("--zero-fill", args.zero_fill),
            ("--measure", args.measure),
            ("--order rank", args.order == "rank"),
        )
        if v
    ]
    if qrels is None and trec_only:
        verbs = (
            "applies only to TREC runs and needs"
            if len(trec_only) == 1
            else "apply only to TREC runs and need"
        )
        raise UsageError(f"{', '.join(trec_only)} {verbs} `--qrels`.")
    if path is not None and runs:
        raise UsageError("give the TREC runs either as the input file or with --run, not both.")
    if path is None and not runs:
        raise UsageError("give an input file (records, retrievals or a TREC run) or --run.")
    files: list[tuple[str, Path]] = []
    if qrels is not None:
        depths = _ints(args.depth, "--depth") if args.depth else None  # None: trec_eval's
        measures = _split(args.measure, "--measure") if args.measure else []
        source: Any = runs if runs else path
        files = [(f"run {n}", p) for n, p in runs.items()] if runs else [("run", path)]  # type: ignore[list-item]
        files.append(("qrels", qrels))
        if evidence is not None:
            files.append(("evidence", evidence))
        loaded = records_from_trec(
            source,
            qrels,
            depths=depths,
            evidence=evidence,
            qid_separator=args.qid_sep,
            hit_k=hit_k,
            order=args.order,
            zero_fill=args.zero_fill,
            measures=measures,
        )
        return loaded.records, files, loaded
    assert path is not None
    if evidence is not None:
        loaded = records_from_retrievals(path, evidence, hit_k=hit_k)
        return loaded.records, [("retrievals", path), ("evidence", evidence)], loaded
    try:
        return load_records(path), [("records", path)], None
    except ValueError as exc:  # a harness's own output given where records are read
        raise ValueError(f"{exc}{_import_hint(str(exc))}") from None


#: What a system's own output file needs before analyze or audit can read it.
IMPORT_HINT = (
    " A memory system's own output file (its harness's JSON, JSON Lines or CSV of answers or "
    "grades) is turned into records first: `osustat import NAME=FILE --out records.parquet`, "
    "then give records.parquet here (docs/systems.md)."
)


def _import_hint(message: str) -> str:
    """:data:`IMPORT_HINT` for the errors a harness's output file meets as records (an
    extension records do not use, or its own columns), unless the message has a TREC hint."""
    unreadable = "unknown extension" in message or "missing required columns" in message
    return IMPORT_HINT if unreadable and "TREC" not in message else ""


def input_notes(
    loaded: Any, path_label: str, n_rows: int, path: str | Path | None = None
) -> tuple[list[str], list[Any]]:
    """The report's notes on its input and the exclusions by reason; a records file that
    ``osustat import`` wrote (Parquet) adds what import said of it (coverage, questions
    dropped), which the file's rows alone cannot show."""
    if loaded is None:
        from osustat.io.reading import import_notes

        notes = [f"Records: {path_label} ({n_rows:,} rows; none dropped on reading)."]
        said = import_notes(path, n_rows) if path is not None else []
        if said:
            notes.append(
                "As `osustat import` wrote these records (kept in the file):"
                # an indented line (a system's not-answered list) stays under its system
                + "".join(
                    f"\n  {line[: len(line) - len(line.lstrip())]}- {line.strip()}" for line in said
                )
            )
        return notes, []
    return loaded.report_notes(), list(loaded.exclusion_counts())


def _episode_benchmarks(records: Any) -> list[str]:
    """The records' benchmarks when every one is registered and declares the episode as its
    unit, else none."""
    from osustat.analyses.registry import episode_unit_benchmarks, records_benchmarks

    names = records_benchmarks(records)
    return names if names and episode_unit_benchmarks(records) == names else []


def query_unit_note(records: Any) -> str | None:
    """With ``--unit query`` on records whose benchmark declares the episode as its unit: what
    the query-level tests assume, said beside them (None otherwise)."""
    names = _episode_benchmarks(records)
    if not names:
        return None
    return (
        f"query, asked for with --unit query; {', '.join(names)} records declare the episode "
        "as their unit (an episode's queries share one memory): the sign-flip tests here "
        "treat the queries of one episode as independent, so a p can be far smaller than the "
        "same cell's at the episode unit (--unit episode), while the intervals resample whole "
        "episodes"
    )


def default_unit(records: Any) -> tuple[str, str | None]:
    """The unit ``analyze`` uses without ``--unit``, and why when it is not the plain default.

    ``episode`` when every benchmark in the records' ``benchmark`` column is a registered one
    declaring ``default_unit = "episode"`` (LoCoMo: a conversation's questions share one
    memory, so ``osustat import``'s records are tested at the conversation unit); else
    ``query`` (reason None)."""
    names = _episode_benchmarks(records)
    if not names:
        return "query", None
    return "episode", (
        f"episode, the declared unit of {', '.join(names)} records (an episode's queries share "
        "one memory: each unit is the mean of its queries); --unit query gives the query level"
    )


def file_in_the_way(path: Path) -> Path | None:
    """The nearest existing parent of `path` when it is a file, not a folder (else None):
    the file `path` cannot be written under."""
    parent = next((p for p in path.parents if p.exists()), None)
    return parent if parent is not None and not parent.is_dir() else None


def write_file_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` into a hidden file beside `path`, then renamed onto it: a reader never
    sees a partial file, and a failure (or a signal) leaves the old one. Missing parent
    folders are created first, as for ``--out`` folders (the rename's error named the
    hidden file); a file in their way is named."""
    if (blocked := file_in_the_way(path)) is not None:
        raise UsageError(f"{str(path)!r}: {str(blocked)!r} is not a folder.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_file(path: Path, payload: Any, force: bool) -> None:
    from osustat.provenance import write_json

    if path.exists() and path.is_dir():
        raise UsageError(f"`--json` {str(path)!r} is a folder; give a file name.")
    write_file_atomically(path, lambda tmp: write_json(tmp, payload))


def check_records_out(name: str | None, force: bool) -> Path | None:
    """The ``--records-out`` path (None when not given), refused before any input is read
    when it cannot be written: a folder, an existing file without --force, or a parent that
    is a file. A missing parent folder is created when the file is written, as for --out."""
    if not name:
        return None
    path = Path(name)
    if path.is_dir():
        raise UsageError(f"`--records-out` {name!r} is a folder; give a file name.")
    if path.exists() and not force:
        raise UsageError(f"`--records-out` {name!r} exists; pass --force to replace it.")
    if (blocked := file_in_the_way(path)) is not None:
        raise UsageError(f"`--records-out` {name!r}: {str(blocked)!r} is not a folder.")
    return path


def write_records_file(path: Path, records: Any, force: bool) -> None:
    """The records as CSV at `path` (atomically; an existing file only with --force; missing
    parent folders created). ``analyze`` writes it only once its analysis succeeded."""
    check_records_out(str(path), force)
    write_file_atomically(path, lambda tmp: records.to_csv(tmp, index=False))


def add_input_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("other inputs (docs/inputs.md)")
    group.add_argument(
        "--evidence",
        default=None,
        metavar="FILE",
        help="evidence file: the input is raw retrievals (or, with --qrels, the cells' "
        "annotations)",
    )
    group.add_argument(
        "--qrels", default=None, metavar="FILE", help="TREC qrels: the input is a TREC run"
    )
    group.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a TREC run file whose method is NAME (repeatable; instead of the input file, "
        "e.g. for runs that share a tag)",
    )
    group.add_argument(
        "--depth",
        default=None,
        metavar="K[,K...]",
        help="TREC cut-offs, comma-separated: each is a 'budget' of retrieved documents "
        "(default: trec_eval's, the whole ranking)",
    )
    group.add_argument(
        "--order",
        choices=("score", "rank"),
        default="score",
        help="order of a TREC ranking: 'score' as trec_eval (score descending, ties by docid "
        "descending; default) or 'rank' (the file's rank column)",
    )
    group.add_argument(
        "--zero-fill",
        action="store_true",
        help="score judged queries that a run does not rank as 0 (trec_eval -c)",
    )
    group.add_argument(
        "--measure",
        default=None,
        metavar="M[,M...]",
        help="extra TREC measures computed by ir_measures (pip install 'osustat[ir]'), e.g. "
        "nDCG@10,AP,P@5; a measure with its own cut-off is computed once (at the largest "
        "depth), others at each depth as AP@k",
    )
    group.add_argument(
        "--qid-sep",
        default="/",
        metavar="SEP",
        help="TREC qid = EPISODE<SEP>QUERY (default '/'; a qid without it is its own episode)",
    )
    group.add_argument(
        "--hit-k",
        default=None,
        metavar="K[,K...]",
        help="k of the computed hit@k metrics (default 2: Hit@2 = at least 2 evidence steps "
        "retrieved)",
    )
