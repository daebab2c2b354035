"""LoCoMo loading: the format, and errors that name the conversation and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osustat.analyses.locomo.data import LocomoDataError, load_audit, load_locomo

from .conftest import REAL, needs_real, small_data


def _write(tmp_path: Path, data: Any) -> Path:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_small_file_loads(small_file: Path) -> None:
    convs = load_locomo(small_file)
    assert [c.sample_id for c in convs] == ["conv-1", "conv-2", "conv-3"]
    c = convs[0]
    assert c.speakers == ("Caroline", "Melanie")
    assert [t.dia_id for t in c.turns[:3]] == ["D1:1", "D1:2", "D1:3"]
    assert c.turns[8].session == 2 and c.turns[8].position == 1
    assert c.n_sessions == 3
    assert sum(t.caption is not None for t in c.turns) > 0
    assert [q.category for q in c.questions] == [1, 1, 2, 4, 3, 5, 4, 2]


def test_missing_qa_names_conversation(tmp_path: Path) -> None:
    data = small_data()
    del data[1]["qa"]
    with pytest.raises(LocomoDataError, match=r"conv-2.*'qa'"):
        load_locomo(_write(tmp_path, data))


def test_turn_without_dia_id_names_conversation_session_and_turn(tmp_path: Path) -> None:
    data = small_data()
    del data[2]["conversation"]["session_2"][3]["dia_id"]
    with pytest.raises(LocomoDataError, match=r"conv-3.*session_2\[3\].*'dia_id'"):
        load_locomo(_write(tmp_path, data))


def test_not_json(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text("{not json", encoding="utf-8")
    with pytest.raises(LocomoDataError, match="not valid JSON"):
        load_locomo(p)
    assert issubclass(LocomoDataError, ValueError)


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (lambda d: d.__setitem__(0, {"conversation": {}}), r"\[0\].*'sample_id'"),
        (lambda d: d[0].pop("conversation"), r"conv-1.*'conversation'"),
        (lambda d: d[0]["conversation"].pop("speaker_b"), r"conv-1.*'speaker_b'"),
        (lambda d: d[0]["qa"][2].__setitem__("category", 7), r"conv-1.*qa\[2\].*'category'"),
        (lambda d: d[0]["qa"][1].__setitem__("evidence", "D1:1"), r"qa\[1\].*'evidence'"),
        (lambda d: d[1].__setitem__("sample_id", "conv-1"), r"duplicate sample_id"),
        (lambda d: d[0]["conversation"].pop("session_1"), r"conv-1.*no turns"),
    ],
)
def test_other_malformed_fields(tmp_path: Path, edit: Any, pattern: str) -> None:
    data = small_data()
    edit(data)
    with pytest.raises(LocomoDataError, match=pattern):
        load_locomo(_write(tmp_path, data))


@needs_real
def test_real_file_counts() -> None:
    convs = load_locomo(REAL)
    assert len(convs) == 10
    assert sum(len(c.turns) for c in convs) == 5882
    assert sum(c.n_sessions for c in convs) == 272
    assert sum(len(c.questions) for c in convs) == 1986
    audit = load_audit(REAL.parent / "audit" / "errors.json", convs)
    assert len(audit) == 96  # README: 96 records replace the cited evidence
