"""The paper's printed values: one place per benchmark (its folder's ``paper_values.py``), one
shape, read by its report."""

import importlib
from pathlib import Path

import pytest

from osustat.analyses.synthetic.paper_values import PAPER as SYNTHETIC
from osustat.retrieval.registry import PAPER_METHODS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["synthetic", "tau_bench", "toolbench"])
def test_one_shape(name):
    tables = importlib.import_module(f"osustat.analyses.{name}.paper_values").PAPER
    assert tables and all(isinstance(table, str) for table in tables)


def test_synthetic_table9_covers_the_registered_methods():
    assert set(SYNTHETIC["table9"]) == set(PAPER_METHODS["synthetic"])
    for row in SYNTHETIC["table9"].values():
        assert sorted(row) == [64, 128, 256, 512]


@pytest.mark.parametrize("folder", ["analyses", "reports", "osustat"])
def test_no_other_module_types_printed_values(folder):
    """Printed tables are not retyped elsewhere (they used to live in three shapes)."""
    for path in (ROOT / folder).rglob("*.py"):
        if path.name == "paper_values.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "PAPER: dict" not in text and "TABLE_9: dict" not in text, path
