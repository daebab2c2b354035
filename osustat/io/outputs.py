"""Reading a system's per-question output file through a declared mapping.

JSON (one list of answers, or an object of lists keyed by conversation), JSON Lines, CSV,
Parquet and TREC runs (one row per qid with its ranked docids as ``retrieved``). Every answer
becomes an :class:`Answer` with its place in the file; every field the mapping names must be
there and every score must read as a score, else ``ValueError`` naming the file, the answer's
position and the field. Nothing here knows a benchmark.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from osustat._validation import Problems, not_utf8

from .mapping import Mapping
from .reading import (
    DuplicateKeyError,
    blank,
    format_of,
    read_rows,
    split_ids,
    trec_lines,
    unique_keys,
)

__all__ = ["Answer", "read_answers", "read_score"]

_TRUE = {"true", "yes", "1", "1.0"}
_FALSE = {"false", "no", "0", "0.0"}


@dataclass(frozen=True)
class Answer:
    """One answer of a system: where it is, its conversation and question key, its scores."""

    where: str
    conversation: str
    position: int | None
    question_id: str | None
    text: str | None
    scores: dict[str, float]
    retrieved: tuple[str, ...] | None
    checks: dict[str, str]


def read_score(value: Any, read: str) -> float | None:
    """`value` as a score (``binary``: 0.0/1.0; ``number``: finite float), or None if it is not.

    >>> from osustat.io.outputs import read_score
    >>> [read_score(v, "binary") for v in (True, "False", 1, "0", 0.5)]
    [1.0, 0.0, 1.0, 0.0, None]
    >>> read_score("0.25", "number"), read_score("nan", "number"), read_score(True, "number")
    (0.25, None, None)
    """
    if read == "binary":
        if isinstance(value, bool | np.bool_):
            return float(bool(value))
        if isinstance(value, int | float | np.integer | np.floating):
            return float(value) if value in (0, 1) else None
        text = str(value).strip().lower()
        return 1.0 if text in _TRUE else 0.0 if text in _FALSE else None
    if isinstance(value, bool | np.bool_) or value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _at(obj: Any, path: str, name: str) -> Any:
    for part in [p for p in path.split(".") if p]:
        if not isinstance(obj, dict) or part not in obj:
            raise ValueError(f"{name}: no `{path}` in the file (missing `{part}`).")
        obj = obj[part]
    return obj


def _json_groups(path: Path, name: str, m: Mapping) -> list[tuple[str | None, list[Any]]]:
    """The answer lists of a JSON file: ``[(conversation key or None, answers)]``."""
    try:
        # a BOM is read, not refused; a key given twice is refused, not kept last
        data = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not valid JSON: {exc}.") from None
    except DuplicateKeyError as exc:
        raise ValueError(f"{name}: {exc}.") from None
    except UnicodeDecodeError as exc:
        with path.open("rb") as fh:
            raise ValueError(not_utf8(fh.read(4), name, exc)) from None
    if m.grouped:
        obj = _at(data, m.answers[:-1].rstrip("."), name)
        if not isinstance(obj, dict):
            raise ValueError(f"{name}: `answers = {m.answers!r}` needs an object of lists there.")
        out: list[tuple[str | None, list[Any]]] = []
        for key, items in obj.items():
            if not isinstance(items, list):
                raise ValueError(f"{name}, conversation {key!r}: expected a list of answers.")
            out.append((str(key), items))
        return out
    items = _at(data, m.answers, name)
    if not isinstance(items, list):
        raise ValueError(f"{name}: `answers = {m.answers!r}` is not a list of answers.")
    return [(None, items)]


def _format(path: Path, m: Mapping) -> str:
    """The mapping's declared format; only without one, the file's extension."""
    return m.format or format_of(path) or path.suffix.lower().lstrip(".")


_MISSING = object()


def _lookup(item: dict[str, Any], field: str) -> Any:
    """`item`'s value of `field`: the key itself, else a dotted path into nested objects
    (``judge.label``); ``_MISSING`` when neither is there."""
    if field in item:
        return item[field]
    if "." not in field:
        return _MISSING
    obj: Any = item
    for part in field.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return _MISSING
        obj = obj[part]
    return obj


def _absent(item: dict[str, Any], field: str) -> str | None:
    """Why `field` gives no value: ``missing`` (absent), ``null``, ``NaN``, ``empty``; else None."""
    value = _lookup(item, field)
    if value is _MISSING:
        return "missing" + (" (no such key, nor that dotted path)" if "." in field else "")
    if value is None:
        return "null"
    if isinstance(value, float | np.floating) and math.isnan(value):
        return "NaN"
    return "empty" if blank(value) else None


def _field(item: dict[str, Any], field: str, where: str, hint: str = "") -> Any:
    why = _absent(item, field)
    if why is not None:
        raise ValueError(f"{where}: field `{field}` is {why}.{hint}")
    return _lookup(item, field)


def _other_reader(item: dict[str, Any], m: Mapping, system: str) -> str:
    """A hint naming the shipped readers whose score fields `item` carries, or ``''``."""
    from .mapping import load_mapping, shipped_mappings

    fits = []
    for name in shipped_mappings():
        fields = [s.field for s in load_mapping(name).scores]
        if name != m.name and fields and all(f in item for f in fields):
            fits.append(name)
    if not fits:
        return ""
    tries = " or ".join(f"--reader {system}={name}" for name in fits)
    return f" Is it another harness's file? Try {tries}."


def _conversation(
    key: str | None, item: dict[str, Any], where: str, m: Mapping, system: str
) -> str:
    raw = key if m.conversation == "key" else _field(item, m.conversation, where)
    text = str(raw).strip()
    if m.conversation_pattern is not None:
        hit = m.conversation_pattern.search(text)
        if hit is None:
            what = "key" if m.conversation == "key" else f"field `{m.conversation}`"
            raise ValueError(
                f"{where}: conversation {what} {text!r} does not match "
                f"`conversation_pattern` {m.conversation_pattern.pattern!r}."
                + _other_reader(item, m, system)
            )
        text = hit.group(1) if hit.groups() else hit.group(0)
    return text


def _answer(item: Any, where: str, key: str | None, place: int, m: Mapping, system: str) -> Answer:
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected an object (one answer); got {type(item).__name__}.")
    conv = _conversation(key, item, where, m, system)
    position: int | None = None
    if m.question == "position":
        if m.position_field:
            raw = _field(item, m.position_field, where)
            x = read_score(raw, "number")
            if x is None or x != round(x):
                raise ValueError(
                    f"{where}: field `{m.position_field}` must be an integer; got {raw!r}."
                )
            position = int(x) - m.position_base
        else:
            position = place
    qid = str(_field(item, m.id_field, where)).strip() if m.id_field else None
    text = str(_field(item, m.text_field, where)) if m.text_field else None
    scores = {}
    for s in m.scores:
        hint = _other_reader(item, m, system) if _lookup(item, s.field) is _MISSING else ""
        raw = _field(item, s.field, where, hint)
        value = (
            s.folded_labels.get(str(raw).strip().casefold())
            if s.labels
            else read_score(raw, s.read)
        )
        if value is None:
            raise ValueError(
                f"{where}{_which(None if key else conv, qid, text)}: field `{s.field}` is not "
                f"a {s.read} score; got {raw!r}{_accepted(s)}."
            )
        scores[s.metric] = value
    retrieved = None
    if m.retrieved is not None:
        raw = _lookup(item, m.retrieved.field)
        if raw is None or raw is _MISSING:
            raise ValueError(
                f"{where}: field `{m.retrieved.field}` is {_absent(item, m.retrieved.field)}."
            )
        retrieved = tuple(split_ids(raw, split=r"[;,\s]+"))
    checks = {attr: str(_field(item, f, where)).strip() for attr, f in m.check.items()}
    return Answer(where, conv, position, qid, text, scores, retrieved, checks)


def _which(conv: str | None, qid: str | None, text: str | None) -> str:
    """The answer's conversation (unless its place already names it) and question, for a
    message about one of its fields."""
    said = [] if conv is None else [f"conversation {conv!r}"]
    if qid is not None:
        said.append(f"question id {qid!r}")
    elif text is not None:
        said.append(f"question {text.strip()[:80]!r}")
    return f" ({', '.join(said)})" if said else ""


def _accepted(s: Any) -> str:
    """What the score's reading accepts, for the message refusing a value."""
    if s.labels:
        return (
            f"; the mapping's labels: true {[x for x, v in s.labels if v == 1.0]}, false "
            f"{[x for x, v in s.labels if v == 0.0]} (case ignored)"
        )
    if s.read == "binary":
        return (
            " (binary reads true/false, yes/no, 1/0; a judge's own labels are declared "
            'with true = ["CORRECT"], false = ["WRONG"])'
        )
    return " (a finite number)"


