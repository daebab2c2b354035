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


def _table_rows(results: str) -> list[dict[str, str]]:
    """The rows of the markdown table in a `benchmarks/results-*.md` file, by column."""
    lines = [
        x for x in (ROOT / results).read_text(encoding="utf-8").splitlines() if x.startswith("|")
    ]
    head = [h.strip() for h in lines[0].strip("|").split("|")]
    return [
        dict(zip(head, (c.strip() for c in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]


def _procedure_rows(results: str) -> dict[tuple[str, str, str], dict[str, str]]:
    """The rows of a `benchmarks/mde_procedure.py` or `plan_small_pilots.py` table, keyed
    by (design, n, pilot)."""
    return {
        (row["design"], row.get("n", row.get("pilot n")), row["pilot"]): row
        for row in _table_rows(results)
    }


def test_the_mde_legend_quotes_the_procedure_tables_heavy_tail_limit():
    """The report's MDE legend states the measured heavy-tail limit (issue 35: a limit
    visible where the number is printed); its figures are the committed table's t3 rows of
    20 and 50 (median true power among rows printing a number), so a re-run that moves
    them fails here until the legend follows."""
    import pandas as pd

    import osustat
    from reports.cellwise import render_analysis

    rows = _procedure_rows("benchmarks/results-mde_procedure.md")
    powers = sorted(
        float(rows[("t3", n, p)]["true power (median)"])
        for n in ("20", "50")
        for p in ("null", "at effect")
    )
    quoted = f".{round(powers[0] * 100):02d}–.{round(powers[-1] * 100):02d}"
    records = pd.read_csv(ROOT / "examples" / "records.csv")
    res = osustat.analyze(
        records, treatment="osu-mem", baseline="flat-vector", metrics=["hit@2"], budgets=[128]
    )
    assert f"median true power {quoted} at the printed MDE" in render_analysis(res, {}), quoted


def _span(values: list[float]) -> str:
    """'.67–.73' for the smallest and largest value, '.62' for one."""
    lo, hi = (f".{round(v * 100):02d}" for v in (min(values), max(values)))
    return lo if lo == hi else f"{lo}–{hi}"


def test_the_mde_legend_quotes_the_subset_effect_limit():
    """The legend says the MDE models every unit moved alike, with the committed subset
    table's figures (a second statistician's designs, stop 56): the median true power at the
    printed MDE from null rows, the share of subset-25 rows of 20 printing a number where no
    effect reaches .80, and the rows that carry the effect."""
    from reports.cellwise import render_analysis

    rows = _procedure_rows("benchmarks/results-mde_procedure-subset.md")

    def power(design: str, sizes: tuple[str, ...], pilot: str) -> list[float]:
        return [float(rows[(design, n, pilot)]["true power (median)"]) for n in sizes]

    assert rows[("subset-25", "20", "null")]["true MDE"] == "inf"
    printing = 1 - float(rows[("subset-25", "20", "null")]["range"])
    carried = [
        *power("subset-25", ("50",), "at effect"),
        *power("subset-50", ("20", "50"), "at effect"),
    ]
    import pandas as pd

    import osustat

    records = pd.read_csv(ROOT / "examples" / "records.csv")
    res = osustat.analyze(
        records, treatment="osu-mem", baseline="flat-vector", metrics=["hit@2"], budgets=[128]
    )
    text = " ".join(render_analysis(res, {}).split())
    half = _span(power("subset-50", ("20", "50"), "null"))
    assert f"half of 20 or 50 units: median true power {half} at the printed MDE" in text
    assert f"on a quarter of 50 units {_span(power('subset-25', ('50',), 'null'))};" in text
    assert f"yet {round(printing * 100)}% of rows print a number" in text
    assert f"print an MDE that holds ({_span(carried)})" in text
    strict = _procedure_rows("benchmarks/results-mde_procedure-alpha0.0125.md")
    strict_half = float(strict[("subset-50", "50", "null")]["true power (median)"])
    assert f"lower still: half of 50 units {_span([strict_half])})" in text
    t3 = [float(strict[("t3", n, "null")]["true power (median)"]) for n in ("20", "50")]
    assert f"not .80; {_span(t3)} at a cell's α/4 = .0125)" in text


def test_the_plan_text_quotes_the_subset_effect_limit():
    """`osustat plan`'s limit lines quote the committed subset plan table (true n 50)."""
    from osustat.cli.plan import _limit_lines

    rows = _procedure_rows("benchmarks/results-plan_small_pilots-subset.md")

    def achieved(design: str, pilot: str) -> list[float]:
        return [float(rows[(design, n, pilot)]["achieved power: median"]) for n in ("20", "50")]

    n_null = {rows[("subset-25", n, "null")]["planned n (returned): median [min, max]"].split()[0]
              for n in ("20", "50")}  # fmt: skip
    pilot = type("Plan", (), {"source": "pilot", "binary": False})()
    text = " ".join(" ".join(_limit_lines({"all": pilot})).split())
    assert n_null == {"29"}
    assert f"median n of 29, whose true power is {_span(achieved('subset-25', 'null'))} (" in text
    half_n = {rows[("subset-50", n, "null")]["planned n (returned): median [min, max]"].split()[0]
              for n in ("20", "50")}  # fmt: skip
    assert half_n == {"41"}
    half = _span(achieved("subset-50", "null"))
    assert f"(on half of the units, n = 50 needed too: 41, {half})" in text
    carried = achieved("subset-25", "at effect") + achieved("subset-50", "at effect")
    assert f"of true power {_span(carried)}." in text


def test_the_plan_text_quotes_the_small_pilot_tables_heavy_tail_limit():
    """`osustat plan`'s measured-limit lines quote the committed small-pilot table: the share
    of t3 pilots of 20 and of lognormal pilots of 6 and 10 whose planned n achieves < .6."""
    from osustat.cli.plan import _limit_lines

    rows = _procedure_rows("benchmarks/results-plan_small_pilots.md")

    def span(design: str, sizes: tuple[str, ...]) -> str:
        got = sorted(
            float(rows[(design, n, p)]["< .6"]) for n in sizes for p in ("null", "at effect")
        )
        return f".{round(got[0] * 100):02d}–.{round(got[-1] * 100):02d}"

    pilot = type("Plan", (), {"source": "pilot", "binary": False})()
    text = " ".join(_limit_lines({"all": pilot}))
    assert f"3 df, {span('t3', ('20',))} plan an n" in text
    assert f"pilots of 6 and 10, {span('lognormal', ('6', '10'))}." in text


def test_the_interval_note_quotes_the_coverage_table():
    """The report's note on its expanded intervals quotes the committed coverage table
    (`benchmarks/ci_coverage.py`): normal rows of 6 and 10 (both true means), the textbook BCa
    and the expanded one; lognormal and zero-inflated rows of 6-20 and queries in 5 and 10
    conversations, expanded."""
    from reports.cellwise import COVERAGE_FIGURES

    rows = _table_rows("benchmarks/results-ci_coverage.md")

    def span(got: list[float]) -> str:
        from decimal import ROUND_HALF_UP, Decimal

        def two(x: float) -> str:  # half up, as a reader rounds .905 (Python's round: .90)
            return str(Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))[1:]

        got = sorted(got)
        return f"{two(got[0])}–{two(got[-1])}"

    def design(name: str, sizes: tuple[str, ...], column: str) -> str:
        got = [float(r[column]) for r in rows if r["design"] == name and r["n"] in sizes]
        assert len(got) == 2 * len(sizes), (name, sizes)
        return span(got)

    def conversations(c: str) -> str:
        got = [
            float(r["expanded BCa covers"])
            for r in rows
            if r["design"].startswith("clustered queries") and r["clusters"] == c
        ]
        assert len(got) == 12, c  # equal and unequal sizes, 2 effects, 3 n
        return span(got)

    expanded = "expanded BCa covers"
    assert COVERAGE_FIGURES == {
        "normal": design("normal", ("6", "10"), "BCa covers"),
        "normal expanded": design("normal", ("6", "10"), expanded),
        "lognormal expanded": design("lognormal", ("6", "10", "20"), expanded),
        "zero-inflated expanded": design("zero-inflated", ("6", "10", "20"), expanded),
        "clustered 5 expanded": conversations("5"),
        "clustered 10 expanded": conversations("10"),
    }


def test_the_interaction_legend_quotes_the_type1_table():
    """The analyze report's interaction bullet quotes the studentized test's measured type-I
    error (a statistician: the p was printed with no caveat though docs/statistics.md calls it
    liberal with skewed or asymmetric 0/1 cells); a re-run that moves them fails here."""
    from reports.cellwise import INTERACTION_FIGURES

    text = (ROOT / "benchmarks" / "results-interaction_type1.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| design"):
            cells = [c.strip() for c in line.split("<!--")[0].strip().strip("|").split("|")]
            rows[cells[0]] = cells[1].split()[0]
    symmetric = sorted(rows[d] for d in rows if not d.startswith(("skewed", "binary, common mean")))
    assert INTERACTION_FIGURES == {
        "symmetric": f"{symmetric[0][1:]}–{symmetric[-1][1:]}",
        "skewed tau-bench": rows["skewed (centred exponential), tau-bench n, sd 2/1/.7/.3"][1:],
        "skewed small cell": rows["skewed (centred exponential), n 5/40/150/500, sd 2/1/.7/.3"][1:],
        "asymmetric binary": rows["binary, common mean .3, n 5/40/150/500, P(d!=0) .9/.6/.45/.35"][
            1:
        ],
    }
