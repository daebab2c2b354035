"""The python blocks marked ``<!-- runnable -->`` in the docs run as written (from the
repository root, where their relative paths point)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["docs/statistics.md", "docs/inputs.md"]
BLOCK = re.compile(r"<!-- runnable -->\s*\n```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, int, str]]:
    out = []
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for k, m in enumerate(BLOCK.finditer(text)):
            out.append((name, k, m.group(1)))
    return out


def test_there_are_runnable_blocks():
    assert {name for name, _, _ in _blocks()} == set(DOCS)


@pytest.mark.parametrize(("name", "k", "code"), _blocks(), ids=lambda x: str(x)[:30])
def test_block_runs(name, k, code, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    exec(compile(code, f"{name}#runnable{k}", "exec"), {"__name__": "__docs__", "TMP": tmp_path})
