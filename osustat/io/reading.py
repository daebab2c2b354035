"""Reading input tables: long records, and the rows of other inputs with their file lines.

Used by :mod:`osustat.io.inputs` and :mod:`osustat.io.trec`: one reader for CSV, JSON Lines
and Parquet (:func:`read_records` for typed records,
:func:`read_rows` for raw rows kept as text), the line-oriented TREC reader (:func:`trec_lines`),
the small parsers every loader shares, and the :class:`Loaded` result type.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osustat._validation import is_gzip, list_some, not_utf8

__all__ = ["Exclusion", "Loaded", "load_records", "read_records"]


@dataclass(frozen=True)
class Exclusion:
    """Units left out on purpose: why, how many, and which (up to 10 listed)."""

    reason: str
    ids: tuple[str, ...]

    def __str__(self) -> str:
        return f"{len(self.ids)} {self.reason}: {list_some(self.ids)}"


@dataclass(frozen=True)
class Loaded:
    """Records computed from an input, with what was left out and how they were built.

    :func:`osustat.analyze` takes one as its records: its notes, warnings and exclusions
    reach the report (as the CLI's do) and `budget_kind` labels the budgets (``'depth'``
    for TREC cut-offs; None: analyze's own rule)."""

    records: pd.DataFrame
    exclusions: tuple[Exclusion, ...]
    description: str
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    budget_kind: str | None = None

    def report_notes(self) -> list[str]:
        """The report's lines on this input: how it was read, its notes and warnings, and
        every exclusion (or that there was none)."""
        notes = [f"Input: {self.description} → {len(self.records):,} record rows."]
        notes += [f"Note: {n}." for n in self.notes]
        notes += [f"Warning: {w}" for w in self.warnings]
        if self.exclusions:
            notes += [f"Excluded (not silently): {e}." for e in self.exclusions]
        else:
            notes.append("Nothing excluded.")
        return notes

    def exclusion_counts(self) -> tuple[tuple[str, int], ...]:
        """``(reason, count)`` per exclusion, as a :class:`~osustat.provenance.Provenance`
        keeps them."""
        return tuple((e.reason, len(e.ids)) for e in self.exclusions)


# -- tables -------------------------------------------------------------------------------

_RECORD_SUFFIXES = ".csv, .jsonl/.ndjson or .parquet"
_TABLE_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet", ".pq")


def format_of(path: Path) -> str:
    """The table format its extension names (``csv``, ``jsonl``, ``parquet``), else ``''``."""
    suffix = path.suffix.lower()
    return {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(
        suffix, "parquet" if suffix in (".parquet", ".pq") else ""
    )


def _looks_like_trec(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(first) == 6 and first[1].upper() == "Q0":
        return "run"
    if len(first) == 4 and first[3].lstrip("-").isdigit():
        return "qrels"
    return None


def _check_file(path: Path, name: str) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{name} does not exist.")
    if path.is_dir():
        raise ValueError(f"{name} is a folder, not a file.")
    if path.stat().st_size == 0:
        raise ValueError(f"{name} is empty.")


class DuplicateKeyError(ValueError):
    """A JSON object that gives one key twice (json keeps the last value silently)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s `object_pairs_hook`: the object, or :class:`DuplicateKeyError` naming
    a key given twice (a hand-merged file's second conversation "0", a value given twice)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(
                f"key {key!r} is given twice in one JSON object (JSON readers keep the last "
                "silently; osustat refuses)"
            )
        out[key] = value
    return out


def _jsonl(path: Path, name: str) -> tuple[list[dict[str, Any]], list[int]]:
    """The objects of a JSON Lines file and their line numbers (blank lines skipped)."""
    rows, lines = [], []
    for no, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=unique_keys)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}, line {no}: invalid JSON: {exc}.") from None
        except DuplicateKeyError as exc:
            raise ValueError(f"{name}, line {no}: {exc}.") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{name}, line {no}: expected a JSON object per line.")
        rows.append(obj)
        lines.append(no)
    return rows, lines


#: A records CSV's columns read as text: ids compare as written, never as numbers.
_ID_TEXT = {c: str for c in ("benchmark", "episode_id", "query_id", "method", "metric", "cell")}

#: pandas' default missing-value words (its ``read_csv`` documentation), for a records CSV's
#: other columns: a value written ``NA`` (R) or ``nan`` is missing, an id ``None`` or ``NA``
#: is a name, as the retrievals and TREC readers and osustat's own ``--records-out`` keep it.
_NA_WORDS = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip


def _records_csv_options(path: Path) -> dict[str, Any]:
    """``read_csv`` options of a records CSV: id columns as written (only an empty cell is
    missing), the others with pandas' missing-value words."""
    columns = pd.read_csv(path, encoding="utf-8", nrows=0).columns
    na = {c: [""] if c in _ID_TEXT else list(_NA_WORDS) for c in columns}
    return {"dtype": _ID_TEXT, "keep_default_na": False, "na_values": na}


def _read(
    path: Path, name: str, *, text: bool, fmt: str | None = None
) -> tuple[pd.DataFrame | list[dict[str, Any]], Sequence[int]]:
    """A table file's rows and their file lines (CSV, from 2; JSON Lines) or 0-based rows
    (Parquet), with the same errors for every reader.

    CSV and Parquet give a DataFrame indexed by those numbers; with `text`, CSV cells stay
    strings (``''`` when empty), without it a records CSV's id columns do (``'007'`` is
    not ``'7'``). JSON Lines gives a DataFrame, or with `text` the objects
    themselves (ids keep their JSON types: a key absent from one object does not turn
    another's integers into floats). `fmt` (``csv``, ``jsonl``, ``parquet``) decides the
    reader when given; otherwise the extension does.
    """
    fmt = fmt or format_of(path)
    try:
        if fmt == "csv":
            # records: ids as written ('007' and '7' are two queries, as in TREC); else
            # every cell as text
            options: dict[str, Any] = (
                {"dtype": str, "keep_default_na": False} if text else _records_csv_options(path)
            )
            df = pd.read_csv(path, encoding="utf-8", **options)
            df.index = pd.RangeIndex(2, 2 + len(df))
            return df, df.index  # a range: no list of a million ints
        if fmt == "jsonl":
            rows, lines = _jsonl(path, name)
            return (rows if text else pd.DataFrame(rows, index=lines)), lines
        df = pd.read_parquet(path)
        df.index = pd.RangeIndex(len(df))
        return df, df.index
    except UnicodeDecodeError as exc:
        with path.open("rb") as fh:
            raise ValueError(not_utf8(fh.read(4), name, exc)) from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name} is empty.") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"{name} is not valid CSV: {exc}") from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, ValueError) and str(exc).startswith(name):
            raise
        if isinstance(exc, FileNotFoundError | PermissionError):
            raise
        raise ValueError(f"cannot read {name}: {exc}") from None


def read_records(path: str | Path) -> pd.DataFrame:
    """Read long records from CSV, JSON Lines (.jsonl/.ndjson) or Parquet, by extension.

    The returned frame's index is the file's line number (CSV, JSON Lines) or 0-based row
    (Parquet), so :func:`load_records` can name lines in its errors.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Unknown extension (with a hint when the file looks like a TREC run or qrels), an
        empty file, a header without rows, text that is not UTF-8, invalid JSON (with its
        line) or an unreadable Parquet file -- each naming the file.
    """
    path = Path(path)
    name = f"records file {str(path)!r}"
    suffix = path.suffix.lower()
    if path.is_file() and suffix not in _TABLE_SUFFIXES:
        kind = _looks_like_trec(path)
        hint = ""
        if kind == "run":
            hint = (
                " It looks like a TREC run (qid Q0 docid rank score tag): pass --qrels QRELS "
                "--depth K (Python: osustat.records_from_trec)."
            )
        elif kind == "qrels":
            hint = " It looks like TREC qrels: give the run as the input and this file as --qrels."
        else:
            with path.open("rb") as fh:
                gzipped = is_gzip(fh.read(2))
            if gzipped:
                hint = (
                    " It is gzip-compressed: decompress it (gunzip) first, or keep the records "
                    "as Parquet, which is compressed already."
                )
        raise ValueError(
            f"cannot read {name}: unknown extension {suffix!r}; use {_RECORD_SUFFIXES}.{hint}"
        )
    _check_file(path, name)
    df, _ = _read(path, name, text=False)
    assert isinstance(df, pd.DataFrame)
    if df.empty:
        raise ValueError(f"{name} has no records (a header or nothing but blank lines).")
    return df


def load_records(path: str | Path) -> pd.DataFrame:
    """:func:`read_records` + :func:`osustat.validate_records`, errors naming the file and
    its lines (CSV/JSON Lines) or 0-based rows (Parquet)."""
    from osustat.schema import ValidatedRecords, validate_records

    path = Path(path)
    df = read_records(path)
    where = "rows (0-based)" if path.suffix.lower() in (".parquet", ".pq") else "lines"
    try:
        out = validate_records(df)
        if "budget" in out and (out["budget"] <= 0).any():
            bad = out.index[(out["budget"] <= 0).to_numpy()].tolist()
            raise ValueError(f"`budget` must be positive; bad values in rows {list_some(bad)}.")
    except (ValueError, TypeError) as exc:
        # one pass: a second replace would rename the "rows" the first one wrote
        msg = re.sub(
            r"\b(in )?rows ", lambda m: ("on " if m.group(1) else "") + where + " ", str(exc)
        )
        raise type(exc)(f"records file {str(path)!r}: {msg}") from None
    # still validated (a new index changes no check): analyze() and paired() use it as it is
    return ValidatedRecords(out.reset_index(drop=True))


#: The key of a records Parquet file's metadata under which ``osustat import`` keeps what it
#: said of the file (coverage per system, questions dropped by --intersection): ``analyze``
#: repeats it in its report's header, so an exclusion made at import is not lost on the way.
IMPORT_NOTES_KEY = b"osustat.import"


def import_notes(path: str | Path, n_rows: int | None = None) -> list[str]:
    """The lines ``osustat import`` kept in a records Parquet file's metadata, else none
    (CSV and JSON Lines carry no metadata; a file not written by import has none). Given the
    `n_rows` read from the file, notes of a file whose rows changed since import (filtered
    with pyarrow, the metadata kept) are replaced by one line saying so: they describe other
    rows."""
    path = Path(path)
    if path.suffix.lower() not in (".parquet", ".pq"):
        return []
    import json

    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(IMPORT_NOTES_KEY)
    if raw is None:
        return []
    try:
        said = json.loads(raw)
        lines = said["lines"]
        if not isinstance(lines, list):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        return [f"(its notes under the metadata key {IMPORT_NOTES_KEY.decode()!r} cannot be read)"]
    rows = said.get("rows")
    if n_rows is not None and isinstance(rows, int) and rows != n_rows:
        return [
            f"(not repeated: the file held {rows:,} rows when `osustat import` wrote it and "
            f"holds {n_rows:,} now -- it was changed since, so what import said of its "
            "coverage describes other rows; import the systems' files again for notes that "
            "match)"
        ]
    return [str(x) for x in lines]


def read_rows(
    path: Path, what: str, fmt: str | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of a CSV, JSON Lines or Parquet file as dicts (CSV cells as text), each with its
    location (``'line 7'``, ``'row 0'``) for error messages. `fmt` (``csv``, ``jsonl``,
    ``parquet``: a mapping's declared format) decides the reader; without it the extension
    does, and an unknown one is refused."""
    name = f"{what} file {str(path)!r}"
    suffix = path.suffix.lower()
    if fmt is None and suffix not in _TABLE_SUFFIXES:
        if not path.exists():
            raise FileNotFoundError(f"{name} does not exist.")
        raise ValueError(
            f"cannot read {name}: unknown extension {suffix!r}; use {_RECORD_SUFFIXES}."
        )
    _check_file(path, name)
    fmt = fmt or format_of(path)
    data, numbers = _read(path, name, text=True, fmt=fmt)
    rows = data if isinstance(data, list) else data.to_dict("records")
    label = "row" if fmt == "parquet" else "line"
    return rows, [f"{label} {i}" for i in numbers]


def require_columns(
    rows: list[dict[str, Any]], required: Sequence[str], path: Path, what: str
) -> None:
    found = list(rows[0]) if rows else []
    missing = [c for c in required if c not in found]
    if missing or not rows:
        raise ValueError(
            f"{what} file {str(path)!r} is missing required columns {missing or list(required)}; "
            f"found columns {found}. Required: {list(required)}."
        )


def blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == ""


def split_ids(value: Any, *, split: str) -> list[str]:
    """A list of ids from a JSON/Parquet list or a separated string."""
    if isinstance(value, list | tuple | np.ndarray):
        return [str(x).strip() for x in value]
    if blank(value):
        return []
    return [x for x in re.split(split, str(value).strip()) if x]


def as_int(value: Any, name: str, loc: str) -> int:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{loc}: `{name}` must be an integer; got {value!r}.") from None
    if not math.isfinite(x) or x != round(x):
        raise ValueError(f"{loc}: `{name}` must be an integer; got {value!r}.")
    return int(x)


class Loc:
    """``<what> file '<path>', line <no>``, formatted only when an error needs it."""

    __slots__ = ("no", "prefix")

    def __init__(self, prefix: str, no: int) -> None:
        self.prefix, self.no = prefix, no

    def __str__(self) -> str:
        return f"{self.prefix}, line {self.no}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def trec_lines(path: Path, what: str, n_fields: int) -> list[tuple[int, list[str]]]:
    if not path.exists():
        raise FileNotFoundError(f"{what} file {str(path)!r} does not exist.")
    if path.is_dir():
        raise ValueError(f"{what} file {str(path)!r} is a folder, not a file.")
    prefix = f"{what} file {str(path)!r}"
    raw = path.read_bytes()
    if is_gzip(raw):  # gzip (qrels.gz, run.gz), as trec_eval users keep them
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{prefix} is gzip-compressed but cannot be read ({exc}).") from None
    try:
        text = raw.decode("utf-8-sig")  # a BOM is read, as the CSV reader does
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{prefix} is not UTF-8 text ({exc.reason} at byte {exc.start})."
        ) from None
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != n_fields:
            # by the layout asked for (`what` may be an import's "sysA run")
            expected = "qid Q0 docid rank score tag" if n_fields == 6 else "qid iteration docid rel"
            raise ValueError(
                f"{prefix}, line {no}: expected {n_fields} whitespace-separated fields "
                f"({expected}); got {len(fields)}: {line.strip()!r}."
            )
        out.append((no, fields))
    if not out:
        raise ValueError(f"{prefix} is empty.")
    return out
