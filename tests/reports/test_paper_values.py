"""The paper's printed values: one place, one shape, read by every report."""

from pathlib import Path

import pytest

from osustat.reports.paper_values import PAPER
from osustat.retrieval.registry import PAPER_METHODS

ROOT = Path(__file__).resolve().parents[2]


def test_one_shape():
    assert set(PAPER) == {"synthetic", "tau-bench", "toolbench"}
    for tables in PAPER.values():
        assert all(isinstance(name, str) for name in tables)


def test_synthetic_table9_covers_the_registered_methods():
    assert set(PAPER["synthetic"]["table9"]) == set(PAPER_METHODS["synthetic"])
    for row in PAPER["synthetic"]["table9"].values():
        assert sorted(row) == [64, 128, 256, 512]


@pytest.mark.parametrize("folder", ["analyses", "reports", "osustat"])
def test_no_other_module_types_printed_values(folder):
    """Printed tables are not retyped elsewhere (they used to live in three shapes)."""
    for path in (ROOT / folder).rglob("*.py"):
        if path.name == "paper_values.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "PAPER: dict" not in text and "TABLE_9: dict" not in text, path
