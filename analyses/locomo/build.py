"""Conversations as trajectories of turns with LoCoMo's views, and questions as queries.

Mapping to the paper (every line also in ``docs/locomo.md``):

- step = turn, in order (sessions one after another); step text ``"<speaker>: <text>"``, with
  ``" [image: <blip_caption>]"`` appended on image turns when captions are in; token cost
  ``max(5, min(40, len(text) // 4))`` (Section 3.2, as the τ-bench and ToolBench pipelines);
- entity view <- the named entities of the turn's text (:mod:`.entities`);
- tool view <- nothing by default (a conversation calls no tool); the declared variant puts the
  speaker there (the step's "signature": who acted);
- subgoal view <- the session (the user-turn segment of τ-bench; ``session_<n>``);
- similarity view: unchanged (k-NN communities of the embeddings).

Cells (Definition 2) use the session as T and the entity as E: a question is "T+" when two of
its evidence turns lie in one session, "E+" when two share a named entity. Speaker sharing is a
marginal. Queries: every category 1-4 question with at least two distinct resolving evidence
turns, its text embedded verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .choices import Choices
from .data import Conversation
from .entities import EntityExtractor, speaker_exclusions
from .evidence import resolve_evidence

__all__ = [
    "ANSWERABLE",
    "MIN_EVIDENCE",
    "ConvSteps",
    "LocomoQuery",
    "QueryTable",
    "build_queries",
    "conversation_steps",
    "step_cost",
    "trajectory",
]

MIN_EVIDENCE = 2
ANSWERABLE = (1, 2, 3, 4)


def step_cost(text: str) -> float:
    """Token cost of a step (Section 3.2): ``max(5, min(40, floor(len / 4)))``."""
    return float(max(5, min(40, len(text) // 4)))


@dataclass(frozen=True)
class ConvSteps:
    """The steps of one conversation under one choice setting (no embeddings yet)."""

    sample_id: str
    texts: tuple[str, ...]
    costs: tuple[float, ...]
    speakers: tuple[str, ...]
    sessions: tuple[int, ...]
    entities: tuple[frozenset[str], ...]
    index: dict[str, int]
    tools: tuple[str | None, ...]

    @property
    def n_steps(self) -> int:
        return len(self.texts)

    def session_end(self, step: int) -> int:
        """One past the last step of `step`'s session."""
        s = self.sessions[step]
        end = step
        while end < self.n_steps and self.sessions[end] == s:
            end += 1
        return end


def conversation_steps(
    conv: Conversation, choices: Choices, extractor: EntityExtractor
) -> ConvSteps:
    """Steps of `conv`: texts, costs, speaker, session and entities of every turn."""
    texts, ents = [], []
    skip = (
        speaker_exclusions(conv.speakers, extractor.name_words)
        if choices.entity_extractor == "proper-nouns"
        else set()
    )
    for t in conv.turns:
        text = f"{t.speaker}: {t.text}"
        if choices.captions == "in" and t.caption:
            text += f" [image: {t.caption}]"
        texts.append(text)
        ents.append(extractor.extract(t.text, exclude=skip))
    return ConvSteps(
        conv.sample_id,
        tuple(texts),
        tuple(step_cost(x) for x in texts),
        tuple(t.speaker for t in conv.turns),
        tuple(t.session for t in conv.turns),
        tuple(ents),
        {t.dia_id: i for i, t in enumerate(conv.turns)},
        tuple(t.speaker if choices.speaker_view == "tool-slot" else None for t in conv.turns),
    )


@dataclass(frozen=True)
class LocomoQuery:
    """One query: the question, its evidence steps, query time and cell."""

    query_id: str
    question: str
    category: int
    evidence: tuple[int, ...]
    time: int
    cell: str


@dataclass(frozen=True)
class QueryTable:
    """The queries of one conversation and every question left out, with the reason."""

    queries: tuple[LocomoQuery, ...]
    excluded: tuple[dict[str, Any], ...]
    repaired: tuple[dict[str, Any], ...]
    unresolved: tuple[dict[str, Any], ...]
    marginals: tuple[dict[str, Any], ...]


def _cell(steps: ConvSteps, ev: Sequence[int]) -> str:
    from osustat import label_cell

    return label_cell([f"s{steps.sessions[i]}" for i in ev], [steps.entities[i] for i in ev]).value


def _pair_rate(values: Sequence[Any]) -> float:
    n = len(values)
    pairs = [(a, b) for i, a in enumerate(values) for b in values[i + 1 :]]
    return float(np.mean([a == b for a, b in pairs])) if n >= 2 else float("nan")


def build_queries(
    conv: Conversation,
    steps: ConvSteps,
    choices: Choices,
    audit: dict[tuple[str, int], tuple[str, ...]] | None = None,
) -> QueryTable:
    """Queries of `conv` under `choices` (evidence labels, query time) with every exclusion."""
    queries, excluded, repaired, unresolved, marginals = [], [], [], [], []
    for q in conv.questions:
        key = (conv.sample_id, q.index)
        cited = q.evidence
        if choices.labels == "audit" and audit is not None and key in audit:
            cited = audit[key]
        res = resolve_evidence(cited, steps.index)
        where = {"sample_id": conv.sample_id, "qa": q.index, "category": q.category}
        for raw, ids in res.repaired:
            repaired.append({**where, "evidence": raw, "read_as": list(ids)})
        for raw, why in res.unresolved:
            unresolved.append({**where, "evidence": raw, "reason": why})
        if q.category not in ANSWERABLE:
            excluded.append(
                {
                    **where,
                    "reason": "category 5 (adversarial, no answer)",
                    "n_evidence": len(res.steps),
                }
            )
            continue
        if len(res.steps) < MIN_EVIDENCE:
            excluded.append(
                {
                    **where,
                    "reason": f"< {MIN_EVIDENCE} resolving evidence turns",
                    "n_evidence": len(res.steps),
                }
            )
            continue
        ev = res.steps
        time = steps.n_steps if choices.query_time == "end" else steps.session_end(max(ev))
        cell = _cell(steps, ev)
        qid = f"{conv.sample_id}/qa{q.index}"
        queries.append(LocomoQuery(qid, q.question, q.category, ev, time, cell))
        marginals.append(
            {
                "query_id": qid,
                "category": q.category,
                "cell": cell,
                "session": _pair_rate([steps.sessions[i] for i in ev]),
                "speaker": _pair_rate([steps.speakers[i] for i in ev]),
                "entity": _entity_rate([steps.entities[i] for i in ev]),
                "n_evidence": len(ev),
                "distance": float(np.mean([time - i for i in ev])),
            }
        )
    return QueryTable(
        tuple(queries), tuple(excluded), tuple(repaired), tuple(unresolved), tuple(marginals)
    )


def _entity_rate(ents: Sequence[frozenset[str]]) -> float:
    pairs = [(a, b) for i, a in enumerate(ents) for b in ents[i + 1 :]]
    return float(np.mean([bool(a & b) for a, b in pairs])) if pairs else float("nan")


def trajectory(steps: ConvSteps, embeddings: NDArray[np.float64]) -> Any:
    """The retrieval trajectory: entities, session as the subgoal id, the speaker as the tool
    signature only under ``speaker_view='tool-slot'``."""
    from osustat.retrieval import Trajectory

    return Trajectory.from_steps(
        embeddings,
        list(steps.costs),
        tools=list(steps.tools),
        entities=[sorted(e) for e in steps.entities],
        subgoals=list(steps.sessions),
    )
