"""The layers of the house, checked on the source: dependencies flow one way, and no import
cycle exists (docs/architecture.md).

- ``retrieval/`` and the statistics core ``osustat/`` import neither ``analyses`` nor ``reports``;
  only the CLI (``osustat/cli/``, the composition root) wires them.
- ``reports/`` does not import ``analyses``.
- Inside ``analyses/`` only the driver and each benchmark subpackage's report modules
  (``analyses/<name>/report.py``, its write step, and ``report_*.py``, what it renders) import
  ``reports``: the rest of a benchmark computes, its report modules turn results into files and
  words.
- The module import graph (every import statement, also those inside functions) has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Source folder of each installed top-level package (pyproject.toml's package-dir).
FOLDERS = {
    "osustat": "osustat",
    "osustat.analyses": "analyses",
    "osustat.reports": "reports",
    "osustat.retrieval": "retrieval",
}


def _modules() -> dict[str, Path]:
    out = {}
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            if package == "osustat" and parts and parts[0] in ("analyses", "reports", "retrieval"):
                continue  # symlinked copies in some checkouts
            out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Internal modules `name` imports (the module itself if it exists, else its package)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" for a in node.names] + [module]
        else:
            continue
        for target in targets:
            if target in MODULES:
                found.add(target)
                if isinstance(node, ast.ImportFrom) and target != module:
                    found.discard(module)  # `from pkg import module`: the module, not pkg
    found.discard(name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> str:
    if module == "osustat.__main__":  # `python -m osustat` is the CLI
        return "osustat.cli"
    for package in ("osustat.analyses", "osustat.reports", "osustat.retrieval", "osustat.cli"):
        if module == package or module.startswith(package + "."):
            return package
    return "osustat"


FORBIDDEN = {
    "osustat": {"osustat.analyses", "osustat.reports", "osustat.cli"},
    "osustat.retrieval": {"osustat.analyses", "osustat.reports", "osustat.cli"},
    "osustat.reports": {"osustat.analyses", "osustat.cli"},
    "osustat.analyses": {"osustat.cli"},
}


def test_the_scan_sees_the_tree():
    assert "osustat.analysis_result" in MODULES and "osustat.cli.main" in MODULES
    assert "osustat.reports.cellwise" in GRAPH["osustat.cli.main"]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_dependencies_flow_one_way(layer):
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _layer(module) == layer
        for target in targets
        if _layer(target) in FORBIDDEN[layer]
    )
    assert wrong == []


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    assert _cycles() == []


def test_a_cycle_would_be_found(monkeypatch):
    monkeypatch.setitem(GRAPH, "osustat.records", GRAPH["osustat.records"] | {"osustat.analysis"})
    assert any("osustat.records" in c for c in _cycles())


def _may_import_reports(module: str) -> bool:
    """The modules of ``analyses/`` that may import ``reports``: the driver (it renders the
    claims audit, the user-retriever tests, the choice sensitivity) and, in each benchmark
    subpackage, its report modules (``report`` and ``report_*``)."""
    parts = module.split(".")
    return module == "osustat.analyses.driver" or (
        len(parts) == 4 and (parts[-1] == "report" or parts[-1].startswith("report_"))
    )


#: Known exceptions, each with the lane that removes it (empty once they land).
REPORTS_EXCEPTIONS: set[str] = set()


def _report_importers() -> list[str]:
    return sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _layer(module) == "osustat.analyses"
        and not _may_import_reports(module)
        and module not in REPORTS_EXCEPTIONS
        for target in targets
        if _layer(target) == "osustat.reports"
    )


def test_only_the_driver_and_report_modules_import_reports():
    assert _report_importers() == []
    assert {m for m in GRAPH if _may_import_reports(m) and m.startswith("osustat.analyses.")} >= {
        "osustat.analyses.driver",
        "osustat.analyses.synthetic.report",
        "osustat.analyses.tau_bench.report",
        "osustat.analyses.toolbench.report",
        "osustat.analyses.locomo.report",
    }


def test_a_report_import_elsewhere_would_be_found(monkeypatch):
    planted = GRAPH["osustat.analyses.synthetic.run"] | {"osustat.reports.figures"}
    monkeypatch.setitem(GRAPH, "osustat.analyses.synthetic.run", planted)
    assert _report_importers() == ["osustat.analyses.synthetic.run imports osustat.reports.figures"]
