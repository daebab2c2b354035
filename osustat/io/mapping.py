"""A declared mapping of a harness's output file: where its answers are, which fields say what.

A mapping is a small TOML file (docs/systems.md, "The general reader"); the shipped ones
(``osustat/io/mappings/<name>.toml``: ``mem0``, ``zep``) are the named readers. The mapping
knows no benchmark: it says how to find each answer's conversation, its question (by
position, id or text) and its scores; :mod:`osustat.io.join` matches them to a benchmark's
questions.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from osustat._validation import unique_items

__all__ = ["READS", "Mapping", "Retrieved", "Score", "load_mapping", "shipped_mappings"]

#: How a score field is read: ``binary`` (true/false, "True"/"False", "yes"/"no", 0/1 as
#: numbers or strings -> 0.0/1.0), ``number`` (a finite number or numeric string).
READS = ("binary", "number")
_FORMATS = ("json", "jsonl", "csv", "parquet", "trec")
_KEYS = ("position", "id", "text")
_KEYS_OF = {
    "format",
    "answers",
    "conversation",
    "conversation_pattern",
    "conversation_is",
    "question",
    "position_field",
    "position_base",
    "position_counts",
    "id_field",
    "text_field",
    "check",
    "scores",
    "retrieved",
    "description",
}


@dataclass(frozen=True)
class Score:
    """One score of an answer: the metric name it becomes, its field and how it is read;
    `labels` (a judge's own words as declared, each to 1.0 or 0.0; matched ignoring case)
    replace the binary reading's true/false words when declared."""

    metric: str
    field: str
    read: str
    labels: tuple[tuple[str, float], ...] = ()

    @functools.cached_property
    def folded_labels(self) -> dict[str, float]:
        """`labels` keyed by their case-folded words: the lookup of every answer's value."""
        return {word.casefold(): value for word, value in self.labels}


@dataclass(frozen=True)
class Retrieved:
    """A ranked list of the benchmark's evidence ids per answer, scored at the depths."""

    field: str
    depths: tuple[int, ...]
    hit_k: tuple[int, ...]


@dataclass(frozen=True)
class Mapping:
    """A harness's output layout (see the module docstring and docs/systems.md)."""

    name: str
    format: str | None
    answers: str
    conversation: str
    conversation_pattern: re.Pattern[str] | None
    conversation_is: str
    question: str
    position_field: str | None
    position_base: int
    position_counts: str
    id_field: str | None
    text_field: str | None
    check: dict[str, str]
    scores: tuple[Score, ...]
    retrieved: Retrieved | None
    description: str = ""

    @property
    def grouped(self) -> bool:
        """The answers are an object whose keys are conversations and values lists."""
        return self.answers == "*" or self.answers.endswith(".*")


def _str(raw: dict[str, Any], key: str, where: str, default: str | None = None) -> str | None:
    value = raw.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}: `{key}` must be a string; got {value!r}.")
    return value


def _choice(
    raw: dict[str, Any], key: str, where: str, allowed: tuple[str, ...], default: str
) -> str:
    value = _str(raw, key, where, default)
    if value not in allowed:
        raise ValueError(f"{where}: `{key}` must be one of {list(allowed)}; got {value!r}.")
    return value


def _ints(value: Any, key: str, where: str) -> tuple[int, ...]:
    if (
        not isinstance(value, list)
        or not value
        or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in value)
    ):
        raise ValueError(f"{where}: `{key}` must be a list of positive integers; got {value!r}.")
    try:
        unique_items(value, key)  # depths = [3, 3] wrote every row twice (stop 57)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return tuple(value)


def _scores(raw: Any, where: str) -> tuple[Score, ...]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: `[scores]` must be a table (metric = {{field, read}}).")
    out = []
    for metric, spec in raw.items():
        at = f"{where}, scores.{metric}"
        keys = {"field", "read", "true", "false"}
        if not isinstance(spec, dict) or set(spec) - keys or "field" not in spec:
            raise ValueError(
                f'{at}: give {{ field = "...", read = "binary" | "number" }}, and for a '
                'judge\'s own labels true = ["CORRECT"], false = ["WRONG"].'
            )
        field = _str(spec, "field", at)
        read = _choice(spec, "read", at, READS, "number")
        assert field is not None
        out.append(Score(metric.strip().lower(), field, read, _labels(spec, read, at)))
    return tuple(out)


