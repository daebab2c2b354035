"""``osustat import``: systems' own output files -> records joined to a benchmark's questions.

``osustat import zep=zep_locomo_grades.json mem0=results.json --out records.parquet`` reads each
file through its reader (a shipped mapping named like the system, or ``--reader NAME=MAPPING``
with a TOML file; docs/systems.md), joins every answer to one question of the benchmark (LoCoMo
via ``osustat data``, with ``--choice`` for its declared choices), prints each system's
coverage and, for every pair of systems, the questions and conversations they share and the
smallest conversation-level p that many conversations allow; then writes the records
atomically (nothing is written on any error; exit 2).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

from osustat._validation import Problems, UsageError
from osustat.cli.common import name_pairs
from osustat.cli.inputs import file_in_the_way, write_file_atomically

__all__ = ["add_import_parser"]

_SUFFIXES = (".parquet", ".csv", ".jsonl")


def _refuse_overwriting_an_input(
    args: argparse.Namespace, systems: dict[str, str], out: Path
) -> None:
    """`--out` naming a file the import reads (a system's file, a mapping, the benchmark's
    data) is refused even with --force: it would be overwritten."""
    mappings = name_pairs(args.reader, "--reader", "SYSTEM=MAPPING")
    read = [
        *((f"{name} file", file) for name, file in systems.items()),
        *((f"--reader {name} mapping", file) for name, file in mappings.items()),
        ("--data file", args.data),
    ]
    for role, file in read:
        if file and os.path.isfile(file) and Path(file).resolve() == out.resolve():
            raise UsageError(
                f"`--out` {args.out!r} is the {role} this import reads; writing the records "
                "there would overwrite it: give another file name."
            )


def _readers(systems: dict[str, str], given: dict[str, str]) -> dict[str, Any]:
    from osustat.io.mapping import load_mapping, shipped_mappings

    extra = sorted(set(given) - set(systems))
    if extra:
        raise UsageError(f"`--reader` names systems not given: {extra}.")
    out = {}
    for name in systems:
        spec = given.get(name)
        if spec is None:
            if name.lower() not in shipped_mappings():
                raise UsageError(
                    f"no reader for system {name!r}: give --reader {name}=MAPPING (a TOML file, "
                    f"or a shipped reader: {', '.join(shipped_mappings())})."
                )
            spec = name.lower()
        out[name] = load_mapping(spec)
    return out


def _table(args: argparse.Namespace) -> Any:
    """The question table of the benchmark `--benchmark` declares (its ``questions`` hook), from
    its ``--data`` resolved as ``reproduce`` resolves it (default: its fetched datasets)."""
    from osustat.analyses.driver import resolve_data
    from osustat.analyses.registry import get_benchmark

    bench = get_benchmark(args.benchmark)
    data = resolve_data(bench.name, [args.data] if args.data else [])
    return bench.questions(data, name_pairs(args.choice, "--choice"))


def summary(records: Any, coverages: list[Any]) -> list[str]:
    """Coverage per system, then per pair of systems: shared questions and conversations."""
    from osustat.io.join import ANSWER_BUDGET

    lines = [line for c in coverages for line in c.lines()]
    base = records[(records["budget"] == ANSWER_BUDGET) & ~records["metric"].str.contains(r"\.")]
    for metric, part in base.groupby("metric", sort=True):
        means = part.groupby("method")["value"].agg(["mean", "size"])
        shown = ", ".join(
            f"{m} {r['mean']:.4f} (n {int(r['size']):,})" for m, r in means.iterrows()
        )
        lines.append(f"mean {metric}: {shown}")
    queries = questions(records)
    for a, b in itertools.combinations(sorted(queries), 2):
        shared = queries[a] & queries[b]
        convs = len({e for e, _ in shared})
        if convs >= 2:
            unit = (
                f"{convs} conversations: the smallest two-sided conversation-level p is "
                f"2/2^{convs} = {2 / 2**convs:.4f}"
            )
        else:
            unit = (
                f"{convs} conversation: conversation-level inference is impossible "
                "(compare at the query level only, labelled as such)"
            )
        lines.append(
            f"{a} vs {b}: compared on their intersection, n = {len(shared):,} questions in {unit}"
        )
    return lines


def questions(records: Any) -> dict[str, frozenset[tuple[Any, Any]]]:
    """The (conversation, question) pairs each system answered."""
    by = records.groupby("method")[["episode_id", "query_id"]]
    return {m: frozenset(map(tuple, d.drop_duplicates().to_numpy())) for m, d in by}


def intersection(records: Any) -> tuple[Any, list[str]]:
    """The records of the questions every system answered, and one line per system saying
    how many of its questions (and record rows) were dropped, with a few of them named."""
    import pandas as pd

    from osustat._validation import list_some

    per = questions(records)
    shared = frozenset.intersection(*per.values())
    if not shared:
        raise ValueError("--intersection: no question is answered by every system.")
    keep = pd.MultiIndex.from_frame(records[["episode_id", "query_id"]]).isin(list(shared))
    lines = [
        f"--intersection: kept the {len(shared):,} questions every system answered "
        f"({int(keep.sum()):,} of {len(records):,} record rows)"
    ]
    for method, mine in sorted(per.items()):
        gone = sorted(mine - shared)
        rows = int((~keep & (records["method"] == method).to_numpy()).sum())
        named = f": {list_some([q for _, q in gone])}" if gone else ""
        lines.append(
            f"  {method}: dropped {len(gone):,} questions not every system answered "
            f"({rows:,} record rows){named}"
        )
    return records[keep].reset_index(drop=True), lines


def _write(path: Path, records: Any, notes: list[str]) -> None:
    """The records at `path` (atomically); a Parquet file keeps `notes` in its metadata
    (:data:`IMPORT_NOTES_KEY`) for ``analyze`` to repeat."""

    def write(tmp: Path) -> None:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            from osustat.io.reading import IMPORT_NOTES_KEY

            table = pa.Table.from_pandas(records, preserve_index=False)
            said = json.dumps({"lines": notes, "rows": len(records)})  # rows: to tell an edit
            meta = {**(table.schema.metadata or {}), IMPORT_NOTES_KEY: said}
            pq.write_table(table.replace_schema_metadata(meta), tmp)
        elif path.suffix == ".csv":
            records.to_csv(tmp, index=False)
        else:
            records.to_json(tmp, orient="records", lines=True)

    write_file_atomically(path, write)


def _import(args: argparse.Namespace) -> int:
    import pandas as pd

    from osustat.io.join import join_answers
    from osustat.io.outputs import read_answers
    from osustat.schema import validate_records

    systems = name_pairs(args.systems, "SYSTEM=FILE")
    readers = _readers(systems, name_pairs(args.reader, "--reader", "SYSTEM=MAPPING"))
    out = Path(args.out)
    if out.suffix not in _SUFFIXES:
        raise UsageError(f"`--out` must end in {', '.join(_SUFFIXES)}; got {args.out!r}.")
    _refuse_overwriting_an_input(args, systems, out)
    if out.is_dir() or (out.exists() and not args.force):
        raise UsageError(f"`--out` {args.out!r} exists; pass --force to replace it.")
    if (blocked := file_in_the_way(out)) is not None:
        raise UsageError(f"`--out` {args.out!r}: {str(blocked)!r} is not a folder.")
    for name, file in systems.items():
        if not Path(file).exists():
            raise UsageError(f"{name} file {file!r} does not exist.")
        if not Path(file).is_file():
            raise UsageError(f"{name} file {file!r} is not a file (a folder).")
    table = _table(args)
    parts, coverages = [], []
    # every problem of every file, read and joined, said in one run
    problems = Problems("the systems' files (every answer read and joined; nothing written)")
    for name, file in systems.items():
        answers = read_answers(file, readers[name], system=name, problems=problems)
        joined = join_answers(answers, table, readers[name], system=name, problems=problems)
        if joined.records.empty and not problems.count:
            raise ValueError(
                f"{name} file {file!r} gives no records: {len(answers):,} answers, "
                f"{len(joined.coverage.excluded_answered):,} of them to excluded questions."
            )
        parts.append(joined.records)
        coverages.append(joined.coverage)
    problems.raise_any()
    records = pd.concat(parts, ignore_index=True)
    validate_records(records)  # the schema's checks before anything is written
    lines = summary(records, coverages)
    kept = [line for c in coverages for line in c.lines()]  # what analyze repeats
    if args.intersection:
        records, dropped = intersection(records)
        lines += dropped
        kept += dropped
    _write(out, records, kept)
    for line in lines:
        print(line)
    print(f"wrote {out} ({len(records):,} record rows; {table.description})", file=sys.stderr)
    if out.suffix != ".parquet" and (args.intersection or any(c.not_answered for c in coverages)):
        print(
            f"note: a {out.suffix} file keeps no notes: `osustat analyze` cannot repeat the "
            "questions left out above in its report; write .parquet to keep them in the file",
            file=sys.stderr,
        )
    names = list(systems)
    metrics = set(records["metric"].unique())
    base = sorted(m for m in metrics if "." not in m)
    metric = "judge" if "judge" in base else base[0]
    strata = sorted(m for m in metrics if m.startswith(f"{metric}.") and m != f"{metric}.cells")
    differ = len(names) >= 2 and not args.intersection and len(set(questions(records).values())) > 1
    if differ:
        print(
            "note: the systems answer different questions; `osustat analyze` pairs every "
            "question and refuses unpaired ones (never dropped silently): re-import with "
            "--intersection to keep only the questions every system answered (counted)",
            file=sys.stderr,
        )
    if len(names) >= 2:
        # several systems: every pair, oriented in the order given here (first = treatment)
        pair = (
            f"--treatment {names[0]} --baseline {names[1]}"
            if len(names) == 2
            else f"--treatment {','.join(names)} --all-pairs"
        )
        first = (
            "next, once this import is run again with --intersection --force (these records "
            "hold unpaired questions), "
            if differ
            else "next, "
        )
        print(
            f"{first}at the conversation unit (the cluster of {table.benchmark}): osustat analyze "
            f"{out} {pair} --unit episode --metric {','.join([metric, *strata])}; the query "
            f"level beside it: --unit query --metric {metric}.cells (docs/systems.md)",
            file=sys.stderr,
        )
    return 0


def add_import_parser(sub: Any) -> None:
    """The ``import`` sub-command."""
    p = sub.add_parser(
        "import",
        help="systems' own per-question output files -> records joined to a benchmark",
        description="Read each system's output file through a declared mapping, join every "
        "answer to one question of the benchmark (text checked), count coverage and write "
        "records for `osustat analyze` (docs/systems.md).",
    )
    p.add_argument(
        "systems",
        nargs="+",
        metavar="SYSTEM=FILE",
        help="a system's name (the records' method) and its output file",
    )
    p.add_argument(
        "--reader",
        action="append",
        default=[],
        metavar="SYSTEM=MAPPING",
        help="the mapping of SYSTEM's file: a TOML file or a shipped reader (mem0, zep); "
        "default: the shipped reader named like the system",
    )
    p.add_argument(
        "--benchmark",
        default="locomo",
        help="the benchmark whose questions the answers are joined to: one whose protocol "
        "object declares a question table (default locomo)",
    )
    p.add_argument(
        "--data",
        default=None,
        help="the benchmark's data file (default: locomo10.json of `osustat data path locomo`)",
    )
    p.add_argument(
        "--choice",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a declared choice of the benchmark's cells (LoCoMo: labels, entity-extractor, "
        "captions, ...; analyses/locomo/choices.toml)",
    )
    p.add_argument(
        "--intersection",
        action="store_true",
        help="keep only the questions every system answered (each system's dropped questions "
        "counted and named); without it, systems answering different questions give records "
        "that `osustat analyze` refuses as unpaired",
    )
    p.add_argument("--out", required=True, help="records file (.parquet, .csv or .jsonl)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=_import)
