"""Steps, views, queries and cells of the small made-up file."""

from __future__ import annotations

from pathlib import Path

from osustat.analyses.locomo.build import build_queries, conversation_steps, step_cost, trajectory
from osustat.analyses.locomo.choices import Choices
from osustat.analyses.locomo.data import load_locomo
from osustat.analyses.locomo.entities import EntityExtractor


def _setup(small_file: Path, choices: Choices):  # type: ignore[no-untyped-def]
    convs = load_locomo(small_file)
    ex = EntityExtractor.fit(t.text for c in convs for t in c.turns)
    steps = conversation_steps(convs[0], choices, ex)
    return convs[0], steps, build_queries(convs[0], steps, choices)


def test_steps_text_cost_and_captions(small_file: Path) -> None:
    conv, steps, _ = _setup(small_file, Choices())
    t3 = conv.turns[3]
    assert t3.caption is not None
    assert steps.texts[0] == f"Caroline: {conv.turns[0].text}"
    assert steps.texts[3] == f"Melanie: {t3.text} [image: {t3.caption}]"
    assert steps.costs[3] == max(5, min(40, len(steps.texts[3]) // 4))
    assert step_cost("x" * 400) == 40.0 and step_cost("ab") == 5.0
    _, out, _ = _setup(small_file, Choices(captions="out"))
    assert out.texts[3] == f"Melanie: {t3.text}" and out.costs[3] <= steps.costs[3]
    assert steps.sessions[:9] == (1,) * 8 + (2,)
    assert steps.session_end(0) == 8 and steps.session_end(8) == 16


def test_entities_exclude_speakers_by_default(small_file: Path) -> None:
    _, steps, _ = _setup(small_file, Choices())
    assert steps.entities[0] == {"toby", "boston"}  # "Hey Melanie!" is a speaker
    _, with_spk, _ = _setup(small_file, Choices(entity_extractor="proper-nouns+speakers"))
    assert with_spk.entities[0] == {"toby", "boston", "melanie"}


def test_queries_exclusions_repairs_and_cells(small_file: Path) -> None:
    _, steps, table = _setup(small_file, Choices())
    assert [q.query_id for q in table.queries] == [
        "conv-1/qa0",
        "conv-1/qa1",
        "conv-1/qa4",
        "conv-1/qa6",
        "conv-1/qa7",
    ]
    reasons = {(e["qa"], e["reason"]) for e in table.excluded}
    assert reasons == {
        (2, "< 2 resolving evidence turns"),
        (3, "< 2 resolving evidence turns"),
        (5, "category 5 (adversarial, no answer)"),
    }
    assert {(r["qa"], r["evidence"]) for r in table.repaired} == {
        (1, "D1:4; D2:2"),
        (2, "D01:06"),
        (6, "D:2:7"),
    }
    assert {(r["qa"], r["evidence"]) for r in table.unresolved} == {(4, "D"), (6, "D9:99")}
    q = {x.query_id: x for x in table.queries}
    assert q["conv-1/qa0"].cell == "T-E+"  # Toby in sessions 1 and 2
    assert q["conv-1/qa4"].cell == "T+E-"  # two turns of session 2, no shared entity
    assert all(x.time == steps.n_steps for x in table.queries)
    assert q["conv-1/qa0"].evidence == (steps.index["D1:1"], steps.index["D2:7"])


def test_query_time_after_the_last_evidence_session(small_file: Path) -> None:
    _, _, table = _setup(small_file, Choices(query_time="after-evidence-session"))
    q = {x.query_id: x for x in table.queries}
    assert q["conv-1/qa0"].time == 16  # last evidence in session 2 (steps 8-15)
    assert q["conv-1/qa7"].time == 24
    assert all(max(x.evidence) < x.time for x in table.queries)


def test_trajectory_views(small_file: Path) -> None:
    import numpy as np

    _, steps, _ = _setup(small_file, Choices())
    traj = trajectory(steps, np.eye(steps.n_steps, 32))
    assert traj.tool_of(0) is None and traj.tool_of(1) is None
    _, spk, _ = _setup(small_file, Choices(speaker_view="tool-slot"))
    traj = trajectory(spk, np.eye(spk.n_steps, 32))
    assert traj.tool_of(0) == "Caroline" and traj.tool_of(1) == "Melanie"
    assert traj.subgoal_ids.tolist()[:9] == [0] * 8 + [1]
    assert traj.entity_names(0) == {"toby", "boston"}
