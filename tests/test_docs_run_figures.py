"""Docs that restate a run's figures are dated or generated (issue 35 item 14).

A figure a doc quotes from a run goes stale when the code changes (``docs/tau_bench.md`` kept
"21 reproduced" after the run said 18). Two ways keep it honest: a block the script that makes
the figures rewrites (``<!-- name:begin -->`` ... ``<!-- name:end -->``, as the ToolBench "what
survives" block), or a paragraph that says when and how it was measured: a date
(``2026-12-03``) or a commit, and the command in backticks. Checked here for the figures that
went stale: audit verdict counts and the sensitivity grid's counts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])

#: Counts of audit verdicts or of the sensitivity grid's outcomes.
RUN_COUNT = re.compile(
    r"\b\d+ (?:of \d+ )?(?:reproduced|contradicted|direction only|choice-dependent|"
    r"not reproduced|never reproduced|robust|underpowered)\b"
    r"|\bstrict \d+ reproduced\b|\b\d+ significant where the paper"
)
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b(?:commit|at) [0-9a-f]{7,40}\b")
COMMAND = re.compile(r"`[^`]*(?:osustat |benchmarks/|pytest|\.py\b)[^`]*`")
BLOCK = re.compile(r"<!-- (?P<name>[\w-]+):begin -->.*?<!-- (?P=name):end -->", re.S)


def _paragraphs(text: str) -> list[tuple[int, str, str]]:
    """(first line, paragraph, its context) per blank-line-separated paragraph.

    A table's context is the paragraph before it too (where its command and date are said).
    """
    out, start, lines, prev = [], 1, [], ""
    for no, line in enumerate([*text.splitlines(), ""], 1):
        if line.strip():
            if not lines:
                start = no
            lines.append(line)
            continue
        if lines:
            para = "\n".join(lines)
            table = para.lstrip().startswith("|")
            out.append((start, para, (prev + "\n" + para) if table else para))
            prev = para if not table else prev
            lines = []
    return out


def undated_run_figures(text: str) -> list[tuple[int, str]]:
    """Paragraphs quoting run counts with neither a date/commit and command nor a block."""
    spans = [m.span() for m in BLOCK.finditer(text)]
    line_of = [0]
    for m in re.finditer("\n", text):
        line_of.append(m.end())
    bad = []
    for start, para, context in _paragraphs(text):
        offset = line_of[start - 1]
        if any(a <= offset < b for a, b in spans):
            continue
        hit = RUN_COUNT.search(para)
        if hit and not (DATED.search(context) and COMMAND.search(context)):
            bad.append((start, hit.group(0)))
    return bad


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_quoted_run_counts_are_dated_or_generated(path):
    bad = undated_run_figures(path.read_text(encoding="utf-8"))
    assert not bad, (
        f"{path.name}: run figures without a date/commit and command (or a generated block) "
        f"at lines {bad}"
    )


def test_every_generated_block_has_the_script_that_writes_it():
    scripts = "\n".join(
        p.read_text(encoding="utf-8")
        for folder in ("benchmarks", "analyses", "osustat", "reports")
        for p in (ROOT / folder).rglob("*.py")
    )
    for path in DOCS:
        for m in BLOCK.finditer(path.read_text(encoding="utf-8")):
            marker = f"<!-- {m.group('name')}:begin -->"
            assert marker in scripts, f"{path.name}: no script writes the block {marker}"


def test_the_rule_catches_an_undated_count_and_accepts_a_dated_one():
    assert undated_run_figures("The audit: 21 reproduced, strict 16 reproduced.\n")
    dated = "On 2026-12-03 (`osustat audit paper --records r.csv`): 21 reproduced.\n"
    assert not undated_run_figures(dated)
    table = (
        "Measured at commit abc1234 by `osustat reproduce tau-bench`:\n\n| a |\n| 3 reproduced |\n"
    )
    assert not undated_run_figures(table)
    block = "<!-- x:begin -->\n5 reproduced\n<!-- x:end -->\n"
    assert not undated_run_figures(block)


#: Results files a doc embeds whole (after the file's title line), as generated.
EMBEDDED = {"benchmarks/results-mde_procedure.md": "docs/validation.md"}


@pytest.mark.parametrize("results", sorted(EMBEDDED))
def test_an_embedded_results_table_is_the_file_as_generated(results):
    """A table embedded in a doc is the committed file's, header and footer included (the
    load and seconds of the run that made it), not an earlier run's."""
    body = (ROOT / results).read_text(encoding="utf-8").split("\n", 1)[1].strip()
    doc = (ROOT / EMBEDDED[results]).read_text(encoding="utf-8")
    assert body in doc, f"{EMBEDDED[results]} embeds a different run of {results}"
