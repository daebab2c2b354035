"""What the docs name exists in the code (issue 35 item 14: docs go stale when code moves; the
one-folder move left `analyses/claims/locomo.toml` in the CHANGELOG after the file had become
`analyses/locomo/claims.toml`): every repository path in backticks, every test named in full,
every dotted name of the package, every option given to an `osustat` command or to a
`benchmarks/` script, and every keyword passed to a package function."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "CHANGELOG.md"])
TOP = ("benchmarks", "docs", "tests", "osustat", "analyses", "examples", "retrieval", "reports")
PATH = re.compile(r"`((?:" + "|".join(TOP) + r")/[^`\s:]*)")


def named_paths(text: str) -> set[str]:
    """Paths in backticks, without a test's ``::name`` or a trailing full stop; a bracketed
    optional part (``seed37[-differences].md``) names both files; globs and stems ending in
    ``-`` or ``_`` (``results-``) are patterns, not paths."""
    out = set()
    for m in PATH.finditer(text):
        path = m.group(1).rstrip(".,;")
        if any(c in path for c in "*{}<>") or path.endswith(("-", "_")):
            continue
        bracket = re.search(r"\[([^\]]*)\]", path)
        if bracket:
            out.add(path[: bracket.start()] + path[bracket.end() :])
            out.add(path[: bracket.start()] + bracket.group(1) + path[bracket.end() :])
        else:
            out.add(path)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_doc_names_exists(doc):
    missing = sorted(
        p for p in named_paths(doc.read_text(encoding="utf-8")) if not (ROOT / p).exists()
    )
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


#: A test named in full: ``tests/x.py::TestClass::test_name[param]``.
TEST = re.compile(r"(tests/[\w/]+\.py)((?:::[\w]+)+)")


def missing_tests(text: str) -> list[str]:
    """Tests named in full in `text` whose file lacks the named class or function."""
    missing = []
    for m in TEST.finditer(text):
        file = ROOT / m.group(1)
        source = file.read_text(encoding="utf-8") if file.exists() else ""
        for name in m.group(2).split("::")[1:]:
            if not re.search(rf"(?:def|class) {re.escape(name)}\b", source):
                missing.append(f"{m.group(1)}::{name}")
    return sorted(set(missing))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_test_a_doc_names_exists(doc):
    """A renamed or removed test leaves a doc citing a check that no longer runs."""
    missing = missing_tests(doc.read_text(encoding="utf-8"))
    assert not missing, f"{doc.name} names tests that do not exist: {missing}"


def test_the_rule_reads_paths_and_skips_patterns():
    text = "`benchmarks/x.py` `tests/a.py::test_b` `docs/a[-b].md` `benchmarks/results-*.md`."
    assert named_paths(text) == {"benchmarks/x.py", "tests/a.py", "docs/a.md", "docs/a-b.md"}
    here = "tests/test_docs_paths.py"
    assert missing_tests(f"`{here}::test_the_rule_reads_paths_and_skips_patterns`") == []
    assert missing_tests(f"`{here}::test_gone`") == [f"{here}::test_gone"]


#: A dotted name of the package in backticks: ``osustat.power.too_few_differences``.
DOTTED = re.compile(r"`((?:osustat|analyses|reports|retrieval)(?:\.[A-Za-z_]\w*)+)")


def resolve(name: str) -> object:
    """The object a dotted name of the package names (``analyses.x`` is
    ``osustat.analyses.x``): the longest prefix that imports, then attributes; None if none."""
    import importlib

    parts = name.split(".")
    parts = parts if parts[0] == "osustat" else ["osustat", *parts]
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def unresolved_names(text: str) -> list[str]:
    """Dotted names in `text` that neither import nor are an entry-point group of
    pyproject.toml (``osustat.driver``)."""
    groups = set(re.findall(r'entry-points\."([\w.]+)"', (ROOT / "pyproject.toml").read_text()))
    return [name for name in sorted(set(DOTTED.findall(text)) - groups) if resolve(name) is None]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_dotted_name_a_doc_names_resolves(doc):
    """``osustat.schema.QueryKey`` stayed in the CHANGELOG after the class moved to
    ``osustat.record_row``."""
    missing = unresolved_names(doc.read_text(encoding="utf-8"))
    assert not missing, f"{doc.name} names what does not import: {missing}"


def test_the_name_rule_resolves_modules_attributes_and_entry_point_groups():
    text = "`osustat.power.too_few_differences` `analyses.driver` `osustat.driver` `osustat.nope`"
    assert unresolved_names(text) == ["osustat.nope"]


def _command_flags() -> dict[str, set[str]]:
    """Every sub-command's option strings, its deferred arguments added (``reproduce``'s
    benchmark options too)."""
    import argparse

    from osustat.cli.main import build_parser

    def flags(parser: argparse.ArgumentParser) -> set[str]:
        while getattr(parser, "deferred", None):
            parser.deferred.pop(0)(parser)  # type: ignore[attr-defined]
        out: set[str] = set()
        for action in parser._actions:
            out.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    out |= flags(child)
        return out

    top = build_parser()
    return {
        name: flags(child)
        for action in top._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, child in action.choices.items()
    }


def unknown_flags(text: str, commands: dict[str, set[str]]) -> list[str]:
    """``osustat CMD ... --flag`` in inline code or in shell blocks where CMD has no --flag
    (``reproduce``: the benchmarks' own options included; a benchmark not installed here, as
    the tutorial's, is skipped)."""
    spans = re.findall(r"`(?:\.venv/bin/)?osustat ([^`]*)`", text)
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        spans += re.findall(r"(?:^|[\s/])osustat (.*)", block.replace("\\\n", " "), re.M)
    from osustat.analyses.registry import benchmark_names

    known = set(benchmark_names())
    out = []
    for span in spans:
        command, _, rest = span.partition(" ")
        if command == "reproduce" and rest.split(" ")[0] not in known:
            continue  # a user's own benchmark (docs/new-benchmark.md's toybench): its options
        if command in commands:
            given = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest.split(" #")[0])
            out += [f"osustat {command} {f}" for f in given if f not in commands[command]]
    return sorted(set(out))


