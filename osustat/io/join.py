"""Joining a system's answers to a benchmark's questions: records and coverage.

The benchmark supplies a :class:`QuestionTable` (its conversations in order and every question
with its id, positions, text, strata, cell and evidence ids); :func:`join_answers` matches each
:class:`~osustat.io.outputs.Answer` to exactly one question by the mapping's declared key and
checks the question text (whitespace- and case-normalized). A mismatch, an unknown
conversation, a position past the end, an ambiguous text or two answers to one question is a
``ValueError`` naming the file, the answer's position and both texts; questions no answer
covers and answers to excluded questions are counted (:class:`Coverage`), never dropped
silently.

Records (``osustat/schema.py``): ``method`` = the system's name, ``episode_id`` = the
conversation (the cluster: analyse LoCoMo at ``--unit episode``), ``query_id`` = the
benchmark's question id, one metric per score, ``budget`` = :data:`ANSWER_BUDGET` for answer
scores (a system's answer has no token budget of ours) and the depth for retrieval scores.
Each score is also written once per stratum of its question as ``<metric>.<stratum>``
(lower case: ``judge.cat2``, ``judge.t+e-``), so that ``osustat analyze --unit episode`` gives
per-stratum conversation-level tests without any change, and once as ``<metric>.cells`` for
the questions that have a cell, with the cell: ``osustat analyze --unit query --metric
judge.cells`` is the cell-conditional analysis (per-cell tests, interaction) of those questions.
Only the ``.cells`` rows and the cell's own stratum carry the ``cell`` (the schema refuses a
metric whose queries have a cell on some rows and none on others).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from osustat._validation import Problems, list_some
from osustat.record_row import QueryKey

from .evidence import evidence_metrics
from .mapping import Mapping
from .outputs import Answer

__all__ = [
    "ANSWER_BUDGET",
    "BenchmarkQuestion",
    "Coverage",
    "Joined",
    "QuestionTable",
    "join_answers",
    "normalize_text",
]

#: The ``budget`` of answer-level records (the schema needs a positive integer).
ANSWER_BUDGET = 1


@dataclass(frozen=True)
class BenchmarkQuestion:
    """One question of a benchmark, as the join needs it."""

    conversation: str
    query_id: str
    position: int  # among all of its conversation's questions, 0-based
    answerable_position: int | None  # among the not-excluded ones; None when excluded
    text: str
    strata: tuple[str, ...] = ()
    cell: str | None = None
    evidence: tuple[str, ...] = ()
    excluded: str | None = None  # the reason, when the benchmark leaves it out
    attributes: dict[str, str] = field(default_factory=dict)  # checked against [check]


@dataclass(frozen=True)
class QuestionTable:
    """A benchmark's questions and its conversations in the order of its data file."""

    benchmark: str
    conversations: tuple[str, ...]
    questions: tuple[BenchmarkQuestion, ...]
    description: str = ""

    def __post_init__(self) -> None:
        ids = [q.query_id for q in self.questions]
        dup = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) < len(ids) else []
        if dup:
            raise ValueError(f"question table: duplicate question ids {list_some(dup)}.")


@dataclass(frozen=True)
class Coverage:
    """What one system's file covers of the benchmark."""

    system: str
    answers: int
    answered: int
    not_answered: tuple[str, ...]
    excluded_answered: tuple[str, ...]
    excluded_total: int
    no_evidence: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        out = [
            f"{self.system}: {self.answers:,} answers; {self.answered:,} questions answered, "
            f"{len(self.not_answered):,} not answered, {self.excluded_total:,} excluded by the "
            f"benchmark ({len(self.excluded_answered):,} of them answered, not used)"
        ]
        if self.not_answered:
            out.append(f"  not answered: {list_some(self.not_answered)}")
        if self.excluded_answered:
            out.append(f"  answered but excluded, not used: {list_some(self.excluded_answered)}")
        if self.no_evidence:
            out.append(
                f"  {len(self.no_evidence):,} questions without evidence ids: no retrieval "
                f"score ({list_some(self.no_evidence)})"
            )
        out += [f"  warning: {w}" for w in self.warnings]
        return out


@dataclass(frozen=True)
class Joined:
    """Records of one system and its coverage."""

    records: pd.DataFrame
    coverage: Coverage


def normalize_text(text: str) -> str:
    """Lower case, whitespace runs collapsed, ends stripped."""
    return re.sub(r"\s+", " ", text).strip().lower()