def _trec_rows(path: Path, system: str) -> tuple[list[dict[str, Any]], list[str]]:
    """A TREC run (``qid Q0 docid rank score tag``) as one row per qid: ``qid``, ``tag`` and
    ``retrieved`` (the docids in trec_eval's order: score descending, ties by docid
    descending), located at the qid's first line. One system per file: a second tag is an
    error."""
    from .trec import _trec_order

    entries: dict[str, list[tuple[int, float, str, Any]]] = {}
    first: dict[str, int] = {}
    tags: dict[str, int] = {}
    for no, (qid, _, docid, rank, score, tag) in trec_lines(path, f"{system} run", 6):
        x, r = read_score(score, "number"), read_score(rank, "number")
        if x is None or r is None:
            raise ValueError(
                f"{system} run file {str(path)!r}, line {no}: rank and score must be numbers; "
                f"got {rank!r}, {score!r}."
            )
        tags.setdefault(tag, no)
        if len(tags) > 1:
            raise ValueError(
                f"{system} run file {str(path)!r}, line {no}: a second run tag {tag!r} (first "
                f"{next(iter(tags))!r}); give one file per system."
            )
        first.setdefault(qid, no)
        entries.setdefault(qid, []).append((int(r), x, docid, None))
    rows = [
        {"qid": q, "tag": next(iter(tags)), "retrieved": _trec_order(e, "score")}
        for q, e in entries.items()
    ]
    return rows, [f"line {first[q]}" for q in entries]


