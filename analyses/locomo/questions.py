"""LoCoMo's question table for importing systems' outputs (docs/systems.md).

Every question of ``locomo10.json`` with what :func:`osustat.io.join.join_answers` needs: the
conversation (``sample_id``; its index is its place in the file), the question id of our
pipeline (``<sample_id>/qa<index>``), its position among all of the conversation's questions and
among the answerable ones (categories 1-4; category 5 is excluded, as every harness leaves it
out), its text, category, evidence turn ids (``dia_id``, resolved as our pipeline resolves
them) and its cell under the declared choices (:mod:`.choices`, ``--choice``): a cell needs two
or more resolving evidence turns, exactly as :func:`.build.build_queries` decides. The strata
written per score are ``cat<c>`` and the cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from osustat.io.join import BenchmarkQuestion, QuestionTable

from .build import ANSWERABLE, build_queries, conversation_steps
from .choices import Choices
from .data import Conversation, load_audit, load_locomo
from .entities import EntityExtractor
from .evidence import resolve_evidence
from .prepare import audit_path

__all__ = ["BENCHMARK", "question_table"]

BENCHMARK = "locomo"


@dataclass(frozen=True)
class _EvidenceOnly(EntityExtractor):
    """The fitted extractor, run only on the texts of turns some question cites: a cell reads
    the entities of evidence turns alone, and entities are a function of the text, so the
    cells equal those of :func:`.build.build_queries` on every turn (checked by a test)."""

    texts: frozenset[str] = frozenset()

    def extract(self, text: str, *, exclude: Iterable[str] = ()) -> frozenset[str]:
        return super().extract(text, exclude=exclude) if text in self.texts else frozenset()


def _cited_texts(
    conv: Conversation, audit: dict[tuple[str, int], tuple[str, ...]] | None
) -> frozenset[str]:
    index = {t.dia_id: i for i, t in enumerate(conv.turns)}
    cited: set[int] = set()
    for q in conv.questions:
        ids = audit.get((conv.sample_id, q.index), q.evidence) if audit else q.evidence
        cited.update(resolve_evidence(ids, index).steps)
    return frozenset(conv.turns[i].text for i in cited)


def question_table(
    data: str | Path, choices: Choices | Mapping[str, str] | None = None
) -> QuestionTable:
    """The question table of `data` (``locomo10.json``) under `choices` (default: declared;
    a mapping ``{choice name: value}`` as ``--choice`` gives them)."""
    if not isinstance(choices, Choices):
        given = dict(choices or {})
        try:
            choices = Choices.from_mapping(given)
        except TypeError:
            known = sorted(Choices().as_mapping())
            raise ValueError(f"unknown LoCoMo choice in {sorted(given)}; known: {known}.") from None
    convs = load_locomo(data)
    audit = None
    if choices.labels == "audit":
        path = audit_path(Path(data))
        if not path.is_file():
            raise ValueError(f"choice labels=audit needs the audit overlay {str(path)!r}.")
        audit = load_audit(path, convs)
    fitted = EntityExtractor.fit(t.text for c in convs for t in c.turns)
    out: list[BenchmarkQuestion] = []
    for conv in convs:
        steps = conversation_steps(
            conv, choices, _EvidenceOnly(fitted.name_words, _cited_texts(conv, audit))
        )
        cells = {q.query_id: q.cell for q in build_queries(conv, steps, choices, audit).queries}
        k = 0
        for q in conv.questions:
            qid = f"{conv.sample_id}/qa{q.index}"
            cited = audit.get((conv.sample_id, q.index), q.evidence) if audit else q.evidence
            turns = resolve_evidence(cited, steps.index).steps
            answerable = q.category in ANSWERABLE
            cell = cells.get(qid)
            out.append(
                BenchmarkQuestion(
                    conversation=conv.sample_id,
                    query_id=qid,
                    position=q.index,
                    answerable_position=k if answerable else None,
                    text=q.question,
                    strata=(f"cat{q.category}", *([cell] if cell else [])),
                    cell=cell,
                    evidence=tuple(conv.turns[i].dia_id for i in turns),
                    excluded=None if answerable else "category 5 (adversarial, no answer)",
                    attributes={"category": str(q.category)},
                )
            )
            k += answerable
    desc = f"LoCoMo `{data}`, choices {choices.label()}"
    return QuestionTable(BENCHMARK, tuple(c.sample_id for c in convs), tuple(out), desc)
