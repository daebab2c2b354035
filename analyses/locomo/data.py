"""LoCoMo loading: ``locomo10.json`` read into conversations of turns and questions.

Format (``shared/data/locomo/README.md``): a JSON list of conversations ``{sample_id,
conversation: {speaker_a, speaker_b, session_<n>: [turns], ...}, qa: [...]}``; a turn is
``{speaker, dia_id, text}`` plus, on image turns, ``blip_caption``; a question is
``{question, answer?, evidence: [dia_id strings], category}``.

Everything is checked while reading; a malformed file raises :class:`LocomoDataError` (a
``ValueError``) naming the file, the conversation (``sample_id`` or its position) and the field,
before anything is computed or written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORY_NAMES",
    "Conversation",
    "LocomoDataError",
    "Question",
    "Turn",
    "load_audit",
    "load_locomo",
]

#: The category integers as the repository's own evaluation code uses them (README, "Known
#: data problems"); the one place the integer gets a name.
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


class LocomoDataError(ValueError):
    """A LoCoMo file is malformed (the message names the file, conversation and field)."""


@dataclass(frozen=True)
class Turn:
    """One dialogue turn: ``session`` is n of ``session_<n>``, ``position`` its 1-based k."""

    dia_id: str
    session: int
    position: int
    speaker: str
    text: str
    caption: str | None


@dataclass(frozen=True)
class Question:
    """One QA item; ``index`` is its 0-based position in the conversation's ``qa`` list."""

    index: int
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def n_sessions(self) -> int:
        return max((t.session for t in self.turns), default=0)


def _err(path: str, where: str, msg: str) -> LocomoDataError:
    return LocomoDataError(f"{path}: {where}: {msg}")


def _str_field(obj: Any, key: str, path: str, where: str) -> str:
    if not isinstance(obj, dict) or key not in obj:
        raise _err(path, where, f"missing field {key!r}.")
    value = obj[key]
    if not isinstance(value, str):
        raise _err(path, where, f"field {key!r} must be a string; got {type(value).__name__}.")
    return value


def _turns(conv: dict[str, Any], path: str, where: str) -> tuple[Turn, ...]:
    out: list[Turn] = []
    n = 1
    while f"session_{n}" in conv:
        raw = conv[f"session_{n}"]
        if not isinstance(raw, list):
            raise _err(path, f"{where}, session_{n}", "must be a list of turns.")
        for k, turn in enumerate(raw):
            at = f"{where}, session_{n}[{k}]"
            if not isinstance(turn, dict):
                raise _err(path, at, "a turn must be an object.")
            dia = _str_field(turn, "dia_id", path, at)
            speaker = _str_field(turn, "speaker", path, at)
            text = _str_field(turn, "text", path, at)
            cap = turn.get("blip_caption")
            if cap is not None and not isinstance(cap, str):
                raise _err(path, at, "field 'blip_caption' must be a string.")
            out.append(Turn(dia, n, k + 1, speaker, text, cap))
        n += 1
    if not out:
        raise _err(path, where, "has no turns (no 'session_1' list).")
    ids = [t.dia_id for t in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise _err(path, where, f"duplicate dia_id values {dup[:5]}.")
    return tuple(out)


def _questions(raw: Any, path: str, where: str) -> tuple[Question, ...]:
    if not isinstance(raw, list):
        raise _err(path, where, "field 'qa' must be a list.")
    out = []
    for i, q in enumerate(raw):
        at = f"{where}, qa[{i}]"
        text = _str_field(q, "question", path, at)
        cat = q.get("category")
        if isinstance(cat, bool) or not isinstance(cat, int) or cat not in CATEGORY_NAMES:
            raise _err(path, at, f"field 'category' must be one of 1-5; got {cat!r}.")
        ev = q.get("evidence")
        if not isinstance(ev, list) or not all(isinstance(e, str) for e in ev):
            raise _err(path, at, "field 'evidence' must be a list of strings.")
        out.append(Question(i, text, cat, tuple(ev)))
    return tuple(out)


def _read_json(path: str | Path) -> tuple[str, Any]:
    """The path as text and the file's JSON; :class:`LocomoDataError` naming the file if it is
    not JSON."""
    p = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            return p, json.load(fh)
    except json.JSONDecodeError as exc:
        raise LocomoDataError(f"{p}: not valid JSON ({exc}).") from exc


def load_locomo(path: str | Path) -> list[Conversation]:
    """Read ``locomo10.json`` (or a file of the same format) into conversations.

    Raises
    ------
    LocomoDataError
        Not JSON, not a list, or a conversation without ``sample_id``, ``conversation``,
        ``qa``, speakers, or a turn without ``dia_id``/``speaker``/``text`` (the message names
        the conversation and the field).
    """
    p, data = _read_json(path)
    if not isinstance(data, list) or not data:
        raise LocomoDataError(f"{p}: must be a non-empty JSON list of conversations.")
    convs = []
    seen: set[str] = set()
    for j, raw in enumerate(data):
        where = f"conversation [{j}]"
        sid = _str_field(raw, "sample_id", p, where)
        where = f"conversation {sid!r} ([{j}])"
        if sid in seen:
            raise _err(p, where, "duplicate sample_id.")
        seen.add(sid)
        conv = raw.get("conversation")
        if not isinstance(conv, dict):
            raise _err(p, where, "missing field 'conversation' (an object).")
        if "qa" not in raw:
            raise _err(p, where, "missing field 'qa'.")
        speakers = (
            _str_field(conv, "speaker_a", p, where),
            _str_field(conv, "speaker_b", p, where),
        )
        turns = _turns(conv, p, where)
        convs.append(Conversation(sid, speakers, turns, _questions(raw["qa"], p, where)))
    return convs


def load_audit(
    path: str | Path, conversations: list[Conversation]
) -> dict[tuple[str, int], tuple[str, ...]]:
    """The audit overlay's corrected evidence: ``(sample_id, qa index) -> correct_evidence``.

    Only records whose ``correct_evidence`` differs from ``cited_evidence`` are returned (the
    README's 96). ``question_id`` ``locomo_<i>_qa<k>``: ``i`` is the conversation's 0-based
    position in the file.
    """
    p, data = _read_json(path)
    if not isinstance(data, list):
        raise LocomoDataError(f"{p}: must be a JSON list of audit records.")
    out: dict[tuple[str, int], tuple[str, ...]] = {}
    for j, rec in enumerate(data):
        where = f"record [{j}]"
        qid = _str_field(rec, "question_id", p, where)
        try:
            head, k = qid.split("_qa")
            i = int(head.removeprefix("locomo_"))
            conv = conversations[i]
            conv.questions[int(k)]
        except (ValueError, IndexError) as exc:
            raise _err(p, where, f"question_id {qid!r} names no question of the data.") from exc
        cited, correct = rec.get("cited_evidence"), rec.get("correct_evidence")
        for name, v in (("cited_evidence", cited), ("correct_evidence", correct)):
            if not isinstance(v, list) or not all(isinstance(e, str) for e in v):
                raise _err(p, where, f"field {name!r} must be a list of strings.")
        if set(correct) != set(cited):
            out[(conv.sample_id, int(k))] = tuple(correct)
    return out