def read_answers(
    path: str | Path, mapping: Mapping, *, system: str = "system", problems: Problems | None = None
) -> list[Answer]:
    """Every answer of `path` under `mapping`, in file order.

    Positions (``question = "position"`` without ``position_field``) are the answer's place
    in its conversation's list: within each list of a grouped JSON file, otherwise counted
    per conversation in file order.

    Raises
    ------
    ValueError
        The file cannot be read in the mapping's format, the answers are not where the
        mapping says, a named field is missing, a score is not a score -- each naming the
        file, the answer's position and the field.
    """
    path = Path(path)
    name = f"{system} file {str(path)!r}"
    if not path.exists():
        raise FileNotFoundError(f"{name} does not exist.")
    if not path.is_file():
        raise ValueError(f"{name} is not a file (a folder).")
    fmt = _format(path, mapping)
    out: list[Answer] = []
    own = problems is None  # else the caller's collection, raised by the caller
    found = (
        Problems(f"{name} (every answer read; nothing written)") if problems is None else problems
    )
    counts: dict[str, int] = {}  # answers met so far per conversation (positions)

    def place_of(row: Any, where: str) -> int:
        conv = _conversation(None, row, where, mapping, system) if isinstance(row, dict) else ""
        counts[conv] = counts.get(conv, 0) + 1
        return counts[conv] - 1

    if fmt == "json":
        for key, items in _json_groups(path, name, mapping):
            for i, item in enumerate(items):
                where = f"{name}, " + (
                    f"conversation {key!r}, answer {i}" if key else f"answer {i}"
                )
                with found.collect():
                    # a flat list holds every conversation's answers: count per conversation
                    place = i if key is not None else place_of(item, where)
                    out.append(_answer(item, where, key, place, mapping, system))
        if own:
            found.raise_any()
        return out
    if fmt not in ("jsonl", "csv", "parquet", "trec"):
        raise ValueError(f"{name}: unknown format {fmt!r}; set `format` in the mapping.")
    if mapping.grouped:
        raise ValueError(f'{name}: `answers = "*"` applies to JSON files only.')
    rows, locs = _trec_rows(path, system) if fmt == "trec" else read_rows(path, system, fmt)
    for row, loc in zip(rows, locs, strict=True):
        where = f"{name}, {loc}"
        with found.collect():
            out.append(_answer(row, where, None, place_of(row, where), mapping, system))
    if own:
        found.raise_any()
    return out