class _Index:
    """Lookups of a question table by each key a mapping can declare."""

    def __init__(self, table: QuestionTable) -> None:
        self.table = table
        self.by_conv: dict[str, list[BenchmarkQuestion]] = defaultdict(list)
        for q in table.questions:
            self.by_conv[q.conversation].append(q)
        self.by_id = {q.query_id: q for q in table.questions}
        self.by_text: dict[tuple[str, str], list[BenchmarkQuestion]] = defaultdict(list)
        for q in table.questions:  # excluded ones too: an answer to one is counted, not refused
            self.by_text[(q.conversation, normalize_text(q.text))].append(q)

    def conversation(self, a: Answer, m: Mapping) -> str:
        convs = self.table.conversations
        if m.conversation_is == "index":
            i = _plain_index(a.conversation)
            if not 0 <= i < len(convs):
                raise ValueError(
                    f"{a.where}: conversation {a.conversation!r} is not an index 0-"
                    f"{len(convs) - 1} of {self.table.benchmark}'s conversations (written as "
                    "the plain number: no sign, space or leading zero)."
                )
            return convs[i]
        if a.conversation not in self.by_conv:
            raise ValueError(
                f"{a.where}: unknown conversation {a.conversation!r}; "
                f"{self.table.benchmark} has {list_some(list(convs))}."
            )
        return a.conversation

    def by_position(self, a: Answer, conv: str, m: Mapping) -> BenchmarkQuestion:
        assert a.position is not None
        qs = self.by_conv[conv]
        found = [q for q in qs if _position(q, m) == a.position]
        if not found:
            n = len(qs) if m.position_counts == "all" else sum(q.excluded is None for q in qs)
            raise ValueError(
                f"{a.where}: position {a.position + m.position_base} is past the "
                f"{n} {'questions' if m.position_counts == 'all' else 'answerable questions'} "
                f"of conversation {conv}."
            )
        return found[0]


def _match(
    answers: Sequence[Answer], index: _Index, m: Mapping, problems: Problems
) -> list[tuple[Answer, BenchmarkQuestion]]:
    """Each answer's question; an answer that matches none (or ambiguously) is a problem
    collected in `problems`, and the others are matched still."""
    out = []
    occurrence: dict[tuple[str, str], list[Answer]] = defaultdict(list)
    for a in answers:
        with problems.collect():
            out += _match_one(a, index, m, occurrence)
    for key, group in occurrence.items():
        with problems.collect():
            out += _match_text(key, group, index)
    return out


def _match_one(
    a: Answer, index: _Index, m: Mapping, occurrence: dict[tuple[str, str], list[Answer]]
) -> list[tuple[Answer, BenchmarkQuestion]]:
    """The answer's question by position or id; by text, the answer is set aside in
    `occurrence` (texts asked more than once are matched by occurrence, all at once)."""
    conv = index.conversation(a, m)
    if m.question == "position":
        return [(a, index.by_position(a, conv, m))]
    if m.question == "id":
        q = index.by_id.get(a.question_id or "")
        if q is None or q.conversation != conv:
            raise ValueError(
                f"{a.where}: question id {a.question_id!r} is not a question of "
                f"conversation {conv}."
            )
        return [(a, q)]
    assert a.text is not None
    occurrence[(conv, normalize_text(a.text))].append(a)
    return []


def _match_text(
    key: tuple[str, str], group: list[Answer], index: _Index
) -> list[tuple[Answer, BenchmarkQuestion]]:
    """The answers giving one text of one conversation, matched to its questions."""
    candidates = index.by_text.get(key, [])
    if not candidates:
        a = group[0]
        raise ValueError(
            f"{a.where}: no question of conversation {key[0]} has the text {a.text!r}"
            + _nearest(key, index)
            + "."
        )
    answerable = [q for q in candidates if q.excluded is None]
    if len(candidates) != len(group) and len(answerable) == len(group):
        candidates = answerable  # the excluded ones unanswered, as harnesses leave them out
    if len(candidates) != len(group) and len(candidates) > 1:
        among = (
            f" ({len(answerable)} of them answerable)" if len(answerable) != len(candidates) else ""
        )
        raise ValueError(
            f"{group[0].where}: the text {group[0].text!r} is asked {len(candidates)} times "
            f"in conversation {key[0]}{among} and answered {len(group)} times: ambiguous "
            '(declare `question = "position"` or "id").'
        )
    if len(group) > len(candidates):
        raise ValueError(
            f"{group[1].where}: a second answer to {group[0].text!r} of conversation "
            f"{key[0]} (also {group[0].where})."
        )
    return list(zip(group, candidates, strict=False))  # k-th occurrence <-> k-th question