def _labels(spec: dict[str, Any], read: str, at: str) -> tuple[tuple[str, float], ...]:
    """The declared labels of a binary score (both lists or neither: every label a file may
    hold is declared, so none becomes 0 by default)."""
    if "true" not in spec and "false" not in spec:
        return ()
    if read != "binary":
        raise ValueError(f'{at}: `true` / `false` labels need read = "binary".')
    lists = {}
    for key in ("true", "false"):
        value = spec.get(key)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(x, str) and x.strip() for x in value)
        ):
            raise ValueError(
                f"{at}: `{key}` must be a non-empty list of labels (strings); got {value!r} — "
                "declare both `true` and `false`, so no label is read as 0 by default."
            )
        lists[key] = [x.strip() for x in value]  # as declared (messages); folded to match
    both = sorted({x.casefold() for x in lists["true"]} & {x.casefold() for x in lists["false"]})
    if both:
        raise ValueError(f"{at}: labels {both} are in both `true` and `false` (case ignored).")
    return tuple((x, 1.0) for x in lists["true"]) + tuple((x, 0.0) for x in lists["false"])


def _retrieved(raw: Any, where: str) -> Retrieved | None:
    if raw is None:
        return None
    at = f"{where}, retrieved"
    if not isinstance(raw, dict) or set(raw) - {"field", "depths", "hit_k"} or "field" not in raw:
        raise ValueError(f'{at}: give {{ field = "...", depths = [10], hit_k = [2] }}.')
    field = _str(raw, "field", at)
    assert field is not None
    return Retrieved(
        field,
        _ints(raw.get("depths", [10]), "depths", at),
        _ints(raw.get("hit_k", [2]), "hit_k", at),
    )


def parse_mapping(raw: dict[str, Any], name: str) -> Mapping:
    """A :class:`Mapping` from a TOML table; ValueError naming `name` and the key otherwise."""
    where = f"mapping {name}"
    unknown = sorted(set(raw) - _KEYS_OF)
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; known: {sorted(_KEYS_OF)}.")
    fmt = raw.get("format")
    if fmt is not None and fmt not in _FORMATS:
        raise ValueError(f"{where}: `format` must be one of {list(_FORMATS)}; got {fmt!r}.")
    pattern = _str(raw, "conversation_pattern", where)
    try:
        compiled = re.compile(pattern) if pattern else None
    except re.error as exc:
        raise ValueError(f"{where}: `conversation_pattern` is not a regex: {exc}.") from None
    question = _choice(raw, "question", where, _KEYS, "position")
    base = raw.get("position_base", 0)
    if base not in (0, 1) or isinstance(base, bool):
        raise ValueError(f"{where}: `position_base` must be 0 or 1; got {base!r}.")
    check = raw.get("check", {})
    if not isinstance(check, dict) or not all(isinstance(v, str) for v in check.values()):
        raise ValueError(f"{where}: `[check]` must map question attributes to field names.")
    m = Mapping(
        name=name,
        format=fmt,
        answers=_str(raw, "answers", where, "") or "",
        conversation=_str(raw, "conversation", where) or "",
        conversation_pattern=compiled,
        conversation_is=_choice(raw, "conversation_is", where, ("id", "index"), "id"),
        question=question,
        position_field=_str(raw, "position_field", where),
        position_base=int(base),
        position_counts=_choice(raw, "position_counts", where, ("answerable", "all"), "answerable"),
        id_field=_str(raw, "id_field", where),
        text_field=_str(raw, "text_field", where),
        check=dict(check),
        scores=_scores(raw.get("scores", {}), where),
        retrieved=_retrieved(raw.get("retrieved"), where),
        description=_str(raw, "description", where, "") or "",
    )
    if not m.conversation:
        raise ValueError(f'{where}: `conversation` is required ("key" or a field name).')
    if m.conversation == "key" and not m.grouped:
        raise ValueError(
            f'{where}: `conversation = "key"` needs answers grouped by conversation '
            '(`answers = "*"` or "path.*").'
        )
    if question == "id" and not m.id_field:
        raise ValueError(f'{where}: `question = "id"` needs `id_field`.')
    if question == "text" and not m.text_field:
        raise ValueError(f'{where}: `question = "text"` needs `text_field`.')
    if not m.scores and m.retrieved is None:
        raise ValueError(f"{where}: declare at least one `[scores]` entry or `retrieved`.")
    return m


def shipped_mappings() -> tuple[str, ...]:
    """The names of the mappings shipped with osustat (the named readers)."""
    folder = resources.files("osustat.io").joinpath("mappings")
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


def load_mapping(spec: str | Path) -> Mapping:
    """A shipped mapping by name (``mem0``, ``zep``) or a TOML file's path."""
    text: str
    if isinstance(spec, str) and spec in shipped_mappings():
        res = resources.files("osustat.io").joinpath("mappings", f"{spec}.toml")
        text, name = res.read_text("utf-8"), spec
    else:
        path = Path(spec)
        if not path.is_file():
            raise ValueError(
                f"mapping {str(spec)!r} is neither a file nor a shipped reader "
                f"({', '.join(shipped_mappings())})."
            )
        text, name = path.read_text("utf-8"), repr(str(path))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"mapping {name} is not valid TOML: {exc}.") from None
    return parse_mapping(raw, name)
