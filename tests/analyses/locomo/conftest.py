"""A small LoCoMo-format file made here (no real data): 2 conversations with sessions, image
turns, named entities and questions of every kind the loader must handle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osustat.data.store import dataset_dir
from tests.data.conftest import missing_reason

# The real file where the CLI finds it ($OSUSTAT_DATA_DIR, else `osustat data fetch`'s folder).
REAL = dataset_dir("locomo") / "locomo10.json"
needs_real = pytest.mark.skipif(not REAL.exists(), reason=missing_reason("locomo"))

_TOPICS = [
    "I adopted a puppy named Toby from the Boston shelter",
    "work was busy with reports all week",
    "we went hiking near the lake on Sunday",
    "my sister Anna visited us from Boston",
    "I baked bread and it came out fine",
    "the concert in Tokyo was loud and fun",
    "Toby learned to sit and fetch today",
    "I started painting sunsets again",
]


def _conversation(sid: str, a: str, b: str, n_sessions: int, per: int) -> dict[str, Any]:
    conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    k = 0
    for s in range(1, n_sessions + 1):
        turns = []
        for j in range(1, per + 1):
            speaker = a if j % 2 else b
            other = b if j % 2 else a
            text = f"Hey {other}! {_TOPICS[k % len(_TOPICS)]} (session {s} turn {j})."
            turn: dict[str, Any] = {"speaker": speaker, "dia_id": f"D{s}:{j}", "text": text}
            if k % 5 == 3:
                turn["blip_caption"] = "a photo of a dog on a beach"
                turn["img_url"] = ["http://example.invalid/x.jpg"]
            turns.append(turn)
            k += 1
        conv[f"session_{s}"] = turns
        conv[f"session_{s}_date_time"] = f"1:00 pm on {s} May, 2023"
    # (question, answer, evidence, category); category 5 (adversarial) has no answer
    rows: list[tuple[str, Any, list[str], int]] = [
        (f"What is the name of {a}'s puppy?", "Toby", ["D1:1", "D2:7"], 1),
        (f"Where does {a}'s sister live?", "Boston", ["D1:4; D2:2"], 1),
        ("When was the concert?", 2022, ["D1:6", "D01:06"], 2),
        ("What did they bake?", "bread", ["D1:5"], 4),
        ("Which city had the concert?", "Tokyo", ["D2:6", "D2:5", "D"], 3),
        ("What did they paint?", "cars", ["D1:8", "D2:8"], 5),
        ("What did the dog learn?", "sit", ["D:2:7", "D3:1", "D9:99"], 4),
        ("What happened at work?", "reports", ["D1:2", "D3:2"], 2),
    ]
    qa = [
        {
            "question": q,
            "adversarial_answer" if cat == 5 else "answer": ans,
            "evidence": ev,
            "category": cat,
        }
        for q, ans, ev, cat in rows
    ]
    return {"sample_id": sid, "conversation": conv, "qa": qa}


def small_data() -> list[dict[str, Any]]:
    return [
        _conversation("conv-1", "Caroline", "Melanie", 3, 8),
        _conversation("conv-2", "Jon", "Gina", 3, 8),
        _conversation("conv-3", "Evan", "Sam", 3, 8),
    ]


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(small_data()), encoding="utf-8")
    return p