def _check(a: Answer, q: BenchmarkQuestion, m: Mapping) -> None:
    if a.text is not None and normalize_text(a.text) != normalize_text(q.text):
        raise ValueError(
            f"{a.where}: question text {a.text!r} differs from the benchmark's "
            f"{q.text!r} ({q.query_id})."
        )
    for attr, value in a.checks.items():
        want = q.attributes.get(attr)
        if want is None:
            raise ValueError(f"{a.where}: the benchmark gives no `{attr}` to check.")
        if not _same_value(value, want):
            raise ValueError(
                f"{a.where}: field `{m.check[attr]}` is {value!r}; the benchmark's {attr} of "
                f"{q.query_id} is {want!r}."
            )


def _same_value(value: str, want: str) -> bool:
    """A checked field equals the benchmark's attribute as text, or as numbers ('2.0' is
    category '2': a CSV or pandas writes integers as floats)."""
    if value == want:
        return True
    try:
        return float(value) == float(want)
    except ValueError:
        return False


def _nearest(key: tuple[str, str], index: _Index) -> str:
    """The conversation's question closest in text to an unmatched one, as a hint (a curly
    quote, a typo), or ``''`` when none is close."""
    import difflib

    conv, text = key
    texts = [t for c, t in index.by_text if c == conv]
    close = difflib.get_close_matches(text, texts, n=1, cutoff=0.8)
    if not close:
        return ""
    q = index.by_text[(conv, close[0])][0]
    return (
        f"; the closest is {q.query_id} {q.text!r} (texts are matched exactly, up to "
        "whitespace and case)"
    )


def join_answers(
    answers: Sequence[Answer],
    table: QuestionTable,
    mapping: Mapping,
    *,
    system: str,
    problems: Problems | None = None,
) -> Joined:
    """Records of `system` from its `answers`, joined to `table` (see the module docstring).

    Raises
    ------
    ValueError
        Unknown conversation, a position past the end, an unknown id, a text that no
        question (or more than one, ambiguously) has, a text or checked field that differs
        from the benchmark's, two answers to one question -- naming file and position;
        all of them at once, or collected in `problems` for the caller to raise.
    """
    index = _Index(table)
    seen: dict[str, Answer] = {}
    rows: list[dict[str, Any]] = []
    excluded_answered: list[str] = []
    no_evidence: list[str] = []
    own = problems is None  # else the caller's collection, raised by the caller
    found = (
        Problems(f"{system}'s answers (every answer joined; nothing written)")
        if problems is None
        else problems
    )
    for hint in _shifts(answers, index, mapping, system):
        found.hint(hint)
    for a, q in _match(answers, index, mapping, found):
        with found.collect():
            _check(a, q, mapping)
            if q.query_id in seen:
                raise ValueError(
                    f"{a.where}: a second answer to {q.query_id} (also {seen[q.query_id].where})."
                )
        seen.setdefault(q.query_id, a)
        if found.count:
            continue  # nothing is written: the rest is only checked
        if q.excluded is not None:
            excluded_answered.append(q.query_id)
            continue
        key = QueryKey(table.benchmark, q.conversation, q.query_id, system, ANSWER_BUDGET, 0)
        rows += _score_rows(key, q, a.scores)
        if a.retrieved is not None and mapping.retrieved is not None:
            if not q.evidence:
                no_evidence.append(q.query_id)
                continue
            for depth in mapping.retrieved.depths:
                dkey = QueryKey(table.benchmark, q.conversation, q.query_id, system, depth, 0)
                got = evidence_metrics(a.retrieved[:depth], q.evidence, mapping.retrieved.hit_k)
                rows += _score_rows(dkey, q, got)
    if own:
        found.raise_any()
    answerable = [q.query_id for q in table.questions if q.excluded is None]
    coverage = Coverage(
        system=system,
        answers=len(answers),
        answered=sum(q in seen for q in answerable),
        not_answered=tuple(q for q in answerable if q not in seen),
        excluded_answered=tuple(excluded_answered),
        excluded_total=len(table.questions) - len(answerable),
        no_evidence=tuple(no_evidence),
        warnings=_warnings(mapping),
    )
    return Joined(pd.DataFrame(rows), coverage)