def test_every_flag_a_doc_gives_a_command_exists():
    """A renamed option leaves the docs telling users to type one that is refused."""
    commands = _command_flags()
    missing = {
        doc.name: bad for doc in DOCS if (bad := unknown_flags(doc.read_text("utf-8"), commands))
    }
    assert not missing, missing
    assert unknown_flags("`osustat analyze R --metric m --nope`", commands) == [
        "osustat analyze --nope"
    ]


#: ``benchmarks/NAME.py`` followed by its options, in a doc or a benchmark's docstring.
BENCH = re.compile(r"benchmarks/(\w+)\.py((?:\s+(?:--?[\w-]+(?:[ =](?!--)[^\s`]+)?|\[[^\]]*\]))*)")


def unknown_benchmark_flags(text: str) -> list[str]:
    """Options given to a benchmark script that its source never declares (read statically:
    the flag as a string literal in the script)."""
    out = []
    for name, args in BENCH.findall(text.replace("\\\n", " ")):
        script = ROOT / "benchmarks" / f"{name}.py"
        source = script.read_text(encoding="utf-8") if script.exists() else ""
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", args):
            if f'"{flag}"' not in source and f"'{flag}'" not in source:
                out.append(f"benchmarks/{name}.py {flag}")
    return sorted(set(out))


@pytest.mark.parametrize(
    "doc", [*DOCS, *sorted((ROOT / "benchmarks").glob("*.py"))], ids=lambda p: p.name
)
def test_every_option_given_to_a_benchmark_exists(doc):
    """``encoder_speed.py --openvino`` stayed in docs/performance.md after the script took
    ``--backends``."""
    bad = unknown_benchmark_flags(doc.read_text(encoding="utf-8"))
    assert not bad, bad


def test_the_benchmark_flag_rule_reads_a_command():
    assert unknown_benchmark_flags("`benchmarks/bound_noise.py --nope x`") == [
        "benchmarks/bound_noise.py --nope"
    ]
    assert unknown_benchmark_flags("benchmarks/mde_procedure.py --rows 100 --ns 20,50") == []


#: ``osustat.name(... key=value ...)`` in a doc: a call with keyword arguments.
CALL = re.compile(r"((?:osustat|analyses|reports|retrieval)(?:\.\w+)+)\(([^()`]*)\)")


def unknown_keywords(text: str) -> list[str]:
    """Keyword arguments a doc passes to a function of the package that its signature lacks
    (functions taking ``**kwargs`` are not checked)."""
    import inspect

    out = []
    for name, args in CALL.findall(text):
        try:
            params = inspect.signature(resolve(name)).parameters  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue  # not a function (a missing name is the dotted-name test's)
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            continue
        out += [f"{name}({k}=)" for k in re.findall(r"(?:^|,)\s*(\w+)\s*=(?!=)", args)
                if k not in params]  # fmt: skip
    return sorted(set(out))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_keyword_a_doc_passes_exists(doc):
    """A renamed keyword leaves a doc's call raising TypeError for whoever copies it."""
    bad = unknown_keywords(doc.read_text(encoding="utf-8"))
    assert not bad, bad


def test_the_keyword_rule_reads_a_call():
    assert unknown_keywords("`osustat.plan(0.2, sd=1.0, nope=3)`") == ["osustat.plan(nope=)"]