def _shifts(answers: Sequence[Answer], index: _Index, m: Mapping, system: str) -> list[str]:
    """Per conversation joined by position with its texts: where, from one answer on, each
    answer's text is that of the next question (an answer missing before it) or of the one
    before (an extra answer), the diagnosis of the text mismatches that follow, with the
    mapping that joins such a file. Only when 3 or more mismatches and 90% of them agree."""
    if m.question != "position" or not m.text_field:
        return []
    by_conv: dict[str, list[tuple[Answer, int]]] = defaultdict(list)
    for a in answers:
        try:
            conv = index.conversation(a, m)
        except ValueError:
            continue
        if a.text is not None and a.position is not None:
            by_conv[conv].append((a, a.position))
    out = []
    for conv, group in by_conv.items():
        asked = {_position(q, m): q for q in index.by_conv[conv]}
        text = {k: normalize_text(q.text) for k, q in asked.items() if k is not None}
        wrong = [(a, k) for a, k in group if text.get(k) != normalize_text(a.text or "")]
        if len(wrong) < 3:
            continue
        for step, what in ((1, "missing before"), (-1, "extra at or before")):
            fits = [a for a, k in wrong if text.get(k + step) == normalize_text(a.text or "")]
            if len(fits) >= 0.9 * len(wrong):
                out.append(_shift_hint(system, conv, group, wrong, len(fits), step, what, asked))
                break
    return out


def _shift_hint(
    system: str,
    conv: str,
    group: list[tuple[Answer, int]],
    wrong: list[tuple[Answer, int]],
    fits: int,
    step: int,
    what: str,
    asked: dict[int | None, BenchmarkQuestion],
) -> str:
    """:func:`_shifts`' sentence for one conversation: every answer shifted from the first
    (the positions counted from another base), or one answer missing or extra."""
    first, k = min(wrong, key=lambda x: x[1])
    head = (
        f"{system}, conversation {conv}: from {first.where} on, {fits} of the {len(wrong)} "
        f"answers whose text differs carry the text of the {'next' if step == 1 else 'previous'}"
        " question"
    )
    if len(wrong) == len(group) and k == min(pos for _, pos in group):
        return (
            f"{head}: every answer is shifted, so the positions seem counted from another "
            "base; check the mapping's `position_base` (0 or 1) and `position_counts` "
            "(docs/systems.md)."
        )
    which = f" ({asked[k].query_id} has no answer)" if step == 1 and k in asked else ""
    return (
        f"{head}: one answer seems {what} it{which}. A copy of the mapping with "
        '`question = "text"` (the shipped ones are in osustat/io/mappings/), given as '
        f"--reader {system}=FILE, joins each answer by its own question's text and counts an "
        "unanswered question (docs/systems.md)."
    )


def _position(q: BenchmarkQuestion, m: Mapping) -> int | None:
    """A question's position as the mapping counts them (None: not counted)."""
    return q.position if m.position_counts == "all" else q.answerable_position


def _warnings(m: Mapping) -> tuple[str, ...]:
    """What the join could not check under `m`, said with the coverage."""
    if m.question == "position" and not m.text_field:
        return (
            "positions not checked against the question text: declare text_field (one answer "
            "left out of the file would move every later answer to the next question)",
        )
    return ()


def _score_rows(
    key: QueryKey, q: BenchmarkQuestion, scores: dict[str, float]
) -> list[dict[str, Any]]:
    out = []
    for metric, value in scores.items():
        names = [(metric, None), *((f"{metric}.{s}", s if s == q.cell else None) for s in q.strata)]
        if q.cell is not None:
            names.append((f"{metric}.cells", q.cell))
        for name, cell in names:
            row = key.row(cell, name.lower(), value)._asdict()
            row.update(q.attributes)
            out.append(row)
    return out


def _plain_index(key: str) -> int:
    """A conversation index written plainly (``"7"``), else -1: ``int()`` also read
    ``"07"``, ``" 7"``, ``"-0"``, ``"1_0"`` and other scripts' digits, so two keys could
    name one conversation."""
    if key.isascii() and key.isdigit() and str(int(key)) == key:
        return int(key)
    return -1
